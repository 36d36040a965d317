"""OptimalControlProblem: its checks (every bad input of issue 47 with robodyn's error), the initial guess, the
constraints' exact Jacobians, and solving through the registry with a real solver written here (the exact
discrete LQ solution by the Riccati recursion) checked against scipy's minimization of the same cost."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

import robodyn
from optimal_reference import riccati_solver
from robodyn.base.errors import ConvergenceError, InputError, ShapeError, UnknownNameError
from robodyn.control.optimal import solvers
from robodyn.control.optimal.result import OptimalTrajectory

SCALAR = """
name: scalar
kind: first_order
states: [x]
inputs: [u]
parameters: {a: 0.5, b: 2.0}
dynamics:
  x: a*x + b*u
"""

COSTS = {"state": {"weights": {"theta": 1.0, "theta_dot": 0.1}, "reference": {"theta": "pi"}},
         "input": {"weights": {"tau": 0.01}}}


@pytest.fixture(scope="module")
def pendulum():
    return robodyn.load("pendulum")


@pytest.fixture(scope="module")
def scalar():
    return robodyn.read_model_text(SCALAR, "scalar.yaml")


def _problem(model, **changes):
    arguments = {"horizon": 3.0, "knots": 30, "x0": {"theta": 0.0, "theta_dot": 0.0}, "costs": COSTS}
    arguments.update(changes)
    return robodyn.OptimalControlProblem(model, **arguments)


@pytest.mark.parametrize(("changes", "error", "words"), [
    ({"x0": {"theta": 0, "omega": 0}}, UnknownNameError, "unknown state 'omega'"),
    ({"costs": {"state": {"weights": {"thetaa": 1}}}}, UnknownNameError, "did you mean 'theta'"),
    ({"costs": {"speed": {}}}, UnknownNameError, "unknown cost term"),
    ({"costs": {"state": {"weights": [[1, 2], [0, 1]]}}}, InputError, "symmetric"),
    ({"costs": {"state": {"weights": [[1, 2], [2, 1]]}}}, InputError, "positive semidefinite"),
    ({"costs": {"terminal": {"weights": {"theta": -1}}}}, InputError, "positive semidefinite"),
    ({"costs": {"input": {"weights": {"tau": 0}}}}, InputError, "positive definite"),
    ({"costs": {"state": {"weights": np.eye(3)}}}, ShapeError, "expected (2, 2)"),
    ({"horizon": 0.0}, InputError, "horizon: must be > 0"),
    ({"horizon": -1.0}, InputError, "horizon: must be > 0"),
    ({"horizon": float("nan")}, InputError, "horizon"),
    ({"knots": 1}, InputError, "knots: must be an integer from 2"),
    ({"knots": 2.5}, InputError, "knots"),
    ({"bounds": {"inputs": {"tau": [2, -2]}}}, InputError, "lower bound 2 is above the upper bound -2"),
    ({"bounds": {"states": {"theta": [1, 2]}}}, InputError, "x0: theta = 0 is outside its bounds"),
    ({"bounds": {"inputs": {"torque": [-1, 1]}}}, UnknownNameError, "unknown input 'torque'"),
    ({"x0": {"theta": float("nan"), "theta_dot": 0}}, InputError, "not finite"),
    ({"x0": [0.0, float("inf")]}, InputError, "non-finite"),
    ({"costs": {"state": {"weights": {"theta": float("nan")}}}}, InputError, "finite"),
    ({"costs": {"running": "__import__('os')"}}, InputError, "costs.running"),
    ({"constraints": {"path": ["theta_dot**2 - speed"]}}, InputError, "speed"),
    ({"constraints": {"terminal": {"omega": 0}}}, UnknownNameError, "unknown state 'omega'"),
    ({"method": "sqp"}, InputError, "unknown method 'sqp'"),
    ({"integrator": "rk45"}, InputError, "unknown integrator"),
    ({"transcription": "radau"}, InputError, "unknown transcription"),
    ({"params": {"mass": 2}}, UnknownNameError, "unknown parameter 'mass'"),
])
def test_bad_input_raises_robodyns_error(pendulum, changes, error, words) -> None:
    with pytest.raises(error) as caught:
        _problem(pendulum, **changes)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_models_without_exact_derivatives_are_refused() -> None:
    model = robodyn.System(lambda t, x, u, p: [-x[0] + u[0]], states=["x"], inputs=["u"])
    with pytest.raises(InputError, match="no exact Jacobian"):
        robodyn.OptimalControlProblem(model, 1.0, 10, [0.0], {})


def test_sampled_models_are_refused(scalar) -> None:
    discrete = robodyn.read_model_text(SCALAR.replace("first_order", "discrete").replace("dynamics:", "sample: 0.1\n"
                                                                                         "update:")
                                       .replace("a*x + b*u", "x + 0.1*(a*x + b*u)"), "d.yaml")
    with pytest.raises(InputError, match="discrete or has sampled blocks"):
        robodyn.OptimalControlProblem(discrete, 1.0, 10, [0.0], {})


def test_the_initial_guess_holds_x0_still(pendulum) -> None:
    problem = _problem(pendulum, x0={"theta": 0.5, "theta_dot": 0.0}, params={"m": 2.0})
    X, U = problem.initial_guess()
    assert X.shape == (31, 2) and U.shape == (30, 1) and np.all(X == problem.x0)
    # the pendulum m l^2 theta'' = tau - m g l sin(theta) (- damping at rest: 0): tau = m g l sin(theta)
    assert U[0, 0] == pytest.approx(2.0 * 9.81 * np.sin(0.5), rel=1e-12)
    assert np.all(U == U[0])
    bounded = _problem(pendulum, x0={"theta": 0.5, "theta_dot": 0.0}, bounds={"inputs": {"tau": [-2, 2]}})
    assert bounded.initial_guess()[1][0, 0] == 2.0  # clipped to its bound


def test_a_guess_trajectory_is_resampled_on_the_knots(pendulum, tmp_path) -> None:
    run = robodyn.simulate(pendulum, 3.0, {"theta": 0.5, "theta_dot": 0.0}, t_eval=np.linspace(0, 3, 301))
    run.to_csv(tmp_path / "run.csv")
    problem = _problem(pendulum, guess="run.csv", folder=tmp_path)
    X, U = problem.initial_guess()
    np.testing.assert_allclose(X, run.x[::10], rtol=0, atol=1e-12)  # the knots are rows of the file
    assert np.all(U == 0.0)  # x0 = (0, 0) at rest: no input needed (the file has no inputs)


def test_constraint_jacobians_against_central_differences(pendulum) -> None:
    problem = _problem(pendulum, constraints={"path": ["theta_dot**2 - 64", "sin(theta)*tau - t"],
                                              "terminal": {"theta": "pi", "theta_dot": 0}})
    assert problem.n_path == 2 and problem.n_terminal == 2
    t, x, u, h = 0.3, np.array([0.4, -1.2]), np.array([0.7]), 1e-6
    gx, gu = problem.path_jacobians(t, x, u)
    np.testing.assert_allclose(problem.path(t, x, u), [1.44 - 64, np.sin(0.4) * 0.7 - 0.3], rtol=1e-14)
    for k in range(2):
        e = np.eye(2)[k] * h
        # central differences, error ~ h^2 |g'''| ~ 1e-12, rounding ~ 1e-16 * 64 / 1e-6 ~ 1e-8
        np.testing.assert_allclose(gx[:, k], (problem.path(t, x + e, u) - problem.path(t, x - e, u)) / (2 * h),
                                   atol=1e-7)
    np.testing.assert_allclose(gu[:, 0], (problem.path(t, x, u + h) - problem.path(t, x, u - h)) / (2 * h), atol=1e-7)
    np.testing.assert_allclose(problem.terminal_constraint(x), [0.4 - np.pi, -1.2], rtol=1e-15)
    np.testing.assert_array_equal(problem.terminal_constraint_jacobian(x), np.eye(2))


def test_terminal_values_are_the_states_the_mapping_fixes(pendulum) -> None:
    """The mapping form fixes its states (its rows in the states' order, whatever the mapping's); the expression
    form fixes none (the transcription keeps them as equalities)."""
    mapping = _problem(pendulum, constraints={"terminal": {"theta_dot": 0.5, "theta": "pi"}})
    np.testing.assert_array_equal(mapping.terminal_values(), [np.pi, 0.5])
    x = np.array([0.4, -1.2])
    np.testing.assert_array_equal(mapping.terminal_constraint(x), x - [np.pi, 0.5])
    np.testing.assert_array_equal(mapping.terminal_constraint_jacobian(x), np.eye(2))
    texts = _problem(pendulum, constraints={"terminal": ["theta - pi"]})
    assert np.all(np.isnan(texts.terminal_values())) and texts.n_terminal == 1
    assert np.all(np.isnan(_problem(pendulum).terminal_values()))


@pytest.fixture()
def registered(monkeypatch):
    monkeypatch.setitem(solvers.SOLVERS, "riccati", riccati_solver)


def _scalar_problem(scalar, **changes):
    arguments = {"costs": {"state": {"weights": {"x": 3.0}}, "input": {"weights": {"u": 0.5}},
                           "terminal": {"weights": {"x": 10.0}}}, "method": "riccati"}
    arguments.update(changes)
    return robodyn.OptimalControlProblem(scalar, 2.0, 40, [1.5], **arguments)


def _discrete_cost(problem, U: np.ndarray) -> float:
    dt, x, total = problem.horizon / problem.knots, problem.x0.copy(), 0.0
    for k, u in enumerate(U):
        total += dt * problem.running(k * dt, x, np.array([u]))
        x = x + dt * problem.f(k * dt, x, np.array([u]))
    return total + problem.terminal(x)


def test_solve_through_the_registry_against_scipy(scalar, registered, tmp_path) -> None:
    problem = _scalar_problem(scalar)
    seen = []
    result = problem.solve(progress=lambda *a: seen.append(a))
    assert isinstance(result, OptimalTrajectory) and isinstance(result, robodyn.Trajectory)
    assert result.converged and result.method == "riccati" and seen == [(1, result.cost, 0.0)]
    assert result.x.shape == (41, 1) and result.u.shape == (41, 1) and result.gains.shape == (40, 1, 1)
    assert result.u[-1, 0] == result.u[-2, 0]  # held: the last row repeats the one before
    np.testing.assert_allclose(result.t, np.linspace(0, 2, 41), rtol=0, atol=1e-15)
    best = scipy.optimize.minimize(lambda U: _discrete_cost(problem, U), np.zeros(40), method="BFGS",
                                   options={"gtol": 1e-11})
    # the cost is quadratic in U, so BFGS reaches its minimum to ~gtol^2 / curvature: 1e-9 relative is loose
    assert result.cost == pytest.approx(best.fun, rel=1e-9)
    np.testing.assert_allclose(result.u[:-1, 0], best.x, atol=1e-5 * np.abs(best.x).max())
    result.to_csv(tmp_path / "traj.csv")
    assert (tmp_path / "traj.csv").read_text().splitlines()[0] == "t,x,u"
    back = robodyn.Trajectory.load(tmp_path / "traj.csv")
    np.testing.assert_array_equal(back.x[:, 1], result.u[:, 0])  # exact shortest floats
    plain = result.trajectory
    assert type(plain) is robodyn.Trajectory
    np.testing.assert_array_equal(plain.x, result.x)


def test_non_convergence_raises_with_the_result(scalar, registered) -> None:
    problem = _scalar_problem(scalar)
    with pytest.raises(ConvergenceError, match="did not converge: iteration limit; last cost") as caught:
        problem.solve(converge=False)
    assert isinstance(caught.value.result, OptimalTrajectory) and not caught.value.result.converged
    assert not problem.solve(converge=False, check=False).converged


def test_a_solver_that_is_not_installed_is_named(scalar, monkeypatch) -> None:
    monkeypatch.setitem(solvers.SOLVERS, "missing", "robodyn.control.optimal.no_such_module:solve")
    problem = _scalar_problem(scalar, method="missing")
    with pytest.raises(InputError, match="the solver 'missing' is not available"):
        problem.solve()
