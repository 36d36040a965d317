"""robodyn.model.kinds.actuated, actuator_code and actuated_chart: activation states in front of a model's inputs,
checked against the inner model with the closed-form first-order activations, central differences, scipy's
integrator and (for a model on a manifold) MuJoCo's RK4."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.integrate

import robodyn
from robodyn.base.errors import InputError, RobodynWarning
from robodyn.mechanisms.chain.system import ChainSystem
from robodyn.model.kinds.actuated import Activation, ActuatedSystem

JOINTS = [dict(name="shoulder", parent="base", child="upper", axis=(0, 1, 0), damping=0.1, force="3*a1 - 0.5*shoulder"),
          dict(name="elbow", parent="upper", child="lower", xyz=(0, 0, -0.5), axis=(1, 0, 0), damping=0.05,
               force="tau + 2*a2")]
LINKS = [dict(name="base", mass=0), dict(name="upper", mass=1.0, com=(0, 0, -0.25),
                                         inertia=[[0.02, 0, 0], [0, 0.02, 0], [0, 0, 0.001]]),
         dict(name="lower", mass=0.6, com=(0, 0, -0.2), inertia=[[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.0005]])]
TAU = 0.05


def arm() -> ActuatedSystem:
    chain = ChainSystem(JOINTS, LINKS, inputs=["a1", "tau", "a2"], name="arm")
    return ActuatedSystem(chain, [Activation("a1", "u1", TAU), Activation("a2", "u2")])


def test_names_and_f_are_the_inner_models_with_first_order_activations() -> None:
    model = arm()
    assert model.states == ("shoulder", "elbow", "shoulder_dot", "elbow_dot", "a1", "a2")
    assert model.inputs == ("u1", "tau", "u2")
    rng = np.random.default_rng(0)
    for _ in range(5):
        x, u = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 3)
        f = model.f(0.0, x, u)
        inner = model.inner.f(0.0, x[:4], [x[4], u[1], x[5]])
        # the same compiled function at the same numbers: equal
        np.testing.assert_array_equal(f[:4], inner)
        # a filter and an integrator: (u - a) / tau and u, to rounding
        np.testing.assert_allclose(f[4:], [(u[0] - x[4]) / TAU, u[2]], rtol=1e-15)
    np.testing.assert_array_equal(model.initial_state(), np.zeros(6))


def test_jacobians_equal_central_differences() -> None:
    model = arm()
    rng = np.random.default_rng(1)
    p = model.parameter_vector()
    for _ in range(3):
        x, u = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 3)
        A, B = model.jacobians_raw(0.0, x, u, p)
        h = 1e-6
        A_diff = np.column_stack([(model.f_raw(0.0, x + h * e, u, p) - model.f_raw(0.0, x - h * e, u, p)) / (2 * h)
                                  for e in np.eye(6)])
        B_diff = np.column_stack([(model.f_raw(0.0, x, u + h * e, p) - model.f_raw(0.0, x, u - h * e, p)) / (2 * h)
                                  for e in np.eye(3)])
        # central differences at h = 1e-6: truncation ~h^2 |f'''| ~ 1e-11, rounding ~1e-16 / h * |f| ~ 1e-8 (the
        # filter's rows are of size 1/tau = 20)
        np.testing.assert_allclose(A, A_diff, rtol=0, atol=1e-7)
        np.testing.assert_allclose(B, B_diff, rtol=0, atol=1e-7)
    assert A[4, 4] == -1 / TAU and B[4, 0] == 1 / TAU and B[5, 2] == 1.0  # the activations' rows, exactly


def test_compiled_runs_equal_scipys_integration_of_f() -> None:
    """The composed kernels (rhs for dop853, rhs and jac for radau) against scipy's DOP853 on the Python f."""
    model = arm()
    x0, u = np.array([0.3, -0.2, 0.0, 0.1, 0.0, 0.0]), np.array([0.4, 0.1, -0.3])
    p = model.parameter_vector()
    reference = scipy.integrate.solve_ivp(lambda t, x: model.f_raw(t, x, u, p), (0.0, 1.0), x0, method="DOP853",
                                          rtol=1e-12, atol=1e-12).y[:, -1]
    inputs = dict(zip(model.inputs, u))
    explicit = robodyn.simulate(model, 1.0, x0, inputs, method="dop853", rtol=1e-12, atol=1e-12)
    stiff = robodyn.simulate(model, 1.0, x0, inputs, method="radau", rtol=1e-10, atol=1e-10)
    # both at 1e-12: global errors ~1e-11 each
    np.testing.assert_allclose(explicit.x[-1], reference, rtol=0, atol=1e-9)
    # radau at 1e-10: its global error, ~1e-9
    np.testing.assert_allclose(stiff.x[-1], reference, rtol=0, atol=1e-7)


def test_linearize_holds_the_activations_as_states() -> None:
    model = arm()
    x = np.array([0.3, -0.2, 0.0, 0.1, 0.2, -0.1])
    lin = robodyn.linearize(model, x, {"u1": 0.1})
    inner = robodyn.linearize(model.inner, x[:4], {"a1": 0.2, "tau": 0.0, "a2": -0.1})
    np.testing.assert_allclose(lin.A[:4, :4], inner.A, rtol=0, atol=1e-14)
    np.testing.assert_allclose(lin.A[:4, 4], inner.B[:, 0], rtol=0, atol=1e-14)  # a1 drives as the chain's a1
    np.testing.assert_allclose(lin.B[:4, 1], inner.B[:, 1], rtol=0, atol=1e-14)  # tau passes through


