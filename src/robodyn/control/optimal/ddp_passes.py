"""The compiled parts of the DDP family: the backward pass over all knots, the box QP of one knot, the expected
improvement with gaps and the affine feedback of the forward rollout.

Every function works on arrays of all knots gathered beforehand (float64, C order) and writes into arrays the
caller owns, so one solve allocates its workspace once. Notation follows Crocoddyl (Mastalli et al. 2020,
"Crocoddyl: An Efficient and Versatile Framework for Multi-Contact Optimal Control", ICRA):

    Q_x = l_x + Fx' V'_x,  Q_u = l_u + Fu' V'_x,  Q_xx = l_xx + Fx' V'_xx Fx,  Q_uu = l_uu + Fu' V'_xx Fu + mu I,
    Q_ux = l_ux + Fu' V'_xx Fx,  k = Q_uu^-1 Q_u,  K = Q_uu^-1 Q_ux,
    V_x = Q_x - K' Q_u,  V_xx = Q_xx - Q_ux' K + mu I  (symmetrized),  and V_x += V_xx f with the gap f of FDDP.

The input step is du = -alpha k - K dx. With input boxes (Tassa, Mansard, Todorov 2014, "Control-limited
differential dynamic programming", ICRA) k is minus the solution of the box QP min 1/2 d' Q_uu d + Q_u' d over
lb <= d <= ub (projected Newton), and K is zero in the rows of the clamped inputs.
"""

from __future__ import annotations

import numba
import numpy as np

from robodyn.codegen.linalg import cholesky_factor, cholesky_solve_columns

__all__ = ["affine_inputs", "backward_pass", "box_qp", "expected_terms", "gap_correction"]

#: Projected Newton: the Armijo fraction of the box QP's line search and its steps 1, 1/2, ..., 2^-9.
_QP_ACCEPT = 0.1
_QP_STEPS = 10


@numba.njit(cache=True, nogil=True, error_model="numpy")
def box_qp(H: np.ndarray, q: np.ndarray, lb: np.ndarray, ub: np.ndarray, start: np.ndarray, max_iterations: int,
           tolerance: float, x: np.ndarray, free: np.ndarray, H_free_inv: np.ndarray
           ) -> bool:  # pragma: no cover - runs compiled only
    """Projected Newton for min 1/2 x' H x + q' x over lb <= x <= ub (Tassa et al. 2014, algorithm 3).

    H : (m, m) positive definite on the free inputs; q, lb, ub, start : (m,). Writes the minimizer x (m,),
    free (m,) (True where an input is not clamped at the last iterate) and H_free_inv (m, m): the inverse of H on
    the free rows and columns, zero elsewhere. False when H on the free inputs is not positive definite.
    """
    m = q.shape[0]
    for i in range(m):
        x[i] = min(max(start[i], lb[i]), ub[i])
    g, step, trial = np.empty(m), np.empty(m), np.empty(m)
    nf, index, L = 0, np.empty(0, dtype=np.int64), np.zeros((0, 0))
    for _ in range(max(max_iterations, 1)):
        g[:] = q + H @ x
        nf = 0
        for i in range(m):
            free[i] = not ((x[i] == lb[i] and g[i] > 0.0) or (x[i] == ub[i] and g[i] < 0.0))
            nf += free[i]
        index = np.empty(nf, dtype=np.int64)
        j = 0
        for i in range(m):
            if free[i]:
                index[j] = i
                j += 1
        Hf = np.empty((nf, nf))
        for a in range(nf):
            for b in range(nf):
                Hf[a, b] = H[index[a], index[b]]
        L = Hf  # factored in place
        if not cholesky_factor(L):
            return False
        gf = np.empty((nf, 1))
        for a in range(nf):
            gf[a, 0] = g[index[a]]
        newton = gf.copy()
        cholesky_solve_columns(L, newton)
        step[:] = 0.0
        for a in range(nf):
            step[index[a]] = -newton[a, 0]
        old = 0.5 * x @ (H @ x) + q @ x
        alpha = 1.0
        for _ in range(_QP_STEPS):
            for i in range(m):
                trial[i] = min(max(x[i] + alpha * step[i], lb[i]), ub[i])
            new = 0.5 * trial @ (H @ trial) + q @ trial
            decrease = 0.0
            for a in range(nf):
                decrease += gf[a, 0] * (x[index[a]] - trial[index[a]])
            if old - new > _QP_ACCEPT * decrease:
                x[:] = trial
                break
            alpha *= 0.5
        gradient = 0.0
        for a in range(nf):
            gradient = max(gradient, abs(gf[a, 0]))
        if gradient <= tolerance:
            break
    H_free_inv[:, :] = 0.0
    inverse = np.eye(nf)
    cholesky_solve_columns(L, inverse)
    for a in range(nf):
        for b in range(nf):
            H_free_inv[index[a], index[b]] = inverse[a, b]
    return True


