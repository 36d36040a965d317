"""Tests for robodyn.control.robust.mixsyn: augw against python-control's augw, mixsyn against python-control's
mixsyn (Slycot's sb10ad) and Skogestad & Postlethwaite's published levels, and the refusals.

Tolerances: augw's frequency responses 1e-10 relative (the same sums in another order: measured 1e-13). Levels:
as in test_robust_hinf (the optimal levels agree to 1e-5, the controller's level to 1e-4); the published levels are
given to 3 digits.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from robodyn import InputError, LinearSystem, ShapeError
from robodyn.control.robust.mixsyn import augw, mixsyn
from robodyn.linear.norms import hinfnorm

control = pytest.importorskip("control")
pytest.importorskip("slycot")

from tests.control.robust.robust_cases import (  # noqa: E402 - after the importorskip
    as_linear,
    frequency_response,
    mimo_plant,
    siso_plant,
    weight,
)
from tests.linear.linear_cases import joint  # noqa: E402


def control_response(sys: object, w: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    return np.array([sys(1j * x) for x in w]).reshape(len(w), *shape)


def diagonal(*weights: object) -> LinearSystem:
    """A diagonal weight from SISO python-control weights."""
    parts = [control.ss(w) for w in weights]
    return LinearSystem(scipy.linalg.block_diag(*[p.A for p in parts]), scipy.linalg.block_diag(*[p.B for p in parts]),
                        scipy.linalg.block_diag(*[p.C for p in parts]), scipy.linalg.block_diag(*[p.D for p in parts]))


def test_augw_equals_python_control() -> None:
    G, W1, W3 = siso_plant(), weight(10.0), control.tf([1, 0.5], [0.01, 1])
    ours = augw(as_linear(G), as_linear(W1), 0.1, as_linear(W3))
    theirs = control.augw(control.ss(G), control.ss(W1), control.ss(control.tf(0.1, 1)), control.ss(W3))
    w = np.logspace(-3, 3, 19)
    expected = control_response(theirs, w, ours.D.shape)
    assert np.abs(frequency_response(ours, w) - expected).max() <= 1e-10 * np.abs(expected).max()
    assert ours.inputs == ("r1", "u1") and ours.outputs == ("z1_1", "z2_1", "z3_1", "e1")
    mimo = augw(as_linear(mimo_plant()), diagonal(weight(0.25), weight(25.0)), 1.0)  # W1 2 x 2, W2 a number
    reference = control.augw(control.ss(mimo_plant()), control.ss(diagonal(weight(0.25), weight(25.0)).A,
                             diagonal(weight(0.25), weight(25.0)).B, diagonal(weight(0.25), weight(25.0)).C,
                             diagonal(weight(0.25), weight(25.0)).D), control.ss([], [], [], np.eye(2)))
    expected = control_response(reference, w, mimo.D.shape)
    assert np.abs(frequency_response(mimo, w) - expected).max() <= 1e-10 * np.abs(expected).max()


def check_mixsyn(G: object, W1: object, W2: object, ours: tuple[object, object]) -> float:
    """mixsyn against python-control's on the same weights; returns the level."""
    result = mixsyn(as_linear(G), *ours)
    _, _, (gamma, _) = control.mixsyn(control.ss(G), W1, W2)
    assert result.gamma_optimal == pytest.approx(gamma, rel=1e-5)
    assert result.gamma == pytest.approx(gamma, rel=1e-4)
    assert hinfnorm(result.closed_loop) <= result.gamma * (1 + 1e-6)
    assert np.all(np.linalg.eigvals(result.closed_loop.A).real < 0.0)
    return result.gamma


def test_skogestad_siso_designs() -> None:
    """Example 2.11 (python-control's robust_siso.py): W1 on S with W2 = 1 on K S."""
    W1 = weight(10.0)
    check_mixsyn(siso_plant(), control.ss(W1), control.ss(control.tf(1.0, 1.0)), (as_linear(W1), 1.0))


@pytest.mark.parametrize(("wb1", "wb2", "published"), [(0.25, 0.25, 2.80),
                                                       pytest.param(0.25, 25.0, 2.92, marks=pytest.mark.slow),
                                                       pytest.param(25.0, 0.25, 6.73, marks=pytest.mark.slow)])
def test_skogestad_mimo_designs(wb1: float, wb2: float, published: float) -> None:
    """Example 3.8 (python-control's robust_mimo.py): the 2 x 2 plant with a zero at s = 0.5; the levels Skogestad &
    Postlethwaite publish, 2.80, 2.92 and 6.73 (to 0.01: 6.7229 here and in python-control; slow: sb10ad takes
    10 s and more on the second and third)."""
    W1 = diagonal(weight(wb1), weight(wb2))
    reference_W1 = control.ss(W1.A, W1.B, W1.C, W1.D)
    gamma = check_mixsyn(mimo_plant(), reference_W1, control.ss([], [], [], np.eye(2)), (W1, 1.0))
    assert gamma == pytest.approx(published, abs=0.01)


def test_the_joint() -> None:
    """The catalog joint (angle measured): W1 on S, W2 on K S."""
    linear = joint()
    G = LinearSystem(linear.A, linear.B, linear.C[:1], linear.D[:1], inputs=linear.inputs, outputs=["q"])
    W1 = weight(5.0, m=2.0, a=1e-3)
    result = mixsyn(G, as_linear(W1), 0.01)
    _, _, (gamma, _) = control.mixsyn(control.ss(G.A, G.B, G.C, G.D), control.ss(W1), control.ss(control.tf(0.01, 1)))
    assert result.gamma_optimal == pytest.approx(gamma, rel=1e-5)
    assert result.K.inputs == ("e1",) and result.K.outputs == ("u",)


def test_refusals_are_named() -> None:
    G = as_linear(siso_plant())
    with pytest.raises(InputError, match="at least one weight"):
        mixsyn(G)
    with pytest.raises(InputError, match="D12 must have full column rank"):
        mixsyn(G, as_linear(weight(10.0)))  # u is not penalized: W2 missing
    with pytest.raises(ShapeError, match="W1 has 2 inputs, expected 1"):
        mixsyn(G, diagonal(weight(1.0), weight(2.0)), 1.0)
    with pytest.raises(InputError, match="W2 must be None, a number or a LinearSystem"):
        mixsyn(G, as_linear(weight(10.0)), "one")
