"""The pendulum closed by an LQR on the estimate of an EKF fed a noisy angle sensor (a seeded WhiteNoise diagram
input summed to the plant's angle), simulated as one diagram: the estimate follows the truth within its own
covariance, the loop settles, and a seed gives the same run bit for bit."""

from __future__ import annotations

import numpy as np

import robodyn
from robodyn.control.estimation.blocks import ekf
from robodyn.signals import WhiteNoise

T = 0.01  # the sensor's and the estimator's period
SENSOR_STD = 0.05  # rad


def _loop() -> robodyn.Diagram:
    pendulum = robodyn.load("pendulum")
    K = robodyn.lqr(robodyn.linearize(pendulum, [0.0, 0.0], [0.0]), np.diag([10.0, 1.0]), [[1.0]]).K
    estimator = ekf(pendulum, T, Qn={"theta_dot": 0.01}, Rn={"theta": SENSOR_STD ** 2}, outputs=["theta"],
                    P0=np.diag([1.0, 1.0]))
    blocks = {"plant": pendulum, "sensor": robodyn.blocks.sum("++"), "ekf": estimator,
              "lqr": robodyn.blocks.lti(D=-K)}
    wires = ["plant.theta -> sensor.u1", "sensor.y -> ekf.theta", "ekf.theta_hat -> lqr.u1",
             "ekf.theta_dot_hat -> lqr.u2", "lqr.y1 -> plant.tau", "lqr.y1 -> ekf.tau"]
    outputs = {"theta": "plant.theta", "theta_dot": "plant.theta_dot", "theta_hat": "ekf.theta_hat",
               "theta_dot_hat": "ekf.theta_dot_hat", "P_theta": "ekf.P_theta", "P_theta_dot": "ekf.P_theta_dot"}
    return robodyn.Diagram(blocks, wires, inputs={"noise": "sensor.u2"}, outputs=outputs, name="lqg")


def test_the_ekf_follows_the_pendulum_under_lqr_and_a_seed_repeats_the_run() -> None:
    diagram = _loop()
    x0 = np.zeros(diagram.n_states)
    x0[0] = 0.8  # the pendulum released at 0.8 rad; the estimate starts at 0 with P0 = I
    run = robodyn.simulate(diagram, 3.0, x0, {"noise": WhiteNoise(SENSOR_STD, T, seed=2026)})
    y = dict(zip(diagram.outputs, run.y.T, strict=True))
    assert run.t.size == 301  # one row per instant
    later = run.t >= 0.2  # past the first estimates from P0 = I
    for state in ("theta", "theta_dot"):
        error = np.abs(y[state] - y[f"{state}_hat"])
        # a consistent filter's error is ~ N(0, P_k|k): beyond 4 sigma at 6e-5 of the instants; 95% leaves room for
        # what the EKF linearizes (the truth has no process noise: its Qn is conservative)
        assert np.mean(error[later] < 4.0 * np.sqrt(y[f"P_{state}"][later])) >= 0.95, state
    assert np.sqrt(y["P_theta"][-1]) < SENSOR_STD  # filtering beats one measurement
    assert abs(y["theta"][0]) == 0.8 and np.max(np.abs(y["theta"][run.t >= 2.5])) < 0.2  # the loop settles
    again = robodyn.simulate(diagram, 3.0, x0, {"noise": WhiteNoise(SENSOR_STD, T, seed=2026)})
    np.testing.assert_array_equal(again.x, run.x)  # the same seed: the same run, bit for bit
    np.testing.assert_array_equal(again.y, run.y)
    other = robodyn.simulate(diagram, 3.0, x0, {"noise": WhiteNoise(SENSOR_STD, T, seed=2027)})
    assert not np.array_equal(other.x[:, 2], run.x[:, 2])
