"""Tests for robodyn.linear.exact: exact LTI responses against closed forms, quadrature and DOP853.

Tolerances. The exact path makes no truncation error, only rounding: each step multiplies by a matrix
exponential that scipy computes to a few units of roundoff relative to ||h M||, so errors stay near
1e-15 * (number of steps) * |x|. For the O(1) responses below over a few hundred steps that is < 1e-13;
1e-12 (closed forms) leaves a safety factor of ten. The undamped resonance grows like t / (2 w) and is
not damped, so its rounding accumulates without decay: 1e-11. Against DOP853 at rtol = atol = 1e-13 the
reference itself carries ~1e-12 global error: 1e-10. The hypothesis comparison uses DOP853 at 1e-12: 1e-8.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.integrate import quad_vec, solve_ivp

from robodyn.base.errors import InputError, RobodynError, ShapeError
from robodyn.linear.exact import exact_discretization, exact_first_order_hold, exact_response

# The seed joint J q'' + b q' + k q = u with J = 0.01, b = 0.1, k = 1: omega_n = 10, zeta = 0.5.
A_JOINT = np.array([[0.0, 1.0], [-100.0, -10.0]])
B_JOINT = np.array([[0.0], [100.0]])
SIGMA = 5.0  # zeta * omega_n
OMEGA_N = 10.0
OMEGA_D = math.sqrt(75.0)  # omega_n sqrt(1 - zeta^2)


# --- stand-in input channels (the interface of robodyn.signals) -------------------------------------------
class PiecewiseConstant:
    """levels[0] before times[0], levels[i] on [times[i-1], times[i]), levels[-1] from times[-1] on."""

    def __init__(self, times: list[float], levels: list[float]) -> None:
        assert len(levels) == len(times) + 1
        self.times, self.levels = np.asarray(times, dtype=float), np.asarray(levels, dtype=float)

    def sine_terms(self) -> list[tuple[float, float, float]]:
        return []

    def affine_pieces(self, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        inner = self.times[(self.times > t0) & (self.times < t1)]
        breaks = np.concatenate([[t0], inner, [t1]])
        values = np.array([self(t) for t in breaks[:-1]])
        return breaks, values, np.zeros(values.size)

    def __call__(self, t: float, piece: float | None = None) -> float:
        return float(self.levels[np.searchsorted(self.times, t if piece is None else piece, side="right")])


def constant(c: float) -> PiecewiseConstant:
    return PiecewiseConstant([], [c])


def step(t_step: float, before: float = 0.0, after: float = 1.0) -> PiecewiseConstant:
    return PiecewiseConstant([t_step], [before, after])


class Ramp:
    """u = offset + slope * t."""

    def __init__(self, slope: float, offset: float = 0.0) -> None:
        self.slope, self.offset = slope, offset

    def sine_terms(self) -> list[tuple[float, float, float]]:
        return []

    def affine_pieces(self, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.array([t0, t1]), np.array([self(t0)]), np.array([self.slope])

    def __call__(self, t: float, piece: float | None = None) -> float:
        return self.offset + self.slope * t


class Sine:
    def __init__(self, amplitude: float, omega: float, phase: float = 0.0) -> None:
        self.terms = [(amplitude, omega, phase)]

    def sine_terms(self) -> list[tuple[float, float, float]]:
        return list(self.terms)

    def affine_pieces(self, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.array([t0, t1]), np.zeros(1), np.zeros(1)

    def __call__(self, t: float, piece: float | None = None) -> float:
        return sum(a * math.sin(w * t + p) for a, w, p in self.terms)


class Sum:
    def __init__(self, *parts: object) -> None:
        self.parts = parts

    def sine_terms(self) -> list[tuple[float, float, float]]:
        return [term for part in self.parts for term in part.sine_terms()]

    def affine_pieces(self, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        each = [part.affine_pieces(t0, t1) for part in self.parts]
        breaks = np.unique(np.concatenate([b for b, _, _ in each]))
        values, slopes = np.zeros(breaks.size - 1), np.zeros(breaks.size - 1)
        for b, v, s in each:
            k = np.searchsorted(b, breaks[:-1], side="right") - 1
            values += v[k] + s[k] * (breaks[:-1] - b[k])
            slopes += s[k]
        return breaks, values, slopes

    def __call__(self, t: float, piece: float | None = None) -> float:
        return sum(part(t, piece) for part in self.parts)


# --- closed forms for the seed joint (q'' + 10 q' + 100 q = 100 u) ---------------------------------------
def joint_free(t: np.ndarray, q0: float, v0: float) -> np.ndarray:
    """Underdamped free response from (q0, v0): (T, 2)."""
    decay, c, s = np.exp(-SIGMA * t), np.cos(OMEGA_D * t), np.sin(OMEGA_D * t)
    q = decay * (q0 * c + (v0 + SIGMA * q0) / OMEGA_D * s)
    v = decay * (v0 * c - (SIGMA * v0 + OMEGA_N**2 * q0) / OMEGA_D * s)
    return np.column_stack([q, v])


def joint_step(t: np.ndarray) -> np.ndarray:
    """Unit-step response from rest: 1 - e^{-sigma t} (cos wd t + sigma / wd sin wd t), and its rate."""
    decay = np.exp(-SIGMA * t)
    q = 1.0 - decay * (np.cos(OMEGA_D * t) + SIGMA / OMEGA_D * np.sin(OMEGA_D * t))
    v = OMEGA_N**2 / OMEGA_D * decay * np.sin(OMEGA_D * t)
    return np.column_stack([q, v])


def joint_sine(t: np.ndarray, amplitude: float, omega: float, phase: float, x0=(0.0, 0.0)) -> np.ndarray:
    """Steady state a |G| sin(w t + phase + arg G), G = 100 / (100 - w^2 + 10 i w), plus the transient."""
    gain = 100.0 / (100.0 - omega**2 + 10j * omega)
    angle = omega * t + phase + np.angle(gain)
    steady = amplitude * abs(gain) * np.column_stack([np.sin(angle), omega * np.cos(angle)])
    q_s0 = amplitude * abs(gain) * math.sin(phase + np.angle(gain))
    v_s0 = amplitude * abs(gain) * omega * math.cos(phase + np.angle(gain))
    return steady + joint_free(t, x0[0] - q_s0, x0[1] - v_s0)


def joint_affine(t: np.ndarray, u0: float, slope: float, x0=(0.0, 0.0)) -> np.ndarray:
    """Response to u = u0 + slope t: particular q = u0 + slope (t - 0.1), q' = slope, plus the transient."""
    particular = np.column_stack([u0 + slope * (t - 0.1), np.full_like(t, slope)])
    return particular + joint_free(t, x0[0] - (u0 - 0.1 * slope), x0[1] - slope)


