"""URDF robots lowered to the compiled tape (robodyn.model.urdf_chain) against Pinocchio on the fixed-base
arms that example-robot-data ships (Pinocchio reads the same files from the installed package).

At random states: forward dynamics (aba), the mass matrix (crba), inverse dynamics (rnea), gravity and the
Jacobians A, B (computeABADerivatives) agree within 1e-10 relative to the largest entry — two different
algorithms (RNEA and a Cholesky solve on the tape, ABA in Pinocchio) in double precision on matrices with
condition numbers up to ~1e5. ``dynamics=False``: Pinocchio's algorithms do not apply URDF damping.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import numpy as np
import pytest

from robodyn.errors import ModelFileError
from robodyn.model.urdf_chain import chain_from_urdf

pin = pytest.importorskip("pinocchio")


def _robots() -> Path | None:
    try:
        folder = importlib.metadata.distribution("example-robot-data").locate_file(
            "cmeel.prefix/share/example-robot-data/robots")
    except importlib.metadata.PackageNotFoundError:
        return None
    return Path(str(folder))


ROBOTS = _robots()
ARMS = ["ur_description/urdf/ur3_robot.urdf", "ur_description/urdf/ur5_robot.urdf",
        "ur_description/urdf/ur10_robot.urdf", "kinova_description/robots/kinova.urdf",
        "xarm_description/urdf/xarm7.urdf", "z1_description/urdf/z1.urdf", "so_arm_description/urdf/so100.urdf",
        "so_arm_description/urdf/so101.urdf", "double_pendulum_description/urdf/double_pendulum.urdf",
        "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
        "finger_edu_description/robots/finger_edu.urdf", "asr_twodof_description/urdf/TwoDofs.urdf"]
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")


def _close(actual: np.ndarray, expected: np.ndarray, rtol: float = 1e-10) -> None:
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * max(1.0, float(np.abs(expected).max())))


def _configuration(reference: object, angles: np.ndarray) -> np.ndarray:
    """Pinocchio's configuration vector for joint angles: (cos, sin) for a continuous joint (nq = 2)."""
    values = []
    for joint, angle in zip(list(reference.joints)[1:], angles):  # type: ignore[attr-defined]
        values += [np.cos(angle), np.sin(angle)] if joint.nq == 2 else [angle]
    return np.array(values)


@needs_robots
@pytest.mark.parametrize("relative", ARMS)
def test_lowered_urdf_agrees_with_pinocchio(relative: str) -> None:
    path = ROBOTS / relative  # type: ignore[operator]
    model = chain_from_urdf(path, dynamics=False)
    reference = pin.buildModelFromUrdf(str(path))
    data = reference.createData()
    assert reference.nv == model.n_coordinates  # a continuous joint: one coordinate (Pinocchio: cos, sin)
    assert list(reference.names)[1:] == list(model.coordinates)
    n = model.n_coordinates
    rng = np.random.default_rng(len(relative))
    for _ in range(20):
        q, v, tau = rng.uniform(-1.5, 1.5, n), rng.uniform(-1, 1, n), rng.uniform(-5, 5, n)
        x = np.concatenate([q, v])
        configuration = _configuration(reference, q)
        _close(model.f(0.0, x, tau)[n:], pin.aba(reference, data, configuration, v, tau))
        mass = pin.crba(reference, data, configuration)
        _close(model.mass_matrix(q), np.triu(mass) + np.triu(mass, 1).T)
        qdd = rng.normal(size=n)
        _close(model.inverse_dynamics(q, v, qdd), pin.rnea(reference, data, configuration, v, qdd))
        _close(model.inverse_dynamics(q, np.zeros(n), np.zeros(n)),
               pin.computeGeneralizedGravity(reference, data, configuration))
        ddq_dq, ddq_dv, minv = pin.computeABADerivatives(reference, data, configuration, v, tau)
        A, B = model.jacobians(0.0, x, tau)
        _close(A[n:, :n], ddq_dq)
        _close(A[n:, n:], ddq_dv)
        _close(B[n:], np.triu(minv) + np.triu(minv, 1).T)


@needs_robots
def test_urdf_damping_and_friction_are_read_and_can_be_ignored() -> None:
    path = ROBOTS / "ur_description/urdf/ur5_robot.urdf"  # type: ignore[operator]
    text = path.read_text(encoding="utf-8").replace('<dynamics damping="0.0" friction="0.0"/>',
                                                     '<dynamics damping="0.5" friction="0.2"/>')
    assert text.count('damping="0.5"') == 6
    return_path = Path(pytest.importorskip("tempfile").mkdtemp()) / "ur5_damped.urdf"
    return_path.write_text(text, encoding="utf-8")
    damped, plain = chain_from_urdf(return_path), chain_from_urdf(return_path, dynamics=False)
    x = np.concatenate([np.full(6, 0.3), np.full(6, 0.7)])
    difference = damped.inverse_dynamics(x[:6], x[6:], np.zeros(6)) - plain.inverse_dynamics(x[:6], x[6:], np.zeros(6))
    np.testing.assert_allclose(difference, 0.5 * 0.7 + 0.2 * np.tanh(0.7 / 1e-3), rtol=1e-12)


