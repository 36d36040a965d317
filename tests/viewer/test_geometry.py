"""robodyn.viewer.geometry: a URDF's shapes, origins and colours as the file writes them; the Panda's visuals and
collisions counted by ElementTree; a missing mesh warns; chains drawn from their frames."""

from __future__ import annotations

import math
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError, ModelFileError, RobodynWarning
from robodyn.kinematics.frames import kinematics
from robodyn.viewer.geometry import frame_geometry, urdf_geometry

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pinocchio_reference import ROBOTS

pytest.importorskip("trimesh")

SHAPES_URDF = """<robot name="shapes">
  <material name="blue"><color rgba="0 0 0.8 1"/></material>
  <link name="base">
    <visual><origin xyz="0.1 0.2 0.3" rpy="0.1 0.2 0.3"/><geometry><box size="0.1 0.2 0.3"/></geometry>
      <material name="blue"/></visual>
    <visual><geometry><sphere radius="0.05"/></geometry><material name="own"><color rgba="1 0.5 0 0.5"/></material>
    </visual>
  </link>
  <link name="arm">
    <visual><origin xyz="0 0 0.25"/><geometry><cylinder radius="0.03" length="0.5"/></geometry></visual>
    <visual><geometry><capsule radius="0.02" length="0.4"/></geometry><material name="blue"/></visual>
    <visual><geometry><mesh filename="package://shapes_pkg/meshes/tet.stl" scale="2 2 2"/></geometry></visual>
    <collision><geometry><box size="1 1 1"/></geometry></collision>
  </link>
  <link name="hand">
    <visual><geometry><mesh filename="package://shapes_pkg/meshes/lost.stl"/></geometry></visual>
  </link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="fixed"><parent link="arm"/><child link="hand"/><origin xyz="0 0 0.5"/></joint>
</robot>
"""


def _shapes_package(root: Path) -> Path:
    (root / "shapes_pkg" / "urdf").mkdir(parents=True)
    (root / "shapes_pkg" / "meshes").mkdir()
    (root / "shapes_pkg" / "meshes" / "tet.stl").write_text(
        "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\n"
        "endsolid t\n")
    urdf = root / "shapes_pkg" / "urdf" / "shapes.urdf"
    urdf.write_text(SHAPES_URDF)
    return urdf


def test_shapes_origins_and_colours_as_the_file_writes_them(tmp_path: Path) -> None:
    urdf = _shapes_package(tmp_path)
    with pytest.warns(RobodynWarning, match=r"link 'hand': mesh 'package://shapes_pkg/meshes/lost.stl' not found.*"
                                            "drawn as its frame"):
        geometry = urdf_geometry(urdf)
    assert geometry.missing == ("hand",)
    assert [(v.link, v.shape, v.size) for v in geometry.visuals] == [
        ("base", "box", (0.1, 0.2, 0.3)), ("base", "sphere", (0.05,)), ("arm", "cylinder", (0.03, 0.5)),
        ("arm", "capsule", (0.02, 0.4)), ("arm", "mesh", (2.0, 2.0, 2.0))]
    box, sphere, cylinder, capsule, mesh = geometry.visuals
    # the origin: R = Rz(yaw) Ry(pitch) Rx(roll), written out here from the specification's convention
    r, p, y = 0.1, 0.2, 0.3
    Rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    Ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    Rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    np.testing.assert_allclose(box.origin[:3, :3], Rz @ Ry @ Rx, atol=1e-15)
    np.testing.assert_allclose(box.origin[:3, 3], [0.1, 0.2, 0.3])
    np.testing.assert_allclose(cylinder.origin[:3, 3], [0, 0, 0.25])
    assert box.rgba == (0.0, 0.0, 0.8, 1.0) == capsule.rgba  # the robot-level material by name
    assert sphere.rgba == (1.0, 0.5, 0.0, 0.5)  # the visual's own colour
    assert cylinder.rgba is None and mesh.rgba is None  # no material: the mesh's own colours, else grey
    assert mesh.mesh is not None and mesh.mesh.triangles == 1
    collisions = urdf_geometry(urdf, collision=True)
    assert [(v.link, v.shape, v.size) for v in collisions.visuals] == [("arm", "box", (1.0, 1.0, 1.0))]


