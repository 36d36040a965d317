"""The batched members of the solvers' contract equal the per-point ones (points.py, and every problem's
``*_points``): for each model kind the solvers meet (a Lagrangian model and a chain on the compiled path, a
first-order symbolic model, a linear system on the fallback), each cost term (quadratic state and input terms
about constants and tables, frame targets, running expressions) and each constraint kind, and for the problem
classes of the tests."""

from __future__ import annotations

import numpy as np
import pytest
from collocation_cases import cart_pole
from quadratic_problem import QuadraticProblem

import robodyn
from robodyn.control.optimal.batch.points import ModelPoints, PointwiseBatch

#: Batched and per-point evaluations run the same generated expressions; only the order of sums (BLAS against
#: einsum, a compiled loop against numpy) differs: a few ulps of the largest term.
RTOL = 1e-12

SCALAR = """
name: scalar
kind: first_order
states: [x, y]
inputs: [u]
parameters: {a: 0.5, b: 2.0}
dynamics:
  x: a*x + b*u*y
  y: sin(x) - y**3 + t
"""


def _close(found: np.ndarray, expected: np.ndarray) -> None:
    found, expected = np.asarray(found, dtype=float), np.asarray(expected, dtype=float)
    assert found.shape == expected.shape
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    assert np.max(np.abs(found - expected), initial=0.0) <= RTOL * scale


def _points(model, count: int = 7, seed: int = 0):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0.0, 2.0, count))
    return t, rng.uniform(-1.0, 1.0, (count, model.n_states)), rng.uniform(-1.0, 1.0, (count, model.n_inputs))


