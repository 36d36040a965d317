"""MJCF ball joints (``<joint type="ball">``) against MuJoCo itself: two small files written here, a ball between
hinges on a branched tree (its body turned, the ball's anchor off the body's origin, damping and armature on every
joint, motors on the hinges) and a ball at the root of a fixed base, compiled by MuJoCo with contact and limits
disabled: the mass matrix equals ``mj_fullM``, the forward dynamics MuJoCo's ``qacc`` and the quaternion's rate
MuJoCo's quaternion product at 20 random states each; a damped run of 1 s agrees with MuJoCo's RK4 at 1 ms to
rounding; what
robodyn does not build for a ball joint is refused in one line naming it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.cli_run import one_line, run

import robodyn
from robodyn.base.errors import InputError, ModelFileError, RobodynWarning

mujoco = pytest.importorskip("mujoco")

FLAGS = '<option><flag contact="disable" limit="disable"/></option>'
# A ball between two hinges, and a branch beside it from the first body (robodyn's bodies come breadth first, its
# states in the file's order, as MuJoCo's): qpos = h1, s (w x y z), h2, h3.
BRANCHED = f"""<mujoco model="branched">{FLAGS}
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint name="h1" type="hinge" axis="0 1 0" damping="0.3" armature="0.01"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
      <body name="b" pos="0.3 0 0" euler="10 20 30">
        <joint name="s" type="ball" pos="0.01 0.02 0" damping="0.2" armature="0.02"/>
        <geom type="box" pos="0.15 0.02 -0.01" size="0.15 0.03 0.02"/>
        <body name="c" pos="0.3 0 0">
          <joint name="h2" type="hinge" axis="0 0 1" damping="0.1"/>
          <geom type="capsule" fromto="0 0 0 0.2 0.05 0" size="0.03"/>
        </body>
      </body>
      <body name="d" pos="0 0.2 0">
        <joint name="h3" type="hinge" axis="1 0 0" damping="0.05"/>
        <geom type="sphere" pos="0 0.1 0" size="0.05"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="h1" gear="2"/><motor joint="h2"/></actuator>
</mujoco>
"""
# A ball at the root of a fixed base (a spherical pendulum) with a hinge below it: qpos = s (w x y z), h.
ROOT = f"""<mujoco model="root">{FLAGS}
  <worldbody>
    <body name="bob" pos="0 0 1" quat="0.9 0.1 0.3 0.2">
      <joint name="s" type="ball" damping="0.05" armature="0.01"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
      <body name="tip" pos="0 0 -0.5">
        <joint name="h" type="hinge" axis="1 1 0" damping="0.02"/>
        <geom type="box" pos="0.1 0 -0.1" size="0.1 0.04 0.03"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="h"/></actuator>
</mujoco>
"""
# Both sides run the same recursive algorithms in double precision: agreement is ~1e-15 relative (measured: 2.6e-15
# for M, 2.4e-15 for qacc); 1e-10 leaves five digits of room and still catches any wrong term (a missing armature
# moves qacc by ~1e-2, a ball's frame turned by its body's euler by ~1e-1).
RTOL = 1e-10
STATES = 20


def write(tmp_path: Path, text: str, name: str = "ball.xml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def ball_blocks(model: object) -> list[int]:
    """The qpos addresses of MuJoCo's ball joints."""
    return [int(model.jnt_qposadr[j]) for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL]


def to_robodyn(qpos: np.ndarray, balls: list[int]) -> np.ndarray:
    """MuJoCo's qpos (each ball w x y z) as robodyn's configuration (each ball x y z w)."""
    q = qpos.copy()
    for a in balls:
        q[a:a + 4] = [*qpos[a + 1:a + 4], qpos[a]]
    return q


def to_mujoco(q: np.ndarray, balls: list[int]) -> np.ndarray:
    qpos = q.copy()
    for a in balls:
        qpos[a:a + 4] = [q[a + 3], *q[a:a + 3]]
    return qpos


