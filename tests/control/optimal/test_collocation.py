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
from tests.control.optimal.collocation_cases import QuadraticProblem, double_integrator

from robodyn.control.optimal.collocation import solve_collocation

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
