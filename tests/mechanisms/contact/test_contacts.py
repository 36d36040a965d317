"""Compliant contact from chain files (robodyn.mechanisms.contact.contacts): the box on an incline slides at
g (sin theta - mu cos theta) or creeps at the regularization's stated speed, its forces balance gravity, and bad
contacts are refused with the cause."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError, ModelFileError

BOX = Path(__file__).resolve().parents[3] / "examples" / "box_on_incline.yaml"


def _start(model: robodyn.ConstrainedChain) -> list[float]:
    """The box resting on the incline, each corner pressed in to its static depth (m g cos theta / 2k)^(1/e)."""
    par = model.parameters
    theta, h = par["theta"], par["h"]
    depth = (par["m"] * par["g"] * math.cos(theta) / 2 / par["k"]) ** (1 / 1.5)
    centre = (h / 2 - depth) * np.array([-math.sin(theta), math.cos(theta)])
    return [centre[0], centre[1], -theta, 0.0, 0.0, 0.0]


def _along(model: robodyn.ConstrainedChain, x: np.ndarray) -> np.ndarray:
    theta = model.parameters["theta"]
    return x[..., 0] * math.cos(theta) + x[..., 1] * math.sin(theta)


@pytest.mark.parametrize("method", ["dopri5", "radau"])
def test_the_box_slides_at_g_sin_minus_mu_cos(method: str) -> None:
    """mu < tan(theta): a quadratic fit of the slide after the touchdown transient (t >= 0.5 s) has the acceleration
    g (sin theta - mu cos theta) to 1e-5 relative (the compliance tilts the box by ~1e-4 rad, and sliding at v the
    friction is short of mu f_n by eps^2 / 2 v^2)."""
    model = robodyn.load(str(BOX)).with_parameters(mu=0.2)
    par = model.parameters
    run = robodyn.simulate(model, 1.5, _start(model), rtol=1e-8, atol=1e-10, t_eval=np.linspace(0, 1.5, 301),
                           method=method)
    late = run.t >= 0.5
    acceleration = 2 * np.polyfit(run.t[late], _along(model, run.x[late]), 2)[0]
    expected = -par["g"] * (math.sin(par["theta"]) - par["mu"] * math.cos(par["theta"]))
    assert acceleration == pytest.approx(expected, rel=1e-5)
    y = dict(zip(model.outputs, run.y[-1]))
    normal = y["back_normal_force"] + y["front_normal_force"]
    assert normal == pytest.approx(par["m"] * par["g"] * math.cos(par["theta"]), rel=1e-6)
    friction = math.hypot(y["back_friction_x"] + y["front_friction_x"], y["back_friction_z"] + y["front_friction_z"])
    assert friction == pytest.approx(par["mu"] * normal, rel=1e-6)


def test_the_held_box_creeps_at_the_stated_bound() -> None:
    """mu > tan(theta): the regularized friction holds the box but for a creep at eps tan(theta) /
    sqrt(mu^2 - tan(theta)^2) (robodyn.rigid.contact), reached within the first 0.5 s and kept (1e-9 relative)."""
    model = robodyn.load(str(BOX)).with_parameters(mu=0.5)
    par = model.parameters
    run = robodyn.simulate(model, 1.5, _start(model), rtol=1e-9, atol=1e-11, t_eval=np.linspace(0.5, 1.5, 11),
                           method="radau")
    slope = math.tan(par["theta"])
    bound = 1e-3 * slope / math.sqrt(par["mu"] ** 2 - slope**2)
    for name in ("back_slip", "front_slip"):
        np.testing.assert_allclose(run.y[:, model.outputs.index(name)], bound, rtol=1e-9)
    assert model.units()["back_slip"] == "m/s" and model.units()["front_normal_force"] == "N"


def test_a_contact_model_linearizes_exactly() -> None:
    """Its A is forward mode over the tape's contact forces: central differences of f agree (h = 1e-7 against the
    contact's stiffness ~1e6: 1e-5 relative)."""
    model = robodyn.load(str(BOX)).with_parameters(mu=0.5)
    x = np.array(_start(model)) + np.array([0.0, 0.0, 0.0, 0.01, -0.002, 0.05])
    linear = robodyn.linearize(model, x)
    p = model.parameter_vector()
    h = 1e-7
    for j in range(6):
        step = np.zeros(6)
        step[j] = h * max(1.0, abs(x[j]))
        ahead, behind = model.f_raw(0.0, x + step, np.zeros(0), p), model.f_raw(0.0, x - step, np.zeros(0), p)
        column = (ahead - behind) / (2 * step[j])
        np.testing.assert_allclose(column, linear.A[:, j], rtol=1e-5, atol=1e-5 * np.max(np.abs(linear.A)))


