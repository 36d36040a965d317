"""State bounds, path inequalities and terminal equalities in the DDP family: an augmented Lagrangian.

DDP handles only dynamics and input boxes natively; the other constraints of a problem enter its cost as
Powell-Hestenes-Rockafellar augmented-Lagrangian terms (Nocedal & Wright, *Numerical Optimization*, 2nd ed.,
section 17.4, eq. 17.65 for inequalities). At every knot k < N the inequalities are
h = [g(t, x, u); x_i - ub_i; lb_i - x_i] <= 0 (bounded states only), at the final knot the bounds again and the
equalities e(x_N) = 0. With weight w and multipliers lambda >= 0 (nu for equalities) the terms, added to the
knots' costs unscaled by dt, are

    P_h = 1/(2 w) sum (max(0, lambda + w h)^2 - lambda^2),   P_e = nu' e + w/2 |e|^2,

with Gauss-Newton derivatives (gradient max(0, lambda + w h)' dh, Hessian w dh_A' dh_A on the active rows A).
After the inner DDP converges, lambda <- max(0, lambda + w h) and nu <- nu + w e, and w grows by
``weight_growth`` when the violation did not fall below a quarter of its last value (section 17.4's
framework 17.3). The solve converges when the largest violation is below its tolerance.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from robodyn.control.optimal.protocol import TranscribableProblem

__all__ = ["AugmentedLagrangian", "has_constraints"]

Array = NDArray[np.float64]


def has_constraints(problem: TranscribableProblem) -> bool:
    """True when the problem has state bounds, path inequalities or terminal equalities."""
    bounds = np.asarray(problem.state_bounds, dtype=float)
    return bool(problem.n_path > 0 or problem.n_terminal > 0 or np.any(np.isfinite(bounds)))


class AugmentedLagrangian:
    """The augmented-Lagrangian terms of one problem's constraints and their multipliers (see the module)."""

    def __init__(self, problem: TranscribableProblem, weight: float, weight_growth: float) -> None:
        self._problem = problem
        bounds = np.asarray(problem.state_bounds, dtype=float)
        self._upper = np.flatnonzero(np.isfinite(bounds[:, 1]))
        self._lower = np.flatnonzero(np.isfinite(bounds[:, 0]))
        self._bounds = bounds
        self.weight, self._growth = weight, weight_growth
        N, self._n = problem.knots, len(problem.states)
        rows = problem.n_path + self._upper.size + self._lower.size
        self._lam = np.zeros((N + 1, rows))  # the final knot's rows past the bounds are unused
        self._nu = np.zeros(problem.n_terminal)
        self._last = np.inf

    def _rows(self, t: float, x: Array, u: Array | None) -> tuple[Array, Array, Array]:
        """(h, hx, hu) of a knot: u None at the final knot (no path rows there)."""
        n, m = self._n, len(self._problem.inputs)
        parts, jx, ju = [], [], []
        if u is not None and self._problem.n_path > 0:
            gx, gu = self._problem.path_jacobians(t, x, u)
            parts.append(np.asarray(self._problem.path(t, x, u), dtype=float))
            jx.append(np.asarray(gx, dtype=float))
            ju.append(np.asarray(gu, dtype=float))
        eye = np.eye(n)
        parts += [x[self._upper] - self._bounds[self._upper, 1], self._bounds[self._lower, 0] - x[self._lower]]
        jx += [eye[self._upper], -eye[self._lower]]
        ju += [np.zeros((self._upper.size + self._lower.size, m))]
        return np.concatenate(parts), np.vstack(jx), np.vstack(ju)

    def _multipliers(self, k: int, size: int) -> Array:
        lam: Array = self._lam[k, -size:] if size else self._lam[k, :0]
        return lam

    def knot(self, k: int, t: float, x: Array, u: Array) -> tuple[float, Array, Array, Array, Array, Array]:
        """(P, px (n,), pu (m,), pxx (n, n), puu (m, m), pux (m, n)) at a knot k < N."""
        h, hx, hu = self._rows(t, x, u)
        w, lam = self.weight, self._lam[k]
        shifted = np.maximum(0.0, lam + w * h)
        active = shifted > 0.0
        value = float(np.sum(shifted ** 2 - lam ** 2)) / (2.0 * w)
        ax, au = hx[active], hu[active]
        return (value, hx.T @ shifted, hu.T @ shifted, w * ax.T @ ax, w * au.T @ au, w * au.T @ ax)

    def knot_value(self, k: int, t: float, x: Array, u: Array) -> float:
        """P at a knot k < N."""
        h, _, _ = self._rows(t, x, u)
        lam = self._lam[k]
        return float(np.sum(np.maximum(0.0, lam + self.weight * h) ** 2 - lam ** 2)) / (2.0 * self.weight)

    def terminal(self, x: Array) -> tuple[float, Array, Array]:
        """(P, px (n,), pxx (n, n)) at the final knot."""
        h, hx, _ = self._rows(0.0, x, None)
        w, lam = self.weight, self._multipliers(self._problem.knots, h.size)
        shifted = np.maximum(0.0, lam + w * h)
        ax = hx[shifted > 0.0]
        value = float(np.sum(shifted ** 2 - lam ** 2)) / (2.0 * w)
        gradient, hessian = hx.T @ shifted, w * ax.T @ ax
        if self._problem.n_terminal:
            e = np.asarray(self._problem.terminal_constraint(x), dtype=float)
            ex = np.asarray(self._problem.terminal_constraint_jacobian(x), dtype=float)
            value += float(self._nu @ e + 0.5 * w * e @ e)
            gradient = gradient + ex.T @ (self._nu + w * e)
            hessian = hessian + w * ex.T @ ex
        return value, gradient, hessian

    def violation(self, times: Array, X: Array, U: Array) -> float:
        """The largest violation of every constraint at (X, U) (0 when all hold)."""
        worst = 0.0
        for k in range(U.shape[0]):
            h, _, _ = self._rows(float(times[k]), X[k], U[k])
            worst = max(worst, float(np.max(h, initial=0.0)))
        h, _, _ = self._rows(0.0, X[-1], None)
        worst = max(worst, float(np.max(h, initial=0.0)))
        if self._problem.n_terminal:
            worst = max(worst, float(np.max(np.abs(self._problem.terminal_constraint(X[-1])))))
        return worst

    def update(self, times: Array, X: Array, U: Array) -> None:
        """The first-order multiplier update, and a larger weight when the violation fell too slowly."""
        w = self.weight
        for k in range(U.shape[0]):
            h, _, _ = self._rows(float(times[k]), X[k], U[k])
            self._lam[k] = np.maximum(0.0, self._lam[k] + w * h)
        h, _, _ = self._rows(0.0, X[-1], None)
        if h.size:
            self._lam[-1, -h.size:] = np.maximum(0.0, self._lam[-1, -h.size:] + w * h)
        if self._problem.n_terminal:
            self._nu = self._nu + w * np.asarray(self._problem.terminal_constraint(X[-1]), dtype=float)
        current = self.violation(times, X, U)
        if current > 0.25 * self._last:
            self.weight = w * self._growth
        self._last = current
