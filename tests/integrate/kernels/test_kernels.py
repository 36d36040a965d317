"""The kernel template, compiled by numba and interpreted, against closed forms, scipy and each other.

One compiled harness module (``kernel_harness``) holds every test problem, so numba compiles the kernels once
for this test module (~15 s on two cores).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp
from scipy.linalg import expm
from tests.integrate import kernel_harness as kh

from robodyn.integrate.kernels.run import adaptive_batch, fixed_batch
from robodyn.integrate.methods.tableaus import METHODS

JOINT = (0.01, 0.1, 1.0)  # the seed joint: J, b, k
ARENSTORF_PERIOD = 17.0652165601579625588917206249
ARENSTORF_X0 = [0.994, 0.0, 0.0, -2.00158510637908252240537862224]
G = 9.81


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return kh.load_compiled(tmp_path_factory.mktemp("rk_kernels"))


@pytest.fixture(scope="module")
def interpreted() -> ModuleType:
    return kh.load_interpreted()


def joint_exact(t: np.ndarray, J: float = JOINT[0], b: float = JOINT[1], k: float = JOINT[2]) -> np.ndarray:
    """Closed form of J q'' + b q' + k q = 1 from rest (underdamped): (T, 2) = [q, q']."""
    wn, zeta = math.sqrt(k / J), b / (2.0 * math.sqrt(k * J))
    sigma, wd = zeta * wn, wn * math.sqrt(1.0 - zeta**2)
    decay = np.exp(-sigma * t)
    q = (1.0 - decay * (np.cos(wd * t) + sigma / wd * np.sin(wd * t))) / k
    return np.stack([q, decay * wn**2 / wd * np.sin(wd * t) / k], axis=1)


def scipy_rhs(problem: int, params: list[float]) -> Callable[[float, np.ndarray], list[float]]:
    if problem == kh.JOINT:
        J, b, k = params
        return lambda t, x: [x[1], (1.0 - b * x[1] - k * x[0]) / J]
    if problem == kh.VAN_DER_POL:
        (mu,) = params
        return lambda t, x: [x[1], mu * (1.0 - x[0] ** 2) * x[1] - x[0]]
    a, b, c, d = params
    return lambda t, x: [a * x[0] - b * x[0] * x[1], -c * x[1] + d * x[0] * x[1]]


# ---------------------------------------------------------------------------------------------- fixed step

def test_observed_orders(compiled: ModuleType) -> None:
    # x' = -x + sin t, x(0) = 1: x = 1.5 e^-t + (sin t - cos t) / 2. Halving h from 1/10 to 1/160 keeps every
    # method in its asymptotic range and far above rounding (rk4's smallest error is ~1e-10).
    t_end = 2.0
    exact = 1.5 * math.exp(-t_end) + (math.sin(t_end) - math.cos(t_end)) / 2.0
    for method, expected in (("euler", 1), ("heun", 2), ("rk4", 4)):
        steps = np.array([20, 40, 80, 160, 320])
        errors = [abs(kh.fixed(compiled, method, [kh.FORCED_DECAY], np.linspace(0, t_end, k + 1), [1.0])[0][-1, 0]
                      - exact) for k in steps]
        slope = -np.polyfit(np.log(steps), np.log(errors), 1)[0]
        assert abs(slope - expected) < 0.3, (method, slope)


@pytest.mark.parametrize("kind", ["compiled", "interpreted"])
def test_euler_is_the_textbook_loop_bit_for_bit(kind: str, request: pytest.FixtureRequest) -> None:
    # x' = -a x + u with u switching at 0.37; the input is sampled at each step's start and held.
    module = request.getfixturevalue(kind)
    a, before, after, switch = 2.0, 1.0, -0.5, 0.37
    grid = np.linspace(0.0, 1.0, 51)
    xs, us, nfev = kh.fixed(module, "euler", [kh.SWITCHED, a], grid, [0.3], kh.inputs(before, after, switch))
    x = 0.3
    for k in range(grid.size - 1):
        u = before if grid[k] < switch else after
        assert us[k, 0] == u
        x = x + (grid[k + 1] - grid[k]) * (-a * x + u)
        assert xs[k + 1, 0] == x
    assert nfev == grid.size - 1


def test_fixed_skips_unweighted_stages(compiled: ModuleType) -> None:
    # dopri5's 7th stage has weight 0: a fixed step spends 6 evaluations, and is 5th order accurate.
    grid = np.linspace(0.0, 2.0, 41)
    xs, _, nfev = kh.fixed(compiled, "dopri5", [kh.FORCED_DECAY], grid, [1.0])
    assert nfev == 6 * 40
    exact = 1.5 * np.exp(-grid) + (np.sin(grid) - np.cos(grid)) / 2.0
    assert np.abs(xs[:, 0] - exact).max() < 1e-8  # C h^5 with h = 0.05


# ------------------------------------------------------------------------------------- scipy equivalence

PROBLEMS = {
    "joint": (kh.JOINT, list(JOINT), (0.0, 5.0), [0.0, 0.0]),
    "van_der_pol": (kh.VAN_DER_POL, [1.0], (0.0, 20.0), [2.0, 0.0]),
    "lotka_volterra": (kh.LOTKA_VOLTERRA, [1.5, 1.0, 3.0, 1.0], (0.0, 15.0), [10.0, 5.0]),
}


@pytest.mark.parametrize("problem", PROBLEMS)
@pytest.mark.parametrize(("method", "scipy_method"), [("dopri5", "RK45"), ("dop853", "DOP853")])
def test_same_steps_and_states_as_scipy(compiled: ModuleType, problem: str, method: str, scipy_method: str) -> None:
    pid, params, span, x0 = PROBLEMS[problem]
    fun = scipy_rhs(pid, params)
    run = kh.adaptive(compiled, method, [pid, *params], span, x0)
    ref = solve_ivp(fun, span, x0, method=scipy_method, rtol=1e-8, atol=1e-10)
    ref_steps = ref.t.size - 1
    assert abs(run.steps - ref_steps) <= 0.02 * ref_steps  # the brief's +-2 %; measured: identical counts
    # At t_eval both interpolate their own steps. The steps are the same up to rounding in the error
    # estimate (a cancellation), so the states agree far below the tolerances: 1e-9 of each state's scale.
    t_eval = np.linspace(*span, 57)
    run = kh.adaptive(compiled, method, [pid, *params], span, x0, t_eval=t_eval)
    ref = solve_ivp(fun, span, x0, method=scipy_method, rtol=1e-8, atol=1e-10, t_eval=t_eval)
    np.testing.assert_array_equal(run.t, t_eval)
    scale = np.abs(ref.y).max(axis=1)
    assert np.all(np.abs(run.x - ref.y.T) <= 1e-9 * scale)


def test_given_first_step_and_max_step_as_scipy(compiled: ModuleType) -> None:
    pid, params, span, x0 = PROBLEMS["van_der_pol"]
    run = kh.adaptive(compiled, "dopri5", [pid, *params], span, x0, h0=1e-3, h_max=0.05)
    ref = solve_ivp(scipy_rhs(pid, params), span, x0, rtol=1e-8, atol=1e-10, first_step=1e-3, max_step=0.05)
    assert run.steps == ref.t.size - 1
    assert run.t[1] == 1e-3 and np.diff(run.t).max() <= 0.05 * (1.0 + 1e-12)  # t_new - t rounds
    # Step times agree to rounding of the error estimate (a cancellation: ~1e-8 relative change of h).
    np.testing.assert_allclose(run.t, ref.t, rtol=1e-6)


# ----------------------------------------------------------------------------------------- closed forms

def test_dopri5_joint_closed_form(compiled: ModuleType) -> None:
    t_eval = np.linspace(0.0, 5.0, 201)
    run = kh.adaptive(compiled, "dopri5", [kh.JOINT, *JOINT], (0.0, 5.0), [0.0, 0.0], rtol=1e-10, atol=1e-12,
                      t_eval=t_eval)
    assert run.status == 0
    # Global error ~ (number of steps) x rtol x scale stays below 1e-8 with q' up to ~8.
    assert np.abs(run.x - joint_exact(t_eval)).max() < 1e-8


def test_dop853_arenstorf_orbit_closes(compiled: ModuleType) -> None:
    # [HNW] I.16 / II.0: the periodic Arenstorf orbit; a 1e-12 run returns to its start to ~1e-9.
    run = kh.adaptive(compiled, "dop853", [kh.ARENSTORF, 0.012277471], (0.0, ARENSTORF_PERIOD), ARENSTORF_X0,
                      rtol=1e-12, atol=1e-12)
    assert run.status == 0 and run.t[-1] == ARENSTORF_PERIOD
    assert np.abs(run.x[-1] - ARENSTORF_X0).max() < 1e-6


@given(J=st.floats(0.005, 0.1), b=st.floats(0.01, 1.0), k=st.floats(0.5, 5.0), x0=st.floats(-1.0, 1.0))
@settings(max_examples=25, deadline=None)
def test_property_joint_matches_matrix_exponential(compiled: ModuleType, J: float, b: float, k: float,
                                                   x0: float) -> None:
    # Any damping (under-, over-, critically damped): reference from the augmented matrix exponential.
    t_end = 2.0
    run = kh.adaptive(compiled, "dopri5", [kh.JOINT, J, b, k], (0.0, t_end), [x0, 0.0], rtol=1e-10, atol=1e-12)
    aug = np.array([[0.0, 1.0, 0.0], [-k / J, -b / J, 1.0 / J], [0.0, 0.0, 0.0]])
    exact = (expm(aug * t_end) @ np.array([x0, 0.0, 1.0]))[:2]
    scale = max(1.0, np.abs(run.x).max())
    assert run.status == 0 and np.abs(run.x[-1] - exact).max() < 1e-7 * scale


# ---------------------------------------------------------------------------------------- dense output

@pytest.mark.parametrize("method", ["dopri5", "dop853"])
def test_dense_output_matches_a_run_that_stops_there(compiled: ModuleType, method: str) -> None:
    t_eval = np.linspace(0.0, 5.0, 41)
    rtol = 1e-8
    dense = kh.adaptive(compiled, method, [kh.JOINT, *JOINT], (0.0, 5.0), [0.0, 0.0], t_eval=t_eval, rtol=rtol,
                        atol=rtol * 1e-2)
    stopped = kh.adaptive(compiled, method, [kh.JOINT, *JOINT], (0.0, 5.0), [0.0, 0.0], stops=t_eval[1:-1],
                          rtol=rtol, atol=rtol * 1e-2)
    landed = np.searchsorted(stopped.t, t_eval)
    np.testing.assert_array_equal(stopped.t[landed], t_eval)  # stop points are step ends, exactly
    # Both are within their global error of the truth, ~ a few rtol x scale (scale ~ 8): 10 rtol x scale.
    bound = 10.0 * rtol * np.abs(stopped.x).max()
    exact = joint_exact(t_eval)
    assert np.abs(stopped.x[landed] - exact).max() < bound
    assert np.abs(dense.x - exact).max() < bound
    assert np.abs(dense.x - stopped.x[landed]).max() < bound


@pytest.mark.parametrize(("method", "power"), [("dopri5", 4.0), ("dop853", 7.0)])
def test_dense_output_is_exact_for_its_degree(compiled: ModuleType, method: str, power: float) -> None:
    # x' = q t^(q-1): an interpolant of order q reproduces x = t^q to rounding between the steps.
    t_eval = np.linspace(0.0, 2.0, 37)
    run = kh.adaptive(compiled, method, [kh.POLY, power], (0.0, 2.0), [0.0], t_eval=t_eval, rtol=1e-6, atol=1e-8)
    assert run.steps < t_eval.size  # most output points are inside steps
    np.testing.assert_allclose(run.x[:, 0], t_eval**power, rtol=0, atol=1e-13 * 2.0**power)


# ----------------------------------------------------------------------------------------------- events

@pytest.mark.parametrize("method", ["dopri5", "dop853"])
def test_falling_ball_terminal_event(compiled: ModuleType, method: str) -> None:
    height = 2.0
    run = kh.adaptive(compiled, method, [kh.BALL, G], (0.0, 5.0), [height, 0.0], directions=[-1], terminal=[1])
    t_hit = math.sqrt(2.0 * height / G)
    assert run.status == 1
    assert run.ev_idx.tolist() == [0] and abs(run.ev_t[0] - t_hit) <= 1e-12
    # The dense output is exact for the quadratic x(t); the last output is the event.
    assert run.t[-1] == run.ev_t[0] and np.array_equal(run.x[-1], run.ev_x[0])
    np.testing.assert_allclose(run.ev_x[0], [0.0, -G * t_hit], rtol=0, atol=1e-12)


def test_events_in_order_direction_and_t_eval(compiled: ModuleType) -> None:
    # Thrown up at 3 m/s from 1 m: apex (x' falls through 0, non-terminal), then the floor (terminal).
    x0, v0 = 1.0, 3.0
    t_apex, t_floor = v0 / G, (v0 + math.sqrt(v0**2 + 2.0 * G * x0)) / G
    t_eval = np.linspace(0.0, 2.0, 21)
    run = kh.adaptive(compiled, "dop853", [kh.BALL, G], (0.0, 2.0), [x0, v0], directions=[-1, -1],
                      terminal=[1, 0], t_eval=t_eval)
    assert run.status == 1 and run.ev_idx.tolist() == [1, 0]
    np.testing.assert_allclose(run.ev_t, [t_apex, t_floor], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(run.t, t_eval[t_eval <= t_floor])  # outputs stop at the event
    # Direction +1 on the floor never fires: the run reaches t1.
    run = kh.adaptive(compiled, "dop853", [kh.BALL, G], (0.0, 2.0), [x0, v0], directions=[1], terminal=[1])
    assert run.status == 0 and run.ev_t.size == 0 and run.t[-1] == 2.0


def test_many_events_match_scipy(compiled: ModuleType) -> None:
    # Van der Pol crosses x = 0 twice per cycle: more events and steps than the first buffers hold (4 events,
    # 64 rows), so adaptive_run runs again with room for all of them; the next call's buffers fit at once.
    pid, params, span, x0 = PROBLEMS["van_der_pol"]
    span = (0.0, 40.0)
    compiled._SIZES[:] = [64, 4]
    run = kh.adaptive(compiled, "dopri5", [pid, *params], span, x0, directions=[0], terminal=[0])

    def crossing(t: float, x: np.ndarray) -> float:
        return x[0]

    ref = solve_ivp(scipy_rhs(pid, params), span, x0, rtol=1e-8, atol=1e-10, events=crossing)
    assert run.status == 0 and run.ev_t.size == ref.t_events[0].size > 4
    assert run.t.size == run.steps + 1 == ref.t.size > 256
    # Every step is there: scipy's steps, equal up to rounding in the error estimate (which moves them by
    # ~1e-7 relative over 40 s), and the states on them.
    assert np.all(np.diff(run.t) > 0) and run.t[-1] == span[1]
    np.testing.assert_allclose(run.t, ref.t, rtol=1e-6, atol=0)
    np.testing.assert_allclose(run.x, ref.y.T, rtol=0, atol=1e-6 * np.abs(ref.y).max())
    assert compiled._SIZES == [run.t.size, run.ev_t.size]
    again = kh.adaptive(compiled, "dopri5", [pid, *params], span, x0, directions=[0], terminal=[0])
    np.testing.assert_array_equal(again.x, run.x)
    np.testing.assert_array_equal(again.ev_t, run.ev_t)
    short = kh.adaptive(compiled, "dopri5", [pid, *params], (0.0, 1.0), x0)  # smaller buffers are not needed
    assert compiled._SIZES == [run.t.size, run.ev_t.size] and short.t[-1] == 1.0 and short.t.size < run.t.size
    np.testing.assert_allclose(run.ev_t, ref.t_events[0], rtol=0, atol=1e-9)  # same steps, same interpolant
    assert np.abs(run.ev_x[:, 0]).max() < 1e-9


# ------------------------------------------------------------------------------------------- stop points

def test_stop_point_input_switch(compiled: ModuleType) -> None:
    a, x0, before, after, switch = 2.0, 0.3, 1.0, -0.5, 0.37
    run = kh.adaptive(compiled, "dopri5", [kh.SWITCHED, a], (0.0, 1.0), [x0], stops=[switch],
                      inp=kh.inputs(before, after, switch), rtol=1e-10, atol=1e-12)
    x_switch = before / a + (x0 - before / a) * math.exp(-a * switch)
    exact = np.where(run.t < switch, before / a + (x0 - before / a) * np.exp(-a * run.t),
                     after / a + (x_switch - after / a) * np.exp(-a * (run.t - switch)))
    assert run.status == 0 and switch in run.t
    assert np.abs(run.x[:, 0] - exact).max() < 1e-9
    # The input output uses the ordinary evaluation: the new piece from the switch on.
    np.testing.assert_array_equal(run.u[:, 0], np.where(run.t < switch, before, after))
    # nfev: f(t0), the initial-step probe, 6 per attempt, and a fresh f at the stop (no FSAL reuse).
    assert run.nfev == 2 + 6 * (run.steps + run.rejected) + 1


# -------------------------------------------------------------------------------------------- statuses

def test_status_step_collapse(compiled: ModuleType) -> None:
    run = kh.adaptive(compiled, "dopri5", [kh.SQUARE], (0.0, 2.0), [1.0])  # x = 1 / (1 - t)
    assert run.status == -1 and abs(run.t_fail - 1.0) < 1e-6 and run.i_fail == 0
    assert run.t[-1] == run.t_fail


def test_status_max_steps(compiled: ModuleType) -> None:
    run = kh.adaptive(compiled, "dopri5", [kh.JOINT, *JOINT], (0.0, 5.0), [0.0, 0.0], max_steps=10)
    assert run.status == -2 and run.steps + run.rejected == 10 and run.t[-1] == run.t_fail < 5.0


@pytest.mark.parametrize("method", ["dopri5", "dop853"])
def test_status_non_finite(compiled: ModuleType, method: str) -> None:
    # x' = -1, y' = sqrt(x): NaN in y' once a stage has x < 0, i.e. past t = 1.
    run = kh.adaptive(compiled, method, [kh.SQRT], (0.0, 2.0), [1.0, 0.0])
    assert run.status == -3 and run.i_fail == 1 and 1.0 - 1e-6 < run.t_fail <= 1.0
    assert np.all(np.isfinite(run.x))
    run = kh.adaptive(compiled, method, [kh.SQRT], (0.0, 2.0), [-1.0, 0.0])  # NaN at t0
    assert run.status == -3 and run.i_fail == 1 and run.t_fail == 0.0 and run.t.tolist() == [0.0]


# ----------------------------------------------------------------------------------------------- batches

@pytest.mark.parametrize("workers", [1, 3])
def test_adaptive_batch_equals_single_runs(compiled: ModuleType, workers: int) -> None:
    # 3 threads over 4 trajectories: 4 pieces, none empty, each written by one thread
    params = np.array([[kh.JOINT, 0.01, 0.1, 1.0], [kh.JOINT, 0.02, 0.3, 2.0], [kh.JOINT, 0.005, 0.05, 1.0],
                       [kh.JOINT, 0.01, 1.0, 0.5]])
    x0 = np.array([[0.0, 0.0], [0.5, -1.0], [1.0, 0.0], [-0.2, 3.0]])
    t_eval = np.linspace(0.0, 3.0, 31)
    batch = _batch(compiled, "dopri5", params, x0, (0.0, 3.0), t_eval, workers=workers)
    for i in range(len(x0)):
        run = kh.adaptive(compiled, "dopri5", params[i], (0.0, 3.0), x0[i], t_eval=t_eval)
        assert batch["status"][i] == run.status == 0 and batch["n_out"][i] == t_eval.size
        assert batch["stats"][i].tolist()[:3] == [run.nfev, run.steps, run.rejected]
        np.testing.assert_array_equal(batch["xs"][i], run.x)
        np.testing.assert_array_equal(batch["us"][i], run.u)


def test_adaptive_batch_events_and_early_ends(compiled: ModuleType) -> None:
    # Balls from several heights: the two that land before t1 stop at their floor event; rows after it are NaN.
    heights = np.array([0.5, 2.0, 20.0])
    params = np.tile([kh.BALL, G], (3, 1))
    x0 = np.stack([heights, np.zeros(3)], axis=1)
    t_eval = np.linspace(0.0, 1.5, 16)
    batch = _batch(compiled, "dop853", params, x0, (0.0, 1.5), t_eval, directions=[-1], terminal=[1], workers=2)
    t_hit = np.sqrt(2.0 * heights / G)
    assert batch["status"].tolist() == [1, 1, 0]  # 20 m takes 2.02 s
    for i in range(3):
        run = kh.adaptive(compiled, "dop853", params[i], (0.0, 1.5), x0[i], t_eval=t_eval, directions=[-1],
                          terminal=[1])
        k = batch["n_out"][i]
        assert k == run.t.size and batch["n_ev"][i] == run.ev_t.size
        np.testing.assert_array_equal(batch["xs"][i, :k], run.x)
        assert np.all(np.isnan(batch["xs"][i, k:]))
        if run.ev_t.size:
            assert batch["ev_t"][i, 0] == run.ev_t[0] and abs(run.ev_t[0] - t_hit[i]) < 1e-12


def test_fixed_batch_equals_single_runs(compiled: ModuleType) -> None:
    tableau = METHODS["rk4"]
    count = 20  # 2 threads, 16 pieces of 1 or 2 trajectories
    rng = np.random.default_rng(3)
    params = np.column_stack([np.full(count, kh.JOINT), rng.uniform(0.005, 0.02, count), rng.uniform(0.05, 1.0, count),
                              rng.uniform(0.5, 2.0, count)])
    x0 = rng.uniform(-1.0, 1.0, (count, 2))
    grid = np.linspace(0.0, 2.0, 201)
    xs, us, nfev = np.full((count, grid.size, 2), np.nan), np.empty((count, grid.size, 1)), np.zeros(count, np.int64)
    fixed_batch(compiled, kh.FNS, np.array(tableau.A), np.array(tableau.b), np.array(tableau.c), grid, np.diff(grid),
                x0, params, kh.inputs(), xs, us, nfev, 2)
    for i in range(count):
        single, single_u, single_nfev = kh.fixed(compiled, "rk4", params[i], grid, x0[i])
        np.testing.assert_array_equal(xs[i], single)
        np.testing.assert_array_equal(us[i], single_u)
        assert nfev[i] == single_nfev == 4 * 200


# ---------------------------------------------------------------------------------- interpreted = compiled

@pytest.mark.parametrize(("method", "problem"), [("dopri5", "van_der_pol"), ("dop853", "lotka_volterra")])
def test_interpreted_equals_compiled(compiled: ModuleType, interpreted: ModuleType, method: str,
                                     problem: str) -> None:
    # Same operations in the same order (no fastmath, explicit loops): the results are bitwise equal.
    pid, params, span, x0 = PROBLEMS[problem]
    options = {"t_eval": np.linspace(*span, 23), "directions": [0], "terminal": [0]}
    runs = [kh.adaptive(module, method, [pid, *params], span, x0, **options) for module in (compiled, interpreted)]
    for field in ("status", "nfev", "steps", "rejected"):
        assert getattr(runs[0], field) == getattr(runs[1], field)
    for field in ("t", "x", "u", "ev_t", "ev_x", "ev_idx"):
        np.testing.assert_array_equal(getattr(runs[0], field), getattr(runs[1], field))
    grid = np.linspace(0.0, 2.0, 101)
    fixed = [kh.fixed(module, "rk4", [pid, *params], grid, x0) for module in (compiled, interpreted)]
    np.testing.assert_array_equal(fixed[0][0], fixed[1][0])


def test_interpreted_failure_statuses(interpreted: ModuleType) -> None:
    with np.errstate(invalid="ignore"):  # the plain-Python sqrt(-1) warns; numba's does not
        run = kh.adaptive(interpreted, "dopri5", [kh.SQRT], (0.0, 2.0), [1.0, 0.0])
    assert run.status == -3 and run.i_fail == 1


def _batch(module: ModuleType, method: str, params: np.ndarray, x0: np.ndarray, span: tuple[float, float],
           t_eval: np.ndarray, directions: list[int] | None = None, terminal: list[int] | None = None,
           workers: int = 1) -> dict[str, np.ndarray]:
    n_traj, n = x0.shape
    capacity = 2
    out = {"xs": np.empty((n_traj, t_eval.size, n)), "us": np.empty((n_traj, t_eval.size, 1)),
           "status": np.empty(n_traj, np.int64), "n_out": np.empty(n_traj, np.int64),
           "stats": np.empty((n_traj, 5), np.int64), "t_fail": np.empty(n_traj), "i_fail": np.empty(n_traj, np.int64),
           "ev_t": np.empty((n_traj, capacity)), "ev_x": np.empty((n_traj, capacity, n)),
           "ev_idx": np.empty((n_traj, capacity), np.int64), "n_ev": np.empty(n_traj, np.int64)}
    adaptive_batch(module, kh.FNS, *METHODS[method].kernel_method(), None, span[0], span[1], x0, params, kh.inputs(),
                   np.empty(0), t_eval, 1e-8, np.full(n, 1e-10), 0.0, math.inf, 100_000,
                   np.array(directions or [], np.int64), np.array(terminal or [], np.int64), *out.values(), workers)
    return out
