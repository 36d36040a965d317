"""The analyze report: a model's whole story on one self-contained HTML page, with its data as JSON and CSV.

:func:`analyze` runs, in order, each analysis robodyn has — equations, classification, the equilibria (or,
for a robot, the operating point at the given joint angles with the holding torques), and at each point the
linearization (A, B, C, D), its modes and stability verdict, the pole map, the validity of the linear
model, free and step responses of the nonlinear model with the linear model's overlaid, a phase portrait
for two-state models, the existence/uniqueness summary and, for robots, the joint table and a picture of
the arm — and keeps every figure as inline SVG. The page needs no network and no JavaScript.

A section that cannot be computed for the model says why on the page (and in the JSON) instead of stopping
the report: a report is for reading, and a partial one with the reason beats none.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import difflib
import html
import io
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from robodyn.errors import InputError, RobodynError, UnknownNameError
from robodyn.model.system import Model, require_model
from robodyn.progress import progress
from robodyn.progress import quiet as quiet_progress
from robodyn.trajectory import Trajectory

__all__ = ["MAX_POINTS", "Report", "analyze"]

MAX_POINTS: Final = 4  # operating points analysed in full (the others are listed)
ROBOT_COORDINATES: Final = 3  # rigid-body models with more coordinates are analysed at one configuration
STYLE: Final = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}
h1{border-bottom:2px solid #1f77b4;padding-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}td,th{border:1px solid #ccc;padding:.2em .5em;
text-align:right}th{background:#f2f5f9}td.text,th.text{text-align:left}pre{background:#f7f7f7;padding:.6em;
overflow-x:auto}.figure{display:inline-block;margin:.3em;vertical-align:top}.figure svg{max-width:100%;height:auto}
.note{color:#8a5a00;background:#fff8e6;padding:.4em .6em;border-left:3px solid #f0ad4e}
.verdict{font-weight:bold}.stable{color:#1a7f37}.unstable{color:#c0392b}
"""


@dataclass
class Report:
    """An analysis report: ``html`` (the page), ``data`` (JSON-ready) and ``rows`` (the operating points, for
    the CSV). :meth:`write` puts them in a folder."""

    model: str
    html: str
    data: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)

    def write(self, folder: str | Path) -> Path:
        """Write ``report.html``, ``report.json`` and ``points.csv`` into ``folder`` (created), each atomically;
        returns the page's path."""
        from robodyn.atomic import check_output_folder, check_output_path, write_text_atomic

        out = check_output_folder(folder, "analyze --out")
        page = out / "report.html"
        for path in (page, out / "report.json", out / "points.csv"):
            check_output_path(path, "analyze --out", probe=False)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"analyze --out {out}: {exc.strerror or exc}: choose a writable folder") from None
        buffer = io.StringIO()
        if self.rows:
            writer = csv.DictWriter(buffer, fieldnames=list(self.rows[0]))
            writer.writeheader()
            writer.writerows(self.rows)
        write_text_atomic(out / "report.json", json.dumps(self.data, indent=1, default=_json_default) + "\n")
        write_text_atomic(out / "points.csv", buffer.getvalue())
        write_text_atomic(page, self.html)
        return page


def _json_default(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, complex | np.complexfloating):
        return [float(value.real), float(value.imag)]
    if isinstance(value, np.floating | np.integer):
        return value.item()
    return str(value)


def _number(value: float | np.floating[Any] | int) -> str:
    value = 0.0 if value == 0 else float(value)  # no "-0"
    return f"{value:.6g}" if math.isfinite(value) else str(value)


