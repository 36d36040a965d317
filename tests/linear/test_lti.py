"""Tests for robodyn.linear.lti and robodyn.linear.controllability: every quantity against python-control.

Systems: (a) the seed joint, (b) the pendulum hanging (undamped: marginally stable), (c) upright (unstable),
(d) the two-link arm hanging at the equilibrium find_equilibrium finds (undamped: marginal), stabilized by an
LQR loop for the step and margins, and the joint sampled every 0.01 s.

Tolerances: "1e-10" is relative to the largest entry of the reference (a few hundred roundings of eps on
these 2- and 4-state systems). Both tools evaluate the same formulas with different roundings; the step
responses differ by ~1e-15 relative, the frequency responses by ~1e-14.
"""

from __future__ import annotations

import functools
import json
import math
import sys

import numpy as np
import pytest

import robodyn
import robodyn.linear.plots
from robodyn import InputError, LinearSystem, NumericalError, ShapeError, UnknownNameError
from robodyn.linear.controllability import controllability, observability
from robodyn.linear.lti import MAX_POINTS, frequency_response, step_grid, step_info

control = pytest.importorskip("control")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning", "ignore::FutureWarning")

from tests.linear.linear_cases import DT, arm, joint, pendulum  # noqa: E402 - after the importorskip


@functools.cache
def arm_lqr() -> LinearSystem:
    """The hanging arm with the LQR loop u = -K x closed (Q = I, R = I): asymptotically stable."""
    plant = arm()
    K = robodyn.lqr(plant, np.eye(4), np.eye(2)).K
    return LinearSystem(plant.A - plant.B @ K, plant.B, plant.C, plant.D, states=plant.states, inputs=plant.inputs,
                        outputs=plant.outputs, name="arm_lqr", declared_units=plant.declared_units)


def systems() -> dict[str, LinearSystem]:
    return {"joint": joint(), "pendulum_down": pendulum(0.0), "pendulum_up": pendulum(math.pi), "arm": arm(),
            "arm_lqr": arm_lqr()}


NAMES = ("joint", "pendulum_down", "pendulum_up", "arm", "arm_lqr")


