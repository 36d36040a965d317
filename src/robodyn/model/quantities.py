"""Values as written on the command line and in model files: a number or a constant expression, ``NAME=VALUE`` lists.

:func:`parse_number` reads ``"10"``, ``"-1e-6"``, ``"pi/2"`` or ``"2*9.81"`` into a finite float;
:func:`parse_assignments` and :func:`parse_quantities` read ``"theta=pi/2, tau=0.5"`` (the second with values in
degrees, ``theta=90deg``, which :func:`in_units` converts with the names' units). A plain number is read without
sympy (:func:`robodyn.base.names.plain_number`, so that ``robodyn simulate --t-final 10`` imports no sympy:
tests/test_imports.py); any other text goes to the safe parser (:func:`robodyn.model.expr.parse_constant`),
imported only then. This module sits above both: the parser imports the name rules of
:mod:`robodyn.base.names`, and neither imports this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from robodyn.base.errors import ExpressionError, InputError
from robodyn.base.names import ANGLE_UNITS, DEGREES, TURN, is_valid_name, plain_number, split_degrees

__all__ = ["Quantity", "in_units", "parse_assignments", "parse_number", "parse_quantities"]


def parse_number(text: str | int | float, *, where: str = "value") -> float:
    """Parse a constant such as ``"10"``, ``"pi/2"`` or ``"2*9.81"`` into a finite float.

    Plain numbers are read without sympy (:func:`robodyn.base.names.plain_number`); expressions go through the
    safe parser (:mod:`robodyn.model.expr`, which imports sympy), imported only then.
    """
    value = plain_number(text)
    if value is not None:
        return value
    if isinstance(text, str) and split_degrees(text)[1]:
        raise ExpressionError(f"{where}: {text!r}: a value in degrees ({DEGREES}) is read only for an angle (a state, "
                              "input, output or parameter whose unit is rad) in a NAME=VALUE option: give this value "
                              "as a number in its own unit")
    from robodyn.model.expr import parse_constant

    return parse_constant(text, where=where)

def _split_top_level(text: str) -> list[str]:
    """Split ``"a=1, b=atan2(1, 2)"`` at the commas that are not inside parentheses."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


class Quantity(NamedTuple):
    """A value of a ``NAME=VALUE`` option as written: the number and whether it was given in degrees."""

    value: float
    degrees: bool


def _pairs(text: str, where: str) -> list[tuple[str, str]]:
    """The ``(name, value text)`` pairs of ``"theta=pi, tau=0.5*9.81"``: names are identifiers, or identifiers joined
    by dots (a diagram's ``plant.q``), each given once."""
    pairs: dict[str, str] = {}
    for part in _split_top_level(text):
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or not all(is_valid_name(piece) for piece in name.split(".")):
            raise ExpressionError(f"{where}: expected name=value, got {part!r} (e.g. theta=pi/2)")
        if name in pairs:
            raise ExpressionError(f"{where}: {name!r} is given twice")
        pairs[name] = value
    return list(pairs.items())


def parse_assignments(text: str, *, where: str = "value") -> dict[str, float]:
    """Parse ``"theta=pi, tau=0.5*9.81"`` into ``{"theta": 3.14159..., "tau": 4.905}``.

    Names are identifiers, or identifiers joined by dots (a diagram's ``plant.q``); values are constants parsed
    by :func:`parse_number` (no unit); a name given twice is an error.
    """
    return {name: parse_number(value, where=f"{where} {name}") for name, value in _pairs(text, where)}


def parse_quantities(text: str, *, where: str = "value") -> dict[str, Quantity]:
    """:func:`parse_assignments` where a value may end with the unit ``deg`` (``"theta=90deg, tau=2"``): each value
    as written, with whether it is in degrees (:func:`in_units` converts them with the names' units)."""
    result: dict[str, Quantity] = {}
    for name, value in _pairs(text, where):
        number, degrees = split_degrees(value)
        if degrees and not number.strip():
            raise ExpressionError(f"{where} {name}: {value.strip()!r} has a unit but no number: write e.g. "
                                  f"{name}=90{DEGREES}")
        result[name] = Quantity(parse_number(number, where=f"{where} {name}"), degrees)
    return result


def in_units(given: Mapping[str, Quantity], units: Mapping[str, str], *, where: str
             ) -> tuple[dict[str, float], list[str]]:
    """The values of ``given`` in their names' own units, and a warning for each angle that looks like degrees.

    A value in degrees is converted to its name's angle unit (:data:`~robodyn.base.names.ANGLE_UNITS`: rad, or
    deg); one for a name whose unit is not an angle, or is not known, is refused (InputError naming it). A value of
    an angle in rad given without a unit and beyond a whole turn (:data:`~robodyn.base.names.TURN`) gets a warning
    naming the value and ``deg``.
    """
    values: dict[str, float] = {}
    notes: list[str] = []
    for name, (value, degrees) in given.items():
        unit = units.get(name, "").strip()
        if degrees:
            if unit not in ANGLE_UNITS:
                what = f"its unit is {unit!r}" if unit else "no unit is declared for it"
                raise InputError(f"{where} {name}={value:g}{DEGREES}: {name} is not an angle ({what}): only an angle "
                                 f"(unit rad) takes a value in degrees; give {name} in its own unit")
            value *= ANGLE_UNITS[unit]
        elif unit == "rad" and abs(value) > TURN:
            notes.append(f"{where} {name}={value:g}: angles are in rad, and {value:g} rad is {abs(value) / TURN:.3g} "
                         f"turns; for degrees write {name}={value:g}{DEGREES}")
        values[name] = value
    return values, notes
