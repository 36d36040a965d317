"""MJCF placements and mass properties: the orientation forms, ``<inertial>``, and what MuJoCo's compiler derives
from the geoms of a body that has no ``<inertial>``.

Orientations (MuJoCo's conventions; at most one per element): ``quat`` w x y z (normalized); ``axisangle`` x y z a
(axis normalized, a in the compiler's angle unit); ``euler`` three angles about the axes ``eulerseq`` names, a lower-
case letter a rotating (intrinsic) axis, an upper-case one a fixed (extrinsic) axis; ``xyaxes`` the frame's x and y
axes (y made orthogonal to x, z = x cross y); ``zaxis`` the frame's z axis, reached from (0, 0, 1) by the smallest
rotation.

A geom's mass is ``mass=`` or its density (default 1000 kg/m^3) times its volume; its inertia is the solid's (sphere,
capsule — a cylinder and two half-spheres —, cylinder, box, ellipsoid; ``size`` holds radii and half-lengths), about
its centre in its own frame (``fromto`` puts the centre midway and z along the segment, from its second point to its
first, with the half-length from the segment and, for a box or an ellipsoid, ``size[0]`` across it both ways). A
body's mass properties are the sum of its geoms', moved to their common centre of mass (parallel-axis theorem).

Reference: MuJoCo XML reference (compiler, body/inertial, body/geom), mujoco.readthedocs.io; MuJoCo modeling guide,
"Frame orientations"; any mechanics text for the solids' inertias (e.g. Meriam and Kraige, Dynamics, appendix D).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robodyn.base.errors import ModelFileError
from robodyn.mechanisms.mjcf.document import Node

__all__ = ["ORIENTATIONS", "Compiler", "MassProperties", "geom_mass", "inertial_mass", "numbers", "orientation",
           "quat_matrix"]

ORIENTATIONS = ("quat", "axisangle", "euler", "xyaxes", "zaxis")
SOLIDS = ("sphere", "capsule", "cylinder", "box", "ellipsoid")
DEFAULT_DENSITY = 1000.0  # kg/m^3: MuJoCo's default geom density (water).


@dataclass(frozen=True, slots=True)
class Compiler:
    """The ``<compiler>`` settings robodyn uses: angle unit, Euler sequence, mesh folder, where inertias come from
    (``auto``: geoms where ``<inertial>`` is absent; ``true``: always the geoms; ``false``: never), autolimits and
    settotalmass."""

    degrees: bool = True
    eulerseq: str = "xyz"
    meshdir: str = ""
    inertiafromgeom: str = "auto"
    autolimits: bool = True
    total_mass: float | None = None  # settotalmass: every body's mass and inertia scaled to this total (kg)

    @property
    def angle_scale(self) -> float:
        """Radians per angle unit of the file."""
        return math.pi / 180.0 if self.degrees else 1.0


@dataclass(frozen=True, slots=True)
class MassProperties:
    """Mass (kg), centre of mass ``com : (3,)`` and inertia about it ``inertia : (3, 3)``, in a body's frame."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray

    def plus(self, other: MassProperties) -> MassProperties:
        """The two bodies as one (Featherstone 2008, section 2.13)."""
        total = self.mass + other.mass
        if total <= 0:
            return MassProperties(0.0, np.zeros(3), self.inertia + other.inertia)
        centre = (self.mass * self.com + other.mass * other.com) / total

        def moved(part: MassProperties) -> np.ndarray:
            d = part.com - centre
            return part.inertia + part.mass * (float(d @ d) * np.eye(3) - np.outer(d, d))

        inertia = moved(self) + moved(other)
        return MassProperties(total, centre, 0.5 * (inertia + inertia.T))

    def placed(self, rotation: np.ndarray, position: np.ndarray) -> MassProperties:
        """The same body seen from a frame in which this one's frame is at (R, p)."""
        return MassProperties(self.mass, position + rotation @ self.com, rotation @ self.inertia @ rotation.T)


NOTHING = MassProperties(0.0, np.zeros(3), np.zeros((3, 3)))