def close(actual: object, expected: object, rtol: float = 1e-10) -> None:
    """Equal within rtol of the largest finite entry of ``expected``; non-finite entries equal exactly."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, (a.shape, e.shape)
    finite = np.isfinite(e)
    assert np.array_equal(np.isfinite(a), finite), (a, e)
    assert np.array_equal(a[~finite], e[~finite], equal_nan=True), (a, e)
    scale = float(np.max(np.abs(e[finite]), initial=0.0))
    assert float(np.max(np.abs(a[finite] - e[finite]), initial=0.0)) <= rtol * max(scale, 1e-300), (a, e)


def strict_json(data: object) -> object:
    return json.loads(json.dumps(data, allow_nan=False))


# --- discretize -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("method", "theirs"), [("zoh", "zoh"), ("foh", "foh"), ("tustin", "bilinear")])
def test_discretize_equals_control_sample_system(name: str, method: str, theirs: str) -> None:
    system = systems()[name]
    sampled = system.discretize(DT, method)
    reference = control.sample_system(system.to_control(), DT, method=theirs)
    for label in "ABCD":
        close(getattr(sampled, label), getattr(reference, label))
    assert sampled.dt == DT == reference.dt
    assert (sampled.states, sampled.inputs, sampled.outputs, sampled.name) == \
        (system.states, system.inputs, system.outputs, system.name)
    np.testing.assert_array_equal(sampled.x_op, system.x_op)
    np.testing.assert_array_equal(sampled.u_op, system.u_op)
    assert sampled.method == (method if system.method is None else f"{system.method}+{method}")
    assert sampled.units() == system.units()


def test_discretize_refuses_bad_periods_methods_and_discrete_systems() -> None:
    with pytest.raises(InputError, match=r"dt = 0 must be a sample period > 0"):
        joint().discretize(0)
    with pytest.raises(InputError, match=r"dt = nan must be"):
        joint().discretize(math.nan)
    with pytest.raises(InputError, match=r"unknown method 'euler': one of zoh, foh, tustin"):
        joint().discretize(DT, "euler")
    with pytest.raises(InputError, match=r"already discrete-time \(dt = 0.01 s\)"):
        joint().discretize(DT).discretize(DT)
    with pytest.raises(NumericalError, match=r"I - A dt/2 is singular for dt = 0.01"):
        LinearSystem([[200.0]], [[1.0]]).discretize(DT, "tustin")  # the eigenvalue 2 / dt


def test_a_system_without_inputs_discretizes() -> None:
    sampled = LinearSystem(joint().A).discretize(DT)
    close(sampled.A, control.sample_system(control.ss(joint().A, np.zeros((2, 1)), np.eye(2), 0), DT).A)
    assert sampled.B.shape == (2, 0)


# --- modes of a discrete-time system ----------------------------------------------------------------------
def test_discrete_modes_are_the_sampled_continuous_ones() -> None:
    continuous, sampled = robodyn.modes(joint()), robodyn.modes(joint().discretize(DT))
    s, z = continuous.rows[0].eigenvalue, sampled.rows[0].eigenvalue
    assert abs(z) == pytest.approx(math.exp(s.real * DT), rel=1e-12)  # |z| = exp(Re(s) dt)
    assert z == pytest.approx(np.exp(s * DT), rel=1e-12)
    for field in ("omega_n", "zeta", "time_constant", "period"):
        assert getattr(sampled.rows[0], field) == pytest.approx(getattr(continuous.rows[0], field), rel=1e-10)
    assert sampled.stability == "asymptotically stable" and "discrete-time (dt = 0.01 s)" in sampled.explanation
    data = strict_json(sampled.to_dict())
    assert data["dt"] == DT and "modes (discrete-time, dt = 0.01 s)" in sampled.table()


@pytest.mark.parametrize(("theta", "verdict", "phrase"), [
    (0.0, "marginally stable", "on the unit circle"), (math.pi, "unstable", "> 1: the mode grows by a factor"),
])
def test_discrete_stability_is_by_the_unit_circle(theta: float, verdict: str, phrase: str) -> None:
    result = robodyn.modes(pendulum(theta).discretize(DT))
    assert result.stability == verdict and phrase in result.explanation
    assert "discrete-time" in result.explanation


def test_a_deadbeat_pole_has_no_finite_natural_frequency_in_json() -> None:
    result = robodyn.modes(LinearSystem([[0.0, 1.0], [0.0, 0.0]], dt=0.1))  # z = 0 twice: gone in 2 steps
    assert result.stability == "asymptotically stable" and result.rows[0].omega_n == math.inf
    data = strict_json(result.to_dict())
    assert data["modes"][0]["omega_n"] is None and "deadbeat" in data["notes"][0]


# --- step_info --------------------------------------------------------------------------------------------
def compare_step_info(ours: object, theirs: list[list[dict[str, float]]], system: LinearSystem) -> int:
    """Every value robodyn defines equals python-control's; robodyn's undefined ones have reasons. The count
    of values compared."""
    compared = 0
    table = ours.as_control()  # type: ignore[attr-defined]
    explained = {(o, i, f) for o, i, fields, _ in ours.reasons for f in fields}  # type: ignore[attr-defined]
    for i, output in enumerate(system.outputs):
        for j, input in enumerate(system.inputs):
            scale = max(1.0, abs(theirs[i][j]["Peak"]))
            for field, key in robodyn.linear.lti.CONTROL_NAMES.items():
                mine, reference = table[i][j][key], theirs[i][j][key]
                if math.isnan(mine):
                    assert (output, input, field) in explained
                    continue
                assert math.isclose(mine, reference, rel_tol=1e-10, abs_tol=1e-10 * scale), \
                    (output, input, key, mine, reference)
                compared += 1
    return compared


@pytest.mark.parametrize("name", ["joint", pytest.param("arm_lqr", marks=pytest.mark.slow)])  # arm_lqr: ~30 s
def test_step_info_is_the_exact_response_and_near_control_on_a_fine_grid(name: str) -> None:
    # python-control reads the quantities off the samples: on a grid of step h its times are within h of the exact
    # ones and its extrema within h max|y'| below them (the response moves at most that far between samples)
    system = systems()[name]
    ours = step_info(system)
    T = np.linspace(0.0, ours.times[-1], 40 * ours.times.size)
    h = float(T[1] - T[0])
    theirs = control.step_info(system.to_control(), T=T)
    for i, output in enumerate(system.outputs):
        for j, input in enumerate(system.inputs):
            y = control.step_response(system.to_control(), T=T, input=j, output=i).outputs
            moved = h * float(np.max(np.abs(np.diff(y)) / h)) + 1e-12
            final = abs(theirs[i][j]["SteadyStateValue"])
            for field, key in robodyn.linear.lti.CONTROL_NAMES.items():
                mine, reference = ours.pair(output, input)[field], theirs[i][j][key]
                if mine is None:
                    continue
                if field.endswith("time"):
                    assert abs(mine - reference) <= 2 * h, (output, input, field)
                elif field in ("overshoot", "undershoot"):
                    assert abs(mine - reference) <= 100 * moved / final, (output, input, field)
                else:
                    assert abs(mine - reference) <= moved, (output, input, field)
            if ours.pair(output, input)["rise_time"] is not None:
                assert ours.pair(output, input)["peak"] >= theirs[i][j]["Peak"] - 1e-12  # samples miss the top
    data = strict_json(ours.to_dict())
    assert data["stability"] == "asymptotically stable" and data["grid"]["points"] == ours.times.size


def test_step_info_of_the_joint_closed_forms_and_zero_steady_state() -> None:
    info = step_info(joint(), np.linspace(0.0, 2.0, 2001))
    q = info.pair("q", "u")
    zeta = 0.5
    assert q["steady_state_value"] == pytest.approx(1.0, rel=1e-14)  # k = 1: G(0) = 1
    assert q["overshoot"] == pytest.approx(100 * math.exp(-math.pi * zeta / math.sqrt(1 - zeta**2)), rel=1e-5)
    velocity = info.pair("q_dot", "u")  # q_dot settles to 0: relative quantities are undefined
    assert velocity["steady_state_value"] == 0.0 and velocity["peak"] > 5.0
    assert velocity["rise_time"] is None and velocity["overshoot"] is None
    (reason,) = [r for o, i, f, r in info.reasons if o == "q_dot"]
    assert "steady-state value is 0" in reason


def test_step_info_of_a_discrete_system_equals_control() -> None:
    sampled = joint().discretize(DT)
    T = DT * np.arange(301)
    ours = step_info(sampled, T)
    theirs = control.step_info(control.sample_system(joint().to_control(), DT), T=T)
    assert compare_step_info(ours, theirs, sampled) >= 9
    assert step_info(sampled).times[1] == DT and ours.dt == DT
    with pytest.raises(InputError, match=r"T must be spaced by the sample period dt = 0.01 s"):
        step_info(sampled, np.linspace(0.0, 1.0, 7))


@pytest.mark.parametrize(("theta", "verdict"), [(0.0, "marginally stable"), (math.pi, "unstable")])
def test_step_info_of_a_system_that_does_not_settle_is_null_with_the_reason(theta: float, verdict: str) -> None:
    system = pendulum(theta)
    T = np.linspace(0.0, 5.0, 501)
    info = step_info(system, T)
    assert info.stability == verdict
    for field in robodyn.linear.lti.STEP_FIELDS:
        assert np.all(np.isnan(getattr(info, field)))
    assert all(verdict in reason and "no steady state" in reason for _, _, _, reason in info.reasons)
    assert len(info.reasons) == len(system.outputs) * len(system.inputs)
    data = strict_json(info.to_dict())
    assert data["rise_time"] == [[None], [None]] and data["null_reasons"][0]["reason"].startswith(verdict)
    try:  # python-control answers anyway from the response on T, or fails on one that moves away from G(0)
        theirs = control.step_info(system.to_control(), T=T)
        assert math.isfinite(theirs[0][0]["Peak"])
    except IndexError:
        assert verdict == "unstable"
    with pytest.raises(InputError, match="not asymptotically stable"):
        step_grid(system)


def test_a_grid_too_short_leaves_rise_and_settling_undefined() -> None:
    info = step_info(joint(), np.linspace(0.0, 0.1, 11))  # the joint rises in 0.16 s
    q = info.pair("q", "u")
    assert q["rise_time"] is None and q["settling_time"] is None and q["peak"] is not None
    reasons = " ".join(r for o, _, _, r in info.reasons if o == "q")
    assert "does not reach 90%" in reasons and "give a longer T" in reasons


def test_the_default_grid_follows_its_rule_and_is_capped() -> None:
    times, rule = step_grid(joint())  # eigenvalues -5 +- 8.66j: 10 / 5 = 2 s, a step <= 1 / (20 * 10)
    assert times[0] == 0.0 and times[-1] == pytest.approx(2.0) and np.max(np.diff(times)) <= 1 / 200 + 1e-15
    assert "10 / 5" in rule
    stiff = LinearSystem([[-1e-3, 0.0], [0.0, -1e4]], [[1.0], [1.0]])
    times, rule = step_grid(stiff)
    assert times.size == MAX_POINTS and "not resolved" in rule and times[-1] == pytest.approx(1e4)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"T": [0.0]}, InputError, "at least 2 finite times"),
    ({"T": [0.0, 1.0, 0.5]}, InputError, "strictly increasing"),
    ({"T": [0.0, math.nan]}, InputError, "finite"),
    ({"T": "soon"}, InputError, "T must be an array of times"),
    ({"settling_threshold": 0.0}, InputError, "settling_threshold = 0.0 must be between 0 and 1"),
    ({"settling_threshold": True}, InputError, "settling_threshold"),
    ({"rise_limits": (0.9, 0.1)}, InputError, r"rise_limits\[1\] = 0.1 must be between 0.9 and 1"),
    ({"rise_limits": 0.5}, InputError, r"rise_limits must be \(low, high\)"),
])
def test_step_info_refuses_bad_options(kwargs: dict[str, object], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        step_info(joint(), **kwargs)  # type: ignore[arg-type]


def test_step_info_carries_the_model_units_and_refuses_nonlinear_models() -> None:
    info = step_info(arm_lqr())
    assert info.units["shoulder"] == "rad" and info.units["shoulder_tau"] == "N m"
    assert "step response" in info._repr_html_()
    with pytest.raises(InputError, match=r"needs a linear system, got .* make one with robodyn.linearize"):
        step_info(robodyn.load("pendulum"))
    joint_model = robodyn.load("joint")  # linear by construction: taken as its LinearSystem
    close(step_info(joint_model).steady_state_value, step_info(joint()).steady_state_value)


# --- frequency response -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_frequency_response_equals_control_and_the_formula(name: str) -> None:
    system = systems()[name]
    w = np.logspace(-2, 3, 157)
    ours = frequency_response(system, w)
    assert ours.shape == (w.size, len(system.outputs), len(system.inputs))
    theirs = np.moveaxis(np.asarray(control.frequency_response(system.to_control(), w).complex), -1, 0)
    close(ours, theirs.reshape(ours.shape))
    n = system.A.shape[0]
    by_hand = np.array([system.C @ np.linalg.solve(1j * x * np.eye(n) - system.A, system.B) + system.D for x in w])
    close(ours, by_hand)


def test_discrete_frequency_response_is_on_the_unit_circle() -> None:
    sampled = joint().discretize(DT)
    w = np.linspace(0.1, math.pi / DT, 50)
    ours = sampled.frequency_response(w)
    theirs = np.moveaxis(np.asarray(control.frequency_response(sampled.to_control(), w).complex), -1, 0)
    close(ours, theirs)
    z = np.exp(1j * w[7] * DT)
    close(ours[7], sampled.C @ np.linalg.solve(z * np.eye(2) - sampled.A, sampled.B) + sampled.D)


def test_frequency_response_at_a_pole_is_refused_and_bad_frequencies_too() -> None:
    integrator = LinearSystem([[0.0]], [[1.0]], name="integrator")
    with pytest.raises(NumericalError, match=r"w = 0 rad/s is a pole of 'integrator'.*leave it out of w"):
        frequency_response(integrator, [0.0, 1.0])
    for bad in ([], [math.inf], [1j], "fast"):
        with pytest.raises(InputError, match="w must be"):
            frequency_response(integrator, bad)


# --- the Bode diagram -------------------------------------------------------------------------------------
def test_bode_draws_every_pair_in_db_and_degrees_against_rad_per_s() -> None:
    system = arm_lqr()
    w = np.logspace(-1, 2, 300)
    figure = system.bode(w)
    magnitude, phase = figure.axes
    assert (magnitude.get_ylabel(), phase.get_ylabel(), phase.get_xlabel()) == \
        ("magnitude [dB]", "phase [deg]", "frequency [rad/s]")
    assert magnitude.get_xscale() == "log" and len(magnitude.get_lines()) == 8  # 4 outputs x 2 inputs
    line = next(line for line in magnitude.get_lines() if line.get_label() == "shoulder_tau [N m] -> elbow [rad]")
    expected = 20 * np.log10(np.abs(frequency_response(system, w)[:, 1, 0]))
    np.testing.assert_allclose(line.get_ydata(), expected, rtol=1e-12)


def test_bode_marks_the_margins_of_one_loop_and_the_nyquist_frequency(monkeypatch: pytest.MonkeyPatch) -> None:
    loop = lqr_loop()
    figure = robodyn.linear.plots.bode(loop)
    result = loop.margins()
    assert f"PM = {result.phase_margin:.3g} deg at {result.gain_crossover:.3g} rad/s" in figure.axes[0].get_title()
    sampled = LinearSystem(joint().A, joint().B, [[1.0, 0.0]]).discretize(DT).bode()
    assert "discrete-time, dt = 0.01 s" in sampled.axes[0].get_title()
    assert any(line.get_label() == "Nyquist pi/dt" for line in sampled.axes[0].get_lines())
    with pytest.raises(InputError, match="frequencies must be > 0"):
        loop.bode([0.0, 1.0])
    monkeypatch.setitem(sys.modules, "control", None)
    assert f"PM = {result.phase_margin:.3g} deg" in loop.bode().axes[0].get_title()  # python-control not needed


def lqr_loop() -> LinearSystem:
    """The loop L = K (sI - A)^-1 B of the upright pendulum's LQR, broken at the input."""
    plant = pendulum(math.pi)
    K = robodyn.lqr(plant, np.eye(2), [[1.0]]).K
    return LinearSystem(plant.A, plant.B, K, name="lqr_loop")


