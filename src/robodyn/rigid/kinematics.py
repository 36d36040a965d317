"""Forward kinematics on the straight-line tape: frame poses, geometric Jacobians and J'q'.

A *frame* is fixed to a body of the tree (or to the base, body -1) at a constant placement (R_o, p_o)
in the body's joint frame. For the joint coordinates q (one value per body, mimic couplings applied by
the caller) :class:`KinematicsProgram` records, per frame:

============  ======================================================================================  ========
function      outputs                                                                                 shape
============  ======================================================================================  ========
``pose``      the rotation R (world <- frame) row-major, then the origin p in the world frame          (12,)
``jacobian``  J = [Jv; Jw], 6 x n row-major: v = Jv q' (origin velocity), w = Jw q' (angular), world  (6n,)
              axes at the frame origin (Pinocchio's ``LOCAL_WORLD_ALIGNED``)
``bias``      J'q' = d(J q')/dt at q'' = 0: the classical acceleration of the origin and the angular   (6,)
              acceleration for q'' = 0, world axes
``origins``   the origins of every body's joint frame, body order                                       (3 bodies,)
============  ======================================================================================  ========

The Jacobian is built from the joint axes (a revolute joint i with world axis z_i through o_i moves the
frame origin p at z_i x (p - o_i) and turns it at z_i; a prismatic one moves it at z_i), each body's
column scaled by its coupling multiplier and added to its coordinate's column; with other joints (a ball; ``maps``
to the bodies' order) one column per velocity entry, from the joint's motion subspace, n = nv. J'q' is the forward-mode
derivative of J q' along q' (robodyn.rigid.tape.Tape.derive), so both are exact.

Reference: B. Siciliano, L. Sciavicco, L. Villani, G. Oriolo, *Robotics: Modelling, Planning and
Control*, Springer 2009, sections 3.1 (geometric Jacobian) and 3.9 (its derivative).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from robodyn.rigid.rnea import Body, check_one_coordinate, joint_of, tree_offsets, world_frames
from robodyn.rigid.spatial import Mat, Vec, add, cross, matmul, matvec
from robodyn.rigid.tape import Tape, Value, dot

__all__ = ["QUANTITIES", "FrameSpec", "KinematicsProgram"]

QUANTITIES = ("pose", "jacobian", "bias")


@dataclass(frozen=True, slots=True)
class FrameSpec:
    """A frame fixed to body ``body`` (-1: the base) at rotation ``rotation`` (3, 3) and ``position`` (3,)
    in that body's joint frame (tape values)."""

    body: int
    rotation: tuple[tuple[Value, ...], ...]
    position: tuple[Value, ...]


