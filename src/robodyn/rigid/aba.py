"""Forward dynamics of a tree by the articulated-body algorithm, on the straight-line tape: O(n) operations.

The manipulator form q'' = M^-1 (Q - c) costs n inverse-dynamics passes for M and n^3/6 for its factor: ~47,000
tape nodes for a 38-velocity humanoid. :func:`articulated_accelerations` records Featherstone's articulated-body
algorithm instead — three passes over the bodies with 6 x 6 articulated inertias, a few hundred nodes per body —
for a fixed base or a moving one (robodyn.rigid.base_joints: the root's articulated inertia solved for its
acceleration). Spatial vectors are in body coordinates at the body's joint-frame origin, angular part first;
gravity enters as the acceleration of the frame (a - a_g propagates as a does), so the bodies' bias forces hold
only velocity products.

Bodies follow robodyn.rigid.rnea.Body, each with its own joint (robodyn.rigid.joints; a model whose coordinates drive
several bodies, mimic joints, keeps the manipulator form). A joint of ``nv`` velocities has the motion columns S
(6 x nv), U = I^A S, D = S^T U (nv x nv) and u = tau - S^T p^A (nv); a one-coordinate joint divides by its scalar
D, a ball joint solves with D's Cholesky factor (Featherstone, table 7.1 in its multi-dof form). ``armature`` (the
joints' reflected rotor inertias, one per velocity entry) adds to D's diagonal, as it adds to M's.

Reference: R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, sections 7.3 (the algorithm, table
7.1), 9.3 (floating bases: FDfb) and 2.13 (spatial inertia).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from robodyn.rigid.rnea import Body, cholesky_factor, cholesky_solve, joint_of, tree_offsets
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
    """The bodies' joint accelerations ``(nv,)`` and, for a moving root, the rates of its velocity entries.

    ``q`` ``(nq,)`` and ``qd``, ``tau``, ``armature`` ``(nv,)`` are flat in body order (robodyn.rigid.rnea.tree_offsets:
    one value per body for one-coordinate joints): the joints' configurations, rates, net generalized forces and
    reflected rotor inertias; ``gravity`` is in the root's frame. A fixed root: ``root`` and ``base`` None.
    A moving root: ``root = (mass, com, inertia)`` of the root link in its frame, ``base = (v, w)`` its linear and
    angular velocity there, and ``subspace`` the spatial components (angular first: 0-2 angular, 3-5 linear) its
    velocity entries are, in their order (a free-flyer: (3, 4, 5, 0, 1, 2), Pinocchio's linear-first order; planar:
    (3, 4, 2)); the second result is then d/dt of those entries: with S selecting them, (S^T I^A S) a_b =
    S^T (I^A a_g - p^A), the root's articulated inertia I^A and bias force p^A, a_g the acceleration of gravity.
    """
    zero = [tape.const(0.0)] * 3
    count = len(bodies)
    _, starts_v = tree_offsets(bodies)
    root_v = [*base[1], *base[0]] if base is not None else [*zero, *zero]
    frames, axes, bias_acc, inertia, bias_force = _outward(tape, bodies, q, qd, root_v)
    root_inertia = root_force = None
    if root is not None:
        root_inertia = spatial_inertia(tape, *root)
        root_force = force_cross(root_v, inertia_times(root_inertia, root_v))
    blocks: list[_JointBlock] = [None] * count  # type: ignore[list-item]
    for i in reversed(range(count)):
        body, (rotation, position), rates = bodies[i], frames[i], slice(starts_v[i], starts_v[i + 1])
        blocks[i] = block = _JointBlock(inertia[i], axes[i], bias_force[i], tau[rates], armature[rates])
        if body.parent < 0 and root is None:
            continue
        articulated = block.articulated(inertia[i])
        carried = inertia_times(articulated, bias_acc[i])
        pa = [bias_force[i][k] + carried[k] + block.pushed(k) for k in range(6)]
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
        root_acc, base_acc = _root_acceleration(root_inertia, root_force, gravity, subspace, zero)
    accelerations: list[Six] = []
    qdd: list[Value] = [tape.const(0.0)] * starts_v[-1]
    for i, body in enumerate(bodies):
        rotation, position = frames[i]
        parent_a = root_acc if body.parent < 0 else accelerations[body.parent]
        moved = motion_to_child(rotation, position, parent_a)
        a = [moved[k] + bias_acc[i][k] for k in range(6)]
        qdd[starts_v[i]: starts_v[i + 1]] = joint_qdd = blocks[i].accelerations(a)
        accelerations.append(_combined(a, axes[i], joint_qdd))
    return qdd, base_acc


def _outward(tape: Tape, bodies: Sequence[Body], q: Sequence[Value], qd: Sequence[Value], root_v: Six
             ) -> tuple[list[tuple[Mat, Vec]], list[list[Six]], list[Six], list[Inertia], list[Six]]:
    """The first pass, parents first: per body its placement in its parent, its joint's motion columns, the
    velocity-product acceleration v x (S q'), its spatial inertia and its bias force v x* I v (body frame)."""
    starts_q, starts_v = tree_offsets(bodies)
    frames: list[tuple[Mat, Vec]] = []
    velocity: list[Six] = []
    bias_acc: list[Six] = []
    inertia: list[Inertia] = []
    bias_force: list[Six] = []
    axes: list[list[Six]] = []
    for i, body in enumerate(bodies):
        joint = joint_of(body)
        rotation, position = joint.placement(tape, body, q[starts_q[i]: starts_q[i + 1]])
        frames.append((rotation, position))
        axes.append(joint.subspace(tape, body))
        parent_v = root_v if body.parent < 0 else velocity[body.parent]
        joint_v = _combined(None, axes[i], qd[starts_v[i]: starts_v[i + 1]])
        moved = motion_to_child(rotation, position, parent_v)
        v = [moved[k] + joint_v[k] for k in range(6)]
        velocity.append(v)
        bias_acc.append(motion_cross(v, joint_v))
        spatial = spatial_inertia(tape, body.mass, body.com, body.inertia)
        inertia.append(spatial)
        bias_force.append(force_cross(v, inertia_times(spatial, v)))
    return frames, axes, bias_acc, inertia, bias_force


def _combined(start: Six | None, columns: Sequence[Six], rates: Sequence[Value]) -> Six:
    """start + S rates (6,): the columns ``S`` times the rates, added to ``start`` (None: nothing), column by column."""
    result = list(start) if start is not None else None
    for column, rate in zip(columns, rates):
        result = [rate * e for e in column] if result is None else [result[k] + rate * column[k] for k in range(6)]
    assert result is not None
    return result


def _root_acceleration(root_inertia: Inertia, root_force: Six, gravity: Vec, subspace: Sequence[int],
                       zero: Vec) -> tuple[Six, list[Value]]:
    """A moving root's acceleration less gravity's (what propagates to the bodies) and the rates of its velocity
    entries: (S^T I^A S) a_b = S^T (I^A a_g - p^A)."""
    fall = [*zero, *gravity]  # a_g, the acceleration of free fall (angular part zero)
    pulled = inertia_times(root_inertia, fall)
    reduced = [[root_inertia[r][c] for c in subspace] for r in subspace]
    base_acc = cholesky_solve(cholesky_factor(reduced), [pulled[r] - root_force[r] for r in subspace])
    full = list(zero) + list(zero)
    for k, r in enumerate(subspace):
        full[r] = base_acc[k]
    return [full[k] - fall[k] for k in range(6)], base_acc  # a - a_g


class _JointBlock:
    """One joint's terms of the articulated-body algorithm: U = I^A S (nv columns), D = S^T U + armature (nv x nv)
    and u = tau - S^T p^A (nv), with D^-1 applied by a scalar division (one coordinate: the operations every tree
    of one-coordinate joints has always recorded) or by D's Cholesky factor."""

    def __init__(self, inertia: Inertia, columns: Sequence[Six], bias: Six, tau: Sequence[Value],
                 armature: Sequence[Value]):
        self.U = [inertia_times(inertia, s) for s in columns]
        self.D = [[dot(s, u) + armature[r] if r == c else dot(s, u) for c, u in enumerate(self.U)]
                  for r, s in enumerate(columns)]
        self.u = [t - dot(s, bias) for t, s in zip(tau, columns)]
        self.factor = cholesky_factor(self.D) if len(columns) > 1 else None

    def _solve(self, rhs: Sequence[Value]) -> list[Value]:
        """D^-1 rhs (nv,)."""
        if self.factor is None:
            return [rhs[0] / self.D[0][0]]
        return cholesky_solve(self.factor, rhs)

    def articulated(self, inertia: Inertia) -> Inertia:
        """I^a = I^A - U D^-1 U^T (6 x 6)."""
        U = self.U
        if self.factor is None:
            return [[inertia[r][c] - U[0][r] * U[0][c] / self.D[0][0] for c in range(6)] for r in range(6)]
        solved = [self._solve([u[c] for u in U]) for c in range(6)]  # column c of D^-1 U^T
        return [[inertia[r][c] - dot([u[r] for u in U], solved[c]) for c in range(6)] for r in range(6)]

    def pushed(self, k: int) -> Value:
        """Entry k of U D^-1 u (6,): what the joint's force passes on to the parent's bias force."""
        if self.factor is None:
            return self.U[0][k] * self.u[0] / self.D[0][0]
        return dot([u[k] for u in self.U], self._solved_force)

    @functools.cached_property
    def _solved_force(self) -> list[Value]:
        """D^-1 u (nv,)."""
        return self._solve(self.u)

    def accelerations(self, a: Six) -> list[Value]:
        """q'' = D^-1 (u - U^T a) (nv,) for the body's acceleration ``a`` before its joint's own."""
        return self._solve([u - dot(U, a) for u, U in zip(self.u, self.U)])
