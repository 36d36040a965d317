"""LQR on the upright pendulum: linearize, design, close the loop on the NONLINEAR model, and probe the
region of attraction along the ray theta0 = pi + s (theta_dot0 = 0).

"Converges" means |x(T) - x*|_2 < 1e-3 at T = 20 s: the closed-loop poles are near -3.2, so a run that
enters the linear regime is ~e^-40 from x* by then, while one that falls over is O(1) away.

Reference for the gain: with A = [[0, 1], [a, 0]], B = [0, 1]^T, Q = diag(q1, q2), R = 1 the Riccati
equation solves in closed form, K = [p2, p3] with p2 = a + sqrt(a^2 + q1), p3 = sqrt(2 p2 + q2).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import robodyn
from robodyn.linearization.validity import validity

control = pytest.importorskip("control")

G = 9.81  # the catalog pendulum: m = l = I = 1
X_STAR = np.array([math.pi, 0.0])
T_FINAL = 20.0
CONVERGED = 1e-3  # |x(T) - x*|_2 below this at T_FINAL: converged
BISECTION = 1e-3  # width of the final bracket on s
TORQUE_LIMIT = 6.0  # N m, below m g l = 9.81: the pendulum cannot be held beyond asin(6 / 9.81)


@pytest.fixture(scope="module")
def pendulum():
    return robodyn.load("pendulum")


@pytest.fixture(scope="module")
def design(pendulum):
    linear = robodyn.linearize(pendulum, X_STAR, [0.0])
    K, _, _ = control.lqr(linear.A, linear.B, np.diag([10.0, 1.0]), 1.0)
    return linear, np.asarray(K, dtype=float)


def _final_distance(pendulum, s, u):
    """|x(T) - x*|_2 from theta0 = pi + s, at rest (s may be an array: a batch)."""
    s = np.atleast_1d(np.asarray(s, dtype=float))
    x0 = np.column_stack([math.pi + s, np.zeros_like(s)])
    run = robodyn.simulate(pendulum, T_FINAL, x0 if s.size > 1 else x0[0], u, method="dopri5", rtol=1e-10,
                           atol=1e-12, t_eval=[0.0, T_FINAL])
    final = run.x[..., -1, :]
    return np.linalg.norm(np.atleast_2d(final) - X_STAR, axis=1)


def _bisect(converges, low, high):
    """The boundary between ``low`` (converges) and ``high`` (does not), to BISECTION."""
    assert converges(low) and not converges(high)
    while high - low > BISECTION:
        middle = (low + high) / 2
        low, high = (middle, high) if converges(middle) else (low, middle)
    return low


def test_gain_matches_the_closed_form_riccati_solution(design):
    _, K = design
    p2 = G + math.sqrt(G**2 + 10.0)
    p3 = math.sqrt(2 * p2 + 1.0)
    np.testing.assert_allclose(K, [[p2, p3]], rtol=1e-9)


def test_closed_loop_poles_are_stable(design):
    linear, K = design
    poles = np.linalg.eigvals(linear.A - linear.B @ K)
    assert np.all(poles.real < 0)
    # the characteristic polynomial s^2 + k2 s + (k1 - g): both roots in the left half-plane iff k1 > g, k2 > 0
    np.testing.assert_allclose(np.sort(poles.real), np.sort(np.roots([1.0, K[0, 1], K[0, 0] - G]).real), rtol=1e-12)


def test_nonlinear_closed_loop_converges(pendulum, design):
    _, K = design
    feedback = robodyn.StateFeedback(K, x_ref=X_STAR, u_ref=[0.0])
    run = robodyn.simulate(pendulum, 10.0, [math.pi + 0.3, 0.0], feedback, method="dopri5", rtol=1e-10,
                           atol=1e-12, t_eval=np.linspace(0.0, 10.0, 101))
    assert abs(run.x[-1, 0] - math.pi) < 1e-6  # ~0.3 e^(-3.2 * 10) ~ 4e-15 expected
    assert abs(run.x[-1, 1]) < 1e-6


def test_unsaturated_feedback_attracts_the_whole_ray(pendulum, design):
    """With unbounded torque the ray has no boundary in (0, pi]: s_max = pi, not < pi.

    In s = theta - pi the closed loop is s'' = g sin(s) - k1 s - k2 s'. V = s'^2/2 + k1 s^2/2 + g (cos s - 1)
    has V' = -k2 s'^2 <= 0 and, as k1 > g >= g sin(s)/s, only the minimum s = 0: every start converges
    (LaSalle). The bisection asked for has nothing to find; we check the whole ray instead.
    """
    _, K = design
    assert K[0, 0] > G and K[0, 1] > 0
    feedback = robodyn.StateFeedback(K, x_ref=X_STAR, u_ref=[0.0])
    s = np.linspace(0.25, math.pi, 12)
    assert np.all(_final_distance(pendulum, s, feedback) < CONVERGED)


def test_region_of_attraction_with_a_torque_limit(pendulum, design):
    """|tau| <= 6 N m: the ray has a boundary s_max in (0, pi), beyond the linear model's validity radius."""
    _, K = design

    def saturated(t, x):
        return np.clip(-K @ (x - X_STAR), -TORQUE_LIMIT, TORQUE_LIMIT)

    def converges(s):
        return bool(_final_distance(pendulum, s, saturated)[0] < CONVERGED)

    s_max = _bisect(converges, 0.3, math.pi)
    # At rest beyond asin(limit / g) gravity outweighs the largest torque (s'' >= g sin s - limit > 0), so
    # the pendulum falls away: the boundary cannot lie further out. Measured: s_max ~ 0.657.
    holding = math.asin(TORQUE_LIMIT / G)
    radius = validity(pendulum, X_STAR, [0.0]).radius  # the default 5% tolerance: ~0.552 (cubic remainder)
    assert radius < s_max <= holding + BISECTION
    assert s_max < math.pi


def test_validity_under_feedback(pendulum, design):
    """The linear closed loop predicts the nonlinear one within 5% up to sim_radius, and those starts converge."""
    _, K = design
    result = validity(pendulum, X_STAR, [0.0], directions=8, radii=np.logspace(-4, 0, 13), horizon=5.0,
                      simulate_runs=4, feedback=K)
    assert 0.0 < result.sim_radius < math.inf and not result.affine
    feedback = robodyn.StateFeedback(K, x_ref=X_STAR, u_ref=[0.0])
    assert _final_distance(pendulum, [result.sim_radius, -result.sim_radius], feedback).max() < CONVERGED
