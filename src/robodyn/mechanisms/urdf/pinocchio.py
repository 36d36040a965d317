"""URDF robots through Pinocchio (``backend="pinocchio"``): fixed-base chains of revolute and prismatic joints.

The default for a URDF file is robodyn's own compiled rigid-body tape (:mod:`robodyn.mechanisms.urdf.chain`);
this backend is for Pinocchio's analytic derivatives and for comparison. :func:`load_urdf` reads a URDF
file into a :class:`UrdfSystem`, a second-order model

    M(q) q'' + C(q, q') q' + g(q) = tau

whose state is ``[q..., q_dot...]`` with one coordinate per movable joint, named after the joint
(``<joint>``, ``<joint>_dot``), and one torque (or force, for a prismatic joint) input per joint
(``<joint>_tau``). Gravity is Pinocchio's default, 9.81 m/s^2 along -z of the root link.

Everything numeric is a Pinocchio algorithm (Carpentier et al., "The Pinocchio C++ library", SII 2019):
``aba`` for the forward dynamics, ``crba`` for M, ``rnea`` for the bias and the inverse dynamics, and
``computeABADerivatives`` for the exact (analytic) Jacobians of the forward dynamics. They model the rigid
bodies only: a file whose joints state ``<dynamics damping friction>`` is refused unless
``dynamics=False`` says to ignore them; continuous and mimic joints are refused with a pointer to the
default backend, which supports both.

The file is parsed twice: once with :mod:`robodyn.mechanisms.urdf.file`, to check what Pinocchio would
accept silently (continuous and floating joints, unphysical inertias, moving links without mass) and to
read the joint table; then by Pinocchio itself. Pinocchio is an optional dependency
(``pip install 'robodyn[urdf]'``) and is imported only when this backend is used.

Thread safety: a :class:`UrdfSystem` keeps one Pinocchio ``Data`` workspace, written by every
evaluation. Do not evaluate one model from several threads at once; load one model per thread.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

import numpy as np

from robodyn.base.errors import InputError, ModelFileError, SingularMatrixError
from robodyn.base.textfile import read_text_limited
from robodyn.mechanisms.chain.parts import WeldedPart, judge_body
from robodyn.mechanisms.urdf.file import (
    MASSLESS_FIX,
    MAX_URDF_BYTES,
    UNSUPPORTED_JOINTS,
    URDF_OPT_OUT,
    JointLimits,
    UrdfJoint,
    UrdfRobotInfo,
    coordinate_names,
    joint_limits,
    parse_robot,
    robot_joints,
    robot_links,
)
from robodyn.model.kinds.mechanical import velocity_name
from robodyn.model.plausibility import check_mass, mass_advice
from robodyn.model.system import Model, Values, Vector, check_names, values_to_vector
from robodyn.rigid.crba import empty_subtrees

__all__ = ["INSTALL_HINT", "JointLimits", "UrdfJoint", "UrdfSystem", "load_urdf"]

INSTALL_HINT: Final = "install robodyn[urdf] (pip install 'robodyn[urdf]')"
MOVABLE: Final = ("revolute", "prismatic")  # One coordinate each, nq = nv = 1.
_DEFAULT_BACKEND: Final = "load it with the default backend (robodyn.load(path), backend='tape')"
_REFUSED: Final = {
    "continuous": "an unbounded revolute joint (Pinocchio stores it as cos/sin, two numbers for one velocity): "
                  f"{_DEFAULT_BACKEND}, which makes it one angle, or make it 'revolute' with limits",
    **{kind: f"a {kind} base is not supported by the pinocchio backend (fixed bases only): {_DEFAULT_BACKEND}, "
             f"which joins the root link to the world by it" for kind in UNSUPPORTED_JOINTS},
}


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[list[str]]:
    """Capture what C++ code writes to file descriptor 2 (the lines are in the list after the block)."""
    messages: list[str] = []
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no usable stderr: nothing to capture
        yield messages
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield messages
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            text = sink.read(100_000).decode("utf-8", "replace")
            messages += [line.strip() for line in text.splitlines() if line.strip().startswith("Error")][:3]


def _pinocchio() -> Any:
    try:
        import pinocchio
    except ImportError:
        raise InputError(f"URDF models need Pinocchio: {INSTALL_HINT}") from None
    return pinocchio


@dataclass(frozen=True, slots=True)
class _Parsed:
    robot: str
    joints: tuple[UrdfJoint, ...]
    inertias: Mapping[str, tuple[float, np.ndarray]]  # link -> mass, inertia about its centre of mass as written


# --- checking the XML ---------------------------------------------------------------------------------
def _floats(text: str | None, count: int, where: str) -> tuple[float, ...]:
    try:
        values = tuple(float(v) for v in (text or "").split())
    except ValueError:
        values = ()
    if len(values) != count or not all(map(math.isfinite, values)):
        raise ModelFileError(f"{where}: expected {count} finite number(s), got {text!r}")
    return values


def _read_inertia(link: ET.Element, where: str) -> tuple[float, np.ndarray] | None:
    """The link's mass and inertia ``(3, 3)`` about its centre of mass as written (None without ``<inertial>``); a
    missing or negative mass, or a missing entry, is refused."""
    inertial = link.find("inertial")
    if inertial is None:
        return None
    mass = inertial.find("mass")
    if mass is None or mass.get("value") is None:
        raise ModelFileError(f"{where}: <inertial> has no <mass value=...>: give the link's mass in kg")
    value = _floats(mass.get("value"), 1, f"{where} mass")[0]
    if value < 0:
        raise ModelFileError(f"{where}: mass {value} is negative: give the link's mass in kg (>= 0)")
    inertia = inertial.find("inertia")
    keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    if inertia is None or any(inertia.get(k) is None for k in keys):
        raise ModelFileError(f"{where}: <inertial> needs <inertia {' '.join(k + '=...' for k in keys)}/> "
                             "(about the centre of mass)")
    ixx, ixy, ixz, iyy, iyz, izz = (_floats(inertia.get(k), 1, f"{where} inertia {k}")[0] for k in keys)
    return value, np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def _check_dynamics(element: ET.Element, label: str, dynamics: bool) -> None:
    """Refuse what Pinocchio's algorithms would silently drop: mimic joints, and joint damping and friction
    unless ``dynamics`` is False (the caller asked to ignore them)."""
    if element.find("mimic") is not None:
        raise ModelFileError(f"{label} mimics another joint: the pinocchio backend treats it as a coordinate of "
                             f"its own; {_DEFAULT_BACKEND}, which couples it")
    terms = element.find("dynamics")
    if terms is None or not dynamics:
        return
    stated = {k: terms.get(k) for k in ("damping", "friction") if (terms.get(k) or "0").strip() not in ("0", "0.0")}
    if stated:
        text = " ".join(f'{k}="{v}"' for k, v in stated.items())
        raise ModelFileError(f"{label} has <dynamics {text}>, which Pinocchio's rigid-body algorithms do not model: "
                             f"pass dynamics=False to ignore it, or {_DEFAULT_BACKEND}")


def _joint(element: ET.Element, where: str) -> UrdfJoint:
    name, kind = element.get("name"), element.get("type")
    if not name or not kind:
        raise ModelFileError(f"{where}: a <joint> needs name and type attributes")
    label = f"{where}: joint {name!r}"
    if kind in _REFUSED:
        raise ModelFileError(f"{label} is {kind}: {_REFUSED[kind]}")
    if kind not in (*MOVABLE, "fixed"):
        raise ModelFileError(f"{label} has unknown type {kind!r}: use revolute, prismatic or fixed")
    parent, child = element.find("parent"), element.find("child")
    if parent is None or child is None or not parent.get("link") or not child.get("link"):
        raise ModelFileError(f"{label} needs <parent link=.../> and <child link=.../>")
    axis_element = element.find("axis")
    axis = (1.0, 0.0, 0.0) if axis_element is None else _floats(axis_element.get("xyz"), 3, f"{label} axis")
    if kind != "fixed" and not any(axis):
        raise ModelFileError(f"{label}: axis is zero: give a direction, e.g. xyz=\"0 0 1\"")
    if kind in MOVABLE and element.find("limit") is None:
        raise ModelFileError(f"{label} is {kind} but has no <limit>: give lower, upper, effort and velocity")
    limits = joint_limits(element, label)
    return UrdfJoint(name, kind, str(parent.get("link")), str(child.get("link")),
                     (axis[0], axis[1], axis[2]), limits)


def _parse(text: str, where: str, dynamics: bool = True) -> _Parsed:
    """Check the URDF structure and read its joints and inertias (ModelFileError naming the line, link or joint)."""
    root = parse_robot(text, where)
    links = robot_links(root, where, text)
    inertias = {name: _read_inertia(link, f"{where}: link {name!r}") for name, link in links.items()}
    elements = robot_joints(root, where, text)
    for element in elements:
        if element.get("type") in MOVABLE:
            _check_dynamics(element, f"{where}: joint {element.get('name')!r}", dynamics)
    joints = tuple(_joint(element, where) for element in elements)
    children: dict[str, UrdfJoint] = {}
    for joint in joints:
        for role, link_name in (("parent", joint.parent), ("child", joint.child)):
            if link_name not in links:
                raise ModelFileError(f"{where}: joint {joint.name!r}: {role} link {link_name!r} is not defined")
        if joint.child == joint.parent:
            raise ModelFileError(f"{where}: joint {joint.name!r}: link {joint.child!r} is both its parent and its "
                                 "child: a joint connects two different links")
        if joint.child in children:
            raise ModelFileError(f"{where}: link {joint.child!r} is the child of both {children[joint.child].name!r} "
                                 f"and {joint.name!r}: a URDF is a tree")
        children[joint.child] = joint
    roots = [name for name in links if name not in children]
    if len(roots) != 1:
        raise ModelFileError(f"{where}: expected one root link, found {roots or 'none (a loop)'}: "
                             "connect every link to one tree")
    reached, frontier = {roots[0]}, [roots[0]]
    below: dict[str, list[str]] = {}
    for joint in joints:
        below.setdefault(joint.parent, []).append(joint.child)
    while frontier:
        for child in below.get(frontier.pop(), ()):
            if child not in reached:
                reached.add(child)
                frontier.append(child)
    if len(reached) != len(links):
        loose = sorted(set(links) - reached)
        raise ModelFileError(f"{where}: links {loose} are not connected to the root link {roots[0]!r} (a loop): "
                             "connect every link to one tree")
    if not any(j.type in MOVABLE for j in joints):
        raise ModelFileError(f"{where}: no revolute or prismatic joint: the robot has nothing to move")
    return _Parsed(root.get("name") or "robot", joints,
                   MappingProxyType({k: v for k, v in inertias.items() if v is not None}))


# --- the model ------------------------------------------------------------------------------------------
class UrdfSystem(UrdfRobotInfo, Model):
    """A fixed-base URDF robot, M(q) q'' + C(q, q') q' + g(q) = tau, evaluated by Pinocchio.

    Build it with :func:`load_urdf` (or ``robodyn.load("robot.urdf", backend="pinocchio")``).

    Attributes
    ----------
    coordinates : tuple of str
        The movable joints, in Pinocchio's (depth-first) order; states are these, then ``<joint>_dot``.
    joints : tuple of UrdfJoint
        Every joint of the file, fixed ones included, in file order.
    limits : mapping joint name -> JointLimits
        Position, velocity and effort limits of the movable joints (not enforced by the dynamics).
    path : Path or None
        The file the model came from.

    Notes
    -----
    One Pinocchio ``Data`` workspace per model: evaluations are not thread-safe (see the module notes).
    """

    @property
    def order(self) -> int:
        return 2

    def __init__(self, pin_model: Any, parsed: _Parsed, *, path: Path | None = None, name: str | None = None):
        pin = _pinocchio()
        self._pin = pin
        self._model = pin_model
        self._data = pin_model.createData()
        self.name = name or parsed.robot
        self.path = path
        urdf_names = [str(n) for n in list(pin_model.names)[1:]]
        renamed = coordinate_names(urdf_names)
        self.coordinates = tuple(renamed[n] for n in urdf_names)
        self.velocities = tuple(velocity_name(c) for c in self.coordinates)
        self.states = self.coordinates + self.velocities
        self.inputs = tuple(f"{c}_tau" for c in self.coordinates)
        self.outputs = self.states
        self.parameters = MappingProxyType({})
        check_names({"states": self.states, "inputs": self.inputs}, where=f"URDF {self.name!r} (joint names)")
        self.joints = self.joint_records = parsed.joints
        by_name = {j.name: j for j in parsed.joints}
        self.limits: Mapping[str, JointLimits] = MappingProxyType(
            {renamed[n]: by_name[n].limits for n in urdf_names})

    @property
    def n_coordinates(self) -> int:
        return len(self.coordinates)

    @property
    def pinocchio_model(self) -> Any:
        """The underlying ``pinocchio.Model`` (constants; do not modify)."""
        return self._model

    # --- raw numerics on float64 vectors ------------------------------------------------------------------
    def acceleration(self, q: Vector, qd: Vector, tau: Vector) -> Vector:
        """q'' = ABA(q, q', tau), shape ``(n,)``."""
        return np.array(self._pin.aba(self._model, self._data, q, qd, tau))

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        n = self.n_coordinates
        return np.concatenate([x[n:], self.acceleration(x[:n], x[n:], u)])

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return x.copy()

    def _coordinates(self, q: Values, what: str = "coordinate") -> Vector:
        return values_to_vector(q, self.coordinates, what)

    def _velocities(self, qd: Values, what: str = "velocity") -> Vector:
        if isinstance(qd, Mapping):  # accept both "<joint>" and "<joint>_dot" keys
            qd = {k[: -len("_dot")] if k in self.velocities else k: v for k, v in qd.items()}
        return values_to_vector(qd, self.coordinates, what)

    # --- dynamics terms ---------------------------------------------------------------------------------
    def mass_matrix(self, q: Values) -> np.ndarray:
        """M(q) by CRBA, symmetrized (Pinocchio fills the upper triangle), shape ``(n, n)``."""
        mass = np.array(self._pin.crba(self._model, self._data, self._coordinates(q)))
        return np.triu(mass) + np.triu(mass, 1).T

    def gravity(self, q: Values) -> Vector:
        """g(q) = dV/dq, the joint torques that hold the robot still against gravity, shape ``(n,)``."""
        return np.array(self._pin.computeGeneralizedGravity(self._model, self._data, self._coordinates(q)))

    def bias(self, q: Values, qd: Values) -> Vector:
        """C(q, q') q' + g(q) = RNEA(q, q', 0), shape ``(n,)``."""
        zero = np.zeros(self.n_coordinates)
        return np.array(self._pin.rnea(self._model, self._data, self._coordinates(q), self._velocities(qd), zero))

    def inverse_dynamics(self, q: Values, qd: Values, qdd: Values) -> Vector:
        """tau = M(q) q'' + C(q, q') q' + g(q) by RNEA, shape ``(n,)``."""
        qdd_vector = self._velocities(qdd, "acceleration")
        return np.array(self._pin.rnea(self._model, self._data, self._coordinates(q), self._velocities(qd),
                                       qdd_vector))

    def potential_energy(self, q: Values) -> float:
        """V(q) from gravity (zero at height z = 0 of the root frame)."""
        return float(self._pin.computePotentialEnergy(self._model, self._data, self._coordinates(q)))

    def kinetic_energy(self, q: Values, qd: Values) -> float:
        """T = 1/2 q'^T M(q) q'."""
        velocity = self._velocities(qd)
        return 0.5 * float(velocity @ self.mass_matrix(q) @ velocity)

    # --- exact Jacobians ---------------------------------------------------------------------------------
    def jacobians(self, t: float, x: Any, u: Any = None, params: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Analytic df/dx ``(2n, 2n)`` and df/du ``(2n, n)`` from ``computeABADerivatives``.

        With f = [q', ABA(q, q', tau)]: df/dx = [[0, I], [dq''/dq, dq''/dq']], df/du = [[0], [M^-1]].

        Reference: J. Carpentier, N. Mansard, "Analytical derivatives of rigid body dynamics
        algorithms", RSS 2018.
        """
        _, xv, uv, _ = self._arguments(t, x, u, params)
        return self._jacobians_raw(xv, uv)

    def _jacobians_raw(self, xv: Vector, uv: Vector) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`jacobians` on an already validated point (float64 vectors in model order)."""
        n = self.n_coordinates
        ddq_dq, ddq_dv, minv = self._pin.computeABADerivatives(self._model, self._data, xv[:n], xv[n:], uv)
        dfdx = np.zeros((2 * n, 2 * n))
        dfdx[:n, n:] = np.eye(n)
        dfdx[n:, :n] = ddq_dq
        dfdx[n:, n:] = ddq_dv
        dfdu = np.zeros((2 * n, n))
        block = dfdu[n:, :]
        block[...] = minv
        lower = self._lower_indices  # Minv is symmetric and only its upper triangle is sure to be set
        block[lower] = block.T[lower]
        return dfdx, dfdu

    @functools.cached_property
    def _lower_indices(self) -> tuple[np.ndarray, np.ndarray]:
        return np.tril_indices(self.n_coordinates, -1)

    def dfdx(self, t: float, x: Any, u: Any = None, params: Any = None) -> np.ndarray:
        """Analytic df/dx at a point, ``(n_states, n_states)`` (see :meth:`jacobians`)."""
        return self.jacobians(t, x, u, params)[0]

    def dfdu(self, t: float, x: Any, u: Any = None, params: Any = None) -> np.ndarray:
        """Analytic df/du at a point, ``(n_states, n_inputs)`` (see :meth:`jacobians`)."""
        return self.jacobians(t, x, u, params)[1]

    # --- the model contract (robodyn.model.protocol) ---------------------------------------------------
    kind = "urdf"

    @property
    def jacobian_method(self) -> str:
        return "manipulator"

    @property
    def outputs_are_states(self) -> bool:
        return True

    def jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        return self._jacobians_raw(x, u)

    def manipulator(self) -> UrdfSystem:
        return self

    def mass_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """M(q) ``(n, n)`` at a validated point."""
        return self.mass_matrix(x[: self.n_coordinates])

    def rhs_terms(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        """r = tau - C(q, q') q' - g(q) ``(n,)`` and dr/du = I ``(n, n)``."""
        n = self.n_coordinates
        return u - self.bias(x[:n], x[n:]), np.eye(n)

    def check_mass(self, mass: np.ndarray, x: Vector) -> None:
        """SingularMatrixError naming q when ``mass`` is not positive definite."""
        try:
            np.linalg.cholesky(mass)
        except np.linalg.LinAlgError:
            q = dict(zip(self.coordinates, x[: self.n_coordinates].tolist()))
            raise SingularMatrixError(f"model {self.name!r}: mass matrix M(q) is not positive definite at q={q}: "
                                      "check the masses and inertias of the URDF") from None

    def show_text(self) -> str:
        return "\n".join(self.joint_table())

    @property
    def geometry_file(self) -> Path | None:
        return self.path

    def __repr__(self) -> str:
        source = f", path={str(self.path)!r}" if self.path is not None else ""
        return f"UrdfSystem(name={self.name!r}, coordinates={list(self.coordinates)}{source})"


# --- loading ---------------------------------------------------------------------------------------------------
def _judge_bodies(model: Any, parsed: _Parsed, where: str, check_inertia: bool) -> None:
    """The link-inertia rule on the bodies that move (robodyn.mechanisms.chain.parts.judge_body): each joint's child
    link
    with the links welded to it by fixed joints, whose inertia Pinocchio combined (``model.inertias``); the root's
    body does not move on this backend's fixed base."""
    above = {j.child: j for j in parsed.joints}
    bodies: dict[str, list[WeldedPart]] = {}
    for link, (mass, inertia) in parsed.inertias.items():
        body = link
        while body in above and above[body].type == "fixed":
            body = above[body].parent
        bodies.setdefault(body, []).append(WeldedPart(link, above[link].name if link != body else None, mass,
                                                           inertia))
    for body, parts in bodies.items():
        index = model.getJointId(above[body].name) if body in above else 0
        judge_body(body, parts, np.asarray(model.inertias[index].inertia), where, check=check_inertia,
                   moving=index > 0, opt_out=URDF_OPT_OUT, error=ModelFileError, stacklevel=4)


def _check_mass(system: UrdfSystem, parsed: _Parsed, where: str) -> None:
    """M (Pinocchio's CRBA) positive definite at a generic q inside the limits (robodyn.model.plausibility, the
    check of every kind); else ModelFileError naming the links whose joints move no mass."""
    model = system.pinocchio_model

    def advice() -> str:
        inertias = list(model.inertias)[1:]
        carries = [i.mass != 0 or bool(np.any(np.asarray(i.inertia) != 0)) for i in inertias]
        child = {j.name: j.child for j in parsed.joints}
        names = [str(n) for n in list(model.names)[1:]]
        empty = empty_subtrees([int(p) - 1 for p in list(model.parents)[1:]], carries)
        return mass_advice([(child[name], name) for name, e in zip(names, empty) if e], MASSLESS_FIX)

    try:
        check_mass(system.mass_matrix, system.coordinates, where=f"model {system.name!r}", fix=advice,
                   lower=np.asarray(model.lowerPositionLimit), upper=np.asarray(model.upperPositionLimit))
    except InputError as exc:
        raise ModelFileError(f"{where}: {exc}") from None


def load_urdf(path: str | os.PathLike[str], *, name: str | None = None, dynamics: bool = True,
              check_inertia: bool = True) -> UrdfSystem:
    """Load a fixed-base URDF robot as a :class:`UrdfSystem` (the ``backend="pinocchio"`` of
    :func:`robodyn.load`).

    Parameters
    ----------
    path
        The ``.urdf`` file. Revolute, prismatic and fixed joints are accepted; meshes are not read.
    name
        The model's name (default: the ``<robot name>``).
    dynamics
        False to ignore the joints' ``<dynamics damping friction>``, which this backend cannot model.
    check_inertia
        False to accept link inertias that no rigid body has (robodyn.mechanisms.chain.parts.inertia_problem).

    Raises
    ------
    InputError
        Pinocchio is not installed (:data:`INSTALL_HINT`), or the file is missing, malformed, or uses a
        continuous, mimic, planar or floating joint, joint damping or friction (unless ``dynamics=False``),
        an unphysical inertia, or a moving body without mass (ModelFileError, naming the line, joint or link).
    """
    pin = _pinocchio()
    file = Path(path)
    text = read_text_limited(file, "URDF file", limit=MAX_URDF_BYTES, error=ModelFileError)
    where = str(file)
    parsed = _parse(text, where, dynamics)
    try:
        with _quiet_stderr() as messages:  # urdfdom prints its complaints on stderr: they join the error, if any
            model = pin.buildModelFromXML(text)
    except (RuntimeError, ValueError) as exc:
        detail = " ".join(f"{exc} {' '.join(messages)}".split())
        raise ModelFileError(f"{where}: Pinocchio cannot read the URDF: {detail}") from None
    if model.nq != model.nv:
        raise ModelFileError(f"{where}: nq = {model.nq} != nv = {model.nv}: only fixed-base robots with "
                             "revolute and prismatic joints are supported")
    _judge_bodies(model, parsed, where, check_inertia)
    system = UrdfSystem(model, parsed, path=file, name=name)
    _check_mass(system, parsed, where)
    return system