# --- controllability and observability --------------------------------------------------------------------
def gramian_reference(A: np.ndarray, B: np.ndarray, discrete: bool) -> np.ndarray:
    """control.gram where slycot is installed, else the Lyapunov equation solved by Kronecker products."""
    n = A.shape[0]
    try:
        return np.asarray(control.gram(control.ss(A, B, np.eye(n), 0, DT if discrete else 0), "c"))
    except control.ControlSlycot:
        pass
    identity = np.eye(n)
    Q = (B @ B.T).reshape(-1)
    M = np.eye(n * n) - np.kron(A, A) if discrete else -(np.kron(identity, A) + np.kron(A, identity))
    return np.linalg.solve(M, Q).reshape(n, n)


@pytest.mark.parametrize("name", NAMES)
def test_controllability_and_observability_matrices_equal_control(name: str) -> None:
    system = systems()[name]
    c, o = controllability(system), observability(system)
    close(c.matrix, control.ctrb(system.A, system.B))
    close(o.matrix, control.obsv(system.A, system.C))
    assert c.rank == np.linalg.matrix_rank(control.ctrb(system.A, system.B)) == len(system.states)
    assert o.rank == np.linalg.matrix_rank(control.obsv(system.A, system.C)) == len(system.states)
    assert c.full and o.full and all(mode.passes for mode in (*c.modes, *o.modes))
    strict_json(c.to_dict())
    strict_json(o.to_dict())


