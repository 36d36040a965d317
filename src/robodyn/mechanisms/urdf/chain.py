"""URDF robots lowered to robodyn's own rigid-body tape: a URDF file as a :class:`ChainSystem`.

The file is read with :mod:`xml.etree.ElementTree` (a document that declares a DTD or entities is
refused before parsing, so nothing is expanded and no other file is read; meshes are never opened) and
turned into the joints and links of a chain:

- **fixed joints** are merged into their parent body, as Pinocchio does: masses add, the centre of mass
  is the mass-weighted mean, inertias are rotated into the parent's frame and moved to the common
  centre of mass (parallel-axis theorem); joints below a merged link are re-attached to the parent with
  the composed placement. Links without ``<inertial>`` add nothing (frames, such as ``tool0``);
- **revolute** and **continuous** joints (a continuous joint is a revolute one without limits) and
  **prismatic** joints become coordinates, in the depth-first order of the tree with each link's child
  joints ordered by name (Pinocchio's order: urdfdom keeps the joints in a map sorted by name);
- ``<dynamics damping friction>`` become the joint's viscous damping and smoothed Coulomb friction
  (``dynamics=False`` ignores them);
- ``<mimic joint multiplier offset>`` joints are coupled, not coordinates: q = multiplier q_joint +
  offset (Pinocchio's ``mimic=True``); their own damping and friction are not used;
- a ``floating`` or ``planar`` joint that joins the root link (the world) to the robot makes the robot's root move
  (robodyn.mechanisms.floating.chain; ``load(..., base=...)`` asks for one too); elsewhere it is refused, naming it;
- the link-inertia rule of chains applies to the bodies that move, each link with the links welded to it
  (robodyn.mechanisms.chain.parts.judge_body): a welded part that no rigid body is warns in a body that is, the root
  of a fixed base only warns; a single body with no joint moves on a floating or planar base;
- the mass matrix must be positive definite at a generic configuration inside the limits (robodyn.model.
  plausibility, evaluated by numpy: nothing is compiled to load a robot); a link whose joint moves no mass is
  named, with its joint as the file writes it.

The placement of each joint is its ``<origin xyz rpy>`` (R = Rz(yaw) Ry(pitch) Rx(roll)), the motion is
about ``<axis>`` (default x), and each link's ``<inertial>`` gives its mass, centre of mass and inertia
about it in the link frame — the conventions of ``kind: chain`` files.

Reference: the URDF specification, wiki.ros.org/urdf/XML; R. Featherstone, *Rigid Body Dynamics
Algorithms*, 2008, section 2.13 (composite inertia).
"""

from __future__ import annotations

import json
import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, NamedTuple

import numpy as np

from robodyn.base.errors import InputError, ModelFileError
from robodyn.mechanisms.chain.parts import WeldedPart, judge_body, mimic_problem
from robodyn.mechanisms.chain.system import ChainSystem, Joint, Link
from robodyn.mechanisms.urdf.file import (
    MASSLESS_FIX,
    UNSUPPORTED_JOINTS,
    URDF_OPT_OUT,
    UrdfJoint,
    UrdfRobotInfo,
    coordinate_names,
    joint_limits,
    read_robot,
    robot_joints,
    robot_links,
)

__all__ = ["UrdfParts", "UrdfRobot", "chain_from_urdf", "chain_yaml", "load_robot", "urdf_chain_parts"]

MOVABLE: Final = ("revolute", "continuous", "prismatic")


