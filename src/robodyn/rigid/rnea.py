"""Recursive Newton–Euler on a straight-line tape: inverse dynamics, mass-matrix columns, positions.

Every quantity — rotation entries, velocities, accelerations, forces — is a node of a
:class:`~robodyn.rigid.tape.Tape`, so the cost grows linearly with the number of bodies for inverse
dynamics (and quadratically for the mass matrix, one pass per column), never with the size of a
closed form.

- :func:`rnea`: joint forces tau = ID(q, q', q'') of a tree of rigid bodies, vector form in body
  coordinates (J. J. Craig, *Introduction to Robotics*, 3rd ed., section 6.5; R. Featherstone,
  *Rigid Body Dynamics Algorithms*, Springer 2008, section 5.3);
- :func:`centres_of_mass`: the bodies' centres of mass in the base frame;
- :func:`cholesky_solve`: M^-1 applied to right-hand sides, as straight-line code.

Each body's joint (robodyn.rigid.joints: revolute, prismatic or spherical) has ``nq`` configuration and ``nv``
velocity entries; the algorithms take the configuration ``q`` and the velocities, accelerations and forces flat, in
body order, each body's entries where :func:`tree_offsets` says. For a tree of revolute and prismatic joints that is
one value per body, body k's at k.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from robodyn.base.errors import InputError
from robodyn.rigid.joints import PRISMATIC, REVOLUTE, Joint
from robodyn.rigid.spatial import Mat, Vec, add, compose, cross, force_to_parent, matvec, scale, tmatvec
from robodyn.rigid.tape import Tape, Value

__all__ = ["Body", "TreeFactor", "body_motions", "centres_of_mass", "check_one_coordinate", "cholesky_factor",
           "cholesky_solve", "joint_of", "newton_euler", "placement", "rnea", "to_parent", "tree_offsets",
           "world_frames"]


@dataclass(frozen=True, slots=True)
class Body:
    """One body of a kinematic tree and the joint that connects it to its parent, as tape values.

    parent : int
        Index of the parent body (bodies come after their parents), -1 for the fixed base.
    prismatic : bool
        False for a revolute joint.
    axis : (3,)
        Unit joint axis in the joint frame (the frame that moves with the joint, origin on its axis).
    rotation : (3, 3), position : (3,)
        Fixed placement of the joint frame (at q = 0) in the parent body's joint frame.
    mass, com : (3,), inertia : (3, 3)
        Mass, centre of mass and inertia about the centre of mass, in the joint frame.
    joint : Joint or None
        A joint of robodyn.rigid.joints (``SPHERICAL``: a ball joint, ``prismatic`` False and ``axis`` unused);
        None for the one-coordinate joint ``prismatic`` says.
    """

    parent: int
    prismatic: bool
    axis: tuple[Value, ...]
    rotation: tuple[tuple[Value, ...], ...]
    position: tuple[Value, ...]
    mass: Value
    com: tuple[Value, ...]
    inertia: tuple[tuple[Value, ...], ...]
    joint: Joint | None = None


def joint_of(body: Body) -> Joint:
    """The body's joint (robodyn.rigid.joints): its own, else revolute or prismatic as ``prismatic`` says."""
    if body.joint is not None:
        return body.joint
    return PRISMATIC if body.prismatic else REVOLUTE


def check_one_coordinate(bodies: Sequence[Body], what: str) -> None:
    """InputError when a body's joint has more than one coordinate (a ball joint), for the programs that still take
    one coordinate per body (``what`` names the program)."""
    for k, body in enumerate(bodies):
        joint = joint_of(body)
        if joint.nq != 1 or joint.nv != 1:
            raise InputError(f"body {k} has a {joint.kind} joint: {what} takes revolute and prismatic joints only; "
                             "the tree algorithms (robodyn.rigid.rnea, derivatives, aba) take any joint")


def tree_offsets(bodies: Sequence[Body]) -> tuple[list[int], list[int]]:
    """Where each body's entries start in the flat configuration and velocity vectors: ``(B + 1,)`` each, the last
    the totals ``nq``, ``nv`` (body k's configuration is ``q[starts_q[k]:starts_q[k + 1]]``)."""
    starts_q, starts_v = [0], [0]
    for body in bodies:
        joint = joint_of(body)
        starts_q.append(starts_q[-1] + joint.nq)
        starts_v.append(starts_v[-1] + joint.nv)
    return starts_q, starts_v


def placement(tape: Tape, body: Body, q: Value | Sequence[Value]) -> tuple[Mat, Vec]:
    """Rotation parent <- body and the body origin in the parent frame at the joint's configuration ``q``: its
    ``nq`` entries, or the coordinate of a one-coordinate joint (Rodrigues for a revolute one)."""
    return joint_of(body).placement(tape, body, [q] if isinstance(q, Value) else q)


