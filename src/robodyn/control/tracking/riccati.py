"""The finite-horizon Riccati equations of time-varying LQR, continuous and discrete.

Continuous time (Anderson & Moore, *Optimal Control: Linear Quadratic Methods*, 1990, sec. 2.3; Tedrake,
*Underactuated Robotics*, ch. "Linear Quadratic Regulators", finite-horizon formulations): the cost
x(T)' Qf x(T) + integral x' Q x + u' R u of dx' = A(t) x + B(t) u is minimized by u = -K(t) x,
K = R^-1 B' S, where

    -S' = A' S + S A - S B R^-1 B' S + Q,    S(T) = Qf,

integrated backward one interval [t_k, t_{k+1}] at a time (A(t), B(t) may have a kink or jump at a knot: a
held input) by scipy's DOP853 (Hairer, Nørsett & Wanner, *Solving ODEs I*, II.10) at the tolerance given: the path
of models without compiled functions; :mod:`~robodyn.control.tracking.riccati_ode` integrates the same equation
compiled over the whole horizon.

Discrete time (Anderson & Moore, sec. 2.4; Crocoddyl's sum of dt l): on x_{k+1} = Phi_k x_k + Gamma_k u_k with the
stage cost h_k (x_k' Q x_k + u_k' R u_k) and the terminal x_N' Qf x_N,

    K_k = (h_k R + Gamma_k' S_{k+1} Gamma_k)^-1 Gamma_k' S_{k+1} Phi_k,
    S_k = h_k Q + Phi_k' S_{k+1} (Phi_k - Gamma_k K_k),    S_N = Qf.
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import NumericalError
from robodyn.codegen.linalg import cholesky_factor, cholesky_solve_columns

__all__ = ["Jacobians", "continuous_riccati", "discrete_riccati"]

Array = NDArray[np.float64]

#: A(t), B(t) on interval k at time t: ``jacobians(k, t) -> (A (n, n), B (n, m))``.
Jacobians = Callable[[int, float], tuple[Array, Array]]


def _symmetric(S: Array) -> Array:
    return 0.5 * (S + S.T)


def continuous_riccati(t: Array, jacobians: Jacobians, Q: Array, R: Array, Qf: Array, rtol: float) -> Array:
    """S (T, n, n) at the knots ``t`` (T,) of the Riccati differential equation (module docstring).

    ``rtol`` is DOP853's relative tolerance; its absolute tolerance is ``rtol`` times the size of the weights
    (max(1, |Qf|, |Q| (t_T - t_0))), the scale of S.
    """
    from scipy.integrate import solve_ivp

    n = Q.shape[0]
    R_inv = np.linalg.inv(R)
    scale = max(1.0, float(np.max(np.abs(Qf))), float(np.max(np.abs(Q))) * float(t[-1] - t[0]))
    S = np.empty((t.size, n, n))
    S[-1] = _symmetric(Qf)
    for k in range(t.size - 2, -1, -1):
        def rhs(time: float, y: Array, k: int = k) -> Array:
            A, B = jacobians(k, time)
            Sk = y.reshape(n, n)
            SA = Sk @ A
            SB = Sk @ B
            return -(SA + SA.T - SB @ R_inv @ SB.T + Q).reshape(-1)

        solution = solve_ivp(rhs, (t[k + 1], t[k]), S[k + 1].reshape(-1), method="DOP853", rtol=rtol,
                             atol=rtol * scale)
        if not solution.success or not np.all(np.isfinite(solution.y[:, -1])):
            raise NumericalError(f"tvlqr: the Riccati equation could not be integrated back over "
                                 f"[{t[k]:g}, {t[k + 1]:g}] ({solution.message}): check that the trajectory is one of "
                                 "the model's and the weights are well scaled")
        S[k] = _symmetric(solution.y[:, -1].reshape(n, n))
    return S


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _recursion(Phi: np.ndarray, Gamma: np.ndarray, h: np.ndarray, Q: np.ndarray, R: np.ndarray, K: np.ndarray,
               S: np.ndarray) -> int:  # pragma: no cover - runs compiled only
    """The recursion of the module docstring from S[N] down, into K and S; -1, or the knot where h R + Gamma' S
    Gamma is not positive definite."""
    N = Gamma.shape[0]
    for k in range(N - 1, -1, -1):
        P, G_k = Phi[k], Gamma[k]
        SPhi = S[k + 1] @ P
        SGamma = S[k + 1] @ G_k
        G = h[k] * R + G_k.T @ SGamma
        gain = SGamma.T @ P
        if not cholesky_factor(G):
            return k
        cholesky_solve_columns(G, gain)
        K[k] = gain
        Sk = h[k] * Q + P.T @ (SPhi - SGamma @ gain)
        S[k] = 0.5 * (Sk + Sk.T)
    return -1


def discrete_riccati(Phi: Array, Gamma: Array, h: Array, Q: Array, R: Array, Qf: Array) -> tuple[Array, Array]:
    """(K (N, m, n), S (N + 1, n, n)) of the Riccati recursion (module docstring) on ``Phi`` (N, n, n),
    ``Gamma`` (N, n, m) and the interval lengths ``h`` (N,), compiled over all knots."""
    N, n, m = Gamma.shape
    K = np.empty((N, m, n))
    S = np.empty((N + 1, n, n))
    S[N] = _symmetric(Qf)
    c = np.ascontiguousarray
    failed = _recursion(c(Phi, dtype=float), c(Gamma, dtype=float), c(h, dtype=float), c(Q, dtype=float),
                        c(R, dtype=float), K, S)
    if failed >= 0:
        raise NumericalError(f"tvlqr: the Riccati recursion met a singular h R + Gamma' S Gamma at knot {failed}: "
                             "give R a larger weight")
    if not (np.all(np.isfinite(K)) and np.all(np.isfinite(S))):
        raise NumericalError("tvlqr: the Riccati recursion overflowed: the trajectory diverges too fast for its "
                             "knots; use more knots or smaller weights")
    return K, S