@pytest.mark.parametrize("discrete", [False, True])
@pytest.mark.parametrize("name", ["joint", "arm_lqr"])
def test_gramians_of_stable_systems(name: str, discrete: bool) -> None:
    system = systems()[name].discretize(DT) if discrete else systems()[name]
    c, o = system.controllability(), system.observability()
    close(c.gramian, gramian_reference(system.A, system.B, discrete))
    close(o.gramian, gramian_reference(system.A.T, system.C.T, discrete))
    W = c.gramian
    residual = system.A @ W @ system.A.T - W + system.B @ system.B.T if discrete else \
        system.A @ W + W @ system.A.T + system.B @ system.B.T
    assert np.max(np.abs(residual)) <= 1e-10 * np.max(np.abs(W))


@pytest.mark.parametrize("name", ["pendulum_down", "pendulum_up", "arm"])
def test_no_gramian_without_stability(name: str) -> None:
    result = controllability(systems()[name])
    assert result.gramian is None and "not stable" in str(result.gramian_reason)
    assert strict_json(result.to_dict())["gramian"] is None  # type: ignore[index]


def test_the_pbh_test_names_the_uncontrollable_and_unobservable_modes() -> None:
    system = LinearSystem(np.diag([-1.0, -2.0, -3.0]), [[1.0], [1.0], [0.0]], [[1.0, 0.0, 0.0]],
                          states=["a", "b", "c"])
    c, o = system.controllability(), system.observability()
    assert c.rank == 2 == np.linalg.matrix_rank(control.ctrb(system.A, system.B)) and not c.full
    assert [mode.eigenvalue for mode in c.failing] == [-3.0] and "mode(s) -3 not controllable" in c.explanation
    assert o.rank == 1 == np.linalg.matrix_rank(control.obsv(system.A, system.C))
    assert sorted(mode.eigenvalue.real for mode in o.failing) == [-3.0, -2.0]
    assert "not observable" in o.explanation and "Gramian" in c._repr_html_()