def dop853(A, B, x0, t_eval, u, t0=None, tol=1e-13, breaks=()):
    """High-accuracy reference: DOP853 restarted at every input break; ``u(t, piece)`` is the input at t on
    the piece containing ``piece`` (the segment midpoint), so no stage sees the other side of a step."""
    A, B = np.asarray(A, float), np.asarray(B, float)
    t_eval = np.asarray(t_eval, float)
    t0 = t_eval[0] if t0 is None else t0
    stops = np.unique(np.concatenate([[t0], [b for b in breaks if t0 < b < t_eval[-1]], [t_eval[-1]]]))
    out, x = np.empty((t_eval.size, A.shape[0])), np.asarray(x0, float)
    out[t_eval == t0] = x
    for a, b in itertools.pairwise(stops):
        mid = 0.5 * (a + b)  # evaluate piecewise inputs on the segment's own piece
        sol = solve_ivp(lambda t, y, mid=mid: A @ y + B @ u(t, mid), (a, b), x, method="DOP853", rtol=tol, atol=tol,
                        dense_output=True)
        inside = (t_eval > a) & (t_eval <= b)
        out[inside] = sol.sol(t_eval[inside]).T
        x = sol.y[:, -1]
    return out


# --- the seed joint against closed forms ----------------------------------------------------------------
GRID = np.linspace(0.0, 3.0, 301)


def test_free_response_matches_closed_form():
    x = exact_response(A_JOINT, B_JOINT, [1.0, 0.0], GRID, [None])
    np.testing.assert_allclose(x, joint_free(GRID, 1.0, 0.0), rtol=0, atol=1e-12)


