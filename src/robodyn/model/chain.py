"""Serial chains and trees of rigid links: ``kind: chain`` model files and :class:`ChainSystem`.

A chain is described by its joints (revolute or prismatic, from the base outwards) and links (mass,
centre of mass, inertia about the centre of mass). The equations of motion come from recursive
Newton–Euler on straight-line code (:mod:`robodyn.model.rnea`), never from expanded Lagrangians, so
they do not swell: a 10-link chain is derived and linearized in seconds.

Joint placement, relative to the frame of the parent link, is either URDF-like, ``xyz`` and ``rpy``
(R = Rz(yaw) Ry(pitch) Rx(roll)) followed by the motion about ``axis``; or standard Denavit–Hartenberg
``dh: {a, alpha, d, theta}``: motion about the parent frame's z, then Rz(theta) Tz(d) Tx(a) Rx(alpha)
to the link frame. For a link the joint frame (URDF) or DH frame is the link frame in which ``com``
and ``inertia`` are given.

Per joint, these terms are added to the joint force (tau = ID(q, q', q'') + ...):

- ``damping`` b: b q';
- ``friction`` F_c: smoothed Coulomb friction F_c tanh(q'/eps), eps = ``friction_smoothing``
  (default 1e-3 in the joint's velocity unit: the friction force reaches 76% of F_c at q' = eps);
- ``stiffness`` k and ``rest`` q_0: k (q - q_0) (and 1/2 k (q - q_0)^2 in the potential energy);
- ``rotor_inertia`` I_r and ``gear_ratio`` G: G^2 I_r q'' (the reflected motor inertia on M's
  diagonal; the rotor's gyroscopic coupling is neglected).

Reference: R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008; J. J. Craig,
*Introduction to Robotics*, 3rd ed., chapters 3 and 6 (DH convention, Newton–Euler).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import sympy

from robodyn.errors import InputError
from robodyn.model.expr import TIME, symbol
from robodyn.model.mechanical import ManipulatorSystem, velocity_name
from robodyn.model.rnea import Body, Tape, as_expr, compile_tape, differentiate, expand, kinematics, rnea
from robodyn.model.symbolic import ExprLike, NumericFunction
from robodyn.model.system import Values, _names, values_to_vector

__all__ = ["DEFAULT_FRICTION_SMOOTHING", "DEFAULT_GRAVITY", "ChainSystem", "Joint", "Link", "chain_from_reader"]

DEFAULT_GRAVITY: Final = (0.0, 0.0, -9.81)  # m/s^2, in the base frame.
DEFAULT_FRICTION_SMOOTHING: Final = 1e-3  # eps of tanh(q'/eps) in the smoothed Coulomb friction.
JOINT_TYPES: Final = ("revolute", "prismatic")
_INERTIA_KEYS: Final = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")


@dataclass(frozen=True, slots=True)
class Joint:
    """A joint: its type, the links it connects, its placement and its friction/spring/motor terms.

    Numbers may be expressions (text for the safe parser, or sympy) in the model's parameters.
    ``dh`` (mapping with ``a, alpha, d, theta``) replaces ``xyz``/``rpy``/``axis``. ``force`` is the
    generalized force on the joint (in t, q, q', inputs); default: the input ``<name>_tau`` if present.
    """

    name: str
    parent: str
    child: str
    type: str = "revolute"
    axis: Sequence[ExprLike] = (0, 0, 1)
    xyz: Sequence[ExprLike] = (0, 0, 0)
    rpy: Sequence[ExprLike] = (0, 0, 0)
    dh: Mapping[str, ExprLike] | None = None
    damping: ExprLike = 0
    friction: ExprLike = 0
    stiffness: ExprLike = 0
    rest: ExprLike = 0
    rotor_inertia: ExprLike = 0
    gear_ratio: ExprLike = 1
    force: ExprLike | None = None


@dataclass(frozen=True, slots=True)
class Link:
    """A rigid link: mass, centre of mass ``(3,)`` and inertia about it ``(3, 3)`` in the link frame.

    ``inertia`` may be a 3x3 nested list or a mapping with ``ixx iyy izz ixy ixz iyz`` (missing = 0).
    The base link (child of no joint) needs only its name.
    """

    name: str
    mass: ExprLike = 0
    com: Sequence[ExprLike] = (0, 0, 0)
    inertia: Any = field(default=None)


def _rot_x(a: Any) -> sympy.Matrix:
    return sympy.Matrix([[1, 0, 0], [0, sympy.cos(a), -sympy.sin(a)], [0, sympy.sin(a), sympy.cos(a)]])


def _rot_y(a: Any) -> sympy.Matrix:
    return sympy.Matrix([[sympy.cos(a), 0, sympy.sin(a)], [0, 1, 0], [-sympy.sin(a), 0, sympy.cos(a)]])


def _rot_z(a: Any) -> sympy.Matrix:
    return sympy.Matrix([[sympy.cos(a), -sympy.sin(a), 0], [sympy.sin(a), sympy.cos(a), 0], [0, 0, 1]])


def _inertia_matrix(value: Any) -> list[list[Any]]:
    if value is None:
        return [[0] * 3 for _ in range(3)]
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in _INERTIA_KEYS]
        if unknown:
            raise InputError(f"unknown inertia entries {unknown}: use {', '.join(_INERTIA_KEYS)}")
        g = {k: value.get(k, 0) for k in _INERTIA_KEYS}
        return [[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]], [g["ixz"], g["iyz"], g["izz"]]]
    rows = value.tolist() if isinstance(value, np.ndarray | sympy.MatrixBase) else value
    if not isinstance(rows, list | tuple) or len(rows) != 3 or any(
            not isinstance(r, list | tuple) or len(r) != 3 for r in rows):
        raise InputError(f"inertia must be a 3x3 matrix or a mapping of {', '.join(_INERTIA_KEYS)}, got {value!r}")
    return [list(r) for r in rows]


class ChainSystem(ManipulatorSystem):
    """A kinematic tree of rigid links, in manipulator form M(q) q'' = Q - c(q, q').

    Coordinates are named after the joints, velocities ``<joint>_dot``. The numerics — ``f``,
    :meth:`mass_matrix`, :meth:`acceleration`, :meth:`jacobians`, :meth:`inverse_dynamics` — run
    straight-line Newton–Euler code and its forward-mode derivatives. ``mass_expr``, ``bias_expr`` and
    ``rhs_expr`` (for printing and code generation) are closed forms built on first use by substituting
    the straight-line code back: fine for a few links, they swell for long chains.

    Parameters
    ----------
    joints, links
        :class:`Joint` and :class:`Link` descriptions (or mappings with their fields).
    gravity : (3,)
        In the base frame; default (0, 0, -9.81).
    parameters, outputs, name
        As for :class:`~robodyn.model.symbolic.SymbolicSystem`.
    inputs
        Default: one torque/force ``<joint>_tau`` per joint.
    friction_smoothing
        eps of the smoothed Coulomb friction tanh(q'/eps).
    """

    def __init__(
        self,
        joints: Sequence[Joint | Mapping[str, Any]],
        links: Sequence[Link | Mapping[str, Any]],
        *,
        gravity: Sequence[ExprLike] = DEFAULT_GRAVITY,
        parameters: Mapping[str, float] | None = None,
        inputs: Sequence[str] | None = None,
        outputs: Mapping[str, ExprLike] | None = None,
        friction_smoothing: float = DEFAULT_FRICTION_SMOOTHING,
        name: str = "chain",
    ):
        self.joints = tuple(j if isinstance(j, Joint) else Joint(**j) for j in joints)
        self.links = tuple(k if isinstance(k, Link) else Link(**k) for k in links)
        coords = _names([j.name for j in self.joints], "coordinates")
        if inputs is None:
            inputs = [f"{c}_tau" for c in coords]
        self.coordinates = coords
        self.velocities = tuple(velocity_name(c) for c in coords)
        self._setup_symbols(name, coords + self.velocities, inputs, parameters, tuple(outputs or ()))
        n = len(coords)
        self.q_symbols, self.qd_symbols = self.x_symbols[:n], self.x_symbols[n:]
        if not friction_smoothing > 0:
            raise InputError(f"model {name!r}: friction_smoothing must be positive, got {friction_smoothing}",
                             key="friction_smoothing")
        self.friction_smoothing = float(friction_smoothing)
        self.gravity_expr = tuple(self._param_expr(g, f"gravity[{i}]", "gravity") for i, g in enumerate(gravity))
        if len(self.gravity_expr) != 3:
            raise InputError(f"model {name!r}: gravity must have 3 entries", key="gravity")
        self.order_, self.bodies = self._build_bodies()
        self._joint_terms = [self._terms(j) for j in self.joints]
        self._setup_outputs(outputs)

    # --- construction -------------------------------------------------------------------------------
    def _param_expr(self, value: ExprLike, where: str, key: str) -> Any:
        try:
            return self.expression(value, where, self.p_symbols)
        except InputError as exc:
            raise InputError(str(exc), key=key) from None

    def _default(self, expr: Any) -> float:
        defaults = dict(zip(self.p_symbols, map(sympy.Float, self.parameters.values())))
        return float(as_expr(expr).xreplace(defaults))

    def _vector(self, values: Any, where: str, key: str) -> list[Any]:
        if not isinstance(values, Sequence | np.ndarray) or isinstance(values, str) or len(values) != 3:
            raise InputError(f"model {self.name!r}: {where} must be a 3-vector, got {values!r}", key=key)
        return [self._param_expr(v, f"{where}[{i}]", key) for i, v in enumerate(values)]

    def _topology(self) -> list[int]:
        """Joint indices ordered parents first; errors name the joint or link at fault."""
        link_names = [k.name for k in self.links]
        for group, names in (("link", link_names), ("joint", [j.name for j in self.joints])):
            seen: set[str] = set()
            for item in names:
                if item in seen:
                    raise InputError(f"model {self.name!r}: duplicate {group} name {item!r}",
                                     key="links" if group == "link" else "joints")
                seen.add(item)
        by_child: dict[str, int] = {}
        for i, j in enumerate(self.joints):
            if j.type not in JOINT_TYPES:
                raise InputError(f"model {self.name!r}: joint {j.name!r} has type {j.type!r}: use revolute or "
                                 "prismatic", key="joints")
            for role, link in (("parent", j.parent), ("child", j.child)):
                if link not in link_names:
                    raise InputError(f"model {self.name!r}: joint {j.name!r}: unknown {role} link {link!r} "
                                     f"(links: {', '.join(link_names)})", key="joints")
            if j.child in by_child:
                raise InputError(f"model {self.name!r}: link {j.child!r} is the child of joints "
                                 f"{self.joints[by_child[j.child]].name!r} and {j.name!r}", key="joints")
            by_child[j.child] = i
        depth: dict[int, int] = {}
        for i, j in enumerate(self.joints):
            visited, link = [j.child], j.parent
            while link in by_child:
                if link in visited:
                    raise InputError(f"model {self.name!r}: link {link!r} is its own ancestor (joints form a "
                                     f"cycle through {' <- '.join(visited)}): a chain must be a tree",
                                     key="joints")
                visited.append(link)
                link = self.joints[by_child[link]].parent
            depth[i] = len(visited)
        self._by_child = by_child
        return sorted(range(len(self.joints)), key=lambda i: (depth[i], i))

    def _build_bodies(self) -> tuple[list[int], list[Body]]:
        order = self._topology()
        links = {k.name: k for k in self.links}
        post: dict[str, tuple[sympy.Matrix, sympy.Matrix]] = {}  # link -> (R_B, p_B): joint frame <- link frame
        bodies: list[Body] = []
        position_of = {joint: k for k, joint in enumerate(order)}
        for i in order:
            joint = self.joints[i]
            where = f"joint {joint.name!r}"
            r_b_parent, p_b_parent = post.get(joint.parent, (sympy.eye(3), sympy.zeros(3, 1)))
            if joint.dh is not None:
                dh = {k: self._param_expr(joint.dh.get(k, 0), f"{where}.dh.{k}", "joints") for k in joint.dh}
                unknown = [k for k in dh if k not in ("a", "alpha", "d", "theta")]
                if unknown:
                    raise InputError(f"model {self.name!r}: {where}: unknown DH entries {unknown}: use a, alpha, "
                                     "d, theta", key="joints")
                a, alpha, d, theta = (dh.get(k, sympy.Integer(0)) for k in ("a", "alpha", "d", "theta"))
                rot_o, pos_o, axis = sympy.eye(3), sympy.zeros(3, 1), [sympy.Integer(0)] * 2 + [sympy.Integer(1)]
                r_b = _rot_z(theta) * _rot_x(alpha)
                p_b = sympy.Matrix([a * sympy.cos(theta), a * sympy.sin(theta), d])
            else:
                xyz = self._vector(joint.xyz, f"{where}.xyz", "joints")
                roll, pitch, yaw = self._vector(joint.rpy, f"{where}.rpy", "joints")
                rot_o, pos_o = _rot_z(yaw) * _rot_y(pitch) * _rot_x(roll), sympy.Matrix(xyz)
                axis = self._vector(joint.axis, f"{where}.axis", "joints")
                r_b, p_b = sympy.eye(3), sympy.zeros(3, 1)
            length = sympy.sqrt(sum((e**2 for e in axis), sympy.Integer(0)))
            if not self._default(length) > 0:
                raise InputError(f"model {self.name!r}: {where}: axis {list(axis)} has zero length: give a "
                                 "non-zero direction", key="joints")
            axis = [e / length for e in axis]
            post[joint.child] = (r_b, p_b)
            rotation = r_b_parent * rot_o
            position = p_b_parent + r_b_parent * pos_o
            link = links[joint.child]
            mass, com, inertia = self._link_terms(link)
            com_j = p_b + r_b * sympy.Matrix(com)
            inertia_j = r_b * sympy.Matrix(inertia) * r_b.T
            parent = position_of[self._by_child[joint.parent]] if joint.parent in self._by_child else -1
            bodies.append(Body(parent, joint.type == "prismatic", tuple(axis),
                               tuple(tuple(rotation.row(r)) for r in range(3)), tuple(position),
                               mass, tuple(com_j), tuple(tuple(inertia_j.row(r)) for r in range(3))))
        return order, bodies

    def _link_terms(self, link: Link) -> tuple[Any, list[Any], list[list[Any]]]:
        where = f"link {link.name!r}"
        mass = self._param_expr(link.mass, f"{where}.mass", "links")
        com = self._vector(link.com, f"{where}.com", "links")
        try:
            rows = _inertia_matrix(link.inertia)
        except InputError as exc:
            raise InputError(f"model {self.name!r}: {where}: {exc}", key="links") from None
        inertia = [[self._param_expr(e, f"{where}.inertia[{r}][{c}]", "links") for c, e in enumerate(row)]
                   for r, row in enumerate(rows)]
        m = self._default(mass)
        if m < 0:
            raise InputError(f"model {self.name!r}: {where} has negative mass {m}: masses must be >= 0",
                             key="links")
        values = np.array([[self._default(e) for e in row] for row in inertia])
        if not np.allclose(values, values.T, rtol=1e-12, atol=0.0):
            raise InputError(f"model {self.name!r}: {where}: inertia {values.tolist()} is not symmetric",
                             key="links")
        if np.any(values) and np.min(np.linalg.eigvalsh(values)) <= 0:
            raise InputError(f"model {self.name!r}: {where}: inertia {values.tolist()} is not positive definite "
                             "with the default parameters: check ixx, iyy, izz (a point mass has all zeros)",
                             key="links")
        return mass, com, inertia

    def _terms(self, joint: Joint) -> dict[str, Any]:
        where = f"joint {joint.name!r}"
        terms = {key: self._param_expr(getattr(joint, key), f"{where}.{key}", "joints")
                 for key in ("damping", "friction", "stiffness", "rest", "rotor_inertia", "gear_ratio")}
        default = f"{joint.name}_tau" if f"{joint.name}_tau" in self.inputs else 0
        force = joint.force if joint.force is not None else default
        try:
            terms["force"] = self.expression(force, f"{where}.force")
        except InputError as exc:
            raise InputError(str(exc), key="joints") from None
        return terms

    # --- straight-line dynamics -----------------------------------------------------------------------
    def _rnea(self, tape: Tape, q: Sequence[Any], qd: Sequence[Any], qdd: Sequence[Any],
              gravity: Sequence[Any]) -> list[Any]:
        """ID in coordinate order (bodies are in parent-first order)."""
        pick = self.order_
        tau = rnea(tape, self.bodies, [q[i] for i in pick], [qd[i] for i in pick], [qdd[i] for i in pick], gravity)
        result: list[Any] = [0] * len(pick)
        for k, i in enumerate(pick):
            result[i] = tau[k]
        return result

    def _joint_force(self, i: int, q: Any, qd: Any, qdd: Any) -> Any:
        """Friction, spring and reflected rotor inertia of joint i (added to ID)."""
        t = self._joint_terms[i]
        return (t["gear_ratio"] ** 2 * t["rotor_inertia"] * qdd + t["damping"] * qd
                + t["friction"] * sympy.tanh(qd / sympy.Float(self.friction_smoothing))
                + t["stiffness"] * (q - t["rest"]))

    @functools.cached_property
    def acceleration_symbols(self) -> tuple[sympy.Symbol, ...]:
        """Symbols of q'' used by :meth:`inverse_dynamics`' straight-line code."""
        return tuple(symbol(f"{c}_ddot") for c in self.coordinates)

    def _arguments_symbols(self) -> tuple[Any, ...]:
        return (TIME, self.x_symbols, self.u_symbols, self.p_symbols)

    @functools.cached_property
    def _mass_tape(self) -> tuple[Tape, list[list[Any]]]:
        """M column by column: ID(q, 0, e_j) without gravity, plus the rotor inertia."""
        n, tape = self.n_coordinates, Tape("_rdm")
        zero = [sympy.Integer(0)] * n
        columns = [self._rnea(tape, self.q_symbols, zero, [int(i == j) for i in range(n)], [0, 0, 0])
                   for j in range(n)]
        rows = [[columns[j][i] if j <= i else columns[i][j] for j in range(n)] for i in range(n)]
        for i in range(n):
            rows[i][i] = tape.new(rows[i][i] + self._joint_force(i, 0, 0, 1) - self._joint_force(i, 0, 0, 0))
        return tape, rows

    @functools.cached_property
    def _rhs_tape(self) -> tuple[Tape, list[Any], list[Any]]:
        """Bias c = ID(q, q', 0) (with gravity, friction, springs) and Q - c."""
        n, tape = self.n_coordinates, Tape("_rdr")
        bias = self._rnea(tape, self.q_symbols, self.qd_symbols, [0] * n, self.gravity_expr)
        bias = [tape.new(b + self._joint_force(i, q, v, 0))
                for i, (b, q, v) in enumerate(zip(bias, self.q_symbols, self.qd_symbols))]
        rhs = [tape.new(self._joint_terms[i]["force"] - bias[i]) for i in range(n)]
        return tape, bias, rhs

    @functools.cached_property
    def _mass_numeric(self) -> NumericFunction:
        tape, rows = self._mass_tape
        n = self.n_coordinates
        return compile_tape(tape, [e for row in rows for e in row], self._arguments_symbols(), (n, n))

    @functools.cached_property
    def _rhs_numeric(self) -> NumericFunction:
        tape, _, rhs = self._rhs_tape
        return compile_tape(tape, rhs, self._arguments_symbols(), (self.n_coordinates, 1))

    @functools.cached_property
    def _residual_numeric(self) -> Any:
        """fn(t, x, u, p, qdd) -> [r | dr/dx | dr/du], r = ID + joint terms - Q, shape (n, 1 + 2n + m)."""
        n, m, tape = self.n_coordinates, self.n_inputs, Tape("_rdd")
        q, qd, qdd = self.q_symbols, self.qd_symbols, self.acceleration_symbols
        tau = self._rnea(tape, q, qd, qdd, self.gravity_expr)
        residual = [tape.new(tau[i] + self._joint_force(i, q[i], qd[i], qdd[i]) - self._joint_terms[i]["force"])
                    for i in range(n)]
        derivs = differentiate(tape, residual, [*self.x_symbols, *self.u_symbols])
        outputs = [e for i in range(n) for e in (residual[i], *derivs[i])]
        return compile_tape(tape, outputs, (*self._arguments_symbols(), qdd), (n, 1 + 2 * n + m))

    @functools.cached_property
    def _mass_derivative_numeric(self) -> NumericFunction:
        tape, rows = self._mass_tape
        n = self.n_coordinates
        derivs = differentiate(tape, [e for row in rows for e in row], list(self.q_symbols))
        return compile_tape(tape, [d for row in derivs for d in row], self._arguments_symbols(), (n, n, n))

    @functools.cached_property
    def _com_numeric(self) -> NumericFunction:
        tape = Tape("_rdk")
        coms = kinematics(tape, self.bodies, [self.q_symbols[i] for i in self.order_])
        return compile_tape(tape, [e for c in coms for e in c], self._arguments_symbols(), (len(coms), 3))

    # --- numeric API ---------------------------------------------------------------------------------
    def _point(self, q: Values, qd: Values | None, params: Values | None) -> tuple[np.ndarray, np.ndarray]:
        n = self.n_coordinates
        x = np.zeros(2 * n)
        x[:n] = values_to_vector(q, self.coordinates, "coordinate", default=0.0)
        if qd is not None:
            x[n:] = values_to_vector(qd, self.coordinates, "velocity", default=0.0)
        return x, self.parameter_vector(params)

    def inverse_dynamics(self, q: Values, qd: Values, qdd: Values, params: Values | None = None) -> np.ndarray:
        """tau = M(q) q'' + c(q, q') with gravity and joint friction/springs/rotors (no inputs), ``(n,)``."""
        x, p = self._point(q, qd, params)
        a = values_to_vector(qdd, self.coordinates, "acceleration", default=0.0)
        u = np.zeros(self.n_inputs)
        residual = self._residual_numeric(0.0, x, u, p, a)[:, 0]
        return residual + self._forces_numeric(0.0, x, u, p).reshape(-1)

    @functools.cached_property
    def _forces_numeric(self) -> NumericFunction:
        return self.lambdify(self.forces_expr)

    def mass_derivative(self, q: Values, params: Values | None = None) -> np.ndarray:
        """dM/dq ``(n, n, n)``: entry [i, j, k] = dM_ij/dq_k (straight-line forward mode)."""
        x, p = self._point(q, None, params)
        return self._mass_derivative_numeric(0.0, x, np.zeros(self.n_inputs), p)

    def coriolis_matrix(self, q: Values, qd: Values, params: Values | None = None) -> np.ndarray:
        """C(q, q') ``(n, n)`` from the Christoffel symbols of M, so that M' - 2C is skew-symmetric.

        C_ij = sum_k 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) q'_k (Spong, Hutchinson, Vidyasagar,
        *Robot Modeling and Control*, section 7.3).
        """
        x, _ = self._point(q, qd, params)
        dm = self.mass_derivative(q, params)
        v = x[self.n_coordinates:]
        christoffel = 0.5 * (dm + dm.transpose(0, 2, 1) - dm.transpose(2, 0, 1))
        return np.einsum("ijk,k->ij", christoffel, v)

    def com_positions(self, q: Values, params: Values | None = None) -> np.ndarray:
        """Centres of mass of the moving links in the base frame, ``(n, 3)`` in coordinate order."""
        x, p = self._point(q, None, params)
        coms = self._com_numeric(0.0, x, np.zeros(self.n_inputs), p)
        result = np.empty_like(coms)
        result[self.order_] = coms
        return result

    def energy(self, x: Values, params: Values | None = None) -> tuple[float, float]:
        """Kinetic 1/2 q'^T M q' and potential energy (gravity on the link COMs, joint springs) at ``x``."""
        n = self.n_coordinates
        xv, p = self.state_vector(x), self.parameter_vector(params)
        mass = self.mass_matrix(xv[:n], p)
        kinetic = 0.5 * xv[n:] @ mass @ xv[n:]
        values = dict(zip(self.p_symbols, map(sympy.Float, p)))
        gravity = np.array([float(as_expr(g).xreplace(values)) for g in self.gravity_expr])
        masses = np.array([float(as_expr(self._link_mass(i)).xreplace(values)) for i in range(n)])
        potential = -float(masses @ (self.com_positions(xv[:n], p) @ gravity))
        for i, t in enumerate(self._joint_terms):
            k, rest = (float(as_expr(t[key]).xreplace(values)) for key in ("stiffness", "rest"))
            potential += 0.5 * k * (xv[i] - rest) ** 2
        return float(kinetic), potential

    def _link_mass(self, i: int) -> Any:
        return self.bodies[self.order_.index(i)].mass

    def jacobians(self, t: float, x: Any, u: Any = None, params: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Exact df/dx ``(2n, 2n)`` and df/du ``(2n, m)``: A21 = -M^-1 dr/dq, A22 = -M^-1 dr/dq',
        B2 = -M^-1 dr/du with r = ID(q, q', q'') + joint terms - Q at the forward-dynamics q''."""
        import scipy.linalg  # here, not at module level: importing it costs ~0.2 s at start-up

        time, xv, uv, p = self._arguments(t, x, u, params)
        n, m = self.n_coordinates, self.n_inputs
        mass = self._mass_numeric(time, xv, uv, p)
        factor = self._factor(mass, xv)
        accel = scipy.linalg.cho_solve(factor, self._rhs_numeric(time, xv, uv, p).reshape(-1))
        stacked = self._residual_numeric(time, xv, uv, p, accel)
        dfdx = np.zeros((2 * n, 2 * n))
        dfdx[:n, n:] = np.eye(n)
        dfdx[n:, :] = -scipy.linalg.cho_solve(factor, stacked[:, 1:1 + 2 * n])
        dfdu = np.zeros((2 * n, m))
        if m:
            dfdu[n:, :] = -scipy.linalg.cho_solve(factor, stacked[:, 1 + 2 * n:])
        return dfdx, dfdu

    # --- closed forms (lazy; swell for long chains) -----------------------------------------------------
    @functools.cached_property
    def mass_expr(self) -> sympy.Matrix:
        """M(q) in closed form (the straight-line code substituted back)."""
        tape, rows = self._mass_tape
        n = self.n_coordinates
        return sympy.Matrix(n, n, expand(tape, [e for row in rows for e in row]))

    @functools.cached_property
    def bias_expr(self) -> sympy.Matrix:
        """c(q, q') in closed form: Coriolis, centrifugal, gravity, friction and spring terms."""
        tape, bias, _ = self._rhs_tape
        return sympy.Matrix(expand(tape, bias))

    @functools.cached_property
    def forces_expr(self) -> sympy.Matrix:
        """Q: the generalized force on each joint."""
        return sympy.Matrix([t["force"] for t in self._joint_terms])


def chain_from_reader(r: Any, name: str, params: dict[str, float], inputs: list[str]) -> ChainSystem:
    """Build a ``kind: chain`` model from a model-file reader (robodyn.model.files._Reader)."""
    joints_data = r.get("joints", list)
    links_data = r.get("links", list)
    if not joints_data:
        raise r.fail(("joints",), "needs at least one joint")
    for key, entries in (("joints", joints_data), ("links", links_data)):
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise r.fail((key, i), "each entry must be a mapping with a 'name'")
    coordinates = [j["name"] for j in joints_data]
    if "inputs" not in r.data:
        inputs = [f"{c}_tau" for c in coordinates]
    outputs = r.get("outputs", dict) or {}
    generated = "velocities (generated <joint>_dot)"
    r.check_names({"coordinates": coordinates, generated: list(map(velocity_name, coordinates)),
                   "inputs": inputs, "parameters": list(params), "outputs": list(outputs)},
                  {"coordinates": "joints", generated: "joints"})
    p = list(params)
    everything = [*coordinates, *map(velocity_name, coordinates), *inputs, *p]

    def number(path: tuple[Any, ...], value: Any, allowed: list[str] = p) -> Any:
        if isinstance(value, list | tuple):
            return [number((*path, i), v, allowed) for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {k: number((*path, k), v, allowed) for k, v in value.items()}
        return r.expression(path, value, allowed, allow_time=allowed is everything)

    joint_fields = {"name", "type", "parent", "child", "axis", "xyz", "rpy", "dh", "damping", "friction",
                    "stiffness", "rest", "rotor_inertia", "gear_ratio", "force"}
    joints = []
    for i, entry in enumerate(joints_data):
        for key in entry:
            if key not in joint_fields:
                raise r.fail(("joints", i, key),
                             f"unknown key {key!r} for a joint (allowed: {', '.join(sorted(joint_fields))})")
        for key in ("parent", "child"):
            if not isinstance(entry.get(key), str):
                raise r.fail(("joints", i), f"joint {entry['name']!r} needs '{key}: <link name>'")
        values = {k: v if k in ("name", "type", "parent", "child") else
                  number(("joints", i, k), v, everything if k == "force" else p) for k, v in entry.items()}
        joints.append(Joint(**values))
    link_fields = {"name", "mass", "com", "inertia", *_INERTIA_KEYS}
    links = []
    for i, entry in enumerate(links_data or []):
        for key in entry:
            if key not in link_fields:
                raise r.fail(("links", i, key),
                             f"unknown key {key!r} for a link (allowed: {', '.join(sorted(link_fields))})")
        values = {k: v if k == "name" else number(("links", i, k), v) for k, v in entry.items()}
        direct = {k: values.pop(k) for k in _INERTIA_KEYS if k in values}
        if direct:
            if "inertia" in values:
                raise r.fail(("links", i), "give either 'inertia' or ixx, iyy, ... , not both")
            values["inertia"] = direct
        links.append(Link(**values))
    gravity = number(("gravity",), r.data.get("gravity", list(DEFAULT_GRAVITY)))
    smoothing = r.data.get("friction_smoothing", DEFAULT_FRICTION_SMOOTHING)
    if isinstance(smoothing, bool) or not isinstance(smoothing, int | float):
        raise r.fail(("friction_smoothing",), f"must be a positive number, got {smoothing!r}")
    outs = r.expressions("outputs", list(outputs), everything, required=False, what="outputs")
    return ChainSystem(joints, links, gravity=gravity, parameters=params, inputs=inputs, outputs=outs or None,
                       friction_smoothing=float(smoothing), name=name)
