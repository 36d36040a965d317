"""The link-inertia rule on the bodies that move (robodyn.mechanisms.chain.parts.judge_body), on both URDF backends.

A URDF welds links together by fixed joints (a camera on a trunk, a foot on a shank); only the body they make moves,
so that body is judged, its inertia the parts' moved to a common point by the parallel-axis theorem: a part that is
not physical on its own in a body that is gives a RobodynWarning naming it, a body that is not is refused, and the
root of a fixed base, which does not move, only warns. The stock ANYmal B (a trunk written as a 1e-6 placeholder
plus a welded ``base_inertia``) and ANYmal C (welded depth cameras and a hatch whose inertias break the triangle
inequality) load as shipped and equal Pinocchio's free-flyer model.
"""

from __future__ import annotations

import importlib.util
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from tests.pinocchio_reference import ROBOTS

import robodyn
from robodyn.base.errors import ModelFileError, RobodynWarning

pin = pytest.importorskip("pinocchio")
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")

ANYMAL = {"b": "anymal_b_simple_description/robots/anymal.urdf", "c": "anymal_c_simple_description/urdf/anymal.urdf"}
# The links each file welds into a body although their own inertia is no rigid body's (read from the files).
UNPHYSICAL_PARTS = {"b": {"base"}, "c": {"depth_camera_front_camera", "depth_camera_rear_camera",
                                         "depth_camera_left_camera", "depth_camera_right_camera", "hatch"}}
BACKENDS = ["tape"] + (["pinocchio"] if importlib.util.find_spec("pinocchio") else [])


def _close(ours: np.ndarray, theirs: np.ndarray) -> None:
    """Within 1e-10 of the largest entry: sums of products of the same numbers in another order (round-off ~1e-15
    relative; forward dynamics through a solve, cond(M) ~ 1e3 for these legged robots)."""
    theirs = np.asarray(theirs)
    assert np.max(np.abs(ours - theirs)) <= 1e-10 * np.max(np.abs(theirs))


def _loaded(path: Path | str, **options: object) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = robodyn.load(str(path), **options)
    return model, [str(w.message) for w in caught if issubclass(w.category, RobodynWarning)]


@needs_robots
@pytest.mark.parametrize("which", ["b", "c"])
def test_the_stock_anymal_loads_as_shipped_and_equals_pinocchio(which: str) -> None:
    """Floating: rnea, crba and aba against ``buildModelFromUrdf(path, JointModelFreeFlyer())`` at random states;
    fixed: forward dynamics against the plain model. The warnings name exactly the parts that are not physical."""
    path = ROBOTS / ANYMAL[which]  # type: ignore[operator]
    model, messages = _loaded(path, base="floating", dynamics=False)
    named = {re.search(r": link '([^']+)'", m).group(1) for m in messages}  # type: ignore[union-attr]
    assert named == UNPHYSICAL_PARTS[which], messages
    assert all("kept: it moves only as part of the body of link 'base'" in m for m in messages), messages
    reference = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    data = reference.createData()
    assert (model.nq, model.nv) == (reference.nq, reference.nv)
    rng = np.random.default_rng(45)
    for _ in range(3):
        quaternion = rng.normal(size=4)
        q = np.concatenate([rng.normal(size=3), quaternion / np.linalg.norm(quaternion),
                            rng.uniform(-1.5, 1.5, reference.nq - 7)])
        v, a, tau = rng.normal(size=reference.nv), rng.normal(size=reference.nv), rng.normal(size=reference.nv - 6)
        mass = pin.crba(reference, data, q)
        _close(model.mass_matrix(q), np.triu(mass) + np.triu(mass, 1).T)
        _close(model.inverse_dynamics(q, v, a), pin.rnea(reference, data, q, v, a))
        _close(model.acceleration(q, v, tau), pin.aba(reference, data, q, v, np.concatenate([np.zeros(6), tau])))
    fixed, _ = _loaded(path, dynamics=False)
    plain = pin.buildModelFromUrdf(str(path))
    q, v, tau = rng.uniform(-1.5, 1.5, plain.nq), rng.normal(size=plain.nv), rng.normal(size=plain.nv)
    _close(fixed.f(0.0, np.concatenate([q, v]), tau)[plain.nq:], pin.aba(plain, plain.createData(), q, v, tau))


