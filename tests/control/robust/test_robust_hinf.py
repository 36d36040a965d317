"""Tests for robodyn.control.robust.hinf: hinfsyn against python-control's hinfsyn (Slycot's sb10ad) on textbook
plants, a generalized plant of the arm and random plants with every D block, its closed loop against
python-control's lft, and in a diagram.

Tolerances: sb10ad and hinfsyn both bisect gamma (sb10ad to ~sqrt(eps), hinfsyn to gamma_tol = 1e-6 by default),
so their optimal levels agree to 1e-5 relative (measured: 2e-7 .. 1e-6); the controller's level ``gamma`` sits
above the bracket when the central controller there is too ill-conditioned (measured: at most 1e-5 above sb10ad's
level), within the issue's bound 1e-4. The closed loop's norm is at most gamma (1 + 1e-6), hinfsyn's own check:
near the optimum the controller's gains reach 1e8 and the computed norm carries their rounding.
"""

from __future__ import annotations

import numpy as np
import pytest

import robodyn
from robodyn import ConvergenceError, InputError, LinearSystem, ShapeError
from robodyn.control.robust.hinf import hinfsyn
from robodyn.linear.norms import hinfnorm

control = pytest.importorskip("control")
pytest.importorskip("slycot")

from tests.control.robust.robust_cases import (  # noqa: E402 - after the importorskip
    arm_plant,
    as_linear,
    frequency_response,
    random_plant,
    siso_plant,
    weight,
)


def to_control(sys: LinearSystem) -> object:
    return control.ss(sys.A, sys.B, sys.C, sys.D)


def check_against_slycot(P: LinearSystem, nmeas: int, ncon: int) -> None:
    result = hinfsyn(P, nmeas, ncon)
    _, CL, gamma, _ = control.hinfsyn(to_control(P), nmeas, ncon)
    assert result.gamma_lower <= result.gamma_optimal <= result.gamma
    assert result.gamma_optimal == pytest.approx(gamma, rel=1e-5)
    assert result.gamma == pytest.approx(gamma, rel=1e-4)
    assert np.all(np.linalg.eigvals(result.closed_loop.A).real < 0.0)
    norm = hinfnorm(result.closed_loop)
    assert norm <= result.gamma * (1 + 1e-6)
    # ab13dd on the same loop, whose controller gains reach 1e8: agrees with hinfnorm to 3e-6 (measured)
    assert float(control.linfnorm(to_control(result.closed_loop), tol=1e-12)[0]) <= result.gamma * (1 + 1e-5)
    assert norm <= float(control.linfnorm(CL)[0]) * (1 + 1e-6)  # no worse than Slycot's controller
    # the closed loop is python-control's lower LFT of the plant and the controller
    w = np.logspace(-3, 3, 13)
    reference = to_control(P).lft(to_control(result.K), ncon, nmeas)
    expected = np.array([reference(1j * x) for x in w]).reshape(len(w), *result.closed_loop.D.shape)
    actual = frequency_response(result.closed_loop, w)
    assert np.abs(actual - expected).max() <= 1e-7 * np.abs(expected).max()  # controller gains ~1e9: 1e-7


def test_skogestad_siso_with_a_weight_on_t() -> None:
    """Example 2.11's plant and W1 (its S / K S design is test_robust_mixsyn's), W2 = 0.1 and a weight on T."""
    W3 = control.ss(control.tf([1, 0.5], [0.01, 1]))  # feedthrough 100: D11 != 0 through z3
    P = control.augw(control.ss(siso_plant()), control.ss(weight(10.0)), control.ss(control.tf(0.1, 1.0)), W3)
    check_against_slycot(as_linear(P), 1, 1)


def test_the_arm_plant() -> None:
    check_against_slycot(arm_plant(), 2, 2)
    result = hinfsyn(arm_plant(), 2, 2)
    assert f"gamma = {result.gamma:.6g}" in result._repr_html_()


@pytest.mark.parametrize(("seed", "d22"), [(2, False), (1, True),
                                           *(pytest.param(seed, d22, marks=pytest.mark.slow) for seed in (0, 3)
                                             for d22 in (False, True))])
def test_random_plants_with_every_d_block(seed: int, d22: bool) -> None:
    """D11 (and D22) nonzero: the general formulas (Glover & Doyle) and the loop shift. Slow: sb10ad takes up to
    30 s on some of these plants (hinfsyn 0.05 s)."""
    check_against_slycot(random_plant(seed, d11=True, d22=d22), 2, 2)