@pytest.mark.parametrize(("old", "new", "message"), [
    ('<box size="0.1 0.2 0.3"/>', '<box size="0.1 0.2"/>', "expected 3 finite numbers"),
    ('<sphere radius="0.05"/>', '<sphere radius="-1"/>', "sizes must be positive"),
    ('<sphere radius="0.05"/>', '<sphere radius="nan"/>', "finite"),
    ('<sphere radius="0.05"/>', '<cone radius="1"/>', "no box, cylinder, capsule, sphere or mesh"),
    ('rgba="1 0.5 0 0.5"', 'rgba="1 0.5"', "material rgba"),
    ('shapes_pkg/meshes/tet.stl', '../../etc/passwd', "not a package name"),
    ("<robot", '<!DOCTYPE r [<!ENTITY x "y">]><robot', "DTD"),
])
def test_bad_geometry_is_refused_naming_the_link(tmp_path: Path, old: str, new: str, message: str) -> None:
    urdf = _shapes_package(tmp_path)
    urdf.write_text(SHAPES_URDF.replace(old, new, 1).replace(
        '<mesh filename="package://shapes_pkg/meshes/lost.stl"/>', '<sphere radius="0.01"/>'))
    with pytest.raises((InputError, ModelFileError), match=message):
        urdf_geometry(urdf)


def _panda() -> Path:
    path = None if ROBOTS is None else ROBOTS / "panda_description" / "urdf" / "panda.urdf"
    if path is None or not path.is_file():
        pytest.skip("example-robot-data is not installed")
    return path


@pytest.mark.parametrize("tag", ["visual", "collision"])
def test_every_panda_visual_and_collision_is_read_with_its_mesh(tag: str) -> None:
    path = _panda()
    expected = [link.get("name") for link in ET.parse(path).getroot().iter("link") for _ in link.findall(tag)]
    geometry = urdf_geometry(path, collision=tag == "collision")
    assert [v.link for v in geometry.visuals] == expected and geometry.missing == ()
    meshes = [v for v in geometry.visuals if v.shape == "mesh"]
    assert len(meshes) >= 9 and all(v.mesh is not None and v.mesh.triangles > 0 for v in meshes)
    if tag == "visual":  # the DAEs' materials: white and dark grey parts
        colours = {part.rgba for v in geometry.visuals for part in v.mesh.parts}  # type: ignore[union-attr]
        assert None not in colours and len(colours) >= 2


def test_a_chain_is_drawn_as_capsules_between_its_joint_origins() -> None:
    model = robodyn.load("two_link_arm")
    kin = kinematics(model)
    geometry = frame_geometry(kin)
    capsules = [v for v in geometry.visuals if v.shape == "capsule"]
    # the segments' lengths are the distances between consecutive frame origins at any configuration (revolute
    # joints): fk at a random one, and the catalog's l1 for the upper arm
    q = np.random.default_rng(3).uniform(-3, 3, len(kin.coordinates))
    distances = {kin.parent_frame(f): float(np.linalg.norm(kin.position(q, f) - kin.position(q, kin.parent_frame(f))))
                 for f in kin.frames if kin.parent_frame(f) is not None}
    assert len(capsules) == 2 == len([d for d in distances.values() if d > 0])
    for capsule in capsules:
        np.testing.assert_allclose(capsule.size[1], distances[capsule.link], rtol=1e-12)
    assert any(math.isclose(c.size[1], model.parameters["l1"], rel_tol=1e-12) for c in capsules)
    for capsule in capsules:  # each capsule's axis (z) points along its segment, its centre halfway
        centre = capsule.origin[:3, 3]
        np.testing.assert_allclose(np.linalg.norm(centre), capsule.size[1] / 2, rtol=1e-12)
        np.testing.assert_allclose(capsule.origin[:3, 2], centre / np.linalg.norm(centre), atol=1e-12)
    assert {v.link for v in geometry.visuals if v.shape == "sphere"} == set(kin.frames)