@pytest.mark.parametrize("text", [BRANCHED, ROOT], ids=["branched", "root"])
def test_mass_matrix_accelerations_and_quaternion_rates_equal_mujoco(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    robot = robodyn.load(str(path))
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    balls = ball_blocks(model)
    assert robot.n_coordinates == model.nq and robot.n_states == model.nq + model.nv
    rng = np.random.default_rng(1)
    for _ in range(STATES):
        qpos, v, u = rng.uniform(-1, 1, model.nq), rng.uniform(-2, 2, model.nv), rng.uniform(-1, 1, model.nu)
        for a in balls:
            qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
        data.qpos[:], data.qvel[:], data.ctrl[:] = qpos, v, u
        mujoco.mj_forward(model, data)
        mass = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(model, data, mass)
        x = np.concatenate([to_robodyn(qpos, balls), v])
        f = robot.f(0.0, x, u)
        ours_mass = robot.mass_raw(0.0, x, u, robot.parameter_vector())
        np.testing.assert_allclose(ours_mass, mass, rtol=0, atol=RTOL * np.abs(mass).max())
        np.testing.assert_allclose(f[model.nq:], data.qacc, rtol=0, atol=RTOL * max(1.0, np.abs(data.qacc).max()))
        rate = np.zeros(4)  # MuJoCo's own quaternion product: q' = 1/2 q (x) (0, w), w x y z
        for a, v_at in zip(balls, (int(model.jnt_dofadr[j]) for j in range(model.njnt)
                                   if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL)):
            mujoco.mju_mulQuat(rate, qpos[a:a + 4], np.array([0.0, *v[v_at:v_at + 3]]))
            # the same products of the same numbers: equal to rounding (1e-16); 1e-14 is its scale
            np.testing.assert_allclose(f[a:a + 4], [*(0.5 * rate[1:]), 0.5 * rate[0]], rtol=0, atol=1e-14)


def test_states_inputs_and_the_start_are_mujocos(tmp_path: Path) -> None:
    robot = robodyn.load(str(write(tmp_path, BRANCHED)))
    assert robot.coordinates == ("h1", "s_qx", "s_qy", "s_qz", "s_qw", "h2", "h3")
    assert robot.velocities == ("h1_dot", "s_wx", "s_wy", "s_wz", "h2_dot", "h3_dot")
    assert robot.inputs == ("h1_motor", "h2_motor")
    assert robot.units()["s_qw"] == "1" and robot.units()["s_wy"] == "rad/s"
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "ball.xml"))
    start = robot.initial_state()
    np.testing.assert_array_equal(to_mujoco(start[:model.nq], ball_blocks(model)), model.qpos0)
    np.testing.assert_array_equal(start[model.nq:], 0.0)


def test_a_damped_run_of_1_s_matches_mujoco_rk4(tmp_path: Path) -> None:
    """Both step RK4 at 1 ms from the same state, each moving the ball's quaternion on the sphere (MuJoCo's stages by
    mj_integratePos, robodyn's in its chart, recentred after every step): the two discrete maps agree to rounding,
    far below RK4's own error at 1 ms (MuJoCo's RK4 at 1 ms against 0.5 ms)."""
    path = write(tmp_path, BRANCHED)
    robot = robodyn.load(str(path))
    model = mujoco.MjModel.from_xml_path(str(path))
    model.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    balls = ball_blocks(model)
    qpos = np.array([0.3, 0.8, 0.2, -0.4, 0.3, -0.5, 0.4])
    qpos[1:5] /= np.linalg.norm(qpos[1:5])
    v, u = np.array([0.5, 1.0, -2.0, 1.5, 0.3, -0.7]), np.array([0.2, -0.1])

    def mujoco_run(step: float) -> np.ndarray:
        model.opt.timestep = step
        data = mujoco.MjData(model)
        data.qpos[:], data.qvel[:], data.ctrl[:] = qpos, v, u
        for _ in range(round(1.0 / step)):
            mujoco.mj_step(model, data)
        return np.concatenate([to_robodyn(data.qpos, balls), data.qvel])

    theirs, finer = mujoco_run(1e-3), mujoco_run(5e-4)
    x0 = np.concatenate([to_robodyn(qpos, balls), v])
    run_ = robodyn.simulate(robot, 1.0, x0, dict(zip(robot.inputs, u)), method="rk4", dt=1e-3)
    ours = np.asarray(run_.x)[-1]
    # measured: 1.2e-14 apart, against RK4's own error of 2.4e-10 at 1 ms; 1e-12 leaves room for the rounding of 1000
    # steps and is far below any wrong term (the ball's damping of 0.2 left out moves the state by ~1e-1)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    assert np.abs(theirs - finer).max() > 1e-11  # RK4's error is far above the agreement: the test is not vacuous
    norm = np.linalg.norm(np.asarray(run_.x)[:, 1:5], axis=1)
    assert np.abs(norm - 1.0).max() < 1e-14  # products of unit quaternions: unit to round-off (measured 1.6e-15)


