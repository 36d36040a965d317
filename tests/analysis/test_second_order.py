"""second_order(): closed forms against the matrix-exponential path and against high-precision references.

Reference: ``robodyn.simulate(..., method="exact")`` on a MechanicalSystem with the same J, b, k. It is
exact for these inputs up to rounding in expm and in the step-by-step propagation (~1e-14 relative on
these grids), so the 1e-11 tolerances (1e-10 for the long resonance run and the random parameters)
leave three orders of magnitude of margin while a formula error, even a wrong constant in the last
digits of a coefficient, is caught. The closed forms themselves reach ~1e-15 relative.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

import robodyn
from robodyn.analysis.second_order import (
    Response,
    SecondOrder,
    exp_divided_difference,
    second_order,
)
from robodyn.base.errors import InputError
from robodyn.signals import Constant, FunctionSignal, Pulse, Ramp, Sine, Step, Table

J, K = 0.01, 1.0  # the seed joint: omega_n = 10 rad/s
T = np.linspace(0.0, 2.0, 201)  # 20 rad at omega_n: about three periods


def exact(J: float, b: float, k: float, t: np.ndarray, q0: float, qd0: float, u: object,
          gain: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    model = robodyn.MechanicalSystem(["q"], ["u"], mass=[[J]], damping=[[b]], stiffness=[[k]],
                                     input_matrix=[[gain]])
    run = robodyn.simulate(model, (0.0, float(t[-1])), [q0, qd0], u=u, method="exact", t_eval=t)
    return run.x[:, 0], run.x[:, 1]


def assert_close(actual: np.ndarray, reference: np.ndarray, tol: float) -> None:
    """|actual - reference| <= tol * max(1, max |reference|): absolute for O(1) responses."""
    scale = max(1.0, float(np.max(np.abs(reference))))
    error = float(np.max(np.abs(actual - reference)))
    assert error <= tol * scale, f"error {error:.3g} > {tol:g} * {scale:.3g}"


# --- characteristic values -------------------------------------------------------------------------------
def test_seed_joint():
    joint = second_order(0.01, 0.1, 1.0)
    assert joint.omega_n == 10.0 and joint.zeta == 0.5 and joint.regime == "underdamped"
    # sqrt(75) = 8.6602540378443864676...: the literal and the correctly rounded result are 1 ulp apart.
    assert joint.omega_d == pytest.approx(8.660254037844386, rel=1e-15, abs=0)
    s1, s2 = joint.roots
    assert s1 == pytest.approx(-5 + 8.660254037844386j, rel=1e-15, abs=0)
    assert s2 == pytest.approx(-5 - 8.660254037844386j, rel=1e-15, abs=0)
    assert (joint.J, joint.b, joint.k, joint.gain) == (0.01, 0.1, 1.0, 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        joint.k = 2.0  # type: ignore[misc]


@pytest.mark.parametrize(("b", "k", "regime", "roots"), [
    (0.2, 1.0, "critically damped", (-10, -10)),
    (0.5, 1.0, "overdamped", (-2.0871215252208, -47.912878474779)),
    (0.1, 0.0, "no restoring force", (0, -10)),
    (0.0, 0.0, "no restoring force", (0, 0)),
    (0.0, -1.0, "unstable", (10, -10)),
    (-0.1, 1.0, "unstable", (5 + 8.660254037844387j, 5 - 8.660254037844387j)),
])
def test_regimes_and_roots(b, k, regime, roots):
    joint = second_order(J, b, k)
    assert joint.regime == regime
    np.testing.assert_allclose(joint.roots, roots, rtol=1e-13)
    assert joint.omega_d is None
    for s in joint.roots:  # roots of J s^2 + b s + k
        assert abs(J * s * s + b * s + k) <= 1e-14 * (J * abs(s) ** 2 + abs(b * s) + abs(k))


def test_roots_without_cancellation():
    """zeta = 1e4: the slow root -k/b (1 + ...) would lose 8 digits in -a + sqrt(a^2 - c)."""
    J_, b, k = 1.0, 2e4, 1.0
    slow, fast = second_order(J_, b, k).roots
    exact_slow = mpmath.mpf(-b) / 2 + mpmath.sqrt(mpmath.mpf(b) ** 2 / 4 - k)
    assert slow.real == pytest.approx(float(exact_slow), rel=1e-15)
    assert fast.real == pytest.approx(-b - float(exact_slow), rel=1e-15)


def test_from_model():
    joint = robodyn.load("joint")
    assert second_order(joint) == second_order(0.01, 0.1, 1.0)
    stiffer = second_order(joint, params={"k": 4.0})
    assert stiffer.omega_n == 20.0 and stiffer.zeta == 0.25
    geared = robodyn.MechanicalSystem(["q"], ["u"], mass=[["J"]], damping=[["b"]], stiffness=[["k"]],
                                      input_matrix=[["g"]], parameters={"J": 0.02, "b": 0.1, "k": 2.0, "g": 3.0})
    joint2 = second_order(geared)
    assert (joint2.J, joint2.b, joint2.k, joint2.gain) == (0.02, 0.1, 2.0, 3.0)
    u = Step(0.2, 0.0, 1.5) + Sine(0.5, 1.0)
    run = robodyn.simulate(geared, (0.0, 2.0), [0.1, 0.0], u=u, method="exact", t_eval=T)
    assert_close(joint2.response(T, 0.1, 0.0, u).q, run.x[:, 0], 1e-11)
    unforced = robodyn.MechanicalSystem(["q"], [], mass=[[1.0]], stiffness=[[4.0]], input_matrix=[[]])
    assert second_order(unforced).gain == 0.0


# --- closed forms against the exact path ---------------------------------------------------------------
SYSTEMS = [  # (b, k): the three regimes, no restoring force, pure inertia, undamped
    (0.1, K), (0.2, K), (0.5, K), (0.1, 0.0), (0.0, 0.0), (0.0, K),
]
INPUTS = [
    None,
    2.0,
    Step(0.0, 0.0, 1.0),
    Step(0.37, 0.5, -1.0),
    Ramp(0.0, 0.5, 0.2),
    Ramp(0.6, -0.8, 0.1),
    Ramp(-0.3, 0.4),
    Sine(1.5, 1.3, 0.3, 0.2),
    Step(0.37, 0.0, 1.0) + 0.5 * Sine(1.0, 2.0, -0.7) - Ramp(0.2, 0.3) + Constant(0.25),
]


@pytest.mark.parametrize(("b", "k"), SYSTEMS)
@pytest.mark.parametrize("u", INPUTS, ids=lambda u: type(u).__name__)
def test_matches_exact_path(b, k, u):
    joint = second_order(J, b, k)
    response = joint.response(T, 0.3, -2.0, u)
    q, qd = exact(J, b, k, T, 0.3, -2.0, u)
    assert_close(response.q, q, 1e-11)
    assert_close(response.qd, qd, 1e-11)


def test_gain_scales_the_input():
    u = Step(0.37, 0.0, 1.0) + Sine(0.4, 3.0)
    response = SecondOrder(J, 0.1, K, gain=-2.5).response(T, 0.0, 1.0, u)
    q, qd = exact(J, 0.1, K, T, 0.0, 1.0, u, gain=-2.5)
    assert_close(response.q, q, 1e-11)
    assert_close(response.qd, qd, 1e-11)


@pytest.mark.parametrize(("b", "k", "particular"), [
    (0.1, K, lambda t: 2.0 / K + 0 * t),  # step 2: q_p = F/k
    (0.5, K, lambda t: 2.0 / K + 0 * t),
    (0.2, K, lambda t: 2.0 / K + 0 * t),
    (0.1, 0.0, lambda t: 2.0 / 0.1 * t),  # k = 0: q_p = (F/b) t, the step response grows like a ramp
    (0.0, 0.0, lambda t: 2.0 / (2 * J) * t**2),  # pure inertia: q_p = F t^2 / (2J)
])
def test_constants_in_the_documented_basis(b, k, particular):
    joint = second_order(J, b, k)
    response = joint.response(T, 0.3, -2.0, 2.0)
    s1, s2 = joint.roots
    a = b / (2 * J)
    bases = {
        "underdamped": (np.exp(-a * T) * np.cos(s1.imag * T), np.exp(-a * T) * np.sin(s1.imag * T)),
        "critically damped": (np.exp(-a * T), T * np.exp(-a * T)),
        "overdamped": (np.exp(s1.real * T), np.exp(s2.real * T)),
        "no restoring force": (np.ones_like(T), np.exp(-b / J * T) if b else T),
    }
    first, second = bases[joint.regime]
    homogeneous = response.C1 * first + response.C2 * second
    assert_close(homogeneous + particular(T), response.q, 1e-12)


def test_sine_particular_and_description():
    """Underdamped, sine forcing: q - q_p is exp(-a t)(C1 cos + C2 sin) with q_p from P(i w)."""
    joint = second_order(J, 0.1, K)
    u = Sine(2.0, 1.3, 0.4)
    response = joint.response(T, 0.0, 0.0, u)
    omega = 2 * math.pi * 1.3
    P = complex(K / J - omega**2, 0.1 / J * omega)  # P(i w) per unit J
    particular = (2.0 / J * np.exp(1j * (omega * T + 0.4)) / P).imag
    wd = joint.omega_d
    assert wd is not None
    homogeneous = np.exp(-5.0 * T) * (response.C1 * np.cos(wd * T) + response.C2 * np.sin(wd * T))
    assert_close(homogeneous + particular, response.q, 1e-12)
    assert response.basis == "exp(-5 t) (C1 cos(8.66025 t) + C2 sin(8.66025 t))"
    assert response.particular.startswith(f"q_p(t) = {abs(2.0 / J / P):.6g} sin(8.16814 t")


# --- resonance -----------------------------------------------------------------------------------------
def test_resonance_grows_linearly():
    """b = 0, w = omega_n: q_p = -(A/(2 J w)) t cos(w t + phi), the homogeneous rest stays bounded."""
    joint = second_order(J, 0.0, K)
    amplitude, phase = 0.5, 0.3
    u = Sine(amplitude, 10.0 / (2 * math.pi), phase)  # u.omega is omega_n up to an ulp
    periods = 8
    t = np.linspace(0.0, periods * 2 * math.pi / 10.0, 1601)
    response = joint.response(t, 0.2, 1.0, u)
    q, qd = exact(J, 0.0, K, t, 0.2, 1.0, u)
    assert_close(response.q, q, 1e-10)
    assert_close(response.qd, qd, 1e-10)
    assert "(resonance)" in response.particular
    growth = amplitude / (2 * J * 10.0)  # 2.5 per unit time
    particular = -growth * t * np.cos(10.0 * t + phase)
    homogeneous = response.C1 * np.cos(10.0 * t) + response.C2 * np.sin(10.0 * t)
    assert_close(homogeneous + particular, response.q, 1e-11)
    # The envelope: the peak of |q| over each period rises by growth * period (2.5 * 0.628).
    peaks = np.abs(response.q[:-1]).reshape(periods, -1).max(axis=1)
    rises = np.diff(peaks)
    np.testing.assert_allclose(rises, growth * 2 * math.pi / 10.0, rtol=0.05)


def test_resonance_against_dop853():
    """A second, independent reference: DOP853 at rtol = atol = 1e-13 (global error ~1e-11 here)."""
    joint = second_order(J, 0.0, K)
    t = np.linspace(0.0, 3.0, 61)
    response = joint.response(t, 0.0, 0.0, Sine(1.0, 10.0 / (2 * math.pi)))
    omega = 10.0

    def rhs(time, x):
        return [x[1], (math.sin(omega * time) - K * x[0]) / J]

    solution = solve_ivp(rhs, (0.0, 3.0), [0.0, 0.0], method="DOP853", rtol=1e-13, atol=1e-13, t_eval=t)
    assert_close(response.q, solution.y[0], 1e-9)
    np.testing.assert_allclose(response.q, -t * np.cos(omega * t) / (2 * J * omega)
                               + np.sin(omega * t) / (2 * J * omega**2), atol=1e-12)


@pytest.mark.parametrize("detuning", [1e-12, 1e-9, 1e-6, -1e-9])
def test_near_resonance_is_not_cancelled(detuning):
    """w = omega_n (1 + d): the textbook particular solution ~ 1/P(i w) would lose |log10 d| digits."""
    u = Sine(1.0, 10.0 * (1 + detuning) / (2 * math.pi))
    t = np.linspace(0.0, 3.0, 301)
    response = second_order(J, 0.0, K).response(t, 0.1, 0.0, u)
    q, qd = exact(J, 0.0, K, t, 0.1, 0.0, u)
    assert_close(response.q, q, 1e-10)
    assert_close(response.qd, qd, 1e-10)


# --- critical damping ----------------------------------------------------------------------------------
def test_continuous_across_critical_damping():
    critical = 2 * math.sqrt(K * J)  # b for zeta = 1
    u = Step(0.37, 0.0, 1.0) + Sine(0.5, 1.7, 0.2) + Ramp(0.0, 0.3)
    responses = {}
    for offset, regime in [(-1e-9, "underdamped"), (0.0, "critically damped"), (1e-9, "overdamped")]:
        joint = second_order(J, critical * (1 + offset), K)
        assert joint.regime == regime
        response = joint.response(T, 0.4, -3.0, u)
        q, qd = exact(J, critical * (1 + offset), K, T, 0.4, -3.0, u)
        assert_close(response.q, q, 1e-11)
        assert_close(response.qd, qd, 1e-11)
        responses[offset] = response
    for offset in (-1e-9, 1e-9):  # d q / d zeta is O(1): the responses differ by O(1e-9) only
        assert np.max(np.abs(responses[offset].q - responses[0.0].q)) < 1e-8
        assert np.max(np.abs(responses[offset].qd - responses[0.0].qd)) < 1e-7


def test_textbook_form_loses_digits_near_critical():
    """Why the evaluation avoids C1 exp(s1 t) + C2 exp(s2 t): at zeta = 1 + 1e-9, s1 - s2 ~ 9e-4 and
    |C1|, |C2| ~ 1e4, so the sum loses ~4 digits (the loss grows like 1/sqrt(zeta - 1))."""
    b = 2 * math.sqrt(K * J) * (1 + 1e-9)
    joint = second_order(J, b, K)
    response = joint.response(T, 0.0, 0.0, 1.0)
    q, _ = exact(J, b, K, T, 0.0, 0.0, 1.0)
    s1, s2 = (s.real for s in joint.roots)
    textbook = response.C1 * np.exp(s1 * T) + response.C2 * np.exp(s2 * T) + 1.0 / K
    assert abs(response.C1) > 1e3
    ours, theirs = np.max(np.abs(response.q - q)), np.max(np.abs(textbook - q))
    assert ours < 1e-14 < theirs


# --- property test ---------------------------------------------------------------------------------------
ZETAS = st.one_of(st.floats(0.0, 3.0), st.sampled_from([0.0, 1.0, 1 - 1e-9, 1 + 1e-9, 1e-3, 20.0]))


@settings(max_examples=40, deadline=None)
@given(
    inertia=st.floats(1e-3, 1e2),
    omega_n=st.floats(0.1, 100.0),
    zeta=ZETAS,
    restoring=st.booleans(),
    q0=st.floats(-1.0, 1.0),
    v0=st.floats(-1.0, 1.0),
    force=st.floats(-2.0, 2.0),
)
def test_random_joints_match_exact_path(inertia, omega_n, zeta, restoring, q0, v0, force):
    b = 2 * zeta * omega_n * inertia
    k = inertia * omega_n**2 if restoring else 0.0  # k = 0 keeps b: no restoring force (or pure inertia)
    t = np.linspace(0.0, 10.0 / omega_n, 101)
    qd0 = v0 * omega_n
    joint = second_order(inertia, b, k)
    for u in (None, force):
        response = joint.response(t, q0, qd0, u)
        q, qd = exact(inertia, b, k, t, q0, qd0, u)
        # Natural scales: initial values, the static deflection and the responses themselves.
        scale_q = float(np.max(np.abs(q))) + abs(q0) + abs(v0) + abs(force) / (inertia * omega_n**2)
        scale_qd = float(np.max(np.abs(qd))) + omega_n * scale_q
        # below the smallest normal double (v0 = 5e-324) numbers carry fewer digits: no relative bound holds there
        scale_q, scale_qd = max(scale_q, np.finfo(float).tiny), max(scale_qd, np.finfo(float).tiny)
        assert np.max(np.abs(response.q - q)) <= 1e-10 * scale_q
        assert np.max(np.abs(response.qd - qd)) <= 1e-10 * scale_qd


# --- divided differences ---------------------------------------------------------------------------------
def _reference_divided_difference(nodes: list[complex], t: float) -> complex:
    """Divided difference of exp(z t) at 60 digits, by the recurrence (nodes distinct)."""
    with mpmath.workdps(60):
        x = [mpmath.mpc(z) for z in nodes]
        table = [mpmath.exp(z * t) for z in x]
        for level in range(1, len(x)):
            table = [(table[i + 1] - table[i]) / (x[i + level] - x[i]) for i in range(len(x) - level)]
        return complex(table[0])


@pytest.mark.parametrize("nodes", [
    [0.0, -1.0],
    [0.0, -3.0 + 2.0j, -3.0 - 2.0j],
    [1e-9j + 10j, 10j, -10j],  # near resonance
    [0.0, 1e-7, -5.0 + 1e-8, -5.0],  # two near-confluent pairs
    [0.0, -1e-6, -2e3, -2e3 - 1e-3],  # stiff and near-confluent
])
def test_divided_differences_against_mpmath(nodes):
    times = np.array([0.0, 1e-4, 0.3, 1.0, 2.5])
    values = exp_divided_difference(nodes, times)
    for time, value in zip(times, values):
        reference = _reference_divided_difference(nodes, float(time)) if time else 0.0
        assert abs(value - reference) <= 1e-14 * max(abs(reference), 1e-300) + 1e-300


def test_confluent_divided_differences():
    t = np.linspace(0.0, 5.0, 11)
    np.testing.assert_allclose(exp_divided_difference([-2.0, -2.0], t), t * np.exp(-2.0 * t), rtol=1e-15)
    np.testing.assert_allclose(exp_divided_difference([0.0, 0.0, 0.0], t), t**2 / 2, rtol=1e-15)
    np.testing.assert_allclose(exp_divided_difference([3j, 3j, 3j, 3j], t), t**3 / 6 * np.exp(3j * t), rtol=1e-14)


# --- input forms and errors ------------------------------------------------------------------------------
def test_times_in_any_order_and_scalars():
    joint = second_order(J, 0.1, K)
    u = Step(0.37, 0.0, 1.0)
    forward = joint.response(T, 0.1, 0.0, u)
    backward = joint.response(T[::-1], 0.1, 0.0, u)
    np.testing.assert_array_equal(backward.q, forward.q[::-1])
    single = joint.response(0.5, 0.1, 0.0, u)
    assert isinstance(single, Response) and single.q.shape == (1,)
    assert single.q[0] == forward.q[50]
    with pytest.raises(ValueError, match="read-only"):
        forward.q[0] = 1.0


@pytest.mark.parametrize(("args", "match"), [
    ((0.0, 0.1, 1.0), "J must be positive"),
    ((-0.01, 0.1, 1.0), "J must be positive"),
    ((math.nan, 0.1, 1.0), "J must be finite"),
    ((0.01, math.inf, 1.0), "b must be finite"),
    ((0.01, 0.1, -math.inf), "k must be finite"),
    ((0.01, 0.1, "1"), "k must be a real number"),
    ((0.01, 0.1), "needs all three"),
])
def test_bad_coefficients(args, match):
    with pytest.raises(InputError, match=match):
        second_order(*args)


def test_bad_models():
    two = robodyn.MechanicalSystem(["a", "b"], ["u", "v"], mass=[[1, 0], [0, 1]])
    with pytest.raises(InputError, match="2 coordinates"):
        second_order(two)
    two_inputs = robodyn.MechanicalSystem(["q"], ["u", "v"], mass=[[1]], input_matrix=[[1, 2]])
    with pytest.raises(InputError, match="2 inputs"):
        second_order(two_inputs)
    with pytest.raises(InputError, match="linearize"):
        second_order(robodyn.load("pendulum"))
    with pytest.raises(InputError, match="from the model"):
        second_order(robodyn.load("joint"), gain=2.0)  # type: ignore[call-overload]
    with pytest.raises(InputError, match="params"):
        second_order(0.01, 0.1, 1.0, params={"k": 2.0})  # type: ignore[call-overload]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"t": [0.0, -0.1]}, "times must be >= 0"),
    ({"t": [0.0, math.nan]}, "finite"),
    ({"t": [[0.0, 1.0]]}, "1-D"),
    ({"q0": math.nan}, "q0 must be finite"),
    ({"u": lambda t: math.sin(t)}, "no closed form: use robodyn.simulate"),
    ({"u": FunctionSignal(math.sin)}, "no closed form: use robodyn.simulate"),
    ({"u": Pulse(0.1, 0.2, 1.0)}, "Pulse input has no closed form"),
    ({"u": Table(np.array([0.0, 1.0]), np.array([0.0, 1.0])) + 1.0}, "Table input has no closed form"),
    ({"u": "step(0, 0, 1)"}, "a number or a signal"),
])
def test_bad_response_arguments(kwargs, match):
    arguments = {"t": T, "q0": 0.0, "qd0": 0.0, "u": None, **kwargs}
    with pytest.raises(InputError, match=match):
        second_order(J, 0.1, K).response(**arguments)
