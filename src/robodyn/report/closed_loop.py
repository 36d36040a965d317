"""A closed loop's estimators and predictive controllers at an operating point: the estimate against the truth and
the constraints' activity, from one closed-loop run (the sections a model's ``roles()`` asks for).

**The run.** From the operating point with every state of each estimated plant displaced by :data:`PERTURBATION`
(in the state's units; the model's first state when no estimator names a plant), the estimators at their rest state
there (they do not know of the displacement), the inputs held at the point's values (no noise), for the report's
horizon. The model records, besides its own outputs, the signals the roles name
(``with_outputs``): the estimates, their variances, what each controller reads, applies and reports.

**Estimate against the truth.** Each estimated state with the diagram state it estimates and the band of +-3
standard deviations of the estimator's own variance; the record gives, per state, the largest error, the error at
the end and the fraction of samples whose error lies within the band.

**Constraint activity.** Per predictive controller, the fraction of samples at which each input and state bound is
active — in the plan re-solved from the state the controller read at that sample (an input bound: a planned input
at it; a state bound: a predicted state x_1 ... x_N at it; robodyn.control.mpc.block.plan_activity) — and how
many samples ended in each solver status (the block's ``status`` output as recorded).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import RobodynError
from robodyn.display.page import figure, number, table
from robodyn.model.roles import EstimatorRole, PredictiveRole, Role

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["BAND", "MAX_PLOTTED", "PERTURBATION", "closed_loop_section", "roles_record"]

PERTURBATION: Final = 0.1  # displacement of the estimated plant's states at the start of the run (their units)
BAND: Final = 3.0  # standard deviations either side of an estimate: its band
MAX_PLOTTED: Final = 8  # estimated states drawn per estimator


def closed_loop_section(model: ModelContract, point: Any, horizon: float, record: dict[str, Any],
                        pictures: list[str]) -> str:
    """The "Estimate against truth" and "Constraint activity" parts at the point (module docstring); their records
    go into ``record`` (``closed_loop``, ``estimate_against_truth``, ``constraint_activity``), their figures into
    ``pictures``; "" for a model without roles."""
    roles = model.roles()
    if not roles:
        return ""
    estimators = [r for r in roles if isinstance(r, EstimatorRole)]
    controllers = [r for r in roles if isinstance(r, PredictiveRole)]
    try:
        run, displaced = _run(model, point, horizon, roles)
    except RobodynError as exc:
        record["closed_loop"] = {"error": str(exc)}
        return f"<h3>Closed loop</h3><p class=\"note\">{html.escape(str(exc))}</p>"
    record["closed_loop"] = {"displaced": displaced, "perturbation": PERTURBATION, "horizon": float(horizon),
                             "samples": len(run.t)}
    start = ", ".join(displaced)
    text = (f"<h3>Closed loop</h3><p>A run of {number(float(horizon))} s from the point with {html.escape(start)} "
            f"displaced by {number(PERTURBATION)}, the estimators at their rest state, the inputs held (no noise)."
            "</p>")
    if estimators:
        record["estimate_against_truth"] = {}
        text += _estimates(run, estimators, record["estimate_against_truth"], pictures)
    if controllers:
        record["constraint_activity"] = {}
        text += _activity(run, controllers, record["constraint_activity"], pictures)
    return text


def roles_record(roles: tuple[Role, ...]) -> list[dict[str, Any]]:
    """The report's JSON of the roles: per block, what it is and the signals it names (bounds: null for none)."""
    def bounds(names: tuple[str, ...], box: Any) -> dict[str, list[float | None]]:
        return {name: [float(v) if np.isfinite(v) else None for v in box[i]] for i, name in enumerate(names)}

    found: list[dict[str, Any]] = []
    for role in roles:
        if isinstance(role, EstimatorRole):
            found.append({"block": role.block, "role": "estimator", "plant": role.plant, "states": list(role.states),
                          "estimates": list(role.estimates), "variances": list(role.variances),
                          "truth": list(role.truth)})
        else:
            found.append({"block": role.block, "role": "predictive controller", "reads": list(role.reads),
                          "applies": list(role.applies), "status": role.status, "statuses": list(role.statuses),
                          "input_bounds": bounds(role.inputs, role.input_bounds),
                          "state_bounds": bounds(role.states, role.state_bounds)})
    return found


def _signals(roles: tuple[Role, ...]) -> list[str]:
    """The signals the run records for the roles, in order, each once."""
    names: list[str] = []
    for role in roles:
        if isinstance(role, EstimatorRole):
            names += [*role.estimates, *role.variances]
        else:
            names += [*role.reads, *role.applies, role.status]
    return list(dict.fromkeys(names))


def _run(model: ModelContract, point: Any, horizon: float, roles: tuple[Role, ...]) -> tuple[Any, list[str]]:
    """The closed-loop run with the roles' signals as outputs, and the states displaced at its start."""
    from robodyn.integrate.simulate import simulate

    wider = model.with_outputs({name: name for name in _signals(roles) if name not in model.outputs})
    displaced = [s for role in roles if isinstance(role, EstimatorRole) for s in role.truth if s is not None]
    displaced = list(dict.fromkeys(displaced)) or [model.states[0]]
    x0 = np.array(point.x, dtype=float)
    for name in displaced:
        x0[model.states.index(name)] += PERTURBATION
    run = simulate(wider, float(horizon), x0, np.array(point.u, dtype=float), limits="ignore")
    return run, displaced


