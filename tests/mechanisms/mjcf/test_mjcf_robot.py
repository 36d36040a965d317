"""MJCF robots against MuJoCo itself: the DeepMind control suite's models (dm_control's package data), read by
robodyn and compiled by MuJoCo from the same file with contact, limits, equality constraints and frictionloss disabled
(a ``<flag>`` written into a copy of the file, which robodyn honours too): the mass matrix equals ``mj_fullM`` and the
forward dynamics MuJoCo's ``qacc`` from ``mj_forward`` at 20 random states each, with the joints' damping, springs
and armature and the actuators' gears. A free-floating robot is compared in MuJoCo's tangent space: its free joint's
linear velocity is in the world frame, robodyn's (Pinocchio's) in the base's own."""

from __future__ import annotations

import importlib.util
import re
import shutil
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
SUITE = Path(_SPEC.origin).parent / "suite"
KINOVA = Path(_SPEC.origin).parent / "third_party" / "kinova"  # the Jaco arm: mesh geoms with masses
FLAGS = '<option><flag contact="disable" limit="disable" equality="disable" frictionloss="disable"/></option>'
# Relative agreement: both sides run the same recursive algorithms in double precision; 1e-10 leaves 5 digits of
# room over the ~1e-15 rounding seen and would still catch any wrong term (a missing armature is 1e-2).
RTOL = 1e-10
STATES = 20


def suite_copy(tmp_path: Path, name: str, source: Path = SUITE) -> Path:
    """The model ``name`` of the folder ``source`` with its includes (and meshes), copied with the flags above
    written into it."""
    folder = tmp_path / source.name
    if not folder.exists():
        shutil.copytree(source, folder, ignore=shutil.ignore_patterns("*.py", "__pycache__", "*.png"))
    path = folder / f"{name}.xml"
    text = path.read_text()
    path.write_text(re.sub(r"(<mujoco[^>]*>)", lambda m: m.group(1) + FLAGS, text, count=1))
    return path


def load_quietly(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobodynWarning)
        return robodyn.load(str(path))


def compare(path: Path, seed: int = 0) -> None:
    robot = load_quietly(path)
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    floating = model.nq != model.nv
    rng = np.random.default_rng(seed)
    n = model.nv
    for _ in range(STATES):
        q, v, u = rng.uniform(-1, 1, model.nq), rng.uniform(-1, 1, n), rng.uniform(-1, 1, model.nu)
        if floating:
            q[3:7] /= np.linalg.norm(q[3:7])
        data.qpos[:], data.qvel[:], data.ctrl[:] = q, v, u
        mujoco.mj_forward(model, data)
        mass = np.zeros((n, n))
        mujoco.mj_fullM(model, data, mass)
        if floating:  # MuJoCo: (p, w x y z, joints), linear velocity in the world; robodyn: x y z w, in the base
            rotation = np.zeros(9)
            mujoco.mju_quat2Mat(rotation, q[3:7])
            rotation = rotation.reshape(3, 3)
            to_base = np.eye(n)
            to_base[:3, :3] = rotation.T
            velocity = to_base @ v
            x = np.concatenate([q[:3], q[4:7], q[3:4], q[7:], velocity])
            ours_mass = to_base.T @ robot.mass_matrix(x[:model.nq]) @ to_base
            acceleration = robot.f(0.0, x, u)[model.nq:]
            acceleration[:3] = rotation @ (acceleration[:3] + np.cross(velocity[3:6], velocity[:3]))
        else:
            x = np.concatenate([q, v])
            ours_mass = robot.mass_raw(0.0, x, u, robot.parameter_vector())
            acceleration = robot.f(0.0, x, u)[n:]
        np.testing.assert_allclose(ours_mass, mass, rtol=0, atol=RTOL * np.abs(mass).max())
        np.testing.assert_allclose(acceleration, data.qacc, rtol=0, atol=RTOL * max(1.0, np.abs(data.qacc).max()))


@pytest.mark.parametrize("name", ["pendulum", "cartpole", "acrobot", "reacher", "hopper", "point_mass"])
def test_suite_models_match_mujoco(tmp_path: Path, name: str) -> None:
    compare(suite_copy(tmp_path, name))


