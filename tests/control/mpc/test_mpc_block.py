"""Linear MPC as a sampled diagram block (robodyn.control.mpc.block) and the exact derivative of its first input
(robodyn.control.mpc.sensitivity).

The plant is the catalog joint (J q'' + b q' + k q = u, linear by construction) under a torque bound. Checked: the
diagram's run equals the hand-written sampled loop (one simulate call per sample, the first planned input held);
the loop's linearization at rest equals Phi - Gamma K of the discrete LQR (the unconstrained MPC with the default
terminal weight is the LQR: robodyn.lqr on the ZOH model); with a bound active later in the plan the first input's
derivative equals the slope of u_0(x) (affine on the active set's region: central differences of the QP solved
exactly on its active set, over a step that keeps the active set); the status of every solve is recorded,
and an infeasible state bound falls back on the last usable plan.
"""

from __future__ import annotations

import numpy as np
import pytest
from mpc_cases import exact_plan

import robodyn
from robodyn.control.mpc.block import REPORTS
from robodyn.control.mpc.solvers import STATUSES

DT = 0.01
Q, R = {"q": 100.0, "q_dot": 1.0}, {"u": 0.01}


def controller(bounds=None, horizon: int = 20):
    return robodyn.mpc(robodyn.load("joint"), horizon, Q, R, dt=DT,
                       bounds=bounds if bounds is not None else {"inputs": {"u": [-1.0, 1.0]}})


def loop(plant, block) -> robodyn.Diagram:
    wires = [f"plant.{s} -> mpc.{s}" for s in plant.states] + ["mpc.u -> plant.u"]
    return robodyn.Diagram({"plant": plant, "mpc": block}, wires, name="mpc_loop")


def test_the_block_runs_the_sampled_loop() -> None:
    joint = robodyn.load("joint")
    block = controller().block()
    assert block.sample_period == DT and block.inputs == ("q", "q_dot") and block.outputs == ("u", *REPORTS)
    run = robodyn.simulate(loop(joint, block), 0.5, [1.0, 0.0], rtol=1e-11, atol=1e-12)
    by_hand, x = controller(), np.array([1.0, 0.0])
    for k in range(50):
        u = by_hand(x)
        x = robodyn.simulate(joint, (k * DT, (k + 1) * DT), x, {"u": float(u[0])}, rtol=1e-11, atol=1e-12).x[-1]
    # the same plans from the same states: the integrations at rtol 1e-11 differ by ~1e-11 per sample
    np.testing.assert_allclose(run.x[-1], x, rtol=0, atol=1e-8)
    status = run.y[:, run.outputs.index("mpc.status")]
    assert np.all(status == list(STATUSES).index("solved"))
    u = run.y[:, run.outputs.index("mpc.u")]
    assert np.all(np.abs(u) <= 1.0 + 1e-9) and np.isclose(np.abs(u).max(), 1.0, atol=1e-7)  # the bound is used


