"""The bounds of an MPC as problem files write them: ``{"inputs": {name: [low, high]}, "states": {name: [low, high]}}``.

Each bound is a number (an int or a float, or a constant expression such as ``"pi/2"`` read by robodyn's safe
parser), ``None`` / ``null`` or an infinity for no bound on that side; NaN is refused, and so are a lower bound
above the upper one and a name the system does not have. Names left out are unbounded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError
from robodyn.base.numbers import frozen, is_real_number
from robodyn.control.optimal.constraints import BOUND_KEYS
from robodyn.control.optimal.references import by_name
from robodyn.model.quantities import parse_number

__all__ = ["box_bounds"]

Array = NDArray[np.float64]


def _side(value: Any, where: str, default: float) -> float:
    """One bound: None (no bound: ``default``), a real number (an infinity allowed) or a constant expression."""
    if value is None:
        return default
    if isinstance(value, str):
        result = parse_number(value, where=where)
    elif is_real_number(value):
        result = float(value)
    else:
        raise InputError(f"{where}: expected a number (or null for no bound), got {value!r:.60}")
    if math.isnan(result):
        raise InputError(f"{where}: the bound is NaN: give a number, or null for no bound")
    return result


def _box(spec: Any, names: Sequence[str], what: str, where: str) -> Array:
    """(k, 2) the lower and upper bounds by name (-inf / inf where not given), lower <= upper."""
    bounds = np.tile([-math.inf, math.inf], (len(names), 1))
    if spec is None:
        return frozen(bounds)
    for name, pair in by_name(spec, names, what, where).items():
        if isinstance(pair, str | Mapping) or not isinstance(pair, Sequence | np.ndarray) or len(pair) != 2:
            raise InputError(f"{where}.{name}: expected [lower, upper] (null for no bound), got {pair!r:.60}")
        lower = _side(pair[0], f"{where}.{name}[0]", -math.inf)
        upper = _side(pair[1], f"{where}.{name}[1]", math.inf)
        if lower > upper:
            raise InputError(f"{where}.{name}: the lower bound {lower:g} is above the upper bound {upper:g}: "
                             "give [lower, upper]")
        if lower == math.inf or upper == -math.inf:
            raise InputError(f"{where}.{name}: [{lower:g}, {upper:g}] admits no value: give finite bounds")
        bounds[list(names).index(name)] = lower, upper
    return frozen(bounds)


def box_bounds(spec: Mapping[str, Any] | None, states: Sequence[str], inputs: Sequence[str]) -> tuple[Array, Array]:
    """The state bounds (n, 2) and input bounds (m, 2) of ``spec`` (module docstring), absolute values."""
    given = by_name({} if spec is None else spec, BOUND_KEYS, "bound kind", "mpc: bounds")
    return (_box(given.get("states"), states, "state", "mpc: bounds.states"),
            _box(given.get("inputs"), inputs, "input", "mpc: bounds.inputs"))
