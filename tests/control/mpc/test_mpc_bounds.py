"""The MPC's bounds as problem files write them: names, null and infinities, expressions, and the refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robodyn.base.errors import InputError, UnknownNameError
from robodyn.control.mpc.bounds import box_bounds

STATES, INPUTS = ("x", "theta"), ("F",)


def test_bounds_by_name() -> None:
    states, inputs = box_bounds({"inputs": {"F": [-10, 10]}, "states": {"theta": [None, "pi/2"]}}, STATES, INPUTS)
    np.testing.assert_array_equal(inputs, [[-10.0, 10.0]])
    np.testing.assert_array_equal(states, [[-math.inf, math.inf], [-math.inf, math.pi / 2]])
    assert not states.flags.writeable


def test_no_bounds_and_infinities() -> None:
    states, inputs = box_bounds(None, STATES, INPUTS)
    assert np.all(np.isinf(states)) and np.all(np.isinf(inputs))
    states, _ = box_bounds({"states": {"x": [-math.inf, 1.0]}}, STATES, INPUTS)
    np.testing.assert_array_equal(states[0], [-math.inf, 1.0])
    _, inputs = box_bounds({"inputs": {"F": [2.0, 2.0]}}, STATES, INPUTS)  # an equality is a bound too
    np.testing.assert_array_equal(inputs, [[2.0, 2.0]])


@pytest.mark.parametrize(("spec", "error", "match"), [
    ({"inputs": {"G": [-1, 1]}}, UnknownNameError, "unknown input 'G'"),
    ({"states": {"y": [-1, 1]}}, UnknownNameError, "unknown state 'y'"),
    ({"outputs": {}}, UnknownNameError, "unknown bound kind 'outputs'"),
    ({"inputs": {"F": [1, -1]}}, InputError, "lower bound 1 is above the upper bound -1"),
    ({"inputs": {"F": [math.nan, 1]}}, InputError, "NaN"),
    ({"inputs": {"F": [math.inf, math.inf]}}, InputError, "admits no value"),
    ({"inputs": {"F": [1]}}, InputError, r"expected \[lower, upper\]"),
    ({"inputs": {"F": "1"}}, InputError, r"expected \[lower, upper\]"),
    ({"inputs": {"F": [True, 1]}}, InputError, "expected a number"),
    ({"inputs": [[-1, 1]]}, InputError, "expected a mapping"),
])
def test_refusals_are_one_line(spec: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match) as caught:
        box_bounds(spec, STATES, INPUTS)
    assert "\n" not in str(caught.value)
