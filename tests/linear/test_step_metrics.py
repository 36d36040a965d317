"""Step-response metrics read off the exact response (robodyn.linear.step_metrics through step_info), against the
closed forms of second-order systems and python-control's step_info on a fine grid.

Second order, G = w^2 / (s^2 + 2 zeta w s + w^2), wd = w sqrt(1 - zeta^2), phi = acos(zeta):
y(t) = 1 - exp(-zeta w t) sin(wd t + phi) / sqrt(1 - zeta^2); overshoot 100 exp(-zeta pi / sqrt(1 - zeta^2)) at
the peak time pi / wd; the rise time (10 to 90 %) by root finding on y. The metrics are roots found by Brent's method
to ~4 eps on a response accurate to a few eps: 1e-9 relative leaves room for the conditioning of the rise-time roots
(y' is small near t = 0 for the 10 % crossing of an underdamped system).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn import LinearSystem
from robodyn.linear.lti import step_info

control = pytest.importorskip("control")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")


def second_order(zeta: float, w: float) -> LinearSystem:
    return LinearSystem([[0.0, 1.0], [-w * w, -2 * zeta * w]], [[0.0], [w * w]], [[1.0, 0.0]], name="second_order")


def closed_form(zeta: float, w: float) -> dict[str, float]:
    wd, phi = w * math.sqrt(1 - zeta**2), math.acos(zeta)

    def y(t: float) -> float:
        return 1.0 - math.exp(-zeta * w * t) * math.sin(wd * t + phi) / math.sqrt(1 - zeta**2)

    peak_time = math.pi / wd
    t10 = scipy.optimize.brentq(lambda t: y(t) - 0.1, 0.0, peak_time, xtol=1e-300, rtol=1e-15)
    t90 = scipy.optimize.brentq(lambda t: y(t) - 0.9, 0.0, peak_time, xtol=1e-300, rtol=1e-15)
    return {"overshoot": 100.0 * math.exp(-zeta * math.pi / math.sqrt(1 - zeta**2)), "peak_time": peak_time,
            "rise_time": t90 - t10, "peak": y(peak_time)}


@pytest.mark.parametrize(("zeta", "w"), [(0.5, 10.0), (0.1, 3.0), (0.9, 1.0), (0.7071, 0.2)])
def test_second_order_metrics_equal_the_closed_forms(zeta: float, w: float) -> None:
    metrics = step_info(second_order(zeta, w)).pair("y1", "u1")
    for field, value in closed_form(zeta, w).items():
        assert metrics[field] == pytest.approx(value, rel=1e-9), field


@settings(max_examples=40)
@given(st.floats(0.05, 0.95), st.floats(0.1, 100.0))
def test_second_order_metrics_equal_the_closed_forms_everywhere(zeta: float, w: float) -> None:
    metrics = step_info(second_order(zeta, w)).pair("y1", "u1")
    for field, value in closed_form(zeta, w).items():
        assert metrics[field] == pytest.approx(value, rel=1e-9), field


def test_the_joints_overshoot_is_the_exact_one_not_the_samples() -> None:
    # the numbers: 16.3021 % read off the default grid's samples, 16.3034 % exactly (zeta = 0.5)
    joint = LinearSystem([[0.0, 1.0], [-100.0, -10.0]], [[0.0], [100.0]], [[1.0, 0.0]])
    info = step_info(joint)
    sampled = control.step_info(joint.to_control(), T=info.times)["Overshoot"]
    assert f"{sampled:.6g}" == "16.3021"
    assert info.pair("y1", "u1")["overshoot"] == pytest.approx(100 * math.exp(-math.pi / math.sqrt(3)), rel=1e-12)


@pytest.mark.parametrize(("zeta", "w"), [(0.5, 10.0), (0.2, 1.0)])
def test_the_settling_time_is_the_last_exit_from_the_band(zeta: float, w: float) -> None:
    settle = step_info(second_order(zeta, w)).pair("y1", "u1")["settling_time"]
    wd, phi = w * math.sqrt(1 - zeta**2), math.acos(zeta)

    def error(t: np.ndarray) -> np.ndarray:
        return np.abs(np.exp(-zeta * w * t) * np.sin(wd * t + phi) / math.sqrt(1 - zeta**2))

    assert float(error(np.array(settle))) == pytest.approx(0.02, rel=1e-9)  # on the band's edge
    after = np.linspace(settle, settle + 20.0 / (zeta * w), 200001)[1:]
    assert np.all(error(after) < 0.02)  # inside from then on (the envelope decays)
    before = np.linspace(settle - math.pi / wd, settle, 20001)[:-1]
    assert np.any(error(before) > 0.02)  # outside within the half period before


def test_a_non_minimum_phase_system_is_near_control_on_a_fine_grid() -> None:
    # G = 2 (1 - s) / ((s + 1) (s + 2)): undershoot first; python-control on a grid of step h is within h of the
    # exact times and within h max|y'| of its extrema
    system = LinearSystem.from_control(control.ss(control.tf([-2.0, 2.0], [1.0, 3.0, 2.0])))
    ours = step_info(system).pair(system.outputs[0], system.inputs[0])
    T = np.linspace(0.0, 10.0, 200001)
    h = float(T[1])
    theirs = control.step_info(system.to_control(), T=T)
    slope = float(np.max(np.abs(np.diff(control.step_response(system.to_control(), T=T).outputs)))) / h
    assert ours["undershoot"] > 0.0 and ours["steady_state_value"] == pytest.approx(1.0, rel=1e-12)
    for field, key in (("rise_time", "RiseTime"), ("settling_time", "SettlingTime"), ("peak_time", "PeakTime")):
        assert abs(ours[field] - theirs[key]) <= 2 * h, field
    for field, key in (("undershoot", "Undershoot"), ("overshoot", "Overshoot")):
        assert abs(ours[field] - theirs[key]) <= 100 * h * slope + 1e-12, field
    assert ours["peak"] >= theirs["Peak"] - 1e-15
