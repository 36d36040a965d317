"""Linear time-invariant models x' = A x + B u, y = C x + D u."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType, ModuleType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn import display
from robodyn.errors import InputError, ShapeError
from robodyn.model.names import RESERVED_NAMES, is_valid_name
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


def _control() -> ModuleType:
    """python-control, imported on first use (an optional extra)."""
    try:
        return importlib.import_module("control")
    except ImportError:
        raise InputError("python-control is not installed: install robodyn[control] "
                         "(pip install 'robodyn[control]')") from None


def _labels(system: Any, attribute: str) -> tuple[str, ...] | None:
    """python-control's signal labels if every one is a valid robodyn name (its defaults ``x[0]`` are not)."""
    labels = tuple(getattr(system, attribute, None) or ())
    if labels and all(is_valid_name(label) and label not in RESERVED_NAMES for label in labels):
        return labels
    return None


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

    @classmethod
    def from_checked(
        cls,
        A: NDArray[np.float64],
        B: NDArray[np.float64],
        C: NDArray[np.float64],
        D: NDArray[np.float64],
        *,
        states: tuple[str, ...],
        inputs: tuple[str, ...],
        outputs: tuple[str, ...],
        name: str,
        x_op: NDArray[np.float64] | None = None,
        u_op: NDArray[np.float64] | None = None,
        method: str | None = None,
        error_estimate: float | None = None,
    ) -> LinearSystem:
        """Construct without validation, for callers that built checked arrays from a validated model.

        The caller guarantees float64 arrays of consistent shapes with finite entries, and names taken from
        a model (already checked). The arrays are made read-only and must not be written afterwards.
        ``linearize`` uses this on its hot path; everything else should call the constructor.
        """
        self = object.__new__(cls)
        set_ = object.__setattr__
        for label, array in (("A", A), ("B", B), ("C", C), ("D", D), ("x_op", x_op), ("u_op", u_op)):
            if array is not None:
                array.setflags(write=False)
            set_(self, label, array)
        set_(self, "states", states)
        set_(self, "inputs", inputs)
        set_(self, "outputs", outputs)
        set_(self, "name", name)
        set_(self, "method", method)
        set_(self, "error_estimate", error_estimate)
        return self

    # --- interoperability -----------------------------------------------------------------------------
    def to_control(self) -> Any:
        """This model as a python-control ``StateSpace`` (continuous time) with the signal names.

        Requires the ``control`` extra; raises :class:`~robodyn.errors.InputError` without it.
        """
        control = _control()
        return control.StateSpace(np.array(self.A), np.array(self.B), np.array(self.C), np.array(self.D),
                                  states=list(self.states), inputs=list(self.inputs), outputs=list(self.outputs),
                                  name=self.name)

    @classmethod
    def from_control(cls, system: Any, *, name: str | None = None) -> LinearSystem:
        """A LinearSystem from a continuous-time python-control ``StateSpace``.

        Signal names come from ``state_labels``, ``input_labels`` and ``output_labels`` when every label of
        a group is a valid robodyn name; python-control's defaults (``x[0]``, ...) become ``x1``, ... .
        ``name`` defaults to the system's name.
        """
        control = _control()
        if not isinstance(system, control.StateSpace):
            raise InputError(f"from_control expects a control.StateSpace, got {type(system).__name__}: "
                             "convert it with control.ss(sys)")
        if not system.isctime():
            raise InputError(f"{system.name!r} is a discrete-time system (dt={system.dt}): LinearSystem is "
                             "continuous-time; pass a system with dt=0")
        n, m = np.shape(system.B)
        p = np.shape(system.C)[0]
        return cls(np.asarray(system.A, dtype=float), np.asarray(system.B, dtype=float).reshape(n, m),
                   np.asarray(system.C, dtype=float), np.asarray(system.D, dtype=float).reshape(p, m),
                   states=_labels(system, "state_labels") or _default_names(None, "x", n),
                   inputs=_labels(system, "input_labels") or _default_names(None, "u", m),
                   outputs=_labels(system, "output_labels") or _default_names(None, "y", p),
                   name=name if name is not None else str(system.name))

    def to_scipy(self) -> Any:
        """This model as a ``scipy.signal.StateSpace`` (continuous time; scipy keeps no signal names)."""
        import scipy.signal  # slow to import, needed only here

        return scipy.signal.StateSpace(np.array(self.A), np.array(self.B), np.array(self.C), np.array(self.D))

    @property
    def parameters(self) -> Mapping[str, float]:  # type: ignore[override]
        """A linear model has no parameters."""
        return _EMPTY

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self.A @ x + self.B @ u

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self.C @ x + self.D @ u

    # --- the model contract (robodyn.model.protocol) ---------------------------------------------------
    kind = "linear"

    @property
    def jacobian_method(self) -> str:
        return "linear"

    @property
    def classification_basis(self) -> str:
        return "structural"

    def jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        return self.A, self.B

    def output_jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        return self.C, self.D

    def linear_model(self, params: Any = None) -> LinearSystem:
        return self

    def linear_by_construction(self) -> str:
        return "x' = A x + B u with constant matrices"

    def explicit_form(self, max_coordinates: int) -> Any:
        """x' = A x + B u with A and B as sympy Floats (exact binary values)."""
        import sympy

        from robodyn.model.expr import symbol
        from robodyn.model.protocol import ExplicitForm

        def floats(array: np.ndarray) -> Any:
            return sympy.Matrix([[sympy.Float(float(v)) for v in row] for row in np.asarray(array)])

        x = tuple(symbol(s) for s in self.states)
        u = tuple(symbol(s) for s in self.inputs)
        f = floats(self.A) * sympy.Matrix(x)
        if u:
            f += floats(self.B) * sympy.Matrix(u)
        return ExplicitForm(f, x, u, (), floats(self.A))

    def h_many(self, t: np.ndarray, x: np.ndarray, u: np.ndarray, p: Any) -> np.ndarray:
        return np.asarray(x @ self.C.T + u @ self.D.T, dtype=float)

    @property
    def eigenvalues(self) -> NDArray[np.complex128]:
        """Eigenvalues of A, sorted by real part then imaginary part, shape ``(n,)``."""
        values = np.linalg.eigvals(self.A).astype(complex)
        order = np.lexsort((values.imag, values.real))
        return np.asarray(values[order], dtype=np.complex128)

    # --- rich display in Jupyter ---------------------------------------------------------------------
    def _matrices(self) -> list[tuple[str, NDArray[np.float64], tuple[str, ...], tuple[str, ...]]]:
        """(label, matrix, row names, column names) of A, B, C, D, leaving out empty ones (no inputs)."""
        blocks = [("A", self.A, self.states, self.states), ("B", self.B, self.states, self.inputs),
                  ("C", self.C, self.outputs, self.states), ("D", self.D, self.outputs, self.inputs)]
        return [b for b in blocks if b[1].size]

    def _repr_latex_(self) -> str:
        """A, B, C and D as LaTeX ``bmatrix`` (B and D left out without inputs), as display math."""
        lines = [f"{label} &= {display.matrix_latex(matrix)}" for label, matrix, _, _ in self._matrices()]
        return "$$\\begin{aligned} " + " \\\\ ".join(lines) + " \\end{aligned}$$"

    def _repr_html_(self) -> str:
        """The names and the matrices as tables labelled with the state, input and output names."""
        summary: list[tuple[str, object]] = [("states", ", ".join(self.states)),
                                             ("inputs", ", ".join(self.inputs) or "none"),
                                             ("outputs", ", ".join(self.outputs))]
        for label, point, names in (("x_op", self.x_op, self.states), ("u_op", self.u_op, self.inputs)):
            if point is not None and point.size:
                summary.append((label, ", ".join(f"{n} = {display.number(v)}" for n, v in zip(names, point.tolist()))))
        if self.method is not None:
            summary.append(("method", self.method))
        if self.error_estimate is not None:
            summary.append(("error estimate", self.error_estimate))
        parts = [display.heading(f"LinearSystem {self.name!r}: x' = A x + B u, y = C x + D u"),
                 display.html_table(summary, row_header=True)]
        parts += [display.matrix_html(matrix, rows, columns, title=label)
                  for label, matrix, rows, columns in self._matrices()]
        if not self.inputs:
            parts.append(display.note("no inputs: B and D are empty"))
        return display.block(parts)

    def __repr__(self) -> str:
        return (
            f"LinearSystem(name={self.name!r}, states={list(self.states)}, inputs={list(self.inputs)}, "
            f"outputs={list(self.outputs)},\n  A={self.A.tolist()},\n  B={self.B.tolist()},\n"
            f"  C={self.C.tolist()},\n  D={self.D.tolist()})"
        )
