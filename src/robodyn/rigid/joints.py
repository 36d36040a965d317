"""The joints between two bodies of a tree, on the straight-line tape: revolute, prismatic and spherical (ball).

A joint has ``nq`` configuration entries and ``nv`` velocity entries, in Pinocchio's conventions so that numbers
compare one to one:

=============  ====  ====  ===========================================  ===========================================
joint          nq    nv    configuration                                velocity (in the child's joint frame)
=============  ====  ====  ===========================================  ===========================================
``revolute``   1     1     the angle about the unit ``axis``            its rate
``prismatic``  1     1     the displacement along ``axis``              its rate
``spherical``  4     3     a unit quaternion x y z w (parent <- child)  the angular velocity wx wy wz of the child
                                                                        relative to the parent (Pinocchio's
                                                                        ``JointModelSpherical``, MuJoCo's ``ball``)
=============  ====  ====  ===========================================  ===========================================

The joint frame sits at the fixed placement (``rotation``, ``position``) of the body in its parent's joint frame
(robodyn.rigid.rnea.Body); the joint moves it from there. Each joint records on a
:class:`~robodyn.rigid.tape.Tape`:

- :meth:`Joint.placement` — the rotation parent <- child and the child's origin from the joint's ``nq`` entries;
- :meth:`Joint.subspace` — its ``nv`` motion columns S (spatial motion vectors, angular part first, child frame);
  S is constant in the child's frame for all three, so the velocity-product term of the acceleration is
  v x (S q') alone (R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, section 4.4, table 4.1);
- :meth:`Joint.motion` — Newton–Euler's step across the joint, in the child's frame: the angular velocity and
  acceleration and the classical acceleration of the origin, from the parent's (already in the child's axes);
- :meth:`Joint.project` — the joint's ``nv`` generalized forces, S^T f, of the wrench a child transmits;
- :meth:`Joint.derivative` — the configuration's derivative for a velocity (q' = 1/2 q (x) (w, 0) for a ball);
- a chart around a centre c, as robodyn.rigid.base_joints' (configurations c (+) d for a tangent vector d, ``nv``):
  :meth:`Joint.chart_placement` (R = R_c Exp(d) for a ball), :meth:`Joint.chart_rate` (d' = Jr(d)^-1 w) and
  :meth:`Joint.recentred` (c (+) d = q_c (x) Exp(d)), so that integrators keep the quaternion unit.

References: R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, sections 4.4 (joint models), 5.3
(RNEA); J. Sola, J. Deray, D. Atchuthan, "A micro Lie theory for state estimation in robotics", arXiv:1812.01537
(2018), appendix B (SO(3): Exp, the right Jacobian).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol

from robodyn.rigid.base_joints import inverse_right_jacobian, quaternion_matrix, quaternion_product, rotation_exp
from robodyn.rigid.spatial import Mat, Placement, Six, Vec, add, cross, matmul, matvec, scale
from robodyn.rigid.tape import Tape, Value

__all__ = ["JOINTS", "PRISMATIC", "REVOLUTE", "SPHERICAL", "Joint", "JointFrame", "Prismatic", "Revolute",
           "Spherical"]


class JointFrame(Protocol):
    """What a joint reads of its body (robodyn.rigid.rnea.Body): the unit ``axis`` (3,) in the joint frame (unused
    by a ball) and the fixed placement ``rotation`` (3, 3), ``position`` (3,) in the parent's joint frame."""

    @property
    def axis(self) -> tuple[Value, ...]: ...

    @property
    def rotation(self) -> tuple[tuple[Value, ...], ...]: ...

    @property
    def position(self) -> tuple[Value, ...]: ...