@dataclass(slots=True)
class _Body:
    """A rigid body being assembled: mass, centre of mass (3,) and inertia about it (3, 3) in its link's frame, and
    the links it is made of as the file gives them (robodyn.mechanisms.chain.parts.judge_body judges the whole)."""

    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    parts: list[WeldedPart] = field(default_factory=list)

    def add(self, mass: float, com: np.ndarray, inertia: np.ndarray) -> None:
        """Merge a body of ``mass`` at ``com`` with ``inertia`` about it (all in this body's frame)."""
        total = self.mass + mass
        if total <= 0:  # massless parts can still carry rotational inertia (Pinocchio keeps it)
            self.inertia = self.inertia + inertia
            return
        centre = (self.mass * self.com + mass * com) / total

        def moved(m: float, c: np.ndarray, i: np.ndarray) -> np.ndarray:
            d = c - centre
            return i + m * (float(d @ d) * np.eye(3) - np.outer(d, d))

        merged = moved(self.mass, self.com, self.inertia) + moved(mass, com, inertia)
        self.inertia = 0.5 * (merged + merged.T)  # exactly symmetric after the rotations
        self.mass, self.com = total, centre

    def weld(self, part: _Body, rotation: np.ndarray, position: np.ndarray) -> None:
        """Merge the body ``part`` whose frame is at (R, p) in this one's, keeping its links as parts."""
        self.add(part.mass, position + rotation @ part.com, rotation @ part.inertia @ rotation.T)
        self.parts += part.parts


def _rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw),
                              math.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _matrix_rpy(rotation: np.ndarray) -> list[float]:
    """roll, pitch, yaw of R = Rz(yaw) Ry(pitch) Rx(roll) (yaw from the first column when pitch = +-pi/2)."""
    pitch = math.atan2(-rotation[2, 0], math.hypot(rotation[0, 0], rotation[1, 0]))
    if math.hypot(rotation[0, 0], rotation[1, 0]) < 1e-12:
        return [0.0, pitch, math.atan2(-rotation[0, 1], rotation[1, 1])]
    return [math.atan2(rotation[2, 1], rotation[2, 2]), pitch, math.atan2(rotation[1, 0], rotation[0, 0])]


def _numbers(text: str | None, count: int, default: tuple[float, ...], where: str) -> np.ndarray:
    if text is None:
        return np.array(default, dtype=float)
    try:
        values = np.array([float(v) for v in text.split()])
    except ValueError:
        values = np.zeros(0)
    if values.shape != (count,) or not np.all(np.isfinite(values)):
        raise ModelFileError(f"{where}: expected {count} finite numbers, got {text!r}")
    return values


def _origin(element: ET.Element | None, where: str) -> tuple[np.ndarray, np.ndarray]:
    """(R, p) of an ``<origin>`` (identity when absent)."""
    if element is None:
        return np.eye(3), np.zeros(3)
    xyz = _numbers(element.get("xyz"), 3, (0.0, 0.0, 0.0), f"{where} origin xyz")
    rpy = _numbers(element.get("rpy"), 3, (0.0, 0.0, 0.0), f"{where} origin rpy")
    return _rpy_matrix(*rpy), xyz


def _inertial(link: ET.Element, name: str, joint: str | None, where: str) -> _Body:
    """The body of one link (its ``<inertial>``, or nothing), welded by ``joint`` (None: a body's own link)."""
    body = _Body()
    inertial = link.find("inertial")
    if inertial is None:
        return body
    mass_element = inertial.find("mass")
    mass = _numbers(None if mass_element is None else mass_element.get("value"), 1, (0.0,), f"{where} mass")[0]
    if mass < 0:
        raise ModelFileError(f"{where}: mass {mass} is negative: give the link's mass in kg (>= 0)")
    element = inertial.find("inertia")
    keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    values = {k: _numbers(None if element is None else element.get(k), 1, (0.0,), f"{where} inertia {k}")[0]
              for k in keys}
    inertia = np.array([[values["ixx"], values["ixy"], values["ixz"]], [values["ixy"], values["iyy"], values["iyz"]],
                        [values["ixz"], values["iyz"], values["izz"]]])
    rotation, com = _origin(inertial.find("origin"), f"{where} inertial")
    body.add(mass, com, rotation @ inertia @ rotation.T)
    body.parts.append(WeldedPart(name, joint, float(mass), inertia))
    return body


