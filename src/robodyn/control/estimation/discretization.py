"""What a sampled estimator needs of its continuous-time plant over one period T: the exact transition and
process-noise covariance of a linearization (Van Loan's method), and the mean prediction by classic Runge-Kutta.

- :func:`noise_discretization`: Phi = e^{A T} and Qd = integral_0^T e^{A s} Qc e^{A' s} ds from one matrix
  exponential (C. F. Van Loan, "Computing integrals involving the matrix exponential", IEEE Trans. Automatic Control
  23(3), 1978; the form of Brown & Hwang, *Introduction to Random Signals and Applied Kalman Filtering*, 4th ed.,
  2012, section 3.9): expm(T [[-A, Qc], [0, A']]) = [[., F12], [0, F22]], Phi = F22', Qd = Phi F12.
- :func:`hold_discretization`: Phi and Gamma = integral_0^T e^{A s} ds B of the zero-order hold (Van Loan 1978:
  the top block row of expm(T [[A, B], [0, 0]])).
- :func:`rk4_points`: x(t + T) of dx/dt = f(t, x, u) with u held, for many points at once, by ``substeps`` steps of
  the classic fourth-order Runge-Kutta rule; every stage evaluates f at all points in one call of
  :class:`~robodyn.control.optimal.batch.points.ModelPoints` (one compiled loop through the model's machine code
  when it has one). Its local error is O((T / substeps)^5): for the pendulum at T = 0.01 s, 1e-10 .. 4e-10 rad
  (tests/control/estimation/test_estimation_discretization.py measures it against scipy's DOP853 at rtol 1e-13),
  far below any measurement noise; ``substeps`` divides it by substeps^4.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from robodyn.control.optimal.batch.points import ModelPoints

__all__ = ["hold_discretization", "noise_discretization", "rk4_points"]

Array = NDArray[np.float64]


def noise_discretization(A: Array, Qc: Array, T: float) -> tuple[Array, Array]:
    """(Phi (n, n), Qd (n, n)) of dx = A x dt + dw, E[dw dw'] = Qc dt, over T (Van Loan 1978); Qd symmetrized."""
    from scipy.linalg import expm

    n = A.shape[0]
    M = np.zeros((2 * n, 2 * n))
    M[:n, :n], M[:n, n:], M[n:, n:] = -A, Qc, A.T
    E = expm(M * T)
    Phi = np.ascontiguousarray(E[n:, n:].T)
    Qd = Phi @ E[:n, n:]
    return Phi, 0.5 * (Qd + Qd.T)


def hold_discretization(A: Array, B: Array, T: float) -> tuple[Array, Array]:
    """(Phi (n, n), Gamma (n, m)) of dx/dt = A x + B u with u held over T (Van Loan 1978)."""
    from scipy.linalg import expm

    n, m = B.shape
    M = np.zeros((n + m, n + m))
    M[:n, :n], M[:n, n:] = A, B
    E = expm(M * T)
    return E[:n, :n].copy(), E[:n, n:].copy()


def rk4_points(points: ModelPoints, t: float, X: Array, u: Array, T: float, substeps: int = 1) -> Array:
    """X (P, n) advanced from t over T with the input u (m,) held: ``substeps`` classic RK4 steps at every row."""
    X = np.array(X, dtype=float, ndmin=2)
    P = X.shape[0]
    U = np.broadcast_to(np.asarray(u, dtype=float), (P, u.size))
    h = T / substeps
    for step in range(substeps):
        t0 = t + step * h
        times = np.full(P, t0)
        k1 = points.f(times, X, U)
        k2 = points.f(times + 0.5 * h, X + (0.5 * h) * k1, U)
        k3 = points.f(times + 0.5 * h, X + (0.5 * h) * k2, U)
        k4 = points.f(times + h, X + h * k3, U)
        X = X + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return X
