"""URDF robots lowered to the compiled tape (robodyn.mechanisms.urdf.chain) against Pinocchio on every robot that
example-robot-data ships, each as a fixed-base tree (Pinocchio reads the same files from the installed package):
the arms, and the legged robots, hands and humanoids with their base fixed. Robots with more than
SLOW_ABOVE coordinates are marked slow (``pytest -m slow``); mimic joints are checked against Pinocchio's
model without them, reduced by the coupling.

At random states: forward dynamics (aba), the mass matrix (crba), inverse dynamics (rnea), gravity and the
Jacobians A, B (computeABADerivatives) agree within 1e-10 relative to the largest entry — two different
algorithms (RNEA and a Cholesky solve on the tape, ABA in Pinocchio) in double precision on matrices with
condition numbers up to ~1e5. ``dynamics=False``: Pinocchio's algorithms do not apply URDF damping.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from pinocchio_reference import ROBOTS, coupling
from pinocchio_reference import configuration as pinocchio_configuration
from robodyn.base.errors import ModelFileError
from robodyn.mechanisms.urdf.chain import chain_from_urdf

pin = pytest.importorskip("pinocchio")


SLOW_ABOVE = 9  # movable joints: the arms (Panda: 9 with its mimic finger); larger trees are marked slow
JACOBIAN_LIMIT = 40  # coordinates up to which A and B are compared (the forward-mode tape grows as n^3)
# Files the loader refuses, with the reason: the files are wrong (Pinocchio ignores mimic tags and loads
# massless moving links, whose singular mass matrix it cannot invert either).
REFUSED = {
    "alex_description/urdf/alex_psyonic_hands.urdf": "<mimic joint='index_q1'> names no revolute",
    "hector_description/robots/quadrotor_base.urdf": "nothing to move",
    "iris_description/robots/iris_simple.urdf": "nothing to move",
    "romeo_description/urdf/romeo.urdf": "has no mass, so the mass matrix is singular",
    "romeo_description/urdf/romeo_laas_small.urdf": "has no mass, so the mass matrix is singular",
    "ur_description/urdf/ur3.urdf": "expected one root link",  # its <robot> has no name, Pinocchio refuses it too
}


def _every_robot() -> list[object]:
    """pytest params: every URDF of the package, slow-marked above SLOW_ABOVE movable joints."""
    if ROBOTS is None:
        return []
    result = []
    for path in sorted(ROBOTS.rglob("*.urdf")):
        relative = path.relative_to(ROBOTS).as_posix()
        movable = len(re.findall(r'type\s*=\s*"(?:revolute|continuous|prismatic)"', path.read_text(encoding="utf-8")))
        marks = [pytest.mark.slow] if movable > SLOW_ABOVE else []
        result.append(pytest.param(relative, marks=marks, id=relative.split("/")[-1]))
    return result


ARMS = ["ur_description/urdf/ur5_robot.urdf", "kinova_description/robots/kinova.urdf",
        "xarm_description/urdf/xarm7.urdf", "double_pendulum_description/urdf/double_pendulum_continuous.urdf"]
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")


def _close(actual: np.ndarray, expected: np.ndarray, rtol: float = 1e-10) -> None:
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * max(1.0, float(np.abs(expected).max())))


@needs_robots
@pytest.mark.parametrize("relative", _every_robot())
def test_every_robot_agrees_with_pinocchio(relative: str) -> None:
    """f (aba), M (crba), inverse dynamics (rnea), gravity and A, B (computeABADerivatives) at random states,
    within 1e-10 relative; mimic joints through q_full = G q + o: M = G^T M_full G, ID = G^T rnea(...)."""
    path = ROBOTS / relative  # type: ignore[operator]
    if relative in REFUSED:
        with pytest.raises(ModelFileError, match=re.escape(REFUSED[relative])):
            chain_from_urdf(path, check_inertia=False)
        return
    try:
        chain_from_urdf(path)
    except ModelFileError as exc:  # an inertia no body has: refused by default, with the way to keep it
        assert "check_inertia=False" in str(exc) and relative not in ARMS
    model = chain_from_urdf(path, dynamics=False, check_inertia=False)
    reference = pin.buildModelFromUrdf(str(path))
    data = reference.createData()
    n = model.n_coordinates
    G, offset = coupling(path, reference, model.coordinates)
    rng = np.random.default_rng(len(relative))
    for _ in range(20 if n <= SLOW_ABOVE else 3):
        q, v, tau = rng.uniform(-1.5, 1.5, n), rng.uniform(-1, 1, n), rng.uniform(-5, 5, n)
        x = np.concatenate([q, v])
        configuration = pinocchio_configuration(reference, G @ q + offset)
        mass = pin.crba(reference, data, configuration)
        mass = G.T @ (np.triu(mass) + np.triu(mass, 1).T) @ G
        _close(model.mass_matrix(q), mass)
        qdd = rng.normal(size=n)
        _close(model.inverse_dynamics(q, v, qdd), G.T @ pin.rnea(reference, data, configuration, G @ v, G @ qdd))
        zero = np.zeros(len(offset))
        _close(model.inverse_dynamics(q, np.zeros(n), np.zeros(n)),
               G.T @ pin.computeGeneralizedGravity(reference, data, configuration))
        bias = G.T @ pin.rnea(reference, data, configuration, G @ v, zero)
        # q'' = M^-1 (...) from two algorithms: their difference is bounded by ~cond(M) eps relative (1e-10
        # covers the arms, cond(M) < 1e4; the humanoids' tiny hand links reach cond(M) ~ 1e8)
        solved = max(1e-10, 100 * np.finfo(float).eps * float(np.linalg.cond(mass)))
        _close(model.f(0.0, x, tau)[n:], np.linalg.solve(mass, tau - bias), rtol=max(solved, 1e-9))
        if G.shape[0] == n and n <= JACOBIAN_LIMIT:  # Pinocchio's analytic derivatives of the same system
            _close(model.f(0.0, x, tau)[n:], pin.aba(reference, data, configuration, v, tau), rtol=solved)
            ddq_dq, ddq_dv, minv = pin.computeABADerivatives(reference, data, configuration, v, tau)
            A, B = model.jacobians(0.0, x, tau)
            _close(A[n:, :n], ddq_dq, rtol=solved)
            _close(A[n:, n:], ddq_dv, rtol=solved)
            _close(B[n:], np.triu(minv) + np.triu(minv, 1).T, rtol=solved)


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
     "<child link='b'/></joint></robot>", "a floating base needs mass"),
    ("<robot name='r'><link name='a'/><link name='b'/><joint name='j' type='revolute'><parent link='a'/>"
     "<child link='c'/></joint></robot>", "child link 'c' is not defined"),
    ("<robot name='r'><link name='a'/><link name='b'><inertial><mass value='-1'/></inertial></link>"
     "<joint name='j' type='revolute'><parent link='a'/><child link='b'/></joint></robot>", "negative"),
    ("<robot name='r'><link name='a'/><link name='b'/><link name='c'/><joint name='j' type='revolute'>"
     "<parent link='a'/><child link='b'/></joint><joint name='i' type='revolute'><parent link='b'/>"
     "<child link='c'/><mimic joint='k'/></joint></robot>", "<mimic joint='k'> names no revolute"),
    ("<robot name='r'><link name='a'/></robot>", "nothing to move"),
    ("<robot name='r'><link name='a'>", "malformed XML"),
])
def test_bad_robot_files_name_the_element_and_the_fix(tmp_path: Path, snippet: str, message: str) -> None:
    path = tmp_path / "bad.urdf"
    path.write_text(snippet, encoding="utf-8")
    with pytest.raises(ModelFileError, match=message):
        chain_from_urdf(path)


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
    from robodyn.mechanisms.urdf.chain import chain_yaml

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


@needs_robots
def test_a_batch_of_urdf_robots_runs_compiled_and_matches_single_runs_and_pinocchio() -> None:
    """Four UR5 runs as one compiled batch (threads over both cores) equal the single compiled runs to
    rounding, and the Pinocchio backend's interpreted runs to the integration tolerance."""
    import robodyn

    path = str(ROBOTS / "ur_description/urdf/ur5_robot.urdf")  # type: ignore[operator]
    model, reference = robodyn.load(path), robodyn.load(path, backend="pinocchio")
    assert model.compilable and not reference.compilable
    rng = np.random.default_rng(4)
    x0 = np.hstack([rng.uniform(-1, 1, (4, 6)), np.zeros((4, 6))])
    grid = np.linspace(0.0, 0.5, 11)
    options = {"rtol": 1e-10, "atol": 1e-12, "t_eval": grid}
    batch = robodyn.simulate(model, 0.5, x0, backend="compiled", **options)
    assert isinstance(batch, robodyn.BatchTrajectory) and batch.x.shape == (4, 11, 12)
    for i in range(4):
        single = robodyn.simulate(model, 0.5, x0[i], backend="compiled", **options)
        assert np.abs(single.x - batch.x[i]).max() <= 1e-12  # the same kernel per trajectory
        pinocchio_run = robodyn.simulate(reference, 0.5, x0[i], **options)
        # two dopri5 runs at rtol 1e-10 on dynamics that agree to 1e-14: the global errors (~1e-9) dominate
        np.testing.assert_allclose(batch.x[i], pinocchio_run.x, rtol=0, atol=1e-7)