def _movable(joint: ET.Element, kind: str, names: dict[str, str], label: str, parent: str, child: str,
             rotation: np.ndarray, position: np.ndarray, dynamics: bool) -> Joint:
    """The chain joint of a revolute, continuous or prismatic URDF joint placed at (R, p) in ``parent``
    (``names``: URDF joint name -> coordinate name)."""
    axis_element = joint.find("axis")
    axis = _numbers(None if axis_element is None else axis_element.get("xyz"), 3, (1.0, 0.0, 0.0), f"{label} axis")
    if not np.any(axis):
        raise ModelFileError(f"{label}: axis is zero: give a direction, e.g. xyz=\"0 0 1\"")
    terms: dict[str, Any] = {}
    element = joint.find("dynamics")
    if dynamics and element is not None:
        for key in ("damping", "friction"):
            value = element.get(key)
            if value is not None:
                terms[key] = float(_numbers(value, 1, (0.0,), f"{label} dynamics {key}")[0])
    mimic = joint.find("mimic")
    if mimic is not None:
        target = mimic.get("joint")
        if not target:
            raise ModelFileError(f"{label}: <mimic> needs joint=\"<the joint it follows>\"")
        if target not in names:
            raise ModelFileError(f"{label}: <mimic joint={target!r}> names no revolute, continuous or prismatic joint "
                                 "of the robot: correct the name, or remove <mimic> to make it a coordinate")
        multiplier, offset = (float(_numbers(mimic.get(key), 1, (default,), f"{label} mimic {key}")[0])
                              for key, default in (("multiplier", 1.0), ("offset", 0.0)))
        problem = mimic_problem(multiplier, offset)
        if problem is not None:
            raise ModelFileError(f"{label}: <mimic> {problem}")
        terms["mimic"] = {"joint": names[target], "multiplier": multiplier, "offset": offset}
        terms.pop("damping", None)  # a mimic joint's own terms are not used (robodyn.mechanisms.chain.system.Joint)
        terms.pop("friction", None)
    return Joint(name=names[joint.get("name", "")], parent=parent, child=child,
                 type="prismatic" if kind == "prismatic" else "revolute",
                 axis=tuple(axis.tolist()), xyz=tuple(position.tolist()), rpy=tuple(_matrix_rpy(rotation)), **terms)


class UrdfParts(NamedTuple):
    """A URDF robot as chain parts: its name, the chain joints (one per movable joint) and links (fixed
    joints merged), and every joint of the file with its limits (``records``, file order)."""

    robot: str
    joints: list[Joint]
    links: list[Link]
    records: tuple[UrdfJoint, ...]
    names: dict[str, str]  # URDF joint name -> coordinate name (robodyn.mechanisms.urdf.file.coordinate_names)
    frames: dict[str, dict[str, Any]]  # links merged by fixed joints: {name: {parent, xyz, rpy}} in their body
    base: str = "fixed"  # the root joint of the file: floating or planar when its root link's one joint is one


def _record(joint: ET.Element, where: str) -> UrdfJoint:
    label = f"{where}: joint {joint.get('name')!r}"
    axis_element = joint.find("axis")
    axis = _numbers(None if axis_element is None else axis_element.get("xyz"), 3, (1.0, 0.0, 0.0), f"{label} axis")
    return UrdfJoint(joint.get("name", ""), joint.get("type", ""), joint.find("parent").get("link", ""),  # type: ignore[union-attr]
                     joint.find("child").get("link", ""), (float(axis[0]), float(axis[1]), float(axis[2])),  # type: ignore[union-attr]
                     joint_limits(joint, label))


