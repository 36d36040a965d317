"""The numeric functions of a tree of rigid bodies on a moving base, as outputs of one straight-line tape.

:class:`FloatingProgram` extends the fixed-base functions (robodyn.rigid.dynamics) to a root link joined to the
world by a base joint (robodyn.rigid.base_joints: free-flyer or planar): the velocity ``v`` has ``nv = nb + n``
entries (the base's ``nb`` in its own frame, then the joints' rates), the accelerations likewise (the base's
spatial acceleration: the derivative of its velocity entries), and the generalized forces of the base are the
wrench on the root link in its frame at its origin — Pinocchio's conventions for ``rnea``, ``crba`` and ``aba``.

==================  ==================================================================================  ============
function            outputs                                                                             shape
==================  ==================================================================================  ============
``acceleration``    v' = M^-1 (Q - c) by a Cholesky solve (Q: no force on the base, the joints' forces)  (nv,)
``mass``            M (the composite inertia of the whole robot in its base rows), row-major             (nv * nv,)
``inverse``         ID(q, v, a) + joint terms, the accelerations ``a`` (argument 4) of size nv            (nv,)
``com``             the centre of mass of the whole robot, world frame                                   (3,)
``com_jacobian``    J_com with v_com = J_com v, world frame                                              (3 * nv,)
``centroidal``      A_g with h_g = A_g v: linear momentum, then angular momentum about the centre of     (6 * nv,)
                    mass, world axes (Pinocchio's ``computeCentroidalMap``)
``momentum``        h_g, the same                                                                        (6,)
==================  ==================================================================================  ============

The program is given the root's pose (R world <- root, p) and velocity entries as tape values, so one class
serves the stored configuration (the pose from a quaternion) and the integrators' chart (the pose at c (+) d).

Reference: R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, sections 5.3 and 9.3 (floating
bases); D. E. Orin, A. Goswami, S.-H. Lee, "Centroidal dynamics of a humanoid robot", Autonomous Robots 35 (2013).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from robodyn.rigid.aba import articulated_accelerations
from robodyn.rigid.base_joints import BaseJoint
from robodyn.rigid.derivatives import MovingRoot, WorldTree
from robodyn.rigid.dynamics import JointTerms, TreeProgram
from robodyn.rigid.kinematics import FrameSpec
from robodyn.rigid.rnea import Body, check_one_coordinate, newton_euler, placement
from robodyn.rigid.spatial import Mat, Vec, add, cross, matmul, matvec, tmatvec
from robodyn.rigid.tape import Tape, Value

__all__ = ["FLOATING_FUNCTIONS", "FloatingProgram", "MovingFrames", "RootBody"]

FLOATING_FUNCTIONS = ("acceleration", "mass", "inverse", "com", "com_jacobian", "centroidal", "momentum")


@dataclass(frozen=True, slots=True)
class RootBody:
    """The root link's mass, centre of mass (3,) and inertia about it (3, 3), in its own frame (tape values)."""

    mass: Value
    com: tuple[Value, ...]
    inertia: tuple[tuple[Value, ...], ...]


