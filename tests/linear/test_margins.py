"""Margins of a loop from its exact crossings (robodyn.linear.margins, robodyn.linear.crossings), against closed
forms, python-control where its polynomial crossings are real ones, and high-precision (mpmath, 40 digits) roots.

python-control's artefacts, which these must not repeat: a gain margin of 2.8e15 (309 dB) at 5.3e8 rad/s for the
joint 100 / (s^2 + 10 s + 100), whose phase only approaches -180 deg; a phase crossover of 1.7e8 rad/s for the
LQR-stabilized arm. Tolerances: crossings are roots found by Brent's method to ~4 eps on a response evaluated in
double precision, so margins and frequencies agree with exact references to 1e-10 relative (a few hundred eps);
python-control's own roots (of polynomials of degree 2n) are good to about 1e-9 on these loops; the frequency of a
minimum (the stability margin's) is determined only to about sqrt(eps) (the value, to eps).
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest

import robodyn
from robodyn import LinearSystem, NumericalError
from robodyn.linear.margins import margins

control = pytest.importorskip("control")
mpmath = pytest.importorskip("mpmath")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning", "ignore::FutureWarning")

from tests.linear.linear_cases import DT, arm, joint, pendulum  # noqa: E402 - after the importorskip


def third_order(k: float) -> LinearSystem:
    """L(s) = k / (s (s + 1) (s + 2)) in companion form."""
    return LinearSystem([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, -2.0, -3.0]], [[0.0], [0.0], [1.0]], [[k, 0.0, 0.0]],
                        name="third_order")


def test_a_third_order_loop_against_its_closed_forms() -> None:
    k = 1.5
    result = third_order(k).margins()
    # phase -90 - atan(w) - atan(w / 2) = -180 at w^2 / 2 = 1: w = sqrt(2), |L| = k / 6 there
    assert result.phase_crossover == pytest.approx(math.sqrt(2.0), rel=1e-12)
    assert result.gain_margin == pytest.approx(6.0 / k, rel=1e-12)
    assert result.gain_margin_db == pytest.approx(20 * math.log10(6.0 / k), rel=1e-12)
    # |L| = 1: k^2 = v (v + 1) (v + 4), v = w^2, the real positive root of the cubic
    v = max(r.real for r in np.roots([1.0, 5.0, 4.0, -k * k]) if abs(r.imag) < 1e-12)
    w = math.sqrt(v)
    assert result.gain_crossover == pytest.approx(w, rel=1e-12)
    assert result.phase_margin == pytest.approx(90.0 - math.degrees(math.atan(w) + math.atan(w / 2)), rel=1e-11)
    theirs = control.stability_margins(third_order(k).to_control())
    np.testing.assert_allclose(result.as_control()[:5], theirs[:5], rtol=1e-9)
    assert result.stability_margin_frequency == pytest.approx(theirs[5], rel=1e-6)  # a minimum's location


def test_the_joint_has_no_phase_crossover_and_its_gain_margin_is_infinite() -> None:
    loop = LinearSystem(joint().A, joint().B, [[1.0, 0.0]], name="joint_loop")  # 100 / (s^2 + 10 s + 100)
    theirs = control.stability_margins(loop.to_control())
    # python-control's artefact without Slycot (its transfer function from scipy): a crossing from rounding; with
    # Slycot (tb04ad) none, as ours
    assert (theirs[0] > 1e15 and theirs[3] > 1e8) or (theirs[0] == math.inf and math.isnan(theirs[3]))
    ours = loop.margins()
    assert ours.gain_margin == math.inf and math.isnan(ours.phase_crossover)
    assert ours.crossings["phase_crossovers"].size == 0
    assert ours.phase_margin == pytest.approx(90.0, rel=1e-12) and ours.gain_crossover == pytest.approx(10.0, rel=1e-12)
    assert ours.stability_margin == pytest.approx(theirs[2], rel=1e-12)
    data = json.loads(json.dumps(ours.to_dict(), allow_nan=False))
    assert data["gain_margin"] is None and "no phase crossover" in data["null_reasons"]["gain_margin"]
    assert "gain margin infinite" in data["text"] and "309" not in data["text"] and "dB" not in data["text"]
    assert not any("rounding" in note for note in ours.notes)


def test_the_stabilized_arm_has_no_crossover_from_rounding() -> None:
    plant = arm()
    K = robodyn.lqr(plant, np.eye(4), np.eye(2)).K
    closed = LinearSystem(plant.A - plant.B @ K, plant.B, plant.C, plant.D, states=plant.states, inputs=plant.inputs,
                          outputs=plant.outputs)
    theirs = control.stability_margins(control.ss(closed.A, closed.B[:, [1]], closed.C[[1]], closed.D[[1]][:, [1]]))
    assert theirs[0] > 1e15  # python-control's artefact again
    ours = closed.margins(output="elbow", input="elbow_tau")
    assert ours.gain_margin == math.inf and ours.phase_margin == math.inf
    assert ours.stability_margin == pytest.approx(theirs[2], rel=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_random_stable_loops_equal_control_where_its_crossings_are_real(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    poles = -rng.uniform(0.2, 5.0, n)
    A = np.diag(poles) + np.diag(rng.uniform(0.5, 2.0, n - 1), 1)
    loop = LinearSystem(A, rng.normal(size=(n, 1)), 20.0 * rng.normal(size=(1, n)))
    ours = loop.margins()
    gm, pm, wpc, wgc = (control.stability_margins(loop.to_control(), returnall=True)[k] for k in (0, 1, 3, 4))
    real = gm < 1e8  # python-control's gain margins above 1e8 come from |L| at rounding level
    np.testing.assert_allclose(np.sort(ours.crossings["phase_crossovers"]), np.sort(wpc[real]), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(np.sort(ours.crossings["gain_margins"]), np.sort(gm[real]), rtol=1e-8)
    valid = np.abs(np.abs(loop.frequency_response(wgc)[:, 0, 0]) - 1.0) < 1e-6 if wgc.size else np.zeros(0, bool)
    np.testing.assert_allclose(np.sort(ours.crossings["gain_crossovers"]), np.sort(wgc[valid]), rtol=1e-8)
    np.testing.assert_allclose(np.sort(ours.crossings["phase_margins"]), np.sort(pm[valid]), rtol=1e-8, atol=1e-9)
    for w in ours.crossings["phase_crossovers"]:  # the definitions, at the exact response
        at_zero = complex((-loop.C @ np.linalg.solve(loop.A, loop.B)).item())
        value = loop.frequency_response([w])[0, 0, 0] if w > 0 else at_zero
        assert abs(value.imag) <= 1e-12 * abs(value) and value.real <= 0.0


def test_a_sampled_loop_equals_its_high_precision_roots() -> None:
    sampled = LinearSystem(joint().A, joint().B, [[1.0, 0.0]]).discretize(DT)
    ours = sampled.margins()
    mpmath.mp.dps = 40
    A, B, C = (mpmath.matrix(m.tolist()) for m in (sampled.A, sampled.B, sampled.C))

    def L(w: object) -> object:
        z = mpmath.exp(1j * w * DT)
        return (C * mpmath.lu_solve(z * mpmath.eye(2) - A, B))[0]

    w180 = mpmath.findroot(lambda w: L(w).imag, ours.phase_crossover)
    wc = mpmath.findroot(lambda w: abs(L(w)) - 1, ours.gain_crossover)
    assert ours.phase_crossover == pytest.approx(float(w180), rel=1e-12)
    assert ours.gain_margin == pytest.approx(float(1 / abs(L(w180))), rel=1e-12)
    assert ours.gain_crossover == pytest.approx(float(wc), rel=1e-12)
    assert ours.phase_margin == pytest.approx(float(mpmath.arg(L(wc)) * 180 / mpmath.pi + 180), rel=1e-12)
    theirs = control.stability_margins(sampled.to_control())
    np.testing.assert_allclose(ours.as_control()[:5], theirs[:5], rtol=1e-8)  # python-control's: ~1e-9 off


def test_an_lqr_loop_keeps_its_return_difference_above_one() -> None:
    plant = pendulum(math.pi)
    K = robodyn.lqr(plant, np.eye(2), [[1.0]]).K
    loop = LinearSystem(plant.A, plant.B, K, name="lqr_loop")  # L = K (sI - A)^-1 B, broken at the input
    ours = loop.margins()
    theirs = control.stability_margins(loop.to_control())
    np.testing.assert_allclose(ours.as_control()[:2], theirs[:2], rtol=1e-10)
    assert ours.phase_crossover == 0.0 == theirs[3] and ours.phase_margin >= 60.0  # Kalman 1964
    # |1 + L(jw)| >= 1 at every w (the return difference of an LQR loop), approached as w -> inf: the margin is 1
    assert ours.stability_margin == 1.0 and ours.stability_margin_frequency == math.inf
    assert "w -> inf" in ours.reasons["stability_margin_frequency"]


def test_an_undamped_loop_has_no_gain_margin_by_crossings() -> None:
    down = pendulum(0.0)  # L = b / (s^2 + g / l): real at every frequency
    ours = down.margins(output="theta")
    assert math.isnan(ours.gain_margin) and "real at every frequency" in ours.reasons["gain_margin"]
    b, k = down.B[1, 0], -down.A[1, 0]
    # L(jw) = -1 where w^2 = k + b: the closed loop sits on the imaginary axis there
    assert ours.stability_margin == pytest.approx(0.0, abs=1e-12)
    assert ours.stability_margin_frequency == pytest.approx(math.sqrt(k + b), rel=1e-7)
    assert ours.phase_margin == pytest.approx(0.0, abs=1e-9)
    assert "not defined" in ours.text()


def test_margins_need_one_loop_but_not_python_control(monkeypatch: pytest.MonkeyPatch) -> None:
    from robodyn import InputError, UnknownNameError

    with pytest.raises(InputError, match=r"has 2 outputs \(q, q_dot\): pick one with output=..."):
        margins(joint())
    with pytest.raises(UnknownNameError, match=r"unknown output 'x'"):
        margins(joint(), output="x")
    expected = third_order(1.5).margins().as_control()
    monkeypatch.setitem(sys.modules, "control", None)
    assert third_order(1.5).margins().as_control() == expected


def test_a_sampled_loop_with_a_pole_at_the_nyquist_frequency_is_refused() -> None:
    with pytest.raises(NumericalError, match=r"pole at z = -1"):
        LinearSystem([[-1.0]], [[1.0]], [[1.0]], dt=0.1).margins()


def test_a_sampled_diagram_loop_with_an_integrator_finds_its_crossover() -> None:
    # the arm's motor loops sampled every ms: the realization has an integrator and states of scales 1e-4 .. 1e8;
    # its crossover at 9.5 rad/s is found (balanced as TB01ID) and checked by the definitions and python-control
    from pathlib import Path

    model = robodyn.load(Path(__file__).parents[2] / "examples" / "arm_motors_pd.yaml")
    point = robodyn.find_equilibrium(model, fix={name: 0.0 for name in model.inputs})[0]
    L = robodyn.linearize(model, point.x, point.u, open="ctrl.v1")
    ours = L.margins()
    z = np.exp(1j * ours.gain_crossover * L.dt)
    value = (L.C @ np.linalg.solve(z * np.eye(L.A.shape[0]) - L.A, L.B) + L.D).item()
    assert abs(abs(value) - 1.0) < 1e-10 and ours.phase_margin == pytest.approx(np.degrees(np.angle(value)) + 180.0)
    theirs = control.stability_margins(control.ss(L.A, L.B, L.C, L.D, L.dt))
    np.testing.assert_allclose(ours.as_control()[:5], theirs[:5], rtol=1e-6)  # python-control's z-polynomials
    # the smallest |1 + L| is reached where we say, and python-control's (at a frequency 1e-7 off) is not below it
    # (with Slycot installed, python-control's polynomials from tb04ad put it 1.5e-8 below: 1e-7)
    z = np.exp(1j * ours.stability_margin_frequency * L.dt)
    closed = abs(1.0 + (L.C @ np.linalg.solve(z * np.eye(L.A.shape[0]) - L.A, L.B) + L.D).item())
    assert ours.stability_margin == pytest.approx(closed, rel=1e-12) and ours.stability_margin <= theirs[2] * (1 + 1e-7)