def urdf_chain_parts(path: str | os.PathLike[str], *, dynamics: bool = True, check_inertia: bool = True,
                     base: str | None = None) -> UrdfParts:
    """The robot as chain parts (fixed joints merged), from a URDF file (see the module docstring).

    ``check_inertia`` applies the link-inertia rule of chains to the bodies that move, each link with the links
    welded to it by fixed joints (robodyn.mechanisms.chain.parts.judge_body: a negative principal moment or a triangle
    inequality broken by more than TRIANGLE_MARGIN of the trace is refused, a slighter break kept with a warning,
    as is a welded part that is not physical on its own in a body that is); False keeps them as given. ``base``:
    the base asked for (None: the file's); a moving one moves the root link's body, which then needs no joint.
    Two joints or links of one name are refused naming them and their lines; mimic multipliers and offsets must be
    in bounds (chain_parts.mimic_problem).
    """
    file = Path(path)
    where = str(file)
    text, root = read_robot(file)
    links = robot_links(root, where, text)
    children, top = _tree(root, links, where, text)
    names = coordinate_names([j.get("name", "") for j in root.findall("joint") if j.get("type") in MOVABLE])
    file_base, below = "fixed", children.get(top, [])
    if len(below) == 1 and below[0].get("type") in UNSUPPORTED_JOINTS:  # world -> base: the robot's root moves
        file_base = below[0].get("type", "")
        top = below[0].find("child").get("link", "")  # type: ignore[union-attr]
    joints, bodies, frames, reached = _lower(top, links, children, names, where, dynamics)
    reached |= set(() if file_base == "fixed" else parent_of_root(below[0]))
    if len(reached) != len(links):
        loose = sorted(set(links) - reached)
        raise ModelFileError(f"{where}: links {loose} are not connected to the root link {top!r} (a loop): "
                             "connect every link to one tree")
    moving = file_base if file_base != "fixed" or base is None else base  # the file's moving root, or the one asked
    if not joints and moving == "fixed":
        raise ModelFileError(f"{where}: no revolute, continuous or prismatic joint: the robot has nothing to move "
                             "(a single free body moves with base='floating')")
    for name, body in bodies.items():  # the bodies that move are judged, not the links welded into them
        judge_body(name, body.parts, body.inertia, where, check=check_inertia, moving=name != top or moving != "fixed",
                   opt_out=URDF_OPT_OUT, error=ModelFileError, stacklevel=4)
    chain_links = [Link(name=name, mass=float(b.mass), com=tuple(b.com.tolist()),
                        inertia=[[float(v) for v in row] for row in b.inertia]) for name, b in bodies.items()]
    records = tuple(_record(joint, where) for joint in root.findall("joint"))
    return UrdfParts(root.get("name") or file.stem, joints, chain_links, records, names, frames, file_base)


def _tree(root: ET.Element, links: dict[str, ET.Element], where: str, text: str
          ) -> tuple[dict[str, list[ET.Element]], str]:
    """The joints below each link (by name: Pinocchio's order) and the root link; a file that is not one tree is
    refused naming the joint or link at fault."""
    children: dict[str, list[ET.Element]] = {}
    parent_of: dict[str, str] = {}
    for joint in robot_joints(root, where, text):
        name, kind = joint.get("name"), joint.get("type")
        parent_element, child_element = joint.find("parent"), joint.find("child")
        if not name or not kind or parent_element is None or child_element is None:
            raise ModelFileError(f"{where}: a <joint> needs name, type, <parent link=...> and <child link=...>")
        p, c = parent_element.get("link", ""), child_element.get("link", "")
        for role, link_name in (("parent", p), ("child", c)):
            if link_name not in links:
                raise ModelFileError(f"{where}: joint {name!r}: {role} link {link_name!r} is not defined")
        if c == p:
            raise ModelFileError(f"{where}: joint {name!r}: link {c!r} is both its parent and its child: a joint "
                                 "connects two different links")
        if c in parent_of:
            raise ModelFileError(f"{where}: link {c!r} is the child of two joints: a URDF is a tree")
        parent_of[c] = name
        children.setdefault(p, []).append(joint)
    for below in children.values():  # urdfdom keeps the joints in a map ordered by name: Pinocchio's order
        below.sort(key=lambda element: element.get("name", ""))
    roots = [name for name in links if name not in parent_of]
    if len(roots) != 1:
        raise ModelFileError(f"{where}: expected one root link, found {roots or 'none (a loop)'}: connect every "
                             "link to one tree")
    return children, roots[0]


