"""Tests for robodyn.control.optimal.collocation: direct collocation with IPOPT against independent references.

- The LQ case (a double integrator, a robodyn.LinearSystem): the continuous optimum in closed form, from the
  matrix exponential of the Hamiltonian system (x, lambda)' = [[A, -B R^-1 B'], [-Q, -A']] (x, lambda) with
  lambda(T) = Qf x(T) (Bryson & Ho, *Applied Optimal Control*, sec. 5.2); the cost J* = 1/2 x0' lambda(0).
- The cart-pole swing-up against CasADi Opti + IPOPT on the same transcription written with CasADi symbols
  (tests/control/optimal/casadi_reference.py).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from tests.control.optimal.collocation_cases import QuadraticProblem, cart_pole, double_integrator

import robodyn
from robodyn.base.errors import InputError, ShapeError
from robodyn.control.optimal.collocation import solve_collocation
from robodyn.control.optimal.protocol import SolverOutcome

casadi_reference = pytest.importorskip("tests.control.optimal.casadi_reference")

FORCE, RAIL = 10.0, 0.3  # both bounds active at the swing-up's optimum (N = 30, T = 2 s)

ORDERS = {"trapezoidal": (2, (16, 32, 64)), "hermite_simpson": (4, (8, 16, 32))}


def lq_optimum(problem: QuadraticProblem) -> tuple[float, np.ndarray]:
    """(J*, x*(t_k) (N + 1, n)): the continuous LQ optimum of ``problem`` in closed form."""
    A = np.array([[0.0, 1.0], [0.0, 0.0]])
    B = np.array([[0.0], [1.0]])
    n = len(A)
    H = np.block([[A, -B @ np.linalg.solve(problem.R, B.T)], [-problem.Q, -A.T]])
    Phi = scipy.linalg.expm(H * problem.horizon)
    Qf = problem.Qf
    lam0 = np.linalg.solve(Phi[n:, n:] - Qf @ Phi[:n, n:], (Qf @ Phi[:n, :n] - Phi[n:, :n]) @ problem.x0)
    start = np.concatenate([problem.x0, lam0])
    X = np.array([(scipy.linalg.expm(H * t) @ start)[:n] for t in problem.times()])
    return 0.5 * float(problem.x0 @ lam0), X


@pytest.mark.parametrize("transcription", ORDERS)
def test_lq_converges_at_the_transcriptions_order(transcription: str) -> None:
    order, knots = ORDERS[transcription]
    cost_errors, state_errors = [], []
    for N in knots:
        problem = double_integrator(N)
        J, X = lq_optimum(problem)
        outcome = solve_collocation(problem, transcription=transcription, tolerance=1e-10)
        assert outcome.converged, outcome.status
        assert outcome.violation < 1e-9  # defects of a QP at IPOPT's tolerance 1e-10
        cost_errors.append(abs(outcome.cost - J))
        state_errors.append(float(np.max(np.abs(outcome.X - X))))
    # The smallest error (HS, N = 32: ~2e-8 on the cost) stays 100x above IPOPT's tolerance, so the fit sees the
    # discretization alone. At these N the measured local slopes are within 0.15 of the order (the next term of
    # the error expansion is O(h^(p+1)) with a small constant); the band 0.25 leaves room without admitting the
    # neighbouring orders.
    for errors in (cost_errors, state_errors):
        slope = np.polyfit(np.log(knots), np.log(errors), 1)[0]
        assert abs(-slope - order) < 0.25, (transcription, errors, slope)


# --- the cart-pole swing-up against CasADi Opti ---------------------------------------------------------------
@pytest.fixture(scope="module")
def swing_up() -> tuple[QuadraticProblem, SolverOutcome]:
    problem = cart_pole(30, force=FORCE, rail=RAIL)
    return problem, solve_collocation(problem)


@pytest.mark.parametrize("transcription", ["hermite_simpson", "trapezoidal"])
def test_cart_pole_swing_up_matches_casadi_opti(transcription: str,
                                                swing_up: tuple[QuadraticProblem, SolverOutcome]) -> None:
    problem = swing_up[0]
    model = robodyn.load("cart_pole")
    rhs = casadi_reference.cart_pole_rhs(dict(model.parameters))
    outcome = swing_up[1] if transcription == "hermite_simpson" else solve_collocation(problem,
                                                                                      transcription=transcription)
    reference = casadi_reference.solve_opti(problem, rhs, transcription)
    assert reference.status == "Solve_Succeeded" and outcome.converged, (reference.status, outcome.status)
    # Both stop at IPOPT's tol 1e-8 on the same NLP from the same guess: the costs agree far inside 1e-6 (the
    # issue's bound; measured ~1e-13), the trajectories to the optimum's sensitivity to a 1e-8 KKT error.
    assert abs(outcome.cost - reference.cost) <= 1e-6 * abs(reference.cost)
    assert outcome.iterations == reference.iterations  # the same program: x_N fixed by bounds on both sides
    assert np.max(np.abs(outcome.X - reference.X)) < 1e-4
    assert np.max(np.abs(np.vstack([outcome.U, outcome.U_final]) - reference.U)) < 1e-3


@pytest.mark.parametrize("knots", [16, 50])
@pytest.mark.parametrize("transcription", ["hermite_simpson", "trapezoidal"])
def test_iterations_equal_opti_s_across_knots(transcription: str, knots: int) -> None:
    """The terminal states fixed by bounds make robodyn's program Opti's (which turns X[:, N] == v into fixed
    variables): IPOPT takes the same path, to the iteration (measured equal at N = 16..50, both schemes; with the
    equalities as rows of g the counts differed either way, e.g. 60 against 39 at N = 16). The rows' form reaches
    the same optimum."""
    rhs = casadi_reference.cart_pole_rhs(dict(robodyn.load("cart_pole").parameters))
    problem = cart_pole(knots, force=FORCE, rail=RAIL)
    outcome = solve_collocation(problem, transcription=transcription)
    reference = casadi_reference.solve_opti(problem, rhs, transcription)
    assert outcome.converged and outcome.iterations == reference.iterations
    assert abs(outcome.cost - reference.cost) <= 1e-6 * abs(reference.cost)  # measured < 1e-13
    problem.fixed_terminal = False
    rows = solve_collocation(problem, transcription=transcription)
    assert rows.converged and abs(rows.cost - reference.cost) <= 1e-6 * abs(reference.cost)


def test_cart_pole_equations_in_casadi_equal_the_model() -> None:
    """The reference's hand-written equations are the catalog model's (else the comparison proves nothing)."""
    model = robodyn.load("cart_pole")
    rhs = casadi_reference.cart_pole_rhs(dict(model.parameters))
    p = model.parameter_vector(None)
    for x, u in zip(np.random.default_rng(1).normal(size=(5, 4)), np.random.default_rng(2).normal(size=(5, 1))):
        ours = casadi_reference.evaluate(rhs, x, u)
        assert np.max(np.abs(ours - model.f_raw(0.0, x, u, p))) < 1e-12  # the same formula, rounded differently


def test_bounds_and_terminal_equalities_hold(swing_up: tuple[QuadraticProblem, SolverOutcome]) -> None:
    problem, outcome = swing_up
    U = np.vstack([outcome.U, outcome.U_final])
    # Projected into the original bounds by IPOPT (honor_original_bounds): exact, and active.
    assert np.all(np.abs(U) <= FORCE) and np.isclose(np.max(np.abs(U)), FORCE, rtol=1e-6)
    assert np.all(np.abs(outcome.X[:, 0]) <= RAIL) and np.isclose(np.max(np.abs(outcome.X[:, 0])), RAIL, rtol=1e-6)
    np.testing.assert_array_equal(outcome.X[0], problem.x0)  # fixed by its bounds
    # Terminal equalities and defects to IPOPT's tol 1e-8, plus the projection onto the bounds (<= 1e-8 |bound|).
    assert np.max(np.abs(outcome.X[-1] - problem.terminal_target)) < 1e-7
    assert 0.0 <= outcome.violation < 1e-7
    assert outcome.method == "collocation" and outcome.gains is None and outcome.seconds > 0


def test_path_inequalities_hold_at_the_knots() -> None:
    limit = 1.5  # |x_dot| <= 1.5 as x_dot^2 - limit^2 <= 0; the unconstrained optimum reaches ~2

    def speed(t: float, x: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        gx = np.zeros((1, 4))
        gx[0, 2] = 2 * x[2]
        return np.array([x[2] ** 2 - limit**2]), gx, np.zeros((1, 1))

    free = cart_pole(16, force=FORCE)
    problem = cart_pole(16, force=FORCE)
    problem.path_function, problem.n_path = speed, 1
    unconstrained, outcome = solve_collocation(free), solve_collocation(problem)
    assert outcome.converged and np.max(np.abs(unconstrained.X[:, 2])) > limit + 0.1
    assert np.max(np.abs(outcome.X[:, 2])) <= limit + 1e-8  # the inequality to IPOPT's tolerance
    assert np.isclose(np.max(np.abs(outcome.X[:, 2])), limit, atol=1e-6)  # active
    assert outcome.cost > unconstrained.cost  # a constraint that binds costs something


def test_an_infeasible_problem_reports_non_convergence() -> None:
    problem = cart_pole(20, force=1.0)  # 1 N cannot swing the pole up in 2 s
    outcome = solve_collocation(problem)
    assert not outcome.converged
    assert outcome.status.startswith("infeasible") and outcome.violation > 0.1


def test_warm_start_reduces_iterations(swing_up: tuple[QuadraticProblem, SolverOutcome]) -> None:
    problem, cold = swing_up
    warm = solve_collocation(problem, warm_start=(cold.X, cold.U))
    assert warm.converged and warm.iterations < cold.iterations / 2  # measured 17 against 49
    assert abs(warm.cost - cold.cost) <= 1e-6 * cold.cost


def test_progress_reports_every_iteration() -> None:
    seen: list[tuple[int, float, float]] = []
    outcome = solve_collocation(double_integrator(8), progress=lambda *report: seen.append(report))
    assert [k for k, _, _ in seen] == list(range(len(seen))) and len(seen) == outcome.iterations + 1
    assert seen[-1][1] == pytest.approx(outcome.cost, rel=1e-12) and seen[-1][2] < 1e-8


def test_a_progress_callback_that_raises_stops_the_solve_with_its_error() -> None:
    seen: list[int] = []

    def progress(iteration: int, cost: float, violation: float) -> None:
        seen.append(iteration)
        if iteration == 2:
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        solve_collocation(double_integrator(8), progress=progress)
    assert seen == [0, 1, 2]  # IPOPT stopped at the callback's request: no iteration after it


def test_a_failing_model_raises_its_own_error() -> None:
    problem = double_integrator(4)

    def broken(t: float, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        raise ShapeError("broken dynamics")

    problem.f = broken  # type: ignore[method-assign]
    problem.f_points = broken  # type: ignore[method-assign]  # the batched twin the transcription calls
    with pytest.raises(ShapeError, match="broken dynamics"):
        solve_collocation(problem)


@pytest.mark.parametrize(("arguments", "message"), [
    ({"transcription": "euler"}, "unknown transcription"),
    ({"hessian": "exact"}, "second derivatives"),
    ({"tolerance": 0.0}, "tolerance"),
    ({"max_iterations": -1}, "max_iterations"),
    ({"tol": 1e-3}, "tolerance="),
    ({"warm_start": (np.zeros((3, 2)), np.zeros((4, 1)))}, "expected"),
    ({"warm_start": (np.full((5, 2), np.nan), np.zeros((4, 1)))}, "NaN"),
])
def test_bad_settings_are_refused(arguments: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        solve_collocation(double_integrator(4), **arguments)  # type: ignore[arg-type]