class Joint:
    """A joint's kinematics on the tape (see the module docstring); subclasses fill in the conventions.

    ``q``, ``qd``, ``qdd``, ``d`` arguments are the joint's own entries: ``nq``, ``nv``, ``nv``, ``nv`` values.
    """

    kind: str
    nq: int
    nv: int

    def placement(self, tape: Tape, frame: JointFrame, q: Sequence[Value]) -> Placement:
        """(R parent <- child, the child's origin in the parent) at the configuration ``q`` (nq,)."""
        raise NotImplementedError

    def subspace(self, tape: Tape, frame: JointFrame) -> list[Six]:
        """The ``nv`` motion columns S (6,) each, child frame, angular part first."""
        raise NotImplementedError

    def motion(self, tape: Tape, frame: JointFrame, w_in: Vec, alpha_in: Vec, a_in: Vec, qd: Sequence[Value],
               qdd: Sequence[Value]) -> tuple[Vec, Vec, Vec]:
        """The child's angular velocity, angular acceleration and the classical acceleration of its origin (child
        frame) from the parent's angular velocity and acceleration and the acceleration of the child's origin
        carried by the parent (``w_in``, ``alpha_in``, ``a_in``: already in the child's axes) and the joint's rates."""
        raise NotImplementedError

    def project(self, frame: JointFrame, force: Sequence[Value], moment: Sequence[Value]) -> list[Value]:
        """S^T f: the ``nv`` joint forces of the wrench (``force``, ``moment`` about the origin, child frame)."""
        raise NotImplementedError

    def derivative(self, tape: Tape, q: Sequence[Value], v: Sequence[Value]) -> list[Value]:
        """q' ``(nq,)`` for the velocity entries ``v`` ``(nv,)``."""
        raise NotImplementedError

    def chart_placement(self, tape: Tape, frame: JointFrame, centre: Sequence[Value], d: Sequence[Value]
                        ) -> Placement:
        """The placement at c (+) d (centre: ``nq``, d: ``nv``)."""
        return self.placement(tape, frame, self.recentred(tape, centre, d))

    def chart_rate(self, tape: Tape, d: Sequence[Value], v: Sequence[Value]) -> list[Value]:
        """d' ``(nv,)`` so that c (+) d(t) moves with the velocity entries ``v``."""
        raise NotImplementedError

    def recentred(self, tape: Tape, centre: Sequence[Value], d: Sequence[Value]) -> list[Value]:
        """The stored configuration c (+) d ``(nq,)``."""
        raise NotImplementedError


class _OneCoordinate(Joint):
    """A joint with one coordinate that is its own chart (nq = nv = 1, c (+) d = c + d)."""

    nq, nv = 1, 1

    def derivative(self, tape: Tape, q: Sequence[Value], v: Sequence[Value]) -> list[Value]:
        return [v[0]]

    def chart_rate(self, tape: Tape, d: Sequence[Value], v: Sequence[Value]) -> list[Value]:
        return [v[0]]

    def recentred(self, tape: Tape, centre: Sequence[Value], d: Sequence[Value]) -> list[Value]:
        return [centre[0] + d[0]]


class Revolute(_OneCoordinate):
    """A rotation by the angle q about the unit ``axis`` through the joint frame's origin."""

    kind = "revolute"

    def placement(self, tape: Tape, frame: JointFrame, q: Sequence[Value]) -> Placement:
        """Rodrigues' formula: R0 (c 1 + s [a]x + (1 - c) a a^T), p0."""
        a, angle = frame.axis, q[0]
        rotation = [list(row) for row in frame.rotation]
        c, s = angle.cos(), angle.sin()
        one_c = 1.0 - c
        zero = tape.const(0.0)
        skew = [[zero, -a[2], a[1]], [a[2], zero, -a[0]], [-a[1], a[0], zero]]
        motion = [[(c if i == j else zero) + s * skew[i][j] + one_c * a[i] * a[j] for j in range(3)]
                  for i in range(3)]
        return matmul(rotation, motion), list(frame.position)

    def subspace(self, tape: Tape, frame: JointFrame) -> list[Six]:
        return [[*frame.axis, *([tape.const(0.0)] * 3)]]

    def motion(self, tape: Tape, frame: JointFrame, w_in: Vec, alpha_in: Vec, a_in: Vec, qd: Sequence[Value],
               qdd: Sequence[Value]) -> tuple[Vec, Vec, Vec]:
        axis = frame.axis
        w = add(w_in, scale(qd[0], axis))
        return w, add(alpha_in, scale(qdd[0], axis), scale(qd[0], cross(w_in, axis))), a_in

    def project(self, frame: JointFrame, force: Sequence[Value], moment: Sequence[Value]) -> list[Value]:
        a = frame.axis
        return [a[0] * moment[0] + a[1] * moment[1] + a[2] * moment[2]]