def _lower(top: str, links: dict[str, ET.Element], children: dict[str, list[ET.Element]], names: dict[str, str],
           where: str, dynamics: bool
           ) -> tuple[list[Joint], dict[str, _Body], dict[str, dict[str, Any]], set[str]]:
    """The chain joints, the bodies (each moving link with the links welded to it), the welded links' frames and
    the links reached, from root link ``top`` down."""
    joints: list[Joint] = []
    frames: dict[str, dict[str, Any]] = {}
    bodies = {top: _inertial(links[top], top, None, f"{where}: link {top!r}")}
    # pre-order depth-first over the joints, each link's child joints by name (Pinocchio's order);
    # each entry: the joint, the body its parent link belongs to, and (R, p) of that link in the body
    stack: list[tuple[ET.Element, str, np.ndarray, np.ndarray]] = [
        (joint, top, np.eye(3), np.zeros(3)) for joint in reversed(children.get(top, []))]
    reached = {top}
    while stack:
        joint, body, rotation, position = stack.pop()
        name, kind = joint.get("name", ""), joint.get("type", "")
        label = f"{where}: joint {name!r}"
        child = joint.find("child").get("link", "")  # type: ignore[union-attr]
        reached.add(child)
        if kind in UNSUPPORTED_JOINTS:
            raise ModelFileError(f"{label} is {kind}: {UNSUPPORTED_JOINTS[kind]}")
        if kind not in (*MOVABLE, "fixed"):
            raise ModelFileError(f"{label} has unknown type {kind!r}: use revolute, continuous, prismatic or fixed")
        joint_rotation, joint_position = _origin(joint.find("origin"), label)
        rotation_c, position_c = rotation @ joint_rotation, position + rotation @ joint_position
        if kind == "fixed":
            frames[child] = {"parent": body, "xyz": tuple(position_c.tolist()), "rpy": tuple(_matrix_rpy(rotation_c))}
            bodies[body].weld(_inertial(links[child], child, name, f"{where}: link {child!r}"), rotation_c, position_c)
            stack += [(j, body, rotation_c, position_c) for j in reversed(children.get(child, []))]
            continue
        joints.append(_movable(joint, kind, names, label, body, child, rotation_c, position_c, dynamics))
        bodies[child] = _inertial(links[child], child, None, f"{where}: link {child!r}")
        stack += [(j, child, np.eye(3), np.zeros(3)) for j in reversed(children.get(child, []))]
    return joints, bodies, frames, reached


def parent_of_root(joint: ET.Element) -> tuple[str]:
    """The link above a moving root joint (the world), which the robot leaves behind."""
    return (joint.find("parent").get("link", ""),)  # type: ignore[union-attr]


class UrdfRobot(UrdfRobotInfo, ChainSystem):
    """A fixed-base URDF robot on robodyn's compiled rigid-body tape: a :class:`ChainSystem` that keeps
    its file's joint table and ``<limit>`` elements.

    Build it with :func:`load_robot` (or ``robodyn.load("robot.urdf")``). Coordinates are the movable
    joints in Pinocchio's depth-first order (``<joint>``, ``<joint>_dot``), inputs one torque or force per
    coordinate (``<joint>_tau``), gravity 9.81 m/s^2 along -z of the root link.

    Attributes
    ----------
    path : Path
        The file the model came from.
    joint_records : tuple of UrdfJoint
        Every joint of the file, fixed ones included, in file order (:meth:`joint_table`).
    limits : mapping joint name -> JointLimits
        Position, velocity and effort limits of the coordinates (not enforced by the dynamics; see
        :meth:`limit_events`).
    """

    kind = "urdf"

    def __init__(self, parts: UrdfParts, *, path: Path, name: str | None = None,
                 outputs: Mapping[str, Any] | None = None, free_root: bool = False):
        # set first: the chain's mass check (in ChainSystem.__init__) reads the limits (for its generic q, the
        # Pinocchio backend's) and the joints' names as the file writes them
        self.path = path
        self.joint_records = parts.records
        self._file_names = {coordinate: written for written, coordinate in parts.names.items()}
        by_name = {parts.names[r.name]: r.limits for r in parts.records if r.name in parts.names}
        self.limits = MappingProxyType({j.name: by_name[j.name] for j in parts.joints if j.mimic is None})
        self._bounds = ([math.nan if lim.lower is None else lim.lower for lim in self.limits.values()],
                        [math.nan if lim.upper is None else lim.upper for lim in self.limits.values()])
        # each link was checked in the file (or the check was declined): merged bodies need none
        super().__init__(parts.joints, parts.links, name=name or parts.robot, check_inertia=False, frames=parts.frames,
                         outputs=outputs, free_root=free_root)

    _massless_fix = MASSLESS_FIX

    @property
    def geometry_file(self) -> Path | None:
        return self.path

    def show_text(self) -> str:
        return "\n".join([f"URDF {self.path}", *self.joint_table(), "", super().show_text()])

    def __repr__(self) -> str:
        return f"UrdfRobot(name={self.name!r}, coordinates={list(self.coordinates)}, path={str(self.path)!r})"


