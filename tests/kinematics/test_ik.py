"""Inverse kinematics (robodyn.kinematics.ik) on the Panda from example-robot-data, and the fk/ik commands.

Targets are made reachable by construction: the pose of the tool at random joint angles inside the limits
(forward kinematics, itself checked against Pinocchio in test_frames.py). Convergence to 1e-10 m is what
Levenberg–Marquardt reaches near a regular solution (quadratic steps; rounding ~1e-16 m).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import robodyn
from pinocchio_reference import ROBOTS
from robodyn.cli import main
from robodyn.kinematics import kinematics
from robodyn.kinematics.ik import inverse_kinematics


def _robot(relative: str) -> Path:
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    return ROBOTS / relative


@pytest.fixture(scope="module")
def panda() -> robodyn.Model:
    return robodyn.load(str(_robot("panda_description/urdf/panda.urdf")))


def _limits(model: robodyn.Model) -> tuple[np.ndarray, np.ndarray]:
    limits = model.position_limits()
    coordinates = kinematics(model).coordinates
    return np.array([limits[c][0] for c in coordinates]), np.array([limits[c][1] for c in coordinates])


def test_reachable_position_and_pose_targets_are_reached_within_the_limits(panda: robodyn.Model) -> None:
    K = kinematics(panda)
    lower, upper = _limits(panda)
    rng = np.random.default_rng(2026)
    for _ in range(8):
        q = rng.uniform(lower, upper)
        pose = K.pose(q)
        result = inverse_kinematics(panda, pose.position)
        assert result.reachable and result.position_error <= 1e-10 and result.iterations <= 50
        assert np.all(result.vector >= lower) and np.all(result.vector <= upper)
        np.testing.assert_allclose(K.pose(result.vector).position, pose.position, rtol=0, atol=1e-10)
        full = inverse_kinematics(panda, pose.position, orientation=pose.rpy)
        assert full.reachable and full.position_error <= 1e-10 and full.orientation_error <= 1e-10
        reached = K.pose(full.vector)
        np.testing.assert_allclose(reached.rotation, pose.rotation, rtol=0, atol=1e-10)


def test_an_unreachable_target_is_reported_with_the_closest_approach(panda: robodyn.Model) -> None:
    result = inverse_kinematics(panda, [2.0, 0.0, 0.5], starts=4, max_iterations=100)
    assert not result.reachable and result.iterations <= 100
    # the arm (about 1.1 m from the shoulder when stretched) ends well short of a point 2 m away
    assert 0.5 < result.position_error < 2.0
    lower, upper = _limits(panda)
    assert np.all(result.vector >= lower) and np.all(result.vector <= upper)


def test_limits_shape_the_solution(tmp_path: Path) -> None:
    """A one-joint arm of length 1 limited to [-1, 1] rad: the tip at angle 2 rad is reachable only without
    the limits; with them the closest approach stops at the limit, 2 sin(1/2) from the target."""
    urdf = tmp_path / "arm.urdf"
    urdf.write_text('''<robot name="arm"><link name="base"/>
<link name="bar"><inertial><mass value="1"/><origin xyz="0.5 0 0"/>
<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.05"/></inertial></link>
<link name="tip"/>
<joint name="q" type="revolute"><parent link="base"/><child link="bar"/><axis xyz="0 0 1"/>
<limit lower="-1" upper="1" effort="5" velocity="2"/></joint>
<joint name="tip_joint" type="fixed"><parent link="bar"/><child link="tip"/><origin xyz="1 0 0"/></joint>
</robot>''', encoding="utf-8")
    arm = robodyn.load(str(urdf))
    target = [np.cos(2.0), np.sin(2.0), 0.0]
    free = inverse_kinematics(arm, target, frame="tip", limits=False)
    assert free.reachable and abs(np.cos(free.vector[0]) - np.cos(2.0)) < 1e-10  # |e| <= 1e-10 m on a 1 m arm
    bounded = inverse_kinematics(arm, target, frame="tip", starts=3)
    assert not bounded.reachable and bounded.q["q"] == pytest.approx(1.0, abs=1e-9)
    assert bounded.position_error == pytest.approx(2 * np.sin(0.5), rel=1e-9)


def test_operating_point_at_an_ik_solution_holds_the_arm(panda: robodyn.Model) -> None:
    K = kinematics(panda)
    target = K.pose(np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.6, 0.7, 0.02])).position
    result = inverse_kinematics(panda, target)
    point = result.operating_point()
    np.testing.assert_array_equal(point.x[:8], result.vector)
    np.testing.assert_array_equal(point.x[8:], 0.0)
    assert np.max(np.abs(panda.f(0.0, point.x, point.u))) <= 1e-9  # held still: q'' = 0
    linear = robodyn.linearize(panda, point.x, point.u)
    assert linear.A.shape == (16, 16)


def test_bad_ik_input_is_refused(panda: robodyn.Model) -> None:
    with pytest.raises(robodyn.ShapeError, match="3 finite numbers"):
        inverse_kinematics(panda, [0.1, 0.2])
    with pytest.raises(robodyn.ShapeError, match="roll, pitch, yaw"):
        inverse_kinematics(panda, [0.1, 0.2, 0.3], orientation=np.eye(2))
    with pytest.raises(robodyn.UnknownNameError, match=r"no frame 'hand'.*panda_hand"):
        inverse_kinematics(panda, [0.1, 0.2, 0.3], frame="hand")
    with pytest.raises(robodyn.InputError, match="starts"):
        inverse_kinematics(panda, [0.1, 0.2, 0.3], starts=0)
    with pytest.raises(robodyn.InputError, match="has no frames"):
        inverse_kinematics(robodyn.load("joint"), [0.1, 0.2, 0.3])


# --- the command line ---------------------------------------------------------------------------------------
def test_fk_json_has_the_promised_keys_and_values(capsys: pytest.CaptureFixture[str], panda: robodyn.Model) -> None:
    path = str(_robot("panda_description/urdf/panda.urdf"))
    assert main(["fk", path, "--at", "panda_joint2=0.3,panda_joint4=-1.5", "--frame", "panda_hand", "--jacobian",
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"frame", "position", "rotation", "quaternion", "rpy", "jacobian"}
    q = {"panda_joint2": 0.3, "panda_joint4": -1.5}
    pose = kinematics(panda).pose(q, "panda_hand")
    np.testing.assert_array_equal(result["position"], pose.position)
    np.testing.assert_array_equal(result["rotation"], pose.rotation)
    assert np.array(result["jacobian"]).shape == (6, 8) and len(result["quaternion"]) == 4
    assert main(["fk", path]) == 0 and "frame      panda_hand_tcp" in capsys.readouterr().out


def test_ik_command_exit_codes(capsys: pytest.CaptureFixture[str], panda: robodyn.Model) -> None:
    path = str(_robot("panda_description/urdf/panda.urdf"))
    target = kinematics(panda).pose(np.array([0.2, -0.3, 0.1, -1.8, 0.0, 1.5, 0.6, 0.01])).position
    assert main(["ik", path, "--target", ",".join(map(repr, target.tolist())), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {"q", "residual", "reachable", "iterations"} <= set(result) and result["reachable"]
    assert set(result["q"]) == set(kinematics(panda).coordinates) and result["residual"] <= 1e-10
    with pytest.raises(SystemExit) as failed:
        main(["ik", path, "--target", "2,0,0.5", "--starts", "2", "--json"])
    assert failed.value.code == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["reachable"] is False and "not reachable" in captured.err
    for argv in (["ik", path, "--target", "1,2"], ["fk", path, "--at", "elbow=1"], ["fk", "joint"]):
        with pytest.raises(SystemExit) as bad:
            main(argv)
        assert bad.value.code == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_simulate_records_frame_outputs_on_request(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                    panda: robodyn.Model) -> None:
    path = str(_robot("ur_description/urdf/ur5_robot.urdf"))
    out = tmp_path / "run.csv"
    assert main(["simulate", path, "--t-final", "0.2", "--points", "5", "--output", "tool0.position",
                 "--output", "shoulder_pan_joint", "--out", str(out)]) == 0
    header = out.read_text(encoding="utf-8").splitlines()[0].split(",")
    # the output shoulder_pan_joint is the state of that name: its column is written once, among the states
    assert header[-3:] == ["tool0_x", "tool0_y", "tool0_z"] and header.count("shoulder_pan_joint") == 1
    table = np.loadtxt(out, delimiter=",", skiprows=1)
    ur5 = robodyn.load(path)
    np.testing.assert_allclose(table[:, -3:], kinematics(ur5).pose(table[:, 1:7], "tool0").position, atol=1e-15)
    with pytest.raises(SystemExit) as bad:
        main(["simulate", path, "--t-final", "0.1", "--output", "tool0.spin"])
    assert bad.value.code == 2 and "FRAME.QUANTITY" in capsys.readouterr().err
