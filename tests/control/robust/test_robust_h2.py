"""Tests for robodyn.control.robust.h2: h2syn against python-control's h2syn (Slycot's sb10hd). The H2 optimum is
unique, so the controllers must be the same transfer function: compared by their frequency responses (the
realizations differ by a state transformation).

Tolerance: 1e-8 relative to the largest response entry (measured 1e-13 .. 2e-13: both solve the same two Riccati
equations, by different algorithms); the closed loop's H2 norm equals that of python-control's lft of Slycot's
controller to 1e-8 (the same loop).
"""

from __future__ import annotations

import numpy as np
import pytest

from robodyn import InputError, LinearSystem
from robodyn.control.robust.h2 import h2syn
from robodyn.linear.norms import h2norm

control = pytest.importorskip("control")
pytest.importorskip("slycot")

from tests.control.robust.robust_cases import arm_plant, frequency_response, random_plant  # noqa: E402


def to_control(sys: LinearSystem) -> object:
    return control.ss(sys.A, sys.B, sys.C, sys.D)


def check_against_slycot(P: LinearSystem, nmeas: int, ncon: int) -> None:
    result = h2syn(P, nmeas, ncon)
    K = control.h2syn(to_control(P), nmeas, ncon)
    w = np.logspace(-3, 3, 25)
    expected = np.array([K(1j * x) for x in w]).reshape(len(w), ncon, nmeas)
    actual = frequency_response(result.K, w)
    assert np.abs(actual - expected).max() <= 1e-8 * np.abs(expected).max()
    assert result.K.inputs == P.outputs[-nmeas:] and result.K.outputs == P.inputs[-ncon:]
    loop = to_control(P).lft(K, ncon, nmeas)
    reference = float(control.system_norm(loop, 2, print_warning=False))
    assert result.norm == pytest.approx(reference, rel=1e-8)
    assert h2norm(result.closed_loop) == result.norm
    assert np.all(np.linalg.eigvals(result.closed_loop.A).real < 0.0)


def test_the_arm_plant() -> None:
    check_against_slycot(arm_plant(), 2, 2)
    result = h2syn(arm_plant(), 2, 2)
    assert f"{result.norm:.6g}" in result._repr_html_() and "m1, m2 -&gt; tau1, tau2" in result._repr_html_()


@pytest.mark.parametrize(("seed", "d22"), [(0, False), (1, True), (2, False), (3, True)])
def test_random_plants(seed: int, d22: bool) -> None:
    """D12, D21 general (scaled by the normalization), D22 shifted back."""
    check_against_slycot(random_plant(seed, d11=False, d22=d22, sizes=(4, 3, 1, 3, 2)), 2, 1)


def test_the_optimum_is_below_other_stabilizing_controllers() -> None:
    """The H2 norm of the optimal loop is at most that of the H-infinity controller's loop on the same plant."""
    from robodyn.control.robust.hinf import hinfsyn

    P = arm_plant()
    assert h2syn(P, 2, 2).norm <= h2norm(hinfsyn(P, 2, 2).closed_loop)


def test_refusals_are_named() -> None:
    P = random_plant(0, d11=True, d22=False)
    with pytest.raises(InputError, match=r"D11 .* must be zero"):
        h2syn(P, 2, 2)
    arm = arm_plant()
    blind = LinearSystem(arm.A, arm.B, np.vstack([arm.C[:6], np.zeros((2, 4))]), arm.D)
    with pytest.raises(InputError, match=r"\(A, C2\) is not detectable"):
        h2syn(blind, 2, 2)
