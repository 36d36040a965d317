"""Names and constants without sympy: what the numeric path needs from the expression grammar.

The safe parser (:mod:`robodyn.model.expr`) turns text into sympy expressions; importing it imports
sympy (about half a second). Checking a name, the names a model may not use, and reading a plain number
such as ``10`` or ``-1e-6`` from the command line need none of that, so they live here; everything else
(``pi/2``, ``2*9.81``) is handed to the parser. :mod:`robodyn.model.expr` re-exports these names.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Final, NamedTuple

from robodyn.base.errors import ExpressionError, InputError

__all__ = ["ANGLE_UNITS", "CONSTANT_NAMES", "DEGREES", "FUNCTION_ARGUMENTS", "FUNCTION_NAMES", "MAX_CONSTANT_EXPONENT",
           "MAX_DEPTH", "MAX_EXPONENT_DIGITS", "MAX_LENGTH", "RESERVED_NAMES", "TIME_NAME", "TURN", "Quantity",
           "did_you_mean", "in_units", "is_qualified_name", "is_valid_name", "parse_assignments", "parse_number",
           "parse_quantities", "split_degrees"]

MAX_LENGTH: Final = 20_000  # Characters in one expression; longer text is rejected before parsing.
MAX_DEPTH: Final = 100  # Nesting depth of the expression tree.

#: The functions expressions may call and the least and most arguments each takes
#: (:data:`robodyn.model.expr.FUNCTIONS` has their sympy forms).
FUNCTION_ARGUMENTS: Final[Mapping[str, tuple[int, int]]] = {
    "sin": (1, 1), "cos": (1, 1), "tan": (1, 1), "asin": (1, 1), "acos": (1, 1), "atan": (1, 1), "atan2": (2, 2),
    "sinh": (1, 1), "cosh": (1, 1), "tanh": (1, 1), "exp": (1, 1), "log": (1, 1), "sqrt": (1, 1), "abs": (1, 1),
    "sign": (1, 1), "min": (2, 64), "max": (2, 64),
}
FUNCTION_NAMES: Final = frozenset(FUNCTION_ARGUMENTS)
MAX_EXPONENT_DIGITS: Final = 307  # A constant power must stay within 1e-307 .. 1e307 (double range).
MAX_CONSTANT_EXPONENT: Final = 10_000  # The largest constant exponent of a base that is not a number.
#: The named constants (``pi``, ``e``).
CONSTANT_NAMES: Final = frozenset({"pi", "e"})
#: The name of time in expressions.
TIME_NAME: Final = "t"
#: Names a model may not use for its own states, inputs, outputs or parameters.
RESERVED_NAMES: Final = FUNCTION_NAMES | CONSTANT_NAMES | {TIME_NAME}

_NAME_PATTERN: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_KEYWORDS: Final = frozenset(
    "False None True and as assert async await break class continue def del elif else except finally "
    "for from global if import in is lambda nonlocal not or pass raise return try while with yield".split()
)
_PLAIN_NUMBER: Final = re.compile(r"\s*([-+]?)\s*(\d+(\.\d*)?|\.\d+)(([eE][-+]?\d+)?)\s*\Z")  # no names, no operators
_EXACT_INTEGER: Final = 2**53  # Integers below it are exact doubles (as the parser's constant folding gives).
#: The unit a command-line value may end with: degrees (``90deg``, ``-45 deg``), for an angle only.
DEGREES: Final = "deg"
_DEGREES: Final = re.compile(r"(?<![A-Za-z_])deg\s*\Z")  # "deg" at the end, not the end of a longer name
#: The units of angles, and one degree in each: a value in degrees is converted to its name's unit.
ANGLE_UNITS: Final[Mapping[str, float]] = {"rad": math.pi / 180.0, "deg": 1.0}
#: A whole turn in rad. An angle given in rad beyond it (``theta=180``) was probably meant in degrees: the command
#: line warns, naming the value and ``deg``.
TURN: Final = 2.0 * math.pi


def is_valid_name(name: object) -> bool:
    """Whether ``name`` can name a state, input, output or parameter (ASCII identifier, not a keyword)."""
    return isinstance(name, str) and bool(_NAME_PATTERN.match(name)) and name not in _KEYWORDS


def is_qualified_name(name: object) -> bool:
    """Whether ``name`` names a model's quantity: a valid name, or a diagram's ``block.name`` (blocks nested in
    blocks: ``outer.inner.name``), each part a valid name."""
    return isinstance(name, str) and all(is_valid_name(part) for part in name.split("."))


def plain_number(text: str | int | float) -> float | None:
    """The value of a plain decimal literal (``10``, ``-2.5``, ``1e-6``) or finite number, else None.

    The value is the one the parser gives (the literal's double: Python's float() and its parser round a decimal
    literal alike, correctly); anything else — names, operators, huge integers, non-finite values, an integer with
    leading zeros (which Python's grammar refuses) — is left to the parser and its messages.
    """
    if isinstance(text, bool):
        return None
    if isinstance(text, float):
        return text + 0.0 if math.isfinite(text) else None  # + 0.0: -0.0 is 0.0, as the parser folds it
    if isinstance(text, int):
        return float(text) if abs(text) < _EXACT_INTEGER else None
    if not isinstance(text, str) or len(text) > 100:
        return None
    match = _PLAIN_NUMBER.match(text)
    if match is None:
        return None
    sign, literal, _, _, exponent = match.groups()
    if "." not in literal and exponent is None:  # an integer literal
        if literal[0] == "0" and literal.strip("0"):
            return None  # "007": not a Python literal
        value = int(literal)
        if value >= _EXACT_INTEGER:
            return None
    number = float(literal + (exponent or ""))
    if not math.isfinite(number):
        return None
    return (-number if sign == "-" else number) + 0.0  # + 0.0: "-0" is 0.0, as the parser folds it


def parse_number(text: str | int | float, *, where: str = "value") -> float:
    """Parse a constant such as ``"10"``, ``"pi/2"`` or ``"2*9.81"`` into a finite float.

    Plain numbers are read here; expressions go through the safe parser (:mod:`robodyn.model.expr`,
    which imports sympy).
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


def split_degrees(text: str) -> tuple[str, bool]:
    """``text`` without a trailing unit ``deg``, and whether it had one: ``"90deg"`` -> ``("90", True)``; ``-45 deg``,
    ``(pi/4)deg`` likewise (the unit applies to the whole value); ``"pideg"`` is a name, not ``pi`` in degrees."""
    match = _DEGREES.search(text)
    return (text[:match.start()], True) if match else (text, False)


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

    A value in degrees is converted to its name's angle unit (:data:`ANGLE_UNITS`: rad, or deg); one for a name
    whose unit is not an angle, or is not known, is refused (InputError naming it). A value of an angle in rad
    given without a unit and beyond a whole turn (:data:`TURN`) gets a warning naming the value and ``deg``.
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


def did_you_mean(name: str, names: Sequence[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``names`` to an unknown ``name``, or ``""`` when none is close
    (the end of an error message naming what is known)."""
    import difflib  # for messages only

    close = difflib.get_close_matches(name, list(names), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""
