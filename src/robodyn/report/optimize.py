"""The report of an optimal control solve (``robodyn optimize --report``): one self-contained HTML page.

It shows the solve (method, status, converged, cost, violation, iterations, seconds, knots, horizon), the states
over time with their bounds and the references of the cost, the inputs against their bounds, the path of each
frame target (through robodyn.kinematics), the convergence — cost and violation per iteration, as the solver
reported them to ``progress(iteration, cost, violation)`` — and the problem as given: its costs, bounds and
constraints (with their values on the solution), and the problem file's text when there is one. The figures are
inline SVG with their text kept as text (robodyn.display.html.figure_svg); every text from the problem, its file
or the model (names, expressions, the solver's status) is escaped.

The report reads the result and the problem through the protocols below, as :mod:`robodyn.identification.report` reads
an identification: the report layer sits above robodyn.control and asks an :class:`OptimizedTrajectory`
(robodyn.OptimalTrajectory) and an :class:`OptimizedProblem` (robodyn.OptimalControlProblem) only for these
members.

The history is the solver's own report, collected by the caller::

    history = []
    result = problem.solve(progress=lambda *row: history.append(row))
    write_optimization_report(result, problem, "page.html", history=history)
"""

from __future__ import annotations

import html
import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

import numpy as np

from robodyn.base.atomic import check_output_path, write_text_atomic
from robodyn.base.errors import InputError
from robodyn.base.numbers import is_real_number
from robodyn.display.figures import literal, plain_log
from robodyn.display.page import figure, number, page, table

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from numpy.typing import NDArray

    from robodyn.kinematics.frames import Kinematics
    from robodyn.model.protocol import ModelContract

__all__ = ["BOUND_RTOL", "HELD_EXCEPT", "MAX_DRAWN", "MAX_PANELS", "MAX_ROWS", "ConvergenceRow", "CostTerms",
           "FrameTerm", "OptimizedProblem", "OptimizedTrajectory", "QuadraticTerm", "checked_history",
           "optimization_page", "write_optimization_report"]

MAX_DRAWN: Final = 20_000  # knots drawn per curve: more are drawn every k-th (a figure of a million points is slow)
MAX_PANELS: Final = 16  # states (or inputs) drawn, one axes each; a note names the rest
MAX_ROWS: Final = 20  # iterations listed in the convergence table: the first and last MAX_ROWS // 2 beyond it
BOUND_RTOL: Final = 1e-6  # a knot is at its bound within this times max(1, |bound|): an active bound is met to the
#                           solver's tolerance, not exactly
HELD_EXCEPT: Final = ("collocation",)  # methods whose inputs are values at the knots (drawn linear between them);
#                                        the others hold u[k] from knot k to the next (the DDP family)
RED, GREY, BLUE, GREEN = "#c0392b", "#777777", "#1f77b4", "#1a7f37"

#: One row of the history: (iteration, cost, violation), as ``progress`` received it.
ConvergenceRow = tuple[int, float, float]


