"""robodyn.tvlqr against independent references.

- Continuous time: the catalog pendulum (m = l = I = 1: theta'' = tau - g sin theta) has the closed forms
  f = [theta_dot, tau - g sin theta], A = [[0, 1], [-g cos theta, 0]], B = [0, 1]^T. The test rebuilds x*(t) between
  the samples with scipy's CubicHermiteSpline (the slopes of the closed-form f, the input held) and integrates the
  Riccati differential equation backward with solve_ivp (DOP853, rtol 1e-12) interval by interval.
- Discrete time: a plain backward Riccati recursion on the ZOH model of each interval (scipy.linalg.expm of the
  closed-form A, B), the stage cost h (Q, R).
- Long horizons on an LTI system: K(0) tends to robodyn.lqr's gain (continuous) and the dlqr gain (scipy's
  solve_discrete_are) of the ZOH model.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.linalg
from scipy.integrate import solve_ivp
from scipy.interpolate import CubicHermiteSpline

import robodyn
from robodyn.base.errors import InputError, ShapeError, UnknownNameError
from robodyn.results.trajectory import SimulationStats, Trajectory
from robodyn.signals import Table

G = 9.81
Q = np.diag([10.0, 1.0])
R = np.array([[0.1]])


def f_closed(x: np.ndarray, u: float) -> np.ndarray:
    return np.array([x[1], u - G * math.sin(x[0])])


def ab_closed(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.array([[0.0, 1.0], [-G * math.cos(x[0]), 0.0]]), np.array([[0.0], [1.0]])


@pytest.fixture(scope="module")
def pendulum():
    return robodyn.load("pendulum")


@pytest.fixture(scope="module")
def swing(pendulum) -> Trajectory:
    """A pendulum trajectory under a held, tabulated torque (rk4 at the table's step: the inputs held)."""
    times = np.arange(0.0, 2.0 + 1e-9, 0.05)
    torque = Table(times, 2.0 * np.sin(3.0 * times), "zoh")
    return robodyn.simulate(pendulum, (0.0, 2.0), [0.2, 0.0], {"tau": torque}, method="rk4", dt=0.05)


def reference_gains(traj: Trajectory, Qf: np.ndarray) -> np.ndarray:
    t, x, u = traj.t, traj.x, traj.u[:, 0]
    S = Qf.copy()
    K = np.empty((t.size, 1, 2))
    K[-1] = np.linalg.solve(R, ab_closed(x[-1])[1].T @ S)
    for k in range(t.size - 2, -1, -1):
        spline = CubicHermiteSpline([t[k], t[k + 1]], [x[k], x[k + 1]],
                                    [f_closed(x[k], u[k]), f_closed(x[k + 1], u[k])])

        def rhs(time: float, y: np.ndarray, spline: CubicHermiteSpline = spline) -> np.ndarray:
            A, B = ab_closed(spline(time))
            P = y.reshape(2, 2)
            return -(A.T @ P + P @ A - P @ B @ np.linalg.solve(R, B.T) @ P + Q).ravel()

        sol = solve_ivp(rhs, (t[k + 1], t[k]), S.ravel(), method="DOP853", rtol=1e-12, atol=1e-12)
        S = sol.y[:, -1].reshape(2, 2)
        K[k] = np.linalg.solve(R, ab_closed(x[k])[1].T @ S)
    return K


def test_continuous_gains_equal_an_independent_riccati_integration(pendulum, swing) -> None:
    result = robodyn.tvlqr(pendulum, swing, Q, R, np.diag([20.0, 2.0]))
    expected = reference_gains(swing, np.diag([20.0, 2.0]))
    # both integrate the same ODE at rtol 1e-10 (robodyn) and 1e-12 (reference): the gains agree to ~1e-10
    # relative; 1e-8 is the promise of the issue
    assert np.max(np.abs(result.K - expected)) <= 1e-8 * np.max(np.abs(expected))
    assert result.K.shape == (len(swing), 1, 2) and result.S.shape == (len(swing), 2, 2)
    assert np.allclose(result.S[-1], np.diag([20.0, 2.0]), rtol=0, atol=0)


def test_named_weights_are_the_diagonal(pendulum, swing) -> None:
    by_name = robodyn.tvlqr(pendulum, swing, {"theta": 10.0, "theta_dot": 1.0}, {"tau": 0.1}, discrete=True)
    by_matrix = robodyn.tvlqr(pendulum, swing, Q, R, Q, discrete=True)
    assert np.array_equal(by_name.K, by_matrix.K)


def reference_discrete(traj: Trajectory, Qf: np.ndarray) -> np.ndarray:
    t, x = traj.t, traj.x
    S, gains = Qf.copy(), []
    for k in range(t.size - 2, -1, -1):
        h = t[k + 1] - t[k]
        A, B = ab_closed(x[k])
        E = scipy.linalg.expm(h * np.block([[A, B], [np.zeros((1, 3))]]))
        Phi, Gamma = E[:2, :2], E[:2, 2:]
        K = np.linalg.solve(h * R + Gamma.T @ S @ Gamma, Gamma.T @ S @ Phi)
        S = h * Q + Phi.T @ S @ Phi - Phi.T @ S @ Gamma @ K
        gains.append(K)
    return np.array(gains[::-1])


def test_discrete_gains_equal_a_plain_recursion(pendulum, swing) -> None:
    result = robodyn.tvlqr(pendulum, swing, Q, R, np.diag([20.0, 2.0]), discrete=True)
    expected = reference_discrete(swing, np.diag([20.0, 2.0]))
    # the same arithmetic in another order (batched expm, symmetrized S): agreement to rounding over 40 steps
    assert np.max(np.abs(result.K[:-1] - expected)) <= 1e-10 * np.max(np.abs(expected))
    assert np.array_equal(result.K[-1], result.K[-2])  # the last knot repeats the gain before it


def hold_still(model, x: np.ndarray, u: np.ndarray, t_final: float, knots: int) -> Trajectory:
    """An equilibrium held over [0, t_final]: an LTI deviation system."""
    t = np.linspace(0.0, t_final, knots)
    return Trajectory(t, np.tile(x, (knots, 1)), np.tile(u, (knots, 1)), np.tile(x, (knots, 1)), model.states,
                      model.inputs, model.states, model.name, SimulationStats("exact", "exact"))


def test_long_horizon_tends_to_lqr(pendulum) -> None:
    upright = np.array([math.pi, 0.0])
    traj = hold_still(pendulum, upright, np.zeros(1), 20.0, 201)
    K_lqr = robodyn.lqr(robodyn.linearize(pendulum, upright, [0.0]), Q, R).K
    result = robodyn.tvlqr(pendulum, traj, Q, R, np.zeros((2, 2)))
    # S(t) converges to the ARE's solution like exp(-2 |Re λ_cl| (T - t)), λ_cl ~ -3: e^-120 after 20 s
    assert np.allclose(result.K[0], K_lqr, rtol=1e-8, atol=0)


def test_long_horizon_tends_to_dlqr(pendulum) -> None:
    upright = np.array([math.pi, 0.0])
    traj = hold_still(pendulum, upright, np.zeros(1), 20.0, 201)
    h = 0.1
    A, B = ab_closed(upright)
    E = scipy.linalg.expm(h * np.block([[A, B], [np.zeros((1, 3))]]))
    Phi, Gamma = E[:2, :2], E[:2, 2:]
    S = scipy.linalg.solve_discrete_are(Phi, Gamma, Q, R)
    K_dlqr = np.linalg.solve(R + Gamma.T @ S @ Gamma, Gamma.T @ S @ Phi)
    result = robodyn.tvlqr(pendulum, traj, Q, R, np.zeros((2, 2)), discrete=True)
    # the recursion contracts geometrically (closed-loop |z| ~ 0.7 per step): 200 steps leave ~1e-30
    assert np.allclose(result.K[0], K_dlqr, rtol=1e-8, atol=0)


@pytest.mark.parametrize("discrete", [False, True])
def test_handover_ends_on_the_lqr_gain(pendulum, discrete: bool) -> None:
    upright = np.array([math.pi, 0.0])
    traj = hold_still(pendulum, upright, np.zeros(1), 1.0, 11)
    result = robodyn.tvlqr(pendulum, traj, Q, R, handover=True, discrete=discrete)
    linear = robodyn.linearize(pendulum, upright, [0.0])
    if discrete:
        S = scipy.linalg.solve_discrete_are(*_zoh(linear.A, linear.B, 0.1), 0.1 * Q, 0.1 * R)
        Phi, Gamma = _zoh(linear.A, linear.B, 0.1)
        K_end = np.linalg.solve(0.1 * R + Gamma.T @ S @ Gamma, Gamma.T @ S @ Phi)
    else:
        S = scipy.linalg.solve_continuous_are(linear.A, linear.B, Q, R)
        K_end = np.linalg.solve(R, linear.B.T @ S)
    assert np.allclose(result.S[-1], S, rtol=1e-9) and np.allclose(result.K[-1], K_end, rtol=1e-9)
    # the cost-to-go is already stationary: every knot has the LQR's S (to the integrator's tolerance)
    assert np.allclose(result.S[0], S, rtol=1e-7)


def test_handover_warns_when_the_end_is_no_equilibrium(pendulum, swing) -> None:
    """A trajectory that ends moving (here: swinging) leaves the LQR after it regulating about a point the model
    cannot stay at: warned, naming the state whose rate is not 0. Ending at rest (the upright, held) is silent."""
    with pytest.warns(robodyn.RobodynWarning, match="final point is no equilibrium"):
        robodyn.tvlqr(pendulum, swing, Q, R, handover=True, discrete=True)
    upright = hold_still(pendulum, np.array([math.pi, 0.0]), np.zeros(1), 1.0, 11)
    with warnings.catch_warnings():
        warnings.simplefilter("error", robodyn.RobodynWarning)
        robodyn.tvlqr(pendulum, upright, Q, R, handover=True, discrete=True)


def _zoh(A: np.ndarray, B: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    n, m = B.shape
    E = scipy.linalg.expm(h * np.block([[A, B], [np.zeros((m, n + m))]]))
    return E[:n, :n], E[:n, n:]


def test_cost_to_go_is_the_quadratic_form(pendulum, swing) -> None:
    result = robodyn.tvlqr(pendulum, swing, Q, R)
    k = 10
    dx = np.array([0.01, -0.02])
    assert result.cost_to_go(float(swing.t[k]), swing.x[k] + dx) == pytest.approx(dx @ result.S[k] @ dx, rel=1e-12)


@pytest.mark.parametrize(("kwargs", "error", "words"), [
    ({"Q": {"thet": 1.0}}, UnknownNameError, "unknown name 'thet'"),
    ({"Q": np.diag([1.0, -1.0])}, InputError, "positive semidefinite"),
    ({"R": {"tau": 0.0}}, InputError, "positive definite"),
    ({"R": np.array([[np.nan]])}, InputError, "non-finite"),
    ({"Q": np.eye(3)}, ShapeError, "expected (2, 2)"),
    ({"Qf": np.diag([1.0, -1.0])}, InputError, "positive semidefinite"),
    ({"Qf": Q, "handover": True}, InputError, "not both"),
    ({"interpolation": "cubic"}, InputError, "'hold' or 'linear'"),
])
def test_bad_weights_are_refused(pendulum, swing, kwargs, error, words) -> None:
    arguments = {"Q": Q, "R": R, **kwargs}
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        robodyn.tvlqr(pendulum, swing, **arguments)


def test_a_trajectory_of_another_model_is_refused(pendulum) -> None:
    cart = robodyn.load("cart_pole")
    traj = robodyn.simulate(cart, 0.1, None, None, method="rk4", dt=0.05)
    with pytest.raises(InputError, match="not the model's"):
        robodyn.tvlqr(pendulum, traj, Q, R)
    bad = hold_still(pendulum, np.array([np.nan, 0.0]), np.zeros(1), 1.0, 3)
    with pytest.raises(InputError, match="non-finite"):
        robodyn.tvlqr(pendulum, bad, Q, R)


def _rollout_solver(method: str):
    """A stand-in solver registered under ``method``: the pendulum's rk4 rollout of a held torque at the knots (a
    trajectory of the model, as any solver's), so that the test runs no optimizer."""
    def solve(problem, **options):
        from robodyn.control.optimal.protocol import SolverOutcome

        knots, dt = problem.knots, problem.horizon / problem.knots
        U = 0.5 * np.sin(np.arange(knots) * dt)[:, None]
        X = np.empty((knots + 1, 2))
        X[0] = problem.x0
        for k in range(knots):
            f = lambda x, k=k: problem.f(k * dt, x, U[k])  # noqa: E731
            k1 = f(X[k])
            k2 = f(X[k] + 0.5 * dt * k1)
            k3 = f(X[k] + 0.5 * dt * k2)
            X[k + 1] = X[k] + dt / 6 * (k1 + 2 * k2 + 2 * k3 + f(X[k] + dt * k3))
        return SolverOutcome(X=X, U=U, cost=0.0, violation=0.0, iterations=1, status="done", converged=True,
                             seconds=0.0, method=method)

    return solve


@pytest.mark.parametrize(("method", "expected"), [("fddp", "hold"), ("collocation", "linear")])
def test_tvlqr_of_an_optimized_trajectory_takes_its_input_interpolation(pendulum, monkeypatch, method: str,
                                                                         expected: str) -> None:
    from robodyn.control.optimal import solvers

    monkeypatch.setitem(solvers.SOLVERS, method, _rollout_solver(method))
    problem = robodyn.OptimalControlProblem(pendulum, 1.0, 20, {"theta": 0.3, "theta_dot": 0.0},
                                            {"state": {"weights": {"theta": 1.0}}}, method=method)
    optimized = problem.solve()
    assert optimized.input_interpolation == expected
    design = robodyn.tvlqr(pendulum, optimized, Q, R)
    assert design.reference.interpolation == expected and design.feedback.input_interpolation == expected
    other = "linear" if expected == "hold" else "hold"
    assert robodyn.tvlqr(pendulum, optimized, Q, R, interpolation=other).reference.interpolation == other
    # the linear inputs' reference is u* at the knots and between them the mean of its ends
    t_mid = 0.5 * (optimized.t[3] + optimized.t[4])
    u_mid = design.reference.input(t_mid)[0]
    assert u_mid == pytest.approx(optimized.u[3, 0] if expected == "hold" else
                                  0.5 * (optimized.u[3, 0] + optimized.u[4, 0]), rel=1e-14)


@pytest.mark.parametrize("discrete", [True, False])
def test_models_without_compiled_functions_take_the_python_path(pendulum, swing, monkeypatch, discrete) -> None:
    from robodyn.control.tracking import knots, tvlqr

    compiled = robodyn.tvlqr(pendulum, swing, Q, R, discrete=discrete)
    monkeypatch.setattr(knots, "compiled_functions", lambda model: None)
    monkeypatch.setattr(tvlqr, "compiled_functions", lambda model: None)
    python = robodyn.tvlqr(pendulum, swing, Q, R, discrete=discrete)
    # discrete: the same Jacobians (compiled and jacobians_raw agree to rounding) through the same recursion;
    # continuous: scipy's DOP853 and the compiled one, both at rtol 1e-10, take different steps: ~1e-10 relative
    tolerance = 1e-12 if discrete else 1e-8
    assert np.max(np.abs(python.K - compiled.K)) <= tolerance * np.max(np.abs(compiled.K))
