"""The checks of the quadratic weights of a regulator: Q, R (and N) of :func:`robodyn.lqr` and :func:`robodyn.tvlqr`.

- :func:`weight_matrix`: a weight given as a matrix, a number (1 x 1) or a per-name mapping ``{name: w}`` (the
  diagonal; names left out weigh 0) as a finite float matrix of the expected shape.
- :func:`check_symmetric`, :func:`check_definite`: symmetric, positive (semi)definite, within the tolerances below.
- :func:`lqr_weights`: Q (n, n) symmetric PSD, R (m, m) symmetric PD and N (n, m) with [[Q, N], [N^T, R]] PSD.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.errors import InputError, ShapeError, UnknownNameError

__all__ = ["DEFINITE_RTOL", "SYMMETRY_RTOL", "check_definite", "check_symmetric", "lqr_weights", "weight_matrix"]

Array = NDArray[np.float64]

SYMMETRY_RTOL: Final = 1e-10  # |Q - Q^T| above this times max(1, max |Q|): not symmetric.
DEFINITE_RTOL: Final = 1e-12  # Eigenvalues of a weight below -this (PSD) or <= this (PD) times max(1, ||W||).


def _named_diagonal(value: Mapping[str, object], names: Sequence[str], label: str) -> Array:
    """The diagonal matrix of ``{name: weight}`` over ``names`` (left out: 0)."""
    diagonal = np.zeros(len(names))
    for key, weight in value.items():
        if key not in names:
            listed = ", ".join(names) if names else "none"
            raise UnknownNameError(f"{label}: unknown name {key!r} (the names: {listed}): weigh those")
        if isinstance(weight, bool) or not isinstance(weight, int | float | np.integer | np.floating):
            raise InputError(f"{label}: the weight of {key!r} must be a number, got {weight!r:.60}")
        diagonal[list(names).index(str(key))] = float(weight)
    return np.diag(diagonal)


def weight_matrix(value: ArrayLike | Mapping[str, float], shape: tuple[int, int], label: str,
                  names: Sequence[str] | None = None) -> Array:
    """``value`` as a finite float matrix of ``shape`` (a number for a 1 x 1), or ShapeError / InputError.

    With ``names`` (one per row), a mapping ``{name: weight}`` gives the diagonal; names left out weigh 0 and an
    unknown name is an UnknownNameError.
    """
    if isinstance(value, Mapping):
        if names is None:
            raise InputError(f"{label} must be a matrix of real numbers here, got a mapping")
        value = _named_diagonal(value, names, label)
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
    """InputError unless ``matrix`` equals its transpose within SYMMETRY_RTOL max(1, max |matrix|)."""
    scale = max(1.0, float(np.max(np.abs(matrix))))
    gap = float(np.max(np.abs(matrix - matrix.T)))
    if gap > SYMMETRY_RTOL * scale:
        raise InputError(f"{label} must be symmetric: it differs from its transpose by {gap:.3g}: use "
                         f"({label} + {label}.T) / 2")


def check_definite(matrix: Array, label: str, strict: bool) -> None:
    """InputError unless ``matrix`` is positive definite (``strict``) or semidefinite, within DEFINITE_RTOL."""
    values = np.linalg.eigvalsh(0.5 * (matrix + matrix.T))
    bound = DEFINITE_RTOL * max(1.0, float(np.max(np.abs(values))))
    if (values[0] <= bound) if strict else (values[0] < -bound):
        kind = "positive definite" if strict else "positive semidefinite"
        raise InputError(f"{label} must be {kind}: its smallest eigenvalue is {values[0]:.6g}"
                         f"{': every input needs a positive weight' if strict else ''}")


def lqr_weights(Q: ArrayLike | Mapping[str, float], R: ArrayLike | Mapping[str, float], N: ArrayLike | None,
                n: int, m: int, *, where: str = "lqr",
                states: Sequence[str] | None = None, inputs: Sequence[str] | None = None
                ) -> tuple[Array, Array, Array]:
    """Q (n, n) symmetric PSD, R (m, m) symmetric PD, N (n, m) with [[Q, N], [N^T, R]] PSD.

    ``states`` and ``inputs`` (names) let Q and R be given as per-name mappings (their diagonals).
    """
    Q_ = weight_matrix(Q, (n, n), f"{where}: Q", states)
    R_ = weight_matrix(R, (m, m), f"{where}: R", inputs)
    N_ = np.zeros((n, m)) if N is None else weight_matrix(N, (n, m), f"{where}: N")
    for label, matrix in (("Q", Q_), ("R", R_)):
        check_symmetric(matrix, label)
    check_definite(Q_, "Q", strict=False)
    check_definite(R_, "R", strict=True)
    if N is not None:
        check_definite(np.block([[Q_, N_], [N_.T, R_]]), "the cost [[Q, N], [N^T, R]]", strict=False)
    return 0.5 * (Q_ + Q_.T), 0.5 * (R_ + R_.T), N_  # exactly the given matrices when they are symmetric
