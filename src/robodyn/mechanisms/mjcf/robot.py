"""MuJoCo MJCF robots on robodyn's chain machinery: :func:`load_mjcf` (``robodyn.load("robot.xml")``).

The file is read by :mod:`robodyn.mechanisms.mjcf.document` (includes, default classes), its bodies lowered by
:mod:`robodyn.mechanisms.mjcf.bodies` to the joints and links of a :class:`~robodyn.mechanisms.chain.system.
ChainSystem` (a body with a free joint: a :class:`~robodyn.mechanisms.floating.chain.FloatingChain`), so an MJCF robot
has the URDF robots' dynamics, derivatives, kinematics and exports. What else is read:

- ``<compiler angle eulerseq meshdir inertiafromgeom autolimits>``; compiler options that change masses
  (``boundmass``, ``boundinertia``, ``settotalmass``, ``balanceinertia``) and ``coordinate="global"`` are refused;
- ``<option gravity>`` and the ``<flag>`` s ``gravity``, ``spring``, ``damper``, ``frictionloss`` (``disable`` drops the
  term); fluid forces (``density``, ``viscosity``, ``wind``) are refused;
- actuators on a joint or a fixed tendon whose force is ``gain * w`` plus a bias affine in their length and velocity:
  ``<motor>``, ``<position>`` and ``<velocity>`` (without ``timeconst`` or ``dampratio``), ``<general>`` with a fixed
  gain and no or an affine bias, w the control u or, with ``dyntype`` filter, filterexact or integrator, the
  actuator's activation, a state of its own (the robot then wrapped as robodyn.model.kinds.actuated.
  ActuatedSystem); each one input named after the actuator (MuJoCo's
  ``ctrlrange`` and ``forcerange`` clamps are not applied: a limited actuator's ``ctrlrange`` is its input's
  ``input_limits()`` and the load's warning names it); any other actuator is refused, naming it;
- fixed tendons: their ``stiffness`` (about ``springlength``, else the length at the joints' ``ref``) and
  ``damping`` act on their joints through the tendon's coefficients (L = sum c_i q_i);
- warned about, not modelled: contacts between geoms, joint and tendon limits (``limit_events()`` gives events at
  the joints' limits), equality constraints, ``frictionloss`` (robodyn's smoothed Coulomb friction instead).

Reference: MuJoCo XML reference, mujoco.readthedocs.io/en/stable/XMLreference.html; MuJoCo documentation,
"Computation" (actuation, passive forces).
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

import numpy as np

from robodyn.base.errors import InputError, ModelFileError, RobodynWarning
from robodyn.mechanisms.chain.system import ChainSystem, Joint, Link
from robodyn.mechanisms.mjcf.bodies import BodyTree, lower_bodies
from robodyn.mechanisms.mjcf.document import Node, check_attributes, class_table, default_key, read_mjcf
from robodyn.mechanisms.mjcf.geometry import Compiler, MassProperties, numbers
from robodyn.mechanisms.mjcf.schema import ATTRIBUTES, SECTIONS
from robodyn.mechanisms.mjcf.transmission import Forces, actuators, tendons
from robodyn.mechanisms.urdf.file import UrdfJoint, UrdfRobotInfo, coordinate_names
from robodyn.model.kinds.actuated import Activation, ActuatedSystem
from robodyn.model.values import Vector

__all__ = ["MjcfParts", "MjcfRobot", "free_start", "load_mjcf", "mjcf_parts"]

MASS_OPTIONS: Final = ("boundmass", "boundinertia")
FLAGS: Final = ("gravity", "spring", "damper", "frictionloss", "contact", "limit", "equality", "constraint",
                "actuation")


class MjcfParts:
    """An MJCF robot as chain parts: joints, links, frames, inputs, gravity, the free body (None: fixed base), the
    joint table and the file's name; made by :func:`mjcf_parts`."""

    def __init__(self, name: str, tree: BodyTree, links: list[Link], inputs: list[str], gravity: tuple[float, ...],
                 meshes: Mapping[str, tuple[Path, tuple[float, ...]]] = MappingProxyType({}),
                 ranges: Mapping[str, tuple[float, float]] = MappingProxyType({}),
                 activations: tuple[Activation, ...] = ()):
        self.name, self.tree, self.links, self.inputs, self.gravity = name, tree, links, inputs, gravity
        #: The actuators' activation dynamics: their states are the chain's inputs of those names.
        self.activations = activations
        #: The mesh assets by name: the file (resolved in the model's folder, not yet read) and its scale.
        self.meshes = meshes
        #: The limited actuators' ``ctrlrange`` by input (MuJoCo clamps ctrl to it; robodyn states it).
        self.ranges = ranges

    @property
    def joints(self) -> list[Joint]:
        return self.tree.joints