def test_the_jaco_arm_matches_mujoco(tmp_path: Path) -> None:
    """The Kinova Jaco: mesh geoms given their masses, the inertia MuJoCo's compiler derives from each STL."""
    compare(suite_copy(tmp_path, "jaco_arm", KINOVA))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["finger", "walker", "cheetah", "humanoid", "manipulator"])
def test_larger_suite_models_match_mujoco(tmp_path: Path, name: str) -> None:
    compare(suite_copy(tmp_path, name))


def test_the_inputs_are_the_actuators_with_their_gears(tmp_path: Path) -> None:
    robot = load_quietly(suite_copy(tmp_path, "hopper"))
    assert robot.inputs == ("waist_ctrl", "hip_ctrl", "knee_ctrl", "ankle_ctrl")  # named like their joints
    assert robot.coordinates == ("rootx", "rootz", "rooty", "waist", "hip", "knee", "ankle")
    # the torso's three joints: two massless links between them, the last one the body's
    table = robot.joint_table()
    assert "world -> torso:rootx" in table[1] and "torso:rootz -> torso" in table[3]
    assert robot.position_limits()["knee"] == pytest.approx((np.radians(5), np.radians(150)), rel=1e-15)


def test_a_damped_run_of_2_s_matches_mujoco_rk4(tmp_path: Path) -> None:
    """Both sides step RK4 at 1 ms from the same state with a constant input: the two discrete maps differ only by
    the rounding of f (1e-15), so after 2000 steps of a damped cart-pole they agree far below RK4's own error."""
    path = suite_copy(tmp_path, "cartpole")
    robot = load_quietly(path)
    model = mujoco.MjModel.from_xml_path(str(path))
    model.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    model.opt.timestep = 1e-3
    data = mujoco.MjData(model)
    x0 = np.array([0.1, 2.5, 0.1, -1.0])
    data.qpos[:], data.qvel[:], data.ctrl[:] = x0[:2], x0[2:], [0.02]
    for _ in range(2000):
        mujoco.mj_step(model, data)
    run = robodyn.simulate(robot, 2.0, x0, {"slide": 0.02}, method="rk4", dt=1e-3)
    final = np.asarray(run.x)[:, -1] if np.asarray(run.x).shape[0] == 4 else np.asarray(run.x)[-1]
    # measured 2e-16: the same RK4 map on f's equal to rounding; 1e-12 leaves room for the rounding of 2000 steps grown
    # by the upright pendulum's instability, far below RK4's own error at 1 ms (~1e-8) and any wrong term (a missing
    # damping of 5e-4 moves the state by ~1e-4)
    np.testing.assert_allclose(final, np.concatenate([data.qpos, data.qvel]), rtol=0, atol=1e-12)


def test_convert_writes_a_chain_file_with_the_same_dynamics(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    """``robodyn convert robot.xml --to chain.yaml``: the chain file reads back to the same numbers (repr floats); a
    free-floating robot keeps its base; fixed tendons' forces and the actuators' gears are written as joint forces."""
    from tests.cli_run import run

    for name in ("point_mass", "humanoid"):
        path = suite_copy(tmp_path, name)
        target = tmp_path / f"{name}.yaml"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RobodynWarning)
            code, _, err = run(capsys, "convert", str(path), "--to", str(target))
            assert code == 0, err
            converted, direct = robodyn.load(str(target)), robodyn.load(str(path))
        assert converted.states == direct.states and converted.inputs == direct.inputs
        rng = np.random.default_rng(3)
        x = rng.uniform(-1, 1, len(direct.states))
        if name == "humanoid":
            x[3:7] /= np.linalg.norm(x[3:7])
        u = rng.uniform(-1, 1, len(direct.inputs))
        np.testing.assert_array_equal(converted.f(0.0, x, u), direct.f(0.0, x, u))


