"""Linear MPC: :func:`mpc` makes an :class:`MPC` controller; each :meth:`MPC.solve` returns an :class:`MPCPlan`.

At every sample the controller solves the finite-horizon QP of :mod:`~robodyn.control.mpc.formulation` from the
measured state (absolute values: a nonlinear model's own states, a LinearSystem's own coordinates) and applies the
plan's first input (receding horizon; Rawlings, Mayne & Diehl, *Model Predictive Control: Theory, Computation, and
Design*, 2nd ed., 2017, ch. 1-2). The terminal weight defaults to the discrete-time LQR's Riccati solution S (DARE):
then x' S x is the exact cost-to-go of the unconstrained tail and, without active bounds, the plan's first input is
the LQR's u = -K x for every horizon (Bemporad et al., "The explicit linear quadratic regulator for constrained
systems", Automatica 38, 2002, sec. 2).

Each solve is warm-started from the previous plan shifted one step (its last input and state held) and the solver's
multipliers shifted alike, when the previous solve succeeded; :meth:`MPC.reset` forgets it.

An infeasible QP (or a solver that stops short: :data:`~robodyn.control.mpc.solvers.STATUSES`) is recorded in the
plan's ``status``, its inputs and states NaN; ``controller(x)`` then raises :class:`ConvergenceError` naming the status:
the controller never returns an input it has not found. A caller that needs an input anyway (a sampled block) calls
:meth:`MPC.solve` and chooses its fallback (the previous plan's next input, a saturated LQR, ...).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.errors import ConvergenceError, InputError, NumericalError, ShapeError
from robodyn.base.numbers import finite_number, float_array, frozen
from robodyn.control.design import lqr
from robodyn.control.mpc.bounds import box_bounds
from robodyn.control.mpc.formulation import FORMULATIONS, Formulation, formulation, shift_blocks
from robodyn.control.mpc.plant import Plant, discrete_plant
from robodyn.control.mpc.solvers import (
    AUTO,
    DEFAULT_SOLVER,
    SOLVERS,
    STATUSES,
    Answer,
    QPSolver,
    auto_formulation,
    make_solver,
)
from robodyn.control.weights import check_definite, check_symmetric, lqr_weights, weight_matrix
from robodyn.model.kinds.linear import LinearSystem
from robodyn.model.system import Values

if TYPE_CHECKING:
    from robodyn.control.feedback_block import FeedbackBlock
    from robodyn.model.protocol import ModelContract

__all__ = ["MPC", "MPCPlan", "mpc"]

Array = NDArray[np.float64]
Weight = ArrayLike | Mapping[str, float]
USABLE: Final = ("solved", "inaccurate")  # Statuses whose plan is kept (and whose first input controller(x) applies).
MAX_HORIZON: Final = 10_000  # Steps: a larger QP is a mistake of units (a horizon in s given in steps).


@dataclass(frozen=True, slots=True, eq=False)
class MPCPlan:
    """One solve of an MPC (see :meth:`MPC.solve`).

    Attributes
    ----------
    inputs : (N, m)
        The planned inputs u_0 ... u_{N-1} (absolute values; NaN when the status is not usable).
    states : (N + 1, n)
        The predicted states x_0 (the measured state) ... x_N.
    status
        A key of :data:`robodyn.control.mpc.solvers.STATUSES`: ``"solved"``, ``"inaccurate"``, ``"infeasible"``,
        ``"max_iterations"`` or ``"failed"``.
    iterations
        The QP solver's iterations.
    cost
        The plan's cost (the QP's objective with its constant: the weighted sums of the module docstring); NaN
        when not usable.
    solve_time
        Wall time of the QP solve in s.
    solver
        The QP solver's name (``"direct"``: no bounds, the KKT equations solved exactly); ``detail``: its own
        status text.
    """

    inputs: Array
    states: Array
    status: str
    iterations: int
    cost: float
    solve_time: float
    solver: str
    detail: str

    def __post_init__(self) -> None:
        if self.inputs.ndim != 2 or self.states.ndim != 2 or self.states.shape[0] != self.inputs.shape[0] + 1:
            raise ShapeError(f"MPCPlan: inputs {self.inputs.shape} and states {self.states.shape} do not agree")
        self.inputs.setflags(write=False)
        self.states.setflags(write=False)

    @property
    def solved(self) -> bool:
        """Whether the plan is usable (status ``"solved"`` or ``"inaccurate"``)."""
        return self.status in USABLE

    def _repr_html_(self) -> str:
        """The status, iterations, cost and solve time, and the first planned input (for notebooks)."""
        from robodyn.display import block, heading, html_table

        first = ", ".join(f"{u:.6g}" for u in self.inputs[0]) if self.inputs.size else "none"
        rows = [("status", self.status), ("solver", f"{self.solver} ({self.detail})"),
                ("iterations", self.iterations), ("cost", f"{self.cost:.6g}"),
                ("solve time [s]", f"{self.solve_time:.3g}"), ("first input", first),
                ("steps", self.inputs.shape[0])]
        return block([heading("MPC plan"), html_table(rows, row_header=True)])

    def to_dict(self) -> dict[str, Any]:
        """Strict JSON (NaN as null)."""
        def rows(array: Array) -> list[list[float | None]]:
            return [[float(v) if math.isfinite(v) else None for v in row] for row in array]

        return {"inputs": rows(self.inputs), "states": rows(self.states), "status": self.status,
                "iterations": self.iterations, "cost": self.cost if math.isfinite(self.cost) else None,
                "solve_time": self.solve_time, "solver": self.solver}


class MPC:
    """A linear model-predictive controller (made by :func:`mpc`): ``controller(x)`` is the first planned input.

    Attributes (read-only by convention): ``plant`` (the discrete affine model, :class:`~.plant.Plant`), ``horizon``,
    ``Q``, ``R``, ``Qf``, ``state_bounds`` (n, 2), ``input_bounds`` (m, 2), ``solver`` and ``formulation`` (names),
    ``dt``, ``states``, ``inputs``, ``last`` (the previous plan, or None).
    """

    def __init__(self, plant: Plant, horizon: int, weights: tuple[Array, Array, Array], boxes: tuple[Array, Array],
                 solver: str, form: str, tolerance: float | None = None) -> None:
        self.plant, self.horizon, self.solver, self.formulation = plant, horizon, solver, form
        self.Q, self.R, self.Qf = weights
        self.state_bounds, self.input_bounds = boxes
        self._form: Formulation = formulation(form, plant, horizon, self.Q, self.R, self.Qf, *boxes)
        self._solver: QPSolver = make_solver(solver, self._form.qp, tolerance)
        self._answer: Answer | None = None
        self.last: MPCPlan | None = None

    @property
    def dt(self) -> float:
        return self.plant.dt

    @property
    def states(self) -> tuple[str, ...]:
        return self.plant.states

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.plant.inputs

    def reset(self) -> None:
        """Forget the previous plan: the next solve starts cold."""
        self._answer, self.last = None, None

    def __call__(self, x: ArrayLike) -> Array:
        """The first input u_0 (m,) of the plan from the state ``x`` (n,), or ConvergenceError naming the status."""
        plan = self.solve(x)
        if not plan.solved:
            raise ConvergenceError(f"mpc: the QP from x = {np.array2string(np.asarray(x, dtype=float), precision=4)} "
                                   f"is {plan.status} ({STATUSES[plan.status]}): loosen the state bounds or lengthen "
                                   "the horizon, or call solve() and choose a fallback input")
        return plan.inputs[0]

    def _references(self, x_ref: ArrayLike | None, u_ref: ArrayLike | None) -> tuple[Array, Array]:
        """The references' deviations: r (N+1, n), v (N, m); a constant (n,) / (m,) repeats over the horizon."""
        N, (n, m), plant = self.horizon, self.plant.B.shape, self.plant
        out = []
        for value, size, steps, op, label in ((x_ref, n, N + 1, plant.x_op, "x_ref"),
                                              (u_ref, m, N, plant.u_op, "u_ref")):
            if value is None:
                out.append(np.zeros((steps, size)))
                continue
            array = float_array(value, f"mpc: {label}")
            if array.shape == (size,):
                array = np.tile(array, (steps, 1))
            elif array.shape != (steps, size):
                raise ShapeError(f"mpc: {label} has shape {array.shape}, expected ({size},) or ({steps}, {size})")
            out.append(array - op)
        return out[0], out[1]

    def solve(self, x: ArrayLike, x_ref: ArrayLike | None = None, u_ref: ArrayLike | None = None) -> MPCPlan:
        """The plan from the state ``x`` (n,): inputs (N, m), predicted states (N + 1, n), status, cost.

        ``x_ref`` ((n,) or (N + 1, n)) and ``u_ref`` ((m,) or (N, m)) are the references the weights measure from
        (absolute values; default the operating point: zeros for a LinearSystem).
        """
        n = self.plant.A.shape[0]
        x0 = float_array(x, "mpc: the state x", shape=(n,)) - self.plant.x_op
        r, v = self._references(x_ref, u_ref)
        q, b, lo, hi = self._form.vectors(x0, r, v)
        guess, previous, form = None, self._answer, self._form
        if previous is not None and self._solver.shifts:
            guess = (shift_blocks(previous.z, form.primal), shift_blocks(previous.y_eq, form.equality),
                     shift_blocks(previous.y_in, form.inequality))
        start = time.perf_counter()
        answer = self._solver.solve(q, b, lo, hi, guess, previous is not None)
        elapsed = time.perf_counter() - start
        N, m = self.horizon, self.plant.B.shape[1]
        if answer.status in USABLE and np.isfinite(answer.z).all():
            dx, du = self._form.plan(x0, answer.z)
            dx[0] = x0  # the measured state, a constraint of the QP: exactly, not to the solver's tolerance
            cost = _cost(dx, du, r, v, self.Q, self.R, self.Qf)
            states, inputs = dx + self.plant.x_op, du + self.plant.u_op
            self._answer = answer
        else:
            states, inputs, cost = np.full((N + 1, n), np.nan), np.full((N, m), np.nan), math.nan
            self._answer = None
        plan = MPCPlan(inputs, states, answer.status, answer.iterations, cost, elapsed,
                       answer.solver or self._solver.name, answer.detail)
        self.last = plan
        return plan

    def gain(self, x: ArrayLike, x_ref: ArrayLike | None = None, references: bool = False) -> Array:
        """The exact derivative of the first input at the plan from ``x`` (:mod:`~robodyn.control.mpc.sensitivity`):
        du_0/dx (m, n), or du_0/d(x, x_ref) (m, 2 n) with ``references`` (x_ref a state reference held over the
        horizon). Solves from ``x`` first (it becomes the last plan); a NumericalError when that plan is unusable."""
        from robodyn.control.mpc.sensitivity import first_input_gain

        plan = self.solve(x, x_ref)
        if plan.status not in USABLE or self._answer is None:
            raise NumericalError(f"mpc: no derivative of the first input where the QP is {plan.status} "
                                 f"({STATUSES[plan.status]})")
        r, v = self._references(x_ref, None)
        return first_input_gain(self._form, self._answer, r, v, self.plant.A.shape[0], references)

    def block(self, *, references: bool = False, name: str = "mpc") -> FeedbackBlock:
        """The controller as a sampled diagram block at its period ``dt``
        (:func:`~robodyn.control.mpc.block.mpc_block`)."""
        from robodyn.control.mpc.block import mpc_block

        return mpc_block(self, references=references, name=name)

    def _repr_html_(self) -> str:
        """The design at a glance: model, horizon, sample period, solver, the bounds and the weights."""
        from robodyn.display import block, heading, html_table, matrix_html

        def bounds(box: Array, names: tuple[str, ...]) -> str:
            given = [f"{name} in [{lo:g}, {hi:g}]" for name, (lo, hi) in zip(names, box, strict=True)
                     if np.isfinite(lo) or np.isfinite(hi)]
            return ", ".join(given) or "none"

        rows = [("model", self.plant.name), ("horizon", f"{self.horizon} steps ({self.horizon * self.dt:g} s)"),
                ("dt [s]", f"{self.dt:g}"), ("solver", f"{self.solver}, {self.formulation} form"),
                ("input bounds", bounds(self.input_bounds, self.inputs)),
                ("state bounds", bounds(self.state_bounds, self.states))]
        return block([heading("MPC"), html_table(rows, row_header=True),
                      matrix_html(self.Q, self.states, self.states, title="Q"),
                      matrix_html(self.R, self.inputs, self.inputs, title="R"),
                      matrix_html(self.Qf, self.states, self.states, title="Qf")])

    def __repr__(self) -> str:
        return (f"MPC({self.plant.name!r}, horizon={self.horizon}, dt={self.dt:g}, solver={self.solver!r}, "
                f"formulation={self.formulation!r})")


