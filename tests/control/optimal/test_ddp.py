"""The DDP family against independent references: the discrete Riccati recursion (linear-quadratic case),
Crocoddyl's SolverFDDP / SolverBoxFDDP on the UR5 (same Euler step, costs, dt, knots and guess), and itself from
an infeasible guess."""

from __future__ import annotations

import numpy as np
import pytest
from quadratic_problem import QuadraticProblem
from scipy.signal import cont2discrete

import robodyn
from robodyn.base.errors import InputError
from robodyn.control.optimal.ddp import solve_ddp

A_LQ = np.array([[0.0, 1.0], [-2.0, -0.4]])
B_LQ = np.array([[0.0], [1.5]])


def _lq_problem() -> QuadraticProblem:
    return QuadraticProblem(robodyn.LinearSystem(A_LQ, B_LQ), horizon=2.0, knots=40, x0=np.array([1.0, -0.5]),
                            Q=np.diag([3.0, 0.5]), R=np.array([[0.2]]), Qf=np.diag([20.0, 2.0]),
                            x_ref=np.zeros(2), u_ref=np.zeros(1), linear=True)


@pytest.mark.parametrize("method", ["ddp", "fddp"])
def test_linear_quadratic_converges_in_one_iteration_to_the_riccati_gains(method: str) -> None:
    problem = _lq_problem()
    dt = problem.horizon / problem.knots
    # mu = 1e-14 on Q_uu (~1e-2) and V_xx moves the gains by ~1e-12 relative: inside the 1e-10 asked
    outcome = solve_ddp(problem, method=method, integrator="zoh", regularization=1e-14, regularization_min=1e-14)
    assert outcome.converged and outcome.iterations == 1
    Fx, Fu, *_ = cont2discrete((A_LQ, B_LQ, np.eye(2), np.zeros((2, 1))), dt, method="zoh")
    P, gains = problem.Qf, []
    for _ in range(problem.knots):  # P_k = dt Q + Fx' P Fx - Fx' P Fu (dt R + Fu' P Fu)^-1 Fu' P Fx
        K = np.linalg.solve(dt * problem.R + Fu.T @ P @ Fu, Fu.T @ P @ Fx)
        P = dt * problem.Q + Fx.T @ P @ Fx - Fx.T @ P @ Fu @ K
        gains.append(K)
    gains = np.array(gains[::-1])
    assert outcome.gains is not None
    np.testing.assert_allclose(outcome.gains, gains, rtol=1e-10, atol=1e-12)
    x = problem.x0
    for k in range(problem.knots):  # the optimal LQ trajectory is the closed loop u = -K x
        np.testing.assert_allclose(outcome.U[k], -gains[k] @ x, rtol=1e-10, atol=1e-12)
        x = Fx @ x + Fu @ outcome.U[k]
    np.testing.assert_allclose(outcome.X[-1], x, rtol=1e-10, atol=1e-12)
    assert abs(outcome.cost - 0.5 * problem.x0 @ P @ problem.x0) <= 1e-10 * outcome.cost


def _pendulum(knots: int = 60, bounds: np.ndarray | None = None) -> QuadraticProblem:
    problem = QuadraticProblem(robodyn.load("pendulum"), 3.0, knots, np.zeros(2), np.diag([1.0, 0.1]),
                               np.array([[0.01]]), np.diag([100.0, 10.0]), np.array([np.pi, 0.0]), np.zeros(1),
                               mechanical=1)
    if bounds is not None:
        problem.input_bounds = bounds
    return problem


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_fddp_from_an_infeasible_guess_reaches_the_cost_of_a_rollout_guess(integrator: str) -> None:
    problem = _pendulum()
    from_rollout = solve_ddp(problem, integrator=integrator)
    line = np.linspace(0.0, 1.0, problem.knots + 1)[:, None] * problem.x_ref  # gaps at every knot
    guess = (line, np.full((problem.knots, 1), 0.5))
    from_gaps = solve_ddp(problem, integrator=integrator, warm_start=guess)
    assert from_rollout.converged and from_gaps.converged
    assert from_gaps.violation < 1e-12  # the gaps are closed
    # both stop at |expected improvement| < 1e-9 on a cost ~3: the costs agree far inside 1e-8 relative
    assert abs(from_gaps.cost - from_rollout.cost) <= 1e-8 * from_rollout.cost
    np.testing.assert_allclose(from_gaps.U, from_rollout.U, atol=1e-4)


def test_ddp_and_fddp_agree_and_boxes_are_respected() -> None:
    free = solve_ddp(_pendulum(), method="ddp", integrator="euler")
    bounds = np.array([[-4.0, 4.0]])
    boxed = solve_ddp(_pendulum(bounds=bounds), method="fddp", integrator="euler")
    boxed_ddp = solve_ddp(_pendulum(bounds=bounds), method="ddp", integrator="euler")
    assert free.converged and boxed.converged and boxed_ddp.converged
    assert np.max(np.abs(free.U)) > 4.5  # the bound is active ...
    assert np.all(np.abs(boxed.U) <= 4.0) and np.isclose(np.max(np.abs(boxed.U)), 4.0)  # ... and respected
    assert boxed.cost > free.cost
    assert abs(boxed.cost - boxed_ddp.cost) <= 1e-8 * boxed.cost


def test_progress_is_reported_and_bad_options_are_refused() -> None:
    seen: list[tuple[int, float, float]] = []
    outcome = solve_ddp(_pendulum(knots=20), progress=lambda i, c, v: seen.append((i, c, v)))
    assert [s[0] for s in seen] == list(range(1, outcome.iterations + 1))
    assert seen[-1][1] == pytest.approx(outcome.cost, rel=1e-14)
    with pytest.raises(InputError, match="unknown DDP option"):
        solve_ddp(_pendulum(knots=20), step_size=2.0)
    with pytest.raises(InputError, match="choose 'ddp' or 'fddp'"):
        solve_ddp(_pendulum(knots=20), method="ilqg")
    with pytest.raises(InputError, match="warm_start"):
        solve_ddp(_pendulum(knots=20), warm_start=(np.zeros((3, 2)), np.zeros((2, 1))))
    capped = solve_ddp(_pendulum(knots=20), max_iterations=1)
    assert not capped.converged and "not converged in 1 iterations" in capped.status
