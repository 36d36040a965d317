"""A small TranscribableProblem over a real robodyn model with quadratic state and input costs, for the DDP
family's tests: running l = 1/2 (x - r)' Q (x - r) + 1/2 (u - s)' R (u - s), terminal 1/2 (x - r)' Qf (x - r),
optional state bounds, path inequalities g = c' x - d <= 0 (one row per pair) and terminal equalities
e = x[index] - value."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robodyn.control.optimal.protocol import CostDerivatives, TerminalDerivatives


@dataclass
class QuadraticProblem:
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

    def initial_guess(self) -> tuple[np.ndarray, np.ndarray]:
        if self.guess is not None:
            return self.guess
        return np.tile(self.x0, (self.knots + 1, 1)), np.zeros((self.knots, len(self.model.inputs)))