def _robot(tmp_path: Path, camera: str, *, arm: str = "0.04 0.05 0.06", root: str = "0.1 0.1 0.1") -> Path:
    """A base, an arm turned by one revolute joint, and a camera welded to the arm (placed and turned): inertias
    as 'ixx iyy izz' (diagonal), the camera's also about a turned inertial frame."""
    def inertial(mass: float, moments: str, origin: str = "") -> str:
        ixx, iyy, izz = moments.split()
        return (f'<inertial><mass value="{mass}"/>{origin}<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" '
                f'izz="{izz}"/></inertial>')

    text = f"""<robot name="probe">
  <link name="base">{inertial(3.0, root)}</link>
  <link name="arm">{inertial(2.0, arm, '<origin xyz="0.2 0 0"/>')}</link>
  <link name="camera">{inertial(0.3, camera, '<origin xyz="0.01 0.02 0" rpy="0.3 0 0.2"/>')}</link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="5"/></joint>
  <joint name="camera_mount" type="fixed"><parent link="arm"/><child link="camera"/>
    <origin xyz="0.4 0 0.05" rpy="0 0.5 0"/></joint>
</robot>"""
    path = tmp_path / "probe.urdf"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_welded_part_that_is_not_physical_is_a_warning_naming_it(tmp_path: Path, backend: str) -> None:
    """The camera's moments 0.001 + 0.001 < 0.01 (ten times past the triangle inequality, refused as a link of its
    own) in an arm that is physical with it: loaded, with a warning naming the camera, its joint and its body; the
    arm's mass about the joint is the parallel-axis sum (computed here from the file's numbers)."""
    path = _robot(tmp_path, "0.001 0.001 0.01")
    model, messages = _loaded(path, backend=backend)
    assert len(messages) == 1 and re.search(
        r"link 'camera' \(welded by fixed joint 'camera_mount' into the body of link 'arm'\): inertia .* violates the "
        r"triangle inequality.*kept: it moves only as part of the body of link 'arm'", messages[0]), messages

    def rotation(axis: int, angle: float) -> np.ndarray:  # about x, y or z: the URDF's rpy is Rz Ry Rx
        c, s = np.cos(angle), np.sin(angle)
        return [np.array([[1, 0, 0], [0, c, -s], [0, s, c]]), np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]),
                np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])][axis]

    mount, frame = rotation(1, 0.5), rotation(2, 0.2) @ rotation(0, 0.3)
    camera_com = np.array([0.4, 0, 0.05]) + mount @ np.array([0.01, 0.02, 0])
    camera_inertia = (mount @ frame) @ np.diag([0.001, 0.001, 0.01]) @ (mount @ frame).T
    # about the joint's y axis through the arm's origin: each part's own moment plus m (x^2 + z^2)
    expected = 0.05 + 2.0 * 0.2**2 + camera_inertia[1, 1] + 0.3 * (camera_com[0] ** 2 + camera_com[2] ** 2)
    assert model.mass_matrix(np.array([0.3]))[0, 0] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_moving_body_that_is_not_physical_is_refused_naming_its_parts(tmp_path: Path, backend: str) -> None:
    """A light arm with the same camera, ten times heavier in inertia: the body they make breaks the triangle
    inequality too (a sum of physical parts would not), so the arm is refused, naming the camera as the cause."""
    path = _robot(tmp_path, "0.01 0.01 0.1", arm="0.0001 0.0001 0.0001")
    with pytest.raises(ModelFileError, match=r"link 'arm' and the links welded to it by fixed joints \('camera'\) "
                       r"move as one body, whose inertia .* about its centre of mass violates the triangle inequality"
                       r".*the links whose own inertia is not physical: 'camera'; or load the robot with "
                       r"check_inertia=False"):
        robodyn.load(str(path), backend=backend)
    model, messages = _loaded(path, backend=backend, check_inertia=False)  # kept as given, silently
    assert messages == [] and model.n_coordinates == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_body_of_one_link_is_judged_as_that_link(tmp_path: Path, backend: str) -> None:
    """Without parts welded to it (the camera massless and without inertia), the arm is judged as before: refused
    with the link's own inertia and message."""
    path = _robot(tmp_path, "0 0 0", arm="0.01 0.01 0.1")
    path.write_text(path.read_text().replace('<mass value="0.3"/>', '<mass value="0"/>'))
    with pytest.raises(ModelFileError, match=r"link 'arm': inertia \[\[0.01, 0.0, 0.0\], .*violates the triangle "
                       r"inequality: principal moments \[0.01, 0.01, 0.1\]"):
        robodyn.load(str(path), backend=backend)


