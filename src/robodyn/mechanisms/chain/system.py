"""Serial chains and trees of rigid links: ``kind: chain`` model files and :class:`ChainSystem`.

A chain is described by its joints (revolute or prismatic, from the base outwards) and links (mass,
centre of mass, inertia about the centre of mass). The equations of motion come from recursive
Newton–Euler recorded on a straight-line tape (:mod:`robodyn.rigid`) and compiled to machine code with
its forward-mode derivatives, never from expanded closed forms, so they do not swell.

Joint placement, relative to the frame of the parent link, is either URDF-like, ``xyz`` and ``rpy``
(R = Rz(yaw) Ry(pitch) Rx(roll)) followed by the motion about ``axis``; or standard Denavit–Hartenberg
``dh: {a, alpha, d, theta}``: motion about the parent frame's z, then Rz(theta) Tz(d) Tx(a) Rx(alpha)
to the link frame; or modified (Craig) Denavit–Hartenberg ``mdh: {a, alpha, d, theta}``: Rx(alpha)
Tx(a) Rz(theta) Tz(d) from the parent's frame to the joint's, then the motion about its z. For a
link the joint frame (URDF, modified DH) or the standard DH frame is the link frame in which ``com``
and ``inertia`` are given.

Per joint, these terms are added to the joint force (tau = ID(q, q', q'') + ...):

- ``damping`` b: b q';
- ``friction`` F_c: smoothed Coulomb friction F_c tanh(q'/eps), eps = ``friction_smoothing``
  (default 1e-3 in the joint's velocity unit: the friction force reaches 76% of F_c at q' = eps); or
  ``[Tc_minus, Tc_plus]``, asymmetric: the friction torques at negative and positive velocity (Tc_minus
  <= 0 <= Tc_plus, the values Corke's Robotics Toolbox tabulates as Tc = [Tc+, Tc-]), smoothed as
  (Tc+ - Tc-)/2 s + (Tc+ + Tc-)/2 s^2 with s = tanh(q'/eps), zero at rest;
- ``stiffness`` k and ``rest`` q_0: k (q - q_0) (and 1/2 k (q - q_0)^2 in the potential energy);
- ``rotor_inertia`` I_r and ``gear_ratio`` G: G^2 I_r q'' (the reflected motor inertia on M's
  diagonal; the rotor's gyroscopic coupling is neglected).

Reference: R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008; J. J. Craig,
*Introduction to Robotics*, 3rd ed., chapters 3 and 6 (DH convention, Newton–Euler).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import sympy

from robodyn.base.errors import InputError
from robodyn.codegen.llvm.native import native_function
from robodyn.codegen.llvm.tape import llvm_ir, tape_data
from robodyn.mechanisms.chain.balls import BallJoints
from robodyn.mechanisms.chain.bodies import ChainBodies
from robodyn.mechanisms.chain.closed import ChainClosedForms
from robodyn.mechanisms.chain.frames import ChainFrames, frame_decls
from robodyn.mechanisms.chain.linearization import ChainLinearization, kernel_source
from robodyn.mechanisms.chain.outputs import TapeOutputs, placeholder, split_outputs
from robodyn.mechanisms.chain.parts import (
    DEFAULT_FRICTION_SMOOTHING,
    DEFAULT_GRAVITY,
    Joint,
    Link,
    ball_entries,
    friction_force,
    inertia_matrix,
    judge_inertia,
)
from robodyn.mechanisms.chain.quantities import ChainQuantities
from robodyn.mechanisms.chain.tape_view import ChainTape
from robodyn.model.expr import TIME, as_expr
from robodyn.model.kinds.mechanical import ManipulatorSystem, velocity_name
from robodyn.model.kinds.symbolic import ExprLike, NumericFunction
from robodyn.model.kinds.symbolic_form import Equation
from robodyn.model.lean import RhsCall
from robodyn.model.plausibility import check_mass, mass_advice
from robodyn.model.system import Model, Values, Vector, name_tuple, values_to_vector
from robodyn.rigid.crba import NumericTree, empty_subtrees
from robodyn.rigid.dynamics import JointTerms, ManipulatorProgram
from robodyn.rigid.joints import SPHERICAL
from robodyn.rigid.rnea import Body
from robodyn.rigid.tape import Tape, Value

if TYPE_CHECKING:
    from robodyn.mechanisms.chain.regressor import ChainRegressor

__all__ = ["CLOSED_FORM_LIMIT", "DEFAULT_FRICTION_SMOOTHING", "DEFAULT_GRAVITY", "ChainSystem", "Joint", "Link"]

CLOSED_FORM_LIMIT: Final = 3  # Joints up to which closed forms are built for show, classify and existence.


class ChainSystem(BallJoints, ChainBodies, TapeOutputs, ChainClosedForms, ChainQuantities, ChainLinearization,
                  ManipulatorSystem):
    """A kinematic tree of rigid links, in manipulator form M(q) q'' = Q - c(q, q').

    Coordinates are named after the joints, velocities ``<joint>_dot``. The numerics — ``f``,
    :meth:`mass_matrix`, :meth:`acceleration`, :meth:`jacobians`, :meth:`inverse_dynamics`, the kernels'
    ``rhs`` — run Newton–Euler recorded on a straight-line tape, with its forward-mode derivatives,
    compiled to machine code (robodyn.rigid, robodyn.codegen). ``mass_expr``, ``bias_expr`` and
    ``rhs_expr`` are closed forms built on first use by substituting the tape back, only to show small
    chains (up to CLOSED_FORM_LIMIT joints: ``has_closed_forms``); nothing numeric uses them.

    Parameters
    ----------
    joints, links
        :class:`Joint` and :class:`Link` descriptions (or mappings with their fields).
    gravity : (3,)
        In the base frame; default (0, 0, -9.81).
    parameters, name
        As for :class:`~robodyn.model.kinds.symbolic.SymbolicSystem`.
    outputs
        Name -> expression, or -> ``{frame: <frame>, quantity: position | orientation | velocity |
        angular_velocity}`` (three outputs ``<name>_x``, ...: robodyn.mechanisms.chain.outputs).
    inputs
        Default: one torque/force ``<joint>_tau`` per joint.
    friction_smoothing
        eps of the smoothed Coulomb friction tanh(q'/eps).
    frames
        Extra frames ``{name: {parent: <link or frame>, xyz: [...], rpy: [...]}}`` (robodyn.mechanisms.chain.frames),
        besides one per link.
    free_root
        True: the parts of a robot whose root link moves (robodyn.mechanisms.floating.chain.FloatingChain): the chain
        may
        then have no joint at all (a single free body).
    check_inertia
        True (default): a link inertia that no rigid body has is refused — a negative principal moment, or the
        triangle inequality broken by more than TRIANGLE_MARGIN of the trace; a slighter break, as published
        (identified) tables have, is kept with a :class:`~robodyn.base.errors.RobodynWarning`: the rule of URDF
        robots too (chain_parts.judge_inertia). False: neither is checked. The mass matrix always is: positive
        definite at a generic q with the default parameters (robodyn.model.plausibility), else InputError.
    """

    def __init__(
        self,
        joints: Sequence[Joint | Mapping[str, Any]],
        links: Sequence[Link | Mapping[str, Any]],
        *,
        gravity: Sequence[ExprLike] = DEFAULT_GRAVITY,
        parameters: Mapping[str, float] | None = None,
        inputs: Sequence[str] | None = None,
        outputs: Mapping[str, Any] | None = None,
        friction_smoothing: float = DEFAULT_FRICTION_SMOOTHING,
        name: str = "chain",
        check_inertia: bool = True,
        frames: Mapping[str, Any] | None = None,
        free_root: bool = False,
    ):
        self.check_inertia = bool(check_inertia)
        self.frame_decls = tuple(frame_decls(frames, f"model {name!r}"))
        self.joints = tuple(j if isinstance(j, Joint) else Joint(**j) for j in joints)
        self.links = tuple(k if isinstance(k, Link) else Link(**k) for k in links)
        movable = [j for j in self.joints if j.mimic is None]
        name_tuple([j.name for j in movable], "coordinates")
        #: The ball joints' names (a ball has 4 configuration and 3 velocity entries: robodyn.rigid.joints).
        self.balls = tuple(j.name for j in movable if j.type == "ball")
        entries = [ball_entries(j.name) if j.type == "ball" else ((j.name,), (velocity_name(j.name),),
                                                                   (f"{j.name}_tau",), (j.name,)) for j in movable]
        coords = name_tuple([e for entry in entries for e in entry[0]], "coordinates")
        if inputs is None:
            inputs = [e for entry in entries for e in entry[2]]
        self.coordinates = coords
        self.velocities = tuple(e for entry in entries for e in entry[1])
        #: One name per velocity entry (a one-coordinate joint's own name, a ball's ``<joint>_wx`` ...): the keys of
        #: velocities and accelerations given as mappings, and the rows of the mass matrix.
        self.rates = tuple(e for entry in entries for e in entry[3])
        names, expressions, self.kinematic_outputs = split_outputs(outputs, f"model {name!r}")
        self._setup_symbols(name, coords + self.velocities, inputs, parameters, tuple(names), allow_empty=free_root)
        n = len(coords)
        self.q_symbols, self.qd_symbols = self.x_symbols[:n], self.x_symbols[n:]
        if self.balls:
            self._check_balls()
        if not friction_smoothing > 0:
            raise InputError(f"model {name!r}: friction_smoothing must be positive, got {friction_smoothing}",
                             key="friction_smoothing")
        self.friction_smoothing = float(friction_smoothing)
        self.gravity_expr = tuple(self._param_expr(g, f"gravity[{i}]", "gravity") for i, g in enumerate(gravity))
        if len(self.gravity_expr) != 3:
            raise InputError(f"model {name!r}: gravity must have 3 entries", key="gravity")
        self.order_, self.bodies = self._build_bodies()
        self._couplings = [] if self.balls else [self._coupling(j) for j in self.joints]
        self._joint_terms = [self._terms(j) for j in self.joints if j.mimic is None]  # one per coordinate
        if self.kinematic_outputs:  # on the tape (robodyn.mechanisms.chain.outputs); h_expr only names them
            self.outputs = tuple(names)
            self.h_expr = sympy.Matrix([placeholder(self.kinematic_outputs[k], self.kinematic_outputs[k].names.index(k),
                                                    self) if k in self.kinematic_outputs else
                                        self.expression(expressions[k], f"outputs.{k}") for k in names])
        else:
            self._setup_outputs(expressions or None)
        if coords:
            self._check_plausible()

    def _check_parameters(self) -> None:
        """The links and mimic couplings checked again for new parameter values (a negative mass or an inertia
        that is not positive definite is bad input, as in the file), then the mass matrix."""
        for link in self.links:
            if any(j.child == link.name for j in self.joints):
                self._link_terms(link)
        for joint in self.joints if not self.balls else ():
            self._coupling(joint)
        super()._check_parameters()

    #: How to keep an inertia that no rigid body has (robodyn.mechanisms.chain.parts.judge_inertia).
    _inertia_opt_out = "or set 'check_inertia: false' in the model file (check_inertia=False in Python) to keep it"

    def _check_plausible(self, context: str = "") -> None:
        """InputError unless M is positive definite with the default parameters at a generic q (robodyn.model.
        plausibility), M evaluated by the numpy composite-rigid-body pass (robodyn.rigid.crba): nothing compiled."""
        if self.balls:
            self._check_ball_mass(context)
            return
        tree = NumericTree.from_program(self._program, self.parameter_vector())
        check_mass(tree.mass_matrix, self.coordinates, where=f"model {self.name!r}{context}", key="links",
                   fix=lambda: self._mass_advice(tree), lower=self._bounds[0], upper=self._bounds[1])

    #: Position limits of the coordinates for the generic configuration (a chain file gives none), the joints'
    #: names as the description writes them (where they differ), and what a link that moves no mass needs.
    _bounds: tuple[list[float] | None, list[float] | None] = (None, None)
    _file_names: Mapping[str, str] = MappingProxyType({})
    _massless_fix = "a mass and an inertia"

    def _mass_advice(self, tree: NumericTree) -> str:
        """What to change when M is singular: the links of the joints that move no mass, or the masses in general."""
        empty = empty_subtrees(tree.parent, tree.carries())
        loaded = {int(c) for c, e in zip(tree.coordinate, empty) if not e} | {
            i for i, r in enumerate(tree.rotor) if r != 0}
        bodies = [self.joints[i] for i in self.order_]
        return mass_advice([(j.child, self._file_names.get(j.name, j.name)) for j, c in zip(bodies, tree.coordinate)
                            if c not in loaded], self._massless_fix)

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

    def _link_terms(self, link: Link) -> tuple[Any, list[Any], list[list[Any]]]:
        where = f"link {link.name!r}"
        mass = self._param_expr(link.mass, f"{where}.mass", "links")
        com = self._vector(link.com, f"{where}.com", "links")
        try:
            rows = inertia_matrix(link.inertia)
        except InputError as exc:
            raise InputError(f"model {self.name!r}: {where}: {exc}", key="links") from None
        inertia = [[self._param_expr(e, f"{where}.inertia[{r}][{c}]", "links") for c, e in enumerate(row)]
                   for r, row in enumerate(rows)]
        m = self._default(mass)
        if m < 0:
            raise InputError(f"model {self.name!r}: {where} has negative mass {m}: masses must be >= 0",
                             key="links")
        judge_inertia(np.array([[self._default(e) for e in row] for row in inertia]), f"model {self.name!r}: {where}",
                      check=self.check_inertia, key="links", stacklevel=4, opt_out=self._inertia_opt_out)
        return mass, com, inertia

    def _terms(self, joint: Joint) -> dict[str, Any]:
        where = f"joint {joint.name!r}"
        terms = {key: self._param_expr(getattr(joint, key), f"{where}.{key}", "joints")
                 for key in ("damping", "stiffness", "rest", "rotor_inertia", "gear_ratio")}
        friction = joint.friction
        if isinstance(friction, Sequence | np.ndarray) and not isinstance(friction, str):
            if len(friction) != 2:
                raise InputError(f"model {self.name!r}: {where}.friction must be F_c or [Tc_minus, Tc_plus], got "
                                 f"{list(friction)}", key="joints")
            terms["friction"] = tuple(self._param_expr(f, f"{where}.friction", "joints") for f in friction)
        else:
            coulomb = self._param_expr(friction, f"{where}.friction", "joints")
            terms["friction"] = (-coulomb, coulomb)
        if joint.type == "ball":  # its three torques (child frame), each the input of its name if there is one
            terms["force"] = tuple(self.expression(t if t in self.inputs else 0, f"{where}.force")
                                   for t in ball_entries(joint.name)[2])
            return terms
        default = f"{joint.name}_tau" if f"{joint.name}_tau" in self.inputs else 0
        force = joint.force if joint.force is not None else default
        try:
            terms["force"] = self.expression(force, f"{where}.force")
        except InputError as exc:
            raise InputError(str(exc), key="joints") from None
        return terms

    # --- straight-line dynamics (the tape, compiled) ---------------------------------------------------
    @functools.cached_property
    def _tape(self) -> tuple[Tape, dict[Any, Value]]:
        """The chain's tape and its leaves by symbol: t, x (nq + nv), u (m), p, and the accelerations a (nv)."""
        tape = Tape()
        m = self.n_inputs
        x, u = tape.leaves(1, self.n_states), tape.leaves(2, m)
        p = tape.leaves(3, len(self.parameters))
        tape.leaves(4, self.n_velocities)
        return tape, {TIME: tape.leaf(0, 0), **dict(zip(self.x_symbols, x)), **dict(zip(self.u_symbols, u)),
                      **dict(zip(self.p_symbols, p))}

    def _tape_value(self, expr: Any) -> Value:
        """A sympy expression (or number) in the model's symbols as a value on the chain's tape."""
        tape, table = self._tape
        return tape.from_sympy(as_expr(expr), table)

    def units(self) -> dict[str, str]:
        """SI units of the joint coordinates, velocities and torque/force inputs (revolute: rad, rad/s, N m;
        prismatic: m, m/s, N) and of the kinematic outputs."""
        by_type = {"revolute": ("rad", "rad/s", "N m"), "prismatic": ("m", "m/s", "N")}
        result: dict[str, str] = {}
        for joint in self.joints:
            if joint.type == "ball":
                q, v, t, _ = ball_entries(joint.name)
                result.update({**dict.fromkeys(q, "1"), **dict.fromkeys(v, "rad/s"),
                               **dict.fromkeys((e for e in t if e in self.inputs), "N m")})
            elif joint.mimic is None:
                position, velocity, effort = by_type[joint.type]
                result.update({joint.name: position, velocity_name(joint.name): velocity})
                if f"{joint.name}_tau" in self.inputs:
                    result[f"{joint.name}_tau"] = effort
        quantity_units = {"position": "m", "orientation": "rad", "velocity": "m/s", "angular_velocity": "rad/s"}
        result.update({name: quantity_units[group.quantity] for name, group in self.kinematic_outputs.items()})
        return {**result, **self.declared_units}

    def tape_view(self) -> ChainTape:
        """The chain's tape, program and link placements for its frames and outputs
        (robodyn.mechanisms.chain.tape_view)."""
        return ChainTape(self._program, MappingProxyType(self._link_offsets), self._tape_value, self._vector)

    def torque_regressor(self) -> ChainRegressor:
        """Inverse dynamics as Y(q, q', q'') theta over the bodies' standard inertial parameters and the joint terms
        (robodyn.mechanisms.chain.regressor), compiled from the tape once per model."""
        self.refuse_balls("the torque regressor (identification)")
        memo = self.memo()
        if "torque regressor" not in memo:
            from robodyn.mechanisms.chain.regressor import chain_torque_regressor

            memo["torque regressor"] = chain_torque_regressor(self)
        return memo["torque regressor"]

    def exported_functions(self) -> Any:
        """f, h, linearize, mass, rnea, aba, com and the frames on the chain's tape, for export as C
        (robodyn.mechanisms.chain.exported)."""
        self.refuse_balls("the C export")
        from robodyn.mechanisms.chain.exported import chain_exported_functions

        return chain_exported_functions(self)

    def kinematics(self) -> ChainFrames:
        """The chain's frames and their compiled kinematic functions (robodyn.mechanisms.chain.frames)."""
        memo = self.memo()
        if "kinematics" not in memo:
            memo["kinematics"] = ChainFrames(self)
        return memo["kinematics"]

    @functools.cached_property
    def _program(self) -> Any:
        """Every numeric function of the chain, recorded on one tape: robodyn.rigid.dynamics.ManipulatorProgram, or
        with a ball joint robodyn.mechanisms.chain.ball_program.FlatTreeProgram (the functions it records; it refuses
        the others)."""
        tape, _ = self._tape
        m = self.n_inputs
        x, u, a = tape.leaves(1, self.n_states), tape.leaves(2, m), tape.leaves(4, self.n_velocities)
        bodies, joints, forces, couplings, gravity = self.tape_parts(self._tape_value)
        if self.balls:
            return self.flat_program(x)
        return ManipulatorProgram(tape, bodies, couplings, x, u, a, gravity, joints, forces,
                                  tape.leaves(3, len(self.parameters)))

    def tape_parts(self, value: Callable[[Any], Value]) -> tuple[list[Body], list[JointTerms], list[Value],
                                                                 list[tuple[int, Value, Value]], list[Value]]:
        """The bodies (parents first), the joint terms and generalized forces (coordinate order), the couplings
        (body order) and the gravity vector, as the values ``value`` gives the chain's expressions: the parts of
        :class:`~robodyn.rigid.dynamics.ManipulatorProgram`, for a tape whose leaves another model lays out (a
        floating base: robodyn.mechanisms.floating.chain)."""
        def rows(matrix: Any) -> tuple[tuple[Value, ...], ...]:
            return tuple(tuple(value(e) for e in row) for row in matrix)

        bodies = [Body(s.parent, s.prismatic, tuple(map(value, s.axis)), rows(s.rotation),
                       tuple(map(value, s.position)), value(s.mass), tuple(map(value, s.com)), rows(s.inertia))
                  if not s.ball else
                  Body(s.parent, False, tuple(map(value, s.axis)), rows(s.rotation), tuple(map(value, s.position)),
                       value(s.mass), tuple(map(value, s.com)), rows(s.inertia), SPHERICAL)
                  for s in self.bodies]
        joints = [JointTerms(value(t["gear_ratio"] ** 2 * t["rotor_inertia"]), value(t["damping"]),
                             friction_force(value(t["friction"][0]), value(t["friction"][1]), self.friction_smoothing),
                             value(t["stiffness"]),
                             value(t["rest"])) for t in self._joint_terms]
        # one per velocity entry: a ball's three torques share its terms (the tape's values in the order above)
        each = [t["force"] if isinstance(t["force"], tuple) else (t["force"],) for t in self._joint_terms]
        joints = [terms for terms, forces in zip(joints, each) for _ in forces]
        forces = [value(f) for forces in each for f in forces]
        couplings = [(c, value(multiplier), value(offset))
                     for c, multiplier, offset in (self._couplings[i] for i in self.order_ if self._couplings)]
        return bodies, joints, forces, couplings, [value(g) for g in self.gravity_expr]

    def root_links(self) -> list[str]:
        """The links that are no joint's child (the tree's roots), in the order of the links."""
        return [link.name for link in self.links if link.name not in self._by_child]

    def link_inertia(self, name: str) -> tuple[Any, list[Any], list[list[Any]]]:
        """Mass, centre of mass (3) and inertia about it (3 x 3) of link ``name``, in its own frame, as expressions in
        the parameters (checked as the file's links are)."""
        return self._link_terms(next(link for link in self.links if link.name == name))

    def _function(self, name: str) -> tuple[Any, int]:
        """The compiled function ``name`` of the program (robodyn.rigid.dynamics) and its output size,
        compiled by LLVM directly (robodyn.codegen.llvm.native: Python calls it, no numba needed)."""
        memo = self.memo()
        key = ("native function", name)
        if key not in memo:
            program = self._program
            outputs = program.outputs(name)
            text, symbol = llvm_ir(*tape_data(program.tape, outputs), optimize=True)
            memo[key] = (native_function(text, symbol), len(outputs))
        return memo[key]

    def _call(self, name: str, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray,
              a: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """Function ``name`` of the program at a point of float64 vectors (into ``out`` if given)."""
        function, size = self._function(name)
        out = np.empty(size) if out is None else out
        x = np.ascontiguousarray(x, dtype=float)
        function(float(t), x, np.ascontiguousarray(u, dtype=float), np.ascontiguousarray(p, dtype=float),
                 x if a is None else a, out)
        return out

    def _finite_or_singular(self, values: np.ndarray, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray
                            ) -> np.ndarray:
        """``values`` if finite; else SingularMatrixError when M(q) is not positive definite at x."""
        if not math.isfinite(values.sum()):
            self._factor(self._mass_numeric(t, x, u, p), x)  # raises, naming q, when M is the cause
        return values

    f_many = Model.f_many  # a loop over the compiled f: a chain's closed forms are only for showing small chains
    @functools.cached_property
    def _mass_numeric(self) -> NumericFunction:
        n = self.n_velocities
        return lambda t, x, u, p: self._call("mass", t, x, u, p).reshape(n, n)

    @functools.cached_property
    def _rhs_numeric(self) -> NumericFunction:
        n = self.n_velocities
        return lambda t, x, u, p: self._call("terms", t, x, u, p)[:n].reshape(n, 1)

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self._finite_or_singular(self._call("rhs", t, x, u, p), t, x, u, p)

    def _rhs_call(self, p: Vector) -> RhsCall:
        """The tape's ``rhs`` with ``p`` bound (Model.f's lean path; its fourth argument, the accelerations, is never
        read by the forward dynamics: zeros)."""
        return RhsCall(self._function("rhs")[0].bind_parameters(p, self.n_velocities), 0, None)

    def acceleration(self, t: float, x: Vector, u: Vector, p: Vector) -> Vector:
        """q'' (v') from the forward dynamics at a point (raw float64 vectors in model order), shape ``(nv,)``."""
        return self._f(t, x, u, p)[self.n_coordinates:]

    def rhs_terms(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        n, m = self.n_velocities, self.n_inputs
        terms = self._call("terms", t, x, u, p)
        return terms[:n], terms[2 * n:].reshape(n, m)

    def kernel_rhs_source(self) -> str:
        """``rhs(t, x, u, p, out)`` for the simulation kernels: the tape's forward dynamics."""
        return kernel_source("rhs", self._program, "rhs")

    # --- numeric API ---------------------------------------------------------------------------------
    def _point(self, q: Values, qd: Values | None, params: Values | None) -> tuple[np.ndarray, np.ndarray]:
        n = self.n_coordinates
        x = np.zeros(self.n_states)
        x[:n] = values_to_vector(q, self.coordinates, "coordinate", default=0.0)
        if qd is not None:
            x[n:] = values_to_vector(qd, self.rates, "velocity", default=0.0)
        return x, self.parameter_vector(params)

    def inverse_dynamics(self, q: Values, qd: Values, qdd: Values, params: Values | None = None) -> np.ndarray:
        """tau = M(q) q'' + c(q, q') with gravity and joint friction/springs/rotors (no inputs), ``(n,)``."""
        x, p = self._point(q, qd, params)
        a = values_to_vector(qdd, self.rates, "acceleration", default=0.0)
        return self._call("inverse", 0.0, x, np.zeros(self.n_inputs), p, a)

    # --- the model contract (robodyn.model.protocol) ---------------------------------------------------
    kind = "chain"

    @property
    def has_closed_forms(self) -> bool:
        """Whether the chain is small enough (<= CLOSED_FORM_LIMIT joints) for closed forms to be built."""
        return self.n_coordinates <= CLOSED_FORM_LIMIT and not self.balls

    def _labelled_equations(self) -> list[Equation] | None:
        return super()._labelled_equations() if self.has_closed_forms else None

    def explicit_form(self, max_coordinates: int) -> Any:
        return super().explicit_form(max_coordinates) if self.has_closed_forms else None

    def equation_terms(self) -> list[tuple[str, Any]] | None:
        return super().equation_terms() if self.has_closed_forms else None

    def latex_text(self) -> str | None:  # closed forms swell beyond a few joints
        return super().latex_text() if self.has_closed_forms else None

    def latex_lines(self) -> list[str] | None:
        return super().latex_lines() if self.has_closed_forms else None

    def mass_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        return self._mass_numeric(t, x, u, p)

    def show_text(self) -> str:
        if self.has_closed_forms:
            return self.pretty()
        joints = [f"  {j.name}: {j.type}, {j.parent} -> {j.child}" for j in self.joints]
        return "\n".join([
            f"M(q) q'' = Q - c(q, q') for {sum(j.mimic is None for j in self.joints)} joints, by recursive "
            "Newton-Euler (compiled "
            f"straight-line code); closed forms of M(q) and c are printed for chains of up to {CLOSED_FORM_LIMIT} "
            "joints", *joints,
            *(f"{c}{primes} : Q = {sympy.sstr(e)}" for c, e in zip(self.rates, self.forces_expr)
              for primes in ["'" if c in self.velocities else "''"]),  # a ball's rates are velocities: w'
        ])
