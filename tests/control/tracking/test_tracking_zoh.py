"""The compiled exponentials of control/tracking/zoh.py against scipy.linalg.expm (Al-Mohy & Higham 2009).

Each branch of the Padé degree choice (1-norms below theta_3, theta_5, theta_7, theta_9 and above theta_13 with
squarings) is taken by scaling random blocks; the ZOH blocks are checked against scipy's exponential of the whole
block matrix [[A, B], [0, 0]] h.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from robodyn.control.tracking.zoh import zoh_models


@pytest.mark.parametrize("norm", [1e-3, 0.2, 0.9, 2.0, 5.0, 40.0])
def test_zoh_models_are_van_loans_blocks(norm: float) -> None:
    """Every Padé degree of the block form (the 1-norm of h [A, B] picks it)."""
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((4, 6, 6)), rng.standard_normal((4, 6, 2))
    h = np.array([0.5, 1.0, 1.5, 2.0])
    scale = norm / np.array([np.abs(np.hstack([A[k], B[k]])).sum(axis=0).max() * h[k] for k in range(4)])
    A, B = A * scale[:, None, None], B * scale[:, None, None]
    Phi, Gamma = zoh_models(A, B, h)
    for k in range(4):
        E = scipy.linalg.expm(h[k] * np.block([[A[k], B[k]], [np.zeros((2, 8))]]))
        # both backward stable to the unit roundoff; the squarings at norm 40 lose a few bits: 1e-12 of the largest
        # entry
        assert np.max(np.abs(Phi[k] - E[:6, :6])) <= 1e-12 * np.abs(E).max()
        assert np.max(np.abs(Gamma[k] - E[:6, 6:])) <= 1e-12 * np.abs(E).max()
