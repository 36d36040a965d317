"""A real solver of optimal control problems for the tests of the problem, its registry and ``robodyn optimize``
before the library's solvers land: the exact discrete LQ solution (the Riccati recursion)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from robodyn.control.optimal.protocol import SolverOutcome

__all__ = ["riccati_solver"]


def riccati_solver(problem: Any, *, progress: Any = None, converge: bool = True, **options: Any) -> SolverOutcome:
    """The exact minimizer of sum dt l(x_k, u_k) + l_T(x_N) for explicit Euler steps of a linear model and
    quadratic costs about 0, unconstrained: the discrete Riccati recursion (Bertsekas, Dynamic Programming and
    Optimal Control, vol. 1, sec. 4.1) on the problem's own A, B and cost Hessians."""
    start = time.perf_counter()
    n, m, N, dt = len(problem.states), len(problem.inputs), problem.knots, problem.horizon / problem.knots
    zero_x, zero_u = np.zeros(n), np.zeros(m)
    A, B = problem.f_jacobians(0.0, zero_x, zero_u)
    F, G = np.eye(n) + dt * A, dt * B
    d = problem.running_derivatives(0.0, zero_x, zero_u)
    S = problem.terminal_derivatives(zero_x).lxx
    gains = np.zeros((N, m, n))
    for k in range(N - 1, -1, -1):
        gains[k] = np.linalg.solve(dt * d.luu + G.T @ S @ G, G.T @ S @ F)
        S = dt * d.lxx + F.T @ S @ (F - G @ gains[k])
    X, U = np.zeros((N + 1, n)), np.zeros((N, m))
    X[0] = problem.x0
    for k in range(N):
        U[k] = -gains[k] @ X[k]
        X[k + 1] = X[k] + dt * problem.f(k * dt, X[k], U[k])
    times = problem.times()
    cost = sum(dt * problem.running(times[k], X[k], U[k]) for k in range(N)) + problem.terminal(X[N])
    if progress is not None:
        progress(1, cost, 0.0)
    return SolverOutcome(X, U, cost, 0.0, 1, "solved" if converge else "iteration limit", converge,
                         time.perf_counter() - start, "riccati", gains=gains)