def test_the_mjcf_twin_of_the_urdf_arm_has_its_dynamics() -> None:
    """examples/two_link_arm.xml writes two_link_arm.urdf in MJCF: the same f, frames and limits (no MuJoCo needed:
    the URDF path is checked against Pinocchio elsewhere)."""
    examples = Path(__file__).resolve().parents[3] / "examples"
    twin, urdf = robodyn.load(str(examples / "two_link_arm.xml")), robodyn.load(str(examples / "two_link_arm.urdf"))
    assert twin.states == urdf.states and twin.inputs == urdf.inputs
    x, u = np.array([0.4, -1.1, 0.7, 0.2]), np.array([1.5, -0.5])
    # the URDF's inertia is given about the centre of mass in the same frame: the same numbers up to rounding
    np.testing.assert_allclose(twin.f(0.0, x, u), urdf.f(0.0, x, u), rtol=1e-14, atol=1e-14)
    assert twin.position_limits() == urdf.position_limits()
    tips = [m.kinematics().evaluate("pose", "tool", np.atleast_2d(x), m.parameter_vector()) for m in (twin, urdf)]
    np.testing.assert_allclose(tips[0], tips[1], rtol=0, atol=1e-14)


ZOO = """<mujoco model="zoo">
  <compiler angle="degree" eulerseq="zyx"/>
  <option gravity="0.3 -0.2 -9.6"><flag contact="disable" limit="disable"/></option>
  <default>
    <joint damping="0.2" armature="0.05"/>
    <default class="springy"><joint stiffness="3" springref="20"/></default>
  </default>
  <worldbody>
    <body name="carriage" pos="0.1 0.2 0.3" euler="10 20 30">
      <joint name="track" type="slide" axis="1 1 0" ref="0.1"/>
      <joint name="swivel" class="springy" pos="0.05 0 0.1" axis="0 0 1" ref="15"/>
      <geom type="box" size="0.1 0.05 0.04"/>
      <body name="arm" pos="0.2 0 0" axisangle="1 0 1 30" childclass="springy">
        <joint name="lift" axis="0 1 0" pos="0 0.02 0"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03"/>
        <body name="hand" pos="0.4 0 0" xyaxes="0 1 0 -1 0 0">
          <joint name="wrist" axis="1 0 0"/>
          <geom type="ellipsoid" size="0.05 0.03 0.02" density="800"/>
          <body name="tip" pos="0.05 0 0" zaxis="0 1 1">
            <geom type="cylinder" size="0.01 0.02" mass="0.05"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="coupler" stiffness="2" damping="0.3" springlength="0.2">
      <joint joint="lift" coef="1"/><joint joint="wrist" coef="-0.5"/>
    </fixed>
  </tendon>
  <actuator>
    <motor name="push" joint="track" gear="4"/>
    <position name="servo" joint="swivel" kp="5" kv="0.5" gear="2"/>
    <velocity name="spin" joint="wrist" kv="0.7"/>
    <general name="pull" tendon="coupler" gear="1.5" gainprm="2" biastype="affine" biasprm="0.1 -0.4 -0.2"/>
  </actuator>
</mujoco>
"""


def test_joint_actuator_and_tendon_terms_match_mujoco(tmp_path: Path) -> None:
    """Every term at once against MuJoCo: several joints in one body (a slide, a hinge about an offset anchor), refs,
    springs about springref, armature, damping, every orientation form, a fixed tendon's spring and damper, and
    motor, position, velocity and affine general actuators on joints and the tendon."""
    path = tmp_path / "zoo.xml"
    path.write_text(ZOO)
    robot = load_quietly(path)
    assert robot.inputs == ("push", "servo", "spin", "pull")
    compare(path, seed=5)


START = """<mujoco model="start">
  <compiler angle="degree"/>
  <option><flag contact="disable" limit="disable"/></option>
  <worldbody>
    <body name="torso" pos="0.3 -0.2 1.1" euler="20 -35 50">
      <freejoint/>
      <geom type="box" size="0.2 0.1 0.3"/>
      <body name="upper" pos="0 0 -0.3">
        <joint name="hip" type="hinge" axis="0 1 0" ref="30"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.05"/>
        <body name="lower" pos="0 0 -0.4">
          <joint name="knee" type="slide" axis="0 0 1" ref="0.05"/>
          <geom type="sphere" size="0.06"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _stored_qpos0(model) -> np.ndarray:
    """MuJoCo's qpos0 in robodyn's order: the free joint's quaternion w x y z as x y z w."""
    q = np.array(model.qpos0)
    return np.concatenate([q[:3], q[4:7], q[3:4], q[7:]])


