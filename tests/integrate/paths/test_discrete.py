"""Discrete-time systems: simulate() steps x[k+1] = A x[k] + B u[k] (robodyn.integrate.paths.discrete), and every
analysis of differential equations refuses them.

The recursion by hand and simulate() make the same products: 1e-12 (relative to the state). The sampled joint
(zero-order hold, dt = 0.01) against the continuous exact path at the samples: both are matrix exponentials of
the same generator, ~1e-15 per step over 100-300 steps, so 1e-10 keeps a wide margin.
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np
import pytest

import robodyn
from cli_run import one_line, run  # tests/cli_run.py
from robodyn import InputError, LinearSystem, NumericalError, StateFeedback
from robodyn.integrate.methods.registry import REGISTRY
from robodyn.signals import Sine, Step

DT = 0.01


@functools.cache
def joint() -> LinearSystem:
    return robodyn.linearize(robodyn.load("joint"), [0.0, 0.0])


@functools.cache
def sampled() -> LinearSystem:
    return joint().discretize(DT)


def by_hand(system: LinearSystem, x0: np.ndarray, u: np.ndarray) -> np.ndarray:
    """x[k+1] = A_d x[k] + B_d u[k] for the inputs u (K+1, m): the states (K+1, n)."""
    x = [np.asarray(x0, dtype=float)]
    for k in range(u.shape[0] - 1):
        x.append(system.A @ x[-1] + system.B @ u[k])
    return np.array(x)


def close(actual: np.ndarray, expected: np.ndarray, rtol: float) -> None:
    scale = max(float(np.max(np.abs(expected))), 1e-300)
    assert actual.shape == expected.shape and float(np.max(np.abs(actual - expected))) <= rtol * scale


# --- the recursion ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("u", [1.0, Step(0.5, 0.0, 2.0), Sine(0.7, 3.0, 0.2)])
def test_simulate_is_the_recursion(u: object) -> None:
    system = sampled()
    run = robodyn.simulate(system, 1.0, [0.1, -0.2], u)
    t = DT * np.arange(101)
    np.testing.assert_allclose(run.t, t, rtol=0, atol=1e-15)
    inputs = np.array([[float(np.asarray(u(tk) if callable(u) else u))] for tk in t])
    np.testing.assert_array_equal(run.u, inputs)  # sampled at t_k
    close(run.x, by_hand(system, np.array([0.1, -0.2]), inputs), 1e-12)
    close(run.y, run.x @ system.C.T + run.u @ system.D.T, 1e-15)
    assert (run.stats.path, run.stats.method, run.stats.steps) == ("discrete", "discrete", 100)


def test_zero_order_hold_equals_the_continuous_exact_path_at_the_samples() -> None:
    t = DT * np.arange(301)
    for u in (1.0, Step(1.0, 0.0, 1.0)):  # a step at a sample instant is held exactly by the ZOH
        discrete = robodyn.simulate(sampled(), 3.0, [0.0, 0.0], u)
        continuous = robodyn.simulate(joint(), 3.0, [0.0, 0.0], u, method="exact", t_eval=t)
        close(discrete.x, continuous.x, 1e-10)


def test_t_eval_holds_the_last_sample() -> None:
    run = robodyn.simulate(sampled(), 1.0, [0.0, 0.0], Step(0.5, 0.0, 1.0), t_eval=[0.0, 0.005, 0.5, 0.515, 1.0])
    full = robodyn.simulate(sampled(), 1.0, [0.0, 0.0], Step(0.5, 0.0, 1.0))
    np.testing.assert_array_equal(run.t, [0.0, 0.005, 0.5, 0.515, 1.0])
    for time_, k in zip(run.t, [0, 0, 50, 51, 100]):
        np.testing.assert_array_equal(run.x[list(run.t).index(time_)], full.x[k])
    np.testing.assert_array_equal(run.u[:, 0], [0.0, 0.0, 1.0, 1.0, 1.0])


def test_the_span_ends_at_the_last_sample_instant() -> None:
    run = robodyn.simulate(sampled(), (0.2, 0.255), [1.0, 0.0])
    np.testing.assert_allclose(run.t, [0.2, 0.21, 0.22, 0.23, 0.24, 0.25], rtol=0, atol=1e-15)


def test_state_feedback_and_input_functions_close_the_loop_step_by_step() -> None:
    system, K = sampled(), np.array([[2.0, 0.1]])
    run = robodyn.simulate(system, 0.5, [1.0, 0.0], StateFeedback(K))
    x = [np.array([1.0, 0.0])]
    for _ in range(50):
        x.append(system.A @ x[-1] + system.B @ (-K @ x[-1]))
    close(run.x, np.array(x), 1e-12)
    np.testing.assert_allclose(run.u[:, 0], -(np.array(x) @ K.T)[:, 0], rtol=1e-12, atol=1e-15)
    function = robodyn.simulate(system, 0.5, [1.0, 0.0], lambda t, x: -K @ x)
    close(function.x, run.x, 1e-12)


def test_a_batch_of_initial_states() -> None:
    batch = robodyn.simulate(sampled(), 0.3, np.array([[0.0, 0.0], [1.0, 0.0]]), 1.0)
    assert batch.x.shape == (2, 31, 2) and batch.stats.path == "discrete"
    close(batch.x[1], by_hand(sampled(), np.array([1.0, 0.0]), np.ones((31, 1))), 1e-12)


def test_an_unstable_recursion_overflows_as_a_numerical_error() -> None:
    with pytest.raises(NumericalError, match=r"discrete: the state is not finite at t = 1024"):
        robodyn.simulate(LinearSystem([[2.0]], dt=1.0), 2000.0, [1.0])
    with pytest.raises(NumericalError, match=r"not finite"):  # state feedback stops at the overflow
        robodyn.simulate(LinearSystem([[2.0]], [[1.0]], dt=1.0), 2000.0, [1.0], StateFeedback([[0.0]]))


# --- what the discrete path refuses, before any work --------------------------------------------------------
@pytest.mark.parametrize("method", [name for name in REGISTRY if name != "discrete"])
def test_other_methods_on_a_discrete_model_name_the_fix(method: str) -> None:
    with pytest.raises(InputError, match=r"'joint' is discrete-time \(dt = 0.01 s\).*use method='discrete'"):
        robodyn.simulate(sampled(), 1.0, method=method, dt=DT)


def test_the_discrete_method_on_a_continuous_model_names_the_fix() -> None:
    with pytest.raises(InputError, match=r"method 'discrete' steps a discrete-time model.*discretize\(dt\)"):
        robodyn.simulate(joint(), 1.0, method="discrete")


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"dt": 0.02}, r"steps at its own sample period dt = 0.01 s: leave dt out"),
    ({"dt": "fast"}, r"leave dt out"),
    ({"max_steps": 10}, r"sample instants of dt = 0.01 s over \[0, 1\] would be 100, more than the limit of 10: "
                        r".*raise simulate's max_steps"),
    ({"events": robodyn.Event(lambda t, x, u, p: x[0] - 0.5, name="half")}, r"events are not located on the "
                                                                              r"discrete path"),
])
def test_options_the_discrete_path_refuses(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(InputError, match=match):
        robodyn.simulate(sampled(), 1.0, [0.0, 0.0], 1.0, **kwargs)  # type: ignore[arg-type]
    assert robodyn.simulate(sampled(), 1.0, dt=DT).t.size == 101  # its own period is accepted


def test_the_command_line_refuses_the_discrete_method_on_a_continuous_model(capsys: pytest.CaptureFixture[str]
                                                                            ) -> None:
    code, out, err = run(capsys, "simulate", "joint", "--t-final", "1", "--method", "discrete")
    assert code == 2 and out == ""
    assert "method 'discrete' steps a discrete-time model; 'joint' is continuous-time" in one_line(err)


def test_a_huge_span_is_refused_before_any_work() -> None:
    start = time.perf_counter()
    with pytest.raises(InputError, match=r"more than the limit of 1,000,000: .*raise simulate's max_steps"):
        robodyn.simulate(sampled(), 1e12)
    assert time.perf_counter() - start < 20.0


# --- analyses of differential equations refuse a discrete model ----------------------------------------------
@pytest.mark.parametrize(("call", "where"), [
    (lambda m: robodyn.validity(m, [0.0, 0.0]), "validity"),
    (lambda m: robodyn.existence(m, [0.0, 0.0], 0.1), "existence"),
    (lambda m: robodyn.lipschitz(m, {"q": (0.0, 1.0), "q_dot": (0.0, 1.0)}), "existence"),
    (lambda m: robodyn.find_equilibrium(m), "find_equilibrium"),
    (lambda m: robodyn.forced_response(m, [0.0, 1.0]), "forced_response"),
    (lambda m: robodyn.linearize_trajectory(m, None), "linearize_trajectory"),
    (lambda m: robodyn.verify(m), "verify"),
])
def test_analyses_of_derivatives_refuse_a_discrete_model(call: object, where: str) -> None:
    with pytest.raises(InputError, match=rf"{where}.*'joint' is a discrete-time model \(dt = 0.01 s\): its f is "
                                         r"the update map"):
        call(sampled())  # type: ignore[operator]


def test_linearize_keeps_a_discrete_system_discrete() -> None:
    system = sampled()
    for method in ("auto", "central"):
        again = robodyn.linearize(system, [0.3, 0.0], [1.0], method=method)
        assert again.dt == DT
        np.testing.assert_allclose(again.A, system.A, rtol=0, atol=1e-9)
    assert robodyn.linearize(system, [0.0, 0.0]).A is not None
    assert robodyn.load("joint").sample_period is None and system.sample_period == DT


def test_the_default_method_of_a_discrete_model_is_discrete() -> None:
    assert robodyn.simulate(sampled(), 0.05).stats.method == "discrete"
    assert sampled().affine_form(np.zeros(0)) is None  # not x' = A x + B u + c
    assert "discrete time, dt = 0.01 s" in sampled().linear_by_construction()
    assert math.isclose(robodyn.simulate(joint(), 0.05).t[-1], 0.05)