def test_a_ball_joint_model_refuses_what_it_does_not_build_naming_the_ball(tmp_path: Path) -> None:
    robot = robodyn.load(str(write(tmp_path, BRANCHED)))
    x0 = robot.initial_state()
    for call in (robot.torque_regressor, robot.exported_functions,
                 lambda: robodyn.simulate(robot, 0.1, x0, events="h1 - 1")):
        with pytest.raises(InputError, match=r"joint 's'.*ball|ball joint 's'"):
            call()
    with pytest.raises(InputError, match=r"inverse kinematics.*not built for ball joints"):
        robodyn.inverse_kinematics(robot, [0.1, 0.0, 0.0], frame="c")


def test_the_cli_refuses_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = str(write(tmp_path, BRANCHED))
    for argv in (("export", path, "--lang", "c", "--out", str(tmp_path / "out")),
                 ("export", path, "--lang", "fmu", "--out", str(tmp_path / "m.fmu"))):
        code, _, err = run(capsys, *argv)
        assert code == 2, (argv, err)
        assert "'s'" in one_line(err) and "ball" in err
    code, _, err = run(capsys, "ik", path, "--frame", "c", "--target", "0.1,0,0")
    assert code == 2 and "ball joints" in one_line(err), err
    code, out, err = run(capsys, "fk", path, "--frame", "c")  # the frames of a ball chain: its pose
    assert code == 0 and "rotation" in out, err
    assert not (tmp_path / "out").exists() and not (tmp_path / "m.fmu").exists()
    code, out, err = run(capsys, "linearize", path)  # in the tangent space: the ball's rotation vector
    assert code == 0 and "s_rx" in out, err


def test_convert_writes_a_chain_file_with_the_same_dynamics(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    """``robodyn convert ball.xml --to chain.yaml``: the ball joint written as ``type: ball``, the file read back to the
    same f (repr floats: measured bit for bit; 1e-12 allows the rounding of a placement's rpy round trip)."""
    path = write(tmp_path, BRANCHED)
    code, _, err = run(capsys, "convert", str(path), "--to", str(tmp_path / "chain.yaml"))
    assert code == 0, err
    robot, chain = robodyn.load(str(path)), robodyn.load(str(tmp_path / "chain.yaml"))
    assert chain.states == robot.states and chain.inputs == robot.inputs
    rng = np.random.default_rng(2)
    for _ in range(5):
        x, u = rng.uniform(-1, 1, robot.n_states), rng.uniform(-1, 1, robot.n_inputs)
        x[1:5] /= np.linalg.norm(x[1:5])
        np.testing.assert_allclose(chain.f(0.0, x, u), robot.f(0.0, x, u), rtol=0, atol=1e-12)


@pytest.mark.parametrize(("inside", "outside", "message"), [
    ('stiffness="2"', "", "ball joint 's' has stiffness"),
    ('frictionloss="0.1"', "", "ball joint 's' has frictionloss"),
    ("", '<actuator><motor joint="s"/></actuator>', "actuator 's_motor' drives the ball joint 's'"),
    ("", '<tendon><fixed><joint joint="s" coef="1"/></fixed></tendon>', "tendon on the ball joint 's'"),
])
def test_what_a_ball_joint_cannot_have_is_refused(tmp_path: Path, inside: str, outside: str, message: str) -> None:
    text = ROOT.replace('damping="0.05"', f'damping="0.05" {inside}').replace("<actuator>", f"{outside}<actuator>")
    with pytest.raises(ModelFileError, match=message):
        robodyn.load(str(write(tmp_path, text)))


def test_a_free_body_with_a_ball_below_it_is_refused_naming_the_ball(tmp_path: Path) -> None:
    text = ROOT.replace('<body name="bob" pos="0 0 1" quat="0.9 0.1 0.3 0.2">',
                        '<body name="bob" pos="0 0 1" quat="0.9 0.1 0.3 0.2"><freejoint/><body name="arm">')
    text = text.replace("</worldbody>", "</body></worldbody>")
    with pytest.raises(ModelFileError, match="a floating base is not built for ball joints yet \\(joint 's' is a ball"):
        robodyn.load(str(write(tmp_path, text)))


def test_a_ball_range_is_warned_about_as_a_cone(tmp_path: Path) -> None:
    text = ROOT.replace('damping="0.05"', 'damping="0.05" range="0 40"').replace(FLAGS, "")
    with pytest.warns(RobodynWarning, match="cone.*ball joints s"):
        robodyn.load(str(write(tmp_path, text)))
