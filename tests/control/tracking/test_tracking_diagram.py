"""TVLQR designed on a diagram drives the diagram's own inputs: the pendulum behind an actuator lag.

The plant is a Diagram (a `first_order` lag, tau = 20 ms, between the diagram's input and the catalog pendulum's
torque): its states are the pendulum's and the lag's, prefixed, and tvlqr reads them by those names like any
model's. The reference is test_tracking_closed_loop's swing to the upright (the time-reversed motion of the undamped
pendulum under tau = 1.5 sin 2t), driven through the lag by v = tau + 0.02 tau' (so the lag's output is tau
exactly). From twenty seeded starts at |dx0| = 0.05 the TVLQR feedback ends within 1e-2 of the reference's end,
the open-loop replay of v misses by more than 0.1 (the hyperbolic upright multiplies errors by e^{3.1 t}).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import robodyn
from robodyn import blocks
from robodyn.signals import Sine

T = 3.0
DT = 0.01


@pytest.fixture(scope="module")
def lagged():
    plant = robodyn.Diagram({"lag": blocks.first_order(K=1.0, tau=0.02), "pendulum": robodyn.load("pendulum")},
                            ["lag.y -> pendulum.tau"], inputs={"v": "lag.u"},
                            outputs={"theta": "pendulum.theta"}, name="lagged_pendulum")
    pendulum = robodyn.load("pendulum")
    times = np.arange(0.0, T + DT / 2, DT)
    backward = Sine(1.5, 1.0 / math.pi, phase=math.pi - 2.0 * T)  # tau(T - s) = 1.5 sin(2 (T - s))
    back = robodyn.simulate(pendulum, (0.0, T), [math.pi, 0.0], {"tau": backward}, rtol=1e-12, atol=1e-12)
    start = dict(zip(("pendulum.theta", "pendulum.theta_dot"), back.x[-1] * np.array([1.0, -1.0]), strict=True))
    start["lag.y"] = 0.0  # = tau(0)
    volts = Sine(math.hypot(1.5, 0.06), 1.0 / math.pi, phase=math.atan2(0.06, 1.5))  # 1.5 sin 2t + 0.02 * 3 cos 2t
    reference = robodyn.simulate(plant, (0.0, T), [start[name] for name in plant.states], {"v": volts}, rtol=1e-12,
                                 atol=1e-12, t_eval=times)
    return plant, reference, volts


def test_the_reference_is_a_swing_worth_tracking(lagged) -> None:
    plant, reference, _ = lagged
    assert set(plant.states) == {"lag.y", "pendulum.theta", "pendulum.theta_dot"}
    end = dict(zip(plant.states, reference.x[-1], strict=True))
    # it ends at the upright at rest: two runs at rtol 1e-12, errors grown by at most e^{3.1 T} ~ 1e4
    assert abs(end["pendulum.theta"] - math.pi) < 1e-6 and abs(end["pendulum.theta_dot"]) < 1e-6


@pytest.mark.parametrize("discrete", [False, True])
def test_tvlqr_on_a_diagram_tracks_where_the_open_loop_misses(lagged, discrete: bool) -> None:
    plant, reference, volts = lagged
    weights = {"pendulum.theta": 10.0, "pendulum.theta_dot": 1.0}
    weights["lag.y"] = 0.1
    design = robodyn.tvlqr(plant, reference, weights, {"v": 0.1}, discrete=discrete, interpolation="linear")
    assert design.K.shape == (len(reference), 1, plant.n_states)
    rng = np.random.default_rng(48)
    dx0 = rng.normal(size=(20, plant.n_states))
    dx0 *= 0.05 / np.linalg.norm(dx0, axis=1, keepdims=True)
    starts = reference.x[0] + dx0
    closed = robodyn.simulate(plant, (0.0, T), starts, design.feedback, rtol=1e-9, atol=1e-11)
    opened = robodyn.simulate(plant, (0.0, T), starts, {"v": volts}, rtol=1e-9, atol=1e-11)
    tracked = np.linalg.norm(closed.x[:, -1] - reference.x[-1], axis=1)
    missed = np.linalg.norm(opened.x[:, -1] - reference.x[-1], axis=1)
    assert tracked.max() < 1e-2
    assert missed.min() > 0.1