class FloatingProgram(TreeProgram):
    """Every function of a tree on a moving base (see the module docstring), recorded on demand.

    ``joint`` is the base joint; ``pose`` = (R, p) of the root and ``base_v`` its ``joint.nv`` velocity entries;
    ``q``, ``qd`` the joint coordinates and rates (model order, ``n`` each); ``bodies`` parent-first with
    ``couplings[k] = (coordinate, multiplier, offset)`` as in robodyn.rigid.dynamics (a body whose parent is -1
    hangs from the root link); ``a`` the ``nv`` acceleration leaves of inverse dynamics; ``gravity`` in the world
    frame; ``joints`` and ``forces`` the joints' terms and generalized forces (``n`` each); ``base_forces`` the
    base's (``nb``: the wrench of contact forces on the robot, in the base's velocity coordinates), or None.
    """

    def __init__(self, tape: Tape, joint: BaseJoint, root: RootBody, bodies: Sequence[Body],
                 couplings: Sequence[tuple[int, Value, Value]], pose: tuple[Mat, Vec], base_v: Sequence[Value],
                 q: Sequence[Value], qd: Sequence[Value], a: Sequence[Value], gravity: Sequence[Value],
                 joints: Sequence[JointTerms], forces: Sequence[Value], base_forces: Sequence[Value] | None = None):
        check_one_coordinate(bodies, "FloatingProgram")
        self.tape, self.joint, self.root = tape, joint, root
        self.bodies, self.couplings = list(bodies), list(couplings)
        self.rotation, self.position = pose
        self.base_v, self.q, self.qd, self.a = list(base_v), list(q), list(qd), list(a)
        self.gravity, self.joints, self.forces = list(gravity), list(joints), list(forces)
        self.n, self.nb = len(self.q), joint.nv
        self.nv = self.nb + self.n
        self.base_forces = None if base_forces is None else list(base_forces)
        self.zero, self.one = tape.const(0.0), tape.const(1.0)
        self._recorded: dict[str, list[Value]] = {}

    functions = FLOATING_FUNCTIONS

    # --- building blocks ------------------------------------------------------------------------------
    def _root_wrench(self, w: Vec, alpha: Vec, acc: Vec, force: Vec, moment: Vec) -> tuple[Vec, Vec]:
        """The root link's own inertial wrench added to what its children exert (root frame, at its origin)."""
        r = self.root
        f = [r.mass * e for e in add(acc, cross(alpha, r.com), cross(w, cross(w, r.com)))]
        n = add(matvec(r.inertia, alpha), cross(w, matvec(r.inertia, w)), cross(r.com, f))
        return add(force, f), add(moment, n)

    def inverse(self, base_a: Sequence[Value], qdd: Sequence[Value], base_v: Sequence[Value],
                qd: Sequence[Value], gravity: bool) -> list[Value]:
        """ID: the base's generalized forces (``nb``), then the joints' with their terms (``n``)."""
        tape = self.tape
        v, w = self.joint.twist(tape, base_v)
        dv, dw = self.joint.twist(tape, base_a)
        acc = add(dv, cross(w, v))  # the classical acceleration of the root's origin, root frame
        if gravity:
            acc = add(acc, [-e for e in tmatvec(self.rotation, self.gravity)])
        tau, force, moment = newton_euler(tape, self.bodies, self._positions(), self._motion(qd), self._motion(qdd),
                                          (w, dw, acc))
        force, moment = self._root_wrench(w, dw, acc, force, moment)
        joint_tau = self._generalized(tau)
        if gravity:  # the joints' own terms (friction, springs, rotors) belong to the dynamics, not to M
            joint_tau = [joint_tau[i] + self.joints[i].force(self.q[i], qd[i], qdd[i]) for i in range(self.n)]
        else:
            joint_tau = [joint_tau[i] + self.joints[i].rotor * qdd[i] for i in range(self.n)]
        return [*self.joint.project(force, moment), *joint_tau]

    @functools.cached_property
    def world(self) -> WorldTree:
        """The root and the bodies in the world frame (robodyn.rigid.derivatives): M and the derivatives of
        inverse dynamics, the root's columns its velocity entries' twists."""
        tape, one, zero = self.tape, self.one, self.zero
        columns = [self.joint.twist(tape, [one if i == c else zero for i in range(self.nb)]) for c in range(self.nb)]
        root = MovingRoot(self.rotation, list(self.position), columns, self.root.mass, self.root.com,
                          self.root.inertia)
        return WorldTree(tape, self.bodies, self._positions(), self.gravity, root)

    @functools.cached_property
    def mass(self) -> list[list[Value]]:
        """M in velocity order (the composite-rigid-body algorithm), the rotors on the joints' diagonal."""
        mass = self._coordinate_matrix(self.world.mass, self.nb)
        for i in range(self.n):
            mass[self.nb + i][self.nb + i] = mass[self.nb + i][self.nb + i] + self.joints[i].rotor
        return mass

    @functools.cached_property
    def bias(self) -> list[Value]:
        """c(q, v) = ID(q, v, 0) with gravity and the joint terms."""
        return self.inverse([self.zero] * self.nb, [self.zero] * self.n, self.base_v, self.qd, gravity=True)

    def _tree_order(self) -> list[int]:
        """The joints leaves first, then the base (its entries come before the joints' in the velocity)."""
        return [self.nb + c for c in super()._tree_order()] + list(reversed(range(self.nb)))

    @functools.cached_property
    def acceleration(self) -> list[Value]:
        """v': by the articulated-body algorithm (robodyn.rigid.aba) when every body has a coordinate of its own,
        else (mimic joints) M^-1 (Q - c) by M's Cholesky factor."""
        if self._one_to_one() and self.base_forces is None:
            return self._articulated()
        return self.tree.solve([f - c for f, c in zip(self.applied(), self.bias)])

    def _articulated(self) -> list[Value]:
        tape, joint = self.tape, self.joint
        order, q, qd, tau, armature = self._body_terms()
        v, w = joint.twist(tape, self.base_v)
        root = (self.root.mass, self.root.com, self.root.inertia)
        qdd, base = articulated_accelerations(tape, self.bodies, q, qd, tau, armature,
                                              tmatvec(self.rotation, self.gravity), root, (v, w), joint.subspace)
        return [*(base or []), *self._by_coordinate(order, qdd)]

    # --- bodies in the world, for the centre of mass and the momentum -----------------------------------
    @functools.cached_property
    def _world(self) -> list[tuple[Value, Mat, Vec, Vec, Vec, Mat]]:
        """Per body, the root first: mass, R, the centre of mass, its velocity and the angular velocity (world),
        and the inertia about the centre of mass (body frame)."""
        v, w = self.joint.twist(self.tape, self.base_v)
        rotation = self.rotation
        omega, velocity = matvec(rotation, w), matvec(rotation, v)
        root = self.root
        arm = matvec(rotation, list(root.com))
        frames = [(rotation, list(self.position), omega, velocity)]  # joint frames: R, origin, w, origin velocity
        result = [(root.mass, rotation, add(self.position, arm), add(velocity, cross(omega, arm)), omega,
                   [list(row) for row in root.inertia])]
        positions, rates = self._positions(), self._motion(self.qd)
        for k, body in enumerate(self.bodies):
            r_p, p_p, w_p, v_p = frames[body.parent + 1]
            rot, pos = placement(self.tape, body, positions[k])
            r_k = matmul(r_p, rot)
            offset = matvec(r_p, pos)
            origin = add(p_p, offset)
            axis = matvec(r_k, list(body.axis))
            v_k = add(v_p, cross(w_p, offset))
            if body.prismatic:
                w_k, v_k = w_p, add(v_k, [rates[k] * e for e in axis])
            else:
                w_k = add(w_p, [rates[k] * e for e in axis])
            frames.append((r_k, origin, w_k, v_k))
            arm = matvec(r_k, list(body.com))
            result.append((body.mass, r_k, add(origin, arm), add(v_k, cross(w_k, arm)), w_k,
                           [list(row) for row in body.inertia]))
        return result

    @functools.cached_property
    def _total_mass(self) -> Value:
        total = self.zero
        for mass, *_ in self._world:
            total = total + mass
        return total

    def _com(self) -> list[Value]:
        weighted = [self.zero] * 3
        for mass, _, com, *_ in self._world:
            weighted = [weighted[i] + mass * com[i] for i in range(3)]
        return [e / self._total_mass for e in weighted]

    def _momentum(self) -> list[Value]:
        centre = self.outputs("com")
        linear, angular = [self.zero] * 3, [self.zero] * 3
        for mass, rotation, com, velocity, omega, inertia in self._world:
            p = [mass * e for e in velocity]
            spin = matvec(rotation, matvec(inertia, tmatvec(rotation, omega)))
            moment = add(cross([com[i] - centre[i] for i in range(3)], p), spin)
            linear, angular = add(linear, p), add(angular, moment)
        return [*linear, *angular]

    def velocities(self) -> list[Value]:
        return [*self.base_v, *self.qd]

    def _centroidal(self) -> list[Value]:
        """A_g: the momentum is linear in v, so its forward-mode derivative is exactly the map."""
        rows = self.tape.derive(self.outputs("momentum"), self.velocities())
        return [e for row in rows for e in row]

    def _com_jacobian(self) -> list[Value]:
        return [e / self._total_mass for e in self.outputs("centroidal")[: 3 * self.nv]]

    def _acceleration(self) -> list[Value]:
        return list(self.acceleration)

    def _mass(self) -> list[Value]:
        return [e for row in self.mass for e in row]

    def _inverse(self) -> list[Value]:
        return self.inverse(self.a[: self.nb], self.a[self.nb:], self.base_v, self.qd, gravity=True)


