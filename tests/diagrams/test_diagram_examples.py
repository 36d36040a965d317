"""The diagram examples of issue 26 against closed forms: motor + joint + PD's step response (the exact path), the
arm with motors trimmed with its tool at a height, the upright pendulum's LQR loop, the arm under its sampled
controller."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn import blocks

EXAMPLES = Path(__file__).parents[2] / "examples"
J, b, k = 0.01, 0.1, 1.0  # the catalog joint
R, L, kt, ke, N = 2.0, 0.5e-3, 0.1, 0.1, 1.0
kp, kd = 20.0, 1.0


def test_motor_joint_pd_step_response_is_the_closed_form() -> None:
    """A PD on the angle and the speed (a static lti block) makes motor + joint a third-order linear system:
    q/r = N kt kp / ((J s^2 + b s + k)(L s + R) + N^2 kt ke s + N kt (kp + kd s)); its step response by partial
    fractions against the exact path (matrix exponentials)."""
    diagram = robodyn.Diagram(
        {"plant": robodyn.load("joint"), "motor": blocks.dc_motor(R=R, L=L, kt=kt, ke=ke, N=N),
         "pd": blocks.lti(D=[[kp, -kp, -kd]], inputs=["r", "q", "qd"], outputs=["v"])},
        ["pd.v -> motor.v", "motor.tau -> plant.u", "plant.q -> pd.q", "plant.q_dot -> pd.qd",
         "plant.q_dot -> motor.omega"], inputs={"r": "pd.r"}, outputs={"q": "plant.q"})
    assert diagram.n_states == 3
    grid = np.linspace(0.0, 0.5, 51)
    trajectory = robodyn.simulate(diagram, 0.5, np.zeros(3), 1.0, method="exact", t_eval=grid)
    assert trajectory.stats.path == "exact"
    num = N * kt * kp
    den = np.polyadd(np.polyadd(np.polymul([J, b, k], [L, R]), [N * N * kt * ke, 0.0]), [N * kt * kd, N * kt * kp])
    poles = np.roots(den)
    slope = np.polyder(den)
    closed = num / den[-1] + sum(num / (pole * np.polyval(slope, pole)) * np.exp(pole * grid) for pole in poles)
    np.testing.assert_allclose(trajectory.y[:, 0], closed.real, rtol=1e-10, atol=1e-12)


def test_the_arm_with_motors_is_trimmed_with_its_tool_at_a_height() -> None:
    model = robodyn.load(EXAMPLES / "arm_motors.yaml")
    points = robodyn.find_equilibrium(model, fix={"arm.elbow": 0.5}, targets={"tip_z": 0.6})
    point = next(p for p in points if -np.pi < p.x[0] <= np.pi and p.u[0] > 0)
    q1, q2 = point.x[0], point.x[1]
    assert q2 == 0.5 and np.abs(point.x[2:4]).max() < 1e-20  # at rest
    assert model.h(0.0, point.x, point.u)[1] == pytest.approx(0.6, abs=1e-12)
    assert 1.0 * np.sin(q1) + 0.8 * np.sin(q1 + q2) == pytest.approx(0.6, abs=1e-12)  # l1 sin q1 + l_tool sin(...)
    gravity = np.array([(2.0 * 0.5 + 1.0 * 1.0) * 9.81 * np.cos(q1) + 1.0 * 0.4 * 9.81 * np.cos(q1 + q2),
                        1.0 * 0.4 * 9.81 * np.cos(q1 + q2)])
    motor = {"R": 0.5, "kt": 0.05, "N": 20.0}
    np.testing.assert_allclose(point.u, motor["R"] * gravity / (motor["N"] * motor["kt"]), rtol=1e-10)
    drift = robodyn.simulate(model, 1.0, point.x, {"v1": point.u[0], "v2": point.u[1]}, rtol=1e-12, atol=1e-14)
    assert np.abs(drift.x - point.x).max() <= 1e-9


def test_the_pendulum_lqr_diagram_is_the_closed_loop_model() -> None:
    diagram = robodyn.load(EXAMPLES / "pendulum_lqr_diagram.yaml")
    flat = robodyn.load(EXAMPLES / "pendulum_lqr_closed_loop.yaml")
    upright = np.array([np.pi, 0.0])
    ours = robodyn.linearize(diagram, upright, [np.pi])
    theirs = robodyn.linearize(flat, upright)
    np.testing.assert_allclose(ours.A, theirs.A, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(np.sort(np.linalg.eigvals(ours.A).real), np.sort(np.linalg.eigvals(theirs.A).real),
                               rtol=1e-12)


def test_the_arm_under_its_sampled_controller_reaches_the_reference() -> None:
    model = robodyn.load(EXAMPLES / "arm_motors_pd.yaml")
    assert model.sampling().every == {"ctrl": 1} and model.sampling().base == 0.001
    trajectory = robodyn.simulate(model, 1.5, np.zeros(6), {"r1": 0.8, "r2": -0.4}, rtol=1e-8,
                                  t_eval=np.linspace(0.0, 1.5, 16))
    np.testing.assert_allclose(trajectory.x[-1, :2], [0.8, -0.4], atol=0.01)
    rest = robodyn.find_equilibrium(model, targets={"q1": 0.8, "q2": -0.4})[0]
    lin = robodyn.linearize(model, rest.x, rest.u)
    assert lin.dt == 0.001 and np.abs(np.linalg.eigvals(lin.A)).max() < 1.0


def test_fk_and_ik_of_a_diagram_are_its_robot_blocks() -> None:
    from robodyn.kinematics.frames import Kinematics

    diagram = robodyn.load(EXAMPLES / "arm_motors.yaml")
    arm = robodyn.load(EXAMPLES / "arm_with_tip.yaml")
    ours, theirs = Kinematics(diagram), Kinematics(arm)
    assert ours.coordinates == ("arm.shoulder", "arm.elbow") and "arm.tool" in ours.frames
    assert ours.default_frame == "arm.tool" and ours.parent_frame("arm.tool") == "arm.forearm"
    pose = ours.pose({"arm.shoulder": 0.3, "arm.elbow": 0.5})
    np.testing.assert_array_equal(pose.position, theirs.pose({"shoulder": 0.3, "elbow": 0.5}).position)
    np.testing.assert_array_equal(ours.jacobian([0.3, 0.5]), theirs.jacobian([0.3, 0.5]))
    found = robodyn.inverse_kinematics(diagram, [1.2, 0.0, 0.6], frame="arm.tool")
    assert found.reachable and set(found.q) == {"arm.shoulder", "arm.elbow"}
    np.testing.assert_allclose(ours.position(found.q), [1.2, 0.0, 0.6], atol=1e-9)
