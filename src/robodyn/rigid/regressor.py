"""The inverse-dynamics regressor of a tree of rigid bodies on a straight-line tape: tau = Y(q, q', q'') theta.

Inverse dynamics is linear in each body's ten standard inertial parameters, taken in the body's joint frame about
its origin (W. Khalil, E. Dombre, *Modeling, Identification and Control of Robots*, Hermes Penton 2002;
C. G. Atkeson, C. H. An, J. M. Hollerbach, "Estimation of inertial parameters of manipulator loads and links",
IJRR 5(3), 1986):

    theta_i = [m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]       (:data:`INERTIAL`)

with c the centre of mass and I the inertia about the frame's origin, I = I_c + m (|c|^2 1 - c c^T) (the order
of Pinocchio's ``Inertia.toDynamicParameters``). In those parameters the wrench a body needs for its motion —
angular velocity w, angular acceleration al and origin acceleration a (gravity as an upward acceleration of the
base), all in its own frame — is

    f   = m a + al x h + w x (w x h)                    (h = m c)
    n_O = I al + w x (I w) + h x a

so each parameter's column of the body's wrench is a product of the motion alone: :func:`body_wrench_columns`.
Each column is carried to the root as Newton–Euler's backward pass carries forces (robodyn.rigid.rnea.to_parent),
and its joint torques, the axis times the force or the moment at each joint on the way, are the body's columns of
Y (:func:`inertial_regressor`). Nothing is solved or differentiated: Y's entries are polynomials in the motion,
recorded once on the tape and compiled like the other functions (robodyn.rigid.dynamics, ``regressor``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from robodyn.rigid.rnea import Body, body_motions, check_one_coordinate, to_parent
from robodyn.rigid.spatial import Vec, add, cross, matvec, scale
from robodyn.rigid.tape import Tape, Value

__all__ = ["INERTIAL", "body_wrench_columns", "inertial_regressor", "standard_parameters"]

#: A body's standard inertial parameters, in this order (the names of its columns of Y).
INERTIAL: Final = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
# The unit inertia matrices of I_xx, I_xy, I_yy, I_xz, I_yz, I_zz: (row, column) pairs set to 1.
_UNIT: Final = (((0, 0),), ((0, 1), (1, 0)), ((1, 1),), ((0, 2), (2, 0)), ((1, 2), (2, 1)), ((2, 2),))


def body_wrench_columns(tape: Tape, w: Sequence[Value], al: Sequence[Value], a: Sequence[Value]
                        ) -> list[tuple[Vec, Vec]]:
    """The force and the moment about the origin (body frame) that each unit standard parameter needs for the
    motion (w, al, a): ten (f, n) pairs in the order of :data:`INERTIAL`."""
    zero = tape.const(0.0)
    nothing = [zero, zero, zero]
    columns: list[tuple[Vec, Vec]] = [(list(a), nothing)]  # m
    for k in range(3):  # h = m c: f = al x h + w x (w x h), n = h x a
        unit = [tape.const(1.0) if j == k else zero for j in range(3)]
        columns.append((add(cross(al, unit), cross(w, cross(w, unit))), cross(unit, a)))
    for pairs in _UNIT:  # I: n = I al + w x (I w)
        matrix = [[tape.const(1.0) if (i, j) in pairs else zero for j in range(3)] for i in range(3)]
        columns.append((nothing, add(matvec(matrix, al), cross(w, matvec(matrix, w)))))
    return columns


def inertial_regressor(tape: Tape, bodies: Sequence[Body], q: Sequence[Value], qd: Sequence[Value],
                       qdd: Sequence[Value], gravity: Sequence[Value]) -> list[list[Value]]:
    """The joint forces of a tree on a fixed base as columns of the bodies' standard parameters: row j (one per
    body, like robodyn.rigid.rnea.rnea's result) holds body i's ten columns at ``10 i .. 10 i + 9``, zero unless
    body j is body i or one of its ancestors. ``q``, ``qd``, ``qdd`` hold one value per body; ``gravity`` is the
    gravity vector in the base frame."""
    check_one_coordinate(bodies, "inertial_regressor")
    zero = tape.const(0.0)
    base = ([zero] * 3, [zero] * 3, [-g for g in gravity])
    rotations, positions, omega, alpha, accel = body_motions(tape, bodies, q, qd, qdd, base)
    rows = [[zero] * (10 * len(bodies)) for _ in bodies]
    for i in range(len(bodies)):
        for k, (force, moment) in enumerate(body_wrench_columns(tape, omega[i], alpha[i], accel[i])):
            j = i
            while j >= 0:  # up the tree: the torque of each joint that carries body i
                body = bodies[j]
                resultant = force if body.prismatic else moment
                rows[j][10 * i + k] = (body.axis[0] * resultant[0] + body.axis[1] * resultant[1]
                                       + body.axis[2] * resultant[2])
                force, moment = to_parent(rotations[j], positions[j], force, moment)
                j = body.parent
    return rows


def standard_parameters(body: Body) -> list[Value]:
    """The body's ten standard parameters (:data:`INERTIAL`) from its mass, centre of mass and inertia about it."""
    m, c, inertia = body.mass, body.com, body.inertia
    square = c[0] * c[0] + c[1] * c[1] + c[2] * c[2]
    about_origin = [[inertia[i][j] + m * ((square if i == j else 0.0) - c[i] * c[j]) for j in range(3)]
                    for i in range(3)]
    return [m, *scale(m, c), *(about_origin[i][j] for (i, j), *_ in _UNIT)]