class MovingFrames:
    """Frames of a tree on a moving base, with robodyn.rigid.kinematics.KinematicsProgram's ``outputs`` for
    ``pose`` (R row-major, then the origin: 12, world frame) and ``jacobian`` (6 x nv: the origin's velocity, then
    the angular velocity, world axes, per velocity entry: the base's, then the coordinates'), ``n`` the velocity
    entries and ``qd`` their leaves: what robodyn.rigid.contact's forces read. A frame's ``body`` -1 is the root link.

    A point p on node k moves with the world-frame motion columns S = (v_O, w) of k and its ancestors
    (robodyn.rigid.derivatives.WorldTree.columns, at the world's origin) as v_O + w x p.
    """

    def __init__(self, program: FloatingProgram):
        self.program, self.tape = program, program.tape
        self.n, self.qd = program.nv, program.velocities()
        self._recorded: dict[tuple[FrameSpec, str], list[Value]] = {}

    def outputs(self, frame: FrameSpec, quantity: str) -> list[Value]:
        key = (frame, quantity)
        if key not in self._recorded:
            world = self.program.world
            node = frame.body + 1
            r_n, p_n = world.poses[node]
            rotation = matmul(r_n, [list(row) for row in frame.rotation])
            origin = add(p_n, matvec(r_n, list(frame.position)))
            if quantity == "pose":
                self._recorded[key] = [v for row in rotation for v in row] + origin
            elif quantity == "jacobian":
                self._recorded[key] = self._jacobian(node, origin)
            else:
                raise KeyError(f"no kinematic quantity {quantity!r} on a moving base: pose or jacobian")
        return self._recorded[key]

    def _jacobian(self, node: int, point: Vec) -> list[Value]:
        """6 x nv row-major: the columns of ``node`` and its ancestors at ``point``, by coordinate."""
        program, world = self.program, self.program.world
        nb, zero = program.nb, program.zero
        columns: list[list[Value]] = [[zero] * 6 for _ in range(program.nv)]
        for ancestor in world.ancestors(node):
            for k, column in enumerate(world.columns[ancestor]):
                at = [*add(column[:3], cross(column[3:], point)), *column[3:]]
                if ancestor == 0:  # the root: its velocity entries
                    columns[k] = at
                    continue
                coordinate, multiplier, _ = program.couplings[ancestor - 1]
                columns[nb + coordinate] = [c + multiplier * a for c, a in zip(columns[nb + coordinate], at)]
        return [columns[j][i] for i in range(6) for j in range(program.nv)]