class OptimizedTrajectory(Protocol):
    """What the report reads of the solve's result (robodyn.OptimalTrajectory): the knots ``t`` (N + 1,), ``x``
    (N + 1, n), ``u`` (N + 1, m), the names, the model's name and the solver's facts."""

    @property
    def t(self) -> NDArray[np.float64]: ...
    @property
    def x(self) -> NDArray[np.float64]: ...
    @property
    def u(self) -> NDArray[np.float64]: ...
    @property
    def states(self) -> tuple[str, ...]: ...
    @property
    def inputs(self) -> tuple[str, ...]: ...
    @property
    def model(self) -> str: ...
    @property
    def cost(self) -> float: ...
    @property
    def violation(self) -> float: ...
    @property
    def iterations(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def converged(self) -> bool: ...
    @property
    def seconds(self) -> float: ...
    @property
    def method(self) -> str: ...


class ReferenceSignal(Protocol):
    """r(t) (robodyn.control.optimal.references.Reference): ``at(t)`` : (k,); ``times`` None when constant."""

    @property
    def times(self) -> NDArray[np.float64] | None: ...
    def at(self, t: float) -> NDArray[np.float64]: ...


class QuadraticTerm(Protocol):
    """1/2 (z - r(t))' W (z - r(t)) (robodyn.control.optimal.costs.Quadratic): ``W`` (k, k)."""

    @property
    def W(self) -> NDArray[np.float64]: ...
    @property
    def reference(self) -> ReferenceSignal: ...


class FrameTerm(Protocol):
    """A frame target (robodyn.control.optimal.costs.FrameTarget): the frame of ``kinematics`` whose coordinates
    are the states ``index``, its target ``position`` (3,), at the parameters ``p``."""

    @property
    def kinematics(self) -> Kinematics: ...
    @property
    def frame(self) -> str: ...
    @property
    def position(self) -> NDArray[np.float64]: ...
    @property
    def weight(self) -> float: ...
    @property
    def rotation(self) -> NDArray[np.float64] | None: ...
    @property
    def terminal(self) -> bool: ...
    @property
    def index(self) -> NDArray[np.intp]: ...
    @property
    def p(self) -> NDArray[np.float64]: ...


class ExpressionTerms(Protocol):
    """Expressions as the user wrote them (robodyn.control.optimal.expressions.CompiledExpressions)."""

    @property
    def texts(self) -> tuple[str, ...]: ...


class CostTerms(Protocol):
    """The cost's terms (robodyn.control.optimal.costs.Costs), ``names`` in the order given."""

    @property
    def state(self) -> QuadraticTerm | None: ...
    @property
    def input(self) -> QuadraticTerm | None: ...
    @property
    def terminal_term(self) -> QuadraticTerm | None: ...
    @property
    def frames(self) -> tuple[FrameTerm, ...]: ...
    @property
    def expression(self) -> ExpressionTerms | None: ...
    @property
    def names(self) -> tuple[str, ...]: ...


class ConstraintTerms(Protocol):
    """Path inequalities and terminal equalities (robodyn.control.optimal.constraints.Constraints)."""

    @property
    def path(self) -> ExpressionTerms | None: ...
    @property
    def terminal(self) -> ExpressionTerms | None: ...


class OptimizedProblem(Protocol):
    """What the report reads of the problem (robodyn.OptimalControlProblem): sizes, boxes (k, 2), the terms, and
    the constraints' values ``path(t, x, u)`` and ``terminal_constraint(x)``."""

    @property
    def model(self) -> ModelContract: ...
    @property
    def horizon(self) -> float: ...
    @property
    def knots(self) -> int: ...
    @property
    def dt(self) -> float: ...
    @property
    def x0(self) -> NDArray[np.float64]: ...
    @property
    def input_bounds(self) -> NDArray[np.float64]: ...
    @property
    def state_bounds(self) -> NDArray[np.float64]: ...
    @property
    def costs(self) -> CostTerms: ...
    @property
    def constraints(self) -> ConstraintTerms: ...
    @property
    def integrator(self) -> str: ...
    @property
    def transcription(self) -> str: ...
    def path(self, t: float, x: NDArray[np.float64], u: NDArray[np.float64]) -> NDArray[np.float64]: ...
    def terminal_constraint(self, x: NDArray[np.float64]) -> NDArray[np.float64]: ...


# --- the history -------------------------------------------------------------------------------------------------
def checked_history(history: Any) -> tuple[ConvergenceRow, ...]:
    """``history`` (rows ``(iteration, cost, violation)``, what ``progress`` received) checked: InputError naming
    the row otherwise. A cost or violation may be inf or nan (an iteration that diverged): it is shown as such."""
    if history is None:
        return ()
    if isinstance(history, str | bytes) or not isinstance(history, Sequence):
        raise InputError(f"history: expected a list of (iteration, cost, violation), got {type(history).__name__}")
    rows = []
    for k, row in enumerate(history):
        if isinstance(row, str | bytes) or not isinstance(row, Sequence) or len(row) != 3:
            raise InputError(f"history[{k}]: expected (iteration, cost, violation), got {row!r:.60}")
        iteration, cost, violation = row
        if isinstance(iteration, bool) or not isinstance(iteration, int | np.integer) \
                or not is_real_number(cost) or not is_real_number(violation):
            raise InputError(f"history[{k}]: expected an integer and two numbers, got {row!r:.60}")
        rows.append((int(iteration), float(cost), float(violation)))
    return tuple(rows)


# --- figures -----------------------------------------------------------------------------------------------------
def _panels(count: int) -> tuple[Figure, list[Any]]:
    """A figure of ``count`` axes (at most MAX_PANELS) sharing t, three per row."""
    from matplotlib.figure import Figure

    shown = min(count, MAX_PANELS)
    columns = min(3, shown)
    rows = math.ceil(shown / columns)
    picture = Figure(figsize=(4.4 * columns, 2.7 * rows), layout="constrained")
    axes = picture.subplots(rows, columns, squeeze=False, sharex=True).ravel().tolist()
    for ax in axes[shown:]:
        ax.set_visible(False)
    for ax in axes[max(0, shown - columns):shown]:
        ax.set_xlabel("t [s]")
    return picture, axes[:shown]


def _label(name: str, units: dict[str, str]) -> str:
    unit = units.get(name)
    return literal(f"{name} [{unit}]" if unit else name)


def _bounds(ax: Any, lower: float, upper: float) -> None:
    """The finite sides of a box as dashed red lines."""
    for k, value in enumerate(v for v in (lower, upper) if math.isfinite(v)):
        ax.axhline(value, color=RED, linestyle="--", linewidth=1.0, label="bound" if k == 0 else None)


def _reference(ax: Any, term: QuadraticTerm | None, k: int, t: NDArray[np.float64]) -> None:
    """The reference of a running quadratic term on its ``k``-th name, where the term weighs it."""
    if term is None or not np.any(term.W[k]):
        return
    values = np.array([term.reference.at(float(tk))[k] for tk in t]) if term.reference.times is not None \
        else np.full(t.size, float(term.reference.at(0.0)[k]))
    ax.plot(t, values, ":", color=GREEN, linewidth=1.4, label="reference")


def _states_figure(result: OptimizedTrajectory, problem: OptimizedProblem) -> Figure:
    """Each state over the knots, its bounds, the state cost's reference and the terminal term's target."""
    step = max(1, result.t.size // MAX_DRAWN)
    t = result.t[::step]
    units = problem.model.units()
    picture, axes = _panels(len(result.states))
    final = problem.costs.terminal_term
    for k, ax in enumerate(axes):
        ax.plot(t, result.x[::step, k], "-", color=BLUE, marker="." if t.size <= 80 else None, label="state")
        _bounds(ax, *problem.state_bounds[k])
        _reference(ax, problem.costs.state, k, t)
        if final is not None and np.any(final.W[k]):  # the terminal term reads its reference at t = 0 (costs.py)
            ax.plot([result.t[-1]], [final.reference.at(0.0)[k]], "x", color=GREEN, markersize=8,
                    label="terminal target")
        ax.set_ylabel(_label(result.states[k], units))
        if ax.get_legend_handles_labels()[0][1:]:
            ax.legend(loc="best", fontsize=7)
    return picture


def _inputs_figure(result: OptimizedTrajectory, problem: OptimizedProblem) -> Figure:
    """Each input over the knots (held or linear, as the method defines it) against its bounds."""
    step = max(1, result.t.size // MAX_DRAWN)
    t = result.t[::step]
    units = problem.model.units()
    picture, axes = _panels(len(result.inputs))
    held = result.method not in HELD_EXCEPT
    for k, ax in enumerate(axes):
        ax.plot(t, result.u[::step, k], "-", color=BLUE, drawstyle="steps-post" if held else "default",
                label="input")
        _bounds(ax, *problem.input_bounds[k])
        _reference(ax, problem.costs.input, k, t)
        ax.set_ylabel(_label(result.inputs[k], units))
        if ax.get_legend_handles_labels()[0][1:]:
            ax.legend(loc="best", fontsize=7)
    return picture


def _frame_figure(t: NDArray[np.float64], positions: NDArray[np.float64], target: FrameTerm) -> Figure:
    """The frame's origin (x, y, z) against its target, and its distance to the target, over time."""
    from matplotlib.figure import Figure

    step = max(1, t.size // MAX_DRAWN)
    picture = Figure(figsize=(10.0, 3.2), layout="constrained")
    where, distance = picture.subplots(1, 2)
    for j, (axis, colour) in enumerate(zip("xyz", (BLUE, "#ff7f0e", GREEN))):
        where.plot(t[::step], positions[::step, j], "-", color=colour, label=axis)
        where.axhline(float(target.position[j]), color=colour, linestyle="--", linewidth=1.0)
    where.set_ylabel("position [m]")
    where.legend(loc="best", fontsize=7, title="dashed: target", title_fontsize=7)
    gap = np.linalg.norm(positions - target.position, axis=1)
    distance.plot(t[::step], gap[::step], "-", color=RED)
    if np.all(gap[np.isfinite(gap)] > 0) and np.any(np.isfinite(gap)):
        distance.set_yscale("log")
        plain_log(distance)
    distance.set_ylabel("distance to the target [m]")
    for ax in (where, distance):
        ax.set_xlabel("t [s]")
    picture.suptitle(literal(f"frame {target.frame}"), fontsize=10)
    return picture


def _convergence_figure(rows: tuple[ConvergenceRow, ...]) -> Figure:
    """Cost and violation per iteration; a logarithmic axis where every drawn value is positive."""
    from matplotlib.figure import Figure

    iterations = np.array([r[0] for r in rows], dtype=float)
    picture = Figure(figsize=(10.0, 3.2), layout="constrained")
    for ax, column, name, colour in zip(picture.subplots(1, 2), (1, 2), ("cost", "violation"), (BLUE, RED)):
        values = np.array([r[column] for r in rows])
        ax.plot(iterations, values, "-", color=colour, marker="." if len(rows) <= 60 else None)
        finite = values[np.isfinite(values)]
        if finite.size and np.all(finite > 0) and finite.max() > 100.0 * finite.min():
            ax.set_yscale("log")
            plain_log(ax)
        ax.set_xlabel("iteration [-]")
        ax.set_ylabel(f"{name} [-]")
    return picture


# --- sections ----------------------------------------------------------------------------------------------------
def _summary(result: OptimizedTrajectory, problem: OptimizedProblem) -> str:
    rows: list[list[Any]] = [
        ["method", result.method], ["status", result.status], ["converged", "yes" if result.converged else "no"],
        ["cost", float(result.cost)], ["violation", float(result.violation)],
        ["iterations", int(result.iterations)], ["seconds (the solve)", float(result.seconds)],
        ["knots (intervals N)", int(problem.knots)], ["horizon [s]", float(problem.horizon)],
        ["dt [s]", float(problem.dt)]]
    return "<h2>Solve</h2>" + table(["", "value"], rows)


def _states_section(result: OptimizedTrajectory, problem: OptimizedProblem) -> str:
    rows = [[name, problem.x0[k], result.x[-1, k], np.min(result.x[:, k]), np.max(result.x[:, k]),
             *problem.state_bounds[k]] for k, name in enumerate(result.states)]
    body = table(["state", "x0", "final", "min", "max", "lower bound", "upper bound"], rows)
    more = f"; the first {MAX_PANELS} of {len(result.states)} states" if len(result.states) > MAX_PANELS else ""
    caption = f"the states at the knots; dashed: their bounds; dotted: the state cost's reference{more}"
    return f"<h2>States</h2>{body}{figure(_states_figure(result, problem), caption)}"


def _inputs_section(result: OptimizedTrajectory, problem: OptimizedProblem) -> str:
    rows = []
    for k, name in enumerate(result.inputs):
        u, (lower, upper) = result.u[:-1, k], problem.input_bounds[k]  # the last row repeats or ends the knots
        at = [int(np.sum(np.abs(u - b) <= BOUND_RTOL * max(1.0, abs(b)))) if math.isfinite(b) else "-"
              for b in (lower, upper)]
        rows.append([name, np.min(result.u[:, k]), np.max(result.u[:, k]), lower, upper, *(str(a) for a in at)])
    body = table(["input", "min", "max", "lower bound", "upper bound", "knots at lower", "knots at upper"], rows)
    held = result.method not in HELD_EXCEPT
    how = "held from each knot to the next" if held else "the values at the knots, drawn linear between them"
    more = f"; the first {MAX_PANELS} of {len(result.inputs)} inputs" if len(result.inputs) > MAX_PANELS else ""
    caption = f"the inputs ({how}); dashed: their bounds; dotted: the input cost's reference{more}"
    return f"<h2>Inputs</h2>{body}{figure(_inputs_figure(result, problem), caption)}"


def _frames_section(result: OptimizedTrajectory, problem: OptimizedProblem) -> str:
    parts, rows = [], []
    for target in problem.costs.frames:
        q = result.x[:, target.index]
        positions = np.asarray(target.kinematics.pose(q, target.frame, params=target.p).position, dtype=float)
        rows.append([target.frame, "at the final knot" if target.terminal else "running", target.weight,
                     *target.position, *positions[-1], float(np.linalg.norm(positions[-1] - target.position))])
        parts.append(figure(_frame_figure(result.t, positions, target),
                            f"frame {target.frame}: its origin against the target, and the distance to it"))
    header = ["frame", "term", "weight", "target x", "target y", "target z", "final x", "final y", "final z",
              "final distance [m]"]
    note = "" if all(t.rotation is None for t in problem.costs.frames) else \
        "<p>An orientation is also weighed for the frames that give one (not drawn).</p>"
    return "<h2>Frame targets</h2>" + table(header, rows, text_columns=2) + note + "".join(parts)


def _view_section(result: OptimizedTrajectory, problem: OptimizedProblem) -> list[str]:
    """The optimal trajectory playing in 3-D with the first frame target's marker, for a model with a robot file
    (robodyn.report.views.run_view); nothing otherwise."""
    from robodyn.report.views import run_view

    frames = problem.costs.frames
    target = None if not frames else [float(v) for v in frames[0].position]
    marker = f" and the target of frame {html.escape(frames[0].frame)} (magenta)" if frames else ""
    section = run_view(problem.model, result, target=target, what=f"The optimal trajectory{marker}")
    return [] if section is None else [section]


def _convergence_section(rows: tuple[ConvergenceRow, ...], result: OptimizedTrajectory) -> str:
    if not rows:
        return ("<h2>Convergence</h2><p class=\"note\">No history was recorded: pass the rows the solver gave "
                "<code>progress(iteration, cost, violation)</code> as <code>history</code>.</p>")
    half = MAX_ROWS // 2
    shown = list(rows) if len(rows) <= MAX_ROWS else [*rows[:half], None, *rows[-half:]]
    cells = [["…", "…", "…"] if row is None else [str(row[0]), number(row[1]), number(row[2])] for row in shown]
    listed = table(["iteration", "cost", "violation"], cells)  # cost and violation not cleaned against each other
    caption = f"cost and violation per iteration ({len(rows)} reported by {result.method})"
    return f"<h2>Convergence</h2>{figure(_convergence_figure(rows), caption)}{listed}"


def _weights(term: QuadraticTerm, names: tuple[str, ...]) -> str:
    W = term.W
    if np.count_nonzero(W - np.diag(np.diag(W))):
        return f"a full {W.shape[0]} x {W.shape[1]} matrix"
    return ", ".join(f"{name}: {number(W[k, k])}" for k, name in enumerate(names) if W[k, k]) or "none"


def _target(term: QuadraticTerm, names: tuple[str, ...], terminal: bool) -> str:
    if term.reference.times is not None and not terminal:
        return "a table over time"
    r = term.reference.at(0.0)
    return ", ".join(f"{name}: {number(r[k])}" for k, name in enumerate(names) if np.any(term.W[k])) or "-"


def _costs_rows(result: OptimizedTrajectory, problem: OptimizedProblem) -> list[list[str]]:
    costs = problem.costs
    quadratic = (("state", costs.state, result.states, "1/2 (x - r)' Q (x - r), integrated"),
                 ("input", costs.input, result.inputs, "1/2 (u - r)' R (u - r), integrated"),
                 ("terminal", costs.terminal_term, result.states, "1/2 (x_N - r)' Q_T (x_N - r), at the final knot"))
    rows = [[key, form, _weights(term, names), _target(term, names, key == "terminal")]
            for key, term, names, form in quadratic if term is not None]
    rows += [["frame", f"1/2 w |p - target|^2 of {target.frame}, " + ("at the final knot" if target.terminal
                                                                      else "integrated"),
              f"w: {number(target.weight)}", ", ".join(number(v) for v in target.position)]
             for target in costs.frames]
    if costs.expression is not None:
        rows.append(["running", "l(t, x, u), integrated", "-", costs.expression.texts[0]])
    return rows


def _constraints_rows(result: OptimizedTrajectory, problem: OptimizedProblem) -> list[list[str]]:
    rows = []
    path = problem.constraints.path
    if path is not None:
        g = np.array([problem.path(float(tk), xk, uk) for tk, xk, uk in zip(result.t, result.x, result.u)])
        rows += [["path, <= 0", text, number(np.max(g[:, k]))] for k, text in enumerate(path.texts)]
    terminal = problem.constraints.terminal
    if terminal is not None:
        e = problem.terminal_constraint(result.x[-1])
        for k, text in enumerate(terminal.texts):
            shown = text  # a state name stands for "that state = its value": the value is the state less e
            if text in result.states:
                shown = f"{text} = {number(result.x[-1, result.states.index(text)] - e[k])}"
            rows.append(["terminal, = 0", shown, number(e[k])])
    return rows


def _problem_section(result: OptimizedTrajectory, problem: OptimizedProblem, text: str | None) -> str:
    model = problem.model
    facts = [["model", f"{model.name} ({model.kind})"], ["integrator (the DDP family's step)", problem.integrator],
             ["transcription (collocation's)", problem.transcription]]
    parts = ["<h2>Problem</h2>", table(["", ""], facts, text_columns=2),
             "<h3>Cost</h3>", table(["term", "form", "weights", "reference or target"],
                                    _costs_rows(result, problem), text_columns=4)]
    constraints = _constraints_rows(result, problem)
    if constraints:
        parts += ["<h3>Constraints</h3>",
                  table(["kind", "expression", "largest on the solution"], constraints, text_columns=3)]
    parts.append("<p>The bounds are in the tables of the states and the inputs.</p>")
    if text is not None:
        parts.append(f"<details open><summary>the problem file</summary><pre>{html.escape(text)}</pre></details>")
    return "".join(parts)


# --- the page ----------------------------------------------------------------------------------------------------
def optimization_page(result: OptimizedTrajectory, problem: OptimizedProblem, *, history: Any = None,
                      text: str | None = None, title: str | None = None) -> str:
    """The report's HTML (see the module docstring).

    Parameters
    ----------
    result
        The solve's :class:`robodyn.OptimalTrajectory`.
    problem
        The :class:`robodyn.OptimalControlProblem` it solves.
    history
        The rows ``(iteration, cost, violation)`` the solver passed to ``progress``, or None.
    text
        The problem file's text, shown as given (escaped), or None.
    title
        The page's title (default: "Optimal trajectory of <model>").
    """
    rows = checked_history(history)
    if text is not None and not isinstance(text, str):
        raise InputError(f"text: expected the problem file's text (str), got {type(text).__name__}")
    sections = [_summary(result, problem), *_view_section(result, problem), _states_section(result, problem),
                _inputs_section(result, problem)]
    if problem.costs.frames:
        sections.append(_frames_section(result, problem))
    sections += [_convergence_section(rows, result), _problem_section(result, problem, text)]
    how = problem.transcription if result.method in HELD_EXCEPT else f"{problem.integrator} steps"
    intro = (f"<p>{html.escape(result.method)} ({html.escape(how)}) on {problem.knots} intervals of "
             f"{number(problem.dt)} s over {number(problem.horizon)} s: {html.escape(result.status)}, cost "
             f"{number(result.cost)}, violation {number(result.violation)}.</p>")
    return page(title or f"Optimal trajectory of {result.model}", intro, sections)


def write_optimization_report(result: OptimizedTrajectory, problem: OptimizedProblem,
                              path: str | os.PathLike[str], *, history: Any = None, text: str | None = None) -> None:
    """Write :func:`optimization_page` to ``path`` (an ``.html`` file), atomically, after every check."""
    check_output_path(path, "report")
    write_text_atomic(path, optimization_page(result, problem, history=history, text=text))
