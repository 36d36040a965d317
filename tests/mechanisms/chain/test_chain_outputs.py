"""Kinematic outputs of chains (robodyn.mechanisms.chain.outputs): values from the frames, exact C and D.

References: the frame pose and Jacobian of robodyn.kinematics (themselves checked against Pinocchio in
tests/kinematics/test_frames.py), central differences of h for C, and the joint expressions evaluated here.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.kinematics import kinematics
from robodyn.kinematics.rotations import rpy_from_rotation

ROOT = Path(__file__).resolve().parents[3]
EXTRA = """
frames: {tcp: {parent: link6, xyz: [0, 0, 0.1], rpy: [0, 0.3, 0]}}
outputs:
  tool: {frame: tcp, quantity: position}
  turn: {frame: tcp, quantity: orientation}
  speed: {frame: tcp, quantity: velocity}
  spin: {frame: link4, quantity: angular_velocity}
  mixed: q1 + 2*q2_dot + tau_gain*q1_tau
"""


@pytest.fixture(scope="module")
def puma(tmp_path_factory: pytest.TempPathFactory) -> robodyn.Model:
    text = (ROOT / "tests" / "data" / "puma560.yaml").read_text(encoding="utf-8")
    assert "\nparameters: {g: 9.81}\n" in text
    text = text.replace("\nparameters: {g: 9.81}\n", "\nparameters: {g: 9.81, tau_gain: 0.5}\n", 1)
    text = text.replace("\njoints:", EXTRA + "joints:", 1)
    path = tmp_path_factory.mktemp("outputs") / "puma_outputs.yaml"
    path.write_text(text, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the published link-3 inertia (test_chain_tape checks the warning)
        return robodyn.load(path)


def _point(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.2, 1.2, 12), rng.uniform(-2, 2, 6)


def test_outputs_expand_and_equal_the_frame_quantities(puma: robodyn.Model) -> None:
    assert puma.outputs == ("tool_x", "tool_y", "tool_z", "turn_roll", "turn_pitch", "turn_yaw", "speed_vx",
                            "speed_vy", "speed_vz", "spin_wx", "spin_wy", "spin_wz", "mixed")
    K = kinematics(puma)
    for seed in range(5):
        x, u = _point(seed)
        y = puma.h(0.0, x, u)
        pose = K.pose(x[:6], "tcp")
        np.testing.assert_allclose(y[:3], pose.position, rtol=0, atol=1e-15)
        np.testing.assert_allclose(y[3:6], rpy_from_rotation(pose.rotation), rtol=0, atol=1e-14)
        np.testing.assert_allclose(y[6:9], K.velocity(x[:6], x[6:], "tcp")[:3], rtol=0, atol=1e-14)
        np.testing.assert_allclose(y[9:12], K.velocity(x[:6], x[6:], "link4")[3:], rtol=0, atol=1e-14)
        assert y[12] == pytest.approx(x[0] + 2 * x[7] + 0.5 * u[0], rel=1e-15)


def test_linearize_gives_the_frame_jacobian_as_C_exactly(puma: robodyn.Model) -> None:
    K = kinematics(puma)
    x, u = _point(7)
    linear = robodyn.linearize(puma, x, u)
    J = K.jacobian(x[:6], "tcp")
    np.testing.assert_array_equal(linear.C[:3, :6], J[:3])  # the same compiled nodes: bit for bit
    np.testing.assert_array_equal(linear.C[:3, 6:], 0.0)
    np.testing.assert_array_equal(linear.D[:12], 0.0)
    assert linear.D[12, 0] == 0.5 and not np.any(linear.D[12, 1:])
    # the velocity output v = Jv q': dv/dq' = Jv, and the angular velocity w = Jw q': dw/dq' = Jw
    np.testing.assert_allclose(linear.C[6:9, 6:], J[:3], rtol=0, atol=1e-15)
    np.testing.assert_allclose(linear.C[9:12, 6:], K.jacobian(x[:6], "link4")[3:], rtol=0, atol=1e-15)


def test_output_jacobians_match_central_differences(puma: robodyn.Model) -> None:
    # h = eps^(1/3) ~ 6e-6: truncation h^2 |h'''| / 6 ~ 1e-11 and rounding eps |y| / h ~ 1e-10 for |y| ~ 3,
    # so 1e-8 is a safe bound on entries of order 1.
    for seed in (1, 2):
        x, u = _point(seed)
        z = np.concatenate([x, u])
        step = np.finfo(float).eps ** (1 / 3)
        numeric = np.empty((puma.n_outputs, z.size))
        for k in range(z.size):
            up, down = z.copy(), z.copy()
            up[k] += step
            down[k] -= step
            numeric[:, k] = (puma.h(0.0, up[:12], up[12:]) - puma.h(0.0, down[:12], down[12:])) / (2 * step)
        linear = robodyn.linearize(puma, x, u)
        np.testing.assert_allclose(np.hstack([linear.C, linear.D]), numeric, rtol=0, atol=1e-8)


def test_simulate_records_the_kinematic_outputs(puma: robodyn.Model) -> None:
    x0, _ = _point(3)
    run = robodyn.simulate(puma, 0.3, x0, rtol=1e-9, t_eval=np.linspace(0, 0.3, 7))
    K = kinematics(puma)
    np.testing.assert_allclose(run.y[:, :3], K.pose(run.x[:, :6], "tcp").position, rtol=0, atol=1e-15)
    batch = robodyn.simulate(puma, 0.3, np.vstack([x0, x0 * 0.5]), rtol=1e-9, t_eval=np.linspace(0, 0.3, 7))
    np.testing.assert_allclose(batch.y[0], run.y, rtol=0, atol=1e-12)
    np.testing.assert_allclose(batch.y[1, :, :3], K.pose(batch.x[1, :, :6], "tcp").position, rtol=0, atol=1e-15)


def test_time_dependent_expression_outputs_next_to_kinematic_ones(tmp_path: Path) -> None:
    text = """