def chain_from_urdf(path: str | os.PathLike[str], *, name: str | None = None, dynamics: bool = True,
                    check_inertia: bool = True, outputs: Mapping[str, Any] | None = None,
                    base: str | None = None) -> Any:
    """A fixed-base URDF robot as a compiled chain (see the module docstring and :class:`UrdfRobot`).

    ``dynamics=False`` ignores the joints' ``<dynamics damping friction>``; ``check_inertia=False`` keeps
    unphysical link inertias as given (:func:`urdf_chain_parts`); ``outputs`` are as a chain's (expressions
    or ``{frame, quantity}``: robodyn.mechanisms.chain.outputs).
    """
    file = Path(path)
    parts = urdf_chain_parts(file, dynamics=dynamics, check_inertia=check_inertia, base=base)
    chosen = parts.base if base is None else base
    if parts.base != "fixed" and chosen != parts.base:
        raise InputError(f"{path}: the root link's joint is {parts.base}: the robot cannot have a {chosen} base too; "
                         f"load it without base= (or with base={parts.base!r})", key="base")
    try:
        robot = UrdfRobot(parts, path=file, name=name, outputs=outputs, free_root=chosen != "fixed")
        if chosen == "fixed":
            return robot
        from robodyn.mechanisms.floating.chain import FloatingChain

        return FloatingChain(robot, chosen)
    except ModelFileError:
        raise
    except InputError as exc:  # the chain's checks (mimic targets, the mass matrix): name the file
        raise ModelFileError(f"{path}: {exc}") from None


BACKENDS: Final = ("tape", "pinocchio")


def load_robot(path: str | os.PathLike[str], *, backend: str = "tape", name: str | None = None,
               dynamics: bool = True, check_inertia: bool = True, outputs: Mapping[str, Any] | None = None,
               base: str | None = None) -> Any:
    """Load a fixed-base URDF robot: ``backend="tape"`` (default) compiles it on robodyn's rigid-body tape
    (:class:`UrdfRobot`); ``backend="pinocchio"`` evaluates it with Pinocchio's algorithms and analytic
    derivatives (:class:`robodyn.mechanisms.urdf.pinocchio.UrdfSystem`; rigid bodies only). ``dynamics=False`` ignores
    the joints' ``<dynamics damping friction>``; ``check_inertia=False`` accepts unphysical link inertias;
    ``outputs`` (tape only) as a chain's, e.g. ``{"tool": {"frame": "tool0", "quantity": "position"}}``."""
    if not isinstance(backend, str):
        raise InputError(f"{path}: backend must be a name ({', '.join(BACKENDS)}), got {backend!r}", key="backend")
    if base is not None and base not in ("fixed", "floating", "planar"):
        raise InputError(f"{path}: base {base!r}: use fixed, floating or planar", key="base")
    if backend == "tape":
        return chain_from_urdf(path, name=name, dynamics=dynamics, check_inertia=check_inertia, outputs=outputs,
                               base=base)
    if base not in (None, "fixed"):
        raise InputError(f"{path}: a {base} base needs the default backend (backend='tape')", key="backend")
    if backend == "pinocchio":
        if outputs:
            raise InputError(f"{path}: outputs need the default backend (backend='tape'): the pinocchio backend's "
                             "outputs are its states", key="outputs")
        from robodyn.mechanisms.urdf.pinocchio import load_urdf

        return load_urdf(path, name=name, dynamics=dynamics, check_inertia=check_inertia)
    raise InputError(f"{path}: unknown URDF backend {backend!r}: use one of {', '.join(BACKENDS)}", key="backend")


