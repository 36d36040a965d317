"""An MJCF robot's frames against MuJoCo: the quadruped of the control suite (free joints as slides and balls, sites
placed by ``pos`` and by ``fromto``), its every site's pose (``site_xpos``, ``site_xmat``), geometric Jacobian
(``mj_jacSite``: MuJoCo's qvel is robodyn's velocity entries, a free joint's linear velocity in the world and its
angular velocity in the body) and J'q' (``mj_objectAcceleration`` at qacc = 0, less MuJoCo's gravity, which it
carries as the base's acceleration) at random states."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import RobodynWarning

mujoco = pytest.importorskip("mujoco")
_SPEC = importlib.util.find_spec("dm_control")
if _SPEC is None or _SPEC.origin is None:
    pytest.skip("dm_control is not installed (the test extra has it)", allow_module_level=True)
QUADRUPED = Path(_SPEC.origin).parent / "suite" / "quadruped.xml"
# The same products of the same numbers in another order: measured 2e-15; 1e-12 leaves room and catches a site
# placed wrong (a fromto midpoint missed moves it by ~0.1 m) or a column of the wrong joint (~1).
TOLERANCE = 1e-12


def test_every_site_moves_as_in_mujoco() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobodynWarning)
        robot = robodyn.load(str(QUADRUPED))
    kin = robodyn.Kinematics(robot)
    model = mujoco.MjModel.from_xml_path(str(QUADRUPED))
    data = mujoco.MjData(model)
    quaternions = [int(model.jnt_qposadr[j]) + 3 for j in range(model.njnt)
                   if int(model.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_FREE)]
    assert len(kin.coordinates) == model.nq and len(kin.rates) == model.nv
    sites = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_SITE, k) for k in range(model.nsite)]
    rng = np.random.default_rng(7)
    for _ in range(5):
        qpos, v = rng.uniform(-1, 1, model.nq), rng.uniform(-1, 1, model.nv)
        for a in quaternions:
            qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
        data.qpos[:], data.qvel[:] = qpos, v
        mujoco.mj_forward(model, data)
        data.qacc[:] = 0.0
        mujoco.mj_rnePostConstraint(model, data)
        q = qpos.copy()
        for a in quaternions:
            q[a:a + 4] = [*qpos[a + 1:a + 4], qpos[a]]
        for k, site in enumerate(sites):
            pose = kin.pose(q, site)
            np.testing.assert_allclose(pose.position, data.site_xpos[k], rtol=0, atol=TOLERANCE)
            np.testing.assert_allclose(pose.rotation, data.site_xmat[k].reshape(3, 3), rtol=0, atol=TOLERANCE)
            linear, angular = np.zeros((3, model.nv)), np.zeros((3, model.nv))
            mujoco.mj_jacSite(model, data, linear, angular, k)
            np.testing.assert_allclose(kin.jacobian(q, site), np.vstack([linear, angular]), rtol=0, atol=TOLERANCE)
            acceleration = np.zeros(6)  # rotational, then linear
            mujoco.mj_objectAcceleration(model, data, mujoco.mjtObj.mjOBJ_SITE, k, acceleration, 0)
            expected = np.concatenate([acceleration[3:] + model.opt.gravity, acceleration[:3]])
            np.testing.assert_allclose(kin.bias_acceleration(q, v, site), expected, rtol=0,
                                       atol=TOLERANCE * max(1.0, np.abs(expected).max()))
        np.testing.assert_allclose(kin.velocity(q, v, "torso"), np.vstack(_site_jacobian(model, data, "torso")) @ v,
                                   rtol=0, atol=TOLERANCE)


def _site_jacobian(model, data, site: str) -> tuple[np.ndarray, np.ndarray]:
    linear, angular = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    mujoco.mj_jacSite(model, data, linear, angular, mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, site))
    return linear, angular


def test_inverse_kinematics_is_refused_with_ball_joints() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobodynWarning)
        robot = robodyn.load(str(QUADRUPED))
    with pytest.raises(robodyn.InputError, match="not built for ball joints"):
        robodyn.inverse_kinematics(robot, [0.5, 0.5, 0.0], frame="toe_front_left")
