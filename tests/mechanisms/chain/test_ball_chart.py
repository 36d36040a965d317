"""The chart a chain with ball joints is integrated in (robodyn.mechanisms.chain.ball_chart): the quaternions stay unit
to round-off over a long adaptive run while the run agrees with scipy's integration of the stored f at tight
tolerances; the chart's recentring is SciPy's rotation composition; lifting, projecting, the tolerances and the
neutral rotation; and what the chart does not build is refused naming the ball."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import robodyn
from robodyn.base.errors import InputError
from robodyn.mechanisms.chain.ball_chart import recentre_quaternions
from robodyn.mechanisms.chain.system import ChainSystem

LINK = {"mass": 1.2, "com": [0.1, 0.02, -0.3], "inertia": {"ixx": 0.02, "iyy": 0.03, "izz": 0.015, "ixy": 0.001}}
# a hinge, a ball below it, a second ball at its tip: two quaternion blocks between one-coordinate entries
JOINTS = [{"name": "h", "parent": "base", "child": "a", "axis": [0, 1, 0], "damping": 0.05},
          {"name": "s", "parent": "a", "child": "b", "type": "ball", "xyz": [0.3, 0, 0], "rpy": [0.1, 0.2, 0.3],
           "damping": 0.02, "rotor_inertia": 0.01},
          {"name": "t", "parent": "b", "child": "c", "type": "ball", "xyz": [0.2, 0.05, -0.4]}]
LINKS = [{"name": "base"}, {"name": "a", **LINK}, {"name": "b", **LINK}, {"name": "c", **LINK}]


@pytest.fixture(scope="module")
def chain() -> ChainSystem:
    return ChainSystem(JOINTS, LINKS)


def _start(chain: ChainSystem) -> np.ndarray:
    x0 = chain.initial_state()
    for name, value in {"h": 0.3, "s_qx": 0.3, "s_qy": -0.2, "s_qz": 0.1, "t_qy": 0.5, "h_dot": 0.5, "s_wx": 1.0,
                        "s_wy": -2.0, "s_wz": 1.5, "t_wx": 3.0, "t_wz": -1.0}.items():
        x0[chain.states.index(name)] = value
    for ball in ("s", "t"):
        block = [chain.states.index(f"{ball}_q{c}") for c in "xyzw"]
        x0[block] /= np.linalg.norm(x0[block])
    return x0


def test_a_long_adaptive_run_keeps_the_quaternions_unit_and_follows_scipy(chain: ChainSystem) -> None:
    """20 s of a tumbling double ball pendulum with DOPRI5 at its default tolerances: both quaternions unit to 1e-14 at
    every step (products of unit quaternions; measured 1.3e-15); over the first 2 s, at tight tolerances, the run
    agrees with scipy's DOP853 on the stored f (the quaternions integrated in R^4) to 1e-7 (their tolerances of 1e-11
    grown by the chaotic motion; measured 2e-9)."""
    x0 = _start(chain)
    run = robodyn.simulate(chain, 20.0, x0)
    x = np.asarray(run.x)
    for ball in ("s", "t"):
        block = [chain.states.index(f"{ball}_q{c}") for c in "xyzw"]
        assert np.abs(np.linalg.norm(x[:, block], axis=1) - 1.0).max() < 1e-14
    tight = robodyn.simulate(chain, 2.0, x0, rtol=1e-11, atol=1e-11)
    p = chain.parameter_vector()
    reference = solve_ivp(lambda t, y: chain.f_raw(t, y, np.zeros(chain.n_inputs), p), (0.0, 2.0), x0, method="DOP853",
                          rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(np.asarray(tight.x)[-1], reference.y[:, -1], rtol=0, atol=1e-7)


@pytest.mark.slow  # the chart's implicit kernels compile for ~45 s cold; the Jacobian itself is checked below
@pytest.mark.parametrize("method", ["radau", "rosenbrock"])
def test_the_implicit_methods_step_in_the_chart_with_its_exact_jacobian(chain: ChainSystem, method: str) -> None:
    """Radau IIA and the Rosenbrock method (which needs the exact Jacobian to keep its order: a wrong one shows as a
    run that does not converge) at rtol 1e-8 agree with DOPRI5 at 1e-11 over 1 s to 1e-6 (their tolerance grown by
    the motion; measured 1e-8 and 5e-10 on a hinge - ball - hinge arm), the quaternions unit to 1e-14."""
    x0 = _start(chain)
    reference = np.asarray(robodyn.simulate(chain, 1.0, x0, rtol=1e-11, atol=1e-11).x)[-1]
    x = np.asarray(robodyn.simulate(chain, 1.0, x0, method=method, rtol=1e-8, atol=1e-10).x)
    np.testing.assert_allclose(x[-1], reference, rtol=0, atol=1e-6)
    for ball in ("s", "t"):
        block = [chain.states.index(f"{ball}_q{c}") for c in "xyzw"]
        assert np.abs(np.linalg.norm(x[:, block], axis=1) - 1.0).max() < 1e-14


def test_the_charts_kernel_jacobian_is_its_rhs_derivative(chain: ChainSystem) -> None:
    """The implicit methods' Jacobian of the chart (A then B, the kernels' layout) equals central differences of the
    chart's rhs at a chart state with d = 0, to 1e-7 of its largest entry (h = 1e-6: truncation h^2 |f'''|, rounding
    1e-16 |f| / h)."""
    from robodyn.model.compiled import jacobian_module

    chart = chain.chart()
    assert chart is not None
    z, n, m = chart.lift(_start(chain)), chart.n_states, chart.n_inputs
    tau = np.linspace(-0.5, 0.5, m)
    out = np.empty(n * (n + m))
    jacobian_module(chart).jac(0.0, z, tau, chain.parameter_vector(None), out)
    A, B, h = out[: n * n].reshape(n, n), out[n * n:].reshape(n, m), 1e-6
    columns = [(chart.f(0.0, z + h * e, tau) - chart.f(0.0, z - h * e, tau)) / (2 * h) for e in np.eye(n)]
    inputs = [(chart.f(0.0, z, tau + h * e) - chart.f(0.0, z, tau - h * e)) / (2 * h) for e in np.eye(m)]
    assert np.max(np.abs(np.column_stack(columns) - A)) < 1e-7 * np.abs(A).max()
    assert np.max(np.abs(np.column_stack(inputs) - B)) < 1e-7 * max(1.0, np.abs(B).max())


def test_recentring_is_rotation_composition() -> None:
    """q_c (x) Exp(d) against SciPy's Rotation (from_quat * from_rotvec), up to the quaternion's sign, including
    rotation vectors below the series' threshold (1e-8) and of zero length."""
    rng = np.random.default_rng(4)
    centres = rng.normal(size=(50, 4))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    d = rng.normal(size=(50, 3)) * np.array([[3.0]] * 25 + [[1e-9]] * 24 + [[0.0]])
    ours = recentre_quaternions(centres, d)
    theirs = (Rotation.from_quat(centres) * Rotation.from_rotvec(d)).as_quat()
    signs = np.sign(np.sum(ours * theirs, axis=1, keepdims=True))
    np.testing.assert_allclose(ours, signs * theirs, rtol=0, atol=1e-15 * 4)  # a few roundings of unit numbers


