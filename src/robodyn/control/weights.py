"""The checks of the weights users give to quadratic costs (LQR, optimal control, tracking): a real finite matrix
of the right shape, symmetric, positive semidefinite (state weights) or positive definite (input weights).

Every check raises robodyn's errors with a message naming the weight and the fix.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.errors import InputError, ShapeError

__all__ = ["DEFINITE_RTOL", "SYMMETRY_RTOL", "check_definite", "check_symmetric", "weight_matrix"]

Array = NDArray[np.float64]

SYMMETRY_RTOL: Final = 1e-10  # |Q - Q^T| above this times max(1, max |Q|): not symmetric.
DEFINITE_RTOL: Final = 1e-12  # Eigenvalues of a weight below -this (PSD) or <= this (PD) times max(1, ||W||).


def weight_matrix(value: ArrayLike, shape: tuple[int, int], label: str) -> Array:
    """``value`` as a finite float matrix of ``shape`` (a number for a 1 x 1), or ShapeError / InputError."""
    try:
        matrix = np.array(value, dtype=float, ndmin=2)
    except (TypeError, ValueError):
        raise InputError(f"{label} must be a matrix of real numbers, got {value!r:.60}") from None
    if np.iscomplexobj(np.asarray(value)):
        raise InputError(f"{label} must be real, got complex entries")
    if matrix.shape != shape:
        diagonal = np.ndim(value) == 1 and shape[0] == shape[1] == matrix.shape[1] > 1
        hint = ": for weights on the diagonal write np.diag([...])" if diagonal else ""
        raise ShapeError(f"{label} has shape {np.shape(value)}, expected {shape}{hint}")
    if not np.all(np.isfinite(matrix)):
        raise InputError(f"{label} contains non-finite entries: give finite numbers")
    return matrix


def check_symmetric(matrix: Array, label: str) -> None:
    """InputError when ``matrix`` differs from its transpose beyond :data:`SYMMETRY_RTOL` (relative)."""
    scale = max(1.0, float(np.max(np.abs(matrix)))) if matrix.size else 1.0
    gap = float(np.max(np.abs(matrix - matrix.T))) if matrix.size else 0.0
    if gap > SYMMETRY_RTOL * scale:
        raise InputError(f"{label} must be symmetric: it differs from its transpose by {gap:.3g}: use "
                         f"({label} + {label}.T) / 2")


def check_definite(matrix: Array, label: str, strict: bool) -> None:
    """InputError when ``matrix`` is not positive semidefinite (``strict``: not positive definite), judged on the
    eigenvalues of its symmetric part with :data:`DEFINITE_RTOL`."""
    if not matrix.size:
        return
    values = np.linalg.eigvalsh(0.5 * (matrix + matrix.T))
    bound = DEFINITE_RTOL * max(1.0, float(np.max(np.abs(values))))
    if (values[0] <= bound) if strict else (values[0] < -bound):
        kind = "positive definite" if strict else "positive semidefinite"
        raise InputError(f"{label} must be {kind}: its smallest eigenvalue is {values[0]:.6g}"
                         f"{': every input needs a positive weight' if strict else ''}")