def test_the_controller_in_a_diagram_is_the_closed_loop() -> None:
    """The plant and K as blocks of a diagram, closed by wires: its linearization is ``closed_loop`` (same
    states, P's then K's)."""
    P = arm_plant(rho=1.0, sigma=0.1)
    result = hinfsyn(P, 2, 2)
    disturbances, performance = P.inputs[:4], P.outputs[:6]
    diagram = robodyn.Diagram({"P": P, "K": result.K},
                              ["P.m1 -> K.m1", "P.m2 -> K.m2", "K.tau1 -> P.tau1", "K.tau2 -> P.tau2"],
                              inputs={w: f"P.{w}" for w in disturbances}, outputs={z: f"P.{z}" for z in performance})
    linear = robodyn.linearize(diagram, np.zeros(len(diagram.states)), np.zeros(4))
    expected = result.closed_loop
    for name in "ABCD":
        scale = max(1.0, float(np.abs(getattr(expected, name)).max()))
        assert np.abs(getattr(linear, name) - getattr(expected, name)).max() <= 1e-12 * scale  # the same sums
    poles = np.sort_complex(np.linalg.eigvals(linear.A))
    assert np.allclose(poles, np.sort_complex(np.linalg.eigvals(expected.A)), rtol=1e-9)


def test_refusals_are_named() -> None:
    P = arm_plant()
    with pytest.raises(ShapeError, match="at least one disturbance input"):
        hinfsyn(P, 8, 2)
    with pytest.raises(InputError, match="nmeas must be a whole number"):
        hinfsyn(P, 1.5, 2)
    with pytest.raises(InputError, match="discrete-time"):
        hinfsyn(LinearSystem(P.A * 0.1, P.B, P.C, P.D, dt=0.1), 2, 2)
    no_penalty = LinearSystem(P.A, P.B, P.C, np.where(np.arange(8)[:, None] < 6, 0.0, P.D))
    with pytest.raises(InputError, match="D12 must have full column rank"):
        hinfsyn(no_penalty, 2, 2)
    noiseless = LinearSystem(P.A, P.B, P.C, np.where(np.arange(8)[:, None] >= 6, 0.0, P.D))
    with pytest.raises(InputError, match="D21 must have full row rank"):
        hinfsyn(noiseless, 2, 2)
    blind = LinearSystem(P.A, P.B, np.vstack([P.C[:6], np.zeros((2, 4))]), P.D)
    with pytest.raises(InputError, match=r"\(A, C2\) is not detectable"):
        hinfsyn(blind, 2, 2)
    stuck = LinearSystem(P.A, np.hstack([P.B[:, :4], np.zeros((4, 2))]), P.C, P.D)
    with pytest.raises(InputError, match=r"\(A, B2\) is not stabilizable"):
        hinfsyn(stuck, 2, 2)
    unweighted = LinearSystem(P.A, P.B, np.vstack([np.zeros((6, 4)), P.C[6:]]), P.D)
    with pytest.raises(InputError, match=r"rank \[A - jwI, B2; C1, D12\]"):
        hinfsyn(unweighted, 2, 2)  # the arm's undamped modes are not seen by z
    with pytest.raises(InputError, match=r"gamma_max = 0\.01 is not achievable"):
        hinfsyn(P, 2, 2, gamma_max=0.01)
    with pytest.raises(InputError, match="gamma_tol"):
        hinfsyn(P, 2, 2, gamma_tol=-1.0)
    assert ConvergenceError  # the error for no level up to 1e18 (not reachable with the checks above)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [4, 5])
def test_random_plants_where_slycot_misses_its_level(seed: int) -> None:
    """On these plants sb10ad reports a level (2.26 or 3.14 on seed 4, from run to run) that its own controller
    misses (its loop's norm 3.58): hinfsyn's level is met by its loop, whose norm is below Slycot's loop's."""
    P = random_plant(seed, d11=True, d22=False)
    result = hinfsyn(P, 2, 2)
    _, CL, _, _ = control.hinfsyn(to_control(P), 2, 2)
    norm = hinfnorm(result.closed_loop)
    assert norm <= result.gamma * (1 + 1e-6)
    assert norm <= float(control.linfnorm(CL)[0])