def test_step_response_matches_closed_form():
    x = exact_response(A_JOINT, B_JOINT, [0.0, 0.0], GRID, [constant(1.0)])
    np.testing.assert_allclose(x, joint_step(GRID), rtol=0, atol=1e-12)


@pytest.mark.parametrize("with_break_on_grid", [False, True])
def test_delayed_step_on_nonuniform_grid(with_break_on_grid):
    rng = np.random.default_rng(7)
    t = np.sort(np.concatenate([[0.0, 3.0], rng.uniform(0.0, 3.0, 150), [0.37] if with_break_on_grid else []]))
    x = exact_response(A_JOINT, B_JOINT, [0.0, 0.0], t, [step(0.37)])
    expected = np.where((t >= 0.37)[:, None], joint_step(np.maximum(t - 0.37, 0.0)), 0.0)
    np.testing.assert_allclose(x, expected, rtol=0, atol=1e-12)


def test_ramp_matches_closed_form():
    x = exact_response(A_JOINT, B_JOINT, [0.0, 0.0], GRID, [Ramp(1.0)])
    np.testing.assert_allclose(x, joint_affine(GRID, 0.0, 1.0), rtol=0, atol=1e-12)


def test_ramp_from_later_start_matches_dop853():
    t = np.linspace(0.5, 2.5, 81)
    x = exact_response(A_JOINT, B_JOINT, [0.2, -1.0], t, [Ramp(1.5, offset=-0.3)])
    reference = dop853(A_JOINT, B_JOINT, [0.2, -1.0], t, lambda s, _: [1.5 * s - 0.3])
    np.testing.assert_allclose(x, reference, rtol=0, atol=1e-10)


def test_sum_of_step_ramp_sine_matches_dop853():
    signal = Sum(step(0.37, 0.0, 2.0), Ramp(-0.5, 0.1), Sine(0.8, 13.0, 0.4))
    t = np.linspace(0.0, 2.0, 97)
    x = exact_response(A_JOINT, B_JOINT, [0.1, 0.0], t, [signal])
    reference = dop853(A_JOINT, B_JOINT, [0.1, 0.0], t, lambda s, mid: [signal(s, piece=mid)], breaks=[0.37])
    np.testing.assert_allclose(x, reference, rtol=0, atol=1e-10)


def test_sine_on_joint_matches_steady_state_plus_transient():
    x0 = (0.2, -1.0)
    x = exact_response(A_JOINT, B_JOINT, x0, GRID, [Sine(2.0, 7.0, 0.3)])
    np.testing.assert_allclose(x, joint_sine(GRID, 2.0, 7.0, 0.3, x0), rtol=0, atol=1e-12)


def test_sine_phase_refers_to_absolute_time():
    # Started at t0 = 1.3, the input is still sin(7 t + 0.3) in absolute time; shift the closed form.
    t = 1.3 + GRID
    x = exact_response(A_JOINT, B_JOINT, [0.0, 0.0], t, [Sine(2.0, 7.0, 0.3)])
    np.testing.assert_allclose(x, joint_sine(GRID, 2.0, 7.0, 0.3 + 7.0 * 1.3), rtol=0, atol=1e-12)


def test_undamped_resonance():
    w = 2.0
    t = np.linspace(0.0, 10.0, 501)
    x = exact_response([[0.0, 1.0], [-(w**2), 0.0]], [[0.0], [1.0]], [0.0, 0.0], t, [Sine(1.0, w)])
    expected = np.column_stack([(np.sin(w * t) - w * t * np.cos(w * t)) / (2 * w**2), t * np.sin(w * t) / 2])
    np.testing.assert_allclose(x, expected, rtol=0, atol=1e-11)


# --- other systems --------------------------------------------------------------------------------------
def test_defective_matrix_against_jordan_closed_form():
    A = [[-1.0, 1.0, 0.0], [0.0, -1.0, 1.0], [0.0, 0.0, -1.0]]
    x0 = np.array([1.0, -2.0, 0.5])
    t = np.linspace(0.0, 6.0, 121)
    x = exact_response(A, [[0.0], [0.0], [1.0]], x0, t, [constant(1.0)])
    e = np.exp(-t)
    free = e[:, None] * np.column_stack([x0[0] + t * x0[1] + t**2 / 2 * x0[2], x0[1] + t * x0[2], x0[2] + 0 * t])
    # integral_0^t e^{A s} e3 ds = integral of e^{-s} (s^2 / 2, s, 1)
    forced = np.column_stack([1 - e * (1 + t + t**2 / 2), 1 - e * (1 + t), 1 - e])
    np.testing.assert_allclose(x, free + forced, rtol=0, atol=1e-12)


