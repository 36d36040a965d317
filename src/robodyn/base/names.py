"""Names and constants without sympy: what the numeric path needs from the expression grammar.

The safe parser (:mod:`robodyn.model.expr`) turns text into sympy expressions; importing it imports
sympy (about half a second). Checking a name, the names a model may not use, and recognising a plain number
such as ``10`` or ``-1e-6`` from the command line need none of that, so they live here, below the parser, which
imports them. Reading a value that may be an expression (``pi/2``, ``2*9.81``) — :func:`parse_number` and the
``NAME=VALUE`` readers — is :mod:`robodyn.model.quantities`', above both: it hands such text to the parser.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Final

__all__ = ["ANGLE_UNITS", "CONSTANT_NAMES", "DEGREES", "FUNCTION_ARGUMENTS", "FUNCTION_NAMES", "MAX_CONSTANT_EXPONENT",
           "MAX_DEPTH", "MAX_EXPONENT_DIGITS", "MAX_LENGTH", "RESERVED_NAMES", "TIME_NAME", "TURN", "did_you_mean",
           "is_qualified_name", "is_valid_name", "split_degrees"]

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


def split_degrees(text: str) -> tuple[str, bool]:
    """``text`` without a trailing unit ``deg``, and whether it had one: ``"90deg"`` -> ``("90", True)``; ``-45 deg``,
    ``(pi/4)deg`` likewise (the unit applies to the whole value); ``"pideg"`` is a name, not ``pi`` in degrees."""
    match = _DEGREES.search(text)
    return (text[:match.start()], True) if match else (text, False)


def did_you_mean(name: str, names: Sequence[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``names`` to an unknown ``name``, or ``""`` when none is close
    (the end of an error message naming what is known)."""
    import difflib  # for messages only

    close = difflib.get_close_matches(name, list(names), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""