BAD = {
    "unknown frame": ("- {frame: back,", "- {frame: bakc,", "no frame 'bakc'"),
    "negative friction": ("mu: 0.2,", "mu: -0.2,", "friction must be 0 or more, got -0.2"),
    "impact with a force law": (
        "model: compliant,\n     stiffness: k, damping: d, friction: mu, slip_velocity: eps}\n  - {frame: front",
        "model: impact,\n     stiffness: k, damping: d, friction: mu, slip_velocity: eps}\n  - {frame: front",
        "an impact contact is rigid: it takes restitution and rest_time, not damping, friction, slip_velocity, "
        "stiffness"),
    "zero normal": ("normal: [-sin(theta), 0, cos(theta)]}, model: compliant,\n     stiffness: k, damping: d, "
                    "friction: mu, slip_velocity: eps}\n  - {frame: front",
                    "normal: [0, 0, 0]}, model: compliant,\n     stiffness: k, damping: d, friction: mu, "
                    "slip_velocity: eps}\n  - {frame: front", "has no direction"),
    "stiffness": ("k: 1e6,", "k: 0,", "stiffness must be positive"),
    "unknown key": ("friction: mu, slip_velocity: eps}\n  - {frame: front", "friction: mu, grip: 1}\n  - {frame: front",
                    "a contact is"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_contacts_are_refused_with_the_cause(case: str) -> None:
    old, new, message = BAD[case]
    text = BOX.read_text()
    assert old in text, case
    with pytest.raises(ModelFileError, match=message):
        robodyn.read_model_text(text.replace(old, new), "box_on_incline.yaml")


def test_overrides_that_make_a_contact_law_unphysical_are_refused() -> None:
    box = robodyn.load(str(BOX))
    with pytest.raises(InputError, match=r"contact 'back': friction must be 0 or more, got -0\.3"):
        box.with_parameters(mu=-0.3)
    with pytest.raises(InputError, match="contact 'back': stiffness must be positive, got 0"):
        box.with_parameters(k=0.0)
    assert box.with_parameters(mu=0.4).parameters["mu"] == 0.4


def test_the_contacts_shown_carry_their_planes_normal_at_the_models_parameters() -> None:
    """contact_points() (what the 3-D view draws): the unit normal at the model's own parameters, so that a model
    with other parameters shows its own planes; one that vanishes there is refused, naming the contact."""
    text = BOX.read_text().replace("normal: [-sin(theta), 0, cos(theta)]}", "normal: [0, 0, w]}", 1)
    box = robodyn.read_model_text(text, "box_on_incline.yaml")
    back = box.contact_points()[0]
    assert (back.name, back.frame, back.normal) == ("back", "back", (0.0, 0.0, 1.0))
    steeper = box.with_parameters(theta=0.5).contact_points()
    np.testing.assert_allclose(steeper[1].normal, [-math.sin(0.5), 0.0, math.cos(0.5)], atol=1e-15)  # round-off
    with pytest.raises(InputError, match=r"contact 'back': its plane's normal is \[0\.0, 0\.0, 0\.0\]"):
        box.with_parameters(w=0.0).contact_points()
