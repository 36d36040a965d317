"""Every URDF of example-robot-data loaded as shipped (the default ``check_inertia``), with a fixed and a floating
base: which load, which are refused and why, and the floating ones against Pinocchio's free-flyer model.

Since the link-inertia rule judges the bodies that move (robodyn.mechanisms.chain.parts.judge_body: a link with the
links
welded to it by fixed joints), these load that were refused before, each for a welded part that no rigid body is,
now a RobodynWarning naming it: the Allegro hands (fingertips), ANYmal B (and with its Kinova arm), B1 (and with its
Z1 arm), Go1 and HyQ (a trunk written as a 1e-6 placeholder beside the welded link that carries its inertia), ANYmal
C (depth cameras, a hatch), PR2 (sensor mounts) and the three TIAGos (antennas). A one-body URDF moves with
``base="floating"``: the Hector quadrotor and the Iris drone load with a floating base (a fixed one still has nothing
to move). :data:`REFUSED` lists what is still refused, and why: the files are wrong where it matters.

Every verdict runs unmarked (loading is numpy only); the comparisons with Pinocchio, which compile each robot's tape,
are marked slow beyond a fast subset (:data:`FAST`: the ANYmals, the one-body drones, an arm, a refusal).
"""

from __future__ import annotations

import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from tests.pinocchio_reference import ROBOTS, configuration, coupling

import robodyn
from robodyn.base.errors import ModelFileError, RobodynWarning

pin = pytest.importorskip("pinocchio")

FAST = {"anymal_b_simple_description/robots/anymal.urdf", "anymal_c_simple_description/urdf/anymal.urdf",
        "hector_description/robots/quadrotor_base.urdf", "iris_description/robots/iris_simple.urdf",
        "romeo_description/urdf/romeo_small.urdf", "ur_description/urdf/ur5_robot.urdf"}
BOTH = ("fixed", "floating")
# file -> {base: what the refusal says}; every other (file, base) loads.
REFUSED = {
    # its <mimic> tags name 'index_q1', a joint the file does not have (its joints are Left_index_q1, ...)
    "alex_description/urdf/alex_psyonic_hands.urdf": dict.fromkeys(BOTH, "<mimic joint='index_q1'> names no"),
    # one body, no joint: it moves only on a floating base
    "hector_description/robots/quadrotor_base.urdf": {"fixed": "nothing to move"},
    "iris_description/robots/iris_simple.urdf": {"fixed": "nothing to move"},
    # massless links moved by joints: the mass matrix is singular
    "romeo_description/urdf/romeo.urdf": dict.fromkeys(BOTH, "has no mass, so the mass matrix is singular"),
    # moving links with a negative principal moment (the trunk 'body' too, once it moves)
    "romeo_description/urdf/romeo_laas_small.urdf": {
        "fixed": "link 'LHipPitch_link': inertia .* negative principal",
        "floating": "link 'body': inertia .* negative principal"},
    # a moving link 2.6 times past the triangle inequality
    "romeo_description/urdf/romeo_small.urdf": dict.fromkeys(BOTH, "link 'RShoulderYawLink': inertia .* triangle"),
    # its <robot> has no name and its root link is missing: Pinocchio refuses it too
    "ur_description/urdf/ur3.urdf": dict.fromkeys(BOTH, "expected one root link"),
}


def _every_case() -> list[object]:
    if ROBOTS is None:
        return []
    cases = []
    for path in sorted(ROBOTS.rglob("*.urdf")):
        relative = path.relative_to(ROBOTS).as_posix()
        for base in BOTH:  # loading is numpy only; the floating comparison compiles the robot's tape
            slow = base == "floating" and relative not in FAST
            cases.append(pytest.param(relative, base, marks=[pytest.mark.slow] if slow else [],
                                      id=f"{relative.split('/')[0]}-{path.stem}-{base}"))
    return cases