def test_rank_tolerance_is_checked() -> None:
    assert controllability(joint(), tolerance=1e6).rank == 0  # every singular value below it
    with pytest.raises(InputError, match="tolerance must be a number >= 0"):
        controllability(joint(), tolerance=-1.0)


# --- interoperability and display of discrete-time systems ------------------------------------------------
def test_discrete_systems_round_trip_through_control_and_scipy() -> None:
    sampled = joint().discretize(DT)
    converted = sampled.to_control()
    assert converted.dt == DT and converted.isdtime(strict=True)
    back = LinearSystem.from_control(converted)
    assert back.dt == DT and back.states == sampled.states
    close(back.A, sampled.A)
    assert sampled.to_scipy().dt == DT and joint().to_control().isctime()
    assert "discrete-time, dt = 0.01 s" in repr(sampled) and "discrete-time, dt = 0.01 s" in sampled._repr_html_()


def test_a_discrete_system_pickles_and_copies_with_its_period_and_units() -> None:
    import copy
    import pickle

    system = pendulum(0.0).discretize(DT)
    for twin in (pickle.loads(pickle.dumps(system)), copy.deepcopy(system)):
        assert twin.dt == DT and twin.units() == {"theta": "rad", "theta_dot": "rad/s", "tau": "N m"}
        np.testing.assert_array_equal(twin.A, system.A)
        assert not twin.A.flags.writeable


@pytest.mark.parametrize("bad", [0.0, -0.1, math.inf, math.nan, True, "0.1"])
def test_the_sample_period_is_validated(bad: object) -> None:
    with pytest.raises(InputError, match=r"must be a sample period > 0"):
        LinearSystem([[0.5]], dt=bad)  # type: ignore[arg-type]


def test_declared_units_are_validated() -> None:
    with pytest.raises(UnknownNameError, match="declared_units names 'z'"):
        LinearSystem([[0.5]], declared_units={"z": "m"})
    with pytest.raises(InputError, match="must be text"):
        LinearSystem([[0.5]], declared_units={"x1": 3})
    with pytest.raises(ShapeError):
        LinearSystem([[0.5]], [[1.0]], dt=0.1, inputs=["a", "b"])
