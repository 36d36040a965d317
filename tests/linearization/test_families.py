"""Continuous families of equilibria (robodyn.linearization.families): points found at random values of a coordinate the
equations do not contain are one family; a singular Jacobian without a family is an isolated point.

References are closed forms: the gravity torque of the three-dof arm does not depend on its base yaw (its axis is
vertical), a cart's track is level, a two-link arm without gravity is at rest anywhere, and -x^3 has a zero
Jacobian at its only root.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.linearization.families import families

EXAMPLES = Path(__file__).parents[2] / "examples"


def equilibria(model: robodyn.Model, starts: int = 8) -> tuple[list[robodyn.OperatingPoint], list[str]]:
    fixed = {name: 0.0 for name in model.inputs}
    return list(robodyn.find_equilibrium(model, fix=fixed, starts=starts)), list(fixed)


def test_the_arm_at_random_base_yaws_is_one_family_per_posture() -> None:
    arm = robodyn.load(EXAMPLES / "three_dof_arm.urdf")
    points, fixed = equilibria(arm)
    found = families(arm, points, fixed)
    assert sum(f.members for f in found) == len(points) and len(found) < len(points)
    for family in found:
        assert family.moving == ("base_yaw",) and family.continuous
        assert family.point.x[0] == 0.0  # the member nearest 0 along the family
        # every base yaw is an equilibrium alike: the closed form (gravity along the yaw axis)
        for yaw in np.linspace(-math.pi, math.pi, 9):
            x = family.point.x.copy()
            x[0] = yaw
            assert np.max(np.abs(arm.f(0.0, x, family.point.u))) <= 1e-10
    postures = [f.point.x[1:3] for f in found]  # the families differ in something other than the yaw
    assert all(np.max(np.abs(a - b)) > 1e-3 for i, a in enumerate(postures) for b in postures[i + 1:])


def test_a_cart_on_a_level_track_is_a_family_along_x() -> None:
    cart = robodyn.load("cart_pole")
    points, fixed = equilibria(cart)
    found = families(cart, points, fixed)
    assert [f.moving for f in found] == [("x",)] * len(found)
    assert sorted(round(abs(f.point.x[1]) / math.pi) for f in found) == [0, 1]  # hanging and upright
    assert all(f.point.x[0] == 0.0 for f in found)


def test_without_gravity_every_configuration_is_a_family() -> None:
    arm = robodyn.load("two_link_arm").with_parameters(g=0.0)
    points, fixed = equilibria(arm, starts=4)
    (family,) = families(arm, points, fixed)
    assert set(family.moving) == {"shoulder", "elbow"} and family.members == len(points)
    np.testing.assert_array_equal(family.point.x[:2], [0.0, 0.0])


def test_a_singular_jacobian_alone_is_no_family() -> None:
    cubic = robodyn.SymbolicSystem(["x"], None, ["-x**3"])  # J = 0 at x = 0, but f = -x^3 is not 0 beside it
    (point,) = robodyn.find_equilibrium(cubic)
    (family,) = families(cubic, [point])
    assert not family.continuous and family.moving == () and family.point is point
    pendulum = robodyn.load("pendulum")
    points, fixed = equilibria(pendulum)
    assert [f.continuous for f in families(pendulum, points, fixed)] == [False, False]


@pytest.mark.parametrize("fixed_name", ["x", "theta"])
def test_a_fixed_state_is_never_a_direction(fixed_name: str) -> None:
    cart = robodyn.load("cart_pole")
    fixed = {name: 0.0 for name in cart.inputs} | {fixed_name: 0.0}
    points = robodyn.find_equilibrium(cart, fix=fixed, starts=4)
    assert all(fixed_name not in f.moving for f in families(cart, points, list(fixed)))


def test_a_targeted_output_is_kept_along_a_family() -> None:
    """f = 0 on the line a + b = 0 (a family along (1, -1)); targeting y = a pins the one point a = 0.5 of it."""
    line = robodyn.SymbolicSystem(["a", "b"], None, ["-(a + b)", "-(a + b)"], outputs={"y": "a"})
    points = list(robodyn.find_equilibrium(line, starts=3))
    (family,) = families(line, points)
    assert family.continuous and set(family.moving) == {"a", "b"}
    np.testing.assert_allclose(family.point.x, [0.0, 0.0], atol=1e-12)
    (point,) = robodyn.find_equilibrium(line, targets={"y": 0.5})
    (trimmed,) = families(line, [point], targets={"y": 0.5})
    assert not trimmed.continuous and trimmed.point is point and abs(point.x[0] - 0.5) < 1e-10


def test_a_base_rotation_is_never_moved_off_its_manifold(tmp_path: Path) -> None:
    """A satellite in orbit is at rest at any base position and orientation: the family moves the position only
    (a straight line through a unit quaternion leaves the unit sphere), and the quaternion stays unit."""
    from tests.linearization.test_tangent_points import SATELLITE

    path = tmp_path / "satellite.yaml"
    path.write_text(SATELLITE)
    satellite = robodyn.load(str(path))
    points = robodyn.find_equilibrium(satellite, {"boom_tau": 0.0}, {"base_x": 1.0, "base_qw": 1.0})
    (family,) = families(satellite, points, ["boom_tau"])
    assert family.moving == ("base_x", "base_y", "base_z")
    np.testing.assert_array_equal(family.point.x[:3], [0.0, 0.0, 0.0])
    assert family.point.x[6] == 1.0 and abs(float(np.linalg.norm(family.point.x[3:7])) - 1.0) < 1e-15