def test_stiff_system_with_large_steps():
    # eigenvalues -1e4 and -1, non-normal; ||A h|| up to 5e5 on the last interval.
    V = np.array([[1.0, 1.0], [0.0, 1.0]])
    lam = np.array([-1.0e4, -1.0])
    A = V @ np.diag(lam) @ np.linalg.inv(V)
    t = np.array([0.0, 1e-5, 1e-4, 0.5, 5.0, 50.0])
    x0 = np.array([1.0, 2.0])
    x = exact_response(A, np.zeros((2, 0)), x0, t, [])
    expected = np.array([V @ (np.exp(lam * s) * np.linalg.solve(V, x0)) for s in t])
    np.testing.assert_allclose(x, expected, rtol=0, atol=1e-12)


def test_multiple_inputs_superpose():
    B = np.array([[0.0, 0.0, 0.0], [100.0, 1.0, 50.0]])
    # channel 0: step; channel 1: none; channel 2: two sines at omega = 7 (merged into one oscillator) + constant
    channels = [step(0.37), None, Sum(Sine(1.0, 7.0, 0.3), Sine(0.5, 7.0, -1.0), constant(0.2))]
    t = np.linspace(0.0, 3.0, 211)
    x = exact_response(A_JOINT, B, [0.5, 0.0], t, channels)
    expected = (
        joint_free(t, 0.5, 0.0)
        + np.where((t >= 0.37)[:, None], joint_step(np.maximum(t - 0.37, 0.0)), 0.0)
        + 0.5 * (joint_sine(t, 1.0, 7.0, 0.3) + joint_sine(t, 0.5, 7.0, -1.0) + 0.2 * joint_step(t))
    )
    np.testing.assert_allclose(x, expected, rtol=0, atol=1e-12)


def test_output_times_after_t0_and_repeated():
    t = np.array([0.4, 0.4, 1.0, 2.5, 2.5])
    x = exact_response(A_JOINT, B_JOINT, [1.0, 0.0], t, [None], t0=-0.5)
    np.testing.assert_allclose(x, joint_free(t + 0.5, 1.0, 0.0), rtol=0, atol=1e-12)
    single = exact_response(A_JOINT, B_JOINT, [1.0, 2.0], [0.7], [step(0.37)])
    np.testing.assert_array_equal(single, [[1.0, 2.0]])


# --- the expm cache -------------------------------------------------------------------------------------
@pytest.fixture
def expm_calls(monkeypatch):
    calls = []
    original = scipy.linalg.expm

    def counting(matrix):
        calls.append(matrix.shape)
        return original(matrix)

    monkeypatch.setattr(scipy.linalg, "expm", counting)  # exact._expm imports it on first use
    return calls


def test_uniform_grid_costs_one_expm(expm_calls):
    t = np.linspace(0.0, 3.0, 3001)  # spacings differ in their last bits
    x = exact_response(A_JOINT, B_JOINT, [0.0, 0.0], t, [Sum(constant(1.0), Sine(0.0, 3.0))])
    assert len(expm_calls) == 1
    np.testing.assert_allclose(x, joint_step(t), rtol=0, atol=1e-12)


def test_nearly_uniform_grid_shares_expm_and_stays_exact(expm_calls):
    # Spacings differing by up to 8e-12 are within the sharing tolerance (1e-9 / ||M||_1 = 1e-11 here): one
    # expm, and the first-order correction keeps the result exact (without it the error would be ~5e-9).
    t = np.linspace(0.0, 3.0, 601)
    t[1:-1] += np.random.default_rng(3).uniform(-2e-12, 2e-12, t.size - 2)
    x = exact_response(A_JOINT, B_JOINT, [0.0, 20.0], t, [constant(1.0)])
    assert len(expm_calls) == 1
    np.testing.assert_allclose(x, joint_step(t) + joint_free(t, 0.0, 20.0), rtol=0, atol=1e-12)


