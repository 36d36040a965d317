"""The MPC's prediction model: the exact zero-order hold of a continuous-time system (against scipy's cont2discrete),
a discrete-time system as it is, a nonlinear model linearized (against robodyn.linearize and an integration of the
affine drift by scipy's solve_ivp)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.signal import cont2discrete

import robodyn
from robodyn.base.errors import InputError
from robodyn.control.mpc.plant import discrete_plant


def test_continuous_linear_system_is_held_exactly() -> None:
    A = np.array([[0.0, 1.0], [-100.0, -10.0]])  # the joint: J = 0.01, b = 0.1, k = 1
    B = np.array([[0.0], [100.0]])
    plant = discrete_plant(robodyn.LinearSystem(A, B, states=["q", "w"], inputs=["u"]), dt=0.01)
    Ad, Bd, *_ = cont2discrete((A, B, np.eye(2), np.zeros((2, 1))), 0.01, method="zoh")
    # both are expm of the same block matrix (scipy's Padé of degree 13 with scaling): rounding, 1e-13 of |Ad|
    np.testing.assert_allclose(plant.A, Ad, rtol=0, atol=1e-13)
    np.testing.assert_allclose(plant.B, Bd, rtol=0, atol=1e-13)
    assert not plant.c.any() and not plant.x_op.any() and not plant.u_op.any()
    assert plant.dt == 0.01 and plant.states == ("q", "w") and not plant.linearized


def test_model_linear_by_construction_uses_its_own_matrices() -> None:
    joint = robodyn.load("joint")
    plant = discrete_plant(joint, dt=0.02)
    linear = joint.linear_model()
    Ad, Bd, *_ = cont2discrete((linear.A, linear.B, linear.C, linear.D), 0.02, method="zoh")
    np.testing.assert_allclose(plant.A, Ad, atol=1e-13)  # rounding, as above
    np.testing.assert_allclose(plant.B, Bd, atol=1e-13)
    with pytest.raises(InputError, match="is linear"):
        discrete_plant(joint, dt=0.02, x_op=[0.1, 0.0])


def test_discrete_system_is_taken_as_it_is() -> None:
    system = robodyn.LinearSystem([[1.0, 0.1], [0.0, 1.0]], [[0.005], [0.1]], dt=0.1)
    plant = discrete_plant(system)
    np.testing.assert_array_equal(plant.A, system.A)
    np.testing.assert_array_equal(plant.B, system.B)
    assert discrete_plant(system, dt=0.1).dt == 0.1
    with pytest.raises(InputError, match=r"discrete-time with dt = 0\.1"):
        discrete_plant(system, dt=0.05)


def test_nonlinear_model_at_its_equilibrium() -> None:
    cart = robodyn.load("cart_pole")
    plant = discrete_plant(cart, dt=0.02)  # default: x_op = 0 (upright), u_op its holding input (0)
    linear = robodyn.linearize(cart, np.zeros(4), np.zeros(1))
    Ad, Bd, *_ = cont2discrete((linear.A, linear.B, linear.C, linear.D), 0.02, method="zoh")
    np.testing.assert_allclose(plant.A, Ad, atol=1e-13)  # rounding, as above
    np.testing.assert_allclose(plant.B, Bd, atol=1e-13)
    np.testing.assert_allclose(plant.c, 0.0, atol=1e-15)  # f(0, 0) = 0 exactly: no drift
    assert plant.linearized


def test_nonlinear_model_off_equilibrium_holds_its_drift() -> None:
    pendulum = robodyn.load("pendulum")
    x_op, u_op, dt = np.array([0.5, 0.2]), np.array([1.0]), 0.05
    plant = discrete_plant(pendulum, dt=dt, x_op=x_op, u_op=u_op)
    linear = robodyn.linearize(pendulum, x_op, u_op)
    f0 = pendulum.f(0.0, x_op, u_op)
    # c is the deviation after dt of dx' = A dx + f0 from dx = 0 with du = 0: integrated by scipy (DOP853, rtol
    # 1e-12: its error ~1e-13 of |c| ~ 0.05)
    drift = solve_ivp(lambda t, y: linear.A @ y + f0, (0.0, dt), np.zeros(2), method="DOP853", rtol=1e-12,
                      atol=1e-14).y[:, -1]
    np.testing.assert_allclose(plant.c, drift, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(plant.x_op, x_op)
    np.testing.assert_allclose(plant.u_op, u_op)


def test_default_input_holds_the_state() -> None:
    pendulum = robodyn.load("pendulum")  # I theta'' + m g l sin(theta) = tau; m = l = 1, g = 9.81
    plant = discrete_plant(pendulum, dt=0.01, x_op=[0.5, 0.0])
    np.testing.assert_allclose(plant.u_op, [9.81 * np.sin(0.5)], rtol=1e-12)
    np.testing.assert_allclose(plant.c, 0.0, atol=1e-14)  # held: f(x_op, u_op) = 0 to rounding


def test_refusals() -> None:
    system = robodyn.LinearSystem([[0.0, 1.0], [0.0, 0.0]], [[0.0], [1.0]])
    with pytest.raises(InputError, match="continuous-time: give the sample period"):
        discrete_plant(system)
    with pytest.raises(InputError, match="no inputs"):
        discrete_plant(robodyn.LinearSystem([[-1.0]]), dt=0.1)
    with pytest.raises(InputError, match="expected a robodyn model"):
        discrete_plant(np.eye(2), dt=0.1)  # type: ignore[arg-type]
