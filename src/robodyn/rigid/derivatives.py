"""Analytical derivatives of inverse dynamics and the mass matrix of a tree, in world-frame spatial algebra.

Forward mode over the recursive Newton–Euler algorithm (robodyn.rigid.rnea) differentiates every body's velocity,
acceleration and force along every coordinate that moves it: for a humanoid (38 velocities) that is 90,000 tape
nodes. Expressed in one frame (the world's, or a fixed base's), the derivative of a body's quantities along joint
j is a cross product with j's motion vector S_j (the subtree below j turns about it rigidly), so that the
derivatives reduce to a few composite quantities per body and a few 6-vector dot products per pair of a joint and
one of its ancestors. With, in the world frame (spatial vectors linear part first, at the world's origin):

- per joint j: S_j (its motion columns), v_j, a_j (spatial velocity and acceleration, gravity as an upward
  acceleration of the world), I_j (spatial inertia), h_j = I_j v_j, f_j = I_j a_j + v_j x* h_j;
- per subtree k (composites, summed leaves to root): Ic_k, hc_k, F_k and C_k = sum of -(ad(v)^T I + I ad(v))
  (symmetric), so that B_k y = C_k y + y x* hc_k is the derivative of F_k along the velocity y of the subtree's
  bodies;
- u_j = S_j x v_p and p_j = S_j x a_p - u_j x v_p (p the parent of j), c_j = v_j x S_j - u_j;
- for k in the subtree of j (k = j included): d tau_k / d q_j = -(Ic_k S_k) . p_j - (B_k^T S_k) . u_j and
  d tau_k / d q'_j = (B_k^T S_k) . S_j + (Ic_k S_k) . c_j, M_kj = (Ic_k S_k) . S_j;
- for k a strict ancestor of j: d tau_k / d q_j = S_k . D_j and d tau_k / d q'_j = S_k . E_j with
  D_j = S_j x* F_j - Ic_j p_j - B_j u_j (the derivative of F_j along q_j) and E_j = B_j S_j + Ic_j c_j.

A moving base is the root joint of the tree with several columns: S_0 = Ad(M_0) applied to its velocity entries'
twists (root frame), differentiated along the same columns (Pinocchio's tangent space, q (+) dq = M_0 Exp(dq)).
The result is what Pinocchio's ``computeRNEADerivatives`` and ``crba`` return.

References: J. Carpentier, N. Mansard, "Analytical derivatives of rigid body dynamics algorithms", Robotics:
Science and Systems (2018); R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, chapters 2 (spatial
algebra) and 6 (the composite-rigid-body algorithm).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from robodyn.rigid.rnea import Body, joint_of, tree_offsets
from robodyn.rigid.spatial import Mat, Vec, add, cross, matmul, matvec, scale
from robodyn.rigid.tape import Tape, Value, dot

__all__ = ["Inertia", "InverseDerivatives", "MovingRoot", "WorldTree"]

Motion = list[Value]  # six values: linear then angular (a force: force then moment), world frame, at its origin


@dataclass(frozen=True, slots=True)
class MovingRoot:
    """A moving base as the tree's root joint: its pose (R world <- root, p), its motion columns as twists in its own
    frame (linear, angular: one per velocity entry), and the root link's mass, centre of mass (3,) and inertia about
    it (3, 3) in its frame."""

    rotation: Mat
    position: Vec
    columns: Sequence[tuple[Vec, Vec]]
    mass: Value
    com: Sequence[Value]
    inertia: Sequence[Sequence[Value]]


@dataclass(frozen=True, slots=True)
class Inertia:
    """A spatial inertia in the world frame: mass m, first moment h = m c (3,), rotational inertia about the
    world's origin (3 x 3, symmetric)."""

    mass: Value
    moment: Vec
    rotational: Mat

    def times(self, y: Sequence[Value]) -> Motion:
        """I y: (m v - h x w, h x v + I_o w) for y = (v, w)."""
        v, w = y[:3], y[3:]
        linear = add(scale(self.mass, v), cross(w, self.moment))
        return [*linear, *add(cross(self.moment, v), matvec(self.rotational, w))]

    def plus(self, other: Inertia) -> Inertia:
        return Inertia(self.mass + other.mass, add(self.moment, other.moment),
                       [add(a, b) for a, b in zip(self.rotational, other.rotational)])


def _cross_motion(a: Sequence[Value], b: Sequence[Value]) -> Motion:
    """a x b of motion vectors: (w_a x v_b + v_a x w_b, w_a x w_b)."""
    return [*add(cross(a[3:], b[:3]), cross(a[:3], b[3:])), *cross(a[3:], b[3:])]