class Prismatic(_OneCoordinate):
    """A translation by q along the unit ``axis``."""

    kind = "prismatic"

    def placement(self, tape: Tape, frame: JointFrame, q: Sequence[Value]) -> Placement:
        rotation = [list(row) for row in frame.rotation]
        return rotation, add(frame.position, scale(q[0], matvec(frame.rotation, frame.axis)))

    def subspace(self, tape: Tape, frame: JointFrame) -> list[Six]:
        return [[*([tape.const(0.0)] * 3), *frame.axis]]

    def motion(self, tape: Tape, frame: JointFrame, w_in: Vec, alpha_in: Vec, a_in: Vec, qd: Sequence[Value],
               qdd: Sequence[Value]) -> tuple[Vec, Vec, Vec]:
        axis = frame.axis
        return w_in, alpha_in, add(a_in, scale(2.0 * qd[0], cross(w_in, axis)), scale(qdd[0], axis))

    def project(self, frame: JointFrame, force: Sequence[Value], moment: Sequence[Value]) -> list[Value]:
        a = frame.axis
        return [a[0] * force[0] + a[1] * force[1] + a[2] * force[2]]


class Spherical(Joint):
    """A ball joint: any rotation about the joint frame's origin, q a unit quaternion x y z w (parent <- child
    after the fixed placement), v the child's angular velocity relative to its parent in its own frame."""

    kind, nq, nv = "spherical", 4, 3
    #: Suffixes of the configuration, velocity and chart entries' names (``<joint>_qx``, ``<joint>_wx``, ...).
    configuration_names: Final = ("qx", "qy", "qz", "qw")
    velocity_names: Final = ("wx", "wy", "wz")
    tangent_names: Final = ("rx", "ry", "rz")

    def placement(self, tape: Tape, frame: JointFrame, q: Sequence[Value]) -> Placement:
        return self._placed(frame, quaternion_matrix(q))

    def _placed(self, frame: JointFrame, turn: Mat) -> Placement:
        return matmul([list(row) for row in frame.rotation], turn), list(frame.position)

    def subspace(self, tape: Tape, frame: JointFrame) -> list[Six]:
        zero, one = tape.const(0.0), tape.const(1.0)
        return [[one if i == k else zero for i in range(6)] for k in range(3)]

    def motion(self, tape: Tape, frame: JointFrame, w_in: Vec, alpha_in: Vec, a_in: Vec, qd: Sequence[Value],
               qdd: Sequence[Value]) -> tuple[Vec, Vec, Vec]:
        """w = w_in + w_r, alpha = alpha_in + w_r' + w_in x w_r; the origin is the centre of rotation."""
        return add(w_in, qd), add(alpha_in, qdd, cross(w_in, qd)), a_in

    def project(self, frame: JointFrame, force: Sequence[Value], moment: Sequence[Value]) -> list[Value]:
        return list(moment)

    def derivative(self, tape: Tape, q: Sequence[Value], v: Sequence[Value]) -> list[Value]:
        """q' = 1/2 q (x) (w, 0): the angular velocity in the child's (the moving) frame."""
        return [0.5 * e for e in quaternion_product(q, [v[0], v[1], v[2], tape.const(0.0)])]

    def chart_placement(self, tape: Tape, frame: JointFrame, centre: Sequence[Value], d: Sequence[Value]
                        ) -> Placement:
        """R0 R_c Exp(d), p0."""
        return self._placed(frame, quaternion_matrix(quaternion_product(centre, rotation_exp(tape, d))))

    def chart_rate(self, tape: Tape, d: Sequence[Value], v: Sequence[Value]) -> list[Value]:
        """d' = Jr(d)^-1 w."""
        return inverse_right_jacobian(tape, d, v)

    def recentred(self, tape: Tape, centre: Sequence[Value], d: Sequence[Value]) -> list[Value]:
        """q_c (x) Exp(d): Pinocchio's ``integrate`` of the spherical joint."""
        return quaternion_product(centre, rotation_exp(tape, d))


REVOLUTE: Final = Revolute()
PRISMATIC: Final = Prismatic()
SPHERICAL: Final = Spherical()
#: The joints by kind.
JOINTS: Final = {joint.kind: joint for joint in (REVOLUTE, PRISMATIC, SPHERICAL)}
