"""The algebra of rigid-body motion on the straight-line tape: 3-vectors, rotations, placements, spatial vectors.

Every function records scalar operations on the :class:`~robodyn.rigid.tape.Tape` its arguments live on, in a
fixed order: the algorithms that call them (robodyn.rigid.rnea, aba, derivatives, kinematics, floating,
base_joints, regressor) generate the same nodes, in the same order, whichever module calls them.

Conventions (R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, chapter 2):

- a 3-vector is a list of three values, a 3 x 3 matrix a list of three rows;
- a *placement* ``(rotation, position)`` places a child frame in its parent: ``rotation`` (3, 3) maps child
  coordinates to parent coordinates, ``position`` (3,) is the child's origin in parent coordinates. In
  Featherstone's notation the Plücker transform from parent to child coordinates is ``X = rot(E) xlt(r)`` with
  ``E = rotation^T`` and ``r = position`` (section 2.8, equation 2.28);
- a spatial vector (*Six*) is six values, angular part first: a motion vector ``m = (w, v)`` (angular velocity,
  velocity of the point at the frame's origin), a force vector ``f = (n, f)`` (moment about the origin, force)
  (sections 2.2-2.4);
- a spatial inertia is a symmetric 6 x 6 matrix acting on motion vectors, giving forces (section 2.13).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

from robodyn.rigid.tape import Tape, Value, dot

__all__ = ["Inertia", "Mat", "Placement", "Six", "Vec", "add", "compose", "cross", "force_cross", "force_to_parent",
           "inertia_times", "inertia_to_parent", "invert", "matmul", "matvec", "motion_cross", "motion_to_child",
           "scale", "spatial_inertia", "tmatvec"]

Vec: TypeAlias = list[Value]  # three values
Mat: TypeAlias = list[list[Value]]  # 3 x 3 values, row-major
Six: TypeAlias = list[Value]  # a spatial vector: angular (or moment) part, then linear (or force) part
Inertia: TypeAlias = list[list[Value]]  # a symmetric 6 x 6 spatial inertia
Placement: TypeAlias = tuple[Mat, Vec]  # (rotation parent <- child, child origin in the parent)


# --- 3-vectors and 3 x 3 matrices ----------------------------------------------------------------------------------
def cross(a: Sequence[Value], b: Sequence[Value]) -> Vec:
    """a x b of two 3-vectors: (3,)."""
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def matvec(m: Sequence[Sequence[Value]], v: Sequence[Value]) -> Vec:
    """m v of a (3, 3) matrix and a (3,) vector: (3,)."""
    return [m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2] for i in range(3)]


def tmatvec(m: Sequence[Sequence[Value]], v: Sequence[Value]) -> Vec:
    """m^T v of a (3, 3) matrix and a (3,) vector: (3,); for a rotation, its inverse applied."""
    return [m[0][i] * v[0] + m[1][i] * v[1] + m[2][i] * v[2] for i in range(3)]


def matmul(a: Sequence[Sequence[Value]], b: Sequence[Sequence[Value]]) -> Mat:
    """a b of two (3, 3) matrices: (3, 3)."""
    return [[a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j] for j in range(3)] for i in range(3)]


def add(*vectors: Sequence[Value]) -> Vec:
    """The sum of one or more 3-vectors, added left to right: (3,)."""
    result = list(vectors[0])
    for v in vectors[1:]:
        result = [result[i] + v[i] for i in range(3)]
    return result


def scale(s: Value, v: Sequence[Value]) -> Vec:
    """s v: each entry of ``v`` times the scalar ``s`` (any length)."""
    return [s * e for e in v]


# --- placements ---------------------------------------------------------------------------------------------------
def compose(outer: Placement, inner: Placement) -> Placement:
    """The placement of a grandchild in its grandparent: ``inner`` places it in its parent, ``outer`` places that
    parent in the grandparent. (R1 R2, p1 + R1 p2); Featherstone's ``X = X_inner X_outer`` (section 2.8)."""
    (r_outer, p_outer), (r_inner, p_inner) = outer, inner
    return matmul(r_outer, r_inner), add(p_outer, matvec(r_outer, p_inner))


