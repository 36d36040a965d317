"""Nonlinear MPC by real-time iterations (robodyn.control.mpc.receding) on the torque-limited pendulum.

The problem: hold the catalog pendulum upright (theta = pi) with |tau| <= 3 N m (it can hold it only within
asin(3 / 9.81) = 0.31 rad of the top), a 1 s horizon in 20 knots (rk4 steps of 50 ms). Checked: the receding
problem's plumbing against independent full solves (a converged plan from the shifted warm start equals one from
scratch), the real-time iteration catching the pendulum from 0.19 rad off the top as a diagram block, the plan's
reports recorded as the run's columns, and the loop's linearization equal to the closed loop of the plan's own
feedback gain.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError
from robodyn.control.feedback_block import port_name
from robodyn.control.mpc.receding import REPORTS, RecedingHorizon

TOP = np.array([math.pi, 0.0])


@pytest.fixture(scope="module")
def pendulum():
    return robodyn.load("pendulum")


def upright(model, method: str = "fddp") -> robodyn.OptimalControlProblem:
    costs = {"state": {"weights": {"theta": 10.0, "theta_dot": 1.0}, "reference": {"theta": "pi"}},
             "input": {"weights": {"tau": 0.1}},
             "terminal": {"weights": {"theta": 100.0, "theta_dot": 10.0}, "reference": {"theta": "pi"}}}
    return robodyn.OptimalControlProblem(model, 1.0, 20, TOP, costs, bounds={"inputs": {"tau": [-3, 3]}},
                                         method=method)


def loop(model, block):
    wires = [f"plant.{s} -> mpc.{port_name(s)}" for s in model.states] + ["mpc.tau -> plant.tau"]
    return robodyn.Diagram({"plant": model, "mpc": block}, wires, name="nmpc_loop")


def test_a_receding_problem_moves_its_start_and_its_clock(pendulum) -> None:
    problem = upright(pendulum)
    moved = problem.receding([3.0, 0.1], t0=2.5)
    np.testing.assert_array_equal(moved.x0, [3.0, 0.1])
    np.testing.assert_allclose(moved.times(), 2.5 + problem.times(), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(problem.x0, TOP)  # the original is untouched
    assert moved.costs is problem.costs  # shared, not rebuilt


def test_a_converged_warm_started_plan_equals_a_fresh_solve(pendulum) -> None:
    """Two samples 50 ms (one knot) and 30 ms (between knots: interpolated) apart, each solved to convergence
    from the shifted plan, against the same problem solved from scratch: the same optimum. Both stop when the
    expected improvement is below 1e-14, which leaves the inputs within ~sqrt(2e-14 / 0.1) ~ 5e-7 of the optimum
    (R = 0.1 the smallest curvature): 2e-6 allows both."""
    problem = upright(pendulum)
    mpc = RecedingHorizon(problem, iterations=200, tolerance=1e-14)
    mpc.solve([2.95, 0.0], 0.0)
    for t, x in ((0.05, [2.97, 0.3]), (0.08, [3.0, 0.35])):
        plan = mpc.solve(x, t)
        fresh = problem.receding(x, t).solve(tolerance=1e-14)
        assert plan.converged
        np.testing.assert_allclose(plan.inputs, fresh.u[:-1], rtol=0, atol=2e-6)
        np.testing.assert_allclose(plan.states, fresh.x, rtol=0, atol=2e-6)
        assert plan.cost == pytest.approx(fresh.cost, rel=1e-8)


def test_real_time_iterations_catch_the_pendulum_as_a_block(pendulum) -> None:
    problem = upright(pendulum)
    block = RecedingHorizon(problem).block()
    assert block.sample_period == pytest.approx(problem.dt) and block.outputs == ("tau", *REPORTS)
    diagram = loop(pendulum, block)
    run = robodyn.simulate(diagram, 5.0, [2.95, 0.0])
    assert np.abs(run.x[-1] - TOP).max() < 1e-6
    tau = run.y[:, run.outputs.index("mpc.tau")]
    assert np.all(np.abs(tau) <= 3.0 + 1e-12) and np.max(np.abs(tau)) == pytest.approx(3.0)  # the bound is used
    cost = run.y[:, run.outputs.index("mpc.cost")]
    assert cost[0] > 0.1 and cost[-1] < 1e-9  # each sample's plan cost, recorded: large at first, then nothing


def test_the_loop_linearizes_with_the_plans_feedback_gain(pendulum) -> None:
    from robodyn.control.tracking.zoh import zoh_models

    problem = upright(pendulum)
    mpc = RecedingHorizon(problem)
    diagram = loop(pendulum, mpc.block())
    linear = robodyn.linearize(diagram, TOP, [])
    A, B = pendulum.jacobians_raw(0.0, TOP, np.zeros(1), pendulum.parameter_vector())
    Phi, Gamma = zoh_models(np.array([A]), np.array([B]), np.array([problem.dt]))
    K0 = problem.receding(TOP).solve().gains[0]
    np.testing.assert_allclose(linear.A, Phi[0] - Gamma[0] @ K0, rtol=1e-9, atol=1e-12)
    assert np.all(np.abs(np.linalg.eigvals(linear.A)) < 1.0)  # the sampled loop is stable at the top


def test_bad_settings_are_named(pendulum) -> None:
    with pytest.raises(InputError, match="iterations must be an integer >= 1"):
        RecedingHorizon(upright(pendulum), iterations=0)
    with pytest.raises(InputError, match="state x"):
        RecedingHorizon(upright(pendulum)).solve([1.0, float("nan")])