def test_the_root_of_a_fixed_base_does_not_move(tmp_path: Path) -> None:
    """A root link that is not physical only warns on a fixed base (it takes no part in the dynamics, on both
    backends); on a floating base it is the body that moves, and is refused."""
    path = _robot(tmp_path, "0.01 0.01 0.015", root="0.001 0.001 0.1")
    for backend in BACKENDS:
        _, messages = _loaded(path, backend=backend)
        assert len(messages) == 1 and "link 'base': inertia" in messages[0] and (
            "kept: link 'base' is the fixed base, which does not move" in messages[0]), messages
    with pytest.raises(ModelFileError, match=r"link 'base': inertia .* violates the triangle inequality"):
        robodyn.load(str(path), base="floating")


@pytest.mark.parametrize("seed", range(4))
def test_physical_parts_make_a_physical_body_equal_to_pinocchios(tmp_path: Path, seed: int) -> None:
    """Random physical parts (principal moments inside the triangle, turned inertial frames, placements) welded in
    a chain of fixed joints: no warning, and the tape's mass matrix equals Pinocchio's on its own merged model."""
    rng = np.random.default_rng(seed)

    def part(name: str) -> str:
        a, b = rng.uniform(0.1, 1.0, 2)
        moments = np.array([a, b, rng.uniform(abs(a - b), a + b)]) * 1e-2  # I3 <= I1 + I2 and each >= |difference|
        origin = " ".join(f"{v:.6f}" for v in rng.uniform(-0.3, 0.3, 3))
        turn = " ".join(f"{v:.6f}" for v in rng.uniform(-1.5, 1.5, 3))
        return (f'<link name="{name}"><inertial><mass value="{rng.uniform(0.1, 2):.6f}"/><origin xyz="{origin}" '
                f'rpy="{turn}"/><inertia ixx="{moments[0]:.8f}" ixy="0" ixz="0" iyy="{moments[1]:.8f}" iyz="0" '
                f'izz="{moments[2]:.8f}"/></inertial></link>')

    def joint(name: str, kind: str, parent: str, child: str) -> str:
        place = " ".join(f"{v:.6f}" for v in rng.uniform(-0.5, 0.5, 3))
        turn = " ".join(f"{v:.6f}" for v in rng.uniform(-1.5, 1.5, 3))
        limit = '<axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="1" velocity="1"/>' if kind != "fixed" else ""
        return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
                f'<origin xyz="{place}" rpy="{turn}"/>{limit}</joint>')

    links = ["base", "a", "a1", "a2", "b", "b1"]
    text = "".join(part(name) for name in links) + "".join([
        joint("ja", "revolute", "base", "a"), joint("wa1", "fixed", "a", "a1"), joint("wa2", "fixed", "a1", "a2"),
        joint("jb", "revolute", "a2", "b"), joint("wb1", "fixed", "b", "b1")])
    path = tmp_path / "parts.urdf"
    path.write_text(f'<robot name="parts">{text}</robot>', encoding="utf-8")
    model, messages = _loaded(path)
    assert messages == []
    reference = pin.buildModelFromUrdf(str(path))
    q = rng.uniform(-1, 1, 2)
    _close(model.mass_matrix(q), pin.crba(reference, reference.createData(), q))
