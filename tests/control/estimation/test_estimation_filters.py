"""One filter step (robodyn.control.estimation.filters): Joseph's update equals the textbook forms at the optimal
gain and stays positive semidefinite; the scaled unscented transform is exact on linear maps and its weights are
Wan & van der Merwe's."""

from __future__ import annotations

import numpy as np
import pytest

from robodyn.base.errors import InputError, NumericalError
from robodyn.control.estimation.filters import (
    joseph_update,
    merwe_weights,
    sigma_points,
    unscented_transform,
    unscented_update,
)

RNG = np.random.default_rng(48)


def _spd(n: int) -> np.ndarray:
    M = RNG.normal(size=(n, n))
    return M @ M.T + 0.1 * np.eye(n)


def test_joseph_equals_the_short_forms_at_the_optimal_gain() -> None:
    P, R, H = _spd(4), _spd(2), RNG.normal(size=(2, 4))
    x, innovation = RNG.normal(size=4), RNG.normal(size=2)
    x1, P1 = joseph_update(x, P, innovation, H, R)
    K = P @ H.T @ np.linalg.inv(H @ P @ H.T + R)
    np.testing.assert_allclose(x1, x + K @ innovation, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(P1, (np.eye(4) - K @ H) @ P, rtol=0, atol=1e-12)  # (I - K H) P
    # the information form: P1^-1 = P^-1 + H' R^-1 H
    np.testing.assert_allclose(np.linalg.inv(P1), np.linalg.inv(P) + H.T @ np.linalg.inv(R) @ H, rtol=1e-10)
    assert np.linalg.eigvalsh(P1)[0] > 0


@pytest.mark.parametrize(("alpha", "beta", "kappa"), [(1.0, 2.0, 0.0), (1e-3, 2.0, 0.0), (0.5, 0.0, 3.0)])
def test_the_unscented_transform_is_exact_on_linear_maps(alpha, beta, kappa) -> None:
    n = 3
    w = merwe_weights(n, alpha, beta, kappa)
    lam = alpha**2 * (n + kappa) - n
    assert w.scale == pytest.approx(n + lam, rel=1e-15)
    assert w.mean.sum() == pytest.approx(1.0, rel=1e-12) and w.covariance[0] == pytest.approx(
        lam / (n + lam) + 1 - alpha**2 + beta, rel=1e-12)
    x, P, M, Q = RNG.normal(size=n), _spd(n), RNG.normal(size=(2, n)), _spd(2)
    X = sigma_points(x, P, w)
    assert X.shape == (2 * n + 1, n)
    mean, cov = unscented_transform(X @ M.T, w, Q)
    # mean and covariance of a linear map of a Gaussian: exact to rounding, relative to the weights' size (alpha
    # small makes |W_0| ~ 1/alpha^2: its cancellation costs ~1e-16/alpha^2)
    tol = 1e-12 / alpha**2
    np.testing.assert_allclose(mean, M @ x, rtol=0, atol=tol)
    np.testing.assert_allclose(cov, M @ P @ M.T + Q, rtol=0, atol=tol * np.max(np.abs(cov)))


def test_the_unscented_update_of_a_linear_measurement_is_kalmans() -> None:
    n = 3
    w = merwe_weights(n, 1.0, 2.0, 0.0)
    x, P, H, R = RNG.normal(size=n), _spd(n), RNG.normal(size=(2, n)), _spd(2)
    y = RNG.normal(size=2)
    X = sigma_points(x, P, w)
    x1, P1 = unscented_update(x, P, X, X @ H.T, y, R, w)
    x2, P2 = joseph_update(x, P, y - H @ x, H, R)
    np.testing.assert_allclose(x1, x2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(P1, P2, rtol=0, atol=1e-12)


def test_weights_that_make_no_points_are_refused() -> None:
    with pytest.raises(InputError, match=r"alpha must be in \(0, 1\]"):
        merwe_weights(2, 0.0, 2.0, 0.0)
    with pytest.raises(InputError, match="raise kappa"):
        merwe_weights(2, 1.0, 2.0, -2.0)


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_a_diverged_covariance_is_a_numerical_error_that_says_so() -> None:
    """A non-finite P (an estimate that diverged) reaches the gain's Cholesky factor as a non-finite innovation
    covariance: robodyn's NumericalError naming it, not scipy's finite check."""
    P = np.array([[np.inf, 0.0], [0.0, 1.0]])
    with pytest.raises(NumericalError, match="not finite"):
        joseph_update(np.zeros(2), P, np.zeros(2), np.eye(2), np.eye(2))
