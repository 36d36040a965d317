"""Equilibria of robots on a moving base, found in the tangent space (robodyn.linearization.tangent_points)."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import ConvergenceError, InputError, UnknownNameError

SATELLITE = """kind: chain
name: satellite
base: floating
gravity: [0, 0, 0]
joints:
  - {name: boom, type: revolute, parent: body, child: arm, axis: [0, 0, 1], xyz: [0.5, 0, 0], stiffness: 4.0,
     rest: 0.3, damping: 0.1}
links:
  - {name: body, mass: 10.0, com: [0, 0, 0], inertia: [[1, 0, 0], [0, 2, 0], [0, 0, 3]]}
  - {name: arm, mass: 1.0, com: [0.4, 0, 0], inertia: [[0.01, 0, 0], [0, 0.05, 0], [0, 0, 0.05]]}
"""


@pytest.fixture(scope="module")
def satellite(tmp_path_factory) -> object:
    path = tmp_path_factory.mktemp("satellite") / "satellite.yaml"
    path.write_text(SATELLITE)
    return robodyn.load(str(path))


def _at_rest(model: object, point: object) -> None:
    assert point.converged and point.residual <= 1e-10
    assert np.max(np.abs(model.f(0.0, point.x, point.u))) <= 1e-10
    assert abs(np.linalg.norm(point.x[3:7]) - 1.0) < 1e-15


def test_a_spring_joint_in_orbit_rests_at_its_rest_angle_in_any_pose(satellite) -> None:
    """Without gravity only the spring k (q - rest) acts: at rest q = rest, v = 0, the base where it was guessed."""
    guess = {"base_x": 1.0, "base_qz": 0.3, "base_qw": 0.95, "boom": -1.0, "boom_dot": 0.2, "base_wx": 0.5}
    (point,) = robodyn.find_equilibrium(satellite, {"boom_tau": 0.0}, guess)
    _at_rest(satellite, point)
    assert point.x[satellite.states.index("boom")] == pytest.approx(0.3, abs=1e-12)
    assert not point.x[satellite.nq:].any() or np.abs(point.x[satellite.nq:]).max() < 1e-12
    rotation = np.array([0.0, 0.0, 0.3, 0.95])
    assert np.allclose(point.x[:7], [1.0, 0.0, 0.0, *(rotation / np.linalg.norm(rotation))], atol=1e-15)


def test_the_holding_torque_of_a_fixed_joint_and_a_fixed_base(satellite) -> None:
    """boom fixed at 0.5 with the base fixed: the input holds the spring, u = k (q - rest) = 0.8."""
    base = {"base_x": 0.0, "base_y": 2.0, "base_z": 0.0, "base_qx": 0.6, "base_qy": 0.0, "base_qz": 0.0,
            "base_qw": 0.8}
    (point,) = robodyn.find_equilibrium(satellite, {**base, "boom": 0.5})
    _at_rest(satellite, point)
    assert point.u[0] == pytest.approx(0.8, abs=1e-10)
    assert np.array_equal(point.x[:7], list(base.values()))
    linear = robodyn.linearize(satellite, point.x, point.u)  # the point feeds linearize: a spring mode, free base
    assert np.sum(np.abs(np.linalg.eigvals(linear.A)) < 1e-9) == 12  # the base's 6 double zeros


def test_under_gravity_nothing_rests_and_the_error_says_why(satellite, tmp_path) -> None:
    path = tmp_path / "falling.yaml"
    path.write_text(SATELLITE.replace("gravity: [0, 0, 0]", "gravity: [0, 0, -9.81]"))
    with pytest.raises(ConvergenceError, match="under gravity no state is at rest"):
        robodyn.find_equilibrium(robodyn.load(str(path)), {"boom_tau": 0.0})


def test_bad_input(satellite) -> None:
    with pytest.raises(InputError, match="or none"):
        robodyn.find_equilibrium(satellite, {"base_qw": 1.0})
    with pytest.raises(UnknownNameError, match="did you mean 'base_x'"):
        robodyn.find_equilibrium(satellite, {"base_xx": 1.0})
    with pytest.raises(InputError, match="must map names"):
        robodyn.find_equilibrium(satellite, None, np.zeros(15))
    with pytest.raises(InputError, match="targets"):
        robodyn.find_equilibrium(satellite, None, targets={"boom": 0.1})
    with pytest.raises(InputError, match="box"):
        robodyn.find_equilibrium(satellite, None, box={"base_qw": (0, 1)})


def test_the_command_line(capsys, satellite, tmp_path) -> None:
    import json

    from tests.cli_run import run

    path = tmp_path / "satellite.yaml"
    path.write_text(SATELLITE)
    code, out, _ = run(capsys, "equilibrium", str(path), "--fix", "boom_tau=0", "--json")
    assert code == 0
    points = json.loads(out)["equilibria"]
    assert points and all(abs(p["x"]["boom"] - 0.3) < 1e-9 and p["x"]["base_qw"] == 1.0 for p in points)


def test_a_planar_base_holds_its_legs_with_pinocchios_gravity_torques() -> None:
    """solo12 on a planar base: gravity is normal to the plane, so at rest at any heading the joints' inputs are the
    generalized gravity of Pinocchio's JointModelPlanar model (its actuated entries; the base's are zero)."""
    from tests.pinocchio_reference import ROBOTS

    pin = pytest.importorskip("pinocchio")
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    path = str(ROBOTS / "solo_description/robots/solo12.urdf")
    walker = robodyn.load(path, base="planar")
    bent = dict(zip(walker.states[4:16], np.linspace(-0.6, 0.8, 12)))
    (point,) = robodyn.find_equilibrium(walker, {**bent, "base_x": 1.0, "base_y": 0.0, "base_cos": 0.0,
                                                 "base_sin": 1.0})
    reference = pin.buildModelFromUrdf(path, pin.JointModelPlanar())
    gravity = pin.computeGeneralizedGravity(reference, reference.createData(), point.x[:walker.nq])
    assert np.abs(gravity[:3]).max() < 1e-12
    assert np.max(np.abs(point.u - gravity[3:])) < 1e-10 * np.abs(gravity).max()
    assert np.array_equal(point.x[:4], [1.0, 0.0, 0.0, 1.0]) and not point.x[walker.nq:].any()