def _compiler(root: Node) -> Compiler:
    values: dict[str, str] = {}
    for node in (n for n in root.children if n.tag == "compiler"):
        check_attributes(node)
        for key in MASS_OPTIONS:
            if node.get(key) not in (None, "0", "-1"):
                raise ModelFileError(f"{node.where}: <compiler {key}=...> changes the bodies' masses: robodyn reads "
                                     "them as written; remove it (or give the masses it would make)")
        if node.get("balanceinertia") == "true" or node.get("coordinate") == "global":
            key = "balanceinertia" if node.get("balanceinertia") == "true" else "coordinate"
            raise ModelFileError(f"{node.where}: <compiler {key}={node.get(key)!r}> is not read by robodyn: remove it "
                                 "(MuJoCo 2.3.4 and later refuse coordinate=\"global\" too)")
        values.update(node.attrib)
    angle = values.get("angle", "degree")
    sequence = values.get("eulerseq", "xyz")
    where = f"{root.file}: <compiler"
    if angle not in ("degree", "radian"):
        raise ModelFileError(f"{where} angle={angle!r}>: use degree or radian")
    if len(sequence) != 3 or any(c not in "xyzXYZ" for c in sequence):
        raise ModelFileError(f"{where} eulerseq={sequence!r}>: give three of x y z X Y Z (lower case: rotating axes)")
    inertia = values.get("inertiafromgeom", "auto")
    if inertia not in ("true", "false", "auto"):
        raise ModelFileError(f"{where} inertiafromgeom={inertia!r}>: use true, false or auto")
    total = numbers(Node("compiler", values, root.file, root.line), "settotalmass", 1)
    return Compiler(angle == "degree", sequence, values.get("meshdir", values.get("assetdir", "")), inertia,
                    values.get("autolimits", "true") == "true", None if total is None or total[0] <= 0 else
                    float(total[0]))


def _options(root: Node) -> tuple[tuple[float, ...], set[str]]:
    """The gravity vector and the flags set to ``disable``."""
    gravity: tuple[float, ...] = (0.0, 0.0, -9.81)
    disabled: set[str] = set()
    for node in (n for n in root.children if n.tag == "option"):
        check_attributes(node)
        for key in ("density", "viscosity"):
            if float(node.get(key, "0") or 0) != 0:
                raise ModelFileError(f"{node.where}: <option {key}=...>: robodyn has no fluid forces: remove it")
        wind = numbers(node, "wind", 3)
        if wind is not None and np.any(wind):
            raise ModelFileError(f"{node.where}: <option wind=...>: robodyn has no fluid forces: remove it")
        given = numbers(node, "gravity", 3)
        if given is not None:
            gravity = tuple(float(g) for g in given)
        for flag in node.children:
            if flag.tag != "flag":
                raise ModelFileError(f"{flag.where}: <{flag.tag}> is not an element of <option>: use <flag>")
            check_attributes(flag)
            disabled |= {key for key, value in flag.attrib.items() if value == "disable"}
    if "gravity" in disabled:
        gravity = (0.0, 0.0, 0.0)
    return gravity, disabled