def _number(value: Any) -> str:
    """A float as YAML text that reads back exactly (repr round-trips)."""
    text = repr(float(value))
    return "0" if text in ("0.0", "-0.0") else text


def chain_yaml(path: str | os.PathLike[str], *, dynamics: bool = True, base: str | None = None) -> str:
    """A ``kind: chain`` model file equivalent to the URDF at ``path`` (fixed joints merged, link names
    kept), for a user who wants to edit the robot and name its parameters. Numbers are written so that
    they read back exactly: loading the text gives the same dynamics as :func:`chain_from_urdf` (with the same
    ``base``: the file's when None)."""
    if base not in (None, "fixed", "floating", "planar"):
        raise InputError(f"{path}: base {base!r}: use fixed, floating or planar", key="base")
    robot, joints, links, _, _, frames, written = urdf_chain_parts(path, dynamics=dynamics, base=base)
    if written != "fixed" and base not in (None, written):
        raise InputError(f"{path}: the root link's joint is {written}: the robot cannot have a {base} base too",
                         key="base")
    base = written if base is None else base

    def vector(values: Any) -> str:
        return "[" + ", ".join(_number(v) for v in values) + "]"

    def text(name: str) -> str:  # a YAML (JSON) string: names may hold ':' or ',' that plain YAML misreads
        return json.dumps(name)

    lines = [f"# {Path(path).name} as a chain file, written by robodyn (robodyn convert): fixed joints are merged",
             "# into their parent links, which keep them as frames.",
             f"name: {text(robot)}", "kind: chain", f"description: {text(robot + ' from its URDF')}",
             "gravity: [0, 0, -9.81]", *([f"base: {base}"] if base != "fixed" else []),
             "joints:" if joints else "joints: []"]
    for joint in joints:
        fields = [f"name: {text(joint.name)}", f"type: {joint.type}", f"parent: {text(joint.parent)}",
                  f"child: {text(joint.child)}",
                  f"axis: {vector(joint.axis)}", f"xyz: {vector(joint.xyz)}", f"rpy: {vector(joint.rpy)}"]
        for key in ("damping", "friction"):
            value = getattr(joint, key)
            if value != 0:
                fields.append(f"{key}: {_number(value)}")
        if joint.mimic is not None:
            mimic = joint.mimic
            fields.append(f"mimic: {{joint: {text(mimic['joint'])}, multiplier: {_number(mimic['multiplier'])}, "
                          f"offset: {_number(mimic['offset'])}}}")
        lines.append("  - {" + ", ".join(fields) + "}")
    if frames:
        lines.append("frames:  # links fixed to a moving one (tools, flanges, sensors), placed in its frame")
        for name, frame in frames.items():
            lines.append(f"  {text(name)}: {{parent: {text(frame['parent'])}, xyz: {vector(frame['xyz'])}, "
                         f"rpy: {vector(frame['rpy'])}}}")
    lines.append("links:")
    for link in links:
        inertia = link.inertia
        lines.append(f"  - {{name: {text(link.name)}, mass: {_number(link.mass)}, com: {vector(link.com)},")
        lines.append(f"     inertia: {{ixx: {_number(inertia[0][0])}, iyy: {_number(inertia[1][1])}, "
                     f"izz: {_number(inertia[2][2])}, ixy: {_number(inertia[0][1])}, ixz: {_number(inertia[0][2])}, "
                     f"iyz: {_number(inertia[1][2])}}}}}")
    return "\n".join(lines) + "\n"