def test_the_loop_linearizes_to_the_lqrs_closed_loop() -> None:
    joint = robodyn.load("joint")
    mpc = controller()
    linear = robodyn.linearize(loop(joint, mpc.block()), [0.0, 0.0], [])
    discrete = robodyn.linearize(joint, [0.0, 0.0], [0.0]).discretize(DT)
    K = np.array(robodyn.lqr(discrete, np.diag([100.0, 1.0]), np.array([[0.01]])).K)
    np.testing.assert_allclose(linear.A, discrete.A - discrete.B @ K, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(mpc.gain([0.0, 0.0]), -K, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(("x", "active"), [([0.049, 0.4], "the state bound at one step"),
                                           ([0.03, 2.0], "u_0 on its bound")])
def test_the_first_inputs_derivative_on_an_active_set_is_its_slope(x: list[float], active: str) -> None:
    bounds = {"inputs": {"u": [-1.0, 1.0]}, "states": {"q": [-1.0, 0.05]}}
    gentle = {"u": 1.0}  # a dearer input: the plan approaches the bound q <= 0.05 instead of stopping at once
    mpc = robodyn.mpc(robodyn.load("joint"), 20, Q, gentle, dt=DT, bounds=bounds)
    free = robodyn.mpc(robodyn.load("joint"), 20, Q, gentle, dt=DT, bounds={})
    point = np.array(x)
    plan = mpc.solve(point)
    if active == "u_0 on its bound":
        assert abs(plan.inputs[0, 0]) == pytest.approx(1.0, abs=1e-9)
    else:
        assert abs(plan.inputs[0, 0]) < 0.99 and np.isclose(plan.states[1:, 0], 0.05, atol=1e-8).sum() == 1
    gain = mpc.gain(point)
    plant = mpc.plant

    def exact_first_input(x: np.ndarray) -> np.ndarray:  # the QP solved exactly on its active set (mpc_cases)
        inputs = exact_plan(plant.A, plant.B, plant.c, mpc.Q, mpc.R, mpc.Qf, 20, x, mpc.input_bounds,
                            mpc.state_bounds, plan.inputs)
        return inputs[0]

    h = 1e-5
    slope = np.column_stack([(exact_first_input(point + h * e) - exact_first_input(point - h * e)) / (2 * h)
                             for e in np.eye(2)])
    # u_0 is affine on the active set's region, which the steps stay in: the exact solutions' differences are its
    # slope to rounding (~1e-16 / 1e-5, times the KKT system's conditioning)
    np.testing.assert_allclose(gain, slope, rtol=1e-7, atol=1e-8)
    assert np.abs(gain - free.gain(point)).max() > 1.0  # the active set changed the law


def test_an_infeasible_state_bound_falls_back_on_the_last_plan() -> None:
    joint = robodyn.load("joint")
    block = controller(bounds={"inputs": {"u": [-1.0, 1.0]}, "states": {"q": [-0.05, 2.0]}}).block()
    run = robodyn.simulate(loop(joint, block), 0.3, [1.0, -20.0])  # driven fast toward the bound it cannot keep
    status = run.y[:, run.outputs.index("mpc.status")]
    assert status[0] == list(STATUSES).index("solved") or status[0] == list(STATUSES).index("infeasible")
    assert np.any(status == list(STATUSES).index("infeasible"))
    u = run.y[:, run.outputs.index("mpc.u")]
    assert np.all(np.isfinite(u)) and np.all(np.abs(u) <= 1.0 + 1e-9)


def test_reference_ports_move_the_setpoint() -> None:
    joint = robodyn.load("joint")
    block = controller().block(references=True)
    assert block.inputs == ("q", "q_dot", "q_ref", "q_dot_ref")
    wires = [f"plant.{s} -> mpc.{s}" for s in joint.states] + ["mpc.u -> plant.u"]
    diagram = robodyn.Diagram({"plant": joint, "mpc": block}, wires, inputs={"r": "mpc.q_ref"},
                              defaults={"mpc.q_dot_ref": 0.0}, name="setpoint")
    run = robodyn.simulate(diagram, 2.0, [0.0, 0.0], {"r": 0.05})
    held = 0.05  # the joint's spring needs a torque k q at rest: within the bound for 0.05 rad
    assert run.x[-1, 0] == pytest.approx(held, abs=5e-3)


def test_a_diagram_file_names_the_mpc_block(tmp_path) -> None:
    from robodyn.base.errors import ModelFileError

    text = """name: joint_mpc
kind: diagram
blocks:
  plant: joint
  mpc:
    model: mpc
    sample: 0.01
    parameters: {plant: joint, horizon: 20, Q: {q: 100, q_dot: 1}, R: {u: 0.01}, bounds: {inputs: {u: [-1, 1]}}}
connect: [plant.q -> mpc.q, plant.q_dot -> mpc.q_dot, mpc.u -> plant.u]
"""
    (tmp_path / "loop.yaml").write_text(text)
    from_file = robodyn.load(tmp_path / "loop.yaml")
    by_hand = loop(robodyn.load("joint"), controller().block())
    a = robodyn.simulate(from_file, 0.3, [1.0, 0.0])
    b = robodyn.simulate(by_hand, 0.3, [1.0, 0.0])
    np.testing.assert_array_equal(a.x, b.x)  # the same controller from the same numbers: the same run
    assert "mpc.status" in a.outputs
    for old, new, words in (("    sample: 0.01\n", "", "give sample: T beside model: mpc"),
                            ("horizon: 20", "horizon: 20, gains: 3", "has no parameter 'gains'"),
                            ("{u: [-1, 1]}", "{u: [1, -1]}", "lower bound 1 is above the upper bound")):
        (tmp_path / "bad.yaml").write_text(text.replace(old, new))
        with pytest.raises(ModelFileError, match=words):
            robodyn.load(tmp_path / "bad.yaml")


def test_the_cart_pole_example_balances_on_noisy_sensors() -> None:
    """examples/cart_pole_mpc_ekf.yaml from 0.2 rad with seeded sensor noise (0.01 standard deviation on x and
    theta): the MPC keeps its force and track limits on the EKF's estimate and brings the pole up."""
    from pathlib import Path

    from robodyn.signals import WhiteNoise

    loop_ = robodyn.load(Path(__file__).resolve().parents[3] / "examples" / "cart_pole_mpc_ekf.yaml")
    x0 = np.zeros(loop_.n_states)
    x0[loop_.states.index("plant.theta")] = 0.2
    noise = {"noise_x": WhiteNoise(0.01, 0.02, 1), "noise_theta": WhiteNoise(0.01, 0.02, 2)}
    run = robodyn.simulate(loop_, 5.0, x0, noise, t_eval=np.linspace(0.0, 5.0, 251))
    column = {name: run.y[:, run.outputs.index(name)] for name in ("x", "theta", "theta_hat", "P_theta", "F",
                                                                    "status")}
    assert np.all(column["status"] == 0)  # every QP solved
    assert np.all(np.abs(column["F"]) <= 5.0 + 1e-8) and np.abs(column["F"]).max() > 4.9  # the limit used
    assert np.all(np.abs(column["x"]) <= 1.0 + 1e-2)  # the track (a linear prediction of a nonlinear plant)
    assert np.all(np.abs(column["theta"][150:]) < 0.05)  # upright from 3 s on, within the noise's reach
    error = np.abs(column["theta_hat"] - column["theta"])[25:]
    assert np.mean(error <= 4.0 * np.sqrt(column["P_theta"][25:])) > 0.95  # the estimate within its variance