def rnea(tape: Tape, bodies: Sequence[Body], q: Sequence[Value], qd: Sequence[Value], qdd: Sequence[Value],
         gravity: Sequence[Value]) -> list[Value]:
    """Joint forces tau = ID(q, q', q'') of a tree on a fixed base, recorded on ``tape``: ``(nv,)``, each body's
    joint's ``nv`` entries in body order (:func:`tree_offsets`).

    ``q`` ``(nq,)``, ``qd`` and ``qdd`` ``(nv,)`` are flat in body order (constant zeros prune the tape); ``gravity``
    is the gravity vector in the base frame. Bodies must come after their parents.
    """
    zero = [tape.const(0.0)] * 3
    return newton_euler(tape, bodies, q, qd, qdd, (zero, zero, [-g for g in gravity]))[0]


def newton_euler(tape: Tape, bodies: Sequence[Body], q: Sequence[Value], qd: Sequence[Value], qdd: Sequence[Value],
                 base: tuple[Sequence[Value], Sequence[Value], Sequence[Value]]) -> tuple[list[Value], Vec, Vec]:
    """Recursive Newton–Euler with the base moving: (tau ``(nv,)``, force, moment), the last two the resultant
    the bodies' joints exert on the base, in the base frame at its origin.

    ``base = (w, alpha, a)``: the base's angular velocity, angular acceleration and the classical acceleration
    of its origin, in the base frame, gravity included as an upward acceleration (a fixed base: zeros and -g).
    """
    zero = [tape.const(0.0)] * 3
    rotations: list[Mat] = []
    positions: list[Vec] = []
    forces: list[Vec] = []
    moments: list[Vec] = []
    for body, (rot, pos, w, al, acc) in zip(bodies, _forward(tape, bodies, q, qd, qdd, base)):
        rotations.append(rot)  # each body's wrench right after its motion: the tape's order (and its nodes' numbers)
        positions.append(pos)
        forces.append(scale(body.mass, add(acc, cross(al, body.com), cross(w, cross(w, body.com)))))
        moments.append(add(matvec(body.inertia, al), cross(w, matvec(body.inertia, w)),
                            cross(body.com, forces[-1])))
    _, starts = tree_offsets(bodies)
    tau: list[Value] = [tape.const(0.0)] * starts[-1]
    root_force, root_moment = list(zero), list(zero)
    for i in reversed(range(len(bodies))):
        body = bodies[i]
        tau[starts[i]: starts[i + 1]] = joint_of(body).project(body, forces[i], moments[i])
        f_parent, n_parent = to_parent(rotations[i], positions[i], forces[i], moments[i])
        if body.parent >= 0:
            forces[body.parent] = add(forces[body.parent], f_parent)
            moments[body.parent] = add(moments[body.parent], n_parent)
        else:
            root_force, root_moment = add(root_force, f_parent), add(root_moment, n_parent)
    return tau, root_force, root_moment


def to_parent(rotation: Mat, position: Vec, force: Sequence[Value], moment: Sequence[Value]) -> tuple[Vec, Vec]:
    """A body's force and moment (about its origin, in its frame) in its parent's frame about the parent's origin,
    for the body placed at (``rotation``, ``position``) in its parent."""
    moved = force_to_parent(rotation, position, [*moment, *force])
    return moved[3:], moved[:3]


def body_motions(tape: Tape, bodies: Sequence[Body], q: Sequence[Value], qd: Sequence[Value], qdd: Sequence[Value],
                 base: tuple[Sequence[Value], Sequence[Value], Sequence[Value]]
                 ) -> tuple[list[Mat], list[Vec], list[Vec], list[Vec], list[Vec]]:
    """Newton–Euler's forward pass: each body's placement in its parent (rotation parent <- body, origin) and its
    angular velocity, angular acceleration and the acceleration of its origin, in its own frame (``base`` as in
    :func:`newton_euler`), as five lists in body order."""
    found = list(_forward(tape, bodies, q, qd, qdd, base))
    return ([m[0] for m in found], [m[1] for m in found], [m[2] for m in found], [m[3] for m in found],
            [m[4] for m in found])


def _forward(tape: Tape, bodies: Sequence[Body], q: Sequence[Value], qd: Sequence[Value], qdd: Sequence[Value],
             base: tuple[Sequence[Value], Sequence[Value], Sequence[Value]]
             ) -> Iterator[tuple[Mat, Vec, Vec, Vec, Vec]]:
    """:func:`body_motions` one body at a time (rotation, origin, w, alpha, a), parents first."""
    omega: list[Vec] = []
    alpha: list[Vec] = []
    accel: list[Vec] = []
    base_w, base_alpha, base_acc = (list(v) for v in base)
    starts_q, starts_v = tree_offsets(bodies)
    for i, body in enumerate(bodies):
        joint, rates = joint_of(body), slice(starts_v[i], starts_v[i + 1])
        rot, pos = joint.placement(tape, body, q[starts_q[i]: starts_q[i + 1]])
        w_p, al_p, a_p = (base_w, base_alpha, base_acc) if body.parent < 0 else (
            omega[body.parent], alpha[body.parent], accel[body.parent])
        a_origin = add(a_p, cross(al_p, pos), cross(w_p, cross(w_p, pos)))
        w_in, al_in, a_in = tmatvec(rot, w_p), tmatvec(rot, al_p), tmatvec(rot, a_origin)
        w, al, acc = joint.motion(tape, body, w_in, al_in, a_in, qd[rates], qdd[rates])
        omega.append(w)
        alpha.append(al)
        accel.append(acc)
        yield rot, pos, w, al, acc


