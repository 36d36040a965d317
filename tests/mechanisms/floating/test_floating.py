"""Robots on a moving base against Pinocchio's free-flyer models: rnea, crba, aba, the centre of mass, its Jacobian
and the centroidal map at random states (robodyn.mechanisms.floating.chain, robodyn.rigid.floating)."""

from __future__ import annotations

import numpy as np
import pytest
from tests.pinocchio_reference import ROBOTS

import robodyn
from robodyn.base.errors import InputError, ModelFileError

pin = pytest.importorskip("pinocchio")
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")

# Pinocchio's joint order is robodyn's (depth first, children by name) for these files, none with mimic joints.
QUADRUPED = "solo_description/robots/solo12.urdf"
HUMANOID = "talos_data/robots/talos_reduced.urdf"  # nq 39, nv 38


def _pair(path: str) -> tuple[object, object, object]:
    model = robodyn.load(str(ROBOTS / path), base="floating", dynamics=False, check_inertia=False)
    reference = pin.buildModelFromUrdf(str(ROBOTS / path), pin.JointModelFreeFlyer())
    return model, reference, reference.createData()


def _state(reference: object, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    q = np.empty(reference.nq)
    q[:3] = rng.normal(size=3)
    quaternion = rng.normal(size=4)
    q[3:7] = quaternion / np.linalg.norm(quaternion)
    q[7:] = rng.uniform(-1.5, 1.5, size=reference.nq - 7)
    return q, rng.normal(size=reference.nv)


def _close(ours: np.ndarray, theirs: np.ndarray) -> None:
    """Within 1e-10 of the largest entry: both are O(n) sums of products of the same numbers (round-off ~1e-15)."""
    theirs = np.asarray(theirs)
    assert np.max(np.abs(ours - theirs)) <= 1e-10 * np.max(np.abs(theirs))


@pytest.mark.parametrize("path", [QUADRUPED, HUMANOID])
def test_rigid_body_functions_equal_pinocchio(path: str) -> None:
    model, reference, data = _pair(path)
    assert (model.nq, model.nv) == (reference.nq, reference.nv)
    assert model.states[:7] == ("base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw")
    rng = np.random.default_rng(7)
    for _ in range(2):
        q, v = _state(reference, rng)
        a, tau = rng.normal(size=reference.nv), rng.normal(size=reference.nv - 6)
        mass = np.asarray(pin.crba(reference, data, q))
        _close(model.mass_matrix(q), np.triu(mass) + np.triu(mass, 1).T)
        _close(model.inverse_dynamics(q, v, a), pin.rnea(reference, data, q, v, a))
        _close(model.acceleration(q, v, tau), pin.aba(reference, data, q, v, np.concatenate([np.zeros(6), tau])))
        _close(model.center_of_mass(q), pin.centerOfMass(reference, data, q))
        _close(model.com_jacobian(q), pin.jacobianCenterOfMass(reference, data, q))
        _close(model.centroidal_map(q), pin.computeCentroidalMap(reference, data, q))
        pin.computeCentroidalMomentum(reference, data, q, v)
        _close(model.centroidal_momentum(np.concatenate([q, v])), np.asarray(data.hg))
        xdot = model.f(0.0, np.concatenate([q, v]), tau)  # the stored state's derivative: q' from v, then aba
        _close(xdot[model.nq:], model.acceleration(q, v, tau))
        assert np.allclose(xdot[7: model.nq], v[6:], rtol=0, atol=0)


def test_linearize_in_the_tangent_space_equals_pinocchio() -> None:
    """A is 2 nv x 2 nv in (q (-) q0, v): its velocity rows are computeABADerivatives', B the actuated columns of
    M^-1, and its configuration rows d(q (-) q0)/dt differentiated with Pinocchio's own integrate and difference."""
    model, reference, data = _pair(QUADRUPED)
    rng = np.random.default_rng(5)
    q, v = _state(reference, rng)
    tau = rng.normal(size=reference.nv - 6)
    linear = robodyn.linearize(model, np.concatenate([q, v]), tau)
    nv = reference.nv
    assert linear.A.shape == (2 * nv, 2 * nv) and linear.states[:6] == ("base_dx", "base_dy", "base_dz", "base_rx",
                                                                          "base_ry", "base_rz")
    pin.computeABADerivatives(reference, data, q, v, np.concatenate([np.zeros(6), tau]))
    inverse = np.triu(data.Minv) + np.triu(data.Minv, 1).T
    _close(linear.A[nv:, :nv], data.ddq_dq)
    _close(linear.A[nv:, nv:], data.ddq_dv)
    _close(linear.B[nv:], inverse[:, 6:])
    assert np.array_equal(linear.A[:nv, nv:], np.eye(nv)) and not linear.B[:nv].any()
    held = robodyn.Linearizer(model)  # the same numbers into held buffers, bit for bit
    for got, expected in zip(held(np.concatenate([q, v]), tau), (linear.A, linear.B, linear.C, linear.D)):
        np.testing.assert_array_equal(got, expected)

    def rate(xi: np.ndarray, eps: float = 1e-6) -> np.ndarray:  # d/dt (q(t) (-) q) at q (+) xi, moving with v
        moved = pin.integrate(reference, q, xi)
        ahead, behind = pin.integrate(reference, moved, eps * v), pin.integrate(reference, moved, -eps * v)
        return (pin.difference(reference, q, ahead) - pin.difference(reference, q, behind)) / (2 * eps)

    h = 1e-4  # central differences of central differences: error ~ h^2 |v|^3 + 1e-16 / (eps h) ~ 1e-6
    numeric = np.column_stack([(rate(h * e) - rate(-h * e)) / (2 * h) for e in np.eye(nv)])
    assert np.max(np.abs(numeric - linear.A[:nv, :nv])) < 1e-5
    assert np.abs(linear.A[:6, :6]).max() > 0.1  # the base's block is not zero when it moves


def test_planar_base_equals_pinocchio() -> None:
    """A planar base (Pinocchio's JointModelPlanar: q = x, y, cos, sin) under the quadruped."""
    model = robodyn.load(str(ROBOTS / QUADRUPED), base="planar")
    reference = pin.buildModelFromUrdf(str(ROBOTS / QUADRUPED), pin.JointModelPlanar())
    data = reference.createData()
    rng = np.random.default_rng(3)
    angle = 0.7
    q = np.concatenate([[0.3, -0.2, np.cos(angle), np.sin(angle)], rng.uniform(-1, 1, reference.nq - 4)])
    v, tau = rng.normal(size=reference.nv), rng.normal(size=reference.nv - 3)
    assert model.states[:4] == ("base_x", "base_y", "base_cos", "base_sin")
    _close(model.acceleration(q, v, tau), pin.aba(reference, data, q, v, np.concatenate([np.zeros(3), tau])))
    _close(model.inverse_dynamics(q, v, v), pin.rnea(reference, data, q, v, v))


def test_integrate_and_difference_equal_pinocchio() -> None:
    model, reference, _ = _pair(QUADRUPED)
    rng = np.random.default_rng(11)
    for scale in (1e-8, 1e-2, 1.0, 2.5):
        q, _ = _state(reference, rng)
        v = scale * rng.normal(size=reference.nv)
        q1 = robodyn.integrate_configuration(model, q, v)
        theirs = pin.integrate(reference, q, v)
        assert np.max(np.abs(q1 - theirs)) < 1e-14
        assert np.max(np.abs(robodyn.difference(model, q, theirs) - pin.difference(reference, q, theirs))) < 1e-12
        assert np.max(np.abs(robodyn.difference(model, q, q1) - v)) < 1e-13 * max(1.0, scale)
    batch = np.array([_state(reference, rng)[0] for _ in range(3)])
    moved = robodyn.integrate_configuration(model, batch, np.ones(reference.nv))
    assert np.allclose(moved, [pin.integrate(reference, b, np.ones(reference.nv)) for b in batch], atol=1e-14)


FREE_BODY = """kind: chain
name: brick
base: floating
gravity: [0, 0, 0]
links:
  - {name: body, mass: 2.0, com: [0, 0, 0], inertia: [[1, 0, 0], [0, 2, 0], [0, 0, 3]]}
"""


def _euler(t: float, w: np.ndarray) -> np.ndarray:
    inertia = np.array([1.0, 2.0, 3.0])
    return np.cross(inertia * w, w) / inertia  # I w' = (I w) x w: Euler's equations, torque free


def test_tennis_racket_flip(tmp_path) -> None:
    """A torque-free body spun near its intermediate axis flips: its angular momentum (world) and energy stay
    constant, the quaternion unit, and the flip comes when Euler's equations, integrated apart, say so."""
    from scipy.integrate import solve_ivp

    path = tmp_path / "brick.yaml"
    path.write_text(FREE_BODY)
    model = robodyn.load(str(path))
    w0 = np.array([0.01, 3.0, 0.01])
    times = np.linspace(0.0, 20.0, 4001)
    run = robodyn.simulate(model, 20.0, {"base_wx": w0[0], "base_wy": w0[1], "base_wz": w0[2], "base_vx": 0.5},
                           rtol=1e-12, atol=1e-12, t_eval=times)
    quaternion = run.x[:, 3:7]
    assert np.max(np.abs(np.linalg.norm(quaternion, axis=1) - 1.0)) < 1e-13
    momentum = np.array([model.centroidal_momentum(x) for x in run.x])
    assert np.max(np.abs(momentum[:, 3:] - momentum[0, 3:])) < 1e-10 * np.linalg.norm(momentum[0, 3:])
    # the linear momentum is m R v: v in the body turns at 3 rad/s, and its values between steps come from DOPRI5's
    # dense output (order 4, not 5): measured 1.0e-10, checked at 1e-9
    assert np.max(np.abs(momentum[:, :3] - momentum[0, :3])) < 1e-9 * np.linalg.norm(momentum[0, :3])
    energy = np.array([model.energy(x)[0] for x in run.x])
    assert np.max(np.abs(energy - energy[0])) < 1e-10 * energy[0]
    tight = solve_ivp(_euler, (0.0, 20.0), w0, method="DOP853", rtol=1e-13, atol=1e-14, t_eval=times)
    wy = run.x[:, model.states.index("base_wy")]
    assert np.min(wy) < -2.9  # it flips
    first = lambda w: times[np.argmax(w < 0)]  # noqa: E731  (the first sign change of w_y)
    assert abs(first(wy) - first(tight.y[1])) < 1e-6
    assert np.max(np.abs(run.x[:, 10:13] - tight.y.T)) < 1e-7


@pytest.mark.parametrize("method, options", [("rk4", {"dt": 1e-3}), ("radau", {"rtol": 1e-10, "atol": 1e-12})])
def test_every_integrator_steps_on_the_manifold(tmp_path, method: str, options: dict) -> None:
    """A sphere moves in closed form: its world velocity is constant, its orientation Exp(t w0) (w0 in the body)."""
    path = tmp_path / "brick.yaml"
    path.write_text(FREE_BODY.replace("[[1, 0, 0], [0, 2, 0], [0, 0, 3]]", "[[2, 0, 0], [0, 2, 0], [0, 0, 2]]"))
    model = robodyn.load(str(path))
    x0 = {"base_vx": 1.0, "base_wy": 1.0, "base_wz": 0.5}
    run = robodyn.simulate(model, 2.0, x0, method=method, **options)
    turned = robodyn.integrate_configuration(model, np.array([0, 0, 0, 0, 0, 0, 1.0]), [0, 0, 0, 0, 2.0, 1.0])
    exact = np.concatenate([[2.0, 0.0, 0.0], turned[3:7]])
    tolerance = 1e-9 if method == "radau" else 1e-10  # radau at rtol 1e-10; rk4 at dt 1e-3: (1e-3)^4 per unit time
    assert np.max(np.abs(run.x[-1, :7] - exact)) < tolerance
    assert np.abs(np.linalg.norm(run.x[:, 3:7], axis=1) - 1).max() < 1e-13  # a product of unit quaternions per step
    batch = robodyn.simulate(model, 1.0, {"base_wy": [1.0, -1.0]}, method=method, **options)
    assert batch.x.shape[0] == 2 and np.allclose(batch.x[0, -1, 4], -batch.x[1, -1, 4], atol=1e-9)


@pytest.mark.parametrize("backend", ["auto", "interpreted"])
def test_events_are_found_at_the_stored_state(tmp_path, backend: str) -> None:
    """A sphere thrown and spun: its height crosses a level when the parabola says, and its x axis is level where
    the closed-form rotation R0 Exp(t w) says (the chart's event function recentres first; a callable is given
    the stored state)."""
    from scipy.spatial.transform import Rotation

    path = tmp_path / "ball.yaml"
    path.write_text(FREE_BODY.replace("[[1, 0, 0], [0, 2, 0], [0, 0, 3]]", "[[2, 0, 0], [0, 2, 0], [0, 0, 2]]")
                    .replace("gravity: [0, 0, 0]", "gravity: [0, 0, -9.81]"))
    model = robodyn.load(str(path))
    tilt = np.array([0.2, 0.0, 0.0, 1.0]) / np.hypot(0.2, 1.0)  # turned about x: the body's y axis has a z part
    w = np.array([0.0, 3.0, 4.0])  # 5 rad/s about a fixed axis of the body (a sphere keeps it)
    x0 = {"base_z": 1.0, "base_qx": tilt[0], "base_qw": tilt[3], "base_vy": 1.0,
          **{f"base_w{a}": w[i] for i, a in enumerate("xyz")}}
    start = Rotation.from_quat(tilt)
    rising = start.as_matrix()[2, 1]  # the world z of the initial velocity R0 (0, 1, 0), constant in the world
    events = [robodyn.Event(lambda t, x, u, p: Rotation.from_quat(x[3:7]).as_matrix()[2, 0], name="x_level"),
              robodyn.Event("base_z + 10", terminal=True)]
    run = robodyn.simulate(model, 2.0, x0, events=events, rtol=1e-11, atol=1e-12, backend=backend)
    landing = (rising + np.sqrt(rising**2 + 2 * 9.81 * 11)) / 9.81  # 1 + rising t - g t^2 / 2 = -10
    assert run.t[-1] == pytest.approx(landing, abs=1e-9) and run.x[-1, 2] == pytest.approx(-10, abs=1e-11)
    assert run.events[-1].name == "base_z + 10" and abs(np.linalg.norm(run.events[-1].x[3:7]) - 1) < 1e-14
    crossings = [e.t for e in run.events if e.name == "x_level"]
    assert np.allclose(crossings, np.pi / 5 * np.arange(1, 3), atol=1e-9)  # the axis is level at 5 t = k pi
    batch = robodyn.simulate(model, 2.0, {**x0, "base_z": [1.0, 2.0]}, events=events[1:], rtol=1e-11, atol=1e-12,
                             backend=backend)
    for height, records in zip((1.0, 2.0), batch.events):  # the batch's records hold stored states too
        (record,) = records
        assert record.x.shape == (model.n_states,) and record.x[2] == pytest.approx(-10, abs=1e-11)
        assert record.t == pytest.approx((rising + np.sqrt(rising**2 + 2 * 9.81 * (height + 10))) / 9.81, abs=1e-9)
    for t in crossings:  # the world z of the body's x axis, R0 Exp(t w) e_x, is zero there
        assert abs((start * Rotation.from_rotvec(t * w)).as_matrix()[2, 0]) < 1e-9


def test_bad_input(tmp_path) -> None:
    path = tmp_path / "brick.yaml"
    path.write_text(FREE_BODY)
    model = robodyn.load(str(path))
    with pytest.raises(InputError, match="norm"):
        robodyn.simulate(model, 1.0, {"base_qw": 0.5})
    with pytest.raises(InputError, match="base rotation"):
        model.f(0.0, np.zeros(model.n_states))
    with pytest.warns(robodyn.RobodynWarning, match="normalized"):
        model.f(0.0, np.r_[np.zeros(6), 1.0 + 1e-8, np.zeros(6)])
    with pytest.raises(robodyn.ShapeError):
        robodyn.integrate_configuration(model, np.zeros(7), np.zeros(5))
    with pytest.raises(InputError, match="tangent space"):
        robodyn.linearize(model, {"base_qw": 1.0}, method="central")
    with pytest.raises(InputError, match="unknown name"):
        robodyn.simulate(model, 1.0, None, events=["base_dz - 1"])  # the chart's coordinates are not the model's
    with pytest.raises(InputError, match="manifold"):
        robodyn.simulate(model, 1.0, None, method="lsoda")
    with pytest.raises((InputError, ModelFileError), match="floating"):
        path.write_text(FREE_BODY.replace("base: floating", "base: flying"))
        robodyn.load(str(path))
    arm = ROBOTS / "ur_description/urdf/ur5_robot.urdf"
    with pytest.raises((InputError, ModelFileError), match="no mass"):
        text = arm.read_text()
        lone = tmp_path / "lone.urdf"  # a massless root holding the robot by a moving joint
        lone.write_text(text.replace('<joint name="world_joint" type="fixed">', '<joint name="world_joint" '
                                     'type="revolute"><limit lower="-1" upper="1" effort="1" velocity="1"/>', 1))
        robodyn.load(str(lone), base="floating")


def test_falling_quadruped_conserves_its_centroidal_momentum() -> None:
    """examples/falling_quadruped.py: in flight the linear momentum grows by m g t and the angular momentum about
    the centre of mass is constant, whatever the joints do (rtol 1e-10: the laws hold to ~1e-11 of the momentum)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "examples" / "falling_quadruped.py"
    spec = importlib.util.spec_from_file_location("falling_quadruped", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    errors = example.fall(ROBOTS / QUADRUPED, 0.3)
    assert errors["linear momentum"] < 1e-9 and errors["angular momentum"] < 1e-9
    assert errors["quaternion norm"] < 1e-14
    assert errors["centre of mass"] < 1e-9  # m: on the parabola of free fall


def test_modes_of_a_free_body_at_rest(tmp_path) -> None:
    """In the tangent space a free body at rest (under gravity) is a chain of integrators: A is nilpotent (A^4 = 0:
    the rotation tilts gravity in the base's frame, which accelerates it), so every mode is at zero."""
    path = tmp_path / "brick.yaml"
    path.write_text(FREE_BODY.replace("gravity: [0, 0, 0]", "gravity: [0, 0, -9.81]"))
    model = robodyn.load(str(path))
    linear = robodyn.linearize(model, {"base_qx": 0.6, "base_qw": 0.8})
    assert linear.A.shape == (12, 12)
    assert np.abs(np.linalg.matrix_power(linear.A, 4)).max() < 1e-12 < np.abs(linear.A[6:9, 3:6]).max()
    assert all(abs(mode.eigenvalue) < 1e-6 for mode in robodyn.modes(linear).rows)


def test_the_command_line_takes_a_base_and_refuses_what_is_wrong_in_one_line(capsys, tmp_path) -> None:
    from tests.cli_run import one_line, run

    robot = str(ROBOTS / QUADRUPED)
    code, _, err = run(capsys, "simulate", robot, "--base", "floating", "--t-final", "0.1", "--x0", "base_qw=0.5")
    assert code == 2 and "norm 0.5" in one_line(err)
    code, _, err = run(capsys, "simulate", robot, "--base", "floating", "--t-final", "0.1", "--x0",
                       "base_vx=1,base_vy=1,base_vz=1,base_wx=1,base_wy=1,base_wz=1,base_wq=1")
    assert code == 2 and "base_wq" in one_line(err)  # a base velocity entry that does not exist
    code, _, err = run(capsys, "simulate", "pendulum", "--base", "floating", "--t-final", "0.1")
    assert code == 2 and "URDF" in one_line(err)
    code, out, _ = run(capsys, "linearize", robot, "--base", "floating", "--at", "base_z=1", "--json")
    assert code == 0
    import json

    linear = json.loads(out)
    assert linear["states"][:6] == ["base_dx", "base_dy", "base_dz", "base_rx", "base_ry", "base_rz"]
    assert np.array(linear["A"]).shape == (36, 36)
    out = tmp_path / "fall.csv"
    code, _, _ = run(capsys, "simulate", robot, "--base", "floating", "--t-final", "0.2", "--x0", "base_z=1",
                     "--out", str(out))
    assert code == 0
    table = np.loadtxt(out, delimiter=",", skiprows=1)
    assert abs(table[-1, 3] - (1 - 0.5 * 9.81 * 0.2**2)) < 1e-3  # the base, its legs at rest, falls freely
