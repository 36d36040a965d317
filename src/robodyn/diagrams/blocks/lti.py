"""The ``lti`` block: x' = A x + B u, y = C x + D u (or a SISO transfer function num/den); sampled, its exact
zero-order-hold form (scipy.signal.cont2discrete).

The same equations give a LinearSystem in a diagram its generated code: :func:`compiled_form` is the lti block of a
linear model's own matrices (continuous, or discrete-time x[k+1] = A x[k] + B u[k] at its period), whose numba
sources the diagram composes in the system's place (:mod:`robodyn.diagrams.code`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import sympy

from robodyn.base.budget import check_count
from robodyn.base.errors import InputError, RobodynError, ShapeError
from robodyn.diagrams.blocks.common import check_ports, discrete_form, sampled, zero_order_hold
from robodyn.diagrams.blocks.registry import BlockKind
from robodyn.model.expr import symbol
from robodyn.model.kinds.discrete import DiscreteSystem
from robodyn.model.kinds.symbolic import SymbolicSystem

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["BLOCK", "MAX_LTI_ENTRIES", "compiled_form", "discrete", "lti"]

#: Nonzero entries of an lti block's A, B, C and D, each a term of its generated code: a dense 30-state block is
#: built and evaluated in ~1 s, a 60-state one (3,700 entries) in 35 s.
MAX_LTI_ENTRIES: Final = 1_000


def lti(A: Any = None, B: Any = None, C: Any = None, D: Any = None, *, num: Any = None, den: Any = None,
        inputs: Sequence[str] | None = None, outputs: Sequence[str] | None = None, sample: float | None = None,
        name: str = "lti") -> SymbolicSystem:
    """x' = A x + B u, y = C x + D u (states x1 … xn, inputs u1 … um, outputs y1 … yp unless named); ``D`` alone
    is a static gain matrix; ``num``/``den`` (SISO, highest power first) a proper transfer function, realized in
    controllable canonical form (scipy.signal.tf2ss)."""
    return sampled(_equations(A, B, C, D, num, den, inputs, outputs, name), sample, discrete)


def compiled_form(model: ModelContract) -> SymbolicSystem | None:
    """The lti block of ``model``'s matrices, for a diagram's code in the place of a model that has none (a
    LinearSystem): ``model.linear_model()`` as an lti block, or for a discrete-time one the system x[k+1] = A x[k] +
    B u[k], y[k] = C x[k] + D u[k] at its period (its own matrices: no hold). The ports are positional (x1 …, u1 …,
    y1 …: the generated code reads places, not names). None for a model that is not linear with constant matrices
    and without parameters, or whose block the library refuses (too many ports or entries, no input or output):
    the diagram then evaluates it in Python."""
    linear = None if model.parameters else model.linear_model()
    if linear is None or linear.dt != model.sample_period:
        return None
    try:
        continuous = _equations(linear.A, linear.B, linear.C, linear.D, None, None, None, None, "lti")
    except RobodynError:
        return None
    if linear.dt is None:
        return continuous
    return discrete_form(continuous, linear.dt, list(continuous.f_expr))


def _equations(A: Any, B: Any, C: Any, D: Any, num: Any, den: Any, inputs: Sequence[str] | None,
               outputs: Sequence[str] | None, name: str) -> SymbolicSystem:
    """The continuous lti block of :func:`lti`'s arguments, checked."""
    if num is not None or den is not None:
        if any(m is not None for m in (A, B, C, D)):
            raise InputError(f"block {name!r}: give A, B, C, D or num/den, not both")
        A, B, C, D = _realization(num, den, name)
    matrices = [None if m is None else _matrix(m, k, name) for m, k in zip((A, B, C, D), "ABCD")]
    a, b, c, d = matrices
    if a is None and d is None:
        raise InputError(f"block {name!r}: give A, B, C (and D), D alone (a static gain), or num/den")
    n = 0 if a is None else a.shape[0]
    if a is not None and a.shape != (n, n):
        raise ShapeError(f"block {name!r}: A has shape {a.shape}; it must be square (n x n)")
    m = (b.shape[1] if b is not None else d.shape[1] if d is not None else 0)
    p = (c.shape[0] if c is not None else d.shape[0] if d is not None else 0)
    b = np.zeros((n, m)) if b is None else b
    c = np.zeros((p, n)) if c is None else c
    d = np.zeros((p, m)) if d is None else d
    for label, matrix, shape in (("B", b, (n, m)), ("C", c, (p, n)), ("D", d, (p, m))):
        if matrix.shape != shape:
            raise ShapeError(f"block {name!r}: {label} has shape {matrix.shape}, expected {shape} for {n} states, "
                             f"{m} inputs and {p} outputs")
    if m == 0 or p == 0:
        raise ShapeError(f"block {name!r}: an lti block needs at least one input and one output")
    check_ports(name, states=n, inputs=m, outputs=p)
    check_count(int(np.sum([np.count_nonzero(matrix) for matrix in (a, b, c, d) if matrix is not None])),
                MAX_LTI_ENTRIES, "its nonzero matrix entries", "reduce the model (fewer states) or split it into "
                "blocks", f"block {name!r}")
    u_names = _port_names(inputs, "u", m, "inputs", name)
    y_names = _port_names(outputs, "y", p, "outputs", name)
    x_symbols = [symbol(f"x{i + 1}") for i in range(n)]
    u_symbols = [symbol(u) for u in u_names]
    x_vector, u_vector = sympy.Matrix(n, 1, x_symbols), sympy.Matrix(m, 1, u_symbols)
    exact = np.vectorize(lambda v: sympy.Float(float(v)) if v != int(v) else sympy.Integer(int(v)), otypes=[object])

    def product(matrix: np.ndarray, vector: sympy.Matrix) -> sympy.Matrix:
        return sympy.Matrix(matrix.shape[0], matrix.shape[1], list(exact(matrix).ravel())) * vector \
            if matrix.size else sympy.zeros(matrix.shape[0], 1)

    f = product(a, x_vector) + product(b, u_vector) if a is not None else sympy.zeros(0, 1)
    h = product(c, x_vector) + product(d, u_vector)
    return SymbolicSystem([s.name for s in x_symbols], u_names, list(f), outputs=dict(zip(y_names, list(h))),
                          name=name)