def test_a_run_without_x0_starts_where_mujoco_puts_the_robot(tmp_path: Path, capsys) -> None:
    """The initial state is MuJoCo's qpos0 (a free body at its pos and orientation, hinges and slides at their
    ref) at rest, for a model written for it and for the humanoid, and simulate starts there when given no x0."""
    path = tmp_path / "start.xml"
    path.write_text(START)
    for file in (path, suite_copy(tmp_path, "humanoid")):
        robot, model = load_quietly(file), mujoco.MjModel.from_xml_path(str(file))
        x = robot.initial_state()
        expected = _stored_qpos0(model)
        if expected[6] < 0:  # q and -q are one rotation: robodyn keeps w >= 0
            expected[3:7] *= -1
        # MuJoCo converts the Euler angles to a quaternion by its own products: the same rotation to round-off
        np.testing.assert_allclose(x[:model.nq], expected, rtol=0, atol=1e-14)
        np.testing.assert_array_equal(x[model.nq:], np.zeros(model.nv))
    robot = load_quietly(path)
    run = robodyn.simulate(robot, (0.0, 0.01), t_eval=[0.0, 0.01])
    np.testing.assert_array_equal(run.x[0], robot.initial_state())
    assert run.x[0][robot.states.index("hip")] == pytest.approx(np.radians(30), abs=1e-15)
    from tests.cli_run import run as run_cli

    out = tmp_path / "run.csv"
    code, _, err = run_cli(capsys, "simulate", str(path), "--t-final", "0.01", "--out", str(out))
    assert code == 0, err
    header, first = out.read_text().splitlines()[:2]
    start = dict(zip(header.split(","), map(float, first.split(","))))
    # the CSV prints each float's repr (it reads back exactly): the first row is the start itself
    np.testing.assert_array_equal([start[s] for s in robot.states], robot.initial_state())
    diagram = robodyn.Diagram({"gain": robodyn.load("joint"), "body": robot}, defaults={"gain.u": 0.0})
    np.testing.assert_array_equal(diagram.initial_state(), np.concatenate([np.zeros(2), robot.initial_state()]))


RANGES = """<mujoco model="ranges">
  <compiler angle="degree"/>
  <option><flag contact="disable" limit="disable"/></option>
  <default><motor ctrlrange="-2 2"/></default>
  <worldbody>
    <body name="a">
      <joint name="j1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.05"/>
      <body name="b" pos="0.3 0 0">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <geom type="sphere" size="0.05"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="m1" joint="j1" gear="3"/>
    <motor name="m2" joint="j2" ctrllimited="false"/>
    <position name="p2" joint="j2" kp="5" ctrllimited="true" ctrlrange="-30 45"/>
    <velocity name="v1" joint="j1" kv="0.5" ctrlrange="-0.5 0.25"/>
  </actuator>
</mujoco>
"""


def test_control_ranges_are_the_inputs_limits_with_one_warning(tmp_path: Path) -> None:
    """Each limited actuator's ctrlrange (from its class, ctrllimited true, or auto with autolimits) is its input's
    limit, as MuJoCo compiles it (actuator_ctrllimited, actuator_ctrlrange), and one warning says robodyn does not
    clamp; the suite's models too."""
    path = tmp_path / "ranges.xml"
    path.write_text(RANGES)
    for file in (path, suite_copy(tmp_path, "cartpole"), suite_copy(tmp_path, "humanoid")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RobodynWarning)
            robot = robodyn.load(str(file))
        model = mujoco.MjModel.from_xml_path(str(file))
        expected = {robot.inputs[k]: tuple(model.actuator_ctrlrange[k]) for k in range(model.nu)
                    if model.actuator_ctrllimited[k]}
        assert expected and robot.input_limits() == expected  # the file's numbers, read as MuJoCo reads them
        clamps = [w for w in caught if "ctrlrange" in str(w.message)]
        assert len(clamps) == 1 and "does not model" in str(clamps[0].message)
    assert load_quietly(path).input_limits() == {"m1": (-2.0, 2.0), "p2": (-30.0, 45.0), "v1": (-0.5, 0.25)}
    bad = tmp_path / "bad.xml"
    # without the class's range (every actuator shortcut shares MuJoCo's actuator defaults), a limit with no range
    bad.write_text(RANGES.replace('<default><motor ctrlrange="-2 2"/></default>', "").replace(
        'ctrllimited="true" ctrlrange="-30 45"', 'ctrllimited="true"'))
    with pytest.raises(robodyn.ModelFileError, match=r"bad\.xml:18: .*ctrllimited=\"true\"> needs ctrlrange"):
        robodyn.load(str(bad))


