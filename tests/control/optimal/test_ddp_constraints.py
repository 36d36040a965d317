"""The DDP family's augmented Lagrangian (robodyn.control.optimal.ddp_constraints) against CasADi Opti + IPOPT on
the same discrete problem.

The catalog pendulum (theta'' = tau - 9.81 sin theta, m = l = 1) moves from rest at 0 to rest at 1 rad in 2 s (40
knots): costs sum dt (1/2 (theta - 1)^2 + 0.05 theta_dot^2 + 0.025 tau^2) over the knots, the speed bounded
theta_dot <= 1 at every knot, the path inequality tau - 0.5 theta_dot - 6 <= 0 at every knot before the last, and
the terminal equalities. Without the bound and the inequality the move would be faster and harder; with them both
are active on an arc of knots. The reference writes the same discrete problem — the same step (rk4, or the
semi-implicit Euler of mechanical models), costs and constraints, in CasADi symbols — and solves it with IPOPT at
tol 1e-12, the constraints as hard constraints.
"""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

import robodyn

N, T, G = 40, 2.0, 9.81
DT = T / N
SPEED, LIMIT = 1.0, 6.0


def problem(method: str, integrator: str) -> robodyn.OptimalControlProblem:
    costs = {"state": {"weights": {"theta": 1.0, "theta_dot": 0.1}, "reference": {"theta": 1.0}},
             "input": {"weights": {"tau": 0.05}}}
    return robodyn.OptimalControlProblem(
        robodyn.load("pendulum"), T, N, [0.0, 0.0], costs,
        bounds={"inputs": {"tau": [-12, 12]}, "states": {"theta_dot": [-5, SPEED]}},
        constraints={"path": [f"tau - 0.5*theta_dot - {LIMIT}"], "terminal": {"theta": 1.0, "theta_dot": 0.0}},
        method=method, integrator=integrator)


def casadi_solution(integrator: str) -> tuple[float, np.ndarray]:
    def f(x, u):
        return ca.vertcat(x[1], u[0] - G * ca.sin(x[0]))

    def step(x, u):
        if integrator == "euler":  # semi-implicit: v+ = v + dt a(q, v), q+ = q + dt v+
            v = x[1] + DT * (u[0] - G * ca.sin(x[0]))
            return ca.vertcat(x[0] + DT * v, v)
        k1 = f(x, u)
        k2 = f(x + DT / 2 * k1, u)
        k3 = f(x + DT / 2 * k2, u)
        k4 = f(x + DT * k3, u)
        return x + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    opti = ca.Opti()
    X, U = opti.variable(2, N + 1), opti.variable(1, N)
    opti.subject_to(X[:, 0] == ca.DM([0.0, 0.0]))
    cost = 0
    for k in range(N):
        opti.subject_to(X[:, k + 1] == step(X[:, k], U[:, k]))
        cost += DT * (0.5 * ((X[0, k] - 1.0) ** 2 + 0.1 * X[1, k] ** 2) + 0.5 * 0.05 * U[0, k] ** 2)
        opti.subject_to(opti.bounded(-12, U[0, k], 12))
        opti.subject_to(U[0, k] - 0.5 * X[1, k] - LIMIT <= 0)
    for k in range(N + 1):
        opti.subject_to(opti.bounded(-5, X[1, k], SPEED))
    opti.subject_to(X[0, N] == 1.0)
    opti.subject_to(X[1, N] == 0.0)
    opti.minimize(cost)
    opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "sb": "yes", "tol": 1e-12})
    solution = opti.solve()
    return float(solution.value(cost)), np.atleast_1d(solution.value(U))


@pytest.mark.parametrize("integrator", ["rk4", "euler"])
@pytest.mark.parametrize("method", ["fddp", "ddp"])
def test_state_bounds_path_and_terminal_constraints_reach_ipopts_optimum(method: str, integrator: str) -> None:
    ours = problem(method, integrator).solve(tolerance=1e-12, constraint_tolerance=1e-9, max_iterations=2000)
    cost, U = casadi_solution(integrator)
    # both constraints are active on the optimal path (else this would test an unconstrained problem)
    assert ours.x[:, 1].max() == pytest.approx(SPEED, abs=1e-8)
    assert (ours.u[:-1, 0] - 0.5 * ours.x[:-1, 1] - LIMIT).max() == pytest.approx(0.0, abs=1e-8)
    assert ours.violation <= 1e-9
    # the augmented Lagrangian stops at violation <= 1e-9 and IPOPT at tol 1e-12: the optima agree to what the
    # multipliers (O(1)) times that violation allow; measured 3e-9 relative in cost, 3e-7 in inputs
    assert ours.cost == pytest.approx(cost, rel=1e-7)
    np.testing.assert_allclose(ours.u[:-1, 0], U, rtol=0, atol=1e-5)
