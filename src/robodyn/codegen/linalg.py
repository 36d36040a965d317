"""Small dense linear algebra for generated code (compiled by numba, called from the kernels' ``rhs``)."""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["cholesky_solve_lower"]


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
