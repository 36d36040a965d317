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

from robodyn.rigid.rnea import Body, cholesky_factor, cholesky_solve, placement
from robodyn.rigid.spatial import (
    Inertia,
    Mat,
    Six,
    Vec,
    force_cross,
    force_to_parent,
    inertia_times,
    inertia_to_parent,
    motion_cross,
    motion_to_child,
    spatial_inertia,
)
from robodyn.rigid.tape import Tape, Value, dot

__all__ = ["articulated_accelerations"]


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
        moved = motion_to_child(rotation, position, parent_v)
        v = [moved[k] + joint_v[k] for k in range(6)]
        velocity.append(v)
        bias_acc.append(motion_cross(v, joint_v))
        spatial = spatial_inertia(tape, body.mass, body.com, body.inertia)
        inertia.append(spatial)
        bias_force.append(force_cross(v, inertia_times(spatial, v)))
    root_inertia = root_force = None
    if root is not None:
        root_inertia = spatial_inertia(tape, *root)
        root_force = force_cross(root_v, inertia_times(root_inertia, root_v))
    U: list[Six] = [[]] * count
    D: list[Value] = [tape.const(1.0)] * count
    u: list[Value] = [tape.const(0.0)] * count
    for i in reversed(range(count)):
        body, (rotation, position) = bodies[i], frames[i]
        U[i] = inertia_times(inertia[i], axes[i])
        D[i] = dot(axes[i], U[i]) + armature[i]
        u[i] = tau[i] - dot(axes[i], bias_force[i])
        if body.parent < 0 and root is None:
            continue
        articulated = [[inertia[i][r][c] - U[i][r] * U[i][c] / D[i] for c in range(6)] for r in range(6)]
        carried = inertia_times(articulated, bias_acc[i])
        pa = [bias_force[i][k] + carried[k] + U[i][k] * u[i] / D[i] for k in range(6)]
        up_inertia = inertia_to_parent(tape, rotation, position, articulated)
        up_force = force_to_parent(rotation, position, pa)
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
        pulled = inertia_times(root_inertia, fall)
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
        moved = motion_to_child(rotation, position, parent_a)
        a = [moved[k] + bias_acc[i][k] for k in range(6)]
        qdd[i] = (u[i] - dot(U[i], a)) / D[i]
        accelerations.append([a[k] + qdd[i] * axes[i][k] for k in range(6)])
    return qdd, base_acc
