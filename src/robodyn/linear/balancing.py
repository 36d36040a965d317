"""Diagonal scaling of a state-space system by powers of two (exact: nothing is rounded), so that units do not
decide what is computed from it: the PBH test (robodyn.linear.controllability) and a loop's crossings
(robodyn.linear.crossings).

For each state, its row of [A, B] and its column of [A; C] outside the diagonal are brought to equal 2-norms (the
iteration of LAPACK's ``gebal``, and of SLICOT's ``TB01ID`` on the system matrix [[A, B], [C, 0]]); a state whose
column (row) is empty changes only its row (column) when scaled, which is then brought to the size of A; each input
column of B is scaled to about that size as well.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
from numpy.typing import NDArray

__all__ = ["MAX_SWEEPS", "balancing", "power_of_two"]

Array = NDArray[np.float64]

MAX_SWEEPS: Final = 64  # Balancing sweeps at most (each halves the imbalance; powers of two up to 2^64 apart).
_SLACK: Final = 0.95  # A balancing step is taken only when it shrinks a state's row + column norm by 5 %.


def power_of_two(value: float) -> float:
    return float(2.0 ** round(math.log2(value))) if value > 0.0 and math.isfinite(value) else 1.0


def balancing(A: Array, B: Array, C: Array | None = None) -> tuple[Array, Array]:
    """Powers of two ``d`` (n,) scaling the states (x = diag(d) x_b) and ``s`` (m,) scaling the inputs so that
    A_b = D^-1 A D, B_b = D^-1 B S (and C_b = C D) are balanced (module docstring).

    Parameters
    ----------
    A : (n, n)
    B : (n, m)
    C : (p, n), optional
        Outputs whose columns count with A's (SLICOT TB01ID on [[A, B], [C, 0]]: a loop's realization); None for
        the pair (A, B) alone.
    """
    n = A.shape[0]
    off = np.abs(A)
    np.fill_diagonal(off, 0.0)
    rows_b = np.linalg.norm(B, axis=1) if B.size else np.zeros(n)
    columns_c = np.linalg.norm(C, axis=0) if C is not None and C.size else np.zeros(n)
    d = np.ones(n)
    typical = float(np.linalg.norm(A)) or 1.0  # the row (column) size a state nothing depends on (feeds) gets
    for _ in range(MAX_SWEEPS):
        moved = False
        for i in range(n):
            column = math.hypot(float(np.linalg.norm(off[:, i] * (d[i] / d))), float(columns_c[i] * d[i]))
            row = math.hypot(float(np.linalg.norm(off[i, :] * (d / d[i]))), float(rows_b[i] / d[i]))
            if row == 0.0 and column == 0.0:
                continue
            if column == 0.0 or row == 0.0:  # its scale is free (it changes one side only): that side made typical
                f, step = power_of_two(row / typical if column == 0.0 else typical / column), True
            else:  # d_i * f: the column grows by f, the row shrinks by f
                f = power_of_two(math.sqrt(row / column))
                step = column * f + row / f < _SLACK * (column + row)
            if f != 1.0 and step:
                d[i] *= f
                moved = True
        if not moved:
            break
    A_b = A * (d[None, :] / d[:, None])
    size = float(np.linalg.norm(A_b)) if n else 0.0  # Frobenius: a power of two near it is all that is wanted
    columns = np.linalg.norm(B / d[:, None], axis=0) if B.size else np.zeros(B.shape[1])
    s = np.array([power_of_two(size / c) if size > 0.0 and c > 0.0 else 1.0 for c in columns.tolist()])
    return d, s