def _assign_classes(node: Node, childclass: str | None) -> None:
    """Give each element below a body the ``childclass`` of its nearest body that has one (as its ``class``)."""
    for child in node.children:
        if child.tag == "body":
            _assign_classes(child, child.get("childclass") or childclass)
        elif childclass is not None and "class" not in child.attrib and child.tag in ("joint", "geom", "site",
                                                                                      "camera", "light"):
            child.attrib["class"] = childclass


def _resolver(classes: Mapping[str, Mapping[str, Mapping[str, str]]]) -> Any:
    def resolve(node: Node) -> dict[str, str]:
        label = node.get("class") or "main"
        if label not in classes:
            raise ModelFileError(f"{node.where}: <{node.tag} class={label!r}> names no <default> class: define it or "
                                 f"correct the name (classes: {', '.join(sorted(classes))})")
        values = {**classes[label].get(default_key(node.tag), {}), **node.attrib}
        values.pop("class", None)
        return values
    return resolve


def _check_defaults(node: Node) -> None:
    """The attributes of the ``<default>`` elements robodyn reads (joints, geoms, sites, actuators, meshes), checked as
    the elements' own are (a default ``<tendon>`` serves spatial and fixed tendons: left to MuJoCo)."""
    for child in node.children:
        if child.tag == "default":
            _check_defaults(child)
        elif child.tag in ATTRIBUTES and child.tag not in ("mujoco", "compiler", "option", "flag", "body"):
            check_attributes(child)


def _sections(root: Node) -> None:
    check_attributes(root)
    for node in root.children:
        if node.tag == "default":
            _check_defaults(node)
    for node in root.children:
        if node.tag not in SECTIONS:
            raise ModelFileError(f"{node.where}: <{node.tag}> is not a section of <mujoco>: MuJoCo's are "
                                 f"{', '.join(sorted(SECTIONS - {'include'}))}")
        if node.tag == "deformable" and node.children:
            raise ModelFileError(f"{node.where}: <deformable> bodies are not read by robodyn: remove them")


def mjcf_parts(path: str | os.PathLike[str], *, dynamics: bool = True) -> MjcfParts:
    """The robot of an MJCF file as chain parts, with the warnings of what robodyn leaves out (module docstring)."""
    root = read_mjcf(path)
    _sections(root)
    compiler = _compiler(root)
    gravity, disabled = _options(root)
    classes = class_table(root)
    resolve = _resolver(classes)
    worlds = [n for n in root.children if n.tag == "worldbody"]
    world = Node("worldbody", {}, root.file, root.line, [c for w in worlds for c in w.children])
    _assign_classes(world, None)
    joints = [j for j in world.iter("joint")]
    for k, body in enumerate(world.iter("body")):  # an unnamed free joint: named after its body
        for free in (c for c in body.children if c.tag == "freejoint" and not c.get("name")):
            free.attrib["name"] = body.get("name") or f"free{k}"
    labels = [j.get("name") or f"joint{k}" for k, j in enumerate(joints)] + [j.attrib["name"] for j in
                                                                             world.iter("freejoint")]
    names = coordinate_names(labels)
    keyed = {label: names[label] for label in labels}
    tree, bodies = lower_bodies(world, compiler, _unnamed(resolve, joints), keyed,
                                _mesh_reader(root, resolve, Path(path).resolve().parent, compiler), dynamics=dynamics)
    _passive_flags(tree, disabled)
    _angle_units(world, resolve, compiler, path)
    notes: list[str] = []
    forces = Forces()
    found = tendons(root, resolve, tree, disabled, forces, notes)
    inputs, ranges, activations = actuators(root, resolve, tree, found, disabled, forces, compiler.autolimits,
                                            notes)
    if ranges:
        notes.append(f"the control ranges (ctrlrange) of actuators {', '.join(ranges)}, to which MuJoCo clamps "
                     "their inputs: robodyn applies inputs as given (model.input_limits() states the ranges)")
    joints_out = []
    for joint in tree.joints:
        terms = forces.terms.get(joint.name)
        joints_out.append(joint if not terms else _with_force(joint, " + ".join(terms)))
    tree.joints = joints_out
    _warn(root, tree, disabled, notes, path)
    scale = 1.0
    if compiler.total_mass is not None:  # MuJoCo scales every body's mass and inertia to the total asked for
        weight = sum(b.mass for b in bodies.values())
        if not weight > 0:
            raise ModelFileError(f"{path}: <compiler settotalmass=...> needs bodies with mass to scale")
        scale = compiler.total_mass / weight
    links = [Link(name=name, mass=float(scale * b.mass), com=tuple(b.com.tolist()),
                  inertia=[[float(scale * v) for v in row] for row in b.inertia]) for name, b in bodies.items()]
    return MjcfParts(root.get("model") or Path(path).stem, tree, links, inputs, gravity,
                     _mesh_files(root, resolve, Path(path).resolve().parent, compiler), MappingProxyType(ranges),
                     tuple(activations))


