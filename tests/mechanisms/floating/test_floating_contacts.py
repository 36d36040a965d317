"""Compliant contact on a floating base (robodyn.mechanisms.floating.chain with contacts, robodyn.rigid.floating's
MovingFrames): solo12's feet pressed into a plane move it as Pinocchio's ABA with the same forces as external
wrenches, linearize sees the contact forces, and the quadruped example stands on its feet."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from tests.pinocchio_reference import ROBOTS

import robodyn
from robodyn.base.errors import InputError, ModelFileError
from robodyn.mechanisms.floating.chain import FloatingChain

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
STANDING = EXAMPLES / "quadruped_standing.yaml"
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
LAW = {"stiffness": 2e4, "damping": 2e3, "friction": 0.7, "slip_velocity": 0.05, "exponent": 1.5}
NORMAL = np.array([0.1, -0.2, 1.0]) / np.linalg.norm([0.1, -0.2, 1.0])


def _solo(rng: np.random.Generator) -> tuple[FloatingChain, object, np.ndarray, np.ndarray, float]:
    """solo12 on a floating base with its four feet against a tilted plane just above the highest of them (so
    that all press into it), its Pinocchio model, a configuration and a velocity."""
    pin = pytest.importorskip("pinocchio")
    path = str(ROBOTS / "solo_description/robots/solo12.urdf")
    robot = robodyn.load(path, base="floating")
    reference = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    rotation = rng.normal(size=4)
    q = np.concatenate([rng.normal(size=3), rotation / np.linalg.norm(rotation), rng.uniform(-1, 1, 12)])
    v = rng.normal(size=reference.nv)
    data = reference.createData()
    pin.framesForwardKinematics(reference, data, q)
    height = max(NORMAL @ data.oMf[reference.getFrameId(foot)].translation for foot in FEET) + 0.002
    point = height * NORMAL
    contacts = [{"frame": foot, "plane": {"point": tuple(point), "normal": tuple(NORMAL)}, "model": "compliant",
                 **LAW} for foot in FEET]
    return FloatingChain(robot.chain, "floating", contacts=contacts), reference, q, v, height


def _law(p: np.ndarray, velocity: np.ndarray, height: float) -> tuple[float, np.ndarray]:
    """Hunt-Crossley and regularized Coulomb friction written out in numpy: f_n and the total force (world)."""
    depth = max(height - NORMAL @ p, 0.0)
    rate = -NORMAL @ velocity
    f_n = max(0.0, depth ** LAW["exponent"] * (LAW["stiffness"] + LAW["damping"] * rate))
    tangential = velocity - (NORMAL @ velocity) * NORMAL
    friction = -LAW["friction"] * f_n * tangential / math.sqrt(tangential @ tangential + LAW["slip_velocity"] ** 2)
    return f_n, f_n * NORMAL + friction


@pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
def test_solo12_pressed_into_a_plane_moves_as_pinocchios_aba_with_the_contact_wrenches() -> None:
    """The feet's forces from the law in numpy at Pinocchio's frame placements and velocities, applied as external
    wrenches (each in its joint's frame) to pinocchio.aba: the same accelerations to 1e-10 of their size, and the
    contact outputs (normal force, friction, slip) the law's."""
    pin = pytest.importorskip("pinocchio")
    rng = np.random.default_rng(11)
    for _ in range(3):
        model, reference, q, v, height = _solo(rng)
        data = reference.createData()
        pin.forwardKinematics(reference, data, q, v)
        pin.updateFramePlacements(reference, data)
        external = [pin.Force.Zero() for _ in range(reference.njoints)]
        expected_outputs = []
        for foot in FEET:
            frame = reference.getFrameId(foot)
            p = data.oMf[frame].translation
            velocity = pin.getFrameVelocity(reference, data, frame, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED).linear
            f_n, force = _law(p, velocity, height)
            joint = reference.frames[frame].parentJoint
            world = pin.Force(force, np.cross(p, force))  # at the world's origin
            external[joint] = external[joint] + data.oMi[joint].actInv(world)
            tangential = velocity - (NORMAL @ velocity) * NORMAL
            expected_outputs += [f_n, *(force - f_n * NORMAL), math.sqrt(tangential @ tangential)]
        tau = rng.normal(size=12)
        expected = pin.aba(reference, reference.createData(), q, v, np.concatenate([np.zeros(6), tau]), external)
        x = np.concatenate([q, v])
        f = model.f(0.0, x, tau)
        assert np.max(np.abs(f[reference.nq:] - expected)) < 1e-10 * np.abs(expected).max()
        y = model.h(0.0, x, tau)
        assert np.array_equal(y[: x.size], x)
        np.testing.assert_allclose(y[x.size:], expected_outputs, rtol=1e-10, atol=1e-10 * max(expected_outputs))
        assert min(expected_outputs[0::5]) > 0  # every foot pushed


@pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
def test_linearize_sees_the_contact_forces_on_a_floating_base() -> None:
    """A of the tangent-space linearization equals central differences of the tangent model's f (the contact
    forces' derivatives by forward mode on the tape, the bodies' analytically), and differs from the robot's
    without contacts."""
    rng = np.random.default_rng(5)
    model, _, q, v, _ = _solo(rng)
    x, tau = np.concatenate([q, v]), rng.normal(size=12)
    tangent = model.chart().tangent_model(x)
    linear = robodyn.linearize(model, x, tau)
    z0, h = np.asarray(linear.x_op), 1e-6
    columns = [(tangent.f(0.0, z0 + h * e, tau) - tangent.f(0.0, z0 - h * e, tau)) / (2 * h) for e in np.eye(z0.size)]
    # truncation h^2 |f'''| and rounding 1e-16 |f| / h: ~1e-7 of |A| (the stiff contact makes |A| ~ 1e5)
    assert np.max(np.abs(np.column_stack(columns) - linear.A)) < 1e-7 * np.abs(linear.A).max()
    free = robodyn.linearize(FloatingChain(model.chain, "floating"), x, tau)
    assert np.abs(free.A - linear.A).max() > 1e-3 * np.abs(linear.A).max()


def _standing() -> tuple[FloatingChain, dict[str, float]]:
    model = robodyn.load(str(STANDING))
    par = dict(model.parameters)
    legs = ("lf", "rf", "lh", "rh")
    x0 = {"base_z": 2 * par["l"] * math.cos(par["hip_rest"]) + 0.01, "base_qw": 1.0,
          **{f"{leg}_hip": par["hip_rest"] for leg in legs}, **{f"{leg}_knee": par["knee_rest"] for leg in legs}}
    return model, x0


def test_the_quadruped_lands_and_stands_on_its_feet() -> None:
    """Dropped 1 cm, it lands and settles: after 2 s the four normal forces carry its weight and the friction
    forces cancel (1e-6 of the weight), the base is at rest but for the friction regularization's creep, each foot
    slipping no faster than eps F_t / sqrt((mu f_n)^2 - F_t^2) (robodyn.rigid.contact) with F_t its friction
    force, and the quaternion of unit norm."""
    model, x0 = _standing()
    par = model.parameters
    run = robodyn.simulate(model, 2.0, x0, rtol=1e-8, atol=1e-10, t_eval=[0.0, 1.0, 2.0])
    y = dict(zip(model.outputs, run.y[-1]))
    weight = (par["m_b"] + 4 * (par["m_t"] + par["m_s"])) * par["g"]
    legs = ("lf", "rf", "lh", "rh")
    assert sum(y[f"{leg}_foot_normal_force"] for leg in legs) == pytest.approx(weight, rel=1e-6)
    for axis in "xy":
        assert abs(sum(y[f"{leg}_foot_friction_{axis}"] for leg in legs)) < 1e-6 * weight
    for leg in legs:
        f_n = y[f"{leg}_foot_normal_force"]
        f_t = math.hypot(y[f"{leg}_foot_friction_x"], y[f"{leg}_foot_friction_y"])
        bound = 1e-3 * f_t / math.sqrt((par["mu"] * f_n) ** 2 - f_t ** 2)  # eps = the default slip_velocity
        assert f_n > 0.1 * weight / 4 and y[f"{leg}_foot_slip"] <= 1.01 * bound + 1e-9
    velocities = run.x[-1, model.nq:]
    assert np.abs(velocities).max() < 1e-3
    assert abs(np.linalg.norm(run.x[-1, 3:7]) - 1.0) < 1e-12


def test_the_feet_touch_down_when_the_free_fall_says_so() -> None:
    """In free fall the legs keep their crouch (every body falls alike; the springs stay at rest), so each foot's
    gap, 1 cm at the start, closes at t = sqrt(2 * 0.01 / g): the event <foot>_gap falling, from
    contact_events, at that time to 1e-9, in the chart's compiled event function and in the interpreted kernels;
    the gaps also name events in text."""
    model, x0 = _standing()
    expected = math.sqrt(2 * 0.01 / model.parameters["g"])
    events = model.contact_events(terminal=False)
    assert len(events) == 8 and events[0].name == "lf_foot_touchdown"
    for backend in ("compiled", "interpreted"):
        run = robodyn.simulate(model, expected * 1.02, x0, events=events, rtol=1e-10, atol=1e-12, backend=backend)
        found = {e.name: e.t for e in run.events}
        for leg in ("lf", "rf", "lh", "rh"):
            assert found[f"{leg}_foot_touchdown"] == pytest.approx(expected, rel=1e-9)
    text = robodyn.simulate(model, expected, x0, events=["lf_foot_gap - 0.005"], rtol=1e-10, atol=1e-12)
    assert text.events[0].t == pytest.approx(math.sqrt(2 * 0.005 / model.parameters["g"]), rel=1e-9)


def test_contacts_on_a_moving_base_refuse_what_is_not_built(tmp_path: Path) -> None:
    model, _ = _standing()
    with pytest.raises(InputError, match=r"contact 'lf_foot': friction must be 0 or more, got -1"):
        model.with_parameters(mu=-1.0)
    text = STANDING.read_text()
    impact = text.replace("model: compliant, stiffness: k_c, damping: d_c,\n     friction: mu}",
                          "model: impact, restitution: 0.5}", 1)
    assert impact != text
    path = tmp_path / "q.yaml"
    path.write_text(impact)
    with pytest.raises((InputError, ModelFileError), match=r"impact contacts \(lf_foot\) are not built for a float"):
        robodyn.load(str(path))
    path.write_text(text + "loops:\n  - {name: c, frames: [lf_foot, rf_foot]}\n")
    with pytest.raises(ModelFileError, match="loops and constraints need a fixed base"):
        robodyn.load(str(path))
