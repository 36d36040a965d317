"""robodyn.mpc in closed loop with robodyn.simulate, the controller sampled every dt and its input held in between
(one simulate call per sample): the linear joint stays within its torque bound and reaches rest along the predicted
states; the nonlinear cart-pole, pushed 0.3 rad off upright, is caught within its force and track limits."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn
from robodyn.control.mpc.solvers import AUTO, DEFAULT_SOLVER


def sampled_loop(model, controller, x0: np.ndarray, steps: int, rtol: float) -> tuple[np.ndarray, np.ndarray, list]:
    """States (steps + 1, n) at the samples, the inputs applied (steps, m) and the plans."""
    x, states, inputs, plans = np.array(x0, dtype=float), [np.array(x0, dtype=float)], [], []
    dt = controller.dt
    for k in range(steps):
        plan = controller.solve(x)
        assert plan.solved, f"step {k}: {plan.status}"
        u = plan.inputs[0]
        run = robodyn.simulate(model, (k * dt, (k + 1) * dt), x, dict(zip(model.inputs, u.tolist())),
                               rtol=rtol, atol=rtol * 1e-1)
        x = run.x[-1]
        states.append(x)
        inputs.append(u)
        plans.append(plan)
    return np.array(states), np.array(inputs), plans


def test_linear_joint_within_its_torque_bound() -> None:
    joint = robodyn.load("joint")  # J q'' + b q' + k q = u, a model linear by construction
    controller = robodyn.mpc(joint, 20, {"q": 100.0, "q_dot": 1.0}, {"u": 0.01}, dt=0.01,
                             bounds={"inputs": {"u": [-1.0, 1.0]}})
    states, inputs, plans = sampled_loop(joint, controller, np.array([1.0, 0.0]), 100, 1e-11)
    assert np.all(np.abs(inputs) <= 1.0 + 1e-9)  # within the bound (the solvers' tolerance)
    assert np.sum(np.isclose(np.abs(inputs[:, 0]), 1.0, atol=1e-7)) >= 3  # and on it at the start
    assert np.linalg.norm(states[-1]) < 1e-3  # at rest: from 1 rad to below 1 mrad in 1 s
    # the held torque makes the sampled model exact: each sample is the first predicted state of the plan before
    # (the integration at rtol 1e-11 against the exact hold: 1e-9)
    predicted = np.array([plan.states[1] for plan in plans])
    np.testing.assert_allclose(states[1:], predicted, atol=1e-9)


OTHERS = [pytest.param(s, marks=pytest.mark.slow) for s in ("osqp", "proxsuite", "clarabel") if s != DEFAULT_SOLVER]


@pytest.mark.parametrize("solver", [DEFAULT_SOLVER, *OTHERS])
def test_nonlinear_cart_pole_recovers_from_a_push_within_its_limits(solver: str) -> None:
    if solver != AUTO:  # "auto" runs Clarabel where ProxQP is missing
        pytest.importorskip(solver)
    cart = robodyn.load("cart_pole")  # theta = 0 upright
    bounds = {"inputs": {"F": [-5.0, 5.0]}, "states": {"x": [-1.0, 1.0]}}
    controller = robodyn.mpc(cart, 30, {"x": 1.0, "theta": 10.0, "x_dot": 0.1, "theta_dot": 0.1}, {"F": 0.1},
                             bounds=bounds, dt=0.02, solver=solver)
    states, inputs, _ = sampled_loop(cart, controller, np.array([0.0, 0.3, 0.0, 0.0]), 250, 1e-9)
    assert np.all(np.abs(inputs) <= 5.0 + 1e-9)  # never beyond the force limit (the solvers' tolerance)
    assert np.max(np.abs(inputs)) > 4.99  # which the push made active
    # the track: the prediction is linear, the plant is not; the bound holds on the samples with 1 cm to spare
    assert np.max(np.abs(states[:, 0])) <= 1.0 + 1e-2
    assert np.all(np.abs(states[100:, 1]) < 5e-2)  # upright from 2 s on (tilted ~0.02 to bring the cart back)
    assert np.linalg.norm(states[-1]) < 5e-2  # and near rest at 5 s (the cart's slow mode, weight 1: 0.018 left)