def numbers(node: Node, key: str, count: int | tuple[int, ...], where: str | None = None) -> np.ndarray | None:
    """The finite numbers of attribute ``key`` (None when absent); ``count``: how many (or the counts allowed)."""
    text = node.get(key)
    if text is None:
        return None
    counts = (count,) if isinstance(count, int) else count
    try:
        values = np.array([float(v) for v in text.split()])
    except ValueError:
        values = np.zeros(0)
    if len(values) not in counts or not np.all(np.isfinite(values)):
        wanted = " or ".join(map(str, counts))
        raise ModelFileError(f"{where or node.where}: <{node.tag} {key}=...> must be {wanted} finite numbers, "
                             f"got {text!r}")
    return values


def quat_matrix(q: np.ndarray) -> np.ndarray:
    """The rotation of a unit quaternion ``q : (4,)`` = (w, x, y, z)."""
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def axis_angle(axis: np.ndarray, angle: float) -> np.ndarray:
    """Quaternion (w, x, y, z) of a rotation by ``angle`` about the unit ``axis``."""
    return np.array([math.cos(angle / 2), *(math.sin(angle / 2) * axis)])


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of quaternions (w, x, y, z)."""
    return np.array([a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                     a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                     a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                     a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]])


def _unit(vector: np.ndarray, node: Node, key: str) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    if not norm > 1e-14:
        raise ModelFileError(f"{node.where}: <{node.tag} {key}=...> is a zero vector: give a direction")
    return vector / norm


def z_to(direction: np.ndarray) -> np.ndarray:
    """The rotation taking (0, 0, 1) to the unit ``direction`` by the smallest angle (half a turn about x when
    opposite)."""
    axis = np.cross([0.0, 0.0, 1.0], direction)
    sine = float(np.linalg.norm(axis))
    if sine < 1e-14:
        return np.eye(3) if direction[2] > 0 else np.diag([1.0, -1.0, -1.0])
    return quat_matrix(axis_angle(axis / sine, math.atan2(sine, float(direction[2]))))


def orientation(node: Node, compiler: Compiler, attrib: dict[str, str] | None = None) -> np.ndarray:
    """The rotation ``(3, 3)`` an element's orientation attributes give (identity without one)."""
    attrib = node.attrib if attrib is None else attrib
    given = [key for key in ORIENTATIONS if key in attrib]
    if len(given) > 1:
        raise ModelFileError(f"{node.where}: <{node.tag}> gives {' and '.join(given)}: give one orientation")
    if not given:
        return np.eye(3)
    key = given[0]
    view = Node(node.tag, attrib, node.file, node.line)
    if key == "quat":
        return quat_matrix(_unit(numbers(view, key, 4), node, key))  # type: ignore[arg-type]
    if key == "axisangle":
        values = numbers(view, key, 4)
        assert values is not None
        return quat_matrix(axis_angle(_unit(values[:3], node, key), values[3] * compiler.angle_scale))
    if key == "euler":
        angles = numbers(view, key, 3)
        assert angles is not None
        q = np.array([1.0, 0.0, 0.0, 0.0])
        for letter, angle in zip(compiler.eulerseq, angles):
            turn = axis_angle(np.eye(3)["xyz".index(letter.lower())], angle * compiler.angle_scale)
            q = _product(q, turn) if letter.islower() else _product(turn, q)
        return quat_matrix(q)
    if key == "xyaxes":
        values = numbers(view, key, 6)
        assert values is not None
        x = _unit(values[:3], node, key)
        y = _unit(values[3:] - x * float(x @ values[3:]), node, key)
        return np.column_stack([x, y, np.cross(x, y)])
    values = numbers(view, key, 3)
    assert values is not None
    return z_to(_unit(values, node, key))


def inertial_mass(node: Node, compiler: Compiler) -> MassProperties:
    """The mass properties an ``<inertial>`` element gives, in its body's frame."""
    mass = numbers(node, "mass", 1)
    if mass is None:
        raise ModelFileError(f"{node.where}: <inertial> needs mass=\"<kg>\"")
    if mass[0] < 0:
        raise ModelFileError(f"{node.where}: <inertial mass={mass[0]}> is negative: give the mass in kg (>= 0)")
    diagonal, full = numbers(node, "diaginertia", 3), numbers(node, "fullinertia", 6)
    if (diagonal is None) == (full is None):
        raise ModelFileError(f"{node.where}: <inertial> needs diaginertia=\"Ixx Iyy Izz\" or fullinertia=\"Ixx Iyy "
                             "Izz Ixy Ixz Iyz\" (one of them)")
    if diagonal is not None:
        inertia = np.diag(diagonal)
    else:
        assert full is not None
        inertia = np.array([[full[0], full[3], full[4]], [full[3], full[1], full[5]], [full[4], full[5], full[2]]])
    rotation = orientation(node, compiler)
    position = numbers(node, "pos", 3)
    return MassProperties(float(mass[0]), np.zeros(3), inertia).placed(
        rotation, np.zeros(3) if position is None else position)


