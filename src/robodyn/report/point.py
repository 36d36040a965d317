"""One operating point of the report: its linear model, modes and poles, validity, responses and pictures.

Every eigenvalue of A is drawn on the pole map and listed in the JSON as ``[re, im]`` (a complex pair is two
poles; a discrete-time model's also as ``continuous_eigenvalues``, s = ln z / dt, null for z = 0); the modes table
has one row per real pole or complex pair.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.base.errors import RobodynError
from robodyn.display import cleaned
from robodyn.display.page import figure, matrix, number, table
from robodyn.report import figures
from robodyn.report.points import limits_text

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["existence_section", "heading", "point_section"]


def heading(model: ModelContract, point: Any) -> str:
    """``theta = 3.14159, theta_dot = 0``: the point's states, round-off shown as 0."""
    return ", ".join(f"{s} = {number(v)}" for s, v in zip(model.states, cleaned(point.x)))


def point_section(model: ModelContract, point: Any, k: int, horizon: float,
                  step: Callable[..., None] | None = None, *, stick: bool = True) -> tuple[str, dict[str, Any]]:
    """The section of operating point ``k``: its HTML and its JSON record (x, u, A, B, C, D, eigenvalues, ...);
    ``step(description=...)`` is told of each stage (a progress bar); ``stick``: a mechanism is drawn as a stick
    picture (False when the report shows it in 3-D with its meshes instead)."""
    step = step or (lambda *_, **__: None)
    from robodyn.linear.modes import modes as modes_of
    from robodyn.linearization.linearize import linearize
    from robodyn.results import plots

    parts: list[str] = []
    record: dict[str, Any] = {"x": point.x.tolist(), "u": point.u.tolist()}
    title = f"<h2>Point {k}: {html.escape(heading(model, point))}</h2>"
    outside = limits_text(model, point.x)
    if outside:
        title += (f"<p class=\"note\">Outside the joints' position limits: {html.escape(outside)} (the limits are "
                  "not forces: the equations hold here, but the robot cannot reach it).</p>")
    step(description=f"point {k}: linearize")
    try:
        linear = linearize(model, point.x, point.u)
    except RobodynError as exc:
        record["error"] = str(exc)
        return f"{title}<p class=\"note\">{html.escape(str(exc))}</p>", record
    record.update(A=linear.A, B=linear.B, C=linear.C, D=linear.D, method=linear.method)
    parts.append("<h3>Linear model</h3>" + "".join(
        matrix(name, np.asarray(getattr(linear, name)), rows, cols) for name, rows, cols in (
            ("A", linear.states, linear.states), ("B", linear.states, linear.inputs),
            ("C", linear.outputs, linear.states), ("D", linear.outputs, linear.inputs))))
    step(description=f"point {k}: modes")
    result = modes_of(linear)
    poles = linear.eigenvalues
    record.update(stability=result.stability, eigenvalues=[[float(z.real), float(z.imag)] for z in poles])
    if linear.dt is not None:  # a sampled model's poles z as continuous-time equivalents s = ln z / dt
        with np.errstate(divide="ignore"):
            equivalent = np.log(poles.astype(complex)) / linear.dt
        record["continuous_eigenvalues"] = [[float(s.real) if np.isfinite(s.real) else None, float(s.imag)]
                                            for s in equivalent]
    verdict = "stable" if result.stability.startswith("asymptotically") else "unstable" \
        if result.stability == "unstable" else ""
    parts.append(f"<h3>Modes</h3><p class=\"verdict {verdict}\">{html.escape(result.stability)}</p>"
                 f"<p>{html.escape(result.explanation)}</p><pre>{html.escape(result.table())}</pre>")
    pictures = [figure(plots.pole_map(poles, title=f"poles at point {k}", discrete=linear.dt is not None),
                       f"the {poles.size} eigenvalues of A")]
    step(description=f"point {k}: linear-systems view")
    structure = model.block_diagram()
    loops = tuple(structure["loops"]) if structure else ()
    parts.append(_linear_systems(linear, result.stability.startswith("asymptotically"), record, pictures, loops))
    if model.block_diagram() is not None:
        from robodyn.report.diagram import loops_section

        step(description=f"point {k}: loops")
        parts.append(loops_section(model, point, record, pictures))
    if model.roles():  # a loop with estimators or predictive controllers: the estimate and the bounds along a run
        from robodyn.report.closed_loop import closed_loop_section

        step(description=f"point {k}: closed loop")
        parts.append(closed_loop_section(model, point, horizon, record, pictures))
    step(description=f"point {k}: validity")
    parts.append(_validity(model, point, record, pictures))
    step(description=f"point {k}: responses")
    pictures += figures.responses(model, linear, point, horizon)
    if model.n_states == 2:
        step(description=f"point {k}: phase portrait")
        pictures.append(figure(figures.phase(model, point),
                               "phase portrait (arrows: the vector field at the point's inputs)"))
    if stick and model.kinematics() is not None and model.order == 2:
        pictures.append(figure(figures.arm(model, point, k), "the mechanism at the operating point (gravity down)"))
    step(description=f"point {k}: done")
    return title + "".join(parts) + "<h3>Figures</h3>" + "".join(pictures), record


