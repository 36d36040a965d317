"""Optimal control problems the collocation tests solve: a small :class:`TranscribableProblem` over a real robodyn
model with quadratic costs about references, box bounds, optional path inequalities and terminal equalities.

The problem class lives with the tests (robodyn's own OptimalControlProblem is written elsewhere): it asks the
model only through its contract (``f_raw``, ``linearization_raw``, ``parameter_vector``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

import robodyn
from robodyn.control.optimal.batch.points import ModelPoints, PointwiseBatch
from robodyn.control.optimal.protocol import BatchCostDerivatives, CostDerivatives, TerminalDerivatives
from robodyn.model.protocol import ModelContract

Array = np.ndarray
PathFunction = Callable[[float, Array, Array], tuple[Array, Array, Array]]  # (g, gx, gu)


@dataclass(eq=False)
class QuadraticProblem(PointwiseBatch):
    """min  int_0^T 1/2 (x - xr)' Q (x - xr) + 1/2 (u - ur)' R (u - ur) dt + 1/2 (x_N - xf)' Qf (x_N - xf)
    under x' = f(t, x, u), bounds, g(t, x, u) <= 0 at the knots and x_N[i] = target[i] for i in ``terminal``."""

    model: ModelContract
    horizon: float
    knots: int
    x0: Array
    Q: Array
    R: Array
    Qf: Array
    x_ref: Array | None = None
    u_ref: Array | None = None
    xf_ref: Array | None = None
    input_bounds: Array | None = None
    state_bounds: Array | None = None
    path_function: PathFunction | None = None
    n_path: int = 0
    terminal_indices: Sequence[int] = ()
    terminal_target: Array | None = None
    guess: tuple[Array, Array] | None = None
    mechanical: int = 0
    linear: bool = False
    p: Array = field(init=False)

    def __post_init__(self) -> None:
        n, m = self.model.n_states, self.model.n_inputs
        self.p = self.model.parameter_vector(None)
        self._model_points = ModelPoints(self.model, self.p)
        self.x0 = np.asarray(self.x0, dtype=float)
        self.x_ref = np.zeros(n) if self.x_ref is None else np.asarray(self.x_ref, dtype=float)
        self.u_ref = np.zeros(m) if self.u_ref is None else np.asarray(self.u_ref, dtype=float)
        self.xf_ref = self.x_ref if self.xf_ref is None else np.asarray(self.xf_ref, dtype=float)
        unbounded = np.array([-np.inf, np.inf])
        self.input_bounds = np.tile(unbounded, (m, 1)) if self.input_bounds is None else np.asarray(self.input_bounds)
        self.state_bounds = np.tile(unbounded, (n, 1)) if self.state_bounds is None else np.asarray(self.state_bounds)
        self.terminal_target = np.zeros(n) if self.terminal_target is None else np.asarray(self.terminal_target)
        self._terminal_jacobian = np.eye(n)[list(self.terminal_indices)]
        self._hessian_views: dict[int, tuple[Array, Array, Array]] = {}

    @property
    def states(self) -> tuple[str, ...]:
        return self.model.states

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.model.inputs

    @property
    def n_terminal(self) -> int:
        return len(self.terminal_indices)

    def times(self) -> Array:
        return np.linspace(0.0, self.horizon, self.knots + 1)

    def f(self, t: float, x: Array, u: Array) -> Array:
        return self.model.f_raw(t, x, u, self.p)

    def f_jacobians(self, t: float, x: Array, u: Array) -> tuple[Array, Array]:
        n, m = len(x), len(u)  # the flat [A | B | C | D] of the model's compiled linearization
        flat = self.model.linearization_raw(t, x, u, self.p)
        return flat[: n * n].reshape(n, n), flat[n * n : n * (n + m)].reshape(n, m)

    def running(self, t: float, x: Array, u: Array) -> float:
        dx, du = x - self.x_ref, u - self.u_ref
        return 0.5 * float(dx @ self.Q @ dx + du @ self.R @ du)

    def running_derivatives(self, t: float, x: Array, u: Array) -> CostDerivatives:
        dx, du = x - self.x_ref, u - self.u_ref
        return CostDerivatives(self.running(t, x, u), self.Q @ dx, self.R @ du, self.Q, self.R,
                               np.zeros((len(u), len(x))))

    def terminal(self, x: Array) -> float:
        dx = x - self.xf_ref
        return 0.5 * float(dx @ self.Qf @ dx)

    def terminal_derivatives(self, x: Array) -> TerminalDerivatives:
        return TerminalDerivatives(self.terminal(x), self.Qf @ (x - self.xf_ref), self.Qf)

    def path(self, t: float, x: Array, u: Array) -> Array:
        return np.zeros(0) if self.path_function is None else self.path_function(t, x, u)[0]

    def path_jacobians(self, t: float, x: Array, u: Array) -> tuple[Array, Array]:
        if self.path_function is None:
            return np.zeros((0, len(x))), np.zeros((0, len(u)))
        return self.path_function(t, x, u)[1:]

    def terminal_constraint(self, x: Array) -> Array:
        index = list(self.terminal_indices)
        return x[index] - self.terminal_target[index]

    # --- the batched twins: the model's compiled points (robodyn's ModelPoints) and vectorized quadratics ---
    def f_points(self, t, X, U):
        return self._model_points.f(t, X, U)

    def f_jacobians_points(self, t, X, U):
        return self._model_points.jacobians(t, X, U)

    def running_points(self, t, X, U):
        dX, dU = np.asarray(X) - self.x_ref, np.asarray(U) - self.u_ref
        return 0.5 * (((dX @ self.Q.T) * dX).sum(1) + ((dU @ self.R.T) * dU).sum(1))

    def running_derivatives_points(self, t, X, U):
        dX, dU = np.asarray(X) - self.x_ref, np.asarray(U) - self.u_ref
        lx, lu = dX @ self.Q.T, dU @ self.R.T  # rows Q dx, R du; then l = 1/2 (dx' Q dx + du' R du)
        cost = 0.5 * ((lx * dX).sum(1) + (lu * dU).sum(1))
        return BatchCostDerivatives(cost, lx, lu, *self._hessians(len(dX)))

    def _hessians(self, P: int) -> tuple[Array, Array, Array]:
        """(lxx, luu, lux) at P points: read-only views of Q and R, made once per P (the transcriptions ask for
        the same P at every iteration)."""
        if P not in self._hessian_views:
            n, m = self.Q.shape[0], self.R.shape[0]
            self._hessian_views[P] = (np.broadcast_to(self.Q, (P, n, n)), np.broadcast_to(self.R, (P, m, m)),
                                      np.broadcast_to(np.zeros((m, n)), (P, m, n)))
        return self._hessian_views[P]

    def terminal_constraint_jacobian(self, x: Array) -> Array:
        return self._terminal_jacobian

    def compiled_dynamics(self):
        return self._model_points.compiled()

    def initial_guess(self) -> tuple[Array, Array]:
        if self.guess is not None:
            return self.guess
        return np.tile(self.x0, (self.knots + 1, 1)), np.zeros((self.knots, len(self.inputs)))


