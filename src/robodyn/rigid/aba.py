"""Forward dynamics of a tree by the articulated-body algorithm, on the straight-line tape: O(n) operations.

The manipulator form q'' = M^-1 (Q - c) costs n inverse-dynamics passes for M and n^3/6 for its factor: ~47,000
tape nodes for a 38-velocity humanoid. :func:`articulated_accelerations` records Featherstone's articulated-body
algorithm instead — three passes over the bodies with 6 x 6 articulated inertias, a few hundred nodes per body —
for a fixed base or a moving one (robodyn.rigid.base_joints: the root's articulated inertia solved for its
acceleration). Spatial vectors are in body coordinates at the body's joint-frame origin, angular part first;
gravity enters as the acceleration of the frame (a - a_g propagates as a does), so the bodies' bias forces hold
only velocity products.

Bodies follow robodyn.rigid.rnea.Body (one coordinate each; a model whose coordinates drive several bodies, mimic
joints, keeps the manipulator form). ``armature`` (the joints' reflected rotor inertias) adds to each joint's
articulated inertia D, as it adds to M's diagonal.

Reference: R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, sections 7.3 (the algorithm, table
7.1), 9.3 (floating bases: FDfb) and 2.13 (spatial inertia).
"""

from __future__ import annotations

from collections.abc import Sequence

from robodyn.rigid.rnea import (
    Body,
    Mat,
    Vec,
    _add,
    _cross,
    _matvec,
    _tmatvec,
    cholesky_factor,
    cholesky_solve,
    placement,
)
from robodyn.rigid.tape import Tape, Value, dot

__all__ = ["articulated_accelerations"]

Six = list[Value]  # a spatial vector: angular (or moment) part, then linear (or force) part
Inertia = list[list[Value]]  # a symmetric 6 x 6 spatial inertia


def _spatial_inertia(tape: Tape, mass: Value, com: Sequence[Value], inertia: Sequence[Sequence[Value]]) -> Inertia:
    """[[I_c + m c~ c~^T, m c~], [m c~^T, m 1]] about the frame's origin (c~ the cross-product matrix of c)."""
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


def _motion_in(rotation: Mat, position: Vec, m: Six) -> Six:
    """X m: a motion vector of the parent's frame in the child's (child placed at (rotation, position))."""
    w, v = m[:3], m[3:]
    return [*_tmatvec(rotation, w), *_tmatvec(rotation, [v[i] - e for i, e in enumerate(_cross(position, w))])]


def _force_out(rotation: Mat, position: Vec, f: Six) -> Six:
    """X^T f: a force of the child's frame in the parent's."""
    force = _matvec(rotation, f[3:])
    return [*_add(_matvec(rotation, f[:3]), _cross(position, force)), *force]


def _inertia_out(tape: Tape, rotation: Mat, position: Vec, inertia: Inertia) -> Inertia:
    """X^T I X: an inertia of the child's frame in the parent's, column by column (lower triangle mirrored)."""
    zero, one = tape.const(0.0), tape.const(1.0)
    columns = []
    for k in range(6):
        unit = [one if i == k else zero for i in range(6)]
        moved = _motion_in(rotation, position, unit)
        columns.append(_force_out(rotation, position, _apply(inertia, moved)))
    return [[columns[j][i] if j >= i else columns[i][j] for j in range(6)] for i in range(6)]


def _apply(inertia: Inertia, m: Sequence[Value]) -> Six:
    return [dot(row, m) for row in inertia]




def _cross_motion(a: Six, b: Six) -> Six:
    """a x b for motion vectors."""
    return [*_cross(a[:3], b[:3]), *_add(_cross(a[:3], b[3:]), _cross(a[3:], b[:3]))]


def _cross_force(a: Six, f: Six) -> Six:
    """a x* f: a motion vector acting on a force."""
    return [*_add(_cross(a[:3], f[:3]), _cross(a[3:], f[3:])), *_cross(a[:3], f[3:])]