def _mujoco_coordinates(model) -> list[int]:
    """Where MuJoCo's quaternions (w x y z) start in qpos: a free joint's after its position, a ball's at once."""
    free, ball = int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL)  # numpy ints: compare as ints
    return [int(model.jnt_qposadr[j]) + (3 if int(model.jnt_type[j]) == free else 0)
            for j in range(model.njnt) if int(model.jnt_type[j]) in (free, ball)]


def _stored(qpos: np.ndarray, quaternions: list[int]) -> np.ndarray:
    """MuJoCo's qpos with each quaternion w x y z stored x y z w (robodyn's)."""
    q = np.array(qpos, dtype=float)
    for a in quaternions:
        q[a:a + 4] = [*qpos[a + 1:a + 4], qpos[a]]
    return q


def test_the_quadruped_matches_mujoco_with_its_activations_and_its_free_ball(tmp_path: Path) -> None:
    """The suite's quadruped: a free torso and a free ball (several moving trees: each free joint in MuJoCo's own
    coordinates, three slides and a ball joint), twelve actuators whose force follows a filtered activation (a' =
    (u - a) / 0.1, states of their own), four of them on fixed tendons. At 20 random states (controls inside
    their ctrlrange, which MuJoCo clamps to, random activations): M equals mj_fullM, and f gives MuJoCo's qacc and
    act_dot."""
    path = suite_copy(tmp_path, "quadruped")
    robot = load_quietly(path)
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    quaternions = _mujoco_coordinates(model)
    nq, nv, na = model.nq, model.nv, model.na
    assert robot.n_states == nq + nv + na and robot.states[:7] == ("root_x", "root_y", "root_z", "root_qx",
                                                                   "root_qy", "root_qz", "root_qw")
    assert robot.states[-na:][:2] == ("yaw_front_left_act", "lift_front_left_act")
    assert robot.inputs[:2] == ("yaw_front_left_ctrl", "lift_front_left")  # the first named like its joint
    assert robot.input_limits()["lift_front_left"] == (-1.0, 1.1)
    expected = _stored(model.qpos0, quaternions)
    # MuJoCo's qpos0 (the bodies at their pos and orientation): the same numbers, robodyn's quaternion order
    np.testing.assert_allclose(robot.initial_state(), np.concatenate([expected, np.zeros(nv + na)]), rtol=0,
                               atol=1e-15)
    rng = np.random.default_rng(3)
    low, high = model.actuator_ctrlrange.T
    for _ in range(STATES):
        qpos, v = rng.uniform(-1, 1, nq), rng.uniform(-1, 1, nv)
        u, act = rng.uniform(low, high), rng.uniform(-1, 1, na)
        for a in quaternions:
            qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
        data.qpos[:], data.qvel[:], data.ctrl[:], data.act[:] = qpos, v, u, act
        mujoco.mj_forward(model, data)
        mass = np.zeros((nv, nv))
        mujoco.mj_fullM(model, data, mass)
        x = np.concatenate([_stored(qpos, quaternions), v, act])
        f = robot.f(0.0, x, u)
        np.testing.assert_allclose(robot.mass_raw(0.0, x, u, robot.parameter_vector()), mass, rtol=0,
                                   atol=RTOL * np.abs(mass).max())
        np.testing.assert_allclose(f[nq:nq + nv], data.qacc, rtol=0, atol=RTOL * max(1.0, np.abs(data.qacc).max()))
        np.testing.assert_allclose(f[nq + nv:], data.act_dot, rtol=0, atol=RTOL * np.abs(data.act_dot).max())


