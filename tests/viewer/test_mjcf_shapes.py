"""An MJCF robot's geoms as the 3-D view's shapes, placed against MuJoCo: each shape's pose in the world (its link's
pose from robodyn's kinematics times its origin) is the pose MuJoCo gives the geom (``geom_xpos``, ``geom_xmat``)."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import RobodynWarning
from robodyn.viewer.mjcf_shapes import mjcf_geometry
from robodyn.viewer.view import model_geometry

mujoco = pytest.importorskip("mujoco")
_SPEC = importlib.util.find_spec("dm_control")
if _SPEC is None or _SPEC.origin is None:
    pytest.skip("dm_control is not installed (the test extra has it)", allow_module_level=True)
PACKAGE = Path(_SPEC.origin).parent


@pytest.mark.parametrize("name", ["hopper", "cheetah", "acrobot"])
def test_each_geom_is_drawn_where_mujoco_puts_it(name: str) -> None:
    path = PACKAGE / "suite" / f"{name}.xml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobodynWarning)
        robot = robodyn.load(str(path))
    geometry = mjcf_geometry(path)
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    x = np.random.default_rng(7).uniform(-1, 1, len(robot.states))
    data.qpos[:] = x[:model.nq]
    mujoco.mj_forward(model, data)
    drawn = [g for g in range(model.ngeom) if model.geom_bodyid[g] != 0 and model.geom_group[g] <= 2]
    assert len(geometry.visuals) == len(drawn)  # the same geoms, in MuJoCo's order (bodies depth first)
    kinematics = robot.kinematics()
    for visual, geom in zip(geometry.visuals, drawn):
        link = kinematics.evaluate("pose", visual.link, np.atleast_2d(x), robot.parameter_vector())[0]
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = link[:9].reshape(3, 3), link[9:]
        world = pose @ visual.origin
        if visual.shape == "sphere" and model.geom_type[geom] == mujoco.mjtGeom.mjGEOM_ELLIPSOID:
            world[:3, :3] = world[:3, :3] @ np.diag(1 / model.geom_size[geom])  # the ellipsoid's radii scaled in
        # products of a few rotations and offsets: rounding of order 1e-15
        np.testing.assert_allclose(world[:3, 3], data.geom_xpos[geom], rtol=0, atol=1e-13)
        np.testing.assert_allclose(world[:3, :3], data.geom_xmat[geom].reshape(3, 3), rtol=0, atol=1e-13)
        if visual.shape in ("capsule", "cylinder"):
            assert visual.size == pytest.approx((model.geom_size[geom][0], 2 * model.geom_size[geom][1]))


def test_the_view_draws_an_mjcf_robot_from_its_geoms() -> None:
    path = PACKAGE / "third_party" / "kinova" / "jaco_arm.xml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobodynWarning)
        robot = robodyn.load(str(path))
    geometry = model_geometry(robot)
    assert {v.shape for v in geometry.visuals} == {"mesh", "cylinder"} and not geometry.missing
    assert geometry.links == ("world", "b_1", "b_2", "b_3", "b_4", "b_5", "b_6")  # the base drawn on the world
