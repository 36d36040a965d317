"""The constraint manifold's numbers (robodyn.mechanisms.loops.constraints): the reduced model's Jacobian is linearize's
A (central differences through assembly), its points round-trip, and validity samples a linkage."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import robodyn
from robodyn.linearization.linearize import operating_point
from robodyn.mechanisms.loops.constraints import ReducedModel

FOUR_BAR = str(Path(__file__).resolve().parents[3] / "examples" / "four_bar.yaml")


def test_the_reduced_models_jacobian_is_the_linearizations() -> None:
    """Central differences of f in the independent coordinates (each point assembled to 1e-12, h = 1e-5: error
    ~h^2 |f'''| + 1e-12 / h ~ 1e-7 of |A| ~ 100), against the exact reduced A and B."""
    model = robodyn.load(FOUR_BAR)
    state = robodyn.assemble(model, fix={"crank": 0.7, "crank_dot": 1.5})
    x = np.array(list(state.values()))
    p = model.parameter_vector()
    u = np.array([0.3])
    linear = robodyn.linearize(model, x, u)
    reduced = ReducedModel(model, x, p)
    z = reduced.coordinates(x)
    np.testing.assert_array_equal(z, linear.x_op)
    np.testing.assert_allclose(reduced.stored(z), x, atol=1e-12)
    h, columns = 1e-5, []
    for j in range(z.size):
        step = np.zeros(z.size)
        step[j] = h
        columns.append((reduced.f_raw(0.0, z + step, u, p) - reduced.f_raw(0.0, z - step, u, p)) / (2 * h))
    np.testing.assert_allclose(np.array(columns).T, linear.A, atol=1e-6 * np.max(np.abs(linear.A)))
    du = (reduced.f_raw(0.0, z, u + h, p) - reduced.f_raw(0.0, z, u - h, p)) / (2 * h)
    np.testing.assert_allclose(du, linear.B[:, 0], atol=1e-6 * np.max(np.abs(linear.B)))


def test_validity_of_a_linkage_is_measured_in_its_independent_coordinates() -> None:
    model = robodyn.load(FOUR_BAR)
    x, u = operating_point(model, {"crank": 0.8})  # the loop assembled, held there by crank_tau
    result = robodyn.validity(model, x, u, horizon=1.0)
    assert 0 < result.radius < 1 and result.exponent > 1.5  # a smooth, nonlinear linkage: remainder ~ rho^2
    assert result.sim_radius is not None and result.sim_radius > 0


def test_the_reduced_models_points_are_assembled_with_its_own_parameters() -> None:
    """A longer coupler (b = 0.55): the points map to states on that linkage, not on the file's."""
    model = robodyn.load(FOUR_BAR)
    p = model.parameter_vector({"b": 0.55})
    x = model.constraints().assemble(0.0, np.zeros(6), p, {"crank": 0.9})
    reduced = ReducedModel(model, x, p)
    state = reduced.stored(reduced.coordinates(x) + np.array([0.05, 0.1]))
    assert max(map(abs, model.constraints().residuals(0.0, state, p).values())) <= 1e-9
