"""Where an estimator block rests (robodyn.control.estimation.rest): the plant's rest point and the prior
covariance of the steady-state filter, checked against scipy's DARE on the held model built here by hand, and as a
fixed point of the block's own update; its role.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

import robodyn
from robodyn.control.estimation.blocks import ekf, kalman, ukf
from robodyn.model.roles import EstimatorRole

T = 0.01
A = np.array([[0.0, 1.0], [-4.0, -0.4]])
B = np.array([[0.0], [1.0]])
C = np.array([[1.0, 0.0]])
UPPER = np.triu_indices(2)


def _spring() -> robodyn.LinearSystem:
    return robodyn.LinearSystem(A, B, C, np.zeros((1, 1)), states=["q", "v"], inputs=["f"],
                                outputs=["position"], name="spring")


def _prior(Phi: np.ndarray, H: np.ndarray, Qd: np.ndarray, R: np.ndarray) -> np.ndarray:
    """The filter's prior covariance: the DARE of the dual problem (scipy), independent of robodyn.kalman."""
    return scipy.linalg.solve_discrete_are(Phi.T, H.T, Qd, R)


def _van_loan(A_: np.ndarray, Qc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = A_.shape[0]
    V = scipy.linalg.expm(np.block([[-A_, Qc], [np.zeros((n, n)), A_.T]]) * T)
    Phi = V[n:, n:].T
    return Phi, Phi @ V[:n, n:]


def test_the_kalman_block_rests_at_the_held_plants_rest_point_with_the_dare_covariance() -> None:
    Qc, R, x0, P0 = np.diag([0.0, 0.3]), np.array([[0.02]]), np.array([0.5, -0.2]), np.diag([0.4, 0.9])
    block = kalman(_spring(), T, Qn=Qc, Rn=R, x0=x0, P0=P0)
    force = 0.8
    y = np.array([force / 4.0])  # the spring at rest under f: q = f / k, v = 0
    z = block.rest_state(0.0, np.zeros(5), np.concatenate([y, [force]]), np.zeros(0))
    assert z is not None
    Phi, Qd = _van_loan(A, Qc)
    P = _prior(Phi, C, Qd, R)
    np.testing.assert_allclose(x0 + z[:2], [force / 4.0, 0.0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(P0[UPPER] + z[2:], P[UPPER], rtol=1e-9, atol=0)  # two DARE solvers agree to ~1e-12
    # a fixed point of the block: its update maps the rest state to itself (to the Riccati solution's rounding)
    after = block.f_raw(0.0, z, np.concatenate([y, [force]]), np.zeros(0))
    np.testing.assert_allclose(after, z, rtol=0, atol=1e-12)


def test_a_measurement_no_rest_point_explains_gives_no_rest_state() -> None:
    block = kalman(_spring(), T, Qn=np.diag([0.0, 0.3]), Rn=np.array([[0.02]]))
    # at rest under f = 0.8 the position is 0.2, never 0.5
    assert block.rest_state(0.0, np.zeros(5), np.array([0.5, 0.8]), np.zeros(0)) is None


def test_the_ekf_rests_at_the_pendulums_equilibrium_with_the_linearizations_dare_covariance() -> None:
    pendulum = robodyn.load("pendulum")
    Qn, Rn = {"theta_dot": 0.05}, {"theta": 1e-3}
    block = ekf(pendulum, T, Qn, Rn, outputs=["theta"])
    theta = 0.3
    hold = robodyn.find_equilibrium(pendulum, {"theta": theta, "theta_dot": 0.0})[0].u  # the holding torque
    v = np.concatenate([[theta], hold])
    z = block.rest_state(0.0, np.zeros(5), v, np.zeros(0))
    assert z is not None
    np.testing.assert_allclose(z[:2], [theta, 0.0], rtol=0, atol=1e-9)  # find_equilibrium's tolerance
    linear = robodyn.linearize(pendulum, [theta, 0.0], hold)
    Phi, Qd = _van_loan(np.asarray(linear.A), np.diag([0.0, 0.05]))
    P = _prior(Phi, np.array([[1.0, 0.0]]), Qd, np.array([[1e-3]]))
    np.testing.assert_allclose(np.eye(2)[UPPER] + z[2:], P[UPPER], rtol=1e-8, atol=0)
    after = block.f_raw(0.0, z, v, np.zeros(0))
    np.testing.assert_allclose(after, z, rtol=0, atol=1e-9)  # the equilibrium's residual, through one RK4 step
    # inputs that hold no rest point there (the torque does not hold theta = 0.3): no rest state
    assert block.rest_state(0.0, np.zeros(5), np.array([theta, 0.0]), np.zeros(0)) is None


def test_the_ukf_rest_state_is_a_start_near_its_fixed_point() -> None:
    pendulum = robodyn.load("pendulum")
    block = ukf(pendulum, T, {"theta_dot": 0.05}, {"theta": 1e-3}, outputs=["theta"])
    v = np.array([0.0, 0.0])  # hanging, no torque
    z = block.rest_state(0.0, np.zeros(5), v, np.zeros(0))
    assert z is not None
    after = block.f_raw(0.0, z, v, np.zeros(0))
    # the unscented transform differs from the linearization at higher order in P (~1e-3 here): a start
    assert np.max(np.abs(after - z)) < 1e-3 * np.max(np.abs(z))


def test_an_estimator_says_what_it_estimates() -> None:
    block = kalman(_spring(), T, Qn=np.diag([0.0, 0.3]), Rn=np.array([[0.02]]))
    (role,) = block.roles()
    assert isinstance(role, EstimatorRole)
    assert role.plant == "spring" and role.states == ("q", "v")
    assert role.estimates == ("q_hat", "v_hat") and role.variances == ("P_q", "P_v")
    assert set(role.estimates + role.variances) <= set(block.outputs)
    assert robodyn.load("pendulum").roles() == () and robodyn.load("pendulum").rest_state(
        0.0, np.zeros(2), np.zeros(1), np.array(list(robodyn.load("pendulum").parameters.values()))) is None