def _cross_force(a: Sequence[Value], f: Sequence[Value]) -> Motion:
    """a x* f of a motion and a force: (w_a x f, w_a x n + v_a x f)."""
    return [*cross(a[3:], f[:3]), *add(cross(a[3:], f[3:]), cross(a[:3], f[:3]))]




def _plus(a: Sequence[Value], b: Sequence[Value]) -> Motion:
    return [x + y for x, y in zip(a, b)]


def _minus(a: Sequence[Value], b: Sequence[Value]) -> Motion:
    return [x - y for x, y in zip(a, b)]


def _symmetric_times(c: Sequence[Sequence[Value]], y: Sequence[Value]) -> Motion:
    return [dot(row, y) for row in c]


@dataclass(frozen=True, slots=True)
class InverseDerivatives:
    """Inverse dynamics at one motion and its derivatives, in the tree's velocity order (:class:`WorldTree`).

    tau : (size,)
        ID(q, v, a), gravity included.
    dq, dv : (size, size)
        d tau / d q (the moving root's columns: its tangent space) and d tau / d v; rows the forces.
    """

    tau: list[Value]
    dq: list[list[Value]]
    dv: list[list[Value]]


class WorldTree:
    """A tree's bodies in one frame, recorded on ``tape`` as asked: mass matrix and inverse-dynamics derivatives.

    ``bodies`` parent-first (robodyn.rigid.rnea.Body; parent -1: the fixed base, or the moving root's link);
    ``q`` the bodies' joint configurations, flat ``(nq,)`` (robodyn.rigid.rnea.tree_offsets: one value per body for
    one-coordinate joints); ``gravity`` (3,) in the world frame (a fixed base's frame); ``root`` a
    :class:`MovingRoot`, or None for a fixed base. The velocity vector is the root's entries (``nb``, none for a
    fixed base) then each body's joint's ``nv``: ``size`` entries, and every matrix here is ``(size, size)`` in that
    order. A ball joint's derivatives along its configuration are, as the moving root's, along its tangent space
    (R Exp(dq): its columns), as Pinocchio's.
    """

    def __init__(self, tape: Tape, bodies: Sequence[Body], q: Sequence[Value], gravity: Sequence[Value],
                 root: MovingRoot | None = None):
        self.tape, self.bodies, self.root = tape, list(bodies), root
        self.q = list(q)
        self.zero = tape.const(0.0)
        self.gravity = [-g for g in gravity] + [self.zero] * 3  # the world's spatial acceleration: up, g
        offset = 1 if root is not None else 0
        # joint nodes: the moving root (node 0) if any, then the bodies; parent -1 is the world
        self.parent = ([-1] if root else []) + [(b.parent + offset if b.parent >= 0 else (0 if root else -1))
                                                 for b in self.bodies]
        self.offset = offset
        self.nb = len(root.columns) if root else 0
        self.joints = [joint_of(body) for body in self.bodies]
        self.q_starts, _ = tree_offsets(self.bodies)
        starts, start = [], 0
        for node in range(len(self.parent)):
            starts.append(start)
            start += self.nb if (root and node == 0) else self.joints[node - offset].nv
        self.starts, self.size = starts, start

    # --- positions: poses, motion columns, inertias (functions of q only) -------------------------------
    @functools.cached_property
    def poses(self) -> list[tuple[Mat, Vec]]:
        """(R world <- joint frame, p) per node."""
        poses: list[tuple[Mat, Vec]] = []
        if self.root:
            poses.append((self.root.rotation, self.root.position))
        for k, body in enumerate(self.bodies):
            rot, pos = self.joints[k].placement(self.tape, body, self.q[self.q_starts[k]: self.q_starts[k + 1]])
            parent = self.parent[k + self.offset]
            if parent < 0:
                poses.append((rot, pos))
            else:
                r_p, p_p = poses[parent]
                poses.append((matmul(r_p, rot), add(p_p, matvec(r_p, pos))))
        return poses

    @functools.cached_property
    def columns(self) -> list[list[Motion]]:
        """S per node: its motion columns in the world frame."""
        columns: list[list[Motion]] = []
        for node, (rot, pos) in enumerate(self.poses):
            if self.root and node == 0:
                twists = self.root.columns
            else:
                body = self.bodies[node - self.offset]  # its joint's columns (angular first) as (linear, angular)
                twists = [(s[3:], s[:3]) for s in self.joints[node - self.offset].subspace(self.tape, body)]
            node_columns = []
            for linear, angular in twists:
                w = matvec(rot, angular)
                node_columns.append([*add(matvec(rot, linear), cross(pos, w)), *w])
            columns.append(node_columns)
        return columns

    @functools.cached_property
    def inertias(self) -> list[Inertia]:
        """I per node (the root link's for a moving root), world frame at its origin."""
        inertias = []
        for node, (rot, pos) in enumerate(self.poses):
            if self.root and node == 0:
                mass, com, inertia = self.root.mass, self.root.com, self.root.inertia
            else:
                body = self.bodies[node - self.offset]
                mass, com, inertia = body.mass, body.com, body.inertia
            c = add(pos, matvec(rot, com))
            turned = matmul(matmul(rot, inertia), [list(row) for row in zip(*rot)])
            h = scale(mass, c)
            square = c[0] * c[0] + c[1] * c[1] + c[2] * c[2]
            about = [[turned[i][j] + (mass * square if i == j else self.zero) - h[i] * c[j] for j in range(3)]
                     for i in range(3)]
            inertias.append(Inertia(mass, h, about))
        return inertias

    @functools.cached_property
    def composite_inertias(self) -> list[Inertia]:
        """Ic per node: the subtree's inertia."""
        composite = list(self.inertias)
        for node in reversed(range(len(composite))):
            if self.parent[node] >= 0:
                composite[self.parent[node]] = composite[self.parent[node]].plus(composite[node])
        return composite

    @functools.cached_property
    def inertia_columns(self) -> list[list[Motion]]:
        """Ic_k S_k per node and column."""
        return [[ic.times(s) for s in columns] for ic, columns in zip(self.composite_inertias, self.columns)]

    def ancestors(self, node: int) -> list[int]:
        """``node`` and its ancestors, the node first."""
        chain = []
        while node >= 0:
            chain.append(node)
            node = self.parent[node]
        return chain

    @functools.cached_property
    def mass(self) -> list[list[Value]]:
        """M: the composite-rigid-body algorithm, M_kj = (Ic_k S_k) . S_j for j an ancestor of k (or k)."""
        n = self.size
        mass = [[self.zero] * n for _ in range(n)]
        for k, alphas in enumerate(self.inertia_columns):
            for j in self.ancestors(k):
                for e, alpha in enumerate(alphas):
                    for c, s in enumerate(self.columns[j]):
                        row, col = self.starts[k] + e, self.starts[j] + c
                        mass[row][col] = mass[col][row] = dot(alpha, s)
        return mass

    # --- motion: velocities, accelerations, forces ------------------------------------------------------
    def inverse_derivatives(self, velocity: Sequence[Value], acceleration: Sequence[Value]) -> InverseDerivatives:
        """ID and its derivatives at the velocity and acceleration vectors (``size`` each, the tree's order)."""
        return _Motion(self, velocity, acceleration).result()

    def inverse(self, velocity: Sequence[Value], acceleration: Sequence[Value]) -> list[Value]:
        """ID ``(size,)`` alone, gravity included (with zero accelerations: the bias forces c(q, v))."""
        return _Motion(self, velocity, acceleration).tau