def test_bad_activations_are_refused_naming_them() -> None:
    chain = ChainSystem(JOINTS, LINKS, inputs=["a1", "tau", "a2"], name="arm")
    with pytest.raises(InputError, match="'b' is no input"):
        ActuatedSystem(chain, [Activation("b", "u", 0.1)])
    with pytest.raises(InputError, match=r"time constant -0\.1"):
        ActuatedSystem(chain, [Activation("a1", "u", -0.1)])
    with pytest.raises(InputError, match="tau"):
        ActuatedSystem(chain, [Activation("a1", "tau", 0.1)])  # a control named like another input


FLOATING = """
<mujoco model="hopper">
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
  </worldbody>
  <actuator>
    <general name="hip" joint="hip" dyntype="filter" dynprm=".05" gainprm="3" biastype="affine" biasprm="0 -2 -.1"/>
  </actuator>
</mujoco>
"""


def test_a_floating_base_with_an_activation_runs_in_its_chart_as_mujoco_does(tmp_path) -> None:
    """RK4 at 1 ms for 0.5 s from MuJoCo's start: the positions, the base's quaternion and the activation (which
    depend on no velocity convention) agree with MuJoCo's RK4 to rounding."""
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "hopper.xml"
    path.write_text(FLOATING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobodynWarning)
        robot = robodyn.load(str(path))
    assert robot.chart() is not None and robot.chart().tangent_states[-1] == "hip_act"
    model = mujoco.MjModel.from_xml_path(str(path))
    model.opt.integrator, model.opt.timestep = mujoco.mjtIntegrator.mjINT_RK4, 1e-3
    data = mujoco.MjData(model)
    data.ctrl[:] = [0.7]
    for _ in range(500):
        mujoco.mj_step(model, data)
    run = robodyn.simulate(robot, 0.5, None, {"hip_ctrl": 0.7}, method="rk4", dt=1e-3)
    end = run.x[-1]
    quaternion = [*data.qpos[4:7], data.qpos[3]]
    # the same RK4 map on f's equal to rounding (the base's velocity in its own frame is a linear map of MuJoCo's):
    # 500 steps keep it near 1e-14; a missing term moves the state by ~1e-3
    np.testing.assert_allclose(end[:3], data.qpos[:3], rtol=0, atol=1e-12)
    np.testing.assert_allclose(end[3:7] * np.sign(end[6] * quaternion[3]), quaternion, rtol=0, atol=1e-12)
    np.testing.assert_allclose([end[7], end[-1]], [data.qpos[7], data.act[0]], rtol=0, atol=1e-12)


def test_the_mechanisms_questions_are_the_inner_models() -> None:
    model = arm()
    x = np.array([0.3, -0.2, 0.1, 0.4, 0.2, -0.1])
    assert model.energy(x) == model.inner.energy(x[:4])
    np.testing.assert_array_equal(model.mass_matrix([0.3, -0.2]), model.inner.mass_matrix([0.3, -0.2]))
    chain = ChainSystem(JOINTS, [*LINKS[:2], {**LINKS[2], "mass": "m2"}], inputs=["a1", "tau", "a2"],
                        parameters={"m2": 0.6}, name="arm")
    heavier = ActuatedSystem(chain, [Activation("a1", "u1", TAU), Activation("a2", "u2")]).with_parameters(m2=1.2)
    assert heavier.coordinates == ("shoulder", "elbow") and heavier.fixed_base() is None
    np.testing.assert_array_equal(heavier.mass_matrix([0.3, -0.2]), chain.with_parameters(m2=1.2).mass_matrix(
        [0.3, -0.2]))
    # the same compiled f at the same numbers, and (u - a) / tau against 1/tau (u - a): equal to rounding
    np.testing.assert_allclose(heavier.f(0.0, x, [0.1, 0.0, 0.0]),
                               [*chain.f(0.0, x[:4], [0.2, 0.0, -0.1], {"m2": 1.2}), (0.1 - 0.2) / TAU, 0.0],
                               rtol=1e-15, atol=0)
    assert "a1' = (u1 - a1) / 0.05" in model.show_text() and "a2' = u2" in model.show_text()


def test_outputs_of_the_inner_model_take_the_activations_as_states() -> None:
    """An inner output that reads an activation's input (y = shoulder + 2 a1 + tau): its D column moves to C's
    activation column, the pass-through input's stays in D; both against central differences of h."""
    chain = ChainSystem(JOINTS, LINKS, inputs=["a1", "tau", "a2"], outputs={"y": "shoulder + 2*a1 + tau"}, name="arm")
    model = ActuatedSystem(chain, [Activation("a1", "u1", TAU), Activation("a2", "u2")])
    assert model.outputs == ("y",) and not model.outputs_are_states
    x, u, p = np.array([0.3, -0.2, 0.1, 0.4, 0.2, -0.1]), np.array([0.5, 0.7, 0.0]), model.parameter_vector()
    assert model.h(0.0, x, u)[0] == pytest.approx(0.3 + 2 * 0.2 + 0.7, rel=1e-15)  # the chain's order of sums
    C, D = model.output_jacobians_raw(0.0, x, u, p)
    h = 1e-6  # h is linear here: central differences are exact to rounding (~1e-10)
    C_diff = [(model.h_raw(0.0, x + h * e, u, p) - model.h_raw(0.0, x - h * e, u, p))[0] / (2 * h) for e in np.eye(6)]
    D_diff = [(model.h_raw(0.0, x, u + h * e, p) - model.h_raw(0.0, x, u - h * e, p))[0] / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(C[0], C_diff, rtol=0, atol=1e-9)
    np.testing.assert_allclose(D[0], D_diff, rtol=0, atol=1e-9)
    assert C[0, 4] == 2.0 and D[0, 1] == 1.0 and D[0, 0] == 0.0
