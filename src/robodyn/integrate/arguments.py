"""The arguments of ``simulate`` read and checked: the span, the initial states and parameter sets (one or a batch),
finite numbers, with errors that name the argument and the fix (robodyn.integrate.simulate)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.base.errors import InputError, ShapeError, UnknownNameError
from robodyn.base.numbers import A_NUMBER, FINITE, finite_number
from robodyn.model.system import values_to_vector

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["as_rows", "batch_size", "float_array", "initial_states", "parameter_sets", "read_span",
           "tolerance_vector"]


def _finite(value: Any, label: str) -> float:
    """A time of the span: a finite number (or an array of one)."""
    return finite_number(value, label, not_real=A_NUMBER, not_finite=FINITE, arrays=True)


def float_array(value: Any, label: str) -> np.ndarray:
    """``value`` as a float64 array, or InputError naming ``label`` (not numpy's ValueError)."""
    try:
        array = np.asarray(value)
        if array.dtype.kind == "c":
            raise InputError(f"{label} must be real numbers, got the complex {value!r}: give the real part")
        return array.astype(float, copy=array.dtype != np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{label} must be numbers, got {_short(value)}") from None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."


def read_span(t_span: float | tuple[float, float]) -> tuple[float, float]:
    """``(t0, t1)`` from ``(t0, t1)`` or ``t1`` (t0 = 0): finite, t1 > t0."""
    if type(t_span) is float and math.isfinite(t_span) and t_span > 0:  # the common case: t1 alone
        return 0.0, t_span
    if isinstance(t_span, bool):
        raise InputError(f"t_span must be (t0, t1) or t1, got {t_span!r}")
    if isinstance(t_span, int | float | np.number):
        t0, t1 = 0.0, _finite(t_span, "t_final")
    else:
        try:
            first, last = t_span
        except (TypeError, ValueError):
            raise InputError(f"t_span must be (t0, t1) or t1, got {t_span!r}") from None
        t0, t1 = _finite(first, "t0"), _finite(last, "t_final")
    if not t1 > t0:
        raise InputError(f"t_final = {t1:g} must be greater than t0 = {t0:g}")
    return t0, t1


def initial_states(model: ModelContract, x0: Any) -> tuple[np.ndarray, bool]:
    """``x0`` (None: the model's :meth:`initial_state`, a state, ``(N, n)`` rows or a mapping of values or columns) as
    ``(N, n)`` float64 rows, and whether it is a batch."""
    n = model.n_states
    if x0 is None:
        return np.array(model.initial_state(), dtype=float).reshape(1, n), False
    if type(x0) is not list and isinstance(x0, Mapping):
        unknown = [k for k in x0 if k not in model.states]
        if unknown:
            model.state_vector({unknown[0]: 0.0}, default=0.0)  # raises with a did-you-mean
        columns = {k: np.atleast_1d(float_array(v, f"x0[{k!r}]")) for k, v in x0.items()}
        _check_columns(columns, "x0")
        size = max((c.size for c in columns.values()), default=1)
        rows = np.zeros((size, n))
        for k, column in columns.items():
            rows[:, model.states.index(k)] = column
        _check_finite(rows, "x0")
        return rows, size > 1
    array = float_array(x0, "x0")
    if array.ndim == 1 and array.shape[0] == n and _all_finite(array):  # the common case: one state vector
        return (array if type(x0) is list or type(x0) is tuple else array.copy())[None, :], False
    if array.ndim == 2:
        if array.shape[1] != n or array.shape[0] == 0:
            raise ShapeError(f"x0 has shape {array.shape}, expected (N, {n}) with N >= 1 for the states "
                             f"{', '.join(model.states)}")
        _check_finite(array, "x0")
        return array.copy(), True
    return model.state_vector(array)[None, :], False


def parameter_sets(model: ModelContract, params: Any) -> tuple[np.ndarray, bool]:
    """``params`` (None, overrides by name with values or columns, or ``(N, n_p)``) as ``(N, n_p)`` rows, and
    whether it is a batch."""
    if params is None:  # the defaults (validated with the model)
        return np.fromiter(model.parameters.values(), float, len(model.parameters))[None, :], False
    names = tuple(model.parameters)
    defaults = model.parameter_vector()
    if isinstance(params, Mapping):
        for key in params:
            if key in model.derived_parameters:  # the model's own message: derived, and from what
                model.parameter_vector({key: 0.0})
            if key not in names:
                raise UnknownNameError(f"unknown parameter {key!r} (the model's parameters: {', '.join(names)})")
        columns = {k: np.atleast_1d(float_array(v, f"params[{k!r}]")) for k, v in params.items()}
        _check_columns(columns, "params")
        size = max((c.size for c in columns.values()), default=1)
        rows = np.tile(defaults, (size, 1))
        for k, column in columns.items():
            rows[:, names.index(k)] = column
        _check_finite(rows, "params")
        return rows, size > 1
    array = float_array(params, "params")
    if array.ndim == 2:
        if array.shape[1] != len(names):
            raise ShapeError(f"params has shape {array.shape}, expected (N, {len(names)})")
        _check_finite(array, "params")
        return array.copy(), True
    return values_to_vector(array, names, "parameter")[None, :], False


def _check_columns(columns: Mapping[str, np.ndarray], label: str) -> None:
    """Each column is one value or a 1-D list of N values, with the same N for all."""
    size = max((c.size for c in columns.values()), default=1)
    for k, column in columns.items():
        if column.ndim != 1:
            raise ShapeError(f"{label}[{k!r}] has shape {column.shape}: give a number or a list of N values")
        if column.size not in (1, size):
            raise ShapeError(f"{label}[{k!r}] has {column.size} values where others have {size}: give N values each")


def as_rows(array: np.ndarray, N: int) -> np.ndarray:
    """``array`` (1, k) or (N, k) as an (N, k) array.

    The arrays of :func:`initial_states` and :func:`parameter_sets` are already fresh and writable (the
    kernels are typed for those), so N rows are returned as they are and one row is copied N times.
    """
    if array.shape[0] == N:
        return array
    return np.broadcast_to(array, (N, array.shape[1])).copy()


def _check_finite(array: np.ndarray, label: str) -> None:
    if not _all_finite(array):
        raise InputError(f"{label} contains non-finite values: give finite numbers")


def _all_finite(array: np.ndarray) -> bool:
    """Whether every entry of a float array is finite (small arrays without numpy's per-call cost)."""
    if array.size <= 16:
        return all(map(math.isfinite, array.ravel().tolist()))
    return bool(np.isfinite(array).all())


def batch_size(x_batch: bool, p_batch: bool, n_x: int, n_p: int) -> int:
    """The number of runs N: the batch's rows (ShapeError when x0 and params are batches of other sizes)."""
    if x_batch and p_batch and n_x != n_p:
        raise ShapeError(f"x0 has {n_x} rows but params has {n_p}: give the same number, or one of them once")
    return max(n_x, n_p)


def tolerance_vector(atol: Any, n: int) -> np.ndarray:
    """The absolute tolerance ``atol`` (a number, or one per state) as a new ``(n,)`` array; InputError for a
    negative, non-finite or wrongly sized one."""
    if type(atol) is float and math.isfinite(atol) and atol >= 0:  # the common case, without numpy checks
        vector = np.empty(n)
        vector.fill(atol)
        return vector
    given = float_array(atol, "atol")
    values = np.broadcast_to(given, (n,)) if given.shape in ((), (1,), (n,)) else None
    if values is None or not np.all(np.isfinite(values)) or np.any(values < 0):
        raise InputError(f"atol must be a non-negative number or {n} of them")
    return np.array(values)
