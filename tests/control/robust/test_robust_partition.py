"""Tests for robodyn.control.robust.partition: the normalization keeps the closed loops (what a controller of the
normalized plant does, the recovered controller does on the original, with D22 shifted back), and close_loop is
python-control's lower LFT.

Tolerances: 1e-10 relative to the largest response entry (a few products and one inverse of well-conditioned
random matrices: measured 1e-14).
"""

from __future__ import annotations

import numpy as np
import pytest

from robodyn import LinearSystem
from robodyn.control.robust.partition import close_loop, controller, normalize, partition, recover

control = pytest.importorskip("control")

from tests.control.robust.robust_cases import frequency_response, random_plant  # noqa: E402


def random_controller(seed: int, nk: int, m2: int, p2: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(nk, nk)) - 3 * np.eye(nk), rng.normal(size=(nk, p2)), rng.normal(size=(m2, nk)),
            0.1 * rng.normal(size=(m2, p2)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_normalization_keeps_the_closed_loop(seed: int) -> None:
    """Any controller K~ of the normalized plant, recovered for the original (scalings undone, D22 shifted back),
    gives the original plant the loop Theta^T T~ Phi: the same singular values at every frequency."""
    P = random_plant(seed, d11=True, d22=True)
    plant = partition(P, 2, 2, "test")
    normalized = normalize(plant, "test")
    scaled = normalized.plant
    assert np.allclose(scaled.D12, np.vstack([np.zeros((1, 2)), np.eye(2)]))
    assert np.allclose(scaled.D21, np.hstack([np.zeros((2, 1)), np.eye(2)]))
    matrices = random_controller(seed, 3, 2, 2)
    K_scaled = controller(plant, *matrices, name="K")
    K = controller(plant, *recover(normalized, *matrices), name="K")
    w = np.logspace(-2, 2, 9)
    loop_scaled = frequency_response(close_loop(scaled, K_scaled, "scaled"), w)
    loop = frequency_response(close_loop(plant, K, "original"), w)
    singular = np.linalg.svd(loop, compute_uv=False)
    singular_scaled = np.linalg.svd(loop_scaled, compute_uv=False)
    assert np.abs(singular - singular_scaled).max() <= 1e-10 * singular.max()


def test_close_loop_is_the_lower_lft() -> None:
    P = random_plant(3, d11=True, d22=True)
    plant = partition(P, 2, 2, "test")
    K = controller(plant, *random_controller(3, 2, 2, 2), name="K")
    loop = close_loop(plant, K, "loop")
    assert loop.inputs == P.inputs[:3] and loop.outputs == P.outputs[:3]
    assert loop.states == (*P.states, "K.xk1", "K.xk2")
    reference = control.ss(P.A, P.B, P.C, P.D).lft(control.ss(K.A, K.B, K.C, K.D), 2, 2)
    w = np.logspace(-2, 2, 9)
    expected = np.array([reference(1j * x) for x in w]).reshape(len(w), 3, 3)
    assert np.abs(frequency_response(loop, w) - expected).max() <= 1e-10 * np.abs(expected).max()


def test_a_static_controller_gets_one_silent_state() -> None:
    P = random_plant(4, d11=False, d22=False)
    plant = partition(P, 2, 2, "test")
    K = controller(plant, np.zeros((0, 0)), np.zeros((0, 2)), np.zeros((2, 0)), np.eye(2), name="K")
    assert isinstance(K, LinearSystem) and K.A.shape == (1, 1) and not np.any(K.B) and not np.any(K.C)
    assert np.array_equal(K.D, np.eye(2))
