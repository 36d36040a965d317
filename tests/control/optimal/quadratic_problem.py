"""A small TranscribableProblem over a real robodyn model with quadratic state and input costs, for the DDP
family's tests: running l = 1/2 (x - r)' Q (x - r) + 1/2 (u - s)' R (u - s), terminal 1/2 (x - r)' Qf (x - r),
optional state bounds, path inequalities g = c' x - d <= 0 (one row per pair) and terminal equalities
e = x[index] - value."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robodyn.control.optimal.batch.points import ModelPoints, PointwiseBatch
from robodyn.control.optimal.protocol import BatchCostDerivatives, CostDerivatives, TerminalDerivatives


@dataclass
class QuadraticProblem(PointwiseBatch):
    model: Any
    horizon: float
    knots: int
    x0: np.ndarray
    Q: np.ndarray
    R: np.ndarray
    Qf: np.ndarray
    x_ref: np.ndarray
    u_ref: np.ndarray
    mechanical: int = 0
    linear: bool = False
    guess: tuple[np.ndarray, np.ndarray] | None = None
    input_bounds: np.ndarray = field(default=None)  # type: ignore[assignment]
    state_bounds: np.ndarray = field(default=None)  # type: ignore[assignment]
    path_rows: np.ndarray = field(default=None)  # type: ignore[assignment]  # (n_path, n + 1): [c' | d]
    terminal_rows: tuple[np.ndarray, np.ndarray] | None = None  # (indices, values)

    def __post_init__(self) -> None:
        self._p = self.model.parameter_vector()
        self._model_points = ModelPoints(self.model, self._p)
        n, m = len(self.model.states), len(self.model.inputs)
        if self.input_bounds is None:
            self.input_bounds = np.tile([-np.inf, np.inf], (m, 1))
        if self.state_bounds is None:
            self.state_bounds = np.tile([-np.inf, np.inf], (n, 1))
        if self.path_rows is None:
            self.path_rows = np.zeros((0, n + 1))

    @property
    def states(self) -> tuple[str, ...]:
        return tuple(self.model.states)

    @property
    def inputs(self) -> tuple[str, ...]:
        return tuple(self.model.inputs)

    @property
    def n_path(self) -> int:
        return int(self.path_rows.shape[0])

    @property
    def n_terminal(self) -> int:
        return 0 if self.terminal_rows is None else len(self.terminal_rows[0])

    def times(self) -> np.ndarray:
        return np.linspace(0.0, self.horizon, self.knots + 1)

    def f(self, t: float, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        return np.asarray(self.model.f_raw(t, x, u, self._p), dtype=float)

    def f_jacobians(self, t: float, x: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n, m = len(x), len(u)  # the flat [A | B | C | D] of the model's exact linearization, row-major blocks
        flat = np.asarray(self.model.linearization_raw(t, x, u, self._p), dtype=float)
        return flat[:n * n].reshape(n, n), flat[n * n:n * n + n * m].reshape(n, m)

    def running(self, t: float, x: np.ndarray, u: np.ndarray) -> float:
        dx, du = x - self.x_ref, u - self.u_ref
        return float(0.5 * dx @ self.Q @ dx + 0.5 * du @ self.R @ du)

    def running_derivatives(self, t: float, x: np.ndarray, u: np.ndarray) -> CostDerivatives:
        dx, du = x - self.x_ref, u - self.u_ref
        return CostDerivatives(self.running(t, x, u), self.Q @ dx, self.R @ du, self.Q, self.R,
                               np.zeros((len(u), len(x))))

    def terminal(self, x: np.ndarray) -> float:
        dx = x - self.x_ref
        return float(0.5 * dx @ self.Qf @ dx)

    def terminal_derivatives(self, x: np.ndarray) -> TerminalDerivatives:
        return TerminalDerivatives(self.terminal(x), self.Qf @ (x - self.x_ref), self.Qf)

    def path(self, t: float, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self.path_rows[:, :-1] @ x - self.path_rows[:, -1]

    def path_jacobians(self, t: float, x: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.path_rows[:, :-1], np.zeros((self.n_path, len(u)))

    def terminal_constraint(self, x: np.ndarray) -> np.ndarray:
        assert self.terminal_rows is not None
        index, value = self.terminal_rows
        return x[index] - value

    def terminal_constraint_jacobian(self, x: np.ndarray) -> np.ndarray:
        assert self.terminal_rows is not None
        return np.eye(len(x))[self.terminal_rows[0]]

    def terminal_values(self) -> np.ndarray:
        """None fixed: the terminal rows stay equalities (in any order) to every solver."""
        return np.full(len(self.model.states), np.nan)

    # --- the batched twins: the model's compiled points (robodyn's ModelPoints) and vectorized quadratics ---
    def f_points(self, t, X, U):
        return self._model_points.f(t, X, U)

    def f_jacobians_points(self, t, X, U):
        return self._model_points.jacobians(t, X, U)

    def running_points(self, t, X, U):
        dX, dU = np.asarray(X) - self.x_ref, np.asarray(U) - self.u_ref
        return 0.5 * (np.einsum("pi,ij,pj->p", dX, self.Q, dX) + np.einsum("pi,ij,pj->p", dU, self.R, dU))

    def running_derivatives_points(self, t, X, U):
        dX, dU = np.asarray(X) - self.x_ref, np.asarray(U) - self.u_ref
        P, n, m = dX.shape[0], dX.shape[1], dU.shape[1]
        return BatchCostDerivatives(self.running_points(t, X, U), dX @ self.Q.T, dU @ self.R.T,
                                    np.broadcast_to(self.Q, (P, n, n)), np.broadcast_to(self.R, (P, m, m)),
                                    np.zeros((P, m, n)))

    def compiled_dynamics(self):
        return self._model_points.compiled()

    def path_points(self, t, X, U):
        return np.asarray(X) @ self.path_rows[:, :-1].T - self.path_rows[:, -1]

    def path_jacobians_points(self, t, X, U):
        P = len(t)
        return (np.broadcast_to(self.path_rows[:, :-1], (P, self.n_path, np.shape(X)[1])),
                np.zeros((P, self.n_path, np.shape(U)[1])))

    def initial_guess(self) -> tuple[np.ndarray, np.ndarray]:
        if self.guess is not None:
            return self.guess
        return np.tile(self.x0, (self.knots + 1, 1)), np.zeros((self.knots, len(self.model.inputs)))