def _unphysical_links(path: Path) -> set[str]:
    """The links whose own inertia no rigid body has, by the file's numbers: a principal moment below -1e-9 of the
    trace, or the largest above the sum of the two others by more than that (numpy's eigenvalues, independent of
    robodyn's rule)."""
    found = set()
    for link in ET.parse(path).getroot().iter("link"):
        inertia = link.find("inertial/inertia")
        if inertia is None:
            continue
        e = {k: float(inertia.get(k, 0)) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        moments = np.linalg.eigvalsh([[e["ixx"], e["ixy"], e["ixz"]], [e["ixy"], e["iyy"], e["iyz"]],
                                      [e["ixz"], e["iyz"], e["izz"]]])
        slack = 1e-9 * max(moments.sum(), 0.0)
        if moments[0] < -slack or moments[2] - moments[0] - moments[1] > slack:
            found.add(link.get("name", ""))
    return found


def _free_flyer_state(path: Path, model: object, rng: np.random.Generator) -> tuple[object, ...]:
    """Pinocchio's free-flyer model, its configuration and velocity for random robodyn coordinates, and the map
    from robodyn's velocities to its (the base's six, then the joints' through their mimic couplings)."""
    plain = pin.buildModelFromUrdf(str(path))
    joints = model.coordinates[7:]  # type: ignore[attr-defined]
    G, offset = coupling(path, plain, joints)
    reference = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    quaternion = rng.normal(size=4)
    angles = rng.uniform(-1.5, 1.5, len(joints))
    q = np.concatenate([rng.normal(size=3), quaternion / np.linalg.norm(quaternion), angles])
    q_full = np.concatenate([q[:7], configuration(plain, G @ angles + offset)])
    full = np.zeros((reference.nv, 6 + len(joints)))
    full[:6, :6], full[6:, 6:] = np.eye(6), G
    return reference, q, q_full, full


@pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
@pytest.mark.parametrize(("relative", "base"), _every_case())
def test_every_stock_robot_as_shipped(relative: str, base: str) -> None:
    """Refused as REFUSED says, or loaded with warnings that name only links whose own inertia is not physical; on
    a floating base, M, inverse dynamics and forward dynamics equal Pinocchio's free-flyer model (mimic joints
    through their couplings) at a random state."""
    path = ROBOTS / relative  # type: ignore[operator]
    expected = REFUSED.get(relative, {}).get(base)
    if expected is not None:
        with pytest.raises(ModelFileError, match=expected), warnings.catch_warnings():
            warnings.simplefilter("ignore", RobodynWarning)  # the parts kept before the refusal
            robodyn.load(str(path), base=base, dynamics=False)
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = robodyn.load(str(path), base=base, dynamics=False)
    warned = {re.search(r"\.urdf: link '([^']+)'", str(w.message)).group(1)  # type: ignore[union-attr]
              for w in caught if issubclass(w.category, RobodynWarning)}
    assert warned <= _unphysical_links(path), warned
    if base == "fixed":
        return
    rng = np.random.default_rng(len(relative))
    reference, q, q_full, full = _free_flyer_state(path, model, rng)
    data = reference.createData()
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    tau = rng.normal(size=model.n_inputs)
    mass = pin.crba(reference, data, q_full)
    mass = full.T @ (np.triu(mass) + np.triu(mass, 1).T) @ full
    scale = float(np.abs(mass).max())
    assert np.abs(model.mass_matrix(q) - mass).max() <= 1e-10 * scale
    torques = full.T @ pin.rnea(reference, data, q_full, full @ v, full @ a)
    assert np.abs(model.inverse_dynamics(q, v, a) - torques).max() <= 1e-10 * max(1.0, np.abs(torques).max())
    bias = full.T @ pin.rnea(reference, data, q_full, full @ v, np.zeros(reference.nv))
    expected_a = np.linalg.solve(mass, np.concatenate([np.zeros(6), tau]) - bias)
    # two algorithms through M^-1 (ABA on the tape, a dense solve here): ~cond(M) eps relative, at least 1e-10
    solved = max(1e-10, 100 * np.finfo(float).eps * float(np.linalg.cond(mass)))
    assert np.abs(model.acceleration(q, v, tau) - expected_a).max() <= solved * max(1.0, np.abs(expected_a).max())