def test_lift_project_tolerances_and_the_neutral_rotation(chain: ChainSystem) -> None:
    chart = chain.chart()
    assert chart is not None and chart.tangent == ("s_rx", "s_ry", "s_rz", "t_rx", "t_ry", "t_rz")
    assert chart.tangent_states[:7] == ("h", "s_rx", "s_ry", "s_rz", "t_rx", "t_ry", "t_rz")
    x0 = _start(chain)
    lifted = chart.lift(x0)
    np.testing.assert_array_equal(chart.project(lifted), x0)
    lifted[-6:] = [0.1, 0.2, -0.3, 0.0, 0.4, 0.0]
    moved = chart.project(lifted)
    block = [chain.states.index(f"s_q{c}") for c in "xyzw"]
    np.testing.assert_allclose(moved[block], recentre_quaternions(x0[block], lifted[-6:-3]), rtol=0, atol=0)
    atol = np.arange(1.0, chain.n_states + 1.0)
    np.testing.assert_array_equal(chart.tolerances(atol)[-6:], [atol[block[0]]] * 3 + [atol[5]] * 3)
    assert chart.neutral({"h": 0.2, "t_qx": 1.0}) == {"h": 0.2, "t_qx": 1.0, "s_qw": 1.0}
    with pytest.raises(InputError, match=r"ball joint 's'.s quaternion .* has norm 2"):
        chart.checked(np.concatenate([[0.0, 0, 0, 0, 2], x0[5:]]))
    with pytest.warns(robodyn.RobodynWarning, match="normalized"):
        near = x0.copy()
        near[block] *= 1 + 1e-9
        np.testing.assert_allclose(np.linalg.norm(chart.checked(near)[block]), 1.0, rtol=0, atol=1e-15)


def test_a_partial_start_fills_no_rotation(chain: ChainSystem) -> None:
    run = robodyn.simulate(chain, 0.1, {"h": 0.2})
    assert np.asarray(run.x)[0, chain.states.index("s_qw")] == 1.0


def test_a_callable_event_sees_the_stored_state(chain: ChainSystem) -> None:
    """A terminal event on the ball's qw (a stored entry, not the chart's): the run stops where it falls through 0.5."""
    at = chain.states.index("s_qw")
    run = robodyn.simulate(chain, 3.0, _start(chain), events=robodyn.Event(lambda t, x, u, p: x[at] - 0.5,
                                                                           terminal=True))
    assert run.t[-1] < 3.0
    assert abs(np.asarray(run.x)[-1, at] - 0.5) < 1e-9  # located to the event solver's tolerance