# --- discretizations ------------------------------------------------------------------------------------
DISCRETIZATION_CASES = [
    (A_JOINT, B_JOINT, 0.1),
    ([[-1.0, 1.0, 0.0], [0.0, -1.0, 1.0], [0.0, 0.0, -1.0]], [[1.0, 0.0], [0.0, 2.0], [1.0, -1.0]], 0.7),
    ([[0.0, 1.0], [0.0, 0.0]], [[0.0], [1.0]], 1.3),  # singular A (double integrator)
]


@pytest.mark.parametrize(("A", "B", "h"), DISCRETIZATION_CASES)
def test_zero_order_hold_matches_quadrature(A, B, h):
    A, B = np.asarray(A), np.asarray(B)
    Phi, Gamma = exact_discretization(A, B, h)
    integral, _ = quad_vec(lambda s: scipy.linalg.expm(A * s) @ B, 0.0, h, epsabs=1e-15, epsrel=1e-14)
    np.testing.assert_allclose(Gamma, integral, rtol=0, atol=1e-12)
    assert Phi.shape == A.shape and Gamma.shape == B.shape


@pytest.mark.parametrize(("A", "B", "h"), DISCRETIZATION_CASES)
def test_first_order_hold_matches_quadrature(A, B, h):
    A, B = np.asarray(A), np.asarray(B)
    Phi, Gamma0, Gamma1 = exact_first_order_hold(A, B, h)
    integral, _ = quad_vec(lambda s: scipy.linalg.expm(A * (h - s)) @ B * s, 0.0, h, epsabs=1e-15, epsrel=1e-14)
    np.testing.assert_allclose(Gamma1, integral, rtol=0, atol=1e-12)
    Phi_zoh, Gamma_zoh = exact_discretization(A, B, h)
    np.testing.assert_allclose(Phi, Phi_zoh, rtol=0, atol=1e-14)
    np.testing.assert_allclose(Gamma0, Gamma_zoh, rtol=0, atol=1e-14)


def test_joint_transition_matrix_matches_closed_form():
    Phi, _ = exact_discretization(A_JOINT, B_JOINT, 0.25)
    h = np.array([0.25])
    expected = np.column_stack([joint_free(h, 1.0, 0.0)[0], joint_free(h, 0.0, 1.0)[0]])
    np.testing.assert_allclose(Phi, expected, rtol=0, atol=1e-13)  # roundoff times ||A h|| = 27


def test_first_order_hold_ramp_over_one_step():
    x0, u0, slope, h = np.array([0.3, -0.2]), 0.5, 2.0, 0.25
    Phi, Gamma0, Gamma1 = exact_first_order_hold(A_JOINT, B_JOINT, h)
    x1 = Phi @ x0 + Gamma0[:, 0] * u0 + Gamma1[:, 0] * slope
    np.testing.assert_allclose(x1, joint_affine(np.array([h]), u0, slope, x0)[0], rtol=0, atol=1e-13)


def test_zero_step_is_identity():
    Phi, Gamma0, Gamma1 = exact_first_order_hold(A_JOINT, B_JOINT, 0.0)
    np.testing.assert_array_equal(Phi, np.eye(2))
    np.testing.assert_array_equal(Gamma0, 0.0)
    np.testing.assert_array_equal(Gamma1, 0.0)


# --- bad inputs -----------------------------------------------------------------------------------------
T3 = [0.0, 1.0, 2.0]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}, ShapeError, r"A must be a non-empty square \(n, n\) matrix"),
        ({"B": [[1.0], [2.0], [3.0]]}, ShapeError, r"B has shape \(3, 1\), expected \(2, m\)"),
        ({"B": [0.0, 100.0]}, ShapeError, r"B\.reshape\(-1, 1\)"),
        ({"A": [[0.0, np.inf], [-1.0, 0.0]]}, InputError, r"A contains non-finite entries"),
        ({"x0": [0.0, 0.0, 0.0]}, ShapeError, r"x0 has shape \(3,\), expected \(2,\)"),
        ({"x0": [0.0, np.nan]}, InputError, r"x0 contains non-finite entries"),
        ({"t_eval": [0.0, 2.0, 1.0]}, InputError, r"t_eval must be sorted ascending.*sort it"),
        ({"t_eval": [0.0, np.nan]}, InputError, r"t_eval contains non-finite times"),
        ({"t_eval": [[0.0, 1.0]]}, ShapeError, r"t_eval must be a non-empty 1-D array"),
        ({"t0": 0.5}, InputError, r"t_eval starts at 0\.0, before t0 = 0\.5"),
        ({"inputs": [None, None]}, ShapeError, r"2 input channels given for B with 1 columns"),
        ({"inputs": [Sine(1.0, np.nan)]}, InputError, r"input 0: sine term .* is not finite"),
    ],
)
def test_bad_inputs_raise(kwargs, error, match):
    arguments = {"A": A_JOINT, "B": B_JOINT, "x0": [0.0, 0.0], "t_eval": T3, "inputs": [None], "t0": None}
    arguments.update(kwargs)
    with pytest.raises(error, match=match) as info:
        exact_response(**arguments)
    assert isinstance(info.value, RobodynError) and isinstance(info.value, ValueError)