@pytest.mark.parametrize(("snippet", "message"), [
    ('<!DOCTYPE robot [<!ENTITY big "x">]><robot name="r"/>', "does not expand"),
    ("<robot name='r'><link name='a'/><link name='b'/><joint name='j' type='floating'><parent link='a'/>"
     "<child link='b'/></joint></robot>", "floating base is not supported"),
    ("<robot name='r'><link name='a'/><link name='b'/><joint name='j' type='revolute'><parent link='a'/>"
     "<child link='c'/></joint></robot>", "child link 'c' is not defined"),
    ("<robot name='r'><link name='a'/><link name='b'><inertial><mass value='-1'/></inertial></link>"
     "<joint name='j' type='revolute'><parent link='a'/><child link='b'/></joint></robot>", "negative"),
    ("<robot name='r'><link name='a'/><link name='b'/><link name='c'/><joint name='j' type='revolute'>"
     "<parent link='a'/><child link='b'/></joint><joint name='i' type='revolute'><parent link='b'/>"
     "<child link='c'/><mimic joint='k'/></joint></robot>", "mimic names 'k'"),
    ("<robot name='r'><link name='a'/></robot>", "nothing to move"),
    ("<robot name='r'><link name='a'>", "malformed XML"),
])
def test_bad_robot_files_name_the_element_and_the_fix(tmp_path: Path, snippet: str, message: str) -> None:
    path = tmp_path / "bad.urdf"
    path.write_text(snippet, encoding="utf-8")
    with pytest.raises(ModelFileError, match=message):
        chain_from_urdf(path)


@needs_robots
def test_panda_with_its_mimic_finger_agrees_with_pinocchio_reduced_by_the_coupling() -> None:
    """The Panda's second finger mimics the first: 8 coordinates. Reference: Pinocchio's 9-coordinate model
    (mimic ignored) reduced by the coupling q_full = G q (G: finger 2 = finger 1), M = G^T M_full G,
    ID = G^T rnea(G q, G v, G a), forward dynamics M^-1 (tau - G^T rnea(G q, G v, 0))."""
    path = ROBOTS / "panda_description/urdf/panda.urdf"  # type: ignore[operator]
    model = chain_from_urdf(path, dynamics=False)
    reference = pin.buildModelFromUrdf(str(path))
    data = reference.createData()
    full = list(reference.names)[1:]
    assert model.n_coordinates == 8 and len(full) == 9 and "panda_finger_joint2" not in model.coordinates
    G = np.zeros((9, 8))
    for k, name in enumerate(full):
        G[k, model.coordinates.index("panda_finger_joint1" if name == "panda_finger_joint2" else name)] = 1.0
    rng = np.random.default_rng(11)
    for _ in range(10):
        q, v, tau = rng.uniform(-1.5, 1.5, 8), rng.uniform(-1, 1, 8), rng.uniform(-5, 5, 8)
        q[7] = rng.uniform(0.0, 0.04)  # a finger opening
        mass = pin.crba(reference, data, G @ q)
        mass = G.T @ (np.triu(mass) + np.triu(mass, 1).T) @ G
        _close(model.mass_matrix(q), mass)
        qdd = rng.normal(size=8)
        _close(model.inverse_dynamics(q, v, qdd), G.T @ pin.rnea(reference, data, G @ q, G @ v, G @ qdd))
        bias = G.T @ pin.rnea(reference, data, G @ q, G @ v, np.zeros(9))
        _close(model.f(0.0, np.concatenate([q, v]), tau)[8:], np.linalg.solve(mass, tau - bias))


def test_mimic_joints_in_chain_files(tmp_path: Path) -> None:
    import robodyn

    text = """
name: gripper
kind: chain
parameters: {k: 2.0}
joints:
  - {name: a, type: prismatic, parent: base, child: left, axis: [0, 1, 0]}
  - {name: b, type: prismatic, parent: base, child: right, axis: [0, 1, 0], mimic: {joint: a, multiplier: -k}}
links:
  - {name: base}
  - {name: left, mass: 1.0}
  - {name: right, mass: 0.5}
"""
    path = tmp_path / "gripper.yaml"
    path.write_text(text, encoding="utf-8")
    model = robodyn.load(path)
    assert model.coordinates == ("a",) and model.inputs == ("a_tau",)
    # b = -2 a: kinetic energy (1 + 0.5 * 4) a'^2 / 2, so M = 3; gravity along -z does no work on y
    np.testing.assert_allclose(model.mass_matrix([0.1]), [[3.0]], rtol=1e-14)
    np.testing.assert_allclose(model.f(0.0, [0.1, 0.0], [1.5]), [0.0, 0.5], rtol=1e-14)
    bad = path.with_name("bad.yaml")
    bad.write_text(text.replace("mimic: {joint: a, multiplier: -k}", "mimic: {joint: nope}"), encoding="utf-8")
    with pytest.raises(robodyn.InputError, match="mimic names 'nope'"):
        robodyn.load(bad)


@needs_robots
@pytest.mark.parametrize("relative", ["panda_description/urdf/panda.urdf", "kinova_description/robots/kinova.urdf"])
def test_converted_chain_file_has_the_same_dynamics(tmp_path: Path, relative: str) -> None:
    import robodyn
    from robodyn.model.urdf_chain import chain_yaml

    path = ROBOTS / relative  # type: ignore[operator]
    text = chain_yaml(path)
    written = tmp_path / "robot.yaml"
    written.write_text(text, encoding="utf-8")
    converted, direct = robodyn.load(written), chain_from_urdf(path)
    assert converted.coordinates == direct.coordinates
    rng = np.random.default_rng(2)
    n = direct.n_coordinates
    for _ in range(5):
        x, u = rng.uniform(-1, 1, 2 * n), rng.uniform(-2, 2, n)
        np.testing.assert_array_equal(converted.f(0.0, x, u), direct.f(0.0, x, u))  # the same numbers, exactly
