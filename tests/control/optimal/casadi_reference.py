"""The collocation problems of collocation_cases.py written independently with CasADi symbols and solved by
CasADi Opti + IPOPT: the reference of test_collocation.py and of benchmarks/bench_collocation.py.

The cart-pole's equations come from the catalog file (src/robodyn/files/builtin/cart_pole.yaml): T = (mc + mp)
xd^2/2 + mp l cos(th) xd thd + mp l^2 thd^2/2, V = mp g l cos(th), the force F on x. Lagrange's equations give
M(th) [xdd, thdd] = [F + mp l sin(th) thd^2, mp g l sin(th)] with M = [[mc + mp, mp l cos th], [mp l cos th,
mp l^2]]. The transcriptions are written from Kelly (2017), secs. 3-4, in the same separated form as robodyn's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np
from tests.control.optimal.collocation_cases import QuadraticProblem


def cart_pole_rhs(parameters: dict[str, float]) -> Callable[[Any, Any], Any]:
    """x' = f(x, u) of the cart-pole in CasADi symbols (x = (x, theta, x_dot, theta_dot), u = (F,))."""
    mc, mp, length, g = (parameters[name] for name in ("m_cart", "m_pole", "l", "g"))

    def rhs(x: Any, u: Any) -> Any:
        s, c = ca.sin(x[1]), ca.cos(x[1])
        b1, b2 = u[0] + mp * length * s * x[3] ** 2, mp * g * length * s
        det = (mc + mp) * mp * length**2 - (mp * length * c) ** 2
        xdd = (mp * length**2 * b1 - mp * length * c * b2) / det
        thdd = ((mc + mp) * b2 - mp * length * c * b1) / det
        return ca.vertcat(x[2], x[3], xdd, thdd)

    return rhs


def evaluate(rhs: Callable[[Any, Any], Any], x: np.ndarray, u: np.ndarray) -> np.ndarray:
    """rhs at numbers."""
    return np.asarray(ca.evalf(rhs(ca.DM(x), ca.DM(u)))).ravel()


@dataclass(frozen=True)
class OptiSolution:
    cost: float
    X: np.ndarray  # (N + 1, n)
    U: np.ndarray  # (N + 1, m)
    iterations: int
    status: str
    seconds: float  # IPOPT's solve (CasADi's t_wall_total)


def build_opti(problem: QuadraticProblem, rhs: Callable[[Any, Any], Any], transcription: str,
               tolerance: float = 1e-8, max_iterations: int = 500) -> tuple[Any, Any, Any, Any]:
    """(opti, J, X, U): ``problem`` transcribed with CasADi symbols; the guess is the problem's initial guess
    (midpoints: the Hermite interpolant of the guess, the mean of the neighbouring inputs)."""
    n, m, N, T = len(problem.states), len(problem.inputs), problem.knots, problem.horizon
    h = T / N
    opti = ca.Opti()
    X, U = opti.variable(n, N + 1), opti.variable(m, N + 1)
    Q, R = ca.DM(problem.Q), ca.DM(problem.R)

    def running(x: Any, u: Any) -> Any:
        dx, du = x - problem.x_ref, u - problem.u_ref
        return 0.5 * (ca.mtimes([dx.T, Q, dx]) + ca.mtimes([du.T, R, du]))

    F = [rhs(X[:, k], U[:, k]) for k in range(N + 1)]
    L = [running(X[:, k], U[:, k]) for k in range(N + 1)]
    J = 0
    if transcription == "trapezoidal":
        for k in range(N):
            opti.subject_to(X[:, k + 1] - X[:, k] - h / 2 * (F[k] + F[k + 1]) == 0)
            J += h / 2 * (L[k] + L[k + 1])
    else:
        XM, UM = opti.variable(n, N), opti.variable(m, N)
        for k in range(N):
            FM = rhs(XM[:, k], UM[:, k])
            opti.subject_to(X[:, k + 1] - X[:, k] - h / 6 * (F[k] + 4 * FM + F[k + 1]) == 0)
            opti.subject_to(XM[:, k] - (X[:, k] + X[:, k + 1]) / 2 - h / 8 * (F[k] - F[k + 1]) == 0)
            J += h / 6 * (L[k] + 4 * running(XM[:, k], UM[:, k]) + L[k + 1])
        _bound(opti, XM, problem.state_bounds)
        _bound(opti, UM, problem.input_bounds)
    dxf = X[:, N] - problem.xf_ref
    J += 0.5 * ca.mtimes([dxf.T, ca.DM(problem.Qf), dxf])
    opti.minimize(J)
    opti.subject_to(X[:, 0] == problem.x0)
    _bound(opti, X, problem.state_bounds)
    _bound(opti, U, problem.input_bounds)
    for i in problem.terminal_indices:
        opti.subject_to(X[i, N] == problem.terminal_target[i])
    X0, U0 = problem.initial_guess()
    U0 = np.vstack([U0, U0[-1:]])  # u_N = u_{N-1}
    opti.set_initial(X, X0.T)
    opti.set_initial(U, U0.T)
    if transcription != "trapezoidal":
        fx = np.array([evaluate(rhs, x, u) for x, u in zip(X0, U0)])
        opti.set_initial(XM, ((X0[:-1] + X0[1:]) / 2 + h / 8 * (fx[:-1] - fx[1:])).T)
        opti.set_initial(UM, ((U0[:-1] + U0[1:]) / 2).T)
    opti.solver("ipopt", {"print_time": False, "record_time": True, "detect_simple_bounds": True},
                {"print_level": 0, "sb": "yes", "tol": tolerance, "max_iter": max_iterations,
                 "hessian_approximation": "limited-memory", "honor_original_bounds": "yes"})
    return opti, J, X, U


def _bound(opti: Any, V: Any, bounds: np.ndarray) -> None:
    for i, (lo, hi) in enumerate(np.asarray(bounds)):
        if np.isfinite(lo):
            opti.subject_to(V[i, :] >= lo)
        if np.isfinite(hi):
            opti.subject_to(V[i, :] <= hi)


def solve_opti(problem: QuadraticProblem, rhs: Callable[[Any, Any], Any], transcription: str,
               tolerance: float = 1e-8) -> OptiSolution:
    opti, J, X, U = build_opti(problem, rhs, transcription, tolerance)
    solution = opti.solve()
    stats = opti.stats()
    return OptiSolution(float(solution.value(J)), np.asarray(solution.value(X)).T.reshape(problem.knots + 1, -1),
                        np.asarray(solution.value(U)).T.reshape(problem.knots + 1, -1), int(stats["iter_count"]),
                        str(stats["return_status"]), float(stats["t_wall_total"]))