def double_integrator(knots: int) -> QuadraticProblem:
    """The LQ case: x'' = u as a robodyn.LinearSystem, x0 = (1, 0), T = 2, Q = diag(1, 0.1), R = 0.5,
    Qf = diag(2, 1), no bounds or constraints."""
    system = robodyn.LinearSystem(np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.0], [1.0]]),
                                  states=("p", "v"), inputs=("a",))
    return QuadraticProblem(system, 2.0, knots, np.array([1.0, 0.0]), np.diag([1.0, 0.1]), np.array([[0.5]]),
                            np.diag([2.0, 1.0]), linear=True)


def cart_pole(knots: int = 40, *, force: float = 20.0, rail: float = 2.0, horizon: float = 2.0) -> QuadraticProblem:
    """The swing-up of the catalog cart-pole (theta = 0 upright): from hanging at rest (x, theta) = (0, pi) to
    upright at rest at x = 0 in ``horizon`` s, |F| <= force, |x| <= rail, minimizing int 1/2 (0.1 F^2 + x^2) dt;
    the terminal state fixed by four terminal equalities."""
    model = robodyn.load("cart_pole")
    return QuadraticProblem(model, horizon, knots, np.array([0.0, np.pi, 0.0, 0.0]), np.diag([1.0, 0, 0, 0]),
                            np.array([[0.1]]), np.zeros((4, 4)), input_bounds=np.array([[-force, force]]),
                            state_bounds=np.array([[-rail, rail], [-np.inf, np.inf], [-np.inf, np.inf],
                                                   [-np.inf, np.inf]]),
                            terminal_indices=(0, 1, 2, 3), mechanical=2)
