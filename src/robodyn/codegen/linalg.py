"""Small dense linear algebra for generated code (compiled by numba, called from the kernels' ``rhs``)."""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["cholesky_solve_lower", "manipulator_jacobians", "manipulator_solve"]


@numba.njit(cache=True, nogil=True, error_model="numpy", no_cpython_wrapper=True,  # type: ignore[call-overload]
            no_cfunc_wrapper=True)
def cholesky_solve_lower(M: np.ndarray, r: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """Overwrite ``r`` (n,) with M^-1 r using the lower triangle of ``M`` (n, n), which is overwritten by
    the Cholesky factor; ``r`` becomes NaN when M is not positive definite.

    Reference: G. H. Golub, C. F. Van Loan, *Matrix Computations*, 4th ed., algorithm 4.2.1.
    """
    n = r.shape[0]
    for j in range(n):
        s = M[j, j]
        for k in range(j):
            s -= M[j, k] * M[j, k]
        if not s > 0.0:
            r[:] = math.nan
            return
        d = math.sqrt(s)
        M[j, j] = d
        for i in range(j + 1, n):
            v = M[i, j]
            for k in range(j):
                v -= M[i, k] * M[j, k]
            M[i, j] = v / d
    for i in range(n):
        v = r[i]
        for k in range(i):
            v -= M[i, k] * r[k]
        r[i] = v / M[i, i]
    for i in range(n - 1, -1, -1):
        v = r[i]
        for k in range(i + 1, n):
            v -= M[k, i] * r[k]
        r[i] = v / M[i, i]


_HELPER = {"cache": True, "nogil": True, "error_model": "numpy", "no_cpython_wrapper": True, "no_cfunc_wrapper": True}


@numba.njit(**_HELPER)  # type: ignore[call-overload]
def _solved_rows(lower: np.ndarray, G: np.ndarray, sign: float, out: np.ndarray) -> None:  # pragma: no cover
    """A (2n, 2n) then B (2n, m), row-major, into ``out``: A = [[0, I], [sign M^-1 G_x]], B = [[0], [sign M^-1
    G_u]], with ``lower`` the Cholesky factor of M (n, n) and G (n, 2n + m); forward then back substitution
    for each column of G (NaN or inf when M is not positive definite)."""
    n, k = G.shape
    m = k - 2 * n
    column = np.empty(n)
    for c in range(k):
        for i in range(n):
            v = sign * G[i, c]
            for j in range(i):
                v -= lower[i, j] * column[j]
            column[i] = v / lower[i, i]
        for i in range(n - 1, -1, -1):
            v = column[i]
            for j in range(i + 1, n):
                v -= lower[j, i] * column[j]
            column[i] = v / lower[i, i]
        for i in range(n):
            if c < 2 * n:
                out[(n + i) * 2 * n + c] = column[i]
            else:
                out[4 * n * n + (n + i) * m + (c - 2 * n)] = column[i]
    for i in range(n):  # the kinematic rows: q' = q_dot
        for j in range(2 * n):
            out[i * 2 * n + j] = 1.0 if j == n + i else 0.0
        for j in range(m):
            out[4 * n * n + i * m + j] = 0.0


@numba.njit(**_HELPER)  # type: ignore[call-overload]
def manipulator_jacobians(parts: np.ndarray, n: int, m: int, out: np.ndarray) -> None:  # pragma: no cover
    """A (2n, 2n) then B (2n, m), row-major, into ``out`` from ``parts`` = [L (n, n) row-major, G (n, 2n + m)]:
    L the lower Cholesky factor of M, G = dr/d[x, u] of the residual r = ID - Q; A21 = -M^-1 G_x, ..."""
    _solved_rows(parts[: n * n].reshape((n, n)), parts[n * n:].reshape((n, 2 * n + m)), -1.0, out)


@numba.njit(**_HELPER)  # type: ignore[call-overload]
def manipulator_solve(M: np.ndarray, r: np.ndarray, G: np.ndarray, D: np.ndarray,
                      out: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """A (2n, 2n) then B (2n, m) into ``out`` for M(q) q'' = r: q'' = M^-1 r, then
    da/dz = M^-1 (dr/dz - [dM/dq_k q'']_k) for z = [x, u].

    M (n, n) is overwritten by its Cholesky factor, r (n,) by q'', G (n, 2n + m) = dr/dz by the
    corrected derivative; D (n, n, n) holds dM/dq_k at [k]. NaN when M is not positive definite.
    """
    n = r.shape[0]
    cholesky_solve_lower(M, r)
    for c in range(n):  # dr/dq_c - dM/dq_c q''
        for i in range(n):
            v = 0.0
            for j in range(n):
                v += D[c, i, j] * r[j]
            G[i, c] -= v
    _solved_rows(M, G, 1.0, out)
