"""Plots worth reading: time responses with units, phase portraits, pole maps, validity and convergence.

Every function returns a matplotlib Figure (drawn off-screen: no display needed), or draws into the
``ax=`` it is given and returns that axes' figure, so a simulation can be overlaid on an exact solution:

    figure = plots.time_response(exact_run)
    plots.time_response(simulated_run, ax=figure.axes[0], style="--")

:func:`time_response` puts one axis per physical quantity: states that share a unit share an axis (for a
second-order model without units, the coordinates on one and the velocities on another), inputs appear
only when they vary (constant ones are named in the title), and inputs with identical values are drawn
once with both names. Units come from the model (``model.units()``: rad, rad/s, N m for revolute
joints, m, m/s, N for prismatic ones) when the trajectory knows its model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError, UnknownNameError
from robodyn.display.figures import literal, plain_log

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from robodyn.results.run import Run

__all__ = ["DENSE_POINTS", "FORMATS", "convergence", "dense", "figure_bytes", "literal", "phase_portrait", "plain_log",
           "pole_map", "save_figure", "time_response", "validity"]

FORMATS: Final = (".png", ".svg", ".pdf")  # what save_figure (and the CLI's --plot) writes


def _units(trajectory: Run) -> Mapping[str, str]:
    source = getattr(trajectory, "source", None)
    return source.units() if source is not None else {}


def _groups(trajectory: Run, names: Sequence[str], units: Mapping[str, str]) -> list[tuple[str, list[str]]]:
    """(axis label, state names) per axis: by unit, else coordinates and velocities apart."""
    groups: dict[str, list[str]] = {}
    half = len(trajectory.states) // 2
    second_order = getattr(getattr(trajectory, "source", None), "order", 1) == 2
    for name in names:
        if name in units:
            label = f"[{literal(units[name])}]"
        elif second_order:
            label = "coordinates" if trajectory.states.index(name) < half else "velocities"
        else:
            label = "states"
        groups.setdefault(label, []).append(name)
    return list(groups.items())


def _varying_inputs(trajectory: Run) -> tuple[list[tuple[str, np.ndarray]], list[str]]:
    """(label, values) of the inputs that vary, identical ones merged, and the texts of the constant ones."""
    varying: list[tuple[str, np.ndarray]] = []
    constant: list[str] = []
    for j, name in enumerate(trajectory.inputs):
        values = trajectory.u[:, j]
        finite = values[np.isfinite(values)]
        if finite.size == 0 or np.ptp(finite) <= 1e-12 * max(1.0, float(np.max(np.abs(finite)))):
            constant.append(f"{name} = {float(finite[0]) if finite.size else float('nan'):.4g}")
            continue
        for k, (label, other) in enumerate(varying):
            if np.array_equal(other, values, equal_nan=True):
                varying[k] = (f"{label} = {name}", other)
                break
        else:
            varying.append((name, values))
    return varying, constant


def _constant_text(constant: list[str]) -> str:
    """``a = 0, b = 2`` for up to three inputs; beyond, those that share a value counted (``5 others = 0``)."""
    if len(constant) <= 3:
        return ", ".join(constant)
    by_value: dict[str, list[str]] = {}
    for text in constant:
        name, value = text.split(" = ")
        by_value.setdefault(value, []).append(name)
    parts = [f"{names[0]} = {value}" if len(names) == 1 else f"{len(names)} inputs = {value}"
             for value, names in by_value.items()]
    return ", ".join(parts)


DENSE_POINTS: Final = 600  # points per curve of a time response drawn through the solver's steps


def dense(trajectory: Run, points: int = DENSE_POINTS) -> Run:
    """``trajectory`` drawn smooth: with fewer than ``points`` stored times (an adaptive run stores its steps,
    135 over 10 s for the joint) and its model known, the states at ``points`` evenly spaced times by the cubic
    Hermite interpolant through the stored states and their derivatives f(t, x, u) (local, exact at the stored
    points); inputs linear between stored values, outputs from h. Anything else: ``trajectory`` itself.

    A run stops at every jump of its inputs; a step ending at one takes its end slope with the input just before
    the jump (``trajectory.left_inputs``), not the one after it.

    Only for drawing: the stored points stay the result (robodyn.simulate's ``t_eval`` gives values at chosen
    times with the integrator's own accuracy).
    """
    model = trajectory.source
    t = trajectory.t
    if model is None or len(t) >= points or len(t) < 2 or model.sample_period is not None \
            or not np.all(np.diff(t) > 0):
        return trajectory
    p = model.parameter_vector(trajectory.params)
    xs, us = trajectory.x, trajectory.u
    left = us if trajectory.left_inputs is None else trajectory.left_inputs
    try:
        start = model.f_many(t[:-1], xs[:-1], us[:-1], p)
        end = model.f_many(t[1:], xs[1:], left[1:], p)
    except Exception:  # f fails somewhere the run went (a blow-up it stopped at): draw the stored points
        return trajectory
    if not (np.all(np.isfinite(start)) and np.all(np.isfinite(end))):
        return trajectory
    times = np.union1d(np.linspace(t[0], t[-1], points), t)
    k = np.clip(np.searchsorted(t, times, side="right") - 1, 0, len(t) - 2)
    h = (t[k + 1] - t[k])[:, None]
    s = ((times - t[k]) / h[:, 0])[:, None]
    x = ((2 * s**3 - 3 * s**2 + 1) * xs[k] + (s**3 - 2 * s**2 + s) * h * start[k]
         + (-2 * s**3 + 3 * s**2) * xs[k + 1] + (s**3 - s**2) * h * end[k])
    u = np.column_stack([np.interp(times, t, trajectory.u[:, j]) for j in range(trajectory.u.shape[1])]) \
        if trajectory.u.shape[1] else np.zeros((times.size, 0))
    y = model.h_many(times, x, u, p)
    make: Any = type(trajectory)  # the class of the run drawn
    return make(times, x, u, y, trajectory.states, trajectory.inputs, trajectory.outputs, trajectory.model,
               trajectory.stats, trajectory.events, source=model, params=trajectory.params)


def time_response(trajectory: Run, names: Sequence[str] | None = None, *, ax: Axes | None = None,
                  into: Figure | None = None, style: str = "-", units: Mapping[str, str] | None = None,
                  label_suffix: str = "", smooth: bool = True) -> Figure:
    """The states ``names`` (default all) and the varying inputs of a run against t (drawn through :func:`dense`
    unless ``smooth`` is False: the stored points only).

    Parameters
    ----------
    trajectory
        A :class:`robodyn.Trajectory`.
    names
        States (or outputs) to draw.
    ax
        Draw every name into this one axes instead of a new figure.
    into
        A figure made by this function: each state is overlaid on the axis of its group (matched by the axis
        label), the inputs on the inputs axis — e.g. a linear model's response over the nonlinear one.
    style
        Matplotlib line style (``"--"`` for an overlaid approximation).
    units
        Units by name, over the model's own (``model.units()``).
    label_suffix
        Appended to each legend label (``" (linear)"``).
    """
    from matplotlib.figure import Figure

    if smooth:
        trajectory = dense(trajectory)
    if names is not None and (isinstance(names, str) or not isinstance(names, Sequence)
                              or not all(isinstance(n, str) for n in names)):
        raise InputError(f"time_response: names must be a list of state or output names, got {names!r:.60}")
    chosen = list(names) if names is not None else list(trajectory.states)
    unit_of = {**_units(trajectory), **(units or {})}
    columns = {}
    for name in chosen:
        if name in trajectory.states:
            columns[name] = trajectory.x[:, trajectory.states.index(name)]
        elif name in trajectory.outputs:
            columns[name] = trajectory.y[:, trajectory.outputs.index(name)]
        else:
            raise UnknownNameError(f"unknown state or output {name!r} of {trajectory.model!r} (states "
                                   f"{', '.join(trajectory.states)}; outputs {', '.join(trajectory.outputs)})")
    if ax is not None:
        for name, values in columns.items():
            ax.plot(trajectory.t, values, style, label=f"{literal(name)}{label_suffix}")
        ax.legend(loc="best")
        return ax.get_figure(root=True)  # type: ignore[return-value]
    groups = _groups(trajectory, chosen, unit_of)
    varying, constant = _varying_inputs(trajectory)
    if into is not None:
        by_label = {axis.get_ylabel(): axis for axis in into.axes}
        for label, members in groups:
            axis = by_label.get(label)
            if axis is None:
                raise InputError(f"time_response: the figure has no axis {label!r} for {', '.join(members)}")
            for name in members:
                axis.plot(trajectory.t, columns[name], style, label=f"{literal(name)}{label_suffix}")
            axis.legend(loc="best")
        inputs_axis = next((axis for text, axis in by_label.items() if text.startswith("inputs")), None)
        if varying and inputs_axis is not None:
            for label, values in varying:
                inputs_axis.plot(trajectory.t, values, style, label=f"{literal(label)}{label_suffix}")
        return into
    rows = len(groups) + (1 if varying else 0)
    height = 2.4 * rows + 0.6
    figure = Figure(figsize=(8, height))  # margins in inches, for short axis labels (a layout engine doubles the cost)
    figure.subplots_adjust(left=0.95 / 8, right=1 - 0.15 / 8, top=1 - 0.5 / height, bottom=0.45 / height,
                           hspace=0.2)
    axes = figure.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    for axis, (label, members) in zip(axes, groups):
        for name in members:
            axis.plot(trajectory.t, columns[name], style, label=f"{literal(name)}{label_suffix}")
        axis.set_ylabel(label)
        axis.legend(loc="best")
        axis.grid(alpha=0.3)
    if varying:
        for label, values in varying:
            name = label.split(" = ")[0]
            unit = f" [{unit_of[name]}]" if name in unit_of else ""
            axes[-1].plot(trajectory.t, values, style, label=literal(f"{label}{unit}"))
        input_units = {unit_of.get(label.split(" = ")[0]) for label, _ in varying}
        known = {unit for unit in input_units if unit is not None}
        axes[-1].set_ylabel("inputs" + (f" [{literal(known.pop())}]" if input_units == known and len(known) == 1
                                        else " (units in the legend)" if known else ""))
        axes[-1].legend(loc="best")
        axes[-1].grid(alpha=0.3)
    title = f"{literal(trajectory.model)} ({trajectory.stats.method})"
    if constant:
        title += "\nconstant inputs: " + literal(_constant_text(constant))
    axes[0].set_title(title, fontsize=10)
    axes[-1].set_xlabel("t [s]")
    return figure


def phase_portrait(model: Any, *, x_range: tuple[float, float] = (-np.pi, np.pi),
                   v_range: tuple[float, float] = (-6.0, 6.0), u: Any = None, params: Any = None,
                   trajectories: Sequence[Run] = (), points: int = 25, ax: Axes | None = None) -> Figure:
    """The vector field of a two-state model over a grid (arrows normalized, colour by speed), with the given
    trajectories drawn on it. InputError for a model that does not have exactly two states."""
    from matplotlib.figure import Figure

    if model.n_states != 2:
        raise InputError(f"phase_portrait: model {model.name!r} has {model.n_states} states: a phase portrait needs 2")
    xs, vs = np.linspace(*x_range, points), np.linspace(*v_range, points)
    X, V = np.meshgrid(xs, vs)
    u_vector, p = model.input_vector(u), model.parameter_vector(params)
    grid = np.column_stack([X.ravel(), V.ravel()])
    field = model.f_many(np.zeros(grid.shape[0]), grid, np.tile(u_vector, (grid.shape[0], 1)), p)
    dX, dV = field[:, 0].reshape(X.shape), field[:, 1].reshape(X.shape)
    speed = np.hypot(dX / np.ptp(xs), dV / np.ptp(vs))
    scale = np.where(speed > 0, speed, 1.0)
    if ax is None:
        figure = Figure(figsize=(6, 5))  # fixed margins: one axes with short labels (a layout engine doubles the cost)
        figure.subplots_adjust(left=0.13, right=0.97, top=0.93, bottom=0.11)
        ax = figure.add_subplot()
    ax.quiver(X, V, dX / np.ptp(xs) / scale, dV / np.ptp(vs) / scale, speed, cmap="viridis", angles="xy",
              pivot="mid", alpha=0.8)
    for run in trajectories:
        ax.plot(run.x[:, 0], run.x[:, 1], color="tab:red", linewidth=1.5)
        ax.plot(run.x[0, 0], run.x[0, 1], "o", color="tab:red", markersize=4)
    units = model.units()
    ax.set_xlabel(literal(model.states[0] + (f" [{units[model.states[0]]}]" if model.states[0] in units else "")))
    ax.set_ylabel(literal(model.states[1] + (f" [{units[model.states[1]]}]" if model.states[1] in units else "")))
    ax.set(xlim=x_range, ylim=v_range, title=f"{literal(model.name)}: phase portrait")
    return ax.get_figure(root=True)  # type: ignore[return-value]


def pole_map(eigenvalues: Sequence[complex] | np.ndarray, *, title: str = "poles", ax: Axes | None = None,
             discrete: bool = False) -> Figure:
    """The eigenvalues in the complex plane (x: real part, y: imaginary part), the stable region shaded: the left
    half-plane, or for a discrete-time system (``discrete``) the inside of the unit circle, which is drawn."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle

    values = np.asarray(eigenvalues, dtype=complex).ravel()
    if ax is None:  # fixed margins: the labels are fixed text (a layout engine doubles the cost of drawing)
        figure = Figure(figsize=(5, 4))
        figure.subplots_adjust(left=0.14, right=0.97, top=0.91, bottom=0.13)
        ax = figure.add_subplot()
    span = max(1.0, float(np.max(np.abs(values)))) * 1.2 if values.size else 1.0
    if discrete:
        ax.add_patch(Circle((0.0, 0.0), 1.0, facecolor="tab:green", alpha=0.07, edgecolor="0.5",
                            label="stable (|z| < 1)"))
    else:
        ax.axvspan(-span, 0.0, color="tab:green", alpha=0.07, label="stable (Re < 0)")
    ax.axhline(0.0, color="0.6", linewidth=0.8)
    ax.axvline(0.0, color="0.6", linewidth=0.8)
    ax.plot(values.real, values.imag, "x", color="tab:red", markersize=9, markeredgewidth=2, label="eigenvalues",
            gid="poles")  # one marker per eigenvalue, a complex pair two: <g id="poles"> in an SVG
    labels = ("Re z [1]", "Im z [1]") if discrete else ("Re [1/s]", "Im [rad/s]")
    ax.set(xlim=(-span, span), ylim=(-span, span), xlabel=labels[0], ylabel=labels[1], title=title)
    ax.set_aspect("equal")
    ax.legend(loc="upper left", fontsize=8)
    return ax.get_figure(root=True)  # type: ignore[return-value]


def validity(result: Any) -> Figure:
    """The remainder of a linearization against the distance from the point, and the radius where it stays
    within the tolerance: the figure of a :func:`robodyn.validity` result."""
    figure: Figure = result.plot()
    return figure


def convergence(result: Any) -> Figure:
    """Error against step size of each integrator, with its reference slope drawn beside the data: the figure
    of a :func:`robodyn.verify` result."""
    figure: Figure = result.plot()
    return figure


def figure_bytes(figure: Figure, path: str, option: str = "--plot") -> bytes:
    """``figure`` as the PNG, SVG or PDF file ``path`` names (by its suffix) would hold it."""
    import io
    from pathlib import Path

    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(f"{option} {path}: write a .png, .svg or .pdf file")
    buffer = io.BytesIO()
    figure.savefig(buffer, format=suffix[1:], dpi=120)
    return buffer.getvalue()


def save_figure(figure: Figure, path: str, option: str = "--plot") -> None:
    """Write ``figure`` as PNG, SVG or PDF (by the suffix), atomically."""
    from robodyn.base.atomic import write_bytes_atomic

    write_bytes_atomic(path, figure_bytes(figure, path, option))
