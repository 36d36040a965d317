"""What is drawn of a robot: each link's shapes (boxes, cylinders, spheres, capsules, meshes) placed in its frame.

From a URDF, the ``<visual>`` elements (``<collision>`` ones with ``collision=True``) of every link: the
``<origin xyz rpy>`` (R = Rz(yaw) Ry(pitch) Rx(roll)), the ``<geometry>`` — ``<box size>``, ``<cylinder radius
length>`` and ``<capsule radius length>`` along z and centred, ``<sphere radius>``, ``<mesh filename scale>`` — and
the colour: the visual's ``<material>`` with its own ``<color rgba>``, or the robot-level ``<material name>`` it
names, else the mesh's own colours. The file is read as robodyn reads every URDF (robodyn.mechanisms.urdf.file:
a DTD or entity is refused, nothing is expanded). Meshes are found by robodyn.viewer.packages and read by
robodyn.viewer.meshes; a mesh that is not found warns naming it, and its link is drawn as its frame.

Models without a robot file (chain files, the catalog) are drawn from their kinematics: a capsule from each
frame's parent to its origin and a sphere at each joint (:func:`frame_geometry`), so every model can be seen.

Reference: the URDF specification, wiki.ros.org/urdf/XML (link, visual, geometry, material).
"""

from __future__ import annotations

import math
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np

from robodyn.base.errors import InputError, RobodynWarning
from robodyn.kinematics.rotations import rotation_from_rpy
from robodyn.mechanisms.urdf.file import read_robot, robot_links
from robodyn.viewer.meshes import Mesh, load_mesh
from robodyn.viewer.packages import MeshLocator

if TYPE_CHECKING:
    from robodyn.kinematics.frames import Kinematics

__all__ = ["SHAPES", "RobotGeometry", "Visual", "frame_geometry", "urdf_geometry"]

SHAPES: Final = ("box", "cylinder", "sphere", "capsule", "mesh")
GREY: Final = (0.7, 0.7, 0.72, 1.0)  # links without a colour
CHAIN_COLOUR: Final = (0.35, 0.55, 0.8, 1.0)  # the capsules of a model without a robot file


@dataclass(frozen=True, slots=True)
class Visual:
    """One shape of ``link``, placed by ``origin`` (4, 4) in the link's frame.

    ``size``: box (x, y, z); cylinder and capsule (radius, length) along z; sphere (radius,); mesh the scale
    (sx, sy, sz). ``rgba`` (0..1) or None for the mesh's own colours; ``mesh`` the parts of a mesh."""

    link: str
    origin: np.ndarray
    shape: str
    size: tuple[float, ...]
    rgba: tuple[float, float, float, float] | None
    mesh: Mesh | None = None

    def __post_init__(self) -> None:
        if self.shape not in SHAPES or self.origin.shape != (4, 4) or (self.shape == "mesh") != (self.mesh is not None):
            raise InputError(f"link {self.link!r}: a {self.shape} visual needs a (4, 4) origin and a mesh only if "
                             "it is one")


@dataclass(frozen=True, slots=True)
class RobotGeometry:
    """The shapes of a robot and the links drawn as their frames instead (``missing``: a mesh not found)."""

    visuals: tuple[Visual, ...]
    missing: tuple[str, ...] = ()

    @property
    def links(self) -> tuple[str, ...]:
        """The links with something drawn, in file order."""
        return tuple(dict.fromkeys(v.link for v in self.visuals))


def _floats(text: str | None, count: int, default: tuple[float, ...], where: str) -> tuple[float, ...]:
    if text is None:
        return default
    try:
        values = tuple(float(v) for v in text.split())
    except ValueError:
        values = ()
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise InputError(f"{where}: expected {count} finite numbers, got {text!r}")
    return values


def _origin(element: ET.Element | None, where: str) -> np.ndarray:
    """The (4, 4) transform of an ``<origin xyz rpy>`` (identity when absent)."""
    T = np.eye(4)
    if element is not None:
        T[:3, :3] = rotation_from_rpy(np.array(_floats(element.get("rpy"), 3, (0.0, 0.0, 0.0), f"{where} rpy")))
        T[:3, 3] = _floats(element.get("xyz"), 3, (0.0, 0.0, 0.0), f"{where} xyz")
    return T


def _rgba(material: ET.Element | None, named: dict[str, tuple[float, ...]], where: str
          ) -> tuple[float, float, float, float] | None:
    """A visual's colour: its material's own ``<color rgba>``, else the robot-level material it names."""
    if material is None:
        return None
    colour = material.find("color")
    if colour is not None and colour.get("rgba") is not None:
        values = _floats(colour.get("rgba"), 4, (), f"{where} material rgba")
    else:
        values = named.get(material.get("name", ""), ())
    if not values:
        return None
    r, g, b, a = (min(max(v, 0.0), 1.0) for v in values)
    return (r, g, b, a)


