"""Catalog models against closed forms: the acrobot's mass matrix and dynamics are Tedrake's manipulator equations
(Underactuated Robotics, "Acrobots, Cart-Poles, and Quadrotors", the acrobot's equations of motion):

    M(q) = [[I1 + I2 + m2 l1^2 + 2 m2 l1 lc2 c2, I2 + m2 l1 lc2 c2], [I2 + m2 l1 lc2 c2, I2]],
    C(q, q') = [[-2 m2 l1 lc2 s2 q2', -m2 l1 lc2 s2 q2'], [m2 l1 lc2 s2 q1', 0]],
    tau_g(q) = [-m1 g lc1 s1 - m2 g (l1 s1 + lc2 s12), -m2 g lc2 s12],   B = [0, 1]^T,

with I1 = Ic1 + m1 lc1^2, I2 = Ic2 + m2 lc2^2 (about the joints) and the joint friction -b q':
M q'' + C q' = tau_g + B tau - b q'.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import robodyn

P = {"m1": 1.0, "m2": 1.0, "l1": 1.0, "l2": 2.0, "lc1": 0.5, "lc2": 1.0, "Ic1": 0.083, "Ic2": 0.33, "b1": 0.1,
     "b2": 0.1, "g": 9.81}


def closed_form(q: np.ndarray, v: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray]:
    m1, m2, l1, lc1, lc2, g = P["m1"], P["m2"], P["l1"], P["lc1"], P["lc2"], P["g"]
    I1, I2 = P["Ic1"] + m1 * lc1**2, P["Ic2"] + m2 * lc2**2
    c2, s2, s1, s12 = math.cos(q[1]), math.sin(q[1]), math.sin(q[0]), math.sin(q[0] + q[1])
    M = np.array([[I1 + I2 + m2 * l1**2 + 2 * m2 * l1 * lc2 * c2, I2 + m2 * l1 * lc2 * c2],
                  [I2 + m2 * l1 * lc2 * c2, I2]])
    C = np.array([[-2 * m2 * l1 * lc2 * s2 * v[1], -m2 * l1 * lc2 * s2 * v[1]], [m2 * l1 * lc2 * s2 * v[0], 0.0]])
    tau_g = np.array([-m1 * g * lc1 * s1 - m2 * g * (l1 * s1 + lc2 * s12), -m2 * g * lc2 * s12])
    force = tau_g + np.array([0.0, tau]) - np.array([P["b1"], P["b2"]]) * v - C @ v
    return M, np.concatenate([v, np.linalg.solve(M, force)])


def test_the_acrobot_is_tedrakes() -> None:
    acrobot = robodyn.load("acrobot")
    assert acrobot.inputs == ("tau",) and dict(acrobot.parameters) == P
    rng = np.random.default_rng(5)
    for _ in range(10):
        q, v, tau = rng.uniform(-math.pi, math.pi, 2), rng.uniform(-3, 3, 2), float(rng.uniform(-5, 5))
        M, f = closed_form(q, v, tau)
        # the model's M and f come from its Lagrangian through sympy: equal to the closed form to rounding
        assert np.allclose(acrobot.mass_matrix(q), M, rtol=1e-13, atol=1e-13)
        assert np.allclose(acrobot.f(0.0, np.concatenate([q, v]), [tau]), f, rtol=1e-12, atol=1e-12)


def test_the_acrobot_is_underactuated_and_upright_is_an_equilibrium() -> None:
    acrobot = robodyn.load("acrobot")
    upright = np.array([math.pi, 0.0, 0.0, 0.0])
    assert np.allclose(acrobot.f(0.0, upright, [0.0]), 0.0, atol=1e-12)
    linear = robodyn.linearize(acrobot, upright, [0.0])
    assert linear.B[:2].tolist() == [[0.0], [0.0]]  # the torque moves accelerations only
    assert max(np.linalg.eigvals(linear.A).real) > 0  # the top is unstable ...
    assert np.linalg.matrix_rank(np.hstack([np.linalg.matrix_power(linear.A, k) @ linear.B for k in range(4)])) == 4


@pytest.mark.parametrize("name", ["acrobot"])
def test_the_catalog_file_is_in_examples(name: str) -> None:
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / f"{name}.yaml"
    assert example.is_symlink() and example.read_text() == robodyn.files.catalog.catalog_text(name)
