"""The same two-link arm as a chain file (straight-line symbolic RNEA) and as URDF (Pinocchio)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robodyn

pytest.importorskip("pinocchio")

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.fixture(scope="module")
def arms():
    return robodyn.load(str(EXAMPLES / "two_link_arm.yaml")), robodyn.load(str(EXAMPLES / "two_link_arm.urdf"))


def test_same_names(arms):
    chain, urdf = arms
    assert chain.states == urdf.states == ("shoulder", "elbow", "shoulder_dot", "elbow_dot")
    assert chain.inputs == urdf.inputs == ("shoulder_tau", "elbow_tau")


def test_equal_dynamics_and_linearizations_at_random_states(arms):
    """Two independent implementations (sympy straight-line RNEA vs Pinocchio's ABA/CRBA/RNEA and analytic
    derivatives) of the same rigid bodies: equal to rounding; 1e-10 is the issue's bound."""
    chain, urdf = arms
    rng = np.random.default_rng(11)
    for _ in range(20):
        q, qd, u = rng.uniform(-np.pi, np.pi, 2), rng.uniform(-3, 3, 2), rng.uniform(-5, 5, 2)
        x = np.concatenate([q, qd])
        np.testing.assert_allclose(chain.mass_matrix(q), urdf.mass_matrix(q), rtol=0, atol=1e-10)
        bias_chain = chain.inverse_dynamics(q, qd, np.zeros(2))  # C q' + g
        np.testing.assert_allclose(bias_chain, urdf.bias(q, qd), rtol=0, atol=1e-10)
        np.testing.assert_allclose(chain.inverse_dynamics(q, np.zeros(2), np.zeros(2)), urdf.gravity(q),
                                   rtol=0, atol=1e-10)
        np.testing.assert_allclose(chain.f(0.0, x, u), urdf.f(0.0, x, u), rtol=0, atol=1e-10)
        a_chain, a_urdf = robodyn.linearize(chain, x, u), robodyn.linearize(urdf, x, u)
        np.testing.assert_allclose(a_chain.A, a_urdf.A, rtol=0, atol=1e-10)
        np.testing.assert_allclose(a_chain.B, a_urdf.B, rtol=0, atol=1e-10)
