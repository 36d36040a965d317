"""robodyn.identification.estimates: undetermined columns and combinations, standard errors and correlations."""

import numpy as np
import pytest

from robodyn.identification.estimates import errors_and_correlation, undetermined


def test_a_dead_column_and_a_dependent_pair_are_found():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(50), rng.standard_normal(50)
    J = np.column_stack([a, 3.0 * b, np.zeros(50), -6.0 * b + 1e-15 * a])  # columns 1 and 3 are parallel
    found = undetermined(J, 1e-8)
    assert found.any and found.dead == (2,)
    (columns, coefficients, ratio), = found.directions
    assert columns == (1, 3) and ratio < 1e-8
    assert coefficients[0] == pytest.approx(coefficients[1], rel=1e-6)  # +1 of one unit column, +1 of the other's
    assert not undetermined(np.column_stack([a, b]), 1e-8).any


def test_errors_and_correlation_of_a_covariance():
    C = np.array([[4.0, 1.2], [1.2, 9.0]])
    errors, correlation = errors_and_correlation(C)
    np.testing.assert_allclose(errors, [2.0, 3.0])
    np.testing.assert_allclose(correlation, [[1.0, 0.2], [0.2, 1.0]])
