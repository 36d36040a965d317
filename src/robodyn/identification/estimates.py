"""What least squares can tell about its estimates: the combinations the data leave undetermined, and the
standard errors and correlations of a covariance. Shared by robodyn.identify and robodyn.identify_rigid.

A column of the Jacobian (or regressor) with no effect leaves its number undetermined; so does a direction in which
the columns, each scaled to unit length, are dependent: a right singular vector whose singular value is below a
tolerance times the largest (G. H. Golub, C. F. Van Loan, *Matrix Computations*, 4th ed., 2013, sec. 5.4.1, the
numerical rank). :func:`undetermined` finds both; each caller words them for its numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["Undetermined", "errors_and_correlation", "undetermined"]

Array = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Undetermined:
    """The columns with no effect (``dead``: their norm at most ``zero`` times the largest, or not finite) and, among
    the others, each dependent direction: the columns taking at least ``share`` of its largest entry, with their
    coefficients (``directions``: a list of (column indices, coefficients, singular value / largest) per
    direction); ``any`` whether there is anything to report."""

    dead: tuple[int, ...]
    directions: tuple[tuple[tuple[int, ...], tuple[float, ...], float], ...]

    @property
    def any(self) -> bool:
        return bool(self.dead or self.directions)


def undetermined(matrix: Array, tolerance: float, *, zero: float = 0.0, share: float = 0.1) -> Undetermined:
    """The undetermined columns and combinations of ``matrix`` (m, k) (see the module docstring); ``tolerance`` the
    singular-value ratio below which a direction counts as dependent."""
    norms = np.linalg.norm(matrix, axis=0)
    largest = float(norms.max()) if norms.size and np.all(np.isfinite(norms)) else 0.0
    dead = [j for j in range(matrix.shape[1])
            if not np.isfinite(norms[j]) or norms[j] == 0.0 or norms[j] <= zero * largest]
    kept = [j for j in range(matrix.shape[1]) if j not in dead]
    found = []
    if kept:
        _, s, vt = np.linalg.svd(matrix[:, kept] / norms[kept], full_matrices=False)
        for value, row in zip(s, vt):
            if value <= tolerance * s[0]:
                chosen = [j for j in range(len(kept)) if abs(row[j]) >= share * np.abs(row).max()]
                found.append((tuple(kept[j] for j in chosen), tuple(float(row[j]) for j in chosen),
                              float(value / s[0])))
    return Undetermined(tuple(dead), tuple(found))


def errors_and_correlation(covariance: Array) -> tuple[Array, Array]:
    """The standard errors sqrt(C_ii) and the correlations C_ij / (sigma_i sigma_j) (unit diagonal, within [-1, 1])
    of a covariance ``C`` (k, k)."""
    errors = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    scale = np.where(errors > 0, errors, 1.0)
    correlation = np.clip(covariance / np.outer(scale, scale), -1.0, 1.0)
    np.fill_diagonal(correlation, 1.0)
    return errors, correlation
