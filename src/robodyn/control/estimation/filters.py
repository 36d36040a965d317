"""The arithmetic of one Kalman-filter step, as pure functions of arrays (the blocks of
:mod:`~robodyn.control.estimation.blocks` call them once per sample).

- :func:`joseph_update`: the measurement update of the linear and extended Kalman filters, its covariance in
  Joseph's stabilized form P = (I - K H) P (I - K H)' + K R K', which stays symmetric positive semidefinite for any
  gain (Bucy & Joseph, *Filtering for Stochastic Processes*, 1968; Simon, *Optimal State Estimation*, 2006, eq.
  5.19).
- :func:`merwe_weights`, :func:`sigma_points`, :func:`unscented_transform`, :func:`unscented_update`: the scaled
  unscented transform of Wan & van der Merwe ("The unscented Kalman filter for nonlinear estimation", IEEE AS-SPCC
  2000; Julier, "The scaled unscented transformation", ACC 2002): 2n + 1 points x, x +- columns of the lower
  Cholesky factor of (n + lambda) P, lambda = alpha^2 (n + kappa) - n; weights Wm_0 = lambda / (n + lambda),
  Wc_0 = Wm_0 + 1 - alpha^2 + beta, Wm_i = Wc_i = 1 / (2 (n + lambda)). The filter is the additive-noise UKF
  of Särkkä, *Bayesian Filtering and Smoothing*, 2013, algorithm 5.14: the update draws its points anew from the
  predicted mean and covariance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError, NumericalError

__all__ = ["MerweWeights", "innovation_error", "joseph_update", "merwe_weights", "sigma_error", "sigma_points",
           "unscented_transform", "unscented_update"]

Array = NDArray[np.float64]


def _gain(cross: Array, S: Array, where: str) -> Array:
    """K = cross S^-1 (S the innovation covariance, symmetric positive definite), by Cholesky."""
    from scipy.linalg import cho_factor, cho_solve

    try:
        factor = cho_factor(S, lower=True)
    except (np.linalg.LinAlgError, ValueError):  # ValueError: scipy's finite check
        raise innovation_error(S, where) from None
    return np.asarray(cho_solve(factor, cross.T).T)


def innovation_error(S: Array, where: str) -> NumericalError:
    """The error of an innovation covariance S (p, p) that is not positive definite (no gain)."""
    if not np.all(np.isfinite(S)):
        return NumericalError(f"{where}: the innovation covariance H P H' + Rn is not finite (the estimate "
                              "diverged): check Qn, Rn, P0 and the plant's inputs")
    return NumericalError(f"{where}: the innovation covariance H P H' + Rn is not positive definite (smallest "
                          f"eigenvalue {np.linalg.eigvalsh(0.5 * (S + S.T))[0]:.3g}): check Rn and P0")


def joseph_update(x: Array, P: Array, innovation: Array, H: Array, R: Array, where: str = "kalman"
                  ) -> tuple[Array, Array]:
    """(x (n,), P (n, n)) after the measurement whose ``innovation`` y - h(x) (p,) has the Jacobian H (p, n) and the
    noise covariance R (p, p): K = P H' (H P H' + R)^-1, x + K innovation, Joseph's form of P."""
    PH = P @ H.T
    K = _gain(PH, H @ PH + R, where)
    I_KH = np.eye(x.size) - K @ H
    return x + K @ innovation, I_KH @ P @ I_KH.T + K @ R @ K.T


@dataclass(frozen=True, slots=True)
class MerweWeights:
    """The scaled unscented transform's constants for n states: ``scale`` = n + lambda, ``mean`` and ``covariance``
    the weights (2 n + 1,) of the points."""

    scale: float
    mean: Array
    covariance: Array


def merwe_weights(n: int, alpha: float, beta: float, kappa: float) -> MerweWeights:
    """The weights of the 2 n + 1 scaled sigma points (Wan & van der Merwe 2000); alpha in (0, 1], n + lambda > 0."""
    if not (0.0 < alpha <= 1.0):
        raise InputError(f"ukf: alpha must be in (0, 1], got {alpha}")
    lam = alpha ** 2 * (n + kappa) - n
    if not n + lam > 0.0:
        raise InputError(f"ukf: n + lambda = alpha^2 (n + kappa) must be > 0, got {n + lam:g} (n = {n}, alpha = "
                         f"{alpha:g}, kappa = {kappa:g}): raise kappa")
    mean = np.full(2 * n + 1, 0.5 / (n + lam))
    covariance = mean.copy()
    mean[0] = lam / (n + lam)
    covariance[0] = mean[0] + 1.0 - alpha ** 2 + beta
    return MerweWeights(n + lam, mean, covariance)


def sigma_points(x: Array, P: Array, weights: MerweWeights, where: str = "ukf") -> Array:
    """The points (2 n + 1, n): x, then x + the columns of L, then x - them, L L' = (n + lambda) P (Cholesky)."""
    try:
        L = np.linalg.cholesky(weights.scale * P)
    except np.linalg.LinAlgError:
        raise sigma_error(P, where) from None
    return np.vstack([x, x + L.T, x - L.T])


def sigma_error(P: Array, where: str) -> NumericalError:
    """The error of a covariance P (n, n) that is not positive definite (no sigma points)."""
    if not np.all(np.isfinite(P)):
        return NumericalError(f"{where}: the covariance is not finite (the estimate diverged): check Qn, Rn, P0 and "
                              "the plant's inputs")
    return NumericalError(f"{where}: the covariance is not positive definite (smallest eigenvalue "
                          f"{np.linalg.eigvalsh(0.5 * (P + P.T))[0]:.3g}): no sigma points; give P0 > 0 or more "
                          "process noise Qn")


def unscented_transform(Y: Array, weights: MerweWeights, noise: Array) -> tuple[Array, Array]:
    """(mean (k,), covariance (k, k)) of the points Y (2 n + 1, k) with the weights, ``noise`` (k, k) added."""
    mean = weights.mean @ Y
    D = Y - mean
    return mean, (D.T * weights.covariance) @ D + noise


def unscented_update(x: Array, P: Array, X: Array, Y: Array, y: Array, R: Array, weights: MerweWeights,
                     where: str = "ukf") -> tuple[Array, Array]:
    """(x, P) after the measurement y (p,): X (2 n + 1, n) the points of (x, P), Y (2 n + 1, p) their predicted
    measurements, R (p, p) the measurement noise (Särkkä 2013, algorithm 5.14, update)."""
    mu, S = unscented_transform(Y, weights, R)
    cross = ((X - x).T * weights.covariance) @ (Y - mu)
    K = _gain(cross, S, where)
    return x + K @ (y - mu), P - K @ S @ K.T