def _materials(root: ET.Element, where: str) -> dict[str, tuple[float, ...]]:
    found = {}
    for material in root.findall("material"):
        colour = material.find("color")
        if material.get("name") and colour is not None and colour.get("rgba") is not None:
            found[material.get("name", "")] = _floats(colour.get("rgba"), 4, (), f"{where}: material rgba")
    return found


def _shape(geometry: ET.Element, link: str, locator: MeshLocator, where: str
           ) -> tuple[str, tuple[float, ...], Mesh | None] | None:
    """(shape, size, mesh) of a ``<geometry>``; None for a mesh that is not found (warned)."""
    for element in geometry:
        tag = element.tag
        if tag == "box":
            return "box", _floats(element.get("size"), 3, (), f"{where} box size"), None
        if tag in ("cylinder", "capsule"):
            radius = _floats(element.get("radius"), 1, (), f"{where} {tag} radius")
            return tag, radius + _floats(element.get("length"), 1, (), f"{where} {tag} length"), None
        if tag == "sphere":
            return "sphere", _floats(element.get("radius"), 1, (), f"{where} sphere radius"), None
        if tag == "mesh":
            filename = element.get("filename", "")
            scale = _floats(element.get("scale"), 3, (1.0, 1.0, 1.0), f"{where} mesh scale")
            path = locator.resolve(filename, link)
            if path is None:
                warnings.warn(f"{locator.urdf}: link {link!r}: mesh {filename!r} not found (looked in the URDF's "
                              "package, --package-dir, ROS_PACKAGE_PATH and example-robot-data): the link is drawn "
                              "as its frame", RobodynWarning, stacklevel=4)
                return None
            return "mesh", scale, load_mesh(path, link)
    raise InputError(f"{where}: <geometry> holds no box, cylinder, capsule, sphere or mesh")


def urdf_geometry(path: str | Path, *, collision: bool = False, locator: MeshLocator | None = None
                  ) -> RobotGeometry:
    """The shapes of every link of the URDF at ``path`` (see the module docstring); ``locator`` finds meshes
    (default: the URDF's package, ROS_PACKAGE_PATH and example-robot-data)."""
    file = Path(path)
    where = str(file)
    text, root = read_robot(file)
    locator = MeshLocator(file) if locator is None else locator
    named = _materials(root, where)
    tag = "collision" if collision else "visual"
    visuals: list[Visual] = []
    missing: list[str] = []
    for name, link in robot_links(root, where, text).items():
        for index, element in enumerate(link.findall(tag)):
            label = f"{where}: link {name!r} <{tag}> {index + 1}"
            geometry = element.find("geometry")
            if geometry is None:
                raise InputError(f"{label}: has no <geometry>")
            shape = _shape(geometry, name, locator, label)
            if shape is None:
                missing.append(name)
                continue
            kind, size, mesh = shape
            if any(s <= 0 for s in size) and kind != "mesh":
                raise InputError(f"{label}: {kind} sizes must be positive, got {size}")
            visuals.append(Visual(name, _origin(element.find("origin"), f"{label} origin"), kind, size,
                                  _rgba(element.find("material"), named, label), mesh))
    return RobotGeometry(tuple(visuals), tuple(dict.fromkeys(missing)))


def _along(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The (4, 4) placement of a z-axis shape centred between ``start`` and ``end`` and pointing along them."""
    d = end - start
    z = d / np.linalg.norm(d)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    T = np.eye(4)
    T[:3, :3] = np.column_stack([x, np.cross(z, x), z])
    T[:3, 3] = 0.5 * (start + end)
    return T


def frame_geometry(kin: Kinematics) -> RobotGeometry:
    """Capsules from each frame's parent to its origin (placed in the parent's frame at q = 0) and a sphere at
    each frame's origin: a model without a robot file, drawn from its kinematics."""
    q = np.zeros(len(kin.coordinates))
    poses = {frame: kin.pose(q, frame) for frame in kin.frames}
    segments = []
    for frame in kin.frames:
        parent = kin.parent_frame(frame)
        if parent is not None:
            start = poses[parent]
            local = start.rotation.T @ (poses[frame].position - start.position)
            segments.append((parent, local))
    lengths = [float(np.linalg.norm(local)) for _, local in segments]
    reach = max(lengths, default=0.0) or 0.1
    radius = 0.06 * reach
    visuals = [Visual(parent, _along(np.zeros(3), local), "capsule", (radius, length), CHAIN_COLOUR)
               for (parent, local), length in zip(segments, lengths) if length > 1e-3 * reach]
    visuals += [Visual(frame, np.eye(4), "sphere", (1.4 * radius,), GREY) for frame in kin.frames]
    return RobotGeometry(tuple(visuals))
