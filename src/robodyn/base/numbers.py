"""The checks of the numbers robodyn takes from users: finite real scalars, finite float arrays, frozen copies.

- :func:`is_real_number`: a real number (int, float, a numpy integer or floating scalar, a Fraction), never a
  bool, a complex number or text;
- :func:`finite_number`: a finite real scalar as a float, optionally > 0 or >= 0, or :class:`InputError`;
- :func:`float_array`: a read-only float64 copy of an array of a given shape (or number of dimensions), finite
  unless told otherwise, or :class:`InputError` / :class:`ShapeError`;
- :func:`frozen`: a read-only float64 copy of an array, no check.

Every error is worded by its caller: the messages are templates filled with :meth:`str.format` and the named
fields listed by each function (``{what}``: the caller's name for the value, ``{value!r}``: what was given, ...).
A template is the caller's own text: never build one from user text (a brace in it would be read as a field);
pass user text as ``what``.
"""

from __future__ import annotations

import math
import numbers
from typing import Final, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.errors import InputError, ShapeError

__all__ = ["A_NUMBER", "FINITE", "FINITE_HINT", "REAL_NUMBER", "Array", "check_period", "finite_number",
           "float_array", "frozen", "is_real_number"]

Array: TypeAlias = NDArray[np.float64]

REAL_NUMBER: Final = "{what} must be a real number, got {value!r}"
A_NUMBER: Final = "{what} must be a number, got {value!r}"
FINITE_HINT: Final = "{what} must be finite, got {number}: give a finite number"
FINITE: Final = "{what} must be finite, got {number}"

_CONCRETE: Final = (float, int, np.integer, np.floating)  # real numbers; bool (an int) set apart


def is_real_number(value: object) -> bool:
    """True for a real number (:class:`numbers.Real`: int, float, numpy integer and floating scalars, Fraction);
    False for a bool (Python's or numpy's), a complex number, text and everything else."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def finite_number(value: object, what: str, *, not_real: str = REAL_NUMBER, not_finite: str = FINITE_HINT,
                  positive: str | None = None, nonnegative: str | None = None, arrays: bool = False) -> float:
    """``value`` as a finite float, or :class:`InputError` worded by the caller.

    value
        A real number (:func:`is_real_number`); with ``arrays``, also a numpy array holding one real number (shape
        ``()``, ``(1,)``, ``(1, 1)``, ...). A bool, a complex number, text or anything else is refused with
        ``not_real``.
    what
        The caller's name for the value, the ``{what}`` of the messages.
    not_real, not_finite
        The messages for a value that is not a real number, and for NaN or an infinity.
    positive, nonnegative
        When given, the value must also be > 0 (the message ``positive``) or >= 0 (``nonnegative``).

    Each message is a :meth:`str.format` template with the fields ``what``, ``value`` (as given) and ``number`` (as
    a float; ``None`` in ``not_real``).
    """
    number = _real(value, arrays)
    if number is None:
        raise InputError(not_real.format(what=what, value=value, number=None))
    if not math.isfinite(number):
        raise InputError(not_finite.format(what=what, value=value, number=number))
    if positive is not None and not number > 0:
        raise InputError(positive.format(what=what, value=value, number=number))
    if nonnegative is not None and not number >= 0:
        raise InputError(nonnegative.format(what=what, value=value, number=number))
    return number


def _real(value: object, arrays: bool) -> float | None:
    """The float of a real number (or, with ``arrays``, of an array of one real number); None for anything else."""
    if isinstance(value, _CONCRETE) and not isinstance(value, bool):  # the common cases, before the abstract class
        return float(value)
    if is_real_number(value):
        return float(value)  # type: ignore[arg-type]  # numbers.Real defines __float__
    if arrays and isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iuf":
        return float(value.reshape(()))
    return None


def float_array(value: ArrayLike, what: str, *, shape: tuple[int, ...] | None = None, ndim: int | None = None,
                finite: bool = True, not_array: str = "{what} must be an array of numbers",
                wrong_shape: str = "{what} has shape {shape}, expected {expected}",
                not_finite: str = "{what} has non-finite entries at sample {sample}: give finite numbers",
                shape_error: type[InputError] = ShapeError) -> Array:
    """A read-only, C-ordered float64 copy of ``value``, checked; the caller words each refusal.

    value
        An array of real numbers. What numpy cannot read as float64 (ragged lists, text) raises
        :class:`InputError` with ``not_array``.
    shape, ndim
        When given, the copy's exact shape, or its number of dimensions; anything else raises ``shape_error``
        (:class:`ShapeError` unless told) with ``wrong_shape``.
    finite
        Refuse NaN and infinities (:class:`InputError` with ``not_finite``).

    The templates' fields: ``what``; ``shape`` (the array's), ``expected`` (``shape``) and ``ndim`` (the one
    expected) in ``wrong_shape``; ``sample`` (the first index along axis 0 of a non-finite entry) in
    ``not_finite``.
    """
    try:
        array = np.array(value, dtype=np.float64, order="C")
    except (TypeError, ValueError):
        raise InputError(not_array.format(what=what)) from None
    if (shape is not None and array.shape != shape) or (ndim is not None and array.ndim != ndim):
        raise shape_error(wrong_shape.format(what=what, shape=array.shape, expected=shape, ndim=ndim))
    if finite and not np.all(np.isfinite(array)):
        sample = int(np.argwhere(~np.isfinite(array))[0][0]) if array.ndim else 0
        raise InputError(not_finite.format(what=what, sample=sample))
    array.setflags(write=False)
    return array


def frozen(value: ArrayLike) -> Array:
    """A read-only float64 copy of ``value`` (same shape), for results that must not change after they are made."""
    array = np.array(value, dtype=np.float64)
    array.setflags(write=False)
    return array


def check_period(value: object, where: str) -> float:
    """A sample period: a finite number > 0 (InputError naming ``where`` otherwise)."""
    message = "{what}: the sample period must be a finite number of seconds > 0, got {value!r}"
    return finite_number(value, where, not_real=message, not_finite=message, positive=message)