MODELS = {
    "pendulum": lambda: robodyn.load("pendulum"),
    "cart_pole": lambda: robodyn.load("cart_pole"),
    "two_link_arm": lambda: robodyn.load("two_link_arm"),
    "scalar": lambda: robodyn.read_model_text(SCALAR, "scalar.yaml"),
    "linear": lambda: robodyn.LinearSystem(np.array([[0.0, 1.0], [-2.0, -0.3]]), np.array([[0.0], [1.0]]),
                                           states=("p", "v"), inputs=("a",)),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_points_equal_f_raw_and_jacobians_raw(name: str) -> None:
    model = MODELS[name]()
    p = model.parameter_vector(None)
    points = ModelPoints(model, p)
    t, X, U = _points(model)
    F = points.f(t, X, U)
    A, B = points.jacobians(t, X, U)
    for k in range(len(t)):
        _close(F[k], model.f_raw(float(t[k]), X[k], U[k], p))
        A_k, B_k = model.jacobians_raw(float(t[k]), X[k], U[k], p)
        _close(A[k], A_k)
        _close(B[k], B_k)
    compiled = points.compiled()
    assert (compiled is not None) == (name != "linear")  # the compiled loop where the model has rhs_c and jac_c


def _check_problem(problem, t, X, U) -> None:
    """Every batched member of ``problem`` against its per-point twin at the points (t, X, U)."""
    F = problem.f_points(t, X, U)
    A, B = problem.f_jacobians_points(t, X, U)
    L = problem.running_points(t, X, U)
    D = problem.running_derivatives_points(t, X, U)
    G = problem.path_points(t, X, U)
    GX, GU = problem.path_jacobians_points(t, X, U)
    assert G.shape == (len(t), problem.n_path)
    for k in range(len(t)):
        tk, x, u = float(t[k]), X[k], U[k]
        _close(F[k], problem.f(tk, x, u))
        a, b = problem.f_jacobians(tk, x, u)
        _close(A[k], a)
        _close(B[k], b)
        _close(L[k], problem.running(tk, x, u))
        d = problem.running_derivatives(tk, x, u)
        for field in ("l", "lx", "lu", "lxx", "luu", "lux"):
            _close(getattr(D, field)[k], getattr(d, field))
        _close(G[k], problem.path(tk, x, u))
        gx, gu = problem.path_jacobians(tk, x, u)
        _close(GX[k], gx)
        _close(GU[k], gu)


PENDULUM_COSTS = {
    "constant references": {"state": {"weights": {"theta": 1.0, "theta_dot": 0.1}, "reference": {"theta": "pi"}},
                            "input": {"weights": {"tau": 0.01}, "reference": {"tau": 0.5}}},
    "table references": {"state": {"weights": [[2.0, 0.3], [0.3, 1.0]],
                                   "reference": {"t": [0.0, 1.0, 2.0], "theta": [0.0, 1.0, 3.0],
                                                 "theta_dot": [1.0, 2.0, 0.0]}},
                         "input": {"weights": {"tau": 0.2}, "reference": {"t": [0.0, 2.0], "tau": [0.0, 1.0]}}},
    "running expression": {"running": "0.5*tau**2*cos(theta) + t*theta_dot**2 + exp(0.1*theta*tau)",
                           "terminal": {"weights": {"theta": 3.0}}},
    "constant expression": {"running": "2.5", "input": {"weights": {"tau": 1.0}}},
}


@pytest.mark.parametrize("costs", sorted(PENDULUM_COSTS))
def test_problem_points_equal_the_per_point_members(costs: str) -> None:
    model = robodyn.load("pendulum")
    problem = robodyn.OptimalControlProblem(
        model, 2.0, 10, {"theta": 0.0, "theta_dot": 0.0}, PENDULUM_COSTS[costs],
        bounds={"states": {"theta_dot": [-10, 10]}},
        constraints={"path": ["theta_dot**2 - 64", "tau*theta - 1 + 0*t", "3"], "terminal": {"theta": "pi"}})
    _check_problem(problem, *_points(model))
    assert problem.compiled_dynamics() is not None


def test_frame_costs_on_a_chain() -> None:
    model = robodyn.load("two_link_arm")
    costs = {"frame": [{"name": "tool", "position": [0.5, 0.0, 0.6], "weight": 100.0},
                       {"name": "tool", "position": [1.0, 0.0, 0.1], "orientation": [0.0, 0.4, 0.0],
                        "weight": 5.0, "orientation_weight": 2.0}],
             "input": {"weights": {"shoulder_tau": 0.1, "elbow_tau": 0.1}}}
    x0 = dict.fromkeys(model.states, 0.1)
    problem = robodyn.OptimalControlProblem(model, 1.0, 10, x0, costs)
    _check_problem(problem, *_points(model, seed=1))


def test_first_order_and_linear_models() -> None:
    scalar = MODELS["scalar"]()
    problem = robodyn.OptimalControlProblem(scalar, 1.0, 5, [0.1, 0.2], {"running": "x**2*u + y**4",
                                                                         "input": {"weights": {"u": 1.0}}},
                                            constraints={"path": ["x*u - y"]})
    _check_problem(problem, *_points(scalar, seed=2))
    linear = MODELS["linear"]()
    problem = robodyn.OptimalControlProblem(linear, 1.0, 5, [0.0, 0.0], {"state": {"weights": {"p": 1.0}}})
    _check_problem(problem, *_points(linear, seed=3))
    assert problem.compiled_dynamics() is None


def test_the_test_problems_batch_forms() -> None:
    model = robodyn.load("two_link_arm")
    n, m = model.n_states, model.n_inputs
    rows = np.hstack([np.eye(n)[:2], np.array([[0.5], [-0.2]])])
    ddp_problem = QuadraticProblem(model, 1.0, 10, np.zeros(n), np.eye(n), 0.1 * np.eye(m), np.eye(n),
                                   np.full(n, 0.3), np.full(m, -0.1), mechanical=2, path_rows=rows)
    _check_problem(ddp_problem, *_points(model, seed=4))
    _check_problem(cart_pole(8), *_points(robodyn.load("cart_pole"), seed=5))


class _Pointwise(PointwiseBatch):
    """A problem with per-point members only (the helper derives the batched ones)."""

    n_path = 1

    def f(self, t, x, u):
        return np.array([x[1], -np.sin(x[0]) + u[0] * t])

    def f_jacobians(self, t, x, u):
        return np.array([[0.0, 1.0], [-np.cos(x[0]), 0.0]]), np.array([[0.0], [t]])

    def running(self, t, x, u):
        return float(x @ x + u @ u)

    def running_derivatives(self, t, x, u):
        from robodyn.control.optimal.protocol import CostDerivatives

        return CostDerivatives(self.running(t, x, u), 2 * x, 2 * u, 2 * np.eye(2), 2 * np.eye(1), np.zeros((1, 2)))

    def path(self, t, x, u):
        return np.array([x[0] - u[0]])

    def path_jacobians(self, t, x, u):
        return np.array([[1.0, 0.0]]), np.array([[-1.0]])


def test_pointwise_batch_stacks_the_per_point_members() -> None:
    problem = _Pointwise()
    t, X, U = np.array([0.0, 0.5, 1.0]), np.array([[0.1, 0.2], [0.3, -0.4], [1.0, 2.0]]), np.array([[1.0], [2], [3]])
    _check_problem(problem, t, X, U)
    assert problem.compiled_dynamics() is None
    assert problem.f_points(t, X, U).shape == (3, 2)