def invert(placement: Placement) -> Placement:
    """The parent placed in the child: (R^T, -R^T p); Featherstone's ``X^-1`` (section 2.8)."""
    rotation, position = placement
    transposed = [[rotation[j][i] for j in range(3)] for i in range(3)]
    return transposed, [-e for e in tmatvec(rotation, position)]


# --- spatial vectors ----------------------------------------------------------------------------------------------
def motion_to_child(rotation: Mat, position: Vec, m: Sequence[Value]) -> Six:
    """X m: a motion vector (6,) of the parent's coordinates in the child's, the child placed at (``rotation``,
    ``position``): (E w, E (v - r x w)) with E = rotation^T, r = position (Featherstone, equation 2.24)."""
    w, v = m[:3], m[3:]
    return [*tmatvec(rotation, w), *tmatvec(rotation, [v[i] - e for i, e in enumerate(cross(position, w))])]


def force_to_parent(rotation: Mat, position: Vec, f: Sequence[Value]) -> Six:
    """X^T f (Featherstone's X* inverse): a force vector (6,) of the child's coordinates in the parent's, the child
    placed at (``rotation``, ``position``): (R n + p x (R f), R f) (Featherstone, equations 2.25 and 2.26)."""
    force = matvec(rotation, f[3:])
    return [*add(matvec(rotation, f[:3]), cross(position, force)), *force]


def motion_cross(a: Sequence[Value], b: Sequence[Value]) -> Six:
    """a x b of two motion vectors (6,): (w_a x w_b, w_a x v_b + v_a x w_b) (Featherstone, equation 2.31)."""
    return [*cross(a[:3], b[:3]), *add(cross(a[:3], b[3:]), cross(a[3:], b[:3]))]


def force_cross(a: Sequence[Value], f: Sequence[Value]) -> Six:
    """a x* f of a motion vector and a force vector (6,): (w_a x n + v_a x f, w_a x f) (Featherstone, equation
    2.32); the dual of :func:`motion_cross`, ``(a x* f) . m = -f . (a x m)``."""
    return [*add(cross(a[:3], f[:3]), cross(a[3:], f[3:])), *cross(a[:3], f[3:])]


# --- spatial inertias ---------------------------------------------------------------------------------------------
def spatial_inertia(tape: Tape, mass: Value, com: Sequence[Value], inertia: Sequence[Sequence[Value]]) -> Inertia:
    """The (6, 6) spatial inertia about the frame's origin of a body of ``mass``, centre of mass ``com`` (3,) and
    rotational ``inertia`` (3, 3) about the centre of mass: [[I_c + m c~ c~^T, m c~], [m c~^T, m 1]], c~ the
    cross-product matrix of c (Featherstone, equation 2.63)."""
    zero = tape.const(0.0)
    c = list(com)
    skew = [[zero, -c[2], c[1]], [c[2], zero, -c[0]], [-c[1], c[0], zero]]
    squared = [[(c[0] * c[0] + c[1] * c[1] + c[2] * c[2] if i == j else zero) - c[i] * c[j] for j in range(3)]
               for i in range(3)]  # c~ c~^T = |c|^2 1 - c c^T
    result = [[zero] * 6 for _ in range(6)]
    for i in range(3):
        for j in range(3):
            result[i][j] = inertia[i][j] + mass * squared[i][j]
            result[i][j + 3] = mass * skew[i][j]
            result[j + 3][i] = result[i][j + 3]
        result[i + 3][i + 3] = mass
    return result


def inertia_times(inertia: Sequence[Sequence[Value]], m: Sequence[Value]) -> Six:
    """I m: a (6, 6) spatial inertia applied to a motion vector (6,), a force vector (6,)."""
    return [dot(row, m) for row in inertia]


def inertia_to_parent(tape: Tape, rotation: Mat, position: Vec, inertia: Sequence[Sequence[Value]]) -> Inertia:
    """X^T I X: a (6, 6) spatial inertia of the child's coordinates in the parent's (Featherstone, equation 2.66),
    column by column, the lower triangle mirrored from the upper."""
    zero, one = tape.const(0.0), tape.const(1.0)
    columns = []
    for k in range(6):
        unit = [one if i == k else zero for i in range(6)]
        moved = motion_to_child(rotation, position, unit)
        columns.append(force_to_parent(rotation, position, inertia_times(inertia, moved)))
    return [[columns[j][i] if j >= i else columns[i][j] for j in range(6)] for i in range(6)]
