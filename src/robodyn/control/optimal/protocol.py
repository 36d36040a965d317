"""The contract between an optimal control problem and its solvers.

A problem is posed on the horizon [0, T] cut into N intervals of dt = T / N (the *knots* t_k = k dt, k = 0..N).
The solvers (the DDP family on discretized dynamics, direct collocation with an NLP solver) see it only through
:class:`TranscribableProblem`: continuous dynamics x' = f(t, x, u) with their exact Jacobians, a running cost
l(t, x, u) integrated over time and a terminal cost l_T(x), each with exact first and second derivatives, box
bounds on inputs and states, path inequalities g(t, x, u) <= 0 and terminal equalities e(x) = 0 with exact
Jacobians; ``terminal_values()`` names the states e fixes (x_N,i = v_i), which collocation makes bounds. Every
array is float64; shapes are given as (n,) for states, (m,) for inputs.

Every per-point member has a batched twin over P points at once (``*_points``: t (P,), X (P, n), U (P, m), the
results with a leading P axis), equal to the per-point member row by row up to rounding: the solvers gather a
whole trajectory's values and derivatives with a few calls instead of a Python loop over its points. A problem
without a batch form of its own derives them from the per-point members with
:class:`~robodyn.control.optimal.batch.points.PointwiseBatch`. ``compiled_dynamics()`` offers the model's compiled f
(its address and parameters) for a compiled rollout, or None.

A solver answers a :class:`SolverOutcome`; the problem wraps it into the public result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import ShapeError

__all__ = ["BatchCostDerivatives", "CompiledDynamics", "CostDerivatives", "SolverOutcome", "TerminalDerivatives",
           "TranscribableProblem"]

Array = NDArray[np.float64]


@dataclass(frozen=True, slots=True, eq=False)
class CostDerivatives:
    """A running cost and its exact derivatives at one (t, x, u).

    l : the value; lx : (n,); lu : (m,); lxx : (n, n); luu : (m, m); lux : (m, n) (d2l / du dx).
    """

    l: float  # noqa: E741 - the textbook name of a stage cost
    lx: Array
    lu: Array
    lxx: Array
    luu: Array
    lux: Array


@dataclass(frozen=True, slots=True, eq=False)
class BatchCostDerivatives:
    """A running cost and its exact derivatives at P points: l (P,), lx (P, n), lu (P, m), lxx (P, n, n),
    luu (P, m, m), lux (P, m, n); row k is :class:`CostDerivatives` at point k."""

    l: Array  # noqa: E741 - the textbook name of a stage cost
    lx: Array
    lu: Array
    lxx: Array
    luu: Array
    lux: Array


@dataclass(frozen=True, slots=True, eq=False)
class CompiledDynamics:
    """A problem's f as machine code for compiled loops: ``addresses`` int64 (4,) the model's ``rhs_c`` and
    ``jac_c`` at slots 0 and 2 (robodyn.model.compiled.model_addresses: ``fn(t, x, u, p, out)``) and ``p`` (n_p,)
    the parameters to pass them."""

    addresses: NDArray[np.int64]
    p: Array


@dataclass(frozen=True, slots=True, eq=False)
class TerminalDerivatives:
    """A terminal cost and its exact derivatives at x: l, lx (n,), lxx (n, n)."""

    l: float  # noqa: E741 - the textbook name of a stage cost
    lx: Array
    lxx: Array


class TranscribableProblem(Protocol):
    """What a solver of optimal control problems needs (see the module docstring).

    ``mechanical`` is the number nq of coordinates when the state is (q, v) with q' = v (the first nq states
    are positions, the next nq their rates: semi-implicit Euler steps v first, then q with the new v), and 0
    otherwise. ``linear`` is True when f is linear time-invariant in (x, u) (then an exact zero-order-hold
    step exists: :meth:`f_jacobians` at any point gives A and B).
    """

    @property
    def states(self) -> tuple[str, ...]: ...
    @property
    def inputs(self) -> tuple[str, ...]: ...
    @property
    def horizon(self) -> float: ...
    @property
    def knots(self) -> int: ...
    @property
    def x0(self) -> Array: ...
    @property
    def mechanical(self) -> int: ...
    @property
    def linear(self) -> bool: ...
    @property
    def input_bounds(self) -> Array:
        """(m, 2): lower and upper bound per input, -inf / inf where unbounded."""
    @property
    def state_bounds(self) -> Array:
        """(n, 2): lower and upper bound per state, -inf / inf where unbounded."""
    @property
    def n_path(self) -> int:
        """The number of path inequalities g(t, x, u) <= 0 (0: none)."""
    @property
    def n_terminal(self) -> int:
        """The number of terminal equalities e(x_N) = 0 (0: none)."""

    def times(self) -> Array:
        """(N + 1,) the knots t_k = k T / N."""
    def f(self, t: float, x: Array, u: Array) -> Array:
        """(n,) the model's x' at (t, x, u) with the problem's parameters."""
    def f_jacobians(self, t: float, x: Array, u: Array) -> tuple[Array, Array]:
        """(A (n, n), B (n, m)): the exact df/dx and df/du."""
    def running(self, t: float, x: Array, u: Array) -> float:
        """The running cost l(t, x, u) (integrated over time by the solver's quadrature)."""
    def running_derivatives(self, t: float, x: Array, u: Array) -> CostDerivatives:
        """l and its exact first and second derivatives."""
    def terminal(self, x: Array) -> float:
        """The terminal cost l_T(x)."""
    def terminal_derivatives(self, x: Array) -> TerminalDerivatives:
        """l_T and its exact first and second derivatives."""
    def path(self, t: float, x: Array, u: Array) -> Array:
        """(n_path,) g(t, x, u); feasible where every entry is <= 0."""
    def path_jacobians(self, t: float, x: Array, u: Array) -> tuple[Array, Array]:
        """(gx (n_path, n), gu (n_path, m))."""
    def terminal_constraint(self, x: Array) -> Array:
        """(n_terminal,) e(x); feasible where every entry is 0."""
    def terminal_constraint_jacobian(self, x: Array) -> Array:
        """(n_terminal, n)."""
    def terminal_values(self) -> Array:
        """(n,) v_i for each state e fixes (x_N,i = v_i), NaN for the others. The rows of the k fixed states come
        first in e, in the states' order, each x_i - v_i exactly: a solver may make them bounds and drop them."""
    def initial_guess(self) -> tuple[Array, Array]:
        """(X (N + 1, n), U (N, m)): the guess a solver starts from (x0 at every knot and the inputs that hold
        x0 still, or the user's guess)."""

    # --- batched twins: P points at once (t (P,), X (P, n), U (P, m)), row k equal to the per-point member ---
    def f_points(self, t: Array, X: Array, U: Array) -> Array:
        """(P, n) f at every point."""
    def f_jacobians_points(self, t: Array, X: Array, U: Array) -> tuple[Array, Array]:
        """(A (P, n, n), B (P, n, m))."""
    def running_points(self, t: Array, X: Array, U: Array) -> Array:
        """(P,) the running cost at every point."""
    def running_derivatives_points(self, t: Array, X: Array, U: Array) -> BatchCostDerivatives:
        """l and its derivatives at every point."""
    def path_points(self, t: Array, X: Array, U: Array) -> Array:
        """(P, n_path) g at every point."""
    def path_jacobians_points(self, t: Array, X: Array, U: Array) -> tuple[Array, Array]:
        """(gx (P, n_path, n), gu (P, n_path, m))."""
    def compiled_dynamics(self) -> CompiledDynamics | None:
        """The model's f as machine code (for a compiled rollout), or None: then solvers call :meth:`f`."""


@dataclass(frozen=True, slots=True, eq=False)
class SolverOutcome:
    """What a solver returns.

    X : (N + 1, n) states at the knots; U : (N, m) inputs (the DDP family: held over each interval; collocation:
    the values at the knots 0..N-1, and ``U_final`` the value at t_N); cost : the objective at (X, U);
    violation : the largest violation of dynamics (gaps or defects), bounds and constraints; iterations; status :
    the solver's status in words; converged; seconds : the solve alone. ``gains`` : (N, m, n) the DDP family's
    feedback gains of the last backward pass (None for collocation).
    """

    X: Array
    U: Array
    cost: float
    violation: float
    iterations: int
    status: str
    converged: bool
    seconds: float
    method: str
    U_final: Array | None = None
    gains: Array | None = None

    def __post_init__(self) -> None:
        X, U = np.asarray(self.X, dtype=float), np.asarray(self.U, dtype=float)
        if X.ndim != 2 or U.ndim != 2 or U.shape[0] != X.shape[0] - 1:
            raise ShapeError(f"SolverOutcome X {X.shape} and U {U.shape}: expected (N + 1, n) and (N, m)")
