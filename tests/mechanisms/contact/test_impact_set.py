"""Rigid contacts of chains (robodyn.mechanisms.contact.impacts): the impact map equals Pinocchio's impulseDynamics,
contact
gaps are names for events (compiled and interpreted alike), and bad impact contacts are refused with the cause."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from tests.cli_run import one_line, run

import robodyn
from robodyn.base.errors import InputError, ModelFileError

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
ARM = EXAMPLES / "two_link_arm.urdf"
BOX = EXAMPLES / "box_on_incline.yaml"
BALL = EXAMPLES / "bouncing_ball.yaml"
NORMAL = (0.3, 0.0, 1.0)  # a tilted floor under the arm's tool


def _arm(restitution: float) -> robodyn.ConstrainedChain:
    arm = robodyn.load(str(ARM))
    contact = {"frame": "tool", "model": "impact", "restitution": restitution, "name": "floor",
               "plane": {"point": (0.0, 0.0, -0.2), "normal": NORMAL}}
    return robodyn.ConstrainedChain(arm, contacts=[contact])


@pytest.mark.parametrize("restitution", [0.0, 0.6, 1.0])
def test_the_impact_map_equals_pinocchios_impulse_dynamics(restitution: float) -> None:
    """The two-link arm's tool strikes a tilted plane: q'+ equals pinocchio.impulseDynamics with the plane's normal
    row n^T J_v of the tool (its own crba and frame Jacobian) and the same restitution, to 1e-12; the tool's normal
    velocity becomes -e times its value, and with e = 1 the kinetic energy is kept."""
    pin = pytest.importorskip("pinocchio")
    model = _arm(restitution)
    impacts = model.impacts()
    assert impacts is not None and impacts.names == ("floor",)
    reference = pin.buildModelFromUrdf(str(ARM))
    data = reference.createData()
    frame = reference.getFrameId("tool")
    rng = np.random.default_rng(3)
    normal = np.array(NORMAL) / np.linalg.norm(NORMAL)
    p = model.parameter_vector(None)
    for _ in range(5):
        q, qd = rng.uniform(-1.5, 1.5, 2), rng.uniform(-2, 2, 2)
        x = np.concatenate([q, qd])
        after = impacts.jump(0.0, x, p, 0, frozenset(), plastic=False)
        pin.computeJointJacobians(reference, data, q)
        pin.updateFramePlacements(reference, data)
        jacobian = pin.getFrameJacobian(reference, data, frame, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)[:3]
        row = normal @ jacobian
        expected = pin.impulseDynamics(reference, data, q, qd, row[None, :], restitution)
        np.testing.assert_allclose(after[2:], expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(after[:2], q)
        assert row @ after[2:] == pytest.approx(-restitution * (row @ qd), rel=1e-12, abs=1e-12)
        if restitution == 1.0:
            mass = model.chain.mass_matrix(q)
            assert after[2:] @ mass @ after[2:] == pytest.approx(qd @ mass @ qd, rel=1e-12)


def test_a_plastic_rest_keeps_the_loops_and_the_held_contacts_velocities() -> None:
    """Two impact contacts under the arm: with the elbow's point resting, the tool's impact keeps the resting
    point's normal velocity at zero (the impulse acts through both rows) and stops the tool's."""
    arm = robodyn.load(str(ARM))
    contacts = [{"frame": "tool", "model": "impact", "restitution": 0.0, "name": "tip"},
                {"frame": "forearm", "model": "impact", "restitution": 0.0, "name": "elbow"}]
    model = robodyn.ConstrainedChain(arm, contacts=contacts)
    impacts = model.impacts()
    x = np.array([0.4, -0.9, 1.0, -2.0])
    p = model.parameter_vector(None)
    after = impacts.jump(0.0, x, p, 0, frozenset({1}), plastic=True)
    _, _, _, rows = impacts._values(0.0, x, p)
    np.testing.assert_allclose(rows @ after[2:], 0.0, atol=1e-12)


def test_contact_gaps_name_events_compiled_and_interpreted() -> None:
    """The box dropped onto the incline, level with it: each corner's gap falls as g cos(theta) t^2 / 2, so its
    touchdown (the event <name>_gap falling) is at sqrt(2 gap0 / (g cos theta)), to 1e-9, compiled and in the
    interpreted kernels alike."""
    model = robodyn.load(str(BOX))
    par = model.parameters
    theta, h, g = par["theta"], par["h"], par["g"]
    lift = 0.01
    centre = (h / 2 + lift) * np.array([-math.sin(theta), math.cos(theta)])
    x0 = [centre[0], centre[1], -theta, 0.0, 0.0, 0.0]
    events = model.contact_events()
    assert [e.name for e in events] == ["back_touchdown", "back_liftoff", "front_touchdown", "front_liftoff"]
    expected = math.sqrt(2 * lift / (g * math.cos(theta)))
    for backend in ("compiled", "interpreted"):
        run = robodyn.simulate(model, expected * 1.01, x0, events=events, rtol=1e-10, atol=1e-12, backend=backend)
        found = {e.name: e.t for e in run.events}
        assert found["back_touchdown"] == pytest.approx(expected, rel=1e-9)
        assert found["front_touchdown"] == pytest.approx(expected, rel=1e-9)
    text = robodyn.simulate(model, expected * 1.01, x0, events=["back_gap - 0.005"], rtol=1e-10, atol=1e-12)
    assert text.events[0].t == pytest.approx(math.sqrt(2 * 0.005 / (g * math.cos(theta))), rel=1e-9)


@pytest.mark.parametrize(("contact", "message"), [
    ("model: impact, restitution: 1.5}", "restitution must be from 0 to 1, got 1.5"),
    ("model: impact}", "an impact contact needs restitution"),
    ("model: impact, restitution: 0.5, friction: 0.3}", "impact contacts are frictionless"),
    ("model: impact, restitution: 0.5, stiffness: 1e5}", "it takes restitution and rest_time, not stiffness"),
    ("model: impact, restitution: 0.5, rest_time: -1}", "rest_time must be a positive time in s, got -1"),
    ("model: sticky}", "model 'sticky' is not available: use compliant or impact"),
])
def test_bad_impact_contacts_are_refused_with_the_cause(contact: str, message: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    text = BALL.read_text().replace("model: impact, restitution: restitution}", contact)
    path = tmp_path / "ball.yaml"
    path.write_text(text)
    with pytest.raises((InputError, ModelFileError), match=message):
        robodyn.load(str(path))
    code, _, err = run(capsys, "show", str(path))
    assert code == 2 and message in one_line(err)