def _mesh_files(root: Node, resolve: Any, folder: Path, compiler: Compiler
                ) -> dict[str, tuple[Path, tuple[float, ...]]]:
    """The mesh assets: name -> (the file inside the model's folder, the scale); a file outside is left out."""
    found: dict[str, tuple[Path, tuple[float, ...]]] = {}
    for mesh in (m for s in root.children if s.tag == "asset" for m in s.children if m.tag == "mesh"):
        attrib = resolve(mesh)
        name = attrib.get("name") or Path(attrib.get("file") or "").stem
        path = (folder / compiler.meshdir / (attrib.get("file") or "")).resolve()
        scale = numbers(Node("mesh", attrib, mesh.file, mesh.line), "scale", 3)
        if attrib.get("file") and path.is_relative_to(folder):
            found[name] = (path, (1.0, 1.0, 1.0) if scale is None else tuple(float(v) for v in scale))
    return found


def _mesh_reader(root: Node, resolve: Any, folder: Path, compiler: Compiler) -> Any:
    """A mesh geom's mass properties from the ``<mesh>`` assets (robodyn.mechanisms.mjcf.meshes), each file read
    once."""
    assets: dict[str, Node] = {}
    for mesh in (m for s in root.children if s.tag == "asset" for m in s.children if m.tag == "mesh"):
        check_attributes(mesh)
        name = mesh.get("name") or Path(mesh.get("file") or "").stem
        assets[name] = Node("mesh", resolve(mesh), mesh.file, mesh.line)
    done: dict[tuple[str, str, str], MassProperties] = {}

    def properties(geom: Node, attrib: dict[str, str]) -> MassProperties:
        from robodyn.mechanisms.mjcf.meshes import mesh_mass

        name = attrib.get("mesh", "")
        if name not in assets:
            raise ModelFileError(f"{geom.where}: <geom mesh={name!r}> names no <mesh> of the <asset> section")
        key = (name, attrib.get("mass", ""), attrib.get("density", ""))
        if key not in done:
            done[key] = mesh_mass(geom, attrib, assets[name], folder, compiler.meshdir)
        return done[key]
    return properties


DEGREE_LIKE: Final = 6.3  # rad: a hinge range or an Euler/axis-angle angle beyond one turn is written in degrees.


def _angle_units(world: Node, resolve: Any, compiler: Compiler, path: Any) -> None:
    """Warn when a radian model writes angles that look like degrees (MuJoCo's default unit is the degree)."""
    if compiler.degrees:
        return
    found: list[str] = []
    for node in (n for tag in ("body", "joint", "geom", "site", "inertial") for n in world.iter(tag)):
        attrib = node.attrib if node.tag in ("body", "inertial") else resolve(node)
        view = Node(node.tag, attrib, node.file, node.line)
        values = [numbers(view, "euler", 3), (numbers(view, "axisangle", 4) if "axisangle" in attrib else None)]
        if node.tag == "joint" and attrib.get("type", "hinge") == "hinge":
            values += [numbers(view, "range", 2), numbers(view, "ref", 1), numbers(view, "springref", 1)]
        angles = [v[-1:] if len(v) == 4 else v for v in values if v is not None]
        if any(np.any(np.abs(a) > DEGREE_LIKE) for a in angles):
            found.append(f"<{node.tag}> at line {node.line}")
    if found:
        warnings.warn(f"{path}: <compiler angle=\"radian\"> but angles of {', '.join(found[:5])}"
                      f"{' and more' if len(found) > 5 else ''} exceed a full turn: they look like degrees; write "
                      "them in radians or set angle=\"degree\"", RobodynWarning, stacklevel=4)


