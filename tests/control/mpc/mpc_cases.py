"""Shared cases of the MPC tests: a double integrator, the cart-pole linearized upright, and an independent check of a
QP solution (the KKT conditions, solved exactly on the active set by numpy)."""

from __future__ import annotations

import numpy as np

import robodyn
from robodyn.control.mpc.solvers import installed

SOLVERS = installed()


def double_integrator() -> robodyn.LinearSystem:
    """x'' = u as a continuous-time LinearSystem (position p, velocity v, force u)."""
    return robodyn.LinearSystem([[0.0, 1.0], [0.0, 0.0]], [[0.0], [1.0]], states=["p", "v"], inputs=["u"],
                                name="double_integrator")


def finite_horizon_gain(A: np.ndarray, B: np.ndarray, Q: np.ndarray, R: np.ndarray, Qf: np.ndarray,
                        N: int) -> np.ndarray:
    """K_0 of the finite-horizon discrete LQR by the Riccati recursion (Anderson & Moore, *Optimal Control: Linear
    Quadratic Methods*, 1990, sec. 2.4): S_N = Qf, K_k = (R + B'S B)^-1 B'S A, S_k = Q + A'S (A - B K_k), S: S_{k+1}.
    """
    S = Qf
    K = np.zeros((B.shape[1], A.shape[0]))
    for _ in range(N):
        K = np.linalg.solve(R + B.T @ S @ B, B.T @ S @ A)
        S = Q + A.T @ S @ (A - B @ K)
    return K


def exact_plan(A: np.ndarray, B: np.ndarray, c: np.ndarray, Q: np.ndarray, R: np.ndarray, Qf: np.ndarray, N: int,
               x0: np.ndarray, u_box: np.ndarray, x_box: np.ndarray, guess: np.ndarray) -> np.ndarray:
    """The inputs (N, m) of the MPC's QP solved exactly: a primal-dual active-set iteration (Nocedal & Wright,
    *Numerical Optimization*, 2nd ed., sec. 16.5) on the condensed problem, written here from the definition, the
    active set started from ``guess`` (N, m) and corrected one bound at a time (the most violated joins, else the
    multiplier of the wrong sign leaves) until the KKT conditions hold."""
    n, m = B.shape
    powers = [np.linalg.matrix_power(A, k) for k in range(N + 1)]
    Su = np.zeros((N * n, N * m))
    for k in range(1, N + 1):
        for j in range(k):
            Su[(k - 1) * n:k * n, j * m:(j + 1) * m] = powers[k - 1 - j] @ B
    free = np.concatenate([powers[k] @ x0 + sum((powers[i] @ c for i in range(k)), np.zeros(n))
                           for k in range(1, N + 1)])
    weights = np.kron(np.eye(N), Q)
    weights[-n:, -n:] = Qf
    H = Su.T @ weights @ Su + np.kron(np.eye(N), R)
    g = Su.T @ weights @ free
    G = np.vstack([np.eye(N * m), Su])  # every input, then every predicted state x_1 ... x_N
    lo = np.concatenate([np.tile(u_box[:, 0], N), np.tile(x_box[:, 0], N) - free])
    hi = np.concatenate([np.tile(u_box[:, 1], N), np.tile(x_box[:, 1], N) - free])
    Gz = G @ guess.ravel()
    near = 1e-6 * np.maximum(1.0, np.abs(Gz))
    upper = np.isfinite(hi) & (np.abs(Gz - hi) <= near)
    lower = np.isfinite(lo) & (np.abs(Gz - lo) <= near) & ~upper
    for _ in range(500):
        active = upper | lower
        C = G[active]
        kkt = np.block([[H, C.T], [C, np.zeros((C.shape[0], C.shape[0]))]])
        rhs = np.concatenate([-g, np.where(upper, hi, lo)[active]])
        solution = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
        z, multipliers = solution[:N * m], np.zeros(G.shape[0])
        multipliers[active] = solution[N * m:]
        wrong = (upper & (multipliers < -1e-10)) | (lower & (multipliers > 1e-10))
        Gz = G @ z
        slack = 1e-10 * np.maximum(1.0, np.abs(Gz))
        violation = np.maximum(Gz - hi, lo - Gz) * ~active
        if violation.max(initial=0.0) > slack.max():  # the most violated bound joins
            k = int(np.argmax(violation))
            upper[k], lower[k] = Gz[k] > hi[k], Gz[k] < lo[k]
        elif wrong.any():  # the multiplier of the wrong sign that is largest leaves
            k = int(np.argmax(np.abs(multipliers) * wrong))
            upper[k] = lower[k] = False
        else:
            return z.reshape(N, m)
    raise AssertionError("the active-set iteration did not settle")