def _mujoco_rk4(path: Path, ctrl: np.ndarray, steps: int) -> tuple[np.ndarray, list[int]]:
    """MuJoCo's RK4 at 1 ms for ``steps`` steps from qpos0 at rest: the final state in robodyn's order."""
    model = mujoco.MjModel.from_xml_path(str(path))
    model.opt.integrator, model.opt.timestep = mujoco.mjtIntegrator.mjINT_RK4, 1e-3
    data = mujoco.MjData(model)
    data.ctrl[:] = ctrl
    for _ in range(steps):
        mujoco.mj_step(model, data)
    quaternions = _mujoco_coordinates(model)
    return np.concatenate([_stored(data.qpos, quaternions), data.qvel, data.act]), quaternions


ROBOT_AND_BALL = """
<mujoco model="toss">
  <option><flag contact="disable"/></option>
  <worldbody>
    <body name="torso" pos="0 0 1" euler="10 20 30">
      <freejoint name="root"/>
      <geom type="box" size=".2 .1 .05" mass="2"/>
      <body name="leg" pos=".2 0 0">
        <joint name="hip" axis="0 1 0" damping=".1" armature=".01"/>
        <geom type="capsule" fromto="0 0 0 0 0 -.3" size=".03" mass=".5"/>
      </body>
    </body>
    <body name="ball" pos="1 0 2" quat="0.9 0.1 0.3 0.2">
      <freejoint/>
      <geom type="ellipsoid" size=".1 .15 .2" mass=".4"/>
    </body>
  </worldbody>
  <actuator>
    <general name="hip" joint="hip" dyntype="filter" dynprm=".05" gainprm="3" biastype="affine" biasprm="0 -2 -.1"/>
    <general name="push" joint="hip" dyntype="integrator" gainprm="2"/>
  </actuator>
</mujoco>
"""


def test_a_robot_beside_a_free_body_runs_as_mujocos_rk4(tmp_path: Path) -> None:
    """Two free bodies (a torso with a leg, an unnamed free joint named after its body) in MuJoCo's coordinates, a
    filter and an integrator activation: 1 s of RK4 at 1 ms from qpos0 with constant controls agrees with MuJoCo's
    RK4 at the same step (both step the quaternions on the sphere)."""
    path = tmp_path / "toss.xml"
    path.write_text(ROBOT_AND_BALL)
    robot = load_quietly(path)
    assert robot.states[8:11] == ("ball_x", "ball_y", "ball_z") and robot.states[-2:] == ("hip_act", "push_act")
    expected, quaternions = _mujoco_rk4(path, np.array([0.7, -0.4]), 1000)
    run = robodyn.simulate(robot, 1.0, None, {"hip_ctrl": 0.7, "push": -0.4}, method="rk4", dt=1e-3)
    end = np.array(run.x[-1])
    for a in quaternions:  # q and -q are one rotation
        end[a:a + 4] *= np.sign(end[a + 3] * expected[a + 3])
    # the same RK4 map on f's equal to rounding: 1000 steps keep it at ~1e-14 (measured 2e-15); RK4's own error at
    # 1 ms is ~1e-9 and a wrong term moves the state by far more
    np.testing.assert_allclose(end, expected, rtol=0, atol=1e-12)


@pytest.mark.slow  # ~8 s: the quadruped's chart kernels compile
def test_the_quadruped_runs_as_mujocos_rk4(tmp_path: Path) -> None:
    path = suite_copy(tmp_path, "quadruped")
    robot = load_quietly(path)
    ctrl = np.array([0.3, -0.5, 0.2] * 4)
    expected, quaternions = _mujoco_rk4(path, ctrl, 300)
    end = np.array(robodyn.simulate(robot, 0.3, None, dict(zip(robot.inputs, ctrl)), method="rk4", dt=1e-3).x[-1])
    for a in quaternions:
        end[a:a + 4] *= np.sign(end[a + 3] * expected[a + 3])
    # as above (measured 1.1e-15 after 300 steps)
    np.testing.assert_allclose(end, expected, rtol=0, atol=1e-12)


def test_convert_refuses_activation_dynamics(tmp_path: Path) -> None:
    path = tmp_path / "toss.xml"
    path.write_text(ROBOT_AND_BALL)
    from robodyn.mechanisms.mjcf.convert import mjcf_chain_yaml

    with pytest.raises(robodyn.ModelFileError, match="hip_ctrl, push have activation dynamics"):
        mjcf_chain_yaml(path)