def _unnamed(resolve: Any, joints: list[Node]) -> Any:
    """The resolver, with unnamed joints given the names ``joint<k>`` they have in the coordinate table."""
    for k, joint in enumerate(joints):
        if not joint.get("name"):
            joint.attrib["name"] = f"joint{k}"
    return resolve


def _passive_flags(tree: BodyTree, disabled: set[str]) -> None:
    """Drop the joint terms the ``<flag>`` s disable."""
    drop = {key for flag, key in (("spring", "stiffness"), ("damper", "damping"), ("frictionloss", "friction"))
            if flag in disabled}
    if drop:
        tree.joints = [Joint(**{**{f: getattr(j, f) for f in Joint.__slots__},
                                **{k: 0 for k in drop}}) for j in tree.joints]
        if "frictionloss" in disabled:
            tree.friction.clear()


def _with_force(joint: Joint, force: str) -> Joint:
    fields = {f: getattr(joint, f) for f in Joint.__slots__}
    return Joint(**{**fields, "force": force})


def _warn(root: Node, tree: BodyTree, disabled: set[str], notes: list[str], path: Any) -> None:
    """One warning naming what robodyn leaves out of the MuJoCo model."""
    constraints = "constraint" not in disabled
    pairs = [n for s in root.children if s.tag == "contact" for n in s.children if n.tag == "pair"]
    if constraints and "contact" not in disabled and (tree.contacts or pairs):
        notes.append(f"contacts between geoms ({tree.contacts} geoms collide in MuJoCo"
                     f"{f', and {len(pairs)} <pair> elements' if pairs else ''})")
    if constraints and "limit" not in disabled and tree.limited:
        notes.append(f"the limits of joints {', '.join(tree.limited)} (model.limit_events() stops at them)")
    if constraints and "limit" not in disabled and tree.cones:
        notes.append(f"the range (a cone about the rest orientation) of ball joints {', '.join(tree.cones)}")
    if constraints and "equality" not in disabled:
        notes += [f"<{e.tag}> equality constraint {e.get('name') or ''} ({e.where})".replace("  ", " ")
                  for s in root.children if s.tag == "equality" for e in s.children if e.get("active") != "false"]
    if tree.friction:
        notes.append(f"the dry friction (frictionloss) of joints {', '.join(tree.friction)}, modelled as robodyn's "
                     "smoothed Coulomb friction F tanh(q'/eps) instead of MuJoCo's friction constraint")
    if notes:
        warnings.warn(f"{path}: robodyn does not model " + "; ".join(notes), RobodynWarning, stacklevel=4)