name: arm
kind: chain
joints: [{name: q, parent: base, child: bar, axis: [0, 0, 1]}]
links: [{name: base}, {name: bar, mass: 1, com: [0.5, 0, 0], inertia: {ixx: 0.05, iyy: 0.05, izz: 0.1}}]
frames: {tip: {parent: bar, xyz: [1, 0, 0]}}
outputs: {tip: {frame: tip, quantity: position}, wave: sin(t)*q}
"""
    path = tmp_path / "arm.yaml"
    path.write_text(text, encoding="utf-8")
    model = robodyn.load(path)
    t = np.array([0.0, 0.5, 1.0])
    x = np.array([[0.2, 0.0], [0.4, 0.0], [0.6, 0.0]])
    y = model.h_many(t, x, np.zeros((3, 1)), model.parameter_vector())
    np.testing.assert_allclose(y[:, 0], np.cos(x[:, 0]), rtol=0, atol=1e-15)
    np.testing.assert_allclose(y[:, 3], np.sin(t) * x[:, 0], rtol=0, atol=1e-15)
    assert model.h(0.5, [0.4, 0.0])[3] == pytest.approx(math.sin(0.5) * 0.4, rel=1e-15)


@pytest.mark.parametrize(("outputs", "message"), [
    ("{tool: {frame: nowhere, quantity: position}}", "no frame 'nowhere'"),
    ("{tool: {frame: bar, quantity: speed}}", "unknown quantity 'speed'"),
    ("{tool: {frame: bar}}", "a kinematic output is"),
])
def test_bad_kinematic_outputs_name_the_cause(tmp_path: Path, outputs: str, message: str) -> None:
    text = f"""
name: arm
kind: chain
joints: [{{name: q, parent: base, child: bar, axis: [0, 0, 1]}}]
links: [{{name: base}}, {{name: bar, mass: 1, com: [0.5, 0, 0], inertia: {{ixx: 0.05, iyy: 0.05, izz: 0.1}}}}]
outputs: {outputs}
"""
    path = tmp_path / "arm.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(robodyn.InputError, match=message):
        model = robodyn.load(path)
        model.h(0.0, [0.1, 0.0])