def _svg(figure: Any) -> str:
    """A matplotlib Figure as inline SVG (no XML header, no external references)."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _figure(figure: Any, caption: str) -> str:
    return f'<div class="figure">{_svg(figure)}<div>{html.escape(caption)}</div></div>'


def _table(header: list[str], rows: list[list[Any]], text_columns: int = 1) -> str:
    def cell(value: Any, k: int, tag: str) -> str:
        text = _number(value) if isinstance(value, float | np.floating | int) and not isinstance(value, bool) \
            else str(value)
        kind = ' class="text"' if k < text_columns else ""
        return f"<{tag}{kind}>{html.escape(text)}</{tag}>"

    head = "".join(cell(h, k, "th") for k, h in enumerate(header))
    body = "".join("<tr>" + "".join(cell(v, k, "td") for k, v in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _matrix(name: str, matrix: np.ndarray, rows: tuple[str, ...], columns: tuple[str, ...], limit: int = 14) -> str:
    if matrix.size == 0:
        return f"<p>{html.escape(name)} is empty.</p>"
    shown = matrix[:limit, :limit]
    note = f" (first {limit} rows and columns of {matrix.shape[0]} x {matrix.shape[1]})" if max(matrix.shape) > limit \
        else ""
    table = _table([name, *columns[:limit]], [[r, *row] for r, row in zip(rows[:limit], shown.tolist())])
    return f"<h4>{html.escape(name)}{html.escape(note)}</h4>{table}"


def _guarded(sections: list[str], data: dict[str, Any], key: str, title: str,
             build: Callable[[], tuple[str, Any]]) -> Any:
    """Append section ``title`` built by ``build`` (html, data); on a robodyn error, the reason instead."""
    try:
        body, value = build()
    except RobodynError as exc:
        sections.append(f"<h2>{html.escape(title)}</h2><p class=\"note\">Not available: {html.escape(str(exc))}</p>")
        data[key] = {"error": str(exc)}
        return None
    sections.append(f"<h2>{html.escape(title)}</h2>{body}")
    data[key] = value
    return value


def analyze(model: Model, *, at: Mapping[str, float] | None = None, horizon: float = 5.0, quiet: bool = True,
            max_points: int = MAX_POINTS) -> Report:
    """The report of ``model`` (see the module docstring).

    Parameters
    ----------
    at
        Values fixed while looking for equilibria (inputs, by default all 0; or states). For a model with
        frames (a robot) given joint angles, or with more than :data:`ROBOT_COORDINATES` coordinates: the
        operating point at those angles (others 0), held by their torques.
    horizon
        Length of the free and step responses (s).
    quiet
        No progress bar (it is shown on a terminal's stderr otherwise).
    """
    require_model(model, "analyze")
    from robodyn.analysis.classify import classify
    from robodyn.analysis.equilibrium import find_equilibrium

    given = _checked_options(model, at, horizon, max_points)
    sections: list[str] = []
    data: dict[str, Any] = {"model": model.name, "kind": model.kind, "states": list(model.states),
                            "inputs": list(model.inputs), "outputs": list(model.outputs),
                            "parameters": dict(model.parameters),
                            "generated": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}
    with contextlib.ExitStack() as stack:
        if quiet:
            stack.enter_context(quiet_progress())
        step = stack.enter_context(progress(4 + 6 * max_points, f"analyze {model.name}"))
        step(description="equations")
        latex = model.latex_text()
        equations = f"<pre>{html.escape(model.show_text())}</pre>"
        if latex:
            equations += f"<details><summary>LaTeX</summary><pre>{html.escape(latex)}</pre></details>"
        sections.append(f"<h2>Equations</h2>{equations}")
        data["equations"] = model.show_text()
        step(description="classification")
        _guarded(sections, data, "classification", "Classification", lambda: _classification(classify(model)))
        step(description="operating points")
        coordinates = model.states[: model.n_states // 2] if model.order == 2 else ()
        # a rigid-body model at the given joint angles (or, beyond ROBOT_COORDINATES, at q = 0), held by its
        # torques: its rest points form a continuum when inputs are free, and a search in many dimensions is slow
        robot = model.kinematics() is not None and model.order == 2 and (
            any(name in given for name in coordinates) or len(coordinates) > ROBOT_COORDINATES)
        points = _guarded(sections, data, "operating_points", "Operating points",
                          lambda: _points(model, given, robot, find_equilibrium))
        rows: list[dict[str, Any]] = []
        for k, point in enumerate((points or [])[:max_points]):
            rows.append(_row(model, point, k))
            sections.append(_point_section(model, point, k, horizon, data, step))
    page = _page(model, sections)
    return Report(model.name, page, data, rows)


def _checked_options(model: Model, at: Mapping[str, float] | None, horizon: float, max_points: int) -> dict[str, float]:
    """``at`` as ``{name: value}`` after the checks of :func:`analyze`'s options (InputError naming the fix)."""
    from robodyn.model.system import values_to_vector

    if isinstance(horizon, bool) or not isinstance(horizon, int | float | np.integer | np.floating) or not (
            math.isfinite(horizon) and horizon > 0):
        raise InputError(f"analyze: horizon must be a positive number of seconds, got {horizon!r}")
    if isinstance(max_points, bool) or not isinstance(max_points, int | np.integer) or max_points < 1:
        raise InputError(f"analyze: max_points must be a whole number >= 1 (operating points analysed in full), got "
                         f"{max_points!r}")
    if at is None:
        return {}
    if not isinstance(at, Mapping):
        raise InputError(f"analyze: at must be a mapping {{name: value}} of states and inputs, got "
                         f"{type(at).__name__}")
    names = (*model.states, *model.inputs)
    for name in at:
        if name not in names:
            close = difflib.get_close_matches(str(name), names, n=1)
            raise UnknownNameError(f"analyze: {name!r} in at is not a state or input of {model.name!r} (states "
                                   f"{', '.join(model.states)}; inputs {', '.join(model.inputs) or 'none'})"
                                   + (f"; did you mean {close[0]!r}?" if close else ""))
    values = values_to_vector(dict(at), names, "operating point", default=0.0)  # real, finite numbers
    return {name: float(values[names.index(name)]) for name in at}


def _classification(result: Any) -> tuple[str, Any]:
    verdicts = ["linear", "time_invariant", "homogeneous", "autonomous"]
    rows = [[name.replace("_", " "), "yes" if getattr(result, name) else "no", result.reasons.get(name, "")]
            for name in verdicts]
    text = (f"<p>Order {result.order}, {result.dimension} coordinate(s) / {result.state_dimension} state(s); decided "
            f"{html.escape(result.method)}.</p>")
    return text + _table(["property", "verdict", "reason"], rows, text_columns=3), {
        **{name: bool(getattr(result, name)) for name in verdicts}, "reasons": dict(result.reasons),
        "method": result.method}


def _points(model: Model, given: dict[str, float], robot: bool, find: Callable[..., Any]) -> tuple[str, Any]:
    """The operating points: equilibria with the inputs fixed (0 unless given), or a robot's configuration."""
    n = model.n_states // 2 if model.order == 2 else model.n_states
    if robot:  # a robot has a continuum of rest points: the one at the given angles, held by its torques
        fixed = {name: given.get(name, 0.0) for name in model.states}
        points = list(find(model, fix=fixed))
        how = "the given joint angles (others 0) at rest, with the inputs that hold them"
    else:
        fixed = {name: given.get(name, 0.0) for name in model.inputs} | {k: v for k, v in given.items()
                                                                           if k in model.states}
        points = list(find(model, fix=fixed, starts=8))
        how = "f(x, u) = 0 with " + (", ".join(f"{k} = {_number(v)}" for k, v in fixed.items()) or "nothing fixed")
    header = ["#", *model.states[:n], *model.inputs, "residual"]
    rows = [[k, *p.x[:n].tolist(), *p.u.tolist(), p.residual] for k, p in enumerate(points)]
    body = f"<p>{len(points)} point(s): {html.escape(how)}.</p>" + _table(header, rows)
    return body, points


def _row(model: Model, point: Any, k: int) -> dict[str, Any]:
    return {"point": k, **dict(zip(model.states, point.x.tolist())), **dict(zip(model.inputs, point.u.tolist())),
            "residual": point.residual}


def _point_section(model: Model, point: Any, k: int, horizon: float, data: dict[str, Any],
                   step: Callable[..., None]) -> str:
    import robodyn
    from robodyn import plots
    from robodyn.analysis.modes import modes as modes_of

    parts: list[str] = []
    record: dict[str, Any] = {"x": point.x.tolist(), "u": point.u.tolist()}
    data.setdefault("points", []).append(record)
    where = ", ".join(f"{s} = {_number(v)}" for s, v in zip(model.states, point.x))
    step(description=f"point {k}: linearize")
    try:
        linear = robodyn.linearize(model, point.x, point.u)
    except RobodynError as exc:
        record["error"] = str(exc)
        return f"<h2>Point {k}: {html.escape(where)}</h2><p class=\"note\">{html.escape(str(exc))}</p>"
    record.update(A=linear.A, B=linear.B, C=linear.C, D=linear.D, method=linear.method)
    parts.append("<h3>Linear model</h3>" + "".join(
        _matrix(name, np.asarray(getattr(linear, name)), rows, cols) for name, rows, cols in (
            ("A", linear.states, linear.states), ("B", linear.states, linear.inputs),
            ("C", linear.outputs, linear.states), ("D", linear.outputs, linear.inputs))))
    step(description=f"point {k}: modes")
    result = modes_of(linear)
    record.update(stability=result.stability, eigenvalues=[m.eigenvalue for m in result.rows])
    verdict = "stable" if result.stability.startswith("asymptotically") else "unstable" \
        if result.stability == "unstable" else ""
    parts.append(f"<h3>Modes</h3><p class=\"verdict {verdict}\">{html.escape(result.stability)}</p>"
                 f"<p>{html.escape(result.explanation)}</p><pre>{html.escape(result.table())}</pre>")
    figures = [_figure(plots.pole_map([m.eigenvalue for m in result.rows], title=f"poles at point {k}"),
                       "eigenvalues of A")]
    step(description=f"point {k}: validity")
    try:
        valid = robodyn.validity(model, point.x, point.u)
        record["validity_radius"] = valid.radius
        parts.append(f"<h3>Validity</h3><p>The linear model is within 5% of the nonlinear one up to a distance "
                     f"{_number(valid.radius)} from the point (the norm and scaling are those of robodyn.validity: "
                     f"{html.escape(_scaling(valid))}).</p>")
        figures.append(_figure(valid.plot(), "relative remainder of the linear model against the distance"))
    except RobodynError as exc:
        parts.append(f"<h3>Validity</h3><p class=\"note\">{html.escape(str(exc))}</p>")
    step(description=f"point {k}: responses")
    figures += _responses(model, linear, point, horizon)
    if model.n_states == 2:
        step(description=f"point {k}: phase portrait")
        figures.append(_figure(_phase(model, point), "phase portrait (arrows: the vector field at the point's inputs)"))
    tree = model.kinematics()
    if tree is not None and model.order == 2:
        figures.append(_figure(_arm(model, point), "the arm at the operating point"))
    if k == 0:
        parts.append(_existence(model, point, record))
    step(description=f"point {k}: done")
    return (f"<h2>Point {k}: {html.escape(where)}</h2>" + "".join(parts)
            + "<h3>Figures</h3>" + "".join(figures))


def _scaling(valid: Any) -> str:
    scale = getattr(valid, "scale", None)
    if scale is None:
        return "unscaled"
    return "each state and input divided by " + ", ".join(_number(s) for s in np.asarray(scale).ravel())


def _responses(model: Model, linear: Any, point: Any, horizon: float) -> list[str]:
    """Free (an initial offset) and step responses, nonlinear solid and linear dashed, on the same axes."""
    import robodyn
    from robodyn import plots
    from robodyn.signals import Step

    figures = []
    n = model.n_states
    offset = np.zeros(n)
    offset[0] = 0.05 * max(1.0, abs(float(point.x[0])))
    t_eval = np.linspace(0.0, horizon, 201)
    cases: list[tuple[str, Any, Any, float | None]] = [
        ("free response from an offset of the first state", point.x + offset, point.u, None)]
    if model.n_inputs:
        size = 0.05 * max(1.0, float(np.max(np.abs(point.u))))
        cases.append((f"step of {_number(size)} on {model.inputs[0]}", point.x, point.u, size))
    for caption, x0, u0, step in cases:
        try:
            inputs: Any = {name: float(v) for name, v in zip(model.inputs, u0)}
            if step is not None:
                inputs[model.inputs[0]] = Step(0.0, float(u0[0]), float(u0[0]) + step)
            nonlinear = robodyn.simulate(model, horizon, x0, inputs or None, t_eval=t_eval, rtol=1e-8)
            assert isinstance(nonlinear, Trajectory)
            shifted = {name: (value if not isinstance(value, float) else value - float(u0[j]))
                       for j, (name, value) in enumerate(inputs.items())}
            if step is not None:
                shifted[model.inputs[0]] = Step(0.0, 0.0, step)
            deviation = robodyn.simulate(linear, horizon, x0 - point.x, shifted or None, t_eval=t_eval)
            assert isinstance(deviation, Trajectory)
            lifted = Trajectory(deviation.t, deviation.x + point.x, deviation.u + point.u,
                                     deviation.x + point.x, model.states, model.inputs, model.states,
                                     f"{model.name} (linear)", deviation.stats, source=model)
            figure = plots.time_response(nonlinear)
            plots.time_response(lifted, into=figure, style="--", label_suffix=" (linear)")
            figures.append(_figure(figure, caption + ": nonlinear (solid), linear (dashed)"))
        except RobodynError as exc:
            figures.append(f'<p class="note">{html.escape(caption)}: {html.escape(str(exc))}</p>')
    return figures


def _phase(model: Model, point: Any) -> Any:
    import robodyn
    from robodyn import plots

    x, v = float(point.x[0]), float(point.x[1])
    runs = []
    for dx in (0.3, 1.0, 2.0):
        try:
            run = robodyn.simulate(model, 6.0, [x + dx, v], {n: float(u) for n, u in zip(model.inputs, point.u)}
                                   or None, rtol=1e-8)
        except RobodynError:
            continue
        assert isinstance(run, Trajectory)
        runs.append(run)
    return plots.phase_portrait(model, x_range=(x - math.pi, x + math.pi), v_range=(v - 6.0, v + 6.0),
                                u=point.u, trajectories=runs)


def _arm(model: Model, point: Any) -> Any:
    from matplotlib.figure import Figure

    from robodyn.kinematics import kinematics
    from robodyn.kinematics.paths import cube_limits

    K = kinematics(model)
    n = len(K.coordinates)
    points = K.origins(point.x[:n])
    tool = K.position(point.x[:n])
    figure = Figure(figsize=(5, 5), layout="constrained")
    ax: Any = figure.add_subplot(projection="3d")
    for child, parent in enumerate(K.skeleton):
        if parent >= 0:
            ax.plot(*np.stack([points[parent], points[child]]).T, color="#1f77b4", linewidth=3)
    ax.scatter(*points.T, color="#1f77b4", s=12)
    ax.scatter(*tool, color="#d62728", s=30, label=K.default_frame)
    limits = cube_limits(np.vstack([points, tool[None, :]]))
    ax.set(xlim=limits[0], ylim=limits[1], zlim=limits[2], xlabel="x [m]", ylabel="y [m]", zlabel="z [m]")
    ax.set_box_aspect((1, 1, 1))
    ax.legend(loc="upper left")
    return figure


def _existence(model: Model, point: Any, record: dict[str, Any]) -> str:
    import robodyn

    try:
        result = robodyn.existence(model, point.x, 0.1, 1.0, point.u)
    except RobodynError as exc:
        record["existence"] = {"error": str(exc)}
        return f"<h3>Existence and uniqueness</h3><p class=\"note\">{html.escape(str(exc))}</p>"
    record["existence"] = result.to_dict()
    return ("<h3>Existence and uniqueness (box of radius 0.1 around the point)</h3>"
            f"<p>{html.escape(result.explanation)}</p>")


def _page(model: Model, sections: list[str]) -> str:
    title = f"robodyn analysis of {model.name}"
    head = (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>")
    parameters = ", ".join(f"{k} = {_number(v)}" for k, v in model.parameters.items()) or "none"
    intro = (f"<h1>{html.escape(title)}</h1><p>{html.escape(model.kind)} model: states "
             f"{html.escape(', '.join(model.states))}; inputs {html.escape(', '.join(model.inputs) or 'none')}; "
             f"parameters {html.escape(parameters)}.</p>")
    return head + intro + "".join(sections) + "</body></html>\n"
