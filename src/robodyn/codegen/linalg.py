"""Small dense linear algebra for generated code (compiled by numba, called from the kernels' ``rhs``)."""

from __future__ import annotations

import math
from typing import Any, Final

import numba
import numpy as np

from robodyn.codegen.cache import private_cfunc

__all__ = ["PLAN_HEADER", "cholesky_solve_lower", "manipulator_jacobians", "manipulator_solve", "tree_solve",
           "tree_solve_plan", "tree_solve_raw"]


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


#: The header of a :func:`tree_solve_raw` plan (int64), by slot: n, k, s (left's columns), the size of ``parts``,
#: where left and right start in ``out`` (their rows are s and k - s long, one after the other), the size of
#: ``out``, where the block starts in ``parts``, its size nb (nb x nb), the row length of the target's block in
#: ``out`` (it starts at ``out``'s start) and the factor pattern's entries; then the pattern: starts (n + 1),
#: columns, order (n).
PLAN_HEADER: Final = 11


def tree_solve_plan(sizes: tuple[int, int, int], parts_size: int, out: tuple[int, int, int],
                    block: tuple[int, int, int], pattern: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """The int64 plan of :func:`tree_solve_raw` (see :data:`PLAN_HEADER`): ``sizes`` (n, k, s), ``out`` (where left
    and right start, the size of ``out``), ``block`` (its start in ``parts``, nb, the target's row length) and
    ``pattern`` (starts, columns, order) as :func:`tree_solve` takes them."""
    starts, columns, order = pattern
    header = [*sizes, parts_size, out[0], out[1], out[2], *block, columns.size]
    return np.concatenate([np.array(header, dtype=np.int64), starts, columns, order]).astype(np.int64)


@private_cfunc(numba.types.float64(numba.types.CPointer(numba.types.float64), numba.types.CPointer(numba.types.int64),
                                   numba.types.CPointer(numba.types.float64)), nogil=True, error_model="numpy")
def tree_solve_raw(parts: Any, plan: Any, out: Any) -> float:  # pragma: no cover - runs compiled only
    """:func:`tree_solve` with sign -1 on memory given by addresses, as a C function ``double fn(double *parts,
    int64 *plan, double *out)`` (its ``address``) for callers that own the memory (linearize's lean path writes a
    result's A and B in place). The plan (:func:`tree_solve_plan`) says where everything is: L (n, n) then G (n, k)
    at the start of ``parts``; -M^-1 G's first s columns go to the (n, s) rows at ``left_at`` of ``out``, the others
    to the (n, k - s) rows at ``right_at``, and ``parts``' nb x nb block at ``block_at`` to the first nb columns of
    ``out``'s first nb rows of the target's length; nothing else of ``out`` is written. Returns the sum of what it
    wrote (finite exactly when all of it is, barring overflow)."""
    n, k, s, nb, nnz = plan[0], plan[1], plan[2], plan[8], plan[10]
    memory = numba.carray(parts, plan[3])
    result = numba.carray(out, plan[6])
    table = numba.carray(plan, PLAN_HEADER + 2 * n + 1 + nnz)
    starts = table[PLAN_HEADER: PLAN_HEADER + n + 1]
    columns = table[PLAN_HEADER + n + 1: PLAN_HEADER + n + 1 + nnz]
    order = table[PLAN_HEADER + n + 1 + nnz:]
    left_at, right_at, block_at, stride = plan[4], plan[5], plan[7], plan[9]
    corner = result[: nb * stride].reshape((nb, stride))[:, :nb]
    total = tree_solve(memory[: n * n].reshape((n, n)), memory[n * n: n * n + n * k].reshape((n, k)), starts,
                       columns, order, -1.0, result[left_at: left_at + n * s].reshape((n, s)),
                       result[right_at: right_at + n * (k - s)].reshape((n, k - s)),
                       memory[block_at: block_at + nb * nb].reshape((nb, nb)), corner)
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
