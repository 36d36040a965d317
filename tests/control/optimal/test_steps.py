"""The steps of the DDP family: F against its definition, the exact Jacobians against central differences of F,
and the exact ZOH against scipy's discretization."""

from __future__ import annotations

import numpy as np
import pytest
from quadratic_problem import QuadraticProblem
from scipy.signal import cont2discrete

import robodyn
from robodyn.base.errors import InputError, UnknownNameError
from robodyn.control.optimal.steps import STEPS, discretize


def _problem(model: object, mechanical: int, knots: int = 10, horizon: float = 0.5,
             linear: bool = False) -> QuadraticProblem:
    n, m = len(model.states), len(model.inputs)  # type: ignore[attr-defined]
    return QuadraticProblem(model, horizon, knots, np.zeros(n), np.eye(n), np.eye(m), np.eye(n), np.zeros(n),
                            np.zeros(m), mechanical=mechanical, linear=linear)


def _central(F: object, x: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Central differences of F with the step h = eps^(1/3) max(1, |z_i|): truncation O(h^2 F''') and rounding
    O(eps |F| / h) are both about eps^(2/3) ~ 4e-11 relative to the scale of F and its derivatives."""
    columns = []
    z = np.concatenate((x, u))
    n = x.size
    for i in range(z.size):
        h = np.finfo(float).eps ** (1 / 3) * max(1.0, abs(z[i]))
        plus, minus = z.copy(), z.copy()
        plus[i] += h
        minus[i] -= h
        columns.append((F(0.1, plus[:n], plus[n:]) - F(0.1, minus[:n], minus[n:])) / (2 * h))  # type: ignore
    J = np.array(columns).T
    return J[:, :n], J[:, n:]


@pytest.mark.parametrize(("integrator", "mechanical"), [("euler", 1), ("euler", 0), ("rk4", 1)])
def test_pendulum_step_jacobians_equal_central_differences(integrator: str, mechanical: int) -> None:
    step = discretize(_problem(robodyn.load("pendulum"), mechanical), integrator)
    rng = np.random.default_rng(7)
    for _ in range(5):
        x, u = rng.uniform(-2, 2, 2), rng.uniform(-2, 2, 1)
        x_next, Fx, Fu = step.linearize(0.1, x, u)
        np.testing.assert_array_equal(x_next, step.advance(0.1, x, u))
        Dx, Du = _central(step.advance, x, u)
        # differences carry ~1e-10 (see _central) on entries of order 1: 1e-8 leaves a margin of 100
        np.testing.assert_allclose(Fx, Dx, rtol=0, atol=1e-8)
        np.testing.assert_allclose(Fu, Du, rtol=0, atol=1e-8)


def test_ur5_rk4_and_semi_implicit_jacobians_equal_central_differences() -> None:
    from pinocchio_reference import ROBOTS
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    from robodyn.mechanisms.urdf.chain import chain_from_urdf
    model = chain_from_urdf(ROBOTS / "ur_description/urdf/ur5_robot.urdf")
    rng = np.random.default_rng(3)
    x, u = rng.uniform(-1, 1, 12), rng.uniform(-5, 5, 6)
    for integrator in ("rk4", "euler"):
        step = discretize(_problem(model, 6, knots=50), integrator)
        _, Fx, Fu = step.linearize(0.0, x, u)
        Dx, Du = _central(step.advance, x, u)
        # entries up to ~1e1 (dt B with a light wrist): the differences' error ~1e-10 |F'''| scale; 1e-7 absolute
        np.testing.assert_allclose(Fx, Dx, rtol=0, atol=1e-7)
        np.testing.assert_allclose(Fu, Du, rtol=0, atol=1e-7)


def test_semi_implicit_euler_is_crocoddyls_step() -> None:
    model = robodyn.load("pendulum")
    step = discretize(_problem(model, 1), "euler")
    x, u = np.array([0.3, -0.4]), np.array([0.5])
    a = model.f(0.0, x, u)[1]
    v_next = x[1] + step.dt * a
    np.testing.assert_allclose(step.advance(0.0, x, u), [x[0] + step.dt * v_next, v_next], rtol=1e-15)


def test_rk4_matches_fourth_order_on_a_linear_model() -> None:
    """On x' = A x + B u with u held, RK4's F is the degree-4 Taylor polynomial of the exact step."""
    A, B = np.array([[0.0, 1.0], [-4.0, -0.3]]), np.array([[0.0], [1.0]])
    model = robodyn.LinearSystem(A, B)
    step = discretize(_problem(model, 0, knots=10, horizon=1.0), "rk4")
    h = step.dt
    taylor_A, taylor_B, term = np.eye(2), np.zeros((2, 1)), np.eye(2)
    for j in range(1, 5):
        taylor_B = taylor_B + term @ B * h ** j / np.prod(range(1, j + 1))
        term = term @ A
        taylor_A = taylor_A + term * h ** j / np.prod(range(1, j + 1))
    _, Fx, Fu = step.linearize(0.0, np.zeros(2), np.zeros(1))
    np.testing.assert_allclose(Fx, taylor_A, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(Fu, taylor_B, rtol=1e-14, atol=1e-15)


def test_zoh_equals_scipy_discretization() -> None:
    A, B = np.array([[0.0, 1.0], [-4.0, -0.3]]), np.array([[0.0], [1.0]])
    step = discretize(_problem(robodyn.LinearSystem(A, B), 0, knots=20, horizon=2.0, linear=True), "zoh")
    Ad, Bd, *_ = cont2discrete((A, B, np.eye(2), np.zeros((2, 1))), step.dt, method="zoh")
    x_next, Fx, Fu = step.linearize(0.0, np.array([0.2, -0.1]), np.array([0.7]))
    np.testing.assert_allclose(Fx, Ad, rtol=1e-13)  # two expm implementations, both to ~1e-15
    np.testing.assert_allclose(Fu, Bd, rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(x_next, Ad @ [0.2, -0.1] + Bd @ [0.7], rtol=1e-13)


def test_bad_step_requests_are_refused() -> None:
    with pytest.raises(UnknownNameError, match="choose one of euler, rk4, zoh"):
        discretize(_problem(robodyn.load("pendulum"), 1), "midpoint")
    with pytest.raises(InputError, match="linear time-invariant"):
        discretize(_problem(robodyn.load("pendulum"), 1), "zoh")
    assert set(STEPS) == {"euler", "rk4", "zoh"}


@pytest.mark.parametrize(("name", "integrator", "mechanical"), [
    ("pendulum", "euler", 1), ("pendulum", "euler", 0), ("pendulum", "rk4", 1), ("two_link_arm", "rk4", 2),
    ("two_link_arm", "euler", 2), ("linear", "zoh", 0), ("linear", "rk4", 0)])
def test_linearize_points_equals_linearize_at_each_point(name: str, integrator: str, mechanical: int) -> None:
    model = (robodyn.LinearSystem(np.array([[0.0, 1.0], [-2.0, -0.3]]), np.array([[0.0], [1.0]]))
             if name == "linear" else robodyn.load(name))
    step = discretize(_problem(model, mechanical, linear=name == "linear"), integrator)
    rng = np.random.default_rng(3)
    t = np.linspace(0.0, 0.45, 10)
    X, U = rng.uniform(-1, 1, (10, model.n_states)), rng.uniform(-1, 1, (10, model.n_inputs))
    F, Fx, Fu = step.linearize_points(t, X, U)
    for k in range(10):
        expected = step.linearize(float(t[k]), X[k], U[k])
        # the same generated code, batched: rounding of the sums only (entries of order 1-100)
        for found, value in zip((F[k], Fx[k], Fu[k]), expected, strict=True):
            np.testing.assert_allclose(found, value, rtol=1e-12, atol=1e-12)