class KinematicsProgram:
    """The kinematic functions of a tree of bodies (see the module docstring), recorded on demand.

    ``couplings[k] = (coordinate, multiplier, offset)``: body k's joint moves as multiplier q[coordinate] +
    offset; ``x`` (2n,) are the state leaves (q, then q'). With other joints, ``maps`` (the model's order of each
    body's entries, robodyn.mechanisms.chain.ball_program) and ``rates``, dq/dt at q' (nq,).
    """

    def __init__(self, tape: Tape, bodies: Sequence[Body], couplings: Sequence[tuple[int, Value, Value]],
                 x: Sequence[Value], maps: tuple[Sequence[int], Sequence[int]] | None = None,
                 rates: Sequence[Value] | None = None):
        self.tape, self.bodies, self.couplings = tape, list(bodies), list(couplings)
        self.zero = tape.const(0.0)
        self._recorded: dict[tuple[FrameSpec | None, str], list[Value]] = {}
        self.maps = maps
        if maps is None:  # one coordinate per body, couplings applied
            check_one_coordinate(bodies, "KinematicsProgram without entry maps")
            self.n = self.nq = len(x) // 2
            self.q, self.qd = list(x[: self.n]), list(x[self.n:])
            positions = [a * self.q[c] + b for c, a, b in self.couplings]
        else:  # any joints (a ball's four configuration and three velocity entries), no couplings
            starts_q, starts_v = tree_offsets(self.bodies)
            self.nq, self.n = starts_q[-1], starts_v[-1]
            self.q, self.qd = list(x[: self.nq]), list(x[self.nq: self.nq + self.n])
            positions = [self.q[i] for i in maps[0]]
            #: Per body, its configuration and velocity entries' places in the model's order.
            self._entries = [([maps[0][i] for i in range(starts_q[k], starts_q[k + 1])],
                              [maps[1][i] for i in range(starts_v[k], starts_v[k + 1])]) for k in range(len(bodies))]
        self.frames = world_frames(tape, self.bodies, positions)
        self.rates = self.qd if rates is None else list(rates)  # dq/dt (a ball's quaternion rate), model order

    def outputs(self, frame: FrameSpec | None, quantity: str) -> list[Value]:
        """The outputs of ``quantity`` (``pose``, ``jacobian``, ``bias``) for ``frame``, or ``origins`` (frame
        None)."""
        key = (frame, quantity)
        if key not in self._recorded:
            if quantity == "origins":
                self._recorded[key] = [v for _, p in self.frames for v in p]
            elif quantity == "pose":
                rotation, position = self._pose(frame)  # type: ignore[arg-type]
                self._recorded[key] = [v for row in rotation for v in row] + position
            elif quantity == "jacobian":
                self._recorded[key] = [v for row in self._jacobian(frame) for v in row]  # type: ignore[arg-type]
            elif quantity == "bias":
                self._recorded[key] = self._bias(frame)  # type: ignore[arg-type]
            else:
                raise KeyError(f"no kinematic quantity {quantity!r}: one of {', '.join(QUANTITIES)}, origins")
        return self._recorded[key]

    def _pose(self, frame: FrameSpec) -> tuple[Mat, Vec]:
        if frame.body < 0:
            return [list(row) for row in frame.rotation], list(frame.position)
        r_b, p_b = self.frames[frame.body]
        return matmul(r_b, frame.rotation), add(p_b, matvec(r_b, frame.position))

    def _ancestors(self, body: int) -> list[int]:
        chain = []
        while body >= 0:
            chain.append(body)
            body = self.bodies[body].parent
        return chain

    def _jacobian(self, frame: FrameSpec) -> list[list[Value]]:
        """6 x n: rows vx, vy, vz, wx, wy, wz (world axes, at the frame origin)."""
        if self.maps is not None:
            return self._flat_jacobian(frame)
        _, origin = self._pose(frame)
        columns: list[list[Value]] = [[self.zero] * 6 for _ in range(self.n)]
        for k in self._ancestors(frame.body):
            body = self.bodies[k]
            rotation, joint_origin = self.frames[k]
            axis = matvec(rotation, body.axis)  # the joint axis in the world frame
            coordinate, multiplier, _ = self.couplings[k]
            if body.prismatic:
                column = [*axis, self.zero, self.zero, self.zero]
            else:
                arm = [origin[i] - joint_origin[i] for i in range(3)]
                column = [*cross(axis, arm), *axis]
            columns[coordinate] = [columns[coordinate][i] + multiplier * column[i] for i in range(6)]
        return [[columns[j][i] for j in range(self.n)] for i in range(6)]

    def _flat_jacobian(self, frame: FrameSpec) -> list[list[Value]]:
        """6 x nv of a tree with any joints: each velocity entry's motion column S = [w; v] (joint frame, robodyn.
        rigid.joints) turned to the world, moving the frame origin p at R v + R w x (p - o) and turning it at R w."""
        _, origin = self._pose(frame)
        columns: list[list[Value]] = [[self.zero] * 6 for _ in range(self.n)]
        for k in self._ancestors(frame.body):
            rotation, joint_origin = self.frames[k]
            arm = [origin[i] - joint_origin[i] for i in range(3)]
            for at, column in zip(self._entries[k][1], joint_of(self.bodies[k]).subspace(self.tape, self.bodies[k])):
                turn, move = matvec(rotation, column[:3]), matvec(rotation, column[3:])
                columns[at] = [*add(move, cross(turn, arm)), *turn]
        return [[columns[j][i] for j in range(self.n)] for i in range(6)]

    def _bias(self, frame: FrameSpec) -> list[Value]:
        """J'q' = sum_k d(J q')/dq_k dq_k/dt (q' held: the derivative of J q' along the motion at q'' = 0; dq/dt is
        q' itself, or a ball's quaternion rate)."""
        jacobian = self._jacobian(frame)
        twist = [dot(row, self.qd) for row in jacobian]
        derivatives = self.tape.derive(twist, self.q)
        return [dot(row, self.rates) for row in derivatives]
