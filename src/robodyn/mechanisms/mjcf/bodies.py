"""MJCF bodies and joints as chain parts: the ``<worldbody>`` tree lowered to :class:`~robodyn.mechanisms.chain.
system.Joint` and :class:`~robodyn.mechanisms.chain.system.Link` descriptions.

MuJoCo moves a body by its joints in the order written, each ``hinge`` about its ``axis`` through its ``pos`` (in the
body's frame, as the joints before it left it), each ``slide`` along its axis, by q - ``ref``. A body with k joints
becomes k chain joints: the first k - 1 end at massless links (``<body>:<joint>``), the last at the body's link, whose
frame sits at the last hinge's anchor (the body's mass properties and children are moved by it, so each hinge turns
about its joint frame's origin as a chain's does). A body without joints is welded to its parent: its mass adds to
the parent's link and it stays as a frame. A ``free`` joint (``<freejoint/>``) of a body of the world makes that
body the moving root of the robot (robodyn.mechanisms.floating); when the world holds other moving trees too (a robot
and a free ball), every free joint is instead MuJoCo's own coordinates: three slides along the world's axes
(``<joint>_x, _y, _z``, the body's origin in the world) and a ball joint (``<joint>_qx .. _qw``, its orientation in
the world; ``<joint>_wx .. _wz``, its angular velocity in its own frame): MuJoCo's qpos and qvel of a free joint, on a
fixed-base chain. A ``ball`` joint is the chain's ball joint about its
``pos``, its axes the body's (MuJoCo's qpos w x y z is stored x y z w; qvel is the body's angular velocity relative to
its parent in the body's frame, as robodyn's ``<joint>_wx .. _wz``); its ``range`` (a cone) is warned about, not
modelled; a ball's ``stiffness`` and ``frictionloss`` are refused (not built for it).

Joint terms: ``damping`` (viscous), ``stiffness`` with ``springref`` (a spring, k (q - springref)), ``armature`` (the
chain's rotor inertia, on M's diagonal), ``frictionloss`` (robodyn's smoothed Coulomb friction, with a warning: MuJoCo
solves dry friction as a constraint). Angles (``range``, ``ref``, ``springref`` of hinges) are in the compiler's unit.

Reference: MuJoCo documentation, "Computation" (kinematics: joint order and anchors) and the XML reference (body,
joint, inertial, geom).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from robodyn.base.errors import ModelFileError
from robodyn.mechanisms.chain.system import Joint, Link
from robodyn.mechanisms.mjcf.document import Node
from robodyn.mechanisms.mjcf.geometry import (
    NOTHING,
    Compiler,
    MassProperties,
    axis_angle,
    geom_mass,
    geom_placement,
    inertial_mass,
    numbers,
    orientation,
    quat_matrix,
)
from robodyn.mechanisms.mjcf.schema import ATTRIBUTES, BODY_CHILDREN
from robodyn.mechanisms.urdf.file import JointLimits

__all__ = ["BodyTree", "GeomShape", "JointInfo", "lower_bodies", "matrix_rpy"]

Resolve = Callable[[Node], dict[str, str]]  # an element's attributes with its default class's
Meshes = Callable[[Node, dict[str, str]], MassProperties]  # a mesh geom's mass properties in its own frame


EXACT: Final = 1e-12  # A rotation entry this close to 0 or +-1, an angle this close to a multiple of pi/2, is one.


def cleaned(rotation: np.ndarray) -> np.ndarray:
    """``rotation`` with entries within :data:`EXACT` of 0 or +-1 made exact when all of them are (a quarter-turn
    frame, as files write with rounded quaternions): the tape then prunes the products by its zeros."""
    nearest = np.round(rotation)
    return nearest if np.all(np.abs(rotation - nearest) < EXACT) else rotation


def exact_rpy(rotation: np.ndarray) -> tuple[float | str, ...]:
    """:func:`matrix_rpy` with each angle within :data:`EXACT` of a multiple of pi/2 written as that multiple (text for
    the chain's parser, so that its sines and cosines are exact)."""
    words = {0: "0", 1: "pi/2", 2: "pi", -1: "-pi/2", -2: "-pi"}
    result: list[float | str] = []
    for angle in matrix_rpy(rotation):
        quarter = round(angle / (math.pi / 2))
        result.append(words[quarter] if abs(angle - quarter * math.pi / 2) < EXACT and quarter in words else angle)
    return tuple(result)


def unit_quaternion(rotation: np.ndarray) -> tuple[float, float, float, float]:
    """The rotation matrix ``(3, 3)`` as a unit quaternion x y z w with w >= 0 (robodyn's storage of MuJoCo's w x y
    z)."""
    from scipy.spatial.transform import Rotation

    quaternion = Rotation.from_matrix(rotation).as_quat()
    quaternion = -quaternion if quaternion[3] < 0 else quaternion
    return (float(quaternion[0]), float(quaternion[1]), float(quaternion[2]), float(quaternion[3]))


def matrix_rpy(rotation: np.ndarray) -> list[float]:
    """roll, pitch, yaw of R = Rz(yaw) Ry(pitch) Rx(roll), the chain's convention (yaw from the first column unless
    pitch is +-pi/2)."""
    across = math.hypot(rotation[0, 0], rotation[1, 0])
    pitch = math.atan2(-rotation[2, 0], across)
    if across < 1e-12:
        return [0.0, pitch, math.atan2(-rotation[0, 1], rotation[1, 1])]
    return [math.atan2(rotation[2, 1], rotation[2, 2]), pitch, math.atan2(rotation[1, 0], rotation[0, 0])]


@dataclass(frozen=True, slots=True)
class JointInfo:
    """One MJCF joint as the chain names it: its coordinate, type, axis in its body, limits, and the value of q
    MuJoCo's ``qpos0`` holds (``ref``)."""

    name: str
    coordinate: str
    type: str
    body: str
    axis: tuple[float, float, float]
    limits: JointLimits
    ref: float


SHAPE_KINDS = ("sphere", "capsule", "cylinder", "box", "ellipsoid", "mesh")


@dataclass(frozen=True, slots=True)
class GeomShape:
    """A geom as a shape of a chain link: placed at (``rotation`` (3, 3), ``position`` (3,)) in the link's frame,
    its MuJoCo ``size`` (radii and half-lengths, 3 values), colour (None: the default), mesh asset name, whether it
    collides (contype or conaffinity) and its visibility ``group``."""

    link: str
    rotation: np.ndarray
    position: np.ndarray
    kind: str
    size: tuple[float, ...]
    rgba: tuple[float, float, float, float] | None
    mesh: str | None
    collides: bool
    group: int


@dataclass(slots=True)
class BodyTree:
    """The chain parts of a ``<worldbody>``: joints, links, frames (welded bodies and sites), the joints by MJCF
    name, the free root body (None: a fixed base) and its pose in the world (rotation (3, 3), position (3,): where
    MuJoCo's ``qpos0`` puts it), and what robodyn leaves out (messages for one warning)."""

    joints: list[Joint] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    frames: dict[str, dict[str, Any]] = field(default_factory=dict)
    info: dict[str, JointInfo] = field(default_factory=dict)
    free: str | None = None
    free_pose: tuple[np.ndarray, np.ndarray] | None = None
    #: Free joints written as coordinates (a model with several moving trees): ball coordinate -> the body's
    #: orientation at ``qpos0`` as a quaternion x y z w (its three slides' ``ref`` hold its position).
    free_starts: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    friction: list[str] = field(default_factory=list)
    limited: list[str] = field(default_factory=list)
    cones: list[str] = field(default_factory=list)  # ball joints with a range (MuJoCo's cone limit)
    contacts: int = 0
    shapes: list[GeomShape] = field(default_factory=list)


def _check(node: Node, allowed: frozenset[str]) -> None:
    unknown = sorted(set(node.attrib) - allowed)
    if unknown:
        raise ModelFileError(f"{node.where}: <{node.tag}> has unknown attribute{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(unknown)}: MuJoCo's <{node.tag}> takes {', '.join(sorted(allowed))}")


def _float(attrib: dict[str, str], key: str, default: float, node: Node) -> float:
    text = attrib.get(key)
    if text is None:
        return default
    value = numbers(Node(node.tag, {key: text}, node.file, node.line), key, 1)
    assert value is not None
    return float(value[0])


def _flag(attrib: dict[str, str], key: str, node: Node) -> str:
    value = attrib.get(key, "auto")
    if value not in ("true", "false", "auto"):
        raise ModelFileError(f"{node.where}: <{node.tag} {key}={value!r}>: use true, false or auto")
    return value


class _Lowering:
    """The walk over the body tree (one per model)."""

    def __init__(self, compiler: Compiler, resolve: Resolve, names: dict[str, str], dynamics: bool, meshes: Meshes):
        self.compiler, self.resolve, self.names, self.dynamics = compiler, resolve, names, dynamics
        self.meshes = meshes
        self.tree = BodyTree()
        self.bodies: dict[str, MassProperties] = {}
        self.link_names: set[str] = set()
        self.welded: set[str] = set()
        #: Free joints become coordinates (:meth:`_free_coordinates`) when the world holds several moving trees.
        self.free_as_coordinates = False

    def unique(self, name: str, node: Node) -> None:
        if name in self.link_names or name in self.welded:
            raise ModelFileError(f"{node.where}: body {name!r} is defined twice: give each <body> its own name")

    def link(self, name: str, node: Node) -> str:
        self.unique(name, node)
        self.link_names.add(name)
        self.bodies[name] = NOTHING
        return name

    def mass(self, body: Node) -> MassProperties:
        """The body's own mass properties in its frame (``<inertial>`` or its geoms, as the compiler says)."""
        inertial = [child for child in body.children if child.tag == "inertial"]
        if len(inertial) > 1:
            raise ModelFileError(f"{inertial[1].where}: a body has one <inertial>")
        for element in inertial:
            _check(element, ATTRIBUTES["inertial"])
        total = NOTHING
        use_geoms = self.compiler.inertiafromgeom == "true" or (self.compiler.inertiafromgeom == "auto"
                                                                 and not inertial)
        for geom in (child for child in body.children if child.tag == "geom"):
            attrib = self.resolve(geom)
            _check(geom, ATTRIBUTES["geom"])
            kind = attrib.get("type", "sphere")
            if attrib.get("contype", "1") != "0" or attrib.get("conaffinity", "1") != "0":
                self.tree.contacts += 1
            if not use_geoms or kind in ("plane", "hfield"):
                continue
            if attrib.get("shellinertia", "false") == "true":
                raise ModelFileError(f"{geom.where}: <geom shellinertia=\"true\">: robodyn gives geoms the inertia of "
                                     "solids: remove it, or give the body an <inertial>")
            if kind == "mesh":
                rotation, position, _ = geom_placement(geom, attrib, kind, self.compiler)
                total = total.plus(self.meshes(geom, attrib).placed(rotation, position))
                continue
            if kind not in ("sphere", "capsule", "cylinder", "box", "ellipsoid"):
                raise ModelFileError(f"{geom.where}: <geom type={kind!r}> is not a MuJoCo solid: use sphere, capsule, "
                                     "cylinder, box, ellipsoid, mesh, plane or hfield")
            total = total.plus(geom_mass(geom, attrib, self.compiler))
        if inertial and not use_geoms:
            return inertial_mass(inertial[0], self.compiler)
        return total

    def shapes(self, body: Node, link: str, rotation: np.ndarray, position: np.ndarray) -> None:
        """Record the body's geoms as shapes of chain link ``link``, in which the body's frame is at (R, p)."""
        for geom in (child for child in body.children if child.tag == "geom"):
            attrib = self.resolve(geom)
            kind = attrib.get("type", "sphere")
            if kind not in SHAPE_KINDS:
                continue
            turn, offset, size = geom_placement(geom, attrib, kind, self.compiler)
            view = Node("geom", attrib, geom.file, geom.line)
            rgba, group = numbers(view, "rgba", 4), numbers(view, "group", 1)
            self.tree.shapes.append(GeomShape(
                link, rotation @ turn, position + rotation @ offset, kind, tuple(size.tolist()),
                None if rgba is None else (float(rgba[0]), float(rgba[1]), float(rgba[2]), float(rgba[3])),
                attrib.get("mesh"), attrib.get("contype", "1") != "0" or attrib.get("conaffinity", "1") != "0",
                0 if group is None else int(group[0])))

    def walk(self, node: Node, link: str, rotation: np.ndarray, position: np.ndarray, top: bool) -> None:
        """Lower the bodies below ``node``, whose frame is at (R, p) in chain link ``link``."""
        for child in node.children:
            if child.tag not in BODY_CHILDREN:
                raise ModelFileError(f"{child.where}: <{child.tag}> is not an element of a <body>: MuJoCo's body holds "
                                     f"{', '.join(sorted(BODY_CHILDREN))}")
            if child.tag in ("attach", "frame", "replicate", "composite", "flexcomp", "plugin"):
                raise ModelFileError(f"{child.where}: <{child.tag}> is not read by robodyn: compile the model with "
                                     "MuJoCo and save it (mj_saveLastXML) to write it out as bodies")
            if child.tag == "site":
                _check(child, ATTRIBUTES["site"])
                name = child.get("name")
                if name:  # placed as a geom is (pos and orientation, or fromto)
                    attrib = self.resolve(child)
                    turn, where, _ = geom_placement(child, attrib, attrib.get("type", "sphere"), self.compiler)
                    self.frame(name, link, rotation @ turn, position + rotation @ where, child)
            if child.tag == "body":
                self.body(child, link, rotation, position, top)

    def frame(self, name: str, link: str, rotation: np.ndarray, position: np.ndarray, node: Node) -> None:
        if name in self.tree.frames or name in self.link_names:
            return  # a site named like a body: the body's frame is kept
        self.tree.frames[name] = {"parent": link, "xyz": tuple(position.tolist()), "rpy": tuple(matrix_rpy(rotation))}

    def body(self, body: Node, parent: str, rotation: np.ndarray, position: np.ndarray, top: bool) -> None:
        _check(body, ATTRIBUTES["body"])
        if body.get("gravcomp") not in (None, "0"):
            raise ModelFileError(f"{body.where}: <body gravcomp=...>: robodyn has no gravity compensation: remove it")
        if body.get("mocap") == "true":  # moved by the user, not by the dynamics: nothing the robot feels
            return
        name = body.get("name") or f"body{len(self.link_names)}"
        turn = cleaned(orientation(body, self.compiler))
        offset = numbers(body, "pos", 3)
        frame_r = rotation @ turn
        frame_p = position + rotation @ (np.zeros(3) if offset is None else offset)
        joints = [child for child in body.children if child.tag in ("joint", "freejoint")]
        if not joints:  # welded to its parent
            self.unique(name, body)
            self.welded.add(name)
            self.tree.frames.pop(name, None)  # a site of that name gives way to the body
            self.bodies[parent] = self.bodies[parent].plus(self.mass(body).placed(frame_r, frame_p))
            self.shapes(body, parent, frame_r, frame_p)
            self.frame(name, parent, frame_r, frame_p, body)
            self.walk(body, parent, frame_r, frame_p, False)
            return
        kinds = [self._kind(j) for j in joints]
        if "free" in kinds:
            if not top or len(joints) > 1:
                raise ModelFileError(f"{joints[kinds.index('free')].where}: a free joint is read only as the one joint "
                                     "of a body of <worldbody> (the robot's floating base)")
            if self.free_as_coordinates:  # one of several moving trees
                self._free_coordinates(joints[0], name, parent, frame_r, frame_p)
            else:  # the one moving tree: its floating base (robodyn.mechanisms.floating)
                self.tree.free = self.link(name, body)
                self.tree.free_pose = (frame_r, frame_p)
            self.bodies[name] = self.mass(body)
            self.shapes(body, name, np.eye(3), np.zeros(3))
            self.walk(body, name, np.eye(3), np.zeros(3), False)
            return
        anchor = np.zeros(3)
        link = parent
        r, p = frame_r, frame_p
        for index, (joint, kind) in enumerate(zip(joints, kinds)):
            child = name if index == len(joints) - 1 else f"{name}:{joint.get('name') or index}"
            anchor = self._joint(joint, kind, name, link, child, r, p, anchor)
            link = self.link(child, joint)
            r, p = np.eye(3), -anchor  # the next joint's placement in this link: from the anchor back to the body
        self.bodies[name] = self.mass(body).placed(np.eye(3), -anchor)
        self.shapes(body, name, np.eye(3), -anchor)
        self.walk(body, name, np.eye(3), -anchor, False)

    def _free_coordinates(self, joint: Node, body: str, parent: str, rotation: np.ndarray, position: np.ndarray
                          ) -> None:
        """A free joint as MuJoCo's own coordinates (a model with several moving trees): three slides along the
        world's axes (``<joint>_x``, ``_y``, ``_z``: the body's origin in the world, their rates its velocity in the
        world) and a ball joint (``<joint>_qx .. _qw``: its orientation in the world; ``_wx .. _wz``: its angular
        velocity in its own frame), which is MuJoCo's qpos (w x y z stored x y z w) and qvel of a free joint."""
        mj_name = joint.get("name") or f"{body}_joint{len(self.tree.info)}"
        coordinate = self.names[mj_name]
        link = parent
        for k, axis in enumerate("xyz"):
            slide = f"{coordinate}_{axis}"
            if slide in self.names.values():
                raise ModelFileError(f"{joint.where}: the free joint {mj_name!r} has the coordinate {slide!r}, which "
                                     "another joint is named: rename that joint")
            direction = (float(k == 0), float(k == 1), float(k == 2))
            child = self.link(f"{body}:{slide}", joint)
            self.tree.joints.append(Joint(name=slide, parent=link, child=child, type="prismatic", axis=direction,
                                          force="0"))
            self.tree.info[f"{mj_name}:{axis}"] = JointInfo(slide, slide, "slide", body, direction,
                                                            JointLimits(None, None, None, None),
                                                            float(position[k]))
            link = child
        self.link(body, joint)
        self.tree.joints.append(Joint(name=coordinate, parent=link, child=body, type="ball"))
        self.tree.info[mj_name] = JointInfo(mj_name, coordinate, "ball", body, (0.0, 0.0, 0.0),
                                            JointLimits(None, None, None, None), 0.0)
        self.tree.free_starts[coordinate] = unit_quaternion(rotation)

    def _kind(self, joint: Node) -> str:
        if joint.tag == "freejoint":
            _check(joint, ATTRIBUTES["freejoint"])
            return "free"
        _check(joint, ATTRIBUTES["joint"])
        kind = self.resolve(joint).get("type", "hinge")
        if kind not in ("hinge", "slide", "ball", "free"):
            raise ModelFileError(f"{joint.where}: <joint type={kind!r}>: use hinge, slide, ball or free")
        return kind

    def _joint(self, joint: Node, kind: str, body: str, parent: str, child: str, rotation: np.ndarray,
               position: np.ndarray, previous: np.ndarray) -> np.ndarray:
        """Add the chain joint of MJCF ``joint`` (placed at (R, p) relative to the link ``parent``, the body's frame
        reached through the joints before it); returns the anchor of this joint in the body's frame."""
        attrib = self.resolve(joint)
        view = Node(joint.tag, attrib, joint.file, joint.line)
        for key in ("springdamper", "actuatorgravcomp", "springyield"):
            if attrib.get(key) not in (None, "0", "0 0", "false"):
                raise ModelFileError(f"{joint.where}: <joint {key}=...>: robodyn does not model it: remove it")
        axis = numbers(view, "axis", 3)
        axis = np.array([0.0, 0.0, 1.0]) if axis is None else axis
        if not np.linalg.norm(axis) > 1e-14:
            raise ModelFileError(f"{joint.where}: <joint axis=...> is zero: give a direction")
        axis = axis / np.linalg.norm(axis)
        if kind == "ball":
            return self._ball(joint, attrib, body, parent, child, rotation, position)
        angle = self.compiler.angle_scale if kind == "hinge" else 1.0
        ref = _float(attrib, "ref", 0.0, joint) * angle
        anchor_given = numbers(view, "pos", 3)
        anchor = (np.zeros(3) if anchor_given is None else anchor_given) if kind == "hinge" else previous
        if kind == "hinge":
            placement_r = cleaned(rotation @ quat_matrix(axis_angle(axis, -ref)))
            placement_p = position + rotation @ anchor
        else:
            placement_r, placement_p = rotation, position + rotation @ (previous - axis * ref)
        mj_name = joint.get("name") or f"{body}_joint{len(self.tree.info)}"
        coordinate = self.names[mj_name]
        terms: dict[str, Any] = {}
        if self.dynamics:
            terms = {"damping": _float(attrib, "damping", 0.0, joint),
                     "stiffness": _float(attrib, "stiffness", 0.0, joint),
                     "rest": _float(attrib, "springref", 0.0, joint) * angle,
                     "rotor_inertia": _float(attrib, "armature", 0.0, joint)}
            friction = _float(attrib, "frictionloss", 0.0, joint)
            if friction:
                terms["friction"] = friction
                self.tree.friction.append(mj_name)
        limited = _flag(attrib, "limited", joint)
        bounds = numbers(view, "range", 2)
        lower = upper = None
        if bounds is not None and (limited == "true" or (limited == "auto" and self.compiler.autolimits)):
            lower, upper = (float(b) * angle for b in bounds)
            if lower > upper:
                raise ModelFileError(f"{joint.where}: <joint range=...> is {bounds[0]} {bounds[1]}: give the lower "
                                     "bound first")
            self.tree.limited.append(mj_name)
        self.tree.joints.append(Joint(name=coordinate, parent=parent, child=child,
                                      type="revolute" if kind == "hinge" else "prismatic", axis=tuple(axis.tolist()),
                                      xyz=tuple(placement_p.tolist()), rpy=exact_rpy(placement_r),
                                      force="0", **terms))
        self.tree.info[mj_name] = JointInfo(mj_name, coordinate, kind, body, (float(axis[0]), float(axis[1]),
                                            float(axis[2])), JointLimits(lower, upper, None, None), ref)
        return anchor


    def _ball(self, joint: Node, attrib: dict[str, str], body: str, parent: str, child: str, rotation: np.ndarray,
              position: np.ndarray) -> np.ndarray:
        """A ball joint (see :meth:`_joint`): about its ``pos``, its frame's axes the body's; qpos0 the identity."""
        view = Node(joint.tag, attrib, joint.file, joint.line)
        anchor_given = numbers(view, "pos", 3)
        anchor = np.zeros(3) if anchor_given is None else anchor_given
        mj_name = joint.get("name") or f"{body}_joint{len(self.tree.info)}"
        terms: dict[str, Any] = {}
        if self.dynamics:
            for key, what in (("stiffness", "a spring on the rotation vector"), ("frictionloss", "dry friction")):
                if _float(attrib, key, 0.0, joint) != 0:
                    raise ModelFileError(f"{joint.where}: ball joint {mj_name!r} has {key}: {what} of a ball joint is "
                                         "not built in robodyn; remove it (or set it to 0)")
            terms = {"damping": _float(attrib, "damping", 0.0, joint),
                     "rotor_inertia": _float(attrib, "armature", 0.0, joint)}
        limited = _flag(attrib, "limited", joint)
        if numbers(view, "range", 2) is not None and (limited == "true" or (limited == "auto" and
                                                                         self.compiler.autolimits)):
            self.tree.cones.append(mj_name)
        coordinate = self.names[mj_name]
        self.tree.joints.append(Joint(name=coordinate, parent=parent, child=child, type="ball",
                                      xyz=tuple((position + rotation @ anchor).tolist()),
                                      rpy=exact_rpy(cleaned(rotation)), **terms))
        self.tree.info[mj_name] = JointInfo(mj_name, coordinate, "ball", body, (0.0, 0.0, 0.0),
                                            JointLimits(None, None, None, None), 0.0)
        return anchor


def lower_bodies(world: Node, compiler: Compiler, resolve: Resolve, names: dict[str, str], meshes: Meshes, *,
                 dynamics: bool = True) -> tuple[BodyTree, dict[str, MassProperties]]:
    """The chain parts of ``<worldbody>`` (see the module docstring) and each chain link's mass properties in its
    frame (``names``: MJCF joint name -> coordinate name, every joint's; ``meshes``: a mesh geom's mass properties)."""
    walker = _Lowering(compiler, resolve, names, dynamics, meshes)
    walker.link_names.add("world")
    walker.bodies["world"] = NOTHING
    trees = [b for b in world.children if b.tag == "body" and b.get("mocap") != "true"
             and (next(b.iter("joint"), None) is not None or next(b.iter("freejoint"), None) is not None)]
    free = [b for b in trees if any(c.tag == "freejoint" or (c.tag == "joint" and resolve(c).get("type") == "free")
                                    for c in b.children)]
    walker.free_as_coordinates = bool(free) and len(trees) > 1  # several moving trees: MuJoCo's coordinates
    walker.walk(world, "world", np.eye(3), np.zeros(3), True)
    if walker.tree.free is not None:
        walker.bodies.pop("world")
        walker.tree.frames = {k: v for k, v in walker.tree.frames.items() if v["parent"] != "world"}
    else:
        walker.bodies["world"] = NOTHING  # what is welded to the world does not move
    return walker.tree, walker.bodies
