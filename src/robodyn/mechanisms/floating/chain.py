"""Robots that are not bolted down: a tree of rigid links whose root moves freely (``base: floating``) or in a plane.

:class:`FloatingChain` takes a chain (robodyn.mechanisms.chain.system.ChainSystem: its joints, links, parameters and
joint terms, checked as for a fixed base) and joins its root link to the world by a base joint
(robodyn.rigid.base_joints), in Pinocchio's conventions so that numbers compare one to one:

- configuration q = (base position x y z, unit quaternion x y z w, joints): ``nq = nv + 1``; a planar base has
  (x, y, cos theta, sin theta);
- velocity v = (the base's linear and angular velocity in its own frame, joint rates);
- states ``base_x, base_y, base_z, base_qx, base_qy, base_qz, base_qw, <joints>, base_vx, ..., base_wz,
  <joint>_dot`` (planar: ``base_x, base_y, base_cos, base_sin`` and ``base_vx, base_vy, base_wz``);
- inputs the joints' torques and forces (the base is not actuated).

``f(t, x, u)`` is the time derivative of the stored state (q' from v: p' = R v, quaternion' = 1/2 q (w, 0)); the
integrators do not integrate it in those coordinates but step on the manifold (:meth:`FloatingChain.chart`:
each step in local coordinates around its start, the quaternion unit to round-off). Everything numeric is one
straight-line tape (robodyn.rigid.floating), compiled by LLVM.

The tape's state leaves (argument 1) are laid out as the stored state followed by the chart's tangent
coordinates of the base: ``[q (nq), v (nv), d (nb)]``, so the stored state is the chart's with d = 0.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from robodyn.base.errors import InputError, RobodynWarning
from robodyn.codegen.llvm.native import native_function
from robodyn.codegen.llvm.tape import llvm_ir, tape_data, tape_source
from robodyn.mechanisms.chain.linearization import FactoredSolve
from robodyn.mechanisms.chain.system import ChainSystem
from robodyn.mechanisms.contact.contacts import (
    Contact,
    check_laws,
    contact_events,
    contact_points,
    contact_specs,
    gap_names,
    law_values,
)
from robodyn.model.expr import TIME, as_expr
from robodyn.model.lean import RhsCall
from robodyn.model.protocol import BaseMasses, Chart, ContactPoint
from robodyn.model.system import Model, Values, Vector
from robodyn.rigid.base_joints import BASE_JOINTS, BaseJoint, base_joint
from robodyn.rigid.contact import ContactForces, plane_gap
from robodyn.rigid.dynamics import SOLVE_LIMIT
from robodyn.rigid.floating import FloatingProgram, MovingFrames, RootBody
from robodyn.rigid.tape import Tape, Value

__all__ = ["BASES", "QUATERNION_TOLERANCE", "FloatingChain"]

BASES: Final = ("fixed", *BASE_JOINTS)
QUATERNION_TOLERANCE: Final = 1e-6  # A stored quaternion further than this from unit norm is refused.


class FloatingChain(Model):
    """A chain whose root link is joined to the world by a ``floating`` (free-flyer) or ``planar`` base joint.

    Parameters
    ----------
    chain : ChainSystem
        The joints, links and parameters (its root link becomes the moving base; its gravity is the world's).
    base : str
        ``"floating"`` or ``"planar"``.
    name : str, optional
        Default: the chain's name.
    contacts : sequence of robodyn.mechanisms.contact.contacts.Contact (or mappings: a file's entries)
        Frames' points against planes, compliant (robodyn.rigid.contact): their forces act on the base and the
        joints; their normal and friction forces and slip speeds follow the states as outputs.
    start : sequence of float, optional
        The base's configuration a run starts from when given none (:meth:`initial_state`), as stored (a floating
        base: ``x y z qx qy qz qw``, the quaternion of unit norm); default: at the origin, not rotated.
    """

    def __init__(self, chain: ChainSystem, base: str = "floating", *, name: str | None = None,
                 contacts: Sequence[Contact | Mapping[str, Any]] = (), start: Sequence[float] | None = None):
        if base not in BASE_JOINTS:
            raise InputError(f"model {chain.name!r}: base {base!r} is not a moving base: use one of "
                             f"{', '.join(BASES)}", key="base")
        chain.refuse_balls(f"a {base} base")
        roots = chain.root_links()
        if len(roots) != 1:
            raise InputError(f"model {chain.name!r}: a {base} base needs one root link, found {roots}: join the "
                             "trees to one link", key="base")
        if chain.kinematic_outputs:
            raise InputError(f"model {chain.name!r}: frame outputs are not available on a {base} base yet: ask for "
                             "the states, or compute the frames with robodyn.kinematics", key="outputs")
        self.chain, self.base, self.root_link = chain, base, roots[0]
        self.joint: BaseJoint = base_joint(base)
        self.name = name or chain.name
        joint = self.joint
        self.base_coordinates = tuple(f"base_{c}" for c in joint.configuration_names)
        self.base_velocities = tuple(f"base_{c}" for c in joint.velocity_names)
        self.coordinates = self.base_coordinates + chain.coordinates
        self.velocities = self.base_velocities + chain.velocities
        self.states = self.coordinates + self.velocities
        self.inputs = chain.inputs
        self.outputs = self.states
        self.parameters = chain.parameters
        self.nq, self.nv, self.nb = len(self.coordinates), len(self.velocities), joint.nv
        mass = chain.link_inertia(self.root_link)[0]
        attached = [chain.joints[i] for i, b in zip(chain.order_, chain.bodies) if b.parent < 0]
        if chain._default(mass) == 0 and len(attached) == 1:
            raise InputError(f"model {chain.name!r}: the root link {self.root_link!r} has no mass and holds the robot "
                             f"by the moving joint {attached[0].name!r}: a {base} base moves the root link itself, so "
                             "that joint would turn nothing; start the robot at the joint's child link (or make the "
                             "joint fixed)", key="base")
        total = chain._default(mass) + sum(chain._default(b.mass) for b in chain.bodies)
        if not total > 0:
            raise InputError(f"model {chain.name!r}: a {base} base needs mass: the links weigh {total} kg in all; give "
                             f"the root link {self.root_link!r} (or another) a mass and an inertia", key="links")
        self.contact_set = contact_specs(chain, contacts, f"model {self.name!r}", self._value)
        if self.contact_set.impacts:
            names = ", ".join(i.name for i in self.contact_set.impacts)
            raise InputError(f"model {self.name!r}: impact contacts ({names}) are not built for a {base} base yet: "
                             "use model: compliant", key="contacts")
        clash = sorted(set(self.contact_set.outputs) & set(self.states))
        if clash:
            raise InputError(f"model {self.name!r}: the contact outputs {clash} clash with the states: rename the "
                             "contact", key="contacts")
        self.outputs = (*self.states, *self.contact_set.outputs)
        self.base_start = self._start(start)

    kind = "floating"

    def _start(self, start: Sequence[float] | None) -> Vector:
        """The base's stored configuration at the start, checked (its rotation of unit norm)."""
        nbq = len(self.base_coordinates)
        if start is None:
            values = np.zeros(nbq)
            values[self.base_coordinates.index("base_qw" if self.base == "floating" else "base_cos")] = 1.0
            return values
        values = np.array(start, dtype=float)  # a reader's numbers (load_mjcf): checked here all the same
        if values.shape != (nbq,) or not np.all(np.isfinite(values)):
            raise InputError(f"model {self.name!r}: the base's start must be {nbq} finite numbers "
                             f"({', '.join(self.base_coordinates)}), got {start!r}", key="start")
        full = np.zeros(self.n_states)
        full[:nbq] = values
        return self.normalized(full)[:nbq]

    def input_limits(self) -> dict[str, tuple[float, float]]:
        """The chain's input ranges (its inputs are this model's)."""
        return self.chain.input_limits()

    def initial_state(self) -> Vector:
        """The base at its start (:attr:`base_start`), the joints at the chain's own initial state, all at rest
        ``(n,)``."""
        x = np.zeros(self.n_states)
        nbq, nj = len(self.base_coordinates), len(self.chain.coordinates)
        x[:nbq] = self.base_start
        x[nbq:nbq + nj] = self.chain.initial_state()[:nj]
        return x

    # --- names and values ---------------------------------------------------------------------------
    @property
    def n_coordinates(self) -> int:
        """Configuration entries nq (nv + 1 for a floating or planar base)."""
        return self.nq

    def units(self) -> dict[str, str]:
        base = {**{c: "m" for c in self.base_coordinates[:3] if c in ("base_x", "base_y", "base_z")},
                **{c: "1" for c in self.base_coordinates if c not in ("base_x", "base_y", "base_z")},
                **{v: "m/s" for v in self.base_velocities if v.startswith("base_v")},
                **{v: "rad/s" for v in self.base_velocities if v.startswith("base_w")}}
        return {**base, **self.chain.units(), **self.contact_set.units}

    def state_vector(self, x: Values, *, default: float | None = None) -> Vector:
        """The state ``(nq + nv,)``; the quaternion (or cos, sin) must be of unit norm to QUATERNION_TOLERANCE,
        and is normalized, with a warning, when it is off by more than 1e-12 (more than round-off)."""
        vector = super().state_vector(x, default=default)
        return self.normalized(vector)

    @property
    def _rotation(self) -> slice:
        """The base rotation's entries of the state: the quaternion, or (cos, sin)."""
        return slice(3, 7) if self.base == "floating" else slice(2, 4)

    def normalized(self, x: Vector) -> Vector:
        """``x`` ``(nq + nv,)`` with its base rotation of unit norm; InputError when it is far from it."""
        rotation = self._rotation
        part = x[rotation]
        norm = math.sqrt(float(part @ part))
        names = ", ".join(self.base_coordinates[rotation])
        if not math.isfinite(norm) or abs(norm - 1.0) > QUATERNION_TOLERANCE:
            raise InputError(f"model {self.name!r}: the base rotation ({names}) = {part.tolist()} has norm {norm:.9g}: "
                             f"a rotation needs norm 1 (within {QUATERNION_TOLERANCE:g}); divide by the norm, or give "
                             f"base_qw = 1 and the others 0 for no rotation", key="x0")
        if abs(norm - 1.0) > 1e-12:  # round-off of the products of unit quaternions is left alone
            warnings.warn(f"model {self.name!r}: the base rotation ({names}) had norm {norm!r}: normalized",
                          RobodynWarning, stacklevel=3)
            x = x.copy()
            x[rotation] = part / norm
        return x

    # --- the tape -----------------------------------------------------------------------------------
    @functools.cached_property
    def _tape(self) -> tuple[Tape, dict[Any, Value]]:
        """The tape and its leaves by the chain's symbols: t, the joints' q and q' at their places in x, u, p."""
        tape, chain = Tape(), self.chain
        nq, nv, nb, n = self.nq, self.nv, self.nb, chain.n_coordinates
        x = tape.leaves(1, nq + nv + nb)
        table = {TIME: tape.leaf(0, 0), **dict(zip(chain.q_symbols, x[nq - n: nq])),
                 **dict(zip(chain.qd_symbols, x[nq + nb: nq + nv])),
                 **dict(zip(chain.u_symbols, tape.leaves(2, chain.n_inputs))),
                 **dict(zip(chain.p_symbols, tape.leaves(3, len(chain.parameters))))}
        tape.leaves(4, nv)
        return tape, table

    def _value(self, expr: Any) -> Value:
        tape, table = self._tape
        return tape.from_sympy(as_expr(expr), table)

    def _program(self, chart: bool) -> FloatingProgram:
        """The functions of the robot at the stored configuration (``chart`` False) or at c (+) d (True)."""
        memo = self.memo()
        key = ("floating program", chart)
        if key not in memo:
            tape, _ = self._tape
            chain, joint = self.chain, self.joint
            nq, nv, nb = self.nq, self.nv, self.nb
            x = tape.leaves(1, nq + nv + nb)
            bodies, joints, forces, couplings, gravity = chain.tape_parts(self._value)
            mass, com, inertia = chain.link_inertia(self.root_link)
            root = RootBody(self._value(mass), tuple(map(self._value, com)),
                            tuple(tuple(self._value(e) for e in row) for row in inertia))
            pose = (joint.chart_pose(tape, x[:joint.nq], x[nq + nv:]) if chart else joint.pose(tape, x[:joint.nq]))
            parts = (tape, joint, root, bodies, couplings, pose, x[nq: nq + nb], x[joint.nq: nq], x[nq + nb: nq + nv],
                     tape.leaves(4, nv), gravity, joints)
            program = FloatingProgram(*parts, forces)
            if self.contact_set.specs:  # the contacts' generalized forces, from the frames of the same pose
                touching = ContactForces.of(MovingFrames(program), self.contact_set.specs)
                memo[("floating contacts", chart)] = touching
                applied = touching.generalized
                program = FloatingProgram(*parts, [f + c for f, c in zip(forces, applied[nb:])], applied[:nb])
            memo[key] = program
        result: FloatingProgram = memo[key]
        return result

    def tape_outputs(self, name: str) -> list[Value]:
        """The outputs of function ``name`` on the tape: those of robodyn.rigid.floating at the stored state, or

        - ``rhs``: f, the stored state's derivative ``(nq + nv,)``;
        - ``chart_rhs``: the derivative of the chart's state ``[c, q_joints, v, d]`` ``(nq + nv + nb,)`` (c' = 0);
        - ``chart``: a chart state (argument 1) recentred, ``[c (+) d, q_joints, v, 0]``, then its derivative
          (argument 2) in the new chart: ``(2 (nq + nv + nb),)``, what the integrators call after every step.
        """
        tape, _ = self._tape
        joint, nq, nv, nb = self.joint, self.nq, self.nv, self.nb
        x = tape.leaves(1, nq + nv + nb)
        zero = tape.const(0.0)
        if name == "h":  # the stored state, then the contacts' forces and slip speeds
            self._program(False)
            contacts = self.memo().get(("floating contacts", False))
            touching = [] if contacts is None else [
                e for k in range(len(contacts.normal))
                for e in (contacts.normal[k], *contacts.friction[k], contacts.slip[k])]
            return [*x[: nq + nv], *touching]
        if name == "laws":  # the contacts' laws' parameters (robodyn.mechanisms.contact.contacts.law_values)
            return law_values(self.contact_set)
        if name == "events":  # the contacts' gaps at the stored state
            frames = MovingFrames(self._program(False))
            return [plane_gap(frames, frame, *plane)
                    for frame, plane in zip(self.contact_set.frames, self.contact_set.planes)]
        if name == "rhs":
            program = self._program(False)
            return [*joint.derivative(tape, x[:joint.nq], x[nq: nq + nb]), *x[nq + nb: nq + nv],
                    *program.outputs("acceleration")]
        if name == "chart_rhs":
            program = self._program(True)
            return [*([zero] * joint.nq), *x[nq + nb: nq + nv], *program.outputs("acceleration"),
                    *joint.chart_rate(tape, x[nq + nv:], x[nq: nq + nb])]
        if name == "jacobians":
            return self._jacobian_parts()
        if name == "solved_jacobians":  # -M^-1 dr/dz (nv, 2 nv + m), row-major: the solves on the tape
            rows, nv = self._residual_rows(), self.nv
            tree = self._program(True).tree
            solved = [tree.solve([-rows[i][k] for i in range(nv)]) for k in range(len(rows[0]))]
            return [solved[k][i] for i in range(nv) for k in range(len(rows[0]))]
        if name == "tangent_linearization":  # A (2 nv, 2 nv) then B (2 nv, m), row-major: tangent_jacobians' matrices
            return self._tangent_rows()
        if name == "chart":
            xdot = tape.leaves(2, nq + nv + nb)
            return [*joint.recentred(tape, x[:joint.nq], x[nq + nv:]), *x[joint.nq: nq + nv], *([zero] * nb),
                    *xdot[: nq + nv], *x[nq: nq + nb]]
        return self._program(False).outputs(name)

    def _jacobian_parts(self) -> list[Value]:
        """L, the factor of M taken leaves first, and dr/dz in its order (robodyn.rigid.dynamics' ``jacobians``
        layout, ``nv * nv + nv (2 nv + m)``), then the configuration rows' -1/2 ad(v_base) ``(nb, nb)``,
        row-major."""
        half = self._half_adjoint()
        return [*self._program(True).factored(self._residual_rows()), *(e for row in half for e in row)]

    def _residual_rows(self) -> list[list[Value]]:
        """dr/dz ``(nv, 2 nv + m)`` with r = ID + joint terms - Q at the forward-dynamics acceleration (held) and
        z = [d, q_joints, v, u]: the tangent of the configuration (the chart's d at d = 0), the velocities and the
        inputs (robodyn.rigid.dynamics' manipulator formula on a moving base)."""
        memo = self.memo()
        if "residual rows" not in memo:
            tape, _ = self._tape
            program, joint, nq, nv = self._program(True), self.joint, self.nq, self.nv
            x = tape.leaves(1, nq + nv + self.nb)
            variables = [*x[nq + nv:], *x[joint.nq: nq], *x[nq: nq + nv], *tape.leaves(2, self.n_inputs)]
            memo["residual rows"] = program.residual_jacobian(program.velocities(), program.held_acceleration,
                                                              variables)
        rows: list[list[Value]] = memo["residual rows"]
        return rows

    def _half_adjoint(self) -> list[list[Value]]:
        """-1/2 ad(v_base) ``(nb, nb)`` from the velocity leaves: the configuration rows' base block."""
        tape, _ = self._tape
        zero, half = tape.const(0.0), tape.const(-0.5)
        v = tape.leaves(1, self.nq + self.nv)[self.nq: self.nq + self.nb]
        if self.base == "floating":
            def cross(w: list[Value]) -> list[list[Value]]:
                return [[zero, -w[2], w[1]], [w[2], zero, -w[0]], [-w[1], w[0], zero]]

            omega, linear = cross(v[3:6]), cross(v[:3])
            ad = [[*omega[i], *linear[i]] for i in range(3)] + [[zero] * 3 + omega[i] for i in range(3)]
        else:
            ad = [[zero, -v[2], v[1]], [v[2], zero, -v[0]], [zero, zero, zero]]
        return [[half * e for e in row] for row in ad]

    def _tangent_rows(self) -> list[Value]:
        """A then B of :meth:`tangent_jacobians` as tape outputs (the solves on the tape, nv <= SOLVE_LIMIT): the
        configuration rows [-1/2 ad(v_base), I] from the velocity leaves, the velocity rows -M^-1 dr/dz."""
        tape, _ = self._tape
        nv, nb, m = self.nv, self.nb, self.n_inputs
        zero, one, half = tape.const(0.0), tape.const(1.0), self._half_adjoint()
        solved = self.tape_outputs("solved_jacobians")
        columns = 2 * nv + m
        A = [[half[i][j] if i < nb and j < nb else one if j == nv + i else zero for j in range(2 * nv)]
             for i in range(nv)]
        A += [[solved[i * columns + j] for j in range(2 * nv)] for i in range(nv)]
        B = [[zero] * m for _ in range(nv)] + [[solved[i * columns + 2 * nv + j] for j in range(m)] for i in range(nv)]
        return [e for row in A for e in row] + [e for row in B for e in row]

    def factored_solve(self) -> FactoredSolve:
        """The solve of the tape's ``jacobians`` (robodyn.mechanisms.chain.linearization.FactoredSolve), above
        SOLVE_LIMIT velocities."""
        return FactoredSolve.of(self.memo(), self._program(True), 2 * self.nv + self.n_inputs)

    def tangent_jacobians(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        """A ``(2 nv, 2 nv)`` and B ``(2 nv, m)`` of the dynamics in the tangent space at ``x``: the state is
        (q (-) q0, v) with Pinocchio's ``difference`` (SE(3)'s logarithm for a floating base), so the velocity rows
        are Pinocchio's ``computeABADerivatives`` (da/dq, da/dv, M^-1 for the actuated joints) and the
        configuration rows d(q (-) q0)/dt = Jr^-1(q (-) q0) v differentiated at q0: [-1/2 ad(v_base), I]."""
        nv, nb, m = self.nv, self.nb, self.n_inputs
        if nv <= SOLVE_LIMIT:  # one compiled call
            values = self.call("tangent_linearization", t, x, u, p)
            if np.all(np.isfinite(values)):
                return values[: 4 * nv * nv].reshape(2 * nv, 2 * nv), values[4 * nv * nv:].reshape(2 * nv, m)
            finite = False
        else:
            parts = self.call("jacobians", t, x, u, p)
            lower = parts[: nv * nv].reshape(nv, nv)
            finite = bool(np.all(np.isfinite(parts))) and not np.any(np.diag(lower) <= 0)
        if not finite:
            from robodyn.base.errors import SingularMatrixError

            raise SingularMatrixError(f"model {self.name!r}: the mass matrix is not positive definite at this state "
                                      "(or a derivative is not finite): check the links' masses and inertias")
        A, B = np.zeros((2 * nv, 2 * nv)), np.zeros((2 * nv, m))
        A[:nv, nv:] = np.eye(nv)
        A[:nb, :nb] = parts[-nb * nb:].reshape(nb, nb)
        solve = self.factored_solve()
        solve(*solve.views(parts), A[nv:], B[nv:])
        return A, B

    def _function(self, name: str) -> tuple[Any, int]:
        memo = self.memo()
        key = ("native function", name)
        if key not in memo:
            tape, _ = self._tape
            outputs = self.tape_outputs(name)
            text, symbol = llvm_ir(*tape_data(tape, outputs), optimize=True)
            memo[key] = (native_function(text, symbol), len(outputs))
        return memo[key]

    def call(self, name: str, t: float, x: Vector, u: Vector, p: Vector, a: Vector | None = None) -> np.ndarray:
        """Function ``name`` (:meth:`tape_outputs`) at raw float64 vectors; ``x`` is a stored state or a chart
        state (``chart_rhs``, ``chart``), ``a`` the accelerations ``(nv,)`` of ``inverse``."""
        function, size = self._function(name)
        out = np.empty(size)
        x = np.ascontiguousarray(x, dtype=float)
        if x.size == self.nq + self.nv:
            x = np.concatenate([x, np.zeros(self.nb)])
        function(float(t), x, np.ascontiguousarray(u, dtype=float), np.ascontiguousarray(p, dtype=float),
                 x if a is None else np.ascontiguousarray(a, dtype=float), out)
        return out

    # --- numbers -------------------------------------------------------------------------------------
    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self.call("rhs", t, x, u, p)

    def _rhs_call(self, p: Vector) -> RhsCall:
        """The tape's ``rhs`` with ``p`` bound (Model.f's lean path): x followed by the chart's d = 0, the rotation
        checked unit; the accelerations argument is never read by the forward dynamics (zeros)."""
        return RhsCall(self._function("rhs")[0].bind_parameters(p, self.nv), self.nb, self._rotation)

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        if self.contact_set.specs:
            return self.call("h", t, x, u, p)
        return np.array(x, dtype=float)

    @property
    def outputs_are_states(self) -> bool:
        return not self.contact_set.specs

    def _point(self, q: Values, v: Values | None, params: Values | None) -> tuple[np.ndarray, np.ndarray]:
        from robodyn.model.values import values_to_vector

        x = np.zeros(self.nq + self.nv)
        x[: self.nq] = values_to_vector(q, self.coordinates, "coordinate")
        if v is not None:
            x[self.nq:] = values_to_vector(v, self.velocities, "velocity", default=0.0)
        return self.normalized(x), self.parameter_vector(params)

    def acceleration(self, q: Values, v: Values, tau: Values | None = None, params: Values | None = None
                     ) -> np.ndarray:
        """v' ``(nv,)``: the base's spatial acceleration in its frame, then the joints' (``pinocchio.aba``)."""
        x, p = self._point(q, v, params)
        return self.call("acceleration", 0.0, x, self.input_vector(tau), p)

    def inverse_dynamics(self, q: Values, v: Values, a: Values, params: Values | None = None) -> np.ndarray:
        """The generalized forces ``(nv,)`` for accelerations ``a`` (``nv``): the wrench on the base (force, moment in
        its frame at its origin), then the joints' torques with their friction, springs and rotors
        (``pinocchio.rnea``)."""
        x, p = self._point(q, v, params)
        from robodyn.model.values import values_to_vector

        av = values_to_vector(a, self.velocities, "acceleration", default=0.0)
        return self.call("inverse", 0.0, x, np.zeros(self.n_inputs), p, av)

    def mass_matrix(self, q: Values, params: Values | None = None) -> np.ndarray:
        """M(q) ``(nv, nv)`` (``pinocchio.crba``, both triangles)."""
        x, p = self._point(q, None, params)
        return self.call("mass", 0.0, x, np.zeros(self.n_inputs), p).reshape(self.nv, self.nv)

    def center_of_mass(self, q: Values, params: Values | None = None) -> np.ndarray:
        """The centre of mass of the whole robot, world frame ``(3,)`` (``pinocchio.centerOfMass``)."""
        x, p = self._point(q, None, params)
        return self.call("com", 0.0, x, np.zeros(self.n_inputs), p)

    def com_jacobian(self, q: Values, params: Values | None = None) -> np.ndarray:
        """J_com ``(3, nv)``, world frame (``pinocchio.jacobianCenterOfMass``)."""
        x, p = self._point(q, None, params)
        return self.call("com_jacobian", 0.0, x, np.zeros(self.n_inputs), p).reshape(3, self.nv)

    def centroidal_map(self, q: Values, params: Values | None = None) -> np.ndarray:
        """A_g ``(6, nv)``: the centroidal momentum (linear, then angular about the centre of mass, world axes) is
        A_g v (``pinocchio.computeCentroidalMap``)."""
        x, p = self._point(q, None, params)
        return self.call("centroidal", 0.0, x, np.zeros(self.n_inputs), p).reshape(6, self.nv)

    def centroidal_momentum(self, x: Values, params: Values | None = None) -> np.ndarray:
        """h_g ``(6,)`` at a state: linear momentum, then angular momentum about the centre of mass (world axes)."""
        xv, p = self.state_vector(x), self.parameter_vector(params)
        return self.call("momentum", 0.0, xv, np.zeros(self.n_inputs), p)

    def energy(self, x: Values, params: Values | None = None) -> tuple[float, float]:
        """Kinetic 1/2 v^T M v and potential energy (gravity on every link, joint springs) at ``x``."""
        xv, p = self.state_vector(x), self.parameter_vector(params)
        nq = self.nq
        mass = self.call("mass", 0.0, xv, np.zeros(self.n_inputs), p).reshape(self.nv, self.nv)
        kinetic = 0.5 * xv[nq:] @ mass @ xv[nq:]
        return float(kinetic), self._potential(xv, p)

    def _potential(self, x: Vector, p: Vector) -> float:
        chain = self.chain
        values = dict(zip(chain.p_symbols, p.tolist()))
        number = lambda e: float(as_expr(e).xreplace(values))  # noqa: E731
        gravity = np.array([number(g) for g in chain.gravity_expr])
        total = number(chain.link_inertia(self.root_link)[0]) + sum(number(b.mass) for b in chain.bodies)
        potential = -total * float(self.call("com", 0.0, x, np.zeros(self.n_inputs), p) @ gravity)
        joints = x[self.nq - chain.n_coordinates: self.nq]
        for i, terms in enumerate(chain._joint_terms):
            potential += 0.5 * number(terms["stiffness"]) * (joints[i] - number(terms["rest"])) ** 2
        return potential

    # --- the model contract ---------------------------------------------------------------------------
    @property
    def compilable(self) -> bool:
        return True

    def kernel_rhs_source(self) -> str:
        """``rhs(t, x, u, p, out)``: f on stored states (the chart's are :meth:`chart`'s model's)."""
        tape, _ = self._tape
        return "\n".join([tape_source("_floating_rhs", tape, self.tape_outputs("rhs"), "hjit"), "",
                          "@jit", "def rhs(t, x, u, p, out):", "    _floating_rhs(t, x, u, p, x, out)", ""])

    def symbol_table(self) -> Any:
        """The stored states, inputs and parameters as symbols, for events given as text, and the contacts' gaps
        ``<name>_gap`` (robodyn.mechanisms.floating.chart.StoredSymbols)."""
        from robodyn.mechanisms.floating.chart import StoredSymbols

        memo = self.memo()
        if "symbols" not in memo:
            names = gap_names(self.contact_set)
            memo["symbols"] = StoredSymbols(self, names, functools.partial(self.call, "events") if names else None)
        return memo["symbols"]

    def contact_events(self, *, terminal: bool = False) -> list[Any]:
        """Touchdown and lift-off of every contact as events (robodyn.mechanisms.contact.contacts.contact_events)."""
        return contact_events(self.contact_set, terminal)

    def with_parameters(self, params: Mapping[str, float] | None = None, **values: float) -> FloatingChain:
        """:meth:`Model.with_parameters`, the contacts' laws checked at the new values
        (robodyn.mechanisms.contact.contacts.check_laws)."""
        clone = super().with_parameters(params, **values)
        if clone is not self and self.contact_set.names:
            p = clone.parameter_vector(None)
            laws = clone.call("laws", 0.0, np.zeros(self.nq + self.nv), np.zeros(self.n_inputs), p)
            check_laws(self.contact_set, laws, f"model {self.name!r} with the parameters {dict(clone.parameters)}")
        return clone

    def chart(self) -> Chart:
        """The chart the integrators step in (robodyn.mechanisms.floating.chart.ChartModel)."""
        from robodyn.mechanisms.floating.chart import ChartModel

        memo = self.memo()
        if "chart" not in memo:
            memo["chart"] = ChartModel(self)
        return memo["chart"]

    @property
    def geometry_file(self) -> Path | None:
        return self.chain.geometry_file

    def fixed_base(self) -> ChainSystem:
        """The chain with its root link held at the world's origin, at this model's parameters (a copy with other
        parameters places and weighs its links as the copy does)."""
        memo = self.memo()  # shared by the parameter copies: one twin for each set of values
        key = ("fixed base", tuple(self.parameters.items()))
        if key not in memo:
            memo[key] = self.chain.with_parameters(dict(self.parameters))
        return memo[key]

    def base_masses(self) -> BaseMasses:
        chain = self.chain
        values = dict(zip(chain.p_symbols, self.default_parameters()[1].tolist()))
        number = lambda e: float(as_expr(e).xreplace(values))  # noqa: E731
        mass, com, _ = chain.link_inertia(self.root_link)
        return BaseMasses(number(mass), (number(com[0]), number(com[1]), number(com[2])),
                          sum(number(body.mass) for body in chain.bodies))

    def contact_points(self) -> tuple[ContactPoint, ...]:
        return contact_points(self.contact_set, dict(zip(self.chain.p_symbols, self.default_parameters()[1].tolist())))

    def show_text(self) -> str:
        joints = [f"  {j.name}: {j.type}, {j.parent} -> {j.child}" for j in self.chain.joints]
        return "\n".join([f"M(q) v' = Q - c(q, v) on a {self.base} base (root link {self.root_link!r}), "
                          f"nq = {self.nq}, nv = {self.nv}, by recursive Newton-Euler (compiled straight-line code)",
                          *joints])

    def __repr__(self) -> str:
        return (f"FloatingChain(name={self.name!r}, base={self.base!r}, nq={self.nq}, nv={self.nv}, "
                f"joints={list(self.chain.coordinates)})")


