"""Rigid impacts in simulate (robodyn.integrate.paths.impacts): the bouncing ball's apexes follow Newton's restitution
law, it comes to rest before the Zeno time, a resting point lifts off when the plane would have to pull, and
the contacts' own events are recorded."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError
from robodyn.mechanisms.chain.system import ChainSystem, Joint, Link
from robodyn.signals import Ramp

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
BALL = EXAMPLES / "bouncing_ball.yaml"


@pytest.mark.parametrize("method", ["dopri5", "radau"])
def test_every_apex_is_restitution_squared_times_the_one_before(method: str) -> None:
    """Flight is a parabola, which both methods integrate exactly (dopri5's order 5, radau's collocation
    polynomials of degree 3) and locate touchdowns on exactly (their dense output is that polynomial): each apex
    (the event z' = 0 falling) is e^2 times the one before to 1e-9 relative, and the horizontal motion is
    untouched by the frictionless impacts."""
    model = robodyn.load(str(BALL))
    e = model.parameters["restitution"]
    run = robodyn.simulate(model, 3.0, {"z": 1.0, "x_dot": 0.3}, method=method, rtol=1e-10, atol=1e-12,
                           events=[robodyn.Event("z_dot", -1, name="apex")])
    apexes = np.array([event.x[1] for event in run.events if event.name == "apex"])  # z: the lowest point's height
    assert apexes.size >= 6
    np.testing.assert_allclose(apexes[1:] / apexes[:-1], e ** 2, rtol=1e-9)
    assert apexes[0] == pytest.approx(e ** 2, rel=1e-9)
    impacts = [event for event in run.events if event.name == "floor_impact"]
    g = model.parameters["g"]
    first = math.sqrt(2.0 / g)  # the fall from 1 m
    assert impacts[0].t == pytest.approx(first, rel=1e-10)
    assert impacts[0].x[3] == pytest.approx(e * g * first, rel=1e-10)  # z' after: -e times before
    np.testing.assert_allclose(run.x[:, 2], 0.3, rtol=1e-12)
    np.testing.assert_allclose(run.x[:, 0], 0.3 * run.t, rtol=1e-10, atol=1e-12)


def test_the_ball_comes_to_rest_before_the_zeno_time_and_stays() -> None:
    """The bounces t_k = 2 e^k v0 / g sum to the Zeno time T = t0 (1 + e) / (1 - e); the impact whose bounce would
    last less than rest_time (1 ms) is made plastic instead, so the ball rests within rest_time / (1 - e) before T,
    and from then on stays on the floor (Baumgarte-held: its gap decays to the integration tolerance) with no
    further impact."""
    model = robodyn.load(str(BALL))
    e, g = (model.parameters[k] for k in ("restitution", "g"))
    run = robodyn.simulate(model, 6.0, {"z": 1.0}, rtol=1e-10, atol=1e-12, t_eval=np.linspace(0, 6, 601))
    rests = [event for event in run.events if event.name == "floor_rest"]
    assert len(rests) == 1
    zeno = math.sqrt(2.0 / g) * (1 + e) / (1 - e)
    assert zeno - 1e-3 / (1 - e) <= rests[0].t <= zeno
    bounces = np.diff([event.t for event in run.events if event.name == "floor_impact"])
    assert np.all(bounces >= 1e-3) and bounces[-1] * e < 1e-3
    np.testing.assert_allclose(bounces[1:-1] / bounces[:-2], e, rtol=1e-6)
    after = run.t > rests[0].t
    gap = run.y[after, model.outputs.index("floor_gap")]
    assert np.max(np.abs(gap)) < 1e-8 and np.all(np.abs(run.x[after, 3]) < 1e-7)
    assert not [event for event in run.events if event.name == "floor_impact" and event.t > rests[0].t]


def test_a_plastic_impact_rests_at_once_and_a_ball_on_the_floor_rests_from_the_start() -> None:
    model = robodyn.load(str(BALL)).with_parameters(restitution=0.0)
    run = robodyn.simulate(model, 1.0, {"z": 0.5}, rtol=1e-10, atol=1e-12)
    assert [event.name for event in run.events] == ["floor_impact", "floor_rest"]
    assert run.x[-1][1] == pytest.approx(0.0, abs=1e-9)
    still = robodyn.simulate(model, 1.0, {"z": 0.0}, rtol=1e-10, atol=1e-12)  # the file's default start
    assert still.events == () and np.max(np.abs(still.x[:, 1])) < 1e-12


def _lifted_point() -> robodyn.ConstrainedChain:
    """A 1 kg body on the floor z = 0 (its origin the contact point), its z joint driven by the force z_tau."""
    chain = ChainSystem([Joint("z", "world", "ball", type="prismatic", axis=(0, 0, 1))],
                        [Link("world"), Link("ball", 1.0, (0.0, 0.0, 0.0), {"ixx": 1e-3, "iyy": 1e-3, "izz": 1e-3})],
                        name="lifted")
    return robodyn.ConstrainedChain(chain, contacts=[{"frame": "ball", "model": "impact", "restitution": 0.5,
                                                      "name": "floor"}])


def test_a_resting_point_lifts_off_when_the_plane_would_have_to_pull() -> None:
    """Held on the floor, the point's normal force is m g - f(t); with f = 2 t N it lifts off at t_l = m g / 2
    and then rises with z'' = (2 t - m g) / m = 2 (t - t_l): z = (t - t_l)^3 / 3."""
    model = _lifted_point()
    run = robodyn.simulate(model, 6.0, [0.0, 0.0], u=Ramp(0.0, 2.0), rtol=1e-10, atol=1e-12,
                           t_eval=np.linspace(0, 6, 61))
    lifts = [event for event in run.events if event.name == "floor_liftoff"]
    assert len(lifts) == 1 and lifts[0].t == pytest.approx(9.81 / 2.0, rel=1e-9)
    late = run.t > lifts[0].t
    expected = (run.t[late] - lifts[0].t) ** 3 / 3.0
    np.testing.assert_allclose(run.x[late, 0], expected, rtol=1e-6, atol=1e-9)


def test_impact_runs_refuse_what_they_cannot_do() -> None:
    model = robodyn.load(str(BALL))
    with pytest.raises(InputError, match=r"starts 0\.05 m below its plane"):
        robodyn.simulate(model, 1.0, {"z": -0.05})
    with pytest.raises(InputError, match="use an adaptive or implicit method"):
        robodyn.simulate(model, 1.0, {"z": 1.0}, method="rk4", dt=1e-3)
    with pytest.raises(InputError, match=r"contact 'floor': restitution must be from 0 to 1, got 1\.5"):
        robodyn.simulate(model, 1.0, {"z": 1.0}, params={"restitution": 1.5})
    with pytest.raises(InputError, match=r"restitution must be from 0 to 1, got -0\.1"):
        model.with_parameters(restitution=-0.1)
    with pytest.raises(InputError, match="named like a contact's own"):
        robodyn.simulate(model, 1.0, {"z": 1.0}, events=[robodyn.Event("z - 0.5", name="floor_touchdown")])


def test_a_batch_bounces_each_ball_from_its_own_height() -> None:
    model = robodyn.load(str(BALL))
    g = model.parameters["g"]
    heights = np.array([0.5, 1.0, 2.0])
    x0 = np.zeros((3, 4))
    x0[:, 1] = heights
    batch = robodyn.simulate(model, 1.0, x0, rtol=1e-10, atol=1e-12, t_eval=np.linspace(0, 1, 11))
    for height, events in zip(heights, batch.events):
        first = next(event for event in events if event.name == "floor_impact")
        assert first.t == pytest.approx(math.sqrt(2 * height / g), rel=1e-10)


def test_a_batch_without_output_times_shares_a_grid_and_pads_after_a_terminal_event() -> None:
    """Without t_eval a batch of bouncing balls shares DEFAULT_POINTS output times; a terminal event of the user's
    (the ball from 2 m reaching z = 1.5 m on its way down... before the others end) leaves NaN rows after it,
    as in the kernels' batches; the interpreted kernels find the same first impact."""
    model = robodyn.load(str(BALL))
    g = model.parameters["g"]
    x0 = np.zeros((2, 4))
    x0[:, 1] = np.array([0.5, 2.0])
    batch = robodyn.simulate(model, 1.0, x0, rtol=1e-10, atol=1e-12,
                             events=[robodyn.Event("z - 1.5", -1, terminal=True, name="low")])
    assert batch.x.shape[:2] == (2, robodyn.integrate.simulate.DEFAULT_POINTS)
    stop = math.sqrt(2 * 0.5 / g)
    assert np.all(np.isnan(batch.x[1][batch.t > stop + 1e-3])) and np.all(np.isfinite(batch.x[0]))
    slow = robodyn.simulate(model, 0.5, x0[0], rtol=1e-10, atol=1e-12, backend="interpreted")
    first = next(event for event in slow.events if event.name == "floor_impact")
    assert first.t == pytest.approx(math.sqrt(2 * 0.5 / g), rel=1e-10)