class MjcfRobot(UrdfRobotInfo, ChainSystem):
    """A fixed-base MJCF robot on robodyn's compiled rigid-body tape: a :class:`ChainSystem` that keeps the file's
    joint table and ranges. Coordinates are the hinge and slide joints in the file's order (``<joint>``,
    ``<joint>_dot``); inputs the actuators (their names); gravity ``<option gravity>``."""

    kind = "mjcf"

    def __init__(self, parts: MjcfParts, *, path: Path, name: str | None = None, check_inertia: bool = True,
                 free_root: bool = False):
        self.path = path
        info = parts.tree.info.values()
        links = {joint.name: (joint.parent, joint.child) for joint in parts.joints}  # the chain's, by coordinate
        self.joint_records = tuple(UrdfJoint(i.name, i.type, *links[i.coordinate], i.axis, i.limits) for i in info)
        self.limits = MappingProxyType({i.coordinate: i.limits for i in info})
        self._file_names = {i.coordinate: i.name for i in info}
        self._info = tuple(info)
        self._ranges = dict(parts.ranges)
        self._free_starts = dict(parts.tree.free_starts)
        # the chain's mass check picks its generic configuration inside the ranges (as a URDF robot's)
        self._bounds = ([math.nan if i.limits.lower is None else i.limits.lower for i in info],
                        [math.nan if i.limits.upper is None else i.limits.upper for i in info])
        super().__init__(parts.joints, parts.links, gravity=parts.gravity, inputs=parts.inputs,
                         name=name or parts.name, check_inertia=check_inertia, frames=parts.tree.frames,
                         free_root=free_root)

    def input_limits(self) -> dict[str, tuple[float, float]]:
        """The limited actuators' ``ctrlrange`` by input, in the file's units: MuJoCo clamps ctrl to it, robodyn
        does not (a warning says so when the robot is loaded)."""
        return dict(self._ranges)

    def initial_state(self) -> Vector:
        """MuJoCo's initial state ``(n,)``: each joint at its ``ref`` (``qpos0``; a ball joint not turned), at rest."""
        x = super().initial_state()
        refs = {i.coordinate: i.ref for i in self._info if i.type != "ball"}
        for ball, quaternion in self._free_starts.items():  # a free joint as coordinates: the body's orientation
            refs.update({f"{ball}_{c}": value for c, value in zip(("qx", "qy", "qz", "qw"), quaternion)})
        for k, coordinate in enumerate(self.coordinates):
            if coordinate in refs:
                x[k] = refs[coordinate]
        return x

    @property
    def geometry_file(self) -> Path | None:
        """The MJCF file, whose geoms the 3-D view draws (robodyn.viewer.mjcf_shapes)."""
        return self.path

    def show_text(self) -> str:
        return "\n".join([f"MJCF {self.path}", *self.joint_table(), "", super().show_text()])

    def __repr__(self) -> str:
        return f"MjcfRobot(name={self.name!r}, coordinates={list(self.coordinates)}, path={str(self.path)!r})"


def free_start(tree: BodyTree) -> list[float]:
    """The free body's stored configuration in MuJoCo's ``qpos0``: its ``pos`` and orientation as robodyn stores them
    (x y z, then the quaternion x y z w with w >= 0; MuJoCo's is w x y z, the same rotation)."""
    from scipy.spatial.transform import Rotation

    rotation, position = tree.free_pose if tree.free_pose is not None else (np.eye(3), np.zeros(3))
    quaternion = Rotation.from_matrix(rotation).as_quat()  # x y z w
    if quaternion[3] < 0:
        quaternion = -quaternion
    return [*map(float, position), *map(float, quaternion)]


def load_mjcf(path: str | os.PathLike[str], *, name: str | None = None, dynamics: bool = True,
              check_inertia: bool = True) -> Any:
    """Load a MuJoCo MJCF robot (see the module docstring): an :class:`MjcfRobot`, or a
    :class:`~robodyn.mechanisms.floating.chain.FloatingChain` when a body of the world has a free joint and is its
    only moving tree (its states in robodyn's free-flyer conventions: position, quaternion x y z w, the joints; the
    base's velocity in its own frame; beside other trees, free joints are MuJoCo's coordinates:
    robodyn.mechanisms.mjcf.bodies), either wrapped with its actuators' activation states when it has any
    (robodyn.model.kinds.actuated.ActuatedSystem). ``dynamics=False`` ignores the joints' damping, stiffness,
    armature and frictionloss."""
    file = Path(path)
    parts = mjcf_parts(file, dynamics=dynamics)
    free = parts.tree.free
    if not parts.joints and free is None:
        raise ModelFileError(f"{file}: no hinge, slide or free joint: the model has nothing to move")
    try:
        robot: Any = MjcfRobot(parts, path=file, name=name, check_inertia=check_inertia, free_root=free is not None)
        if free is not None:
            from robodyn.mechanisms.floating.chain import FloatingChain

            robot = FloatingChain(robot, "floating", start=free_start(parts.tree))
        return ActuatedSystem(robot, parts.activations) if parts.activations else robot
    except ModelFileError:
        raise
    except InputError as exc:
        raise ModelFileError(f"{file}: {exc}") from None
