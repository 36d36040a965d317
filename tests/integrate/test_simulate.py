"""``robodyn.simulate`` end to end, every path against an independent reference.

References: closed forms (the seed joint's step response, the pendulum's Jacobi-elliptic solution, a
falling ball, a stiff linear decay), a published orbit (Arenstorf, [HNW] I.0 / II.0), scipy's
``solve_ivp`` (the same step-size controller: the same steps) and the paths against each other.

Compilation cost: the compiled tests use few kernel modules — the joint, the pendulum (once without
events, once with the single event expression ``theta``), the Arenstorf system and x' = x^2 — so numba
compiles a handful of modules on a cold cache (they are reused from the user's cache afterwards).
Tests about logic rather than speed run ``backend="interpreted"``.

[HNW] E. Hairer, S. P. Nørsett, G. Wanner, "Solving Ordinary Differential Equations I", 2nd ed., 1993.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp
from scipy.special import ellipj, ellipk

import robodyn
from robodyn import Event, InputError, NumericalError, ShapeError, StateFeedback, UnknownNameError
from robodyn.integrate.simulate import METHOD_NAMES
from robodyn.signals import Pulse, Sine, Step, Table

G = 9.81  # the pendulum's g; with m = l = I = 1 its equation is theta'' = -g sin(theta) + tau
ARENSTORF_MU = 0.012277471
ARENSTORF_X0 = (0.994, 0.0, 0.0, -2.00158510637908252240537862224)
ARENSTORF_PERIOD = 17.0652165601579625588917206249  # [HNW] I.0, eq. (0.2)


# --- models and references ---------------------------------------------------------------------------
def joint() -> robodyn.Model:
    return robodyn.load("joint")  # J q'' + b q' + k q = u, J = 0.01, b = 0.1, k = 1


def pendulum() -> robodyn.Model:
    return robodyn.load("pendulum")


def arenstorf() -> robodyn.SymbolicSystem:
    """The restricted three-body problem in the rotating frame ([HNW] I.0 (0.1)), first order."""
    d1 = "((x + mu)**2 + y**2)**(3/2)"
    d2 = "((x - 1 + mu)**2 + y**2)**(3/2)"
    return robodyn.SymbolicSystem(
        ["x", "y", "vx", "vy"], [],
        {"x": "vx", "y": "vy",
         "vx": f"x + 2*vy - (1 - mu)*(x + mu)/{d1} - mu*(x - 1 + mu)/{d2}",
         "vy": f"y - 2*vx - (1 - mu)*y/{d1} - mu*y/{d2}"},
        parameters={"mu": ARENSTORF_MU}, name="arenstorf",
    )


def van_der_pol() -> robodyn.SymbolicSystem:
    return robodyn.SymbolicSystem(["x", "v"], [], {"x": "v", "v": "mu*(1 - x**2)*v - x"}, parameters={"mu": 1.0},
                                  name="van_der_pol")


def step_response(t: np.ndarray, J: float = 0.01, b: float = 0.1, k: float = 1.0) -> np.ndarray:
    """[q, q'] (T, 2) of J q'' + b q' + k q = 1 from rest at t = 0 (underdamped), zero for t < 0.

    q = (1 - e^(-sigma t) (cos(wd t) + sigma / wd sin(wd t))) / k, q' = e^(-sigma t) wn^2 / wd sin(wd t) / k,
    with wn = sqrt(k / J), sigma = zeta wn, wd = wn sqrt(1 - zeta^2).
    """
    t = np.asarray(t, dtype=float)
    wn = math.sqrt(k / J)
    zeta = b / (2.0 * math.sqrt(k * J))
    sigma, wd = zeta * wn, wn * math.sqrt(1.0 - zeta**2)
    s = np.maximum(t, 0.0)
    decay = np.exp(-sigma * s)
    q = (1.0 - decay * (np.cos(wd * s) + sigma / wd * np.sin(wd * s))) / k
    v = decay * wn**2 / wd * np.sin(wd * s) / k
    return np.where((t >= 0.0)[:, None], np.stack([q, v], axis=1), 0.0)


def pendulum_exact(t: np.ndarray, theta0: float) -> np.ndarray:
    """[theta, theta'] (T, 2) released from rest at theta0: theta = 2 asin(k sn(K(k) - w0 t, k)), k = sin(theta0/2).

    scipy's ellipj/ellipk take the parameter m = k^2; theta' = -2 k w0 cn (since dn = sqrt(1 - k^2 sn^2)).
    """
    k = math.sin(theta0 / 2.0)
    omega0 = math.sqrt(G)
    sn, cn, _, _ = ellipj(ellipk(k * k) - omega0 * np.asarray(t, dtype=float), k * k)
    return np.stack([2.0 * np.arcsin(k * sn), -2.0 * k * omega0 * cn], axis=1)


def quarter_period(theta0: float) -> float:
    """Time from rest at theta0 to the first passage through theta = 0: K(k) / w0."""
    return float(ellipk(math.sin(theta0 / 2.0) ** 2)) / math.sqrt(G)


# --- 1. the seed joint -----------------------------------------------------------------------------------
def test_joint_is_the_seed_model() -> None:
    model = joint()
    assert model.omega_n == pytest.approx(10.0, rel=1e-15)
    assert model.zeta == pytest.approx(0.5, rel=1e-15)


def test_joint_step_dopri5_matches_closed_form() -> None:
    t = np.linspace(0.0, 5.0, 501)
    tr = robodyn.simulate(joint(), 5.0, None, 1.0, method="dopri5", rtol=1e-10, atol=1e-12, t_eval=t)
    assert tr.stats.path == "compiled" and tr.stats.method == "dopri5"
    np.testing.assert_array_equal(tr.t, t)
    # Local errors are held at ~1e-10 (rtol |x| + atol); the joint is damped (sigma = 5 /s), so they do not
    # grow: measured 2.4e-10 over ~600 steps. 1e-8 keeps a 40x margin; a wrong coefficient errs by >= 1e-6.
    assert np.abs(tr.x - step_response(t)).max() < 1e-8


def test_exact_path_delayed_step_on_random_grid() -> None:
    rng = np.random.default_rng(20240601)
    t = np.sort(np.concatenate([rng.uniform(0.0, 5.0, 400), [0.0, 0.37, 5.0]]))
    tr = robodyn.simulate(joint(), 5.0, u=Step(0.37, 0.0, 1.0), t_eval=t)
    assert (tr.stats.path, tr.stats.method) == ("exact", "exact")
    # Matrix exponentials make no truncation error: only rounding (~1e-15) remains, on any grid.
    assert np.abs(tr.x - step_response(t - 0.37)).max() <= 1e-12
    np.testing.assert_array_equal(tr.u[:, 0], np.where(t >= 0.37, 1.0, 0.0))


@settings(max_examples=25, deadline=None)
@given(wn=st.floats(1.0, 20.0), zeta=st.floats(0.05, 0.95), J=st.floats(0.005, 0.5), delay=st.floats(0.0, 2.0))
def test_exact_path_random_joints(wn: float, zeta: float, J: float, delay: float) -> None:
    k = J * wn**2
    b = 2.0 * zeta * math.sqrt(k * J)
    t = np.linspace(0.0, 4.0, 97)
    tr = robodyn.simulate(joint(), 4.0, u=Step(delay, 0.0, 1.0), params={"J": J, "b": b, "k": k}, t_eval=t)
    reference = step_response(t - delay, J, b, k)
    # Rounding only, relative to each component's size (q ~ 1/k, q' ~ wn/k): measured <= 5e-15 over 300
    # random joints including the corners of these ranges.
    assert np.all(np.abs(tr.x - reference).max(axis=0) <= 1e-12 * np.abs(reference).max(axis=0))


# --- 2. the pendulum against its elliptic-function solution ----------------------------------------------
@pytest.mark.parametrize("theta0", [0.5, 2.0, 3.0])
def test_pendulum_dop853_matches_elliptic_solution(theta0: float) -> None:
    t = np.linspace(0.0, 10.0, 1001)
    tr = robodyn.simulate(pendulum(), 10.0, {"theta": theta0}, method="dop853", rtol=1e-12, atol=1e-12, t_eval=t)
    # Local errors ~1e-12; near the separatrix (theta0 = 3) the period depends strongly on the energy, so
    # energy errors become phase errors growing with t: measured 1e-9 there (3e-12 at 0.5). Bound: 1e-8.
    assert np.abs(tr.x - pendulum_exact(t, theta0)).max() < 1e-8


# --- 3. Arenstorf orbit -----------------------------------------------------------------------------------
def test_arenstorf_orbit_closes_after_its_period() -> None:
    tr = robodyn.simulate(arenstorf(), ARENSTORF_PERIOD, ARENSTORF_X0, method="dop853", rtol=1e-12, atol=1e-12)
    assert tr.stats.path == "compiled"
    assert np.abs(tr.x[:, 0]).max() > 1.0  # a real orbit, not a fixed point: it swings around the earth
    # The orbit passes close to the moon, where errors are amplified ~1e5; measured 1.4e-9 at the end.
    assert np.abs(tr.final - np.array(ARENSTORF_X0)).max() < 1e-6


# --- 4. the adaptive controller is scipy's -------------------------------------------------------------
def _scipy_case(name: str) -> tuple[robodyn.Model, list[float], float | None, float, object, str]:
    """(model, x0, u, t1, scipy rhs, backend)."""
    if name == "joint":
        return joint(), [0.0, 0.0], 1.0, 5.0, lambda t, x: [x[1], (1.0 - 0.1 * x[1] - x[0]) / 0.01], "auto"
    if name == "pendulum":
        return pendulum(), [1.0, 0.0], None, 10.0, lambda t, x: [x[1], -G * np.sin(x[0])], "auto"
    return (van_der_pol(), [2.0, 0.0], None, 20.0, lambda t, x: [x[1], (1.0 - x[0] ** 2) * x[1] - x[0]],
            "interpreted")


@pytest.mark.parametrize(("name", "method", "scipy_method"), [
    ("joint", "dopri5", "RK45"), ("pendulum", "dopri5", "RK45"), ("van_der_pol", "dopri5", "RK45"),
    ("pendulum", "dop853", "DOP853"), ("van_der_pol", "dop853", "DOP853"),
])
def test_steps_and_states_match_scipy(name: str, method: str, scipy_method: str) -> None:
    model, x0, u, t1, rhs, backend = _scipy_case(name)
    t = np.linspace(0.0, t1, 201)
    options = {"rtol": 1e-8, "atol": 1e-10}
    free = robodyn.simulate(model, t1, x0, u, method=method, backend=backend, **options)
    sampled = robodyn.simulate(model, t1, x0, u, method=method, backend=backend, t_eval=t, **options)
    reference = solve_ivp(rhs, (0.0, t1), x0, method=scipy_method, **options)
    sampled_reference = solve_ivp(rhs, (0.0, t1), x0, method=scipy_method, t_eval=t, **options)
    accepted = len(reference.t) - 1
    assert abs(free.stats.steps - accepted) <= 0.02 * accepted
    assert abs(sampled.stats.steps - accepted) <= 0.02 * accepted  # output times do not change the steps
    # Same steps, same dense output: differences are rounding in f (measured <= 6e-13)
    expected = sampled_reference.y.T
    assert np.all(np.abs(sampled.x - expected) <= 1e-9 * np.maximum(np.abs(expected), 1.0))


# --- 5. observed orders; the seed's Euler loop ---------------------------------------------------------
@pytest.mark.parametrize(("method", "order", "steps"), [
    ("euler", 1, [4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4]),
    ("heun", 2, [1.6e-2, 8e-3, 4e-3, 2e-3, 1e-3]),
    ("rk4", 4, [2e-2, 1e-2, 5e-3, 2.5e-3, 1.25e-3]),
])
def test_observed_order_on_the_joint(method: str, order: int, steps: list[float]) -> None:
    errors = []
    for dt in steps:
        tr = robodyn.simulate(joint(), 2.0, None, 1.0, method=method, dt=dt)
        assert tr.stats.steps == tr.t.size - 1 == round(2.0 / dt)
        assert tr.stats.nfev == order * tr.stats.steps  # these tableaus have as many stages as their order
        exact = robodyn.simulate(joint(), 2.0, None, 1.0, t_eval=tr.t)
        errors.append(np.abs(tr.x - exact.x).max())
    slope = np.polyfit(np.log(steps), np.log(errors), 1)[0]
    assert abs(slope - order) < 0.3  # h * |lambda| <= 0.2: the asymptotic range (measured 1.008, 2.019, 4.047)


def _euler_loop(h: float, n_steps: int, x0: np.ndarray, f: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The seed's from-scratch loop: x_{k+1} = x_k + h f(x_k)."""
    xs = np.empty((n_steps + 1, x0.size))
    xs[0] = x0
    for k in range(n_steps):
        xs[k + 1] = xs[k] + h * f(xs[k])
    return xs


def _seed_f(x: np.ndarray, u: float = 1.0, J: float = 0.01, b: float = 0.1, k: float = 1.0) -> np.ndarray:
    """The seed's joint right-hand side, as the seed wrote it."""
    return np.array([x[1], (u - b * x[1] - k * x[0]) / J])


def test_euler_reproduces_the_seed_loop() -> None:
    seed = _euler_loop(1e-3, 5000, np.zeros(2), _seed_f)
    tr = robodyn.simulate(joint(), 5.0, None, 1.0, method="euler", dt=1e-3)
    assert tr.t.size == 5001
    np.testing.assert_allclose(tr.t, 1e-3 * np.arange(5001), rtol=0, atol=1e-15)
    assert np.all(tr.u == 1.0)
    # The same scheme with the same steps; only f's rounding differs: the generated f adds the terms in
    # sympy's order and divides by sqrt(J) twice (Cholesky). Measured 2.2e-15 = 4e-16 of the largest state.
    assert np.abs(tr.x - seed).max() <= 1e-15 * np.abs(seed).max()


def test_euler_with_the_seed_f_is_bit_exact() -> None:
    plain = robodyn.System(lambda t, x, u, p: _seed_f(x, u[0]), ["q", "q_dot"], ["u"])
    tr = robodyn.simulate(plain, 5.0, None, 1.0, method="euler", dt=1e-3)
    np.testing.assert_array_equal(tr.x, _euler_loop(1e-3, 5000, np.zeros(2), _seed_f))
    # x' = 1 makes f exact: the loop accumulates x_{k+1} = x_k + dt, so every full step must be exactly dt
    ramp = robodyn.SymbolicSystem(["x"], [], {"x": "1"}, name="ramp")
    steps = robodyn.simulate(ramp, 5.0, [0.0], method="euler", dt=1e-3, backend="interpreted")
    np.testing.assert_array_equal(steps.x, _euler_loop(1e-3, 5000, np.zeros(1), lambda x: np.ones(1)))


# --- 6. compiled, interpreted, plain Python ------------------------------------------------------------
@pytest.mark.parametrize(("method", "dt"), [("dopri5", None), ("dop853", None), ("rk4", 1e-2)])
def test_compiled_and_interpreted_agree(method: str, dt: float | None) -> None:
    options = {"rtol": 1e-10, "atol": 1e-12, "dt": dt}
    compiled = robodyn.simulate(pendulum(), 10.0, {"theta": 1.0}, method=method, **options)
    interpreted = robodyn.simulate(pendulum(), 10.0, {"theta": 1.0}, method=method, backend="interpreted", **options)
    assert (compiled.stats.path, interpreted.stats.path) == ("compiled", "interpreted")
    assert compiled.stats.steps == interpreted.stats.steps
    np.testing.assert_array_equal(compiled.t, interpreted.t)
    # One kernel source, run by numba or by Python: only libm-level differences in sin could remain.
    assert np.abs(compiled.x - interpreted.x).max() <= 1e-13


def test_python_system_runs_interpreted_and_agrees_with_symbolic_model() -> None:
    def f(t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> list[float]:
        mass, g, length, inertia = p
        return [x[1], (u[0] - mass * g * length * np.sin(x[0])) / inertia]

    plain = robodyn.System(f, ["theta", "theta_dot"], ["tau"], parameters={"m": 1.0, "g": G, "l": 1.0, "I": 1.0})
    t = np.linspace(0.0, 10.0, 201)
    a = robodyn.simulate(plain, 10.0, {"theta": 1.0}, method="dopri5", rtol=1e-10, atol=1e-12, t_eval=t)
    b = robodyn.simulate(pendulum(), 10.0, {"theta": 1.0}, method="dopri5", rtol=1e-10, atol=1e-12, t_eval=t)
    assert a.stats.path == "interpreted"
    assert np.abs(a.x - b.x).max() <= 1e-10  # same method and tolerances; measured bit-identical


def test_backend_compiled_needs_a_symbolic_model() -> None:
    plain = robodyn.System(lambda t, x, u, p: [-x[0]], ["x"])
    with pytest.raises(InputError, match="backend='auto'"):
        robodyn.simulate(plain, 1.0, [1.0], backend="compiled")


def test_wrong_shape_from_a_python_f_is_a_shape_error() -> None:
    bad = robodyn.System(lambda t, x, u, p: [1.0, 2.0, 3.0], ["a", "b"])
    for method, dt in (("dopri5", None), ("rk4", 0.1), ("radau", None)):
        with pytest.raises(ShapeError, match=r"f returned shape \(3,\), expected \(2,\)"):
            robodyn.simulate(bad, 1.0, method=method, dt=dt)


# --- 7. inputs -----------------------------------------------------------------------------------------
def test_short_pulse_in_a_long_step_region_is_not_stepped_over() -> None:
    t_pulse, width, amplitude, t1 = 2.5, 1e-3, 10.0, 3.0
    x0 = [1.0, 0.0]
    free = robodyn.simulate(joint(), t1, x0, method="dopri5")
    kicked = robodyn.simulate(joint(), t1, x0, Pulse(t_pulse, width, amplitude), method="dopri5")
    i = np.searchsorted(free.t, t_pulse)
    assert free.t[i] - free.t[i - 1] > 20 * width  # without stop points the controller would stride over it
    assert 2.5 in kicked.t and 2.5 + width in kicked.t  # the kernel stops on both edges
    assert kicked.u[kicked.t == 2.5, 0] == amplitude
    # Linearity: the pulse adds A (s(t - t_p) - s(t - t_p - w)), s the unit step response.
    effect = amplitude * (step_response(np.array([t1 - t_pulse])) - step_response(np.array([t1 - t_pulse - width])))[0]
    assert np.abs(effect).max() > 1e-3
    # default tolerances (rtol 1e-6, atol 1e-9): measured 1.4e-8; skipping the pulse would err by ~1e-2
    np.testing.assert_allclose(kicked.final - free.final, effect, rtol=0, atol=1e-6)


def test_state_feedback_holds_the_inverted_pendulum() -> None:
    # Near theta = pi, phi = theta - pi: phi'' = g phi + tau, A = [[0, 1], [g, 0]], B = [[0], [1]].
    # tau = -K (x - x_ref) gives s^2 + k2 s + (k1 - g): poles -2 and -3 for k1 = g + 6, k2 = 5.
    K = np.array([[G + 6.0, 5.0]])
    upright = np.array([math.pi, 0.0])
    x0 = {"theta": math.pi - 0.5}
    held = robodyn.simulate(pendulum(), 10.0, x0, StateFeedback(K, x_ref=upright), rtol=1e-10, atol=1e-12)
    fallen = robodyn.simulate(pendulum(), 10.0, x0, rtol=1e-10, atol=1e-12)
    assert held.stats.path == "compiled"
    np.testing.assert_allclose(held.u[0], -K @ (np.array([math.pi - 0.5, 0.0]) - upright), rtol=1e-15)
    assert np.abs(held.final - upright).max() < 1e-6  # decays like e^{-2t}: ~1e-9 left at t = 10
    assert np.abs(fallen.x[:, 0] - math.pi).max() > 1.0  # without feedback it falls


@pytest.mark.parametrize("interpolation", ["linear", "zoh"])
def test_table_input_matches_exact_path(interpolation: str) -> None:
    table = Table([0.0, 0.5, 1.0, 2.0], [0.0, 1.0, -1.0, 0.5], interpolation)
    t = np.linspace(0.0, 3.0, 301)
    tr = robodyn.simulate(joint(), 3.0, u=table, method="dopri5", rtol=1e-10, atol=1e-12, t_eval=t)
    exact = robodyn.simulate(joint(), 3.0, u=table, t_eval=t)
    assert exact.stats.path == "exact"
    np.testing.assert_array_equal(tr.u[:, 0], table(t))
    assert np.abs(tr.x - exact.x).max() < 1e-8  # tolerance-limited as in the step test (measured 3.5e-10)


def test_python_input_function_of_state_runs_interpreted() -> None:
    # u = 1 - 3 q turns J q'' + b q' + q = u into J q'' + b q' + 4 q = 1: the closed form with k = 4.
    t = np.linspace(0.0, 3.0, 301)
    tr = robodyn.simulate(joint(), 3.0, None, lambda t, x: np.array([1.0 - 3.0 * x[0]]), method="dopri5",
                          rtol=1e-10, atol=1e-12, t_eval=t)
    assert tr.stats.path == "interpreted"
    assert np.abs(tr.x - step_response(t, k=4.0)).max() < 1e-8
    np.testing.assert_allclose(tr.u[:, 0], 1.0 - 3.0 * tr.x[:, 0], rtol=0, atol=1e-15)
    by_name = robodyn.simulate(joint(), 3.0, None, {"u": lambda t: 1.0}, rtol=1e-10, atol=1e-12, method="dopri5",
                               t_eval=t)
    assert by_name.stats.path == "interpreted"
    assert np.abs(by_name.x - step_response(t)).max() < 1e-8
    with pytest.raises(InputError, match="no exact form"):
        robodyn.simulate(joint(), 3.0, None, lambda t, x: np.array([1.0]))


def test_fixed_step_holds_inputs_over_each_step() -> None:
    tr = robodyn.simulate(joint(), 0.05, None, Step(0.0205, 0.0, 1.0), method="euler", dt=0.01)
    np.testing.assert_array_equal(tr.u[:, 0], [0.0, 0.0, 0.0, 1.0, 1.0, 1.0])  # sampled at each step's start


# --- 8. events -----------------------------------------------------------------------------------------
def _pendulum_events(event: Event, theta0: float = 1.0, **options: object) -> robodyn.Trajectory:
    return robodyn.simulate(pendulum(), 10.0, {"theta": theta0}, method="dop853", rtol=1e-12, atol=1e-12,
                            events=event, **options)


def test_all_crossings_are_recorded_in_order() -> None:
    tr = _pendulum_events(Event("theta"))
    quarter = quarter_period(1.0)
    expected = quarter * (2 * np.arange(len(tr.events)) + 1)  # every half period after the first quarter
    assert len(tr.events) == math.floor((10.0 / quarter - 1) / 2) + 1
    # located to 1e-12 on the dense output; the solution itself is good to ~1e-12 (measured <= 3.3e-13)
    np.testing.assert_allclose([e.t for e in tr.events], expected, rtol=0, atol=1e-10)
    assert all(e.name == "theta" and not e.terminal for e in tr.events)
    assert all(abs(e.x[0]) < 1e-12 for e in tr.events)
    assert tr.t[-1] == 10.0  # non-terminal: the run goes on


def test_event_direction_selects_rising_crossings() -> None:
    tr = _pendulum_events(Event("theta", direction=1))
    quarter = quarter_period(1.0)
    np.testing.assert_allclose([e.t for e in tr.events], quarter * (4 * np.arange(len(tr.events)) + 3),
                               rtol=0, atol=1e-10)
    assert all(e.x[1] > 0 for e in tr.events)


def test_terminal_event_ends_the_trajectory() -> None:
    tr = _pendulum_events(Event("theta", direction=-1, terminal=True, name="bottom"))
    (event,) = tr.events
    assert (event.name, event.terminal) == ("bottom", True)
    assert abs(event.t - quarter_period(1.0)) < 1e-10
    assert tr.t[-1] == event.t
    np.testing.assert_array_equal(tr.final, event.x)
    # the speed at the bottom from energy conservation: theta' = -sqrt(2 g (1 - cos theta0))
    assert event.x[1] == pytest.approx(-math.sqrt(2 * G * (1 - math.cos(1.0))), abs=1e-10)
    sampled = _pendulum_events(Event("theta", direction=-1, terminal=True), t_eval=np.linspace(0, 10, 101))
    assert sampled.t[-1] == 0.5 and sampled.events[0].t == event.t  # output stops at the last t_eval before it


def test_stiff_path_locates_the_same_event() -> None:
    tr = robodyn.simulate(pendulum(), 10.0, {"theta": 1.0}, method="radau", rtol=1e-10, atol=1e-12,
                          events=Event("theta", direction=-1, terminal=True))
    assert abs(tr.events[0].t - quarter_period(1.0)) < 1e-8  # scipy's root finder on radau's dense output


def test_falling_ball_with_a_python_event() -> None:
    ball = robodyn.System(lambda t, x, u, p: [x[1], -G], ["h", "v"], name="ball")
    tr = robodyn.simulate(ball, 5.0, [10.0, 0.0], events=Event(lambda t, x, u, p: x[0], direction=-1, terminal=True))
    assert tr.stats.path == "interpreted"
    # dopri5's dense output is exact for a parabola: only the root finder's 1e-12 bracket remains
    assert abs(tr.t[-1] - math.sqrt(2 * 10.0 / G)) < 1e-10
    assert tr.final[1] == pytest.approx(-math.sqrt(2 * G * 10.0), abs=1e-9)


def test_event_errors() -> None:
    with pytest.raises(InputError, match="exact path"):
        robodyn.simulate(joint(), 1.0, [1.0, 0.0], events="q")
    with pytest.raises(InputError, match="did you mean 'theta'"):
        robodyn.simulate(pendulum(), 1.0, events="thetaa")
    with pytest.raises(InputError, match="direction"):
        Event("theta", direction=2)
    with pytest.raises(InputError, match="events must be"):
        robodyn.simulate(pendulum(), 1.0, events=5)


# --- 9. batches ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("method", "dt"), [("dopri5", None), ("rk4", 1e-2), ("exact", None)])
def test_batch_equals_single_runs(method: str, dt: float | None) -> None:
    rng = np.random.default_rng(7)
    N = 5
    x0, ks, bs = rng.normal(size=(N, 2)), rng.uniform(0.5, 2.0, N), rng.uniform(0.05, 0.2, N)
    t = None if dt else np.linspace(0.0, 3.0, 61)
    options = {"method": method, "dt": dt, "t_eval": t, "rtol": 1e-9, "atol": 1e-11}
    batch = robodyn.simulate(joint(), 3.0, x0, 1.0, params={"k": ks, "b": bs}, **options)
    assert isinstance(batch, robodyn.BatchTrajectory)
    T = batch.t.size
    assert batch.x.shape == (N, T, 2) and batch.u.shape == (N, T, 1)
    np.testing.assert_array_equal(batch.x0, x0)
    np.testing.assert_array_equal(batch.params[:, 2], ks)  # J, b, k
    for i in range(N):
        single = robodyn.simulate(joint(), 3.0, x0[i], 1.0, params={"k": ks[i], "b": bs[i]}, **options)
        np.testing.assert_array_equal(single.t, batch.t)
        assert np.abs(single.x - batch.x[i]).max() <= 1e-12  # the same kernel per trajectory (measured: equal)
        np.testing.assert_array_equal(batch[i].x, batch.x[i])


def test_batch_from_parameter_array_and_state_mapping() -> None:
    params = np.array([[0.01, 0.1, 1.0], [0.02, 0.1, 1.0]])
    batch = robodyn.simulate(joint(), 1.0, {"q": [1.0, 2.0]}, params=params, t_eval=[0.0, 0.5, 1.0])
    assert batch.x.shape == (2, 3, 2)
    np.testing.assert_array_equal(batch.x[:, 0, 0], [1.0, 2.0])
    assert batch.stats.path == "exact"


def test_batch_size_mismatch_is_a_shape_error() -> None:
    with pytest.raises(ShapeError, match="3 rows but params has 2"):
        robodyn.simulate(joint(), 1.0, np.zeros((3, 2)), params={"k": [1.0, 2.0]})
    with pytest.raises(ShapeError, match="N values"):
        robodyn.simulate(joint(), 1.0, params={"k": [1.0, 2.0], "b": [0.1, 0.2, 0.3]})
    with pytest.raises(ShapeError, match=r"expected \(N, 2\)"):
        robodyn.simulate(joint(), 1.0, np.zeros((3, 3)))


def filter_with_outputs() -> robodyn.SymbolicSystem:
    """x' = -a x + w with outputs in t, x, u and the parameters (one of them in the parameters alone)."""
    return robodyn.SymbolicSystem(["x"], ["w"], {"x": "-a*x + w"}, parameters={"a": 3.0, "c": 2.0},
                                  outputs={"scaled": "c*x", "speed": "-a*x + w", "clock": "t", "gain": "a*c"},
                                  name="filter")


@pytest.mark.parametrize("params", [None, {"a": [1.0, 2.0, 4.0]}, {"a": [1.0, 2.0, 4.0], "c": [2.0, 2.0, 2.0]},
                                    {"a": [1.0, 2.0, 4.0], "c": [0.5, 1.0, 2.0]}])
def test_batch_outputs_are_each_runs_outputs(params: dict | None) -> None:
    """A batch's outputs, computed in one call for all runs, equal those of the runs made one at a time."""
    model, u = filter_with_outputs(), Sine(0.5, 1.0)
    x0 = np.array([[1.0], [0.5], [-1.0]])
    options = {"method": "dopri5", "t_eval": np.linspace(0.0, 1.0, 11), "backend": "interpreted"}
    batch = robodyn.simulate(model, 1.0, x0, u, params=params, **options)
    assert isinstance(batch, robodyn.BatchTrajectory) and batch.y.shape == (3, 11, 4)
    for i in range(3):
        own = {k: v[i] for k, v in (params or {}).items()}
        single = robodyn.simulate(model, 1.0, x0[i], u, params=own, **options)
        np.testing.assert_allclose(batch.y[i], single.y, rtol=1e-14, atol=1e-15)
        a, c = batch.params[i]
        np.testing.assert_allclose(batch.y[i], np.column_stack(
            [c * batch.x[i, :, 0], -a * batch.x[i, :, 0] + batch.u[i, :, 0], batch.t, np.full(11, a * c)]),
            rtol=1e-15, atol=1e-15)


def test_batch_outputs_of_a_python_model() -> None:
    plain = robodyn.System(lambda t, x, u, p: [-p[0] * x[0]], ["x"], h=lambda t, x, u, p: [x[0] * p[0], t],
                           outputs=["ax", "clock"], parameters={"a": 1.0})
    batch = robodyn.simulate(plain, 1.0, [[1.0], [2.0]], params={"a": [1.0, 3.0]}, t_eval=[0.0, 0.5, 1.0])
    assert batch.stats.path == "interpreted"
    np.testing.assert_allclose(batch.y[:, :, 0], batch.x[:, :, 0] * np.array([[1.0], [3.0]]), rtol=1e-15)
    np.testing.assert_array_equal(batch.y[:, :, 1], [[0.0, 0.5, 1.0]] * 2)


@pytest.mark.parametrize("method", ["dopri5", "exact"])
def test_results_are_read_only_and_share_no_memory_with_the_arguments(method: str) -> None:
    t_eval, x0 = np.linspace(0.0, 1.0, 11), np.array([[1.0, 0.0], [0.5, 0.0]])
    params = np.array([[0.01, 0.1, 1.0], [0.01, 0.2, 1.0]])
    single = robodyn.simulate(joint(), 1.0, x0[0], 1.0, method=method, t_eval=t_eval)
    batch = robodyn.simulate(joint(), 1.0, x0, 1.0, method=method, t_eval=t_eval, params=params)
    arrays = [getattr(single, k) for k in ("t", "x", "u", "y")]
    arrays += [getattr(batch, k) for k in ("t", "x", "u", "y", "x0", "params")]
    for array in arrays:
        assert not array.flags.writeable
        assert not any(np.shares_memory(array, argument) for argument in (t_eval, x0, params))
    assert t_eval.flags.writeable and x0.flags.writeable and params.flags.writeable
    # y = x (no outputs declared): one read-only array serves both, so nothing can change one but not the other
    assert single.y is single.x and batch.y is batch.x
    assert batch.events == ((), ())


# --- 10. stiff methods -----------------------------------------------------------------------------------
def stiff_decay(a: float) -> robodyn.SymbolicSystem:
    return robodyn.SymbolicSystem(["x"], [], {"x": "-a*(x - cos(t))"}, parameters={"a": a}, name="stiff_decay")


STIFF = ["radau", "rosenbrock", "scipy-radau", "scipy-bdf", "lsoda"]


@pytest.mark.parametrize("method", STIFF)
def test_stiff_methods_on_a_stiff_decay(method: str) -> None:
    a = 1000.0
    t = np.linspace(0.0, 2.0, 201)
    tr = robodyn.simulate(stiff_decay(a), 2.0, [0.0], method=method, rtol=1e-10, atol=1e-12, t_eval=t)
    path = "stiff" if method.startswith("scipy") or method == "lsoda" else "compiled"
    assert (tr.stats.path, tr.stats.method) == (path, method)
    # x = A cos t + B sin t - A e^{-a t}, A = a^2 / (1 + a^2), B = a / (1 + a^2)
    A, B = a * a / (1 + a * a), a / (1 + a * a)
    exact = A * np.cos(t) + B * np.sin(t) - A * np.exp(-a * t)
    # tolerances 1e-10: global errors (incl. the dense output between steps) measured <= 2.2e-10
    assert np.abs(tr.x[:, 0] - exact).max() < 1e-8


@pytest.mark.parametrize("method", STIFF)
def test_stiff_methods_on_robertson(method: str) -> None:
    robertson = robodyn.SymbolicSystem(
        ["y1", "y2", "y3"], [],
        {"y1": "-0.04*y1 + 1e4*y2*y3", "y2": "0.04*y1 - 1e4*y2*y3 - 3e7*y2**2", "y3": "3e7*y2**2"},
        name="robertson")
    tr = robodyn.simulate(robertson, 1e5, [1.0, 0.0, 0.0], method=method, rtol=1e-8, atol=1e-12)
    reference = solve_ivp(lambda t, y: [-0.04 * y[0] + 1e4 * y[1] * y[2],
                                        0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2, 3e7 * y[1] ** 2],
                          (0.0, 1e5), [1.0, 0.0, 0.0], method="Radau", rtol=1e-12, atol=1e-16).y[:, -1]
    assert abs(tr.final.sum() - 1.0) < 1e-9  # the three concentrations are conserved
    # rtol 1e-8 over ~1000 steps: measured <= 1.4e-7 relative (bdf)
    np.testing.assert_allclose(tr.final, reference, rtol=1e-6)


def test_explicit_method_on_a_very_stiff_problem_suggests_radau() -> None:
    with pytest.raises(NumericalError, match=r"more than 1000 steps.*method='radau'"):
        robodyn.simulate(stiff_decay(1e6), 10.0, [0.0], max_steps=1000, backend="interpreted")


# --- 11. bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("args", "kwargs", "error", "match"), [
    ((1.0, [np.nan, 0.0]), {}, InputError, "not finite"),
    ((1.0, {"q": np.inf}), {}, InputError, "x0 contains non-finite"),
    ((1.0,), {"params": {"k": np.nan}}, InputError, "params contains non-finite"),
    ((1.0,), {"params": [0.01, np.inf, 1.0]}, InputError, "not finite"),
    ((1.0, [1.0, 2.0, 3.0]), {}, ShapeError, r"expected \(2,\)"),
    ((1.0, "abc"), {}, InputError, "x0 must be numbers"),
    ((1.0,), {"params": {"k": "stiff"}}, InputError, r"params\['k'\] must be numbers"),
    (((1.0, 1.0),), {}, InputError, "must be greater than t0"),
    ((-1.0,), {}, InputError, "must be greater than t0"),
    ((np.inf,), {}, InputError, "t_final must be finite"),
    ((1.0,), {"method": "rk4", "dt": 0.0}, InputError, "dt must be a positive number"),
    ((1.0,), {"method": "rk4", "dt": -1e-3}, InputError, "dt must be a positive number"),
    ((1.0,), {"method": "rk4", "dt": "0.1"}, InputError, "dt must be a positive number"),
    ((1.0,), {"method": "euler"}, InputError, "give dt"),
    ((1.0,), {"method": "rk4", "dt": 0.1, "t_eval": [0.5]}, InputError, "instead of t_eval"),
    ((1.0,), {"method": "rk45"}, InputError, ", ".join(METHOD_NAMES)),
    ((1.0,), {"method": 4}, InputError, "method must be a name"),
    ((1.0,), {"rtol": 0.0}, InputError, "rtol must be a positive number"),
    ((1.0,), {"rtol": "tight", "method": "dopri5"}, InputError, "rtol must be a positive number"),
    ((1.0,), {"atol": [1e-9, 1e-9, 1e-9]}, InputError, "atol must be"),
    ((1.0,), {"t_eval": [0.5, 0.2]}, InputError, "sorted"),
    ((1.0,), {"t_eval": "later"}, InputError, "t_eval must be numbers"),
    ((1.0,), {"max_steps": 0}, InputError, "max_steps"),
    ((1.0,), {"backend": "gpu"}, InputError, "backend"),
    ((1.0, {"qq": 1.0}), {}, UnknownNameError, "did you mean 'q'"),
    ((1.0, None, {"tau": 1.0}), {}, UnknownNameError, "unknown input 'tau'"),
    ((1.0,), {"params": {"kk": 1.0}}, UnknownNameError, "unknown parameter 'kk'"),
    ((1.0, None, [1.0, 2.0]), {}, ShapeError, "input vector"),
])
def test_bad_input_raises_robodyn_errors(args: tuple, kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        robodyn.simulate(joint(), *args, **kwargs)


def test_blow_up_names_time_and_state() -> None:
    square = robodyn.SymbolicSystem(["x"], [], {"x": "x**2"}, name="square")  # x = 1 / (1 - t)
    with pytest.raises(NumericalError, match=r"t = 1\.00\d* \(state x\)"):
        robodyn.simulate(square, 2.0, [1.0], method="rk4", dt=1e-3)  # compiled
    with pytest.raises(NumericalError, match=r"t = 1\.00000\d* \(state x\)"):
        robodyn.simulate(square, 2.0, [1.0], backend="interpreted")


@pytest.mark.parametrize("method", ["rk4", "dopri5"])
def test_blow_up_in_a_batch_names_the_trajectory_time_and_state(method: str) -> None:
    # y = y0 / (1 - y0 t) blows up at t = 1 / y0: trajectories 2 and 3 fail before t1 = 0.9, and the error names
    # the first of them (in batch order) with its own time, as the runs are independent
    square = robodyn.SymbolicSystem(["x", "y"], [], {"x": "-x", "y": "y**2"}, name="square")
    dt = 1e-3 if method == "rk4" else None
    with pytest.raises(NumericalError, match=r"trajectory 2 of the batch: .* t = 0\.50\d* \(state y\)"):
        robodyn.simulate(square, 0.9, np.array([[1.0, 0.5], [1.0, 1.0], [1.0, 2.0], [1.0, 4.0]]), method=method,
                         dt=dt)


@pytest.mark.parametrize(("method", "dt", "when"), [
    ("dopri5", None, r"t = 0\.5\b"), ("rk4", 1e-2, r"t = 0\.5\d*"), ("radau", None, r"t = 0\.5\d*"),
])
def test_nan_from_sqrt_of_negative_names_time_and_state(method: str, dt: float | None, when: str) -> None:
    root = robodyn.SymbolicSystem(["x", "y"], [], {"x": "-1", "y": "sqrt(x)"}, name="root")  # x < 0 after t = 0.5
    with pytest.warns(RuntimeWarning), pytest.raises(NumericalError, match=when + r".*\(state y\)"):
        robodyn.simulate(root, 2.0, [0.5, 0.0], method=method, dt=dt, backend="interpreted")


def test_batch_keeps_each_trajectorys_events() -> None:
    """Events in a batch equal the events of the same runs made one at a time (the same kernel core)."""
    pendulum = robodyn.load("pendulum")
    options = {"events": [robodyn.Event("theta", direction=-1)], "rtol": 1e-10, "atol": 1e-12,
               "t_eval": np.linspace(0.0, 3.0, 31)}
    amplitudes = [0.5, 1.0, 2.0]
    batch = robodyn.simulate(pendulum, 3.0, {"theta": amplitudes}, **options)
    for i, amplitude in enumerate(amplitudes):
        single = robodyn.simulate(pendulum, 3.0, {"theta": amplitude}, **options)
        assert [e.t for e in batch.events[i]] == pytest.approx([e.t for e in single.events], abs=1e-12)
        assert batch[i].events == batch.events[i]


# --- repeated calls reuse their plan, never a stale one -------------------------------------------------
def test_repeated_calls_reuse_the_plan_and_report_no_compilation() -> None:
    joint = robodyn.load("joint")
    first = robodyn.simulate(joint, 1.0, [0.0, 0.0], Step(0.2, 0.0, 1.0), method="dopri5")
    again = robodyn.simulate(joint, 1.0, [0.0, 0.0], Step(0.2, 0.0, 1.0), method="dopri5")
    np.testing.assert_array_equal(first.x, again.x)
    assert again.stats.compile_seconds == 0.0
    assert len(joint.memo()["simulate plans"]) >= 1


@pytest.mark.parametrize(("u1", "u2"), [(1.0, 2.0), (1, 1.0), (Step(0.2, 0.0, 1.0), Step(0.3, 0.0, 1.0)),
                                          ({"u": 1.0}, {"u": -1.0}), (np.array([1.0]), np.array([2.0]))])
def test_a_different_input_is_never_served_from_the_cache(u1, u2) -> None:
    """The cache key distinguishes values (and types): each result matches the exact path for its own u.

    dopri5 at rtol 1e-10 / atol 1e-12 is within ~1e-9 of the exact solution, while the inputs compared
    here change the solution by O(0.1): a stale plan could not pass.
    """
    joint = robodyn.load("joint")
    for u in (u1, u2, u1):
        cached = robodyn.simulate(joint, 1.0, [0.0, 0.0], u, method="dopri5", rtol=1e-10, atol=1e-12)
        exact = robodyn.simulate(joint, 1.0, [0.0, 0.0], u, method="exact", t_eval=cached.t)
        np.testing.assert_allclose(cached.x, exact.x, rtol=0, atol=1e-8)


def test_mutating_an_array_input_between_calls_is_seen() -> None:
    joint = robodyn.load("joint")
    u = np.array([1.0])
    before = robodyn.simulate(joint, 1.0, [0.0, 0.0], u, method="dopri5").final
    u[0] = -1.0
    after = robodyn.simulate(joint, 1.0, [0.0, 0.0], u, method="dopri5").final
    np.testing.assert_allclose(after, -before, rtol=1e-12)
