"""Robot data as published: standard and modified (Craig) Denavit–Hartenberg placement, asymmetric
Coulomb friction, viscous friction and motor inertia through the gear ratio.

The same two-link planar arm (links l1, l2 along x, centres of mass lc1, lc2, gravity along -y) written
three ways — standard DH (link frames at the distal joints), modified DH (link frames at the joints) and
xyz — against inverse dynamics computed independently here: the textbook closed form of the two-link
arm (Spong, Hutchinson, Vidyasagar, *Robot Modeling and Control*, section 7.4) plus the joint terms
G^2 Jm q'' + b q' + F(q') by hand. Entries are O(1-100) from a few dozen operations: 1e-12 relative.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import robodyn

P = {"m1": 1.3, "m2": 0.9, "l1": 0.7, "l2": 0.5, "lc1": 0.3, "lc2": 0.2, "I1": 0.05, "I2": 0.03, "g": 9.81}
JM, G, B = (2e-4, 1.5e-4), (50.0, -30.0), (0.02, 0.01)  # rotor inertia, gear ratio (signed), viscous (joint)
TC = ((-0.4, 0.3), (-0.1, 0.25))  # [Tc-, Tc+] at each joint
EPS = 1e-3

COMMON = """
name: arm_{kind}
kind: chain
parameters: {{m1: 1.3, m2: 0.9, l1: 0.7, l2: 0.5, lc1: 0.3, lc2: 0.2, I1: 0.05, I2: 0.03, g: 9.81}}
gravity: [0, -g, 0]
joints:
  - {{name: q1, parent: base, child: link1, {place1}, rotor_inertia: 2e-4, gear_ratio: 50, damping: 0.02,
     friction: [-0.4, 0.3]}}
  - {{name: q2, parent: link1, child: link2, {place2}, rotor_inertia: 1.5e-4, gear_ratio: -30, damping: 0.01,
     friction: [-0.1, 0.25]}}
links:
  - {{name: base}}
  - {{name: link1, mass: m1, com: {com1}, inertia: {{ixx: I1, iyy: I1, izz: I1}}}}
  - {{name: link2, mass: m2, com: {com2}, inertia: {{ixx: I2, iyy: I2, izz: I2}}}}
"""
FORMS = {
    "dh": ("dh: {a: l1, alpha: 0, d: 0}", "dh: {a: l2, alpha: 0, d: 0}", "[lc1 - l1, 0, 0]", "[lc2 - l2, 0, 0]"),
    "mdh": ("mdh: {a: 0, alpha: 0, d: 0}", "mdh: {a: l1, alpha: 0, d: 0}", "[lc1, 0, 0]", "[lc2, 0, 0]"),
    "xyz": ("xyz: [0, 0, 0]", "xyz: [l1, 0, 0]", "[lc1, 0, 0]", "[lc2, 0, 0]"),
}


def _reference(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    m1, m2, l1, lc1, lc2, I1, I2, g = (P[k] for k in ("m1", "m2", "l1", "lc1", "lc2", "I1", "I2", "g"))
    c2, s2 = math.cos(q[1]), math.sin(q[1])
    off_diagonal = m2 * (lc2**2 + l1 * lc2 * c2) + I2
    M = np.array([[m1 * lc1**2 + I1 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2) + I2, off_diagonal],
                  [off_diagonal, m2 * lc2**2 + I2]])
    h = -m2 * l1 * lc2 * s2
    coriolis = np.array([h * (2 * qd[0] * qd[1] + qd[1] ** 2), -h * qd[0] ** 2])
    gravity = np.array([(m1 * lc1 + m2 * l1) * g * math.cos(q[0]) + m2 * lc2 * g * math.cos(q[0] + q[1]),
                        m2 * lc2 * g * math.cos(q[0] + q[1])])
    terms = np.empty(2)
    for i in range(2):
        s = math.tanh(qd[i] / EPS)
        minus, plus = TC[i]
        friction = (plus - minus) / 2 * s + (plus + minus) / 2 * s * s
        terms[i] = G[i] ** 2 * JM[i] * qdd[i] + B[i] * qd[i] + friction
    return M @ qdd + coriolis + gravity + terms


@pytest.mark.parametrize("kind", list(FORMS))
def test_published_arm_in_each_convention_matches_the_closed_form(tmp_path: Path, kind: str) -> None:
    place1, place2, com1, com2 = FORMS[kind]
    path = tmp_path / f"arm_{kind}.yaml"
    path.write_text(COMMON.format(kind=kind, place1=place1, place2=place2, com1=com1, com2=com2), encoding="utf-8")
    model = robodyn.load(path)
    rng = np.random.default_rng(5)
    for _ in range(10):
        q, qd, qdd = rng.uniform(-2, 2, 2), rng.uniform(-1, 1, 2), rng.uniform(-3, 3, 2)
        expected = _reference(q, qd, qdd)
        np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd), expected, rtol=0,
                                   atol=1e-12 * max(1.0, np.abs(expected).max()))


def test_friction_is_zero_at_rest_and_reaches_each_side(tmp_path: Path) -> None:
    place1, place2, com1, com2 = FORMS["xyz"]
    path = tmp_path / "arm.yaml"
    path.write_text(COMMON.format(kind="xyz", place1=place1, place2=place2, com1=com1, com2=com2), encoding="utf-8")
    model = robodyn.load(path)
    q = np.zeros(2)
    at_rest = model.inverse_dynamics(q, np.zeros(2), np.zeros(2))
    fast = model.inverse_dynamics(q, np.array([1.0, 0.0]), np.zeros(2)) - at_rest
    backwards = model.inverse_dynamics(q, np.array([-1.0, 0.0]), np.zeros(2)) - at_rest
    # at q' = +-1 the centripetal terms are the same both ways; friction tanh(1/eps) = 1 to 1e-15
    assert fast[0] - backwards[0] == pytest.approx(0.3 - (-0.4) + 2 * 0.02, rel=1e-12)
    with pytest.raises(robodyn.InputError, match=r"\[Tc_minus, Tc_plus\]"):
        bad = path.with_name("bad.yaml")
        bad.write_text(path.read_text(encoding="utf-8").replace("friction: [-0.4, 0.3]", "friction: [1, 2, 3]"),
                       encoding="utf-8")
        robodyn.load(bad)
    with pytest.raises(robodyn.InputError, match="not both"):
        both = path.with_name("both.yaml")
        both.write_text(path.read_text(encoding="utf-8").replace("xyz: [l1, 0, 0]", "dh: {a: l1}, mdh: {a: l1}"),
                        encoding="utf-8")
        robodyn.load(both)
