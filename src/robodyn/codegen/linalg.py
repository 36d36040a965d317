"""Small dense linear algebra for generated code (compiled by numba, called from the kernels' ``rhs``)."""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["cholesky_factor", "cholesky_solve_columns", "cholesky_solve_lower", "manipulator_jacobians",
           "manipulator_solve", "tree_solve"]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def cholesky_factor(M: np.ndarray) -> bool:  # pragma: no cover - runs compiled only
    """Overwrite the lower triangle of ``M`` (n, n) with its Cholesky factor L (L L' = M, read from the lower
    triangle; the upper triangle is left as it was); False, part-way, when M is not positive definite.

    Reference: G. H. Golub, C. F. Van Loan, *Matrix Computations*, 4th ed., algorithm 4.2.1.
    """
    n = M.shape[0]
    for j in range(n):
        s = M[j, j]
        for k in range(j):
            s -= M[j, k] * M[j, k]
        if not s > 0.0:
            return False
        d = math.sqrt(s)
        M[j, j] = d
        for i in range(j + 1, n):
            v = M[i, j]
            for k in range(j):
                v -= M[i, k] * M[j, k]
            M[i, j] = v / d
    return True


@numba.njit(cache=True, nogil=True, error_model="numpy")
def cholesky_solve_columns(L: np.ndarray, B: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """Overwrite ``B`` (n, c) with (L L')^-1 B, reading the lower triangle of ``L`` (n, n): a forward and a back
    substitution per column."""
    n, c = B.shape
    for col in range(c):
        for i in range(n):
            v = B[i, col]
            for k in range(i):
                v -= L[i, k] * B[k, col]
            B[i, col] = v / L[i, i]
        for i in range(n - 1, -1, -1):
            v = B[i, col]
            for k in range(i + 1, n):
                v -= L[k, i] * B[k, col]
            B[i, col] = v / L[i, i]


@numba.njit(cache=True, nogil=True, error_model="numpy", no_cpython_wrapper=True,  # type: ignore[call-overload]
            no_cfunc_wrapper=True)
def cholesky_solve_lower(M: np.ndarray, r: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """Overwrite ``r`` (n,) with M^-1 r using the lower triangle of ``M`` (n, n), which is overwritten by
    the Cholesky factor (:func:`cholesky_factor`); ``r`` becomes NaN when M is not positive definite."""
    if not cholesky_factor(M):
        r[:] = math.nan
        return
    cholesky_solve_columns(M, r.reshape((r.shape[0], 1)))


_HELPER = {"cache": True, "nogil": True, "error_model": "numpy", "no_cpython_wrapper": True, "no_cfunc_wrapper": True}


@numba.njit(cache=True, nogil=True, error_model="numpy")
def tree_solve(L: np.ndarray, G: np.ndarray, starts: np.ndarray, columns: np.ndarray, order: np.ndarray,
               sign: float, left: np.ndarray, right: np.ndarray, block: np.ndarray,
               target: np.ndarray) -> float:  # pragma: no cover - runs compiled only
    """``sign`` M^-1 G into ``left`` (n, s) and ``right`` (n, k - s), rows in model order, and ``block`` copied
    into ``target`` (a block the caller computed whole, or 0 x 0); returns the sum of every entry written (finite
    exactly when they all are, barring overflow). L (n, n) is the Cholesky factor of M taken in ``order`` (row i
    is coordinate ``order[i]``'s, robodyn.rigid.dynamics), G (n, k) has its rows in the same order and is
    overwritten. Only the entries of L listed in ``starts`` and ``columns`` (CSR, below the diagonal) are read:
    for a tree's leaves-first factor, the pairs of a joint and one of its descendants, so that each solve costs
    O(n depth) row operations of length k. NaN or inf when M is not positive definite (a zero or NaN pivot
    passes through).

    Reference: R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, section 6.5.
    """
    n, k = G.shape
    for i in range(n):  # L Z = G, row by row
        for e in range(starts[i], starts[i + 1]):
            j = columns[e]
            w = L[i, j]
            for c in range(k):
                G[i, c] -= w * G[j, c]
        d = 1.0 / L[i, i]
        for c in range(k):
            G[i, c] *= d
    for i in range(n - 1, -1, -1):  # L^T X = Z: row i done, pushed into the rows it depends on
        d = 1.0 / L[i, i]
        for c in range(k):
            G[i, c] *= d
        for e in range(starts[i], starts[i + 1]):
            j = columns[e]
            w = L[i, j]
            for c in range(k):
                G[j, c] -= w * G[i, c]
    s, total = left.shape[1], 0.0
    for i in range(n):
        row = order[i]
        for c in range(s):
            value = sign * G[i, c]
            left[row, c] = value
            total += value
        for c in range(k - s):
            value = sign * G[i, s + c]
            right[row, c] = value
            total += value
    for i in range(block.shape[0]):
        for c in range(block.shape[1]):
            target[i, c] = block[i, c]
            total += block[i, c]
    return total


@numba.njit(**_HELPER)  # type: ignore[call-overload]
def manipulator_jacobians(parts: np.ndarray, n: int, m: int, starts: np.ndarray, columns: np.ndarray,
                          order: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    """A (2n, 2n) then B (2n, m), row-major, into ``out`` from ``parts`` = [L (n, n) row-major, G (n, 2n + m)]
    as :func:`tree_solve` takes them: G = dr/d[x, u] of the residual r = ID - Q; A = [[0, I], [-M^-1 G_x]],
    B = [[0], [-M^-1 G_u]]."""
    A, B = _kinematic_rows(out, n, m)
    none = np.empty((0, 0))
    tree_solve(parts[: n * n].reshape((n, n)), parts[n * n:].reshape((n, 2 * n + m)), starts, columns, order, -1.0,
               A[n:], B[n:], none, none)


@numba.njit(**_HELPER)  # type: ignore[call-overload]
def _kinematic_rows(out: np.ndarray, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """A (2n, 2n) and B (2n, m) as views of ``out``, their first n rows written: q' = q_dot."""
    A = out[: 4 * n * n].reshape((2 * n, 2 * n))
    B = out[4 * n * n:].reshape((2 * n, m))
    for i in range(n):
        for j in range(2 * n):
            A[i, j] = 1.0 if j == n + i else 0.0
        for j in range(m):
            B[i, j] = 0.0
    return A, B


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
    starts = np.zeros(n + 1, dtype=np.int64)  # the dense pattern: every entry below the diagonal
    columns = np.empty(n * (n - 1) // 2, dtype=np.int64)
    for i in range(n):
        starts[i + 1] = starts[i] + i
        columns[starts[i]: starts[i + 1]] = np.arange(i)
    A, B = _kinematic_rows(out, n, G.shape[1] - 2 * n)
    none = np.empty((0, 0))
    tree_solve(M, G, starts, columns, np.arange(n), 1.0, A[n:], B[n:], none, none)
