"""Tests for robodyn.control.optimal.ipopt: IPOPT over a small sparse NLP against scipy's SLSQP."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

from robodyn.control.optimal.ipopt import IPOPT_STATUS, solve_ipopt

pytest.importorskip("casadi")


class Rosenbrock:
    """min sum 100 (z_{i+1} - z_i^2)^2 + (1 - z_i)^2 s.t. z_i + z_{i+1} = c_i (a sparse banded Jacobian)."""

    def __init__(self, size: int, c: float) -> None:
        self.size, self.n_constraints, self.c = size, size - 1, c
        self.rows = np.repeat(np.arange(size - 1), 2)
        self.cols = (np.arange(size - 1)[:, None] + np.array([0, 1])).ravel()
        self.calls = self.derivative_calls = 0

    def objective(self, z: np.ndarray) -> float:
        return float(np.sum(100 * (z[1:] - z[:-1] ** 2) ** 2 + (1 - z[:-1]) ** 2))

    def gradient(self, z: np.ndarray) -> np.ndarray:
        g = np.zeros_like(z)
        r = z[1:] - z[:-1] ** 2
        g[:-1] += -400 * z[:-1] * r - 2 * (1 - z[:-1])
        g[1:] += 200 * r
        return g

    def values(self, z: np.ndarray) -> tuple[float, np.ndarray]:
        self.calls += 1
        return self.objective(z), z[:-1] + z[1:] - self.c

    def derivatives(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.derivative_calls += 1
        return self.gradient(z), np.ones(len(self.rows))


def test_ipopt_equals_slsqp_on_a_sparse_nlp() -> None:
    nlp = Rosenbrock(6, 1.2)
    z0 = np.full(6, 0.5)
    lower = np.full(6, -np.inf)
    lower[2] = 0.65  # one active bound
    bounds = (lower, np.full(6, np.inf), np.zeros(5), np.zeros(5))
    run = solve_ipopt(nlp, z0, bounds, options={"tol": 1e-10})
    reference = scipy.optimize.minimize(
        nlp.objective, z0, jac=nlp.gradient, method="SLSQP", bounds=[(lo, None) for lo in lower],
        constraints={"type": "eq", "fun": lambda z: nlp.values(z)[1],
                     "jac": lambda z: np.eye(5, 6) + np.eye(5, 6, 1)}, options={"ftol": 1e-14, "maxiter": 500})
    assert run.converged and reference.success and run.status == IPOPT_STATUS["Solve_Succeeded"]
    # Both at tight tolerances on a well-conditioned optimum; IPOPT relaxes bounds by 1e-8 while it iterates, so
    # z differs by ~1e-8 and f (|grad f| ~ 1e2 against the active bound) by ~1e-7 relative.
    np.testing.assert_allclose(run.z, reference.x, atol=1e-6)
    assert run.f == pytest.approx(reference.fun, rel=1e-6)
    assert run.f == nlp.objective(run.z)  # the answer's own value
    assert run.z[2] >= 0.65 and np.max(np.abs(run.g)) < 2e-8  # the projection onto the bound moves z by 1e-8
    assert run.iterations > 0 and run.seconds > 0


def test_values_are_computed_once_per_point() -> None:
    nlp = Rosenbrock(4, 1.0)
    run = solve_ipopt(nlp, np.zeros(4), (np.full(4, -np.inf), np.full(4, np.inf), np.zeros(3), np.zeros(3)))
    assert run.converged
    assert nlp.calls <= 3 * (run.iterations + 1)  # objective and constraints share one evaluation per trial point
    # IPOPT asks for df/dz and dg/dz once per accepted iterate: the two share one evaluation
    assert nlp.derivative_calls == run.iterations + 1, (nlp.derivative_calls, run.iterations)
