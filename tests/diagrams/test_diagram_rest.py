"""What a diagram assembles from its blocks (robodyn.diagrams.rest): the rest state (a start at which the closed loop
of examples/cart_pole_mpc_ekf.yaml is at rest), the blocks' roles qualified, and the diagram with more outputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError
from robodyn.model.roles import EstimatorRole, PredictiveRole

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def loop() -> robodyn.Diagram:
    return robodyn.load(EXAMPLES / "cart_pole_mpc_ekf.yaml")


def test_the_rest_state_of_the_mpc_ekf_loop_is_an_operating_point(loop) -> None:
    p, u = loop.parameter_vector(), np.zeros(loop.n_inputs)
    start = np.zeros(loop.n_states)
    rest = loop.rest_state(0.0, start, u, p)
    # the EKF's covariance offsets moved from 0 (P = P0 = I) to the Riccati solution's (P ~ 1e-4 .. 1e-2)
    assert np.all(np.abs(rest[8:]) > 0.0) and np.all(rest[:8] == 0.0)
    residual = loop.f_raw(0.0, rest, u, p)
    assert np.max(np.abs(residual)) < 1e-15  # the DARE's rounding: the search takes the start as it is
    assert np.max(np.abs(loop.f_raw(0.0, start, u, p))) > 0.5  # where it started from is far from rest
    point = robodyn.find_equilibrium(loop)[0]
    np.testing.assert_array_equal(point.x, rest)


def test_a_diagram_without_estimators_offers_no_rest_state() -> None:
    model = robodyn.load(EXAMPLES / "motor_joint_pid.yaml")
    assert model.rest_state(0.0, np.zeros(model.n_states), np.zeros(model.n_inputs), model.parameter_vector()) is None
    assert model.roles() == ()


def test_the_roles_are_qualified_and_the_estimator_finds_its_truth(loop) -> None:
    estimator, controller = loop.roles()
    assert isinstance(estimator, EstimatorRole) and isinstance(controller, PredictiveRole)
    assert estimator.block == "ekf" and estimator.estimates[1] == "ekf.theta_hat"
    assert estimator.variances[1] == "ekf.P_theta"
    assert estimator.truth == ("plant.x", "plant.theta", "plant.x_dot", "plant.theta_dot")
    assert controller.block == "mpc" and controller.reads[0] == "mpc.x" and controller.applies == ("mpc.F",)
    assert controller.status == "mpc.status" and controller.statuses[0] == "solved"
    np.testing.assert_array_equal(controller.input_bounds, [[-5.0, 5.0]])
    assert controller.state_bounds[0].tolist() == [-1.0, 1.0] and np.all(np.isinf(controller.state_bounds[1:]))
    activity = controller.plan(np.array([0.0, 0.6, 0.0, 0.0]))  # a large tilt: the force saturates
    assert activity.status == "solved" and activity.inputs[0].sum() == 1  # one of the force's two bounds
    assert not controller.plan(np.zeros(4)).inputs.any()


def test_with_outputs_adds_signals_and_keeps_the_numbers(loop) -> None:
    wider = loop.with_outputs({"theta_dot_estimate": "ekf.theta_dot_hat", "read": "mpc.theta"})
    assert wider.outputs == (*loop.outputs, "theta_dot_estimate", "read")
    p, u = loop.parameter_vector(), np.array([0.01, -0.02])
    x = loop.rest_state(0.0, np.zeros(loop.n_states), np.zeros(2), p)
    x[1] += 0.1
    np.testing.assert_array_equal(wider.f_raw(0.0, x, u, p), loop.f_raw(0.0, x, u, p))
    y, y_wide = loop.h_raw(0.0, x, u, p), wider.h_raw(0.0, x, u, p)
    np.testing.assert_array_equal(y_wide[:loop.n_outputs], y)
    # mpc.theta is driven by ekf.theta_hat: the same signal
    assert y_wide[-1] == y[loop.outputs.index("theta_hat")] and y_wide[-1] != 0.0
    with pytest.raises(InputError, match="exists already"):
        loop.with_outputs({"theta": "ekf.theta_hat"})
    with pytest.raises(InputError, match="no block signals"):
        robodyn.load("pendulum").with_outputs({"y": "a.b"})