@numba.njit(cache=True, nogil=True, error_model="numpy")
def backward_pass(Fx: np.ndarray, Fu: np.ndarray, lx: np.ndarray, lu: np.ndarray, lxx: np.ndarray,
                  luu: np.ndarray, lux: np.ndarray, gaps: np.ndarray, feasible: bool, mu: float,
                  box: bool, du_lb: np.ndarray, du_ub: np.ndarray, qp_tolerance: float,
                  K: np.ndarray, k: np.ndarray, Vx: np.ndarray, Vxx: np.ndarray, Qu: np.ndarray,
                  Quuk: np.ndarray) -> int:  # pragma: no cover - runs compiled only
    """The Riccati sweep of DDP/FDDP from the terminal value V_N (Vx[N], Vxx[N] set by the caller) down to knot 0.

    Fx : (N, n, n); Fu : (N, n, m); lx : (N, n); lu : (N, m); lxx : (N, n, n); luu : (N, m, m); lux : (N, m, n)
    (costs already scaled by dt); gaps : (N + 1, n) (gaps[0] = x0 - X[0], gaps[k+1] = F(X[k], U[k]) - X[k+1]),
    used when not ``feasible``; mu >= 0 the regularization of Q_uu and V_xx; with ``box`` the box QP on
    du_lb <= du <= du_ub (N, m) gives k (its previous value the QP's start). Writes K (N, m, n), k (N, m),
    Vx (N + 1, n), Vxx (N + 1, n, n), Qu (N, m) (zeroed on clamped inputs) and Quuk (N, m) = Q_uu k.
    Returns -1 on success, else the knot where Q_uu is not positive definite or a value is not finite.
    """
    N, n, m = Fu.shape[0], Fu.shape[1], Fu.shape[2]
    for i in range(n):
        Vxx[N, i, i] += mu
    if not feasible:
        Vx[N] += Vxx[N] @ gaps[N]
    L = np.zeros((m, m))
    inverse = np.zeros((m, m))
    free = np.zeros(m, dtype=np.bool_)
    du = np.zeros(m)
    for t in range(N - 1, -1, -1):
        FxT_V = Fx[t].T @ Vxx[t + 1]
        FuT_V = Fu[t].T @ Vxx[t + 1]
        Qx = lx[t] + Fx[t].T @ Vx[t + 1]
        Qu[t] = lu[t] + Fu[t].T @ Vx[t + 1]
        Qxx = lxx[t] + FxT_V @ Fx[t]
        Quu = luu[t] + FuT_V @ Fu[t]
        Qux = lux[t] + FuT_V @ Fx[t]
        for i in range(m):
            Quu[i, i] += mu
        if box and feasible:
            if not box_qp(Quu, Qu[t], du_lb[t], du_ub[t], -k[t], 100, qp_tolerance, du, free, inverse):
                return t
            K[t] = inverse @ Qux
            k[t] = -du
            for i in range(m):
                if not free[i]:
                    Qu[t, i] = 0.0
        else:
            L[:, :] = Quu
            if not cholesky_factor(L):
                return t
            K[t] = Qux
            cholesky_solve_columns(L, K[t])
            column = Qu[t].copy().reshape(m, 1)
            cholesky_solve_columns(L, column)
            k[t] = column[:, 0]
        Quuk[t] = Quu @ k[t]
        Vx[t] = Qx - K[t].T @ Qu[t]
        V = Qxx - Qux.T @ K[t]
        Vxx[t] = 0.5 * (V + V.T)
        for i in range(n):
            Vxx[t, i, i] += mu
        if not feasible:
            Vx[t] += Vxx[t] @ gaps[t]
        if not (np.all(np.isfinite(Vx[t])) and np.all(np.isfinite(Vxx[t]))):
            return t
    return -1


@numba.njit(cache=True, nogil=True, error_model="numpy")
def expected_terms(Qu: np.ndarray, k: np.ndarray, Quuk: np.ndarray, Vx: np.ndarray, Vxx: np.ndarray,
                   gaps: np.ndarray, feasible: bool) -> tuple[float, float]:  # pragma: no cover - compiled only
    """(dg, dq): the expected improvement of a full step is dg + dq / 2 (Crocoddyl's SolverFDDP
    updateExpectedImprovement): dg = sum Q_u' k - V_x' f, dq = -sum k' Q_uu k + f' V_xx f (gap terms when not
    feasible). Shapes as in :func:`backward_pass`."""
    dg, dq = 0.0, 0.0
    N = Qu.shape[0]
    for t in range(N):
        dg += Qu[t] @ k[t]
        dq -= k[t] @ Quuk[t]
    if not feasible:
        for t in range(N + 1):
            dg -= Vx[t] @ gaps[t]
            dq += gaps[t] @ (Vxx[t] @ gaps[t])
    return dg, dq


@numba.njit(cache=True, nogil=True, error_model="numpy")
def gap_correction(Vxx: np.ndarray, gaps: np.ndarray, X_try: np.ndarray, X: np.ndarray
                   ) -> float:  # pragma: no cover - runs compiled only
    """dv = -sum_k f_k' V_xx,k (X_try_k - X_k): the change of the expected improvement of a step that does not
    close the gaps (Crocoddyl's SolverFDDP expectedImprovement). Shapes (N + 1, n), (N + 1, n, n)."""
    dv = 0.0
    for t in range(gaps.shape[0]):
        dv -= gaps[t] @ (Vxx[t] @ (X_try[t] - X[t]))
    return dv


@numba.njit(cache=True, nogil=True, error_model="numpy")
def affine_inputs(U: np.ndarray, k: np.ndarray, K: np.ndarray, X: np.ndarray, x: np.ndarray, t: int,
                  alpha: float, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:  # pragma: no cover
    """u = clip(U[t] - alpha k[t] - K[t] (x - X[t]), lower, upper): the input of the rollout at knot t."""
    u = U[t] - alpha * k[t] - K[t] @ (x - X[t])
    return np.minimum(np.maximum(u, lower), upper)