def _estimates(run: Any, estimators: list[EstimatorRole], record: dict[str, Any], pictures: list[str]) -> str:
    """Each estimator's estimates against the truth: a table, the record and one figure per estimator."""
    from matplotlib.figure import Figure

    rows = []
    for role in estimators:
        found: dict[str, Any] = {}
        shown = [k for k, truth in enumerate(role.truth) if truth is not None][:MAX_PLOTTED]
        if not shown:
            record[role.block] = {"error": f"no block of the diagram is the plant {role.plant!r} it estimates"}
            continue
        picture = Figure(figsize=(7.0, 1.6 * len(shown) + 0.6), layout="constrained")
        axes = picture.subplots(len(shown), 1, sharex=True, squeeze=False)[:, 0]
        for ax, k in zip(axes, shown):
            truth, estimate = run.state(role.truth[k]), run.output(role.estimates[k])
            sigma = np.sqrt(np.maximum(run.output(role.variances[k]), 0.0))
            error = np.abs(estimate - truth)
            inside = float(np.mean(error <= BAND * sigma))
            found[role.states[k]] = {"truth": role.truth[k], "estimate": role.estimates[k],
                                     "max_error": float(np.max(error)), "final_error": float(error[-1]),
                                     "within_band": inside}
            rows.append([role.estimates[k], role.truth[k], float(np.max(error)), float(error[-1]), 100.0 * inside])
            ax.fill_between(run.t, estimate - BAND * sigma, estimate + BAND * sigma, color="#9ab", alpha=0.4, lw=0)
            ax.plot(run.t, truth, "k-", lw=1.2, label="truth")
            ax.plot(run.t, estimate, "--", color="#c40", lw=1.2, label="estimate")
            ax.set_ylabel(role.states[k])
        axes[0].legend(loc="upper right", fontsize=8)
        axes[-1].set_xlabel("t [s]")
        record[role.block] = found
        pictures.append(figure(picture, f"{role.block}: each estimated state (dashed) against the truth (solid), "
                                        f"shaded +-{number(BAND)} standard deviations of its own variance"))
    header = ["estimate", "truth", "largest error", "error at the end", f"within +-{number(BAND)} sigma [%]"]
    return "<h3>Estimate against truth</h3>" + table(header, rows, text_columns=2)


def _activity(run: Any, controllers: list[PredictiveRole], record: dict[str, Any], pictures: list[str]) -> str:
    """Each predictive controller's bounds active and statuses: a table, the record and one figure each."""
    text = "<h3>Constraint activity</h3>"
    for role in controllers:
        read = np.column_stack([run.output(name) for name in role.reads])
        plans = [role.plan(row) for row in read]
        inputs = np.mean([p.inputs for p in plans], axis=0)  # (m, 2): the fraction of samples at each bound
        states = np.mean([p.states for p in plans], axis=0)
        codes = np.asarray(run.output(role.status), dtype=float)
        statuses = {name: int(np.sum(codes == k)) for k, name in enumerate(role.statuses) if np.any(codes == k)}
        known = np.isin(codes, np.arange(len(role.statuses)))
        if not np.all(known):
            statuses["unknown"] = int(np.sum(~known))
        rows: list[list[Any]] = []
        active: dict[str, dict[str, dict[str, float]]] = {"inputs": {}, "states": {}}
        for group, names, bounds, fractions in (("inputs", role.inputs, role.input_bounds, inputs),
                                                ("states", role.states, role.state_bounds, states)):
            for i, name in enumerate(names):
                for side, word in ((0, "lower"), (1, "upper")):
                    if np.isfinite(bounds[i, side]):
                        active[group].setdefault(name, {})[word] = float(fractions[i, side])
                        rows.append([f"{name} {'>=' if side == 0 else '<='} {number(float(bounds[i, side]))}",
                                     100.0 * float(fractions[i, side])])
        record[role.block] = {"samples": len(plans), **active, "status": statuses}
        counts = ", ".join(f"{name}: {count}" for name, count in statuses.items())
        text += (f"<p>{html.escape(role.block)}: {len(plans)} samples; solver status {html.escape(counts)}.</p>"
                 + (table(["bound", "active [% of samples]"], rows) if rows else "<p>No bounds.</p>"))
        pictures.append(figure(_activity_figure(run, role), f"{role.block}: the inputs it applied and the states "
                                                            "it read, with their bounds (dotted)"))
    return text


def _activity_figure(run: Any, role: PredictiveRole) -> Any:
    """The applied inputs and the bounded states read, each with its bounds."""
    from matplotlib.figure import Figure

    bounded = [i for i in range(len(role.states)) if np.any(np.isfinite(role.state_bounds[i]))]
    signals = [(role.applies[j], role.inputs[j], role.input_bounds[j]) for j in range(len(role.inputs))] + [
        (role.reads[i], role.states[i], role.state_bounds[i]) for i in bounded]
    picture = Figure(figsize=(7.0, 1.6 * len(signals) + 0.6), layout="constrained")
    axes = picture.subplots(len(signals), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (signal, label, bounds) in zip(axes, signals):
        ax.step(run.t, run.output(signal), where="post", color="#236", lw=1.2)
        for bound in bounds[np.isfinite(bounds)]:
            ax.axhline(float(bound), color="#a33", ls=":", lw=1.2)
        ax.set_ylabel(label)
    axes[-1].set_xlabel("t [s]")
    return picture