class _Motion:
    """The recursions of :meth:`WorldTree.inverse_derivatives` at one motion."""

    def __init__(self, tree: WorldTree, velocity: Sequence[Value], acceleration: Sequence[Value]):
        self.tree, self.zero, self.tape = tree, tree.zero, tree.tape
        self.parent, self.columns, self.inertias = tree.parent, tree.columns, tree.inertias
        self.rates = [list(velocity[s: s + len(c)]) for s, c in zip(tree.starts, tree.columns)]
        self.second = [list(acceleration[s: s + len(c)]) for s, c in zip(tree.starts, tree.columns)]

    @functools.cached_property
    def motion(self) -> tuple[list[Motion], list[Motion], list[Motion], list[Motion]]:
        """(v, a, h, f) per node."""
        velocities: list[Motion] = []
        accelerations: list[Motion] = []
        momenta: list[Motion] = []
        forces: list[Motion] = []
        for node, columns in enumerate(self.columns):
            parent = self.parent[node]
            v_p = velocities[parent] if parent >= 0 else [self.zero] * 6
            a_p = accelerations[parent] if parent >= 0 else self.tree.gravity
            rates, second = self.rates[node], self.second[node]
            relative = [self.zero] * 6
            joint_acc = [self.zero] * 6
            for s, rate, acc in zip(columns, rates, second):
                relative = _plus(relative, [rate * e for e in s])
                joint_acc = _plus(joint_acc, [acc * e for e in s])
            v = _plus(v_p, relative)
            a = _plus(_plus(a_p, joint_acc), _cross_motion(v, relative))
            inertia = self.inertias[node]
            h = inertia.times(v)
            velocities.append(v)
            accelerations.append(a)
            momenta.append(h)
            forces.append(_plus(inertia.times(a), _cross_force(v, h)))
        return velocities, accelerations, momenta, forces

    def _coriolis(self, node: int) -> list[list[Value]]:
        """-(ad(v)^T I + I ad(v)) of the node's body (symmetric 6 x 6)."""
        v = self.motion[0][node]
        inertia = self.inertias[node]
        units = [[self.tape.const(1.0) if i == j else self.zero for i in range(6)] for j in range(6)]
        product = [inertia.times(_cross_motion(v, e)) for e in units]  # column e of I ad(v)
        return [[-(product[j][i] + product[i][j]) for j in range(6)] for i in range(6)]

    @functools.cached_property
    def subtree_forces(self) -> list[Motion]:
        """F per node: the force its joint transmits, the subtree's f summed."""
        F = list(self.motion[3])
        for node in reversed(range(len(F))):
            if self.parent[node] >= 0:
                F[self.parent[node]] = _plus(F[self.parent[node]], F[node])
        return F

    @functools.cached_property
    def tau(self) -> list[Value]:
        """tau = S_k . F_k per column."""
        F = self.subtree_forces
        return [dot(s, F[node]) for node, columns in enumerate(self.columns) for s in columns]

    @functools.cached_property
    def composites(self) -> tuple[list[Motion], list[Motion], list[list[list[Value]]]]:
        """(F, hc, C) per node: the subtree's force, momentum and Coriolis matrix."""
        momenta = self.motion[2]
        hc = list(momenta)
        C = [self._coriolis(node) for node in range(len(hc))]
        for node in reversed(range(len(hc))):
            parent = self.parent[node]
            if parent >= 0:
                hc[parent] = _plus(hc[parent], hc[node])
                C[parent] = [_plus(a, b) for a, b in zip(C[parent], C[node])]
        return self.subtree_forces, hc, C

    def result(self) -> InverseDerivatives:
        """tau = S_k . F_k per column, and the derivatives of the module docstring."""
        velocities, accelerations, _, _ = self.motion
        F, hc, C = self.composites
        tree = self.tree
        tau = self.tau
        n = tree.size
        dq = [[self.zero] * n for _ in range(n)]
        dv = [[self.zero] * n for _ in range(n)]
        nodes = range(len(self.columns))
        u, p, c, beta, D, E = ([] for _ in range(6))
        for node in nodes:
            parent = self.parent[node]
            v_p = velocities[parent] if parent >= 0 else [self.zero] * 6
            a_p = accelerations[parent] if parent >= 0 else tree.gravity
            ic = tree.composite_inertias[node]
            u.append([_cross_motion(s, v_p) for s in self.columns[node]])
            p.append([_minus(_cross_motion(s, a_p), _cross_motion(w, v_p))
                      for s, w in zip(self.columns[node], u[node])])
            c.append([_minus(_cross_motion(velocities[node], s), w) for s, w in zip(self.columns[node], u[node])])
            cs = [_symmetric_times(C[node], s) for s in self.columns[node]]
            beta.append([_minus(x, _cross_force(s, hc[node])) for x, s in zip(cs, self.columns[node])])
            D.append([_minus(_minus(_cross_force(s, F[node]), ic.times(pp)),
                             _plus(_symmetric_times(C[node], w), _cross_force(w, hc[node])))
                      for s, pp, w in zip(self.columns[node], p[node], u[node])])
            E.append([_plus(_plus(x, _cross_force(s, hc[node])), ic.times(cc))
                      for x, s, cc in zip(cs, self.columns[node], c[node])])
        alphas = tree.inertia_columns
        for k in nodes:
            for j in tree.ancestors(k):
                for e in range(len(self.columns[k])):
                    row = tree.starts[k] + e
                    alpha, b = alphas[k][e], beta[k][e]
                    for col_index in range(len(self.columns[j])):
                        col = tree.starts[j] + col_index
                        s_j = self.columns[j][col_index]
                        dq[row][col] = -(dot(alpha, p[j][col_index]) + dot(b, u[j][col_index]))
                        dv[row][col] = dot(b, s_j) + dot(alpha, c[j][col_index])
                        if j != k:
                            dq[col][row] = dot(s_j, D[k][e])
                            dv[col][row] = dot(s_j, E[k][e])
        return InverseDerivatives(tau, dq, dv)