def _linear_systems(linear: Any, stable: bool, record: dict[str, Any], pictures: list[str],
                    loops: tuple[str, ...]) -> str:
    """Controllability and observability at every point; at a stable one also the step-response metrics of each
    (output, input) pair and the Bode diagram (robodyn.linear.lti); margins only for loops the model has
    (``loops``: a diagram's, in the Loops section), and for anything else why there are none."""
    reach, see = linear.controllability(), linear.observability()
    record["controllability"], record["observability"] = reach.to_dict(), see.to_dict()
    text = (f"<h3>Linear-systems view</h3><p>Controllability: {html.escape(reach.explanation)}.</p>"
            f"<p>Observability: {html.escape(see.explanation)}.</p>")
    if not linear.inputs:
        return text + "<p>The model has no inputs: no step response, Bode diagram or margins to show.</p>"
    record["margins"], record["margins_reason"] = None, _no_margins(loops)
    text += f"<p>{html.escape(record['margins_reason'])}</p>"
    if not stable:
        return text + ("<p>Step-response metrics and the Bode diagram are shown at asymptotically stable points (a "
                       "response that grows has no settling time).</p>")
    info = linear.step_info()
    record["step_info"] = info.to_dict()
    units = dict(linear.units())
    rows = []
    for i, output in enumerate(info.outputs):
        for j, input_ in enumerate(info.inputs):
            unit = f" [{units[output]}]" if output in units else ""
            rows.append([f"{input_} -> {output}{unit}", *(float(getattr(info, name)[i, j]) for name in (
                "rise_time", "settling_time", "overshoot", "peak", "peak_time", "steady_state_value"))])
    header = ["step of 1 on -> output", "rise [s]", "settling [s]", "overshoot [%]", "peak", "peak time [s]",
              "steady state"]
    pictures.append(figure(linear.bode(margins=False), "Bode diagram of the linear model (every input to every "
                                                       "output)"))
    return text + ("<p>Unit step responses (python-control's definitions, read off the exact response: times by "
                   "root finding on the matrix exponential, peaks where its derivative is 0; nan where the steady "
                   "state is 0):</p>" + table(header, rows))


def _no_margins(loops: tuple[str, ...]) -> str:
    """Why this section shows no gain or phase margins: they belong to a loop, and where the model's loops are."""
    if loops:
        return (f"Gain and phase margins belong to a loop: the model's loops, broken at {', '.join(loops)}, are in "
                "the Loops section below; the transfers from its inputs to its outputs above are closed loops, not "
                "loops to take margins of.")
    return ("No gain or phase margins: the model has no loop. Its inputs drive its outputs (a plant), and no "
            "feedback is part of it: any loop around it is a choice the model does not make. Margins belong to a "
            "loop: put the plant and a controller in a diagram (docs/diagrams.md) and break it at a connection "
            "(robodyn linearize DIAGRAM --open BLOCK.PORT, or robodyn.linearize(diagram, x, u, "
            "open=\"block.port\")), or take LinearSystem.margins() of a loop transfer built by hand "
            "(L = K (sI - A)^-1 B for a state feedback u = -K x).")


def _validity(model: ModelContract, point: Any, record: dict[str, Any], pictures: list[str]) -> str:
    from robodyn.linearization.validity import validity

    try:
        valid = validity(model, point.x, point.u)
    except RobodynError as exc:
        return f"<h3>Validity</h3><p class=\"note\">{html.escape(str(exc))}</p>"
    unbounded = not np.isfinite(valid.radius)
    record["validity_radius"] = None if unbounded else valid.radius
    record["validity_radius_unbounded"] = bool(unbounded)
    pictures.append(figure(valid.plot(), "relative remainder of the linear model against the distance"))
    reach = ("at every distance probed (the model is linear here)" if unbounded else
             f"up to a distance {number(valid.radius)} from the point")
    return (f"<h3>Validity</h3><p>The linear model is within 5% of the nonlinear one {reach} (the norm and "
            f"scaling are those of robodyn.validity: {html.escape(_scaling(valid))}).</p>")


def _scaling(valid: Any) -> str:
    scale = getattr(valid, "scale", None)
    if scale is None:
        return "unscaled"
    return "each state and input divided by " + ", ".join(number(s) for s in np.asarray(scale).ravel())


def existence_section(model: ModelContract, point: Any, k: int) -> tuple[str, dict[str, Any]]:
    """Picard-Lindelof on the box of radius 0.1 around operating point ``k``: the section (HTML) and its record
    (``robodyn.existence``'s ``to_dict()``, or ``{"error": ...}``). A task of its own: with the symbolic inverse of
    M it takes as long as a point's figures."""
    from robodyn.analysis.existence import existence

    title = f"<h2>Existence and uniqueness near point {k} (box of radius 0.1 around it)</h2>"
    try:
        result = existence(model, point.x, 0.1, 1.0, point.u)
    except RobodynError as exc:
        return f"{title}<p class=\"note\">{html.escape(str(exc))}</p>", {"error": str(exc)}
    return f"{title}<p>{html.escape(result.explanation)}</p>", result.to_dict()
