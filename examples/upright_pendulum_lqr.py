"""LQR on the upright pendulum: linearize at theta = pi, design K, close the loop on the nonlinear model.

Run: ``python examples/upright_pendulum_lqr.py`` (needs python-control: ``pip install control``).

It prints the gain, the closed-loop poles, the state reached from theta0 = pi + 0.3, how far the linear
model can be trusted (``robodyn.linearization.validity``), and the region of attraction along the ray
theta0 = pi + s at rest. With unbounded torque that ray converges all the way to s = pi (a Lyapunov
function proves it, k1 > g); with a torque limit of 6 N m it has a boundary s_max, found by bisection.
"""

from __future__ import annotations

import math

import numpy as np

import control
import robodyn
from robodyn.linearization.validity import validity
from robodyn.signals import Constant

X_STAR = np.array([math.pi, 0.0])
T_FINAL, CONVERGED = 20.0, 1e-3  # converged: |x(T) - x*|_2 < 1e-3 at T = 20 s
TORQUE_LIMIT = 6.0  # N m (m g l = 9.81)


def final_distance(model: robodyn.Model, s: float, u: object) -> float:
    run = robodyn.simulate(model, T_FINAL, [math.pi + s, 0.0], u, method="dopri5", rtol=1e-10, atol=1e-12,
                           t_eval=[0.0, T_FINAL])
    return float(np.linalg.norm(run.x[-1] - X_STAR))


def boundary(model: robodyn.Model, u: object, low: float = 0.3, high: float = math.pi) -> float:
    """Bisection on s between a converging ``low`` and a non-converging ``high``; ``high`` if it converges."""
    if final_distance(model, high, u) < CONVERGED:
        return high
    while high - low > 1e-3:
        middle = (low + high) / 2
        low, high = (middle, high) if final_distance(model, middle, u) < CONVERGED else (low, middle)
    return low


def main() -> None:
    pendulum = robodyn.load("pendulum")
    linear = robodyn.linearize(pendulum, X_STAR, [0.0])
    K = np.asarray(control.lqr(linear.A, linear.B, np.diag([10.0, 1.0]), 1.0)[0], dtype=float)
    print("K =", K)
    print("closed-loop poles:", np.linalg.eigvals(linear.A - linear.B @ K))

    feedback = robodyn.StateFeedback(K, x_ref=X_STAR, u_ref=(Constant(0.0),))
    run = robodyn.simulate(pendulum, 10.0, [math.pi + 0.3, 0.0], feedback, method="dopri5", rtol=1e-10,
                           atol=1e-12)
    print("state after 10 s from theta0 = pi + 0.3:", run.x[-1], " theta - pi =", run.x[-1, 0] - math.pi)

    trust = validity(pendulum, X_STAR, [0.0], horizon=5.0, feedback=K)
    print(trust.text())

    print("region of attraction along theta0 = pi + s (at rest):")
    print(f"  unbounded torque: s_max = {boundary(pendulum, feedback):.4f} (the whole ray up to pi)")

    def saturated(t: float, x: np.ndarray) -> np.ndarray:
        return np.clip(-K @ (x - X_STAR), -TORQUE_LIMIT, TORQUE_LIMIT)

    s_max = boundary(pendulum, saturated)
    print(f"  |tau| <= {TORQUE_LIMIT:g} N m: s_max = {s_max:.4f} (holding limit asin({TORQUE_LIMIT:g}/g) = "
          f"{math.asin(TORQUE_LIMIT / 9.81):.4f}; linear validity radius {trust.radius:.4f})")


if __name__ == "__main__":
    main()