def articulated_accelerations(
    tape: Tape, bodies: Sequence[Body], q: Sequence[Value], qd: Sequence[Value], tau: Sequence[Value],
    armature: Sequence[Value], gravity: Vec,
    root: tuple[Value, Sequence[Value], Sequence[Sequence[Value]]] | None = None,
    base: tuple[Vec, Vec] | None = None, subspace: Sequence[int] = (3, 4, 5, 0, 1, 2),
) -> tuple[list[Value], list[Value] | None]:
    """The bodies' joint accelerations (one per body) and, for a moving root, the rates of its velocity entries.

    ``q``, ``qd``, ``tau``, ``armature`` hold one value per body (the joint's coordinate, rate, net generalized
    force and reflected rotor inertia); ``gravity`` is in the root's frame. A fixed root: ``root`` and ``base`` None.
    A moving root: ``root = (mass, com, inertia)`` of the root link in its frame, ``base = (v, w)`` its linear and
    angular velocity there, and ``subspace`` the spatial components (angular first: 0-2 angular, 3-5 linear) its
    velocity entries are, in their order (a free-flyer: (3, 4, 5, 0, 1, 2), Pinocchio's linear-first order; planar:
    (3, 4, 2)); the second result is then d/dt of those entries: with S selecting them, (S^T I^A S) a_b =
    S^T (I^A a_g - p^A), the root's articulated inertia I^A and bias force p^A, a_g the acceleration of gravity.
    """
    zero = [tape.const(0.0)] * 3
    count = len(bodies)
    frames: list[tuple[Mat, Vec]] = []
    velocity: list[Six] = []
    bias_acc: list[Six] = []
    inertia: list[Inertia] = []
    bias_force: list[Six] = []
    axes: list[Six] = []
    root_v = [*base[1], *base[0]] if base is not None else [*zero, *zero]
    for i, body in enumerate(bodies):
        rotation, position = placement(tape, body, q[i])
        frames.append((rotation, position))
        axis = [*zero, *body.axis] if body.prismatic else [*body.axis, *zero]
        axes.append(axis)
        parent_v = root_v if body.parent < 0 else velocity[body.parent]
        joint_v = [qd[i] * e for e in axis]
        moved = _motion_in(rotation, position, parent_v)
        v = [moved[k] + joint_v[k] for k in range(6)]
        velocity.append(v)
        bias_acc.append(_cross_motion(v, joint_v))
        spatial = _spatial_inertia(tape, body.mass, body.com, body.inertia)
        inertia.append(spatial)
        bias_force.append(_cross_force(v, _apply(spatial, v)))
    root_inertia = root_force = None
    if root is not None:
        root_inertia = _spatial_inertia(tape, *root)
        root_force = _cross_force(root_v, _apply(root_inertia, root_v))
    U: list[Six] = [[]] * count
    D: list[Value] = [tape.const(1.0)] * count
    u: list[Value] = [tape.const(0.0)] * count
    for i in reversed(range(count)):
        body, (rotation, position) = bodies[i], frames[i]
        U[i] = _apply(inertia[i], axes[i])
        D[i] = dot(axes[i], U[i]) + armature[i]
        u[i] = tau[i] - dot(axes[i], bias_force[i])
        if body.parent < 0 and root is None:
            continue
        articulated = [[inertia[i][r][c] - U[i][r] * U[i][c] / D[i] for c in range(6)] for r in range(6)]
        carried = _apply(articulated, bias_acc[i])
        pa = [bias_force[i][k] + carried[k] + U[i][k] * u[i] / D[i] for k in range(6)]
        up_inertia, up_force = _inertia_out(tape, rotation, position, articulated), _force_out(rotation, position, pa)
        if body.parent < 0:
            root_inertia = [[root_inertia[r][c] + up_inertia[r][c] for c in range(6)] for r in range(6)]  # type: ignore[index]
            root_force = [root_force[k] + up_force[k] for k in range(6)]  # type: ignore[index]
        else:
            p = body.parent
            inertia[p] = [[inertia[p][r][c] + up_inertia[r][c] for c in range(6)] for r in range(6)]
            bias_force[p] = [bias_force[p][k] + up_force[k] for k in range(6)]
    if root is None:
        root_acc = [*zero, *(-g for g in gravity)]  # the frame accelerates upwards instead of gravity pulling down
        base_acc = None
    else:
        assert root_inertia is not None and root_force is not None
        fall = [*zero, *gravity]  # a_g, the acceleration of free fall (angular part zero)
        pulled = _apply(root_inertia, fall)
        reduced = [[root_inertia[r][c] for c in subspace] for r in subspace]
        base_acc = cholesky_solve(cholesky_factor(reduced), [pulled[r] - root_force[r] for r in subspace])
        full = list(zero) + list(zero)
        for k, r in enumerate(subspace):
            full[r] = base_acc[k]
        root_acc = [full[k] - fall[k] for k in range(6)]  # a - a_g: what propagates to the bodies
    accelerations: list[Six] = []
    qdd: list[Value] = [tape.const(0.0)] * count
    for i, body in enumerate(bodies):
        rotation, position = frames[i]
        parent_a = root_acc if body.parent < 0 else accelerations[body.parent]
        moved = _motion_in(rotation, position, parent_a)
        a = [moved[k] + bias_acc[i][k] for k in range(6)]
        qdd[i] = (u[i] - dot(U[i], a)) / D[i]
        accelerations.append([a[k] + qdd[i] * axes[i][k] for k in range(6)])
    return qdd, base_acc