def _solid(kind: str, size: np.ndarray) -> tuple[float, np.ndarray]:
    """Volume and the principal inertia per unit density ``(3,)`` of a solid of MuJoCo's ``size``."""
    if kind == "sphere":
        r = size[0]
        volume = 4 / 3 * math.pi * r**3
        return volume, np.full(3, 0.4 * volume * r * r)
    if kind in ("capsule", "cylinder"):
        r, h = size[0], 2 * size[1]
        cylinder = math.pi * r * r * h
        axial, across = cylinder * r * r / 2, cylinder * (h * h / 12 + r * r / 4)
        volume = cylinder
        if kind == "capsule":  # two half-spheres, their centres of mass 3r/8 beyond the cylinder's ends
            sphere = 4 / 3 * math.pi * r**3
            volume += sphere
            axial += 0.4 * sphere * r * r
            across += sphere * (0.4 * r * r + h * h / 4 + 3 * h * r / 8)
        return volume, np.array([across, across, axial])
    a, b, c = size[:3]
    if kind == "box":
        volume = 8 * a * b * c
        return volume, volume / 3 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    volume = 4 / 3 * math.pi * a * b * c  # ellipsoid
    return volume, volume / 5 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])


SIZES = {"sphere": 1, "capsule": 2, "cylinder": 2, "box": 3, "ellipsoid": 3}


def geom_placement(node: Node, attrib: dict[str, str], kind: str, compiler: Compiler
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(R, p, size) of a geom (or a site) in its body's frame (``fromto`` gives p, R and the half-length)."""
    view = Node(node.tag, attrib, node.file, node.line)
    size = numbers(view, "size", (1, 2, 3))
    size = np.zeros(3) if size is None else np.concatenate([size, np.zeros(3 - len(size))])
    ends = numbers(view, "fromto", 6)
    if ends is not None and kind in ("capsule", "cylinder", "box", "ellipsoid"):
        segment = ends[3:] - ends[:3]
        length = float(np.linalg.norm(segment))
        if not length > 1e-14:
            raise ModelFileError(f"{node.where}: <{node.tag} fromto=...> has equal ends: give two different points")
        if kind in ("capsule", "cylinder"):
            size[1] = length / 2
        else:  # a box or ellipsoid along the segment: size[0] across it both ways
            size[1:] = size[0], length / 2
        # MuJoCo's geom z axis points from the second point to the first (the solids are symmetric end for end)
        return z_to(-segment / length), (ends[:3] + ends[3:]) / 2, size
    position = numbers(view, "pos", 3)
    return orientation(node, compiler, attrib), np.zeros(3) if position is None else position, size


def geom_mass(node: Node, attrib: dict[str, str], compiler: Compiler) -> MassProperties:
    """A solid geom's mass properties in its body's frame (``attrib``: its attributes with its class's)."""
    kind = attrib.get("type", "sphere")
    rotation, position, size = geom_placement(node, attrib, kind, compiler)
    if np.any(size[:SIZES[kind]] <= 0):
        raise ModelFileError(f"{node.where}: <geom type={kind!r}> needs {SIZES[kind]} positive size values, got "
                             f"{attrib.get('size')!r}")
    volume, principal = _solid(kind, size)
    view = Node(node.tag, attrib, node.file, node.line)
    mass_given, density = numbers(view, "mass", 1), numbers(view, "density", 1)
    rho = (mass_given[0] / volume) if mass_given is not None else (
        DEFAULT_DENSITY if density is None else density[0])
    if rho < 0:
        raise ModelFileError(f"{node.where}: <geom> has a negative mass or density: give values >= 0")
    return MassProperties(rho * volume, np.zeros(3), np.diag(rho * principal)).placed(rotation, position)
