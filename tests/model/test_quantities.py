"""Reading values: a number or a constant expression (parse_number), NAME=VALUE lists (parse_assignments).

A plain number is read without the parser and must give the parser's double; expressions go to the parser, whose
messages name the option (``--x0``) and the name (``--at a``). Units (parse_quantities, in_units) are tested with
the command line's options in tests/cli/test_cli_units.py.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from robodyn.base.errors import ExpressionError
from robodyn.model.expr import parse_constant
from robodyn.model.quantities import parse_assignments, parse_number

# --- numbers and assignments -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pi/2", math.pi / 2),
        ("2*9.81", 19.62),
        ("-1.5", -1.5),
        ("e", math.e),
        ("atan2(1, 2)", math.atan2(1, 2)),
        ("sqrt(2)/2", math.sqrt(2) / 2),
        ("1e-3", 1e-3),
        (3, 3.0),
        (0.25, 0.25),
    ],
)
def test_parse_number(text, expected):
    value = parse_number(text)
    assert isinstance(value, float)
    assert value == pytest.approx(expected, rel=1e-15, abs=0)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("x", "unknown name (known: e, pi): 'x'"),
        ("t", "unknown name"),
        ("acos(2)", "is not a finite real number"),
        ("exp(1000)", "number too large for double precision"),
        ("1/0", "division by zero"),
        ("", "empty expression"),
        ("sin", "used without calling it"),
    ],
)
def test_parse_number_rejects(text, fragment):
    with pytest.raises(ExpressionError, match=rf"^--x0: .*{re.escape(fragment)}"):
        parse_number(text, where="--x0")


def test_parse_assignments_splits_only_top_level_commas():
    result = parse_assignments("theta=pi, tau=atan2(1, 2)")
    assert list(result) == ["theta", "tau"]
    assert result["theta"] == pytest.approx(math.pi, rel=1e-15)
    assert result["tau"] == pytest.approx(math.atan2(1, 2), rel=1e-15)
    assert parse_assignments(" a = 1 ,b=max(1, 2, 3),, ") == {"a": 1.0, "b": 3.0}
    assert parse_assignments("") == {}


def test_parse_assignments_rejects_a_name_given_twice():
    with pytest.raises(ExpressionError, match=r"^--at: 'a' is given twice"):
        parse_assignments("a=1, b=2, a=3", where="--at")


@pytest.mark.parametrize("text", ["=1", "1a=2", "a", "a b=1", "lambda=1", "a..b=1", "a.=1", ".a=1", "a.1=1",
                                  "a[0]=1", "sin(x)=1", "é=1"])  # a.b is a diagram's name (block.state)
def test_parse_assignments_rejects_malformed_names(text):
    with pytest.raises(ExpressionError, match=r"^--at: expected name=value, got .* \(e\.g\. theta=pi/2\)"):
        parse_assignments(text, where="--at")


@pytest.mark.parametrize(("text", "fragment"), [("a=", "empty expression"), ("a=x", "unknown name"),
                                                 ("a==1", "invalid syntax"), ("a=atan2(1, 2", "invalid syntax"),
                                                 ("a=__import__('os')", "unknown function")])
def test_parse_assignments_rejects_bad_values_naming_the_name(text, fragment):
    with pytest.raises(ExpressionError, match=rf"^--at a: .*{re.escape(fragment)}"):
        parse_assignments(text, where="--at")


# --- plain numbers, read without the parser --------------------------------------------------------------


@pytest.mark.parametrize("text", ["10", "-0", "-0.0", "+2.5", "1e-6", "-1E+300", ".5", "3.", "0.1", " 7 ",
                                  "123456789012345", "9007199254740993", "1_000", "1e400", "pi", "2*9.81", 3, -0.0])
def test_plain_numbers_are_read_as_the_parser_reads_them(text):
    try:
        expected = repr(parse_constant(text))
    except ExpressionError as exc:
        with pytest.raises(ExpressionError, match=re.escape(str(exc))):
            parse_number(text)
        return
    assert repr(parse_number(text)) == expected


def test_random_decimal_literals_are_read_as_the_parser_reads_them():
    rng = np.random.default_rng(7)
    for value in rng.normal(size=200) * 10.0 ** rng.integers(-300, 300, size=200):
        for text in (repr(float(value)), f"{value:.6e}", f"{value:.17g}"):
            assert repr(parse_number(text)) == repr(parse_constant(text))