def test_bad_affine_pieces_raise():
    class Broken(Ramp):
        def affine_pieces(self, t0, t1):
            return np.array([t0, t1]), np.array([1.0, 2.0]), np.array([0.0])

    with pytest.raises(ShapeError, match=r"input 0: affine_pieces returned 2 breaks, 2 values, 1 slopes"):
        exact_response(A_JOINT, B_JOINT, [0.0, 0.0], T3, [Broken(1.0)])


@pytest.mark.parametrize(
    ("A", "B", "h", "error", "match"),
    [
        ([[1.0, 2.0]], [[1.0]], 0.1, ShapeError, r"A must be a non-empty square"),
        (A_JOINT, [[1.0, 2.0]], 0.1, ShapeError, r"B has shape \(1, 2\), expected \(2, m\)"),
        (A_JOINT, B_JOINT, -0.1, InputError, r"step h must be finite and >= 0"),
        (A_JOINT, B_JOINT, np.inf, InputError, r"step h must be finite and >= 0"),
    ],
)
def test_bad_discretization_inputs_raise(A, B, h, error, match):
    for function in (exact_discretization, exact_first_order_hold):
        with pytest.raises(error, match=match):
            function(A, B, h)


# --- properties over random stable systems --------------------------------------------------------------
STEP = 0.05
STEPS = 40


@st.composite
def stable_systems(draw):
    n = draw(st.sampled_from([2, 3]))
    m = draw(st.sampled_from([1, 2]))
    entries = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)
    R = draw(hnp.arrays(np.float64, (n, n), elements=entries))
    margin = draw(st.floats(0.2, 2.0))
    A = R - (np.max(np.linalg.eigvals(R).real) + margin) * np.eye(n)  # all eigenvalues have Re <= -margin
    B = draw(hnp.arrays(np.float64, (n, m), elements=entries))
    x0 = draw(hnp.arrays(np.float64, (n,), elements=st.floats(-1.0, 1.0)))
    channels = []
    for _ in range(m):
        indices = draw(st.lists(st.integers(1, STEPS - 1), max_size=4, unique=True))
        levels = draw(st.lists(st.floats(-1.0, 1.0), min_size=len(indices) + 1, max_size=len(indices) + 1))
        channels.append(PiecewiseConstant(sorted(i * STEP for i in indices), levels))
    return A, B, x0, channels


@settings(max_examples=30, deadline=None)
@given(stable_systems())
def test_random_piecewise_constant_inputs(system):
    A, B, x0, channels = system
    t = np.arange(STEPS + 1) * STEP  # the breaks i * STEP are grid points
    x = exact_response(A, B, x0, t, channels)

    # consistency: composing zero-order-hold steps reproduces the grid response
    Phi, Gamma = exact_discretization(A, B, STEP)
    composed = [x0]
    for tk in t[:-1]:
        composed.append(Phi @ composed[-1] + Gamma @ np.array([c(tk) for c in channels]))
    np.testing.assert_allclose(x, np.array(composed), rtol=0, atol=1e-12)

    # independent reference: DOP853 restarted at each break
    breaks = sorted({b for c in channels for b in c.times})
    reference = dop853(A, B, x0, t, lambda s, mid: [c(s, piece=mid) for c in channels], tol=1e-12, breaks=breaks)
    np.testing.assert_allclose(x, reference, rtol=0, atol=1e-8)
