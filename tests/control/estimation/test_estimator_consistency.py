"""Consistency of the EKF on the pendulum (Bar-Shalom, Li & Kirubarajan, *Estimation with Applications to Tracking
and Navigation*, 2001, section 5.4: the normalized estimation error squared, NEES): over seeded runs whose truth
is the filter's own model — RK4 over T plus process noise of covariance Qd, angle samples with noise of variance Rn —
the error e = x - x_{k|k} stays within its covariance: e' P^-1 e <= 9 (3 standard deviations; chi-square with 2
degrees of freedom: 98.9 % for a Gaussian error) at >= 95 % of the samples."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg  # noqa: F401 - loaded before the BLAS limit below, which then covers its library

import robodyn
from robodyn.base.blas import one_blas_thread
from robodyn.control.estimation.blocks import ekf
from robodyn.control.estimation.discretization import noise_discretization, rk4_points
from robodyn.control.optimal.batch.points import ModelPoints
from robodyn.signals.noise import standard_normals

T, STEPS = 0.01, 60
QC = np.diag([0.0, 0.5])
R = 1e-3


def _nees(seed: int, pendulum, block, points) -> np.ndarray:
    p = pendulum.parameter_vector()
    k = np.arange(STEPS)
    normals = np.vstack([standard_normals(4 * seed + j, k) for j in range(4)])  # four independent streams
    x = np.sqrt(0.3) * normals[:2, 0]  # the truth drawn from the filter's prior N(0, P0)
    z = np.zeros(block.n_states)
    found = []
    for step in range(STEPS):
        u = np.array([0.3 * np.sin(step * T * 3.0)])
        v = np.array([x[0] + np.sqrt(R) * normals[2, step], u[0]])
        out = block.h_raw(step * T, z, v, [])
        # P_k|k is diagonal-only in the outputs: rebuild it from the block's own update for the full NEES
        e = x - out[:2]
        full = _posterior_covariance(block, step * T, z, v)
        found.append(e @ np.linalg.solve(full, e))
        z = block.f_raw(step * T, z, v, [])
        Qd = noise_discretization(np.asarray(pendulum.jacobians_raw(0.0, x, u, p)[0]), QC, T)[1]
        w = np.linalg.cholesky(Qd + 1e-18 * np.eye(2)) @ np.array([normals[3, step], normals[0, (step + 7) % STEPS]])
        x = rk4_points(points, step * T, x, u, T)[0] + w
    return np.array(found)


def _posterior_covariance(block, t, z, v) -> np.ndarray:
    """P_k|k: the prior's covariance from the state, updated with the measurement's Jacobian (theta: H = [1, 0])."""
    P = np.diag([0.3, 0.3])
    upper = np.triu_indices(2)
    P[upper] += z[2:]
    P.T[upper] = P[upper]
    H = np.array([[1.0, 0.0]])
    K = P @ H.T / (H @ P @ H.T + R)
    I_KH = np.eye(2) - K @ H
    return I_KH @ P @ I_KH.T + R * K @ K.T


@pytest.mark.parametrize("runs", [pytest.param(100, marks=pytest.mark.slow), 15])
def test_the_ekf_is_consistent_over_seeded_runs(runs) -> None:
    pendulum = robodyn.load("pendulum")
    block = ekf(pendulum, T, Qn=QC, Rn=R, outputs=["theta"], x0=[0.0, 0.0], P0=np.diag([0.3, 0.3]))
    points = ModelPoints(pendulum, pendulum.parameter_vector())
    with one_blas_thread():  # the truth's small factorizations (the block limits its own)
        nees = np.concatenate([_nees(seed, pendulum, block, points) for seed in range(runs)])
    assert np.mean(nees <= 9.0) >= 0.95
    # the mean NEES of a consistent filter is the number of states, 2; its mean over the runs' samples is within
    # a loose factor (the samples of one run are correlated, the EKF linearizes)
    assert 1.0 < np.mean(nees) < 3.0
