"""Linear time-invariant models x' = A x + B u, y = C x + D u."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.errors import InputError, ShapeError
from robodyn.model.system import Model, Vector, check_names

__all__ = ["LinearSystem"]

_EMPTY: Mapping[str, float] = MappingProxyType({})


def _array(value: ArrayLike | None, label: str, name: str) -> NDArray[np.float64]:
    if value is None:
        raise ShapeError(f"linear system {name!r}: {label} is required")
    try:
        return np.array(value, dtype=float, ndmin=2)
    except (TypeError, ValueError):
        raise InputError(f"linear system {name!r}: {label} must be a matrix of numbers, got {value!r}") from None


def _matrix(value: ArrayLike | None, shape: tuple[int, int], label: str, name: str) -> NDArray[np.float64]:
    matrix = np.zeros(shape) if value is None else _array(value, label, name)
    if matrix.size == 0:
        matrix = matrix.reshape(shape)
    if matrix.shape != shape:
        raise ShapeError(f"linear system {name!r}: {label} has shape {matrix.shape}, expected {shape}")
    if not np.all(np.isfinite(matrix)):
        raise InputError(f"linear system {name!r}: {label} contains non-finite entries: give finite numbers")
    matrix.setflags(write=False)
    return matrix


def _default_names(names: Sequence[str] | None, prefix: str, count: int) -> tuple[str, ...]:
    return tuple(names) if names is not None else tuple(f"{prefix}{i + 1}" for i in range(count))


@dataclass(frozen=True, slots=True, eq=False)
class LinearSystem(Model):
    """Linear model x' = A x + B u, y = C x + D u, with names. Frozen; arrays are read-only.

    Parameters
    ----------
    A : (n, n)
    B : (n, m), or ``None`` for no inputs
    C : (p, n), or ``None`` for ``y = x`` (C = I)
    D : (p, m), or ``None`` for zeros
    states, inputs, outputs
        Names; default ``x1.., u1.., y1..`` (outputs default to the state names when C is ``None``).
    name
        The model's name.
    x_op, u_op : (n,), (m,), optional
        The operating point a linearization was taken at (the model is then in deviations from it).
    method
        How the matrices were obtained (``"symbolic"``, ``"central"``, ...), if by linearization.
    error_estimate
        An estimate of the largest absolute error in the matrices, if known.
    """

    # Arguments may be None or array-likes; __post_init__ turns them into read-only float arrays and names.
    A: NDArray[np.float64]
    B: NDArray[np.float64] = None  # type: ignore[assignment]
    C: NDArray[np.float64] = None  # type: ignore[assignment]
    D: NDArray[np.float64] = None  # type: ignore[assignment]
    states: tuple[str, ...] = None  # type: ignore[assignment]
    inputs: tuple[str, ...] = None  # type: ignore[assignment]
    outputs: tuple[str, ...] = None  # type: ignore[assignment]
    name: str = "linear"
    x_op: NDArray[np.float64] | None = None
    u_op: NDArray[np.float64] | None = None
    method: str | None = None
    error_estimate: float | None = None

    def __post_init__(self) -> None:
        name = self.name
        set_ = object.__setattr__
        for label in ("states", "inputs", "outputs"):
            value = getattr(self, label)
            if isinstance(value, str):
                raise InputError(f"linear system {name!r}: {label} must be a list of names, got the string "
                                 f"{value!r}: write [{value!r}]")
            if value is not None:
                set_(self, label, tuple(value))
        A = _array(self.A, "A", name)
        if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
            raise ShapeError(f"linear system {name!r}: A must be a non-empty square matrix, got shape {A.shape}")
        n = A.shape[0]
        m = len(self.inputs) if self.inputs is not None else (
            0 if self.B is None else _array(self.B, "B", name).shape[1]
        )
        identity_output = self.C is None
        p = n if identity_output else (
            len(self.outputs) if self.outputs is not None else _array(self.C, "C", name).shape[0]
        )
        set_(self, "A", _matrix(A, (n, n), "A", name))
        set_(self, "B", _matrix(self.B, (n, m), "B", name))
        set_(self, "C", _matrix(np.eye(n) if identity_output else self.C, (p, n), "C", name))
        set_(self, "D", _matrix(self.D, (p, m), "D", name))
        states = _default_names(self.states, "x", n)
        set_(self, "states", states)
        set_(self, "inputs", _default_names(self.inputs, "u", m))
        set_(self, "outputs", states if identity_output and self.outputs is None
             else _default_names(self.outputs, "y", p))
        for label, names, size in (("states", self.states, n), ("inputs", self.inputs, m),
                                   ("outputs", self.outputs, p)):
            if len(names) != size:
                raise ShapeError(f"linear system {name!r}: {len(names)} {label} named for size {size}")
        groups = {"states": self.states, "inputs": self.inputs}
        if self.outputs != self.states:
            groups["outputs"] = self.outputs
        check_names(groups, where=f"linear system {name!r}")
        for label, value, size in (("x_op", self.x_op, n), ("u_op", self.u_op, m)):
            if value is not None:
                vector = np.array(value, dtype=float).reshape(-1)
                if vector.shape != (size,):
                    raise ShapeError(f"linear system {name!r}: {label} has {vector.size} entries, expected {size}")
                vector.setflags(write=False)
                set_(self, label, vector)

    @property
    def parameters(self) -> Mapping[str, float]:  # type: ignore[override]
        """A linear model has no parameters."""
        return _EMPTY

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self.A @ x + self.B @ u

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self.C @ x + self.D @ u

    @property
    def eigenvalues(self) -> NDArray[np.complex128]:
        """Eigenvalues of A, sorted by real part then imaginary part, shape ``(n,)``."""
        values = np.linalg.eigvals(self.A).astype(complex)
        order = np.lexsort((values.imag, values.real))
        return np.asarray(values[order], dtype=np.complex128)

    def __repr__(self) -> str:
        return (
            f"LinearSystem(name={self.name!r}, states={list(self.states)}, inputs={list(self.inputs)}, "
            f"outputs={list(self.outputs)},\n  A={self.A.tolist()},\n  B={self.B.tolist()},\n"
            f"  C={self.C.tolist()},\n  D={self.D.tolist()})"
        )
