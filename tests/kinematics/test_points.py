"""Named points of Lagrangian models as frames (robodyn.model.kinds.point_frames), and kinematic outputs of URDF
robots given at load time.

References: the closed-form kinematics of the double pendulum written here (x to the right, y up, angles
from hanging down), central differences in time for J'q', and the frame Jacobian for C.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robodyn
from pinocchio_reference import ROBOTS


def test_double_pendulum_points_are_frames_with_their_closed_form_kinematics() -> None:
    model = robodyn.load("double_pendulum")
    K = robodyn.Kinematics(model)
    assert K.frames == ("elbow", "tip") and K.default_frame == "tip" and K.skeleton == (-1, 0, 1)
    l1, l2 = model.parameters["l1"], model.parameters["l2"]
    rng = np.random.default_rng(8)
    q, qd = rng.uniform(-2, 2, (20, 2)), rng.uniform(-2, 2, (20, 2))
    a, b = q[:, 0], q[:, 0] + q[:, 1]
    tip = np.column_stack([l1 * np.sin(a) + l2 * np.sin(b), -l1 * np.cos(a) - l2 * np.cos(b), np.zeros(20)])
    pose = K.pose(q)
    np.testing.assert_allclose(pose.position, tip, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(pose.rotation, np.broadcast_to(np.eye(3), (20, 3, 3)))  # points: no orientation
    J = K.jacobian(q)
    np.testing.assert_allclose(J[:, 0, 0], l1 * np.cos(a) + l2 * np.cos(b), rtol=0, atol=1e-14)
    np.testing.assert_allclose(J[:, 0, 1], l2 * np.cos(b), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(J[:, 3:], 0.0)
    # J'q' against d/dt (J(q + t q') q') at t = 0 by central differences (h = 1e-5: error ~h^2 ~ 1e-10)
    h = 1e-5
    numeric = (np.einsum("kin,kn->ki", K.jacobian(q + h * qd), qd)
               - np.einsum("kin,kn->ki", K.jacobian(q - h * qd), qd)) / (2 * h)
    np.testing.assert_allclose(K.bias_acceleration(q, qd), numeric, rtol=0, atol=1e-8)
    np.testing.assert_allclose(K.origins(q)[:, 2], tip, rtol=0, atol=1e-14)


def test_points_follow_parameters_and_refuse_bad_input(tmp_path: Path) -> None:
    model = robodyn.load("pendulum")
    K = robodyn.Kinematics(model)
    np.testing.assert_allclose(K.position([0.4], params={"l": 2.0}), [2 * np.sin(0.4), -2 * np.cos(0.4), 0.0],
                               rtol=0, atol=1e-15)
    text = """
name: p
kind: lagrangian
coordinates: [theta]
parameters: {l: 1.0}
kinetic: theta_dot**2/2
points: {bob: [l*sin(theta), theta_dot]}
"""
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(robodyn.ModelFileError, match="theta_dot"):
        robodyn.load(path)
    path.write_text(text.replace("[l*sin(theta), theta_dot]", "[1, 2, 3, 4]"), encoding="utf-8")
    with pytest.raises(robodyn.ModelFileError, match=r"must be \[x, y\] or \[x, y, z\]"):
        robodyn.load(path)
    with pytest.raises(robodyn.InputError, match="has no frames"):
        robodyn.Kinematics(robodyn.load("joint"))


def test_urdf_outputs_given_at_load_have_exact_C() -> None:
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    path = str(ROBOTS / "ur_description/urdf/ur5_robot.urdf")
    outputs = {"tool": {"frame": "tool0", "quantity": "position"}, "lift": "shoulder_lift_joint"}
    robot = robodyn.load(path, outputs=outputs)
    assert robot.outputs == ("tool_x", "tool_y", "tool_z", "lift")
    x = np.concatenate([np.linspace(-1, 1, 6), np.zeros(6)])
    linear = robodyn.linearize(robot, x, np.zeros(6))
    J = robodyn.Kinematics(robot).jacobian(x[:6], "tool0")
    np.testing.assert_array_equal(linear.C[:3, :6], J[:3])
    np.testing.assert_array_equal(linear.D, 0.0)
    assert linear.C[3, 1] == 1.0
    with pytest.raises(robodyn.InputError, match="outputs need the default backend"):
        robodyn.load(path, backend="pinocchio", outputs=outputs)