def test_what_the_chart_does_not_build_is_refused_naming_the_ball(chain: ChainSystem) -> None:
    x0 = chain.initial_state()
    with pytest.raises(InputError, match=r"events written as text is not built for ball joints yet \(joint 's'"):
        robodyn.simulate(chain, 0.1, x0, events="h - 0.5")
    chart = chain.chart()
    assert chart is not None
    with pytest.raises(InputError, match=r"the model in the tangent space .*joint 's' is a ball"):
        chart.tangent_model(x0)
    with pytest.raises(InputError, match="cannot step on the manifold of the ball joints 's', 't'"):
        robodyn.simulate(chain, 0.1, x0, method="exact")


def test_the_tangent_linearization_is_pinocchios_aba_derivatives() -> None:
    """linearize (and robodyn.Linearizer) at 5 random states of a hinge - ball - hinge chain (no joint terms:
    Pinocchio's aba has none): the velocity rows are Pinocchio's computeABADerivatives (its spherical joint's tangent
    is q (x) Exp(d), as the chart's; B = M^-1), the configuration rows [-1/2 [w]x, I] for the ball and [0, 1] for a
    hinge (the rate of d = Jr(d)^-1 w at d = 0). Both exact: measured 2e-15 relative; 1e-11 allows M's
    conditioning."""
    pin = pytest.importorskip("pinocchio")
    rng = np.random.default_rng(5)
    joints, links = [], [{"name": "base"}]
    model = pin.Model()
    parent = 0
    for k, kind in enumerate(["revolute", "ball", "revolute"]):
        rpy, xyz, axis = rng.uniform(-1, 1, 3), rng.uniform(-0.4, 0.4, 3), rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        mass, com, sides = rng.uniform(0.5, 2.0), rng.uniform(-0.2, 0.2, 3), rng.uniform(0.1, 0.5, 3) ** 2
        inertia = np.diag(mass / 12.0 * (sides.sum() - sides))
        joints.append({"name": f"j{k}", "parent": links[-1]["name"], "child": f"l{k}", "type": kind,
                       "xyz": xyz.tolist(), "rpy": rpy.tolist(), "axis": axis.tolist()})
        links.append({"name": f"l{k}", "mass": mass, "com": com.tolist(), "inertia": inertia.tolist()})
        joint = pin.JointModelSpherical() if kind == "ball" else pin.JointModelRevoluteUnaligned(*axis)
        parent = model.addJoint(parent, joint, pin.SE3(pin.rpy.rpyToMatrix(*rpy), xyz), f"j{k}")
        model.appendBodyToJoint(parent, pin.Inertia(mass, com, inertia), pin.SE3.Identity())
    model.gravity = pin.Motion(np.array([0.0, 0.0, -9.81]), np.zeros(3))
    data = model.createData()
    chain = ChainSystem(joints, links)
    linearizer = robodyn.Linearizer(chain)
    assert chain.coordinates == ("j0", "j1_qx", "j1_qy", "j1_qz", "j1_qw", "j2")  # Pinocchio's q layout
    for _ in range(5):
        q = np.array([rng.uniform(-3, 3), *Rotation.random(random_state=rng).as_quat(), rng.uniform(-3, 3)])
        v, u = rng.normal(size=5), rng.normal(size=5)
        lin = robodyn.linearize(chain, np.concatenate([q, v]), u)
        assert lin.states[:5] == ("j0", "j1_rx", "j1_ry", "j1_rz", "j2")
        pin.computeABADerivatives(model, data, q, v, u)
        scale = max(1.0, float(np.abs(data.ddq_dq).max()))
        np.testing.assert_allclose(lin.A[5:, :5], data.ddq_dq, rtol=0, atol=1e-11 * scale)
        np.testing.assert_allclose(lin.A[5:, 5:], data.ddq_dv, rtol=0, atol=1e-11 * scale)
        minv = np.triu(data.Minv) + np.triu(data.Minv, 1).T
        np.testing.assert_allclose(lin.B[5:], minv, rtol=0, atol=1e-11 * max(1.0, float(np.abs(minv).max())))
        w = v[1:4]
        half = -0.5 * np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
        expected = np.zeros((5, 10))
        expected[:, 5:] = np.eye(5)
        expected[1:4, 1:4] = half
        np.testing.assert_allclose(lin.A[:5], expected, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(lin.B[:5], 0.0)
        A, B, C, _ = linearizer(np.concatenate([q, v]), u)  # the in-place form: the same compiled code
        np.testing.assert_array_equal(A, lin.A)
        np.testing.assert_array_equal(B, lin.B)
        np.testing.assert_array_equal(C, np.eye(10))