def discrete(continuous: SymbolicSystem, period: float) -> DiscreteSystem:
    """The block ``continuous`` sampled at ``period``: x ← Ad x + Bd u, its exact zero-order hold (a static block
    sampled and held)."""
    return discrete_form(continuous, period, zero_order_hold(continuous, period) if continuous.states else [])


def _matrix(value: Any, label: str, name: str) -> np.ndarray:
    try:
        matrix = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"block {name!r}: {label} must be a matrix of numbers (a list of rows), got {value!r}") \
            from None
    if matrix.ndim == 0:
        matrix = matrix.reshape(1, 1)
    if matrix.ndim != 2:
        raise ShapeError(f"block {name!r}: {label} must be a matrix (a list of rows), got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise InputError(f"block {name!r}: {label} has entries that are not finite numbers")
    return matrix


def _realization(num: Any, den: Any, name: str) -> tuple[Any, Any, Any, Any]:
    try:
        numerator, denominator = (np.atleast_1d(np.array(v, dtype=float)) for v in (num, den))
    except (TypeError, ValueError):
        raise InputError(f"block {name!r}: num and den must be lists of numbers (highest power first)") from None
    if numerator.ndim != 1 or denominator.ndim != 1 or not denominator.size or not np.all(np.isfinite(
            np.concatenate([numerator, denominator]))):
        raise InputError(f"block {name!r}: num and den must be lists of finite numbers (highest power first)")
    denominator = np.trim_zeros(denominator, "f")
    numerator = np.trim_zeros(numerator, "f") if np.any(numerator) else np.zeros(1)
    if not denominator.size:
        raise InputError(f"block {name!r}: den is zero")
    if numerator.size > denominator.size:
        raise InputError(f"block {name!r}: num/den is improper (numerator of higher degree): it has no state-space "
                         "form; add a filter pole")
    check_ports(name, states=denominator.size - 1)  # the realization's states, one per pole
    import scipy.signal

    A, B, C, D = scipy.signal.tf2ss(numerator, denominator)
    return (A if A.size else None), (B if A.size else None), (C if A.size else None), D


def _port_names(given: Sequence[str] | None, stem: str, count: int, what: str, name: str) -> list[str]:
    if given is None:
        return [f"{stem}{i + 1}" for i in range(count)]
    names = [str(g) for g in given]
    if len(names) != count:
        raise ShapeError(f"block {name!r}: {len(names)} {what} named for {count}")
    return names


BLOCK = BlockKind("lti", lti, discrete)