def world_frames(tape: Tape, bodies: Sequence[Body], q: Sequence[Value]) -> list[tuple[Mat, Vec]]:
    """(R, p) of every body's joint frame in the base frame, one per body (R: base <- joint frame); ``q`` ``(nq,)``."""
    frames: list[tuple[Mat, Vec]] = []
    starts, _ = tree_offsets(bodies)
    for i, body in enumerate(bodies):
        rot, pos = joint_of(body).placement(tape, body, q[starts[i]: starts[i + 1]])
        if body.parent < 0:
            frames.append((rot, pos))
        else:
            frames.append(compose(frames[body.parent], (rot, pos)))
    return frames


def centres_of_mass(tape: Tape, bodies: Sequence[Body], q: Sequence[Value]) -> list[Vec]:
    """Centres of mass of the bodies in the base frame: one (3,) per body; ``q`` ``(nq,)``."""
    return [add(p, matvec(r, body.com)) for (r, p), body in zip(world_frames(tape, bodies, q), bodies)]


def cholesky_factor(matrix: Sequence[Sequence[Value]]) -> list[list[Value]]:
    """The lower Cholesky factor L of a symmetric positive definite matrix (its lower triangle is read).

    Not positive definite: a square root of a negative number or a division by zero makes the entries
    NaN or infinite, which callers check (no branch on the tape).
    Reference: G. H. Golub, C. F. Van Loan, *Matrix Computations*, 4th ed., algorithm 4.2.1.
    """
    n = len(matrix)
    lower: list[list[Value]] = [[matrix[0][0]] * n for _ in range(n)]
    for j in range(n):
        square = matrix[j][j]
        for k in range(j):
            square = square - lower[j][k] * lower[j][k]
        lower[j][j] = square.sqrt()
        for i in range(j + 1, n):
            entry = matrix[i][j]
            for k in range(j):
                entry = entry - lower[i][k] * lower[j][k]
            lower[i][j] = entry / lower[j][j]
    return lower


def cholesky_solve(lower: Sequence[Sequence[Value]], rhs: Sequence[Value]) -> list[Value]:
    """M^-1 rhs from the Cholesky factor of M: L z = rhs, then L^T x = z."""
    n = len(rhs)
    z: list[Value] = list(rhs)
    for i in range(n):
        for k in range(i):
            z[i] = z[i] - lower[i][k] * z[k]
        z[i] = z[i] / lower[i][i]
    x = list(z)
    for i in reversed(range(n)):
        for k in range(i + 1, n):
            x[i] = x[i] - lower[k][i] * x[k]
        x[i] = x[i] / lower[i][i]
    return x


class TreeFactor:
    """The Cholesky factor of a tree's mass matrix taken leaves first, so that it keeps the tree's sparsity.

    M_ij of a tree is zero unless coordinate i moves a body on the path of j's (an ancestor or a descendant): the
    tape holds those entries as constant zeros. Factored in the order of the bodies (parents first) the fill-in is
    dense; factored leaves first (``order``: the coordinates from the tree's leaves to its root, the reverse of a
    parent-first order) there is none: the factor's entries are zero unless j is an ancestor of i, and the tape's
    folding of zeros leaves O(n depth) operations per solve instead of O(n^2) — Featherstone's LTL factorization,
    M = L^T L, written as a Cholesky factorization of the reordered matrix.

    Reference: R. Featherstone, "Efficient factorization of the joint-space inertia matrix for branched kinematic
    trees", Int. J. Robotics Research 24 (2005) 487-500; *Rigid Body Dynamics Algorithms*, section 6.5.
    """

    def __init__(self, matrix: Sequence[Sequence[Value]], order: Sequence[int]):
        self.order = list(order)
        self.lower = cholesky_factor([[matrix[i][j] for j in self.order] for i in self.order])

    def solve(self, rhs: Sequence[Value]) -> list[Value]:
        """M^-1 rhs, in the matrix's own order."""
        solved = cholesky_solve(self.lower, [rhs[i] for i in self.order])
        result = list(rhs)
        for k, i in enumerate(self.order):
            result[i] = solved[k]
        return result
