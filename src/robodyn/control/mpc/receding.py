"""Nonlinear model predictive control by real-time iterations: :class:`RecedingHorizon`.

At each sample t_k the controller measures x_k, re-poses its optimal control problem from there (the same costs,
bounds and constraints over [t_k, t_k + T]: :meth:`OptimalControlProblem.receding`), and applies the first input of
the plan. Solving each problem to convergence is what the plans would ideally be; the *real-time iteration* scheme
(Diehl, Bock & Schlöder, "A real-time iteration scheme for nonlinear optimization in optimal feedback control",
SIAM J. Control Optim. 43(5), 2005) instead takes a fixed number of iterations (one by default) of the solver from the
previous plan shifted by the time elapsed, linearizing along it: the plan converges while the system moves, at a
bounded cost per sample. The first sample (and any sample no later than the last one or more than a horizon after
it: a new run, or a diagram probing its blocks) is solved to convergence.

The solver is the problem's method (the DDP family: FDDP takes the shifted plan with its gaps, so a measured state
off the plan is no infeasible start; collocation works too, from the same warm start). The plan's first input u_0
has the exact local feedback du_0/dx_k = -K_0 of the DDP family's last backward pass (zero rows where an input
bound is active), which a diagram linearizes through; collocation has none.

:meth:`RecedingHorizon.block` is the controller as a sampled diagram block
(:class:`~robodyn.control.feedback_block.FeedbackBlock`): inputs the model's states, outputs its inputs, then
``cost`` and ``violation`` of each sample's plan (the solver's status per step, recorded in the run).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.errors import InputError
from robodyn.base.numbers import finite_number, float_array
from robodyn.control.feedback_block import FeedbackBlock
from robodyn.control.optimal.solvers import solver

if TYPE_CHECKING:
    from robodyn.control.optimal.problem import OptimalControlProblem

__all__ = ["REPORTS", "RecedingHorizon", "RecedingPlan"]

Array = NDArray[np.float64]

#: The block's further outputs: the plan's cost and its largest violation (dynamics gaps, bounds, constraints).
REPORTS: Final = ("cost", "violation")
SHIFT_RTOL: Final = 1e-9  # A time elapsed within this fraction of a knot of a whole number of knots shifts by knots.


@dataclass(frozen=True, slots=True)
class RecedingPlan:
    """One sample's plan.

    Attributes
    ----------
    t : (N + 1,)
        Its knots, from the sample's time.
    states : (N + 1, n)
    inputs : (N, m)
        Held from each knot to the next (DDP family) or at the knots (collocation).
    gains : (N, m, n) or None
        The DDP family's feedback gains (u = inputs - K (x - states)).
    cost, violation, iterations, status, converged, seconds
        As the solver reported them.
    """

    t: Array
    states: Array
    inputs: Array
    gains: Array | None
    cost: float
    violation: float
    iterations: int
    status: str
    converged: bool
    seconds: float


class RecedingHorizon:
    """Nonlinear MPC of ``problem`` by real-time iterations (module docstring).

    Parameters
    ----------
    problem
        An :class:`~robodyn.control.optimal.problem.OptimalControlProblem`; its x0 is replaced by each measured
        state and its time origin by each sample's time.
    iterations
        Solver iterations per sample (1: the real-time iteration).
    first_iterations
        Iterations of the first solve (to convergence).
    method
        The solver (default: the problem's).
    options
        Further options of the solver (``tolerance``, ``regularization``, ...).
    """

    def __init__(self, problem: OptimalControlProblem, *, iterations: int = 1, first_iterations: int = 200,
                 method: str | None = None, **options: Any):
        for label, value in (("iterations", iterations), ("first_iterations", first_iterations)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"RecedingHorizon: {label} must be an integer >= 1, got {value!r}")
        self.problem = problem
        self.method = problem.method if method is None else method
        self._solve = solver(self.method)
        self._iterations, self._first = iterations, first_iterations
        self._options = options
        self._last: RecedingPlan | None = None

    @property
    def last(self) -> RecedingPlan | None:
        """The last plan made, or None."""
        return self._last

    def reset(self) -> None:
        """Forget the last plan: the next sample is solved to convergence."""
        self._last = None

    def solve(self, x: ArrayLike, t: float = 0.0) -> RecedingPlan:
        """The plan from state ``x`` (n,) at time ``t``: real-time iterations from the last plan shifted to ``t``, or a
        full solve (module docstring). It becomes the last plan."""
        time_ = finite_number(t, "RecedingHorizon: time t")
        state = float_array(x, "RecedingHorizon: state x", shape=(self.problem.model.n_states,))
        warm = self._shifted(time_)
        plan = self._plan(state, time_, warm, self._iterations if warm is not None else self._first)
        self._last = plan
        return plan

    def __call__(self, x: ArrayLike, t: float = 0.0) -> Array:
        """u_0 (m,): the first input of :meth:`solve`'s plan."""
        return self.solve(x, t).inputs[0].copy()

    def _plan(self, x: Array, t: float, warm: tuple[Array, Array] | None, iterations: int) -> RecedingPlan:
        problem = self.problem.receding(x, t)
        start = time.perf_counter()
        outcome = self._solve(problem, warm_start=warm, max_iterations=iterations, **self._options)
        seconds = time.perf_counter() - start
        gains = None if outcome.gains is None else np.asarray(outcome.gains, dtype=float)
        return RecedingPlan(problem.times(), np.asarray(outcome.X, dtype=float), np.asarray(outcome.U, dtype=float),
                            gains, float(outcome.cost), float(outcome.violation), int(outcome.iterations),
                            str(outcome.status), bool(outcome.converged), seconds)

    def _shifted(self, t: float) -> tuple[Array, Array] | None:
        """The last plan moved to start at ``t``: by whole knots when the time elapsed is a whole number of them
        (the last knot's values repeated at the end), else linearly interpolated; None for a new run (``t`` no
        later than the last plan's start, or past its end)."""
        last = self._last
        if last is None or t <= last.t[0] or t - last.t[0] > last.t[-1] - last.t[0]:
            return None
        dt = float(last.t[1] - last.t[0])
        shift = (t - last.t[0]) / dt
        whole = round(shift)
        if abs(shift - whole) <= SHIFT_RTOL * max(1.0, shift):
            N = last.inputs.shape[0]
            rows = np.minimum(np.arange(whole, whole + N + 1), N)
            return last.states[rows].copy(), last.inputs[np.minimum(rows[:-1], N - 1)].copy()
        times = t + (last.t - last.t[0])
        X = np.column_stack([np.interp(times, last.t, column) for column in last.states.T])
        U = np.column_stack([np.interp(times[:-1], last.t[:-1], column) for column in last.inputs.T])
        return X, U

    def _law(self, t: float, x: Array) -> Array:
        plan = self.solve(x, t)
        return np.concatenate([plan.inputs[0], [plan.cost, plan.violation]])

    def _gain(self, t: float, x: Array) -> Array:
        """d(u_0, cost, violation)/dx at a converged plan from (t, x), made aside (the last plan is kept)."""
        plan = self._plan(np.asarray(x, dtype=float), t, None, self._first)
        if plan.gains is None:
            raise InputError(f"RecedingHorizon: the {self.method} solver gives no feedback gains: linearize a loop "
                             "with a DDP-family controller (method fddp or ddp)")
        m = plan.inputs.shape[1]
        D = np.zeros((m + len(REPORTS), x.size))
        D[:m] = -plan.gains[0]
        return D

    def _repr_html_(self) -> str:
        """The controller at a glance: its problem, solver, iterations per sample and its last plan (notebooks)."""
        from robodyn.display import block, heading, html_table

        problem, last = self.problem, self._last
        rows = [("model", problem.model.name), ("horizon [s]", problem.horizon), ("knots", problem.knots),
                ("method", self.method), ("iterations per sample", self._iterations)]
        if last is not None:
            rows += [("last plan at t [s]", f"{last.t[0]:g}"), ("its cost", f"{last.cost:.6g}"),
                     ("its violation", f"{last.violation:.3g}"), ("its status", last.status)]
        return block([heading("Nonlinear MPC by real-time iterations"), html_table(rows, row_header=True)])

    def block(self, sample: float | None = None, *, name: str = "mpc") -> FeedbackBlock:
        """The controller as a sampled diagram block (module docstring); ``sample`` defaults to the problem's knot
        spacing. Its outputs ``cost`` and ``violation`` are recorded with the run; its derivative (for
        ``linearize``) is the DDP family's -K_0 at a converged plan (the two reports' rows zero)."""
        period = self.problem.dt if sample is None else sample
        model = self.problem.model
        return FeedbackBlock(self._law, tuple(model.states), tuple(model.inputs), period, gain=self._gain,
                             reports=REPORTS, name=name,
                             describe=f"nonlinear MPC ({self.method}, {self._iterations} iteration(s) per sample, "
                                      f"horizon {self.problem.horizon:g} s in {self.problem.knots} knots)")
