"""The derivatives at the knots (control/tracking/knots.py): the compiled call through the model's addresses against
the closed forms of the catalog pendulum (theta'' = tau - g sin theta, m = l = I = 1) and against the model's own
Python path (jacobians_raw, f_many), for held and linear inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import NumericalError
from robodyn.control.tracking.knots import KnotDerivatives, compiled_functions, derivatives_at_knots

G = 9.81


def python_derivatives(model, t, x, u, p, hold: bool) -> KnotDerivatives:
    """The same quantities one point at a time through the model's Python entry points (jacobians_raw, f_raw)."""
    A = np.array([model.jacobians_raw(float(tk), xk, uk, p)[0] for tk, xk, uk in zip(t, x, u)])
    B = np.array([model.jacobians_raw(float(tk), xk, uk, p)[1] for tk, xk, uk in zip(t, x, u)])
    arriving = u[:-1] if hold else u[1:]
    d0 = np.array([model.f_raw(float(tk), xk, uk, p) for tk, xk, uk in zip(t[:-1], x[:-1], u[:-1])])
    d1 = np.array([model.f_raw(float(tk), xk, uk, p) for tk, xk, uk in zip(t[1:], x[1:], arriving)])
    return KnotDerivatives(A, B, d0, d1)


@pytest.fixture(scope="module")
def pendulum():
    return robodyn.load("pendulum")


@pytest.mark.parametrize("hold", [True, False])
def test_compiled_derivatives_equal_the_closed_forms(pendulum, hold: bool) -> None:
    assert compiled_functions(pendulum) is not None  # the compiled path is the one under test
    rng = np.random.default_rng(5)
    t = np.linspace(0.0, 1.0, 9)
    x, u = rng.standard_normal((9, 2)), rng.standard_normal((9, 1))
    p = pendulum.parameter_vector()
    found = derivatives_at_knots(pendulum, t, x, u, p, hold)
    for k in range(9):
        A = np.array([[0.0, 1.0], [-G * math.cos(x[k, 0]), 0.0]])
        # the compiled Jacobian evaluates the same expressions: equal to a few ulps
        assert np.allclose(found.A[k], A, rtol=1e-14, atol=1e-14) and np.allclose(found.B[k], [[0.0], [1.0]])
    arriving = u[:-1, 0] if hold else u[1:, 0]
    assert np.allclose(found.d0[:, 1], u[:-1, 0] - G * np.sin(x[:-1, 0]), rtol=1e-14, atol=1e-14)
    assert np.allclose(found.d1[:, 1], arriving - G * np.sin(x[1:, 0]), rtol=1e-14, atol=1e-14)
    assert np.array_equal(found.d0[:, 0], x[:-1, 1]) and np.array_equal(found.d1[:, 0], x[1:, 1])
    reference = python_derivatives(pendulum, t, x, u, p, hold)
    for mine, theirs in zip(found, reference):
        assert np.allclose(mine, theirs, rtol=1e-14, atol=1e-14)


def test_non_finite_derivatives_are_refused(pendulum) -> None:
    t = np.array([0.0, 1.0])
    x = np.array([[0.0, 0.0], [math.inf, 0.0]])  # sin and cos of inf are NaN
    with pytest.raises(NumericalError, match="not finite at t = 1"):
        derivatives_at_knots(pendulum, t, x, np.zeros((2, 1)), pendulum.parameter_vector(), True)
