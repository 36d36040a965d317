"""linearize(): exact paths against closed forms, central differences within their error estimate."""

from __future__ import annotations

import math

import numpy as np
import pytest

import robodyn
from robodyn.analysis.linearize import linearize
from robodyn.errors import InputError

G = 9.81  # the catalog pendulum: m = 1, l = 1, I = 1


@pytest.mark.parametrize(("theta", "entry"), [(0.0, -G), (math.pi, G), (math.pi / 4, -G * math.cos(math.pi / 4))])
def test_pendulum_matches_closed_form(theta, entry):
    linear = linearize(robodyn.load("pendulum"), {"theta": theta, "theta_dot": 0.0})
    expected_a = np.array([[0.0, 1.0], [entry, 0.0]])  # d/dtheta of -m g l sin(theta) / I
    np.testing.assert_allclose(linear.A, expected_a, rtol=0, atol=1e-13)
    np.testing.assert_allclose(linear.B, [[0.0], [1.0]], rtol=0, atol=1e-13)
    assert linear.method == "manipulator" and linear.error_estimate == 0.0
    np.testing.assert_array_equal(linear.x_op, [theta, 0.0])


def test_central_differences_agree_within_their_estimate():
    symbolic = robodyn.load("double_pendulum")
    callable_model = robodyn.System(lambda t, x, u, p: symbolic.f(t, x, u), symbolic.states, symbolic.inputs,
                                    name="dp_callable")
    rng = np.random.default_rng(3)
    for _ in range(5):
        x, u = rng.uniform(-1.5, 1.5, 4), rng.uniform(-1, 1, 2)
        exact = linearize(symbolic, x, u)
        approx = linearize(callable_model, x, u)
        assert approx.method == "central"
        # The Richardson estimate bounds the truncation error; rounding adds ~eps^(2/3) ~ 4e-11 relative.
        bound = 10 * approx.error_estimate + 1e-9 * (1 + np.max(np.abs(exact.A)))
        assert np.max(np.abs(approx.A - exact.A)) <= bound
        assert np.max(np.abs(approx.B - exact.B)) <= bound


def test_linear_models_are_their_own_linearization():
    joint = robodyn.load("joint")
    first_order = joint.to_linear()
    for model in (joint, first_order):
        linear = linearize(model, [0.3, -0.2], [1.0])
        np.testing.assert_allclose(linear.A, first_order.A, rtol=0, atol=1e-12)
        np.testing.assert_allclose(linear.B, first_order.B, rtol=0, atol=1e-12)


def test_bad_input():
    pendulum = robodyn.load("pendulum")
    with pytest.raises(InputError, match="unknown linearization method"):
        linearize(pendulum, [0, 0], method="magic")
    with pytest.raises(InputError, match="not available"):
        linearize(pendulum, [0, 0], method="symbolic")
    with pytest.raises(robodyn.ShapeError):
        linearize(pendulum, [0, 0, 0])
    with pytest.raises(InputError, match="not finite"):
        linearize(pendulum, [math.nan, 0])
