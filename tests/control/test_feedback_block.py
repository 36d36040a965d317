"""A state-feedback law as a sampled diagram block (robodyn.control.feedback_block), with TVLQR's law: the loop
the discrete-time design assumed, run and linearized as a diagram.

The plant is the catalog pendulum; the reference its swing to the upright of test_tracking_closed_loop (the
time-reversed undamped motion under tau = 1.5 sin 2t), sampled every 10 ms. The discrete design's block, sampled at
the knots, is checked three ways: its output at an instant is the design's u_k = u*_k - K_k (x - x*_k); the diagram
(plant + block, wired state to port) tracks from twenty seeded starts at |dx0| = 0.05 where the held open-loop
inputs miss; and the diagram's discrete-time linearization over one period at a knot equals Phi_k - Gamma_k K_k of the
exact ZOH model the design was made on.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError
from robodyn.control.feedback_block import port_name
from robodyn.signals import Sine

T = 3.0
H = 0.01


@pytest.fixture(scope="module")
def design():
    model = robodyn.load("pendulum")
    back = robodyn.simulate(model, (0.0, T), [math.pi, 0.0], {"tau": Sine(1.5, 1.0 / math.pi, phase=math.pi - 2 * T)},
                            rtol=1e-12, atol=1e-12)
    times = np.arange(0.0, T + H / 2, H)
    # the reference's inputs held over each interval (the discrete design's assumption): sampled from the sine
    held = robodyn.signals.Table(times, 1.5 * np.sin(2.0 * times), "zoh")
    reference = robodyn.simulate(model, (0.0, T), back.x[-1] * np.array([1.0, -1.0]), {"tau": held}, rtol=1e-12,
                                 atol=1e-12, t_eval=times)
    tracking = robodyn.tvlqr(model, reference, {"theta": 10.0, "theta_dot": 1.0}, {"tau": 0.1}, discrete=True,
                             interpolation="hold")
    return model, reference, held, tracking


def loop(model, block):
    wires = [f"plant.{s} -> ctl.{port_name(s)}" for s in model.states] + ["ctl.tau -> plant.tau"]
    return robodyn.Diagram({"plant": model, "ctl": block}, wires, name="tracked")


def test_the_block_computes_the_designs_feedback(design) -> None:
    _, reference, _, tracking = design
    block = tracking.block()
    assert block.sample_period == pytest.approx(H, rel=1e-12) and block.inputs == ("theta", "theta_dot")
    assert block.outputs == ("tau",) and block.n_states == 0
    k = 137
    x = reference.x[k] + np.array([0.02, -0.03])
    u = block.h_raw(float(reference.t[k]), np.zeros(0), x, np.zeros(0))
    expected = reference.u[k] - tracking.K[k] @ (x - reference.x[k])
    np.testing.assert_allclose(u, expected, rtol=1e-14, atol=1e-14)
    C, D = block.output_jacobians_raw(float(reference.t[k]), np.zeros(0), x, np.zeros(0))
    assert C.shape == (1, 0)
    np.testing.assert_array_equal(D, -tracking.K[k])


def test_the_sampled_loop_tracks_where_the_held_inputs_miss(design) -> None:
    model, reference, held, tracking = design
    diagram = loop(model, tracking.block())
    rng = np.random.default_rng(49)
    dx0 = rng.normal(size=(20, 2))
    dx0 *= 0.05 / np.linalg.norm(dx0, axis=1, keepdims=True)
    tracked, missed = [], []
    for start in reference.x[0] + dx0:
        closed = robodyn.simulate(diagram, (0.0, T), start, rtol=1e-9, atol=1e-11)
        opened = robodyn.simulate(model, (0.0, T), start, {"tau": held}, rtol=1e-9, atol=1e-11)
        tracked.append(np.linalg.norm(closed.x[-1] - reference.x[-1]))
        missed.append(np.linalg.norm(opened.x[-1] - reference.x[-1]))
    assert max(tracked) < 1e-2
    assert min(missed) > 0.1


def test_the_loop_linearizes_to_the_designs_closed_loop(design) -> None:
    from robodyn.control.tracking.zoh import zoh_models

    model, reference, _, tracking = design
    diagram = loop(model, tracking.block())
    k = 200
    t_k = float(reference.t[k])
    linear = robodyn.linearize(diagram, reference.x[k], [], t=t_k)
    assert linear.dt == pytest.approx(H, rel=1e-12)
    A, B = model.jacobians_raw(t_k, reference.x[k], reference.u[k], model.parameter_vector())
    Phi, Gamma = zoh_models(np.array([A]), np.array([B]), np.array([H]))
    # the diagram's map over one period: the plant's flow linearized at its start (A, B there) and held input
    # -K_k x: Phi - Gamma K_k, exactly the closed loop of the design's interval k (rounding of the two expm)
    np.testing.assert_allclose(linear.A, Phi[0] - Gamma[0] @ tracking.K[k], rtol=1e-10, atol=1e-12)


def test_uneven_knots_need_a_period(design) -> None:
    model, reference, _, tracking = design
    times = np.concatenate([np.linspace(0.0, 0.5, 11), np.linspace(0.6, 1.0, 3)])  # 0.05 s, then 0.2 s apart
    uneven = robodyn.simulate(model, (0.0, 1.0), reference.x[0], {"tau": 0.0}, t_eval=times)
    design_ = robodyn.tvlqr(model, uneven, np.eye(2), np.eye(1), discrete=True)
    with pytest.raises(InputError, match="knots are not evenly spaced: give sample=T"):
        design_.block()
    assert design_.block(sample=0.05).sample_period == 0.05
    with pytest.raises(InputError, match="sample period must be"):
        tracking.block(sample=0.0)
    block = tracking.block()
    assert str(block).startswith("tvlqr: TVLQR (discrete-time design) over [0, 3] s, sampled every 0.01 s")