def _cost(dx: Array, du: Array, r: Array, v: Array, Q: Array, R: Array, Qf: Array) -> float:
    """sum_k (x_k - r_k)' Q (...) + (u_k - v_k)' R (...) + (x_N - r_N)' Qf (...)."""
    ex, eu = dx - r, du - v
    stage = np.vdot(ex[:-1] @ Q, ex[:-1]) + np.vdot(eu @ R, eu)
    return float(stage + ex[-1] @ Qf @ ex[-1])


def _horizon(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InputError(f"mpc: horizon must be a whole number of steps >= 1, got {value!r:.40}")
    if not 1 <= int(value) <= MAX_HORIZON:
        raise InputError(f"mpc: horizon = {int(value)} steps: give 1 to {MAX_HORIZON} (the prediction covers "
                         "horizon * dt s)")
    return int(value)


def _terminal(plant: Plant, Q: Array, R: Array, Qf: Weight | None) -> Array:
    """Qf as given (symmetric PSD), or the DARE solution of the plant with Q, R (the LQR's cost-to-go)."""
    n = plant.A.shape[0]
    if Qf is not None:
        matrix = weight_matrix(Qf, (n, n), "mpc: Qf", plant.states)
        check_symmetric(matrix, "Qf")
        check_definite(matrix, "Qf", strict=False)
        return 0.5 * (matrix + matrix.T)
    system = LinearSystem(plant.A, plant.B, states=plant.states, inputs=plant.inputs, name=plant.name, dt=plant.dt)
    try:
        return np.array(lqr(system, Q, R).S)
    except (InputError, NumericalError) as exc:
        raise type(exc)(f"mpc: Qf defaults to the discrete LQR's Riccati solution, which fails here ({exc}); give Qf "
                        "(e.g. Qf=Q)") from None


def mpc(sys: ModelContract, horizon: int, Q: Weight, R: Weight, Qf: Weight | None = None,
        bounds: Mapping[str, Any] | None = None, *, dt: float | None = None, x_op: Values | None = None,
        u_op: Values | None = None, params: Values | None = None, solver: str | None = None,
        formulation: str | None = None, tolerance: float | None = None) -> MPC:
    """A linear MPC controller of ``sys`` (module docstring).

    Parameters
    ----------
    sys
        A LinearSystem (discrete: its dt; continuous: held exactly over ``dt``) or any robodyn model, linearized
        exactly at (x_op, u_op) then held (:mod:`~robodyn.control.mpc.plant`); its states and inputs stay absolute.
    horizon
        N, the number of steps predicted (>= 1).
    Q : (n, n) or {state: weight}
        Stage state weight, symmetric positive semidefinite.
    R : (m, m) or {input: weight}
        Stage input weight, symmetric positive definite.
    Qf : (n, n) or {state: weight}, optional
        Terminal weight, symmetric PSD; default the DARE solution (the unconstrained MPC is then the LQR).
    bounds
        ``{"inputs": {name: [low, high]}, "states": {name: [low, high]}}`` (absolute values; null or inf: none).
    dt
        The sample period in s (continuous-time systems).
    x_op, u_op : (n,), (m,) or {name: value}, optional
        A nonlinear model's operating point: default x_op = 0 and u_op its holding input.
    params
        Parameter overrides of a model.
    solver
        ``"auto"`` (default, by measurement: ProxQP on the condensed form of a small problem, N m <= 50, Clarabel for
        the steps it leaves unsolved; Clarabel on the sparse form otherwise), ``"clarabel"``, ``"proxsuite"`` or
        ``"osqp"`` (when installed).
    formulation
        ``"sparse"`` (states as variables) or ``"condensed"`` (inputs only); default ``"sparse"``, or with
        ``"auto"`` the form its size rule picks (:func:`~robodyn.control.mpc.solvers.auto_formulation`).
    tolerance
        The QP solver's absolute and relative stopping tolerance (default: the solver's
        :data:`~robodyn.control.mpc.solvers.TOLERANCE`), in [1e-14, 1e-2].

    Returns
    -------
    MPC
        ``controller(x)`` -> u_0 (m,); ``controller.solve(x, x_ref=None, u_ref=None)`` -> :class:`MPCPlan`.

    Raises
    ------
    InputError, ShapeError, UnknownNameError
        A horizon < 1, weights of the wrong shape or names, not symmetric, Q or Qf not PSD, R not PD; unknown bound
        names, lower > upper, NaN bounds; a continuous-time system without dt; an unknown or missing solver.
    """
    N = _horizon(horizon)
    if formulation is not None and (not isinstance(formulation, str) or formulation not in FORMULATIONS):
        raise InputError(f"mpc: unknown formulation {formulation!r}: one of {', '.join(FORMULATIONS)}")
    name = DEFAULT_SOLVER if solver is None else solver
    if not isinstance(name, str) or (name != AUTO and name not in SOLVERS):
        raise InputError(f"mpc: unknown QP solver {name!r}: one of {AUTO}, {', '.join(SOLVERS)}")
    plant = discrete_plant(sys, dt, x_op, u_op, params)
    (n, m) = plant.B.shape
    form = formulation or (auto_formulation(N * m) if name == AUTO else "sparse")
    Q_, R_, _ = lqr_weights(Q, R, None, n, m, where="mpc", states=plant.states, inputs=plant.inputs)
    Qf_ = _terminal(plant, Q_, R_, Qf)
    boxes = box_bounds(bounds, plant.states, plant.inputs)
    return MPC(plant, N, (frozen(Q_), frozen(R_), frozen(Qf_)), boxes, name, form, _tolerance(tolerance))


def _tolerance(value: object) -> float | None:
    if value is None:
        return None
    number = finite_number(value, "mpc: tolerance")
    if not 1e-14 <= number <= 1e-2:
        raise InputError(f"mpc: tolerance must lie in [1e-14, 1e-2], got {number:g}")
    return number
