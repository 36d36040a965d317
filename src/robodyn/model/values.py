"""User values as float64 vectors: names checked, arrays or ``{name: value}`` mappings converted, and what only
looks numeric to numpy (complex numbers, dates, text, booleans) refused with a message naming the fix."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.errors import InputError, ShapeError, UnknownNameError
from robodyn.base.names import RESERVED_NAMES, is_qualified_name, is_valid_name
from robodyn.base.numbers import FINITE, finite_number

__all__ = ["Values", "Vector", "check_names", "real_array", "real_scalar", "values_to_vector"]

#: A point given by the user: an array in the model's order, or a ``{name: value}`` mapping.
Values: TypeAlias = ArrayLike | Mapping[str, float]

Vector: TypeAlias = NDArray[np.float64]


def check_names(
    groups: Mapping[str, Sequence[str]],
    *,
    where: str = "model",
    locate: Callable[[str, int], str] | None = None,
    qualified: bool = False,
) -> None:
    """Check that names are identifiers (``qualified``: or a diagram's ``block.name``), not reserved, and unique
    across all groups.

    Parameters
    ----------
    groups
        ``{"states": [...], "inputs": [...], ...}``; the group label appears in error messages.
    where
        Prefix of error messages.
    locate
        Optional ``locate(group, index) -> prefix`` giving a more precise prefix for one entry
        (a model file passes ``"file.yaml:4: states[1]"``).
    """
    seen: dict[str, str] = {}
    for group, names in groups.items():
        for index, name in enumerate(names):
            prefix = locate(group, index) if locate is not None else f"{where}: {group}"
            if not (is_valid_name(name) or (qualified and is_qualified_name(name))):
                raise InputError(
                    f"{prefix}: {name!r} is not a valid name: use letters, digits and _ "
                    f"(not starting with a digit, not a Python keyword){', parts joined by .' if qualified else ''}"
                )
            if name in RESERVED_NAMES:
                raise InputError(f"{prefix}: {name!r} shadows the built-in function or constant {name!r}: rename it")
            if name in seen:
                also = "twice" if seen[name] == group else f"both in {seen[name]} and in {group}"
                raise InputError(f"{prefix}: name {name!r} is used {also}: names must be unique")
            seen[name] = group


def _unknown(name: str, names: Sequence[str], what: str) -> UnknownNameError:
    import difflib  # for messages only

    close = difflib.get_close_matches(name, list(names), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    known = ", ".join(names) if names else "none"
    return UnknownNameError(f"unknown {what} {name!r} (the model's {what}s: {known}){hint}")


def values_to_vector(
    values: Values | None,
    names: Sequence[str],
    what: str,
    *,
    default: float | Vector | None = None,
) -> Vector:
    """Turn an array or a ``{name: value}`` mapping into a float64 vector ordered like ``names``.

    Parameters
    ----------
    values
        Array of shape ``(len(names),)`` (a scalar when there is one name), a mapping from names to
        numbers, or ``None`` for all defaults.
    names
        The ordered names.
    what
        What the values are ("state", "input", "parameter"), for messages.
    default
        Value(s) for names a mapping leaves out (and for ``None``); ``None`` makes every name required.

    Returns
    -------
    vector : (len(names),) float64
    """
    size = len(names)
    if values is None:
        if default is None and size:
            raise InputError(f"no {what} values given: the model needs {', '.join(names)}")
        return np.broadcast_to(np.asarray(0.0 if default is None else default, float), (size,)).copy()
    if isinstance(values, Mapping):
        result = np.empty(size)
        if default is not None:
            result[:] = default
        given: set[str] = set()
        index = {name: i for i, name in enumerate(names)}
        for key, value in values.items():
            if key not in index:
                raise _unknown(str(key), names, what)
            result[index[key]] = real_scalar(value, f"{what} {key!r}")
            given.add(key)
        missing = [name for name in names if name not in given]
        if missing and default is None:
            raise InputError(f"missing {what} value(s) for {', '.join(missing)}: give every {what}")
    else:
        result = real_array(values, f"{what} values")
        if result.ndim == 0 and size == 1:
            result = result.reshape(1)
        if result.shape != (size,):
            raise ShapeError(
                f"{what} vector has shape {result.shape}, expected ({size},) for {', '.join(names) or 'none'}"
            )
        result = result.copy()
    if not np.all(np.isfinite(result)):
        bad = [names[int(i)] for i in np.flatnonzero(~np.isfinite(result))]
        raise InputError(f"{what} value(s) for {', '.join(bad)} are not finite: give finite numbers")
    return result


def real_array(values: object, what: str, *, one: bool = False) -> NDArray[np.float64]:
    """``values`` as a float64 array, refusing what only looks numeric to numpy: complex numbers (the imaginary
    part would be dropped), dates and durations (read as day counts), text ("1,0,0") and booleans."""
    try:
        array = np.asarray(values)
        if array.dtype.kind == "O" and all(  # mixed Python objects: each must be a real number
                isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool | np.bool_)
                for v in array.ravel()):
            array = array.astype(float)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be {'a number' if one else 'numbers'}, got {_shown(values)}") from None
    if array.dtype.kind not in "iuf":
        kind = {"c": "complex", "M": "a date", "m": "a duration", "U": "text", "S": "text",
                "b": "a boolean"}.get(array.dtype.kind, "not all numbers")
        raise InputError(f"{what} must be {'a real number' if one else 'real numbers'}, got {_shown(values)} "
                         f"({kind})")
    return array.astype(float)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def real_scalar(value: object, what: str) -> float:
    """``value`` as a finite float: a real number, or what :func:`real_array` reads as one (a 0-d array, ``[2.0]``);
    InputError naming ``what`` otherwise."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.integer | np.floating):
        array = real_array(value, what, one=True)
        if array.size != 1:
            raise InputError(f"{what} must be a number, got {_shown(value)} ({array.size} values)")
        value = float(array.reshape(()))
    return finite_number(value, what, not_finite=FINITE)


