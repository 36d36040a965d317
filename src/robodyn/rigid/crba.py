"""The mass matrix of a tree of rigid bodies in plain numpy: the composite-rigid-body algorithm, nothing compiled.

The tape (:mod:`robodyn.rigid.dynamics`) records M(q) as n inverse-dynamics passes, O(n^2) nodes, worth
compiling when M is evaluated many times. A model checked once when it is loaded (is M positive definite:
robodyn.model.plausibility) needs one number-valued M: :class:`NumericTree` takes the bodies' constants
from the tape at given parameters (:meth:`robodyn.rigid.tape.Tape.evaluate`, a few nodes per body) and
:meth:`NumericTree.mass_matrix` computes M(q) by the composite-rigid-body algorithm in world coordinates,
O(n * depth) small numpy operations: milliseconds for a 200-joint chain, against minutes and gigabytes to
record and compile the tape's M.

The conventions are those of :class:`robodyn.rigid.rnea.Body`: body k's joint frame is placed at
(rotation, position) in its parent's joint frame at q = 0 and moves about (revolute) or along (prismatic)
its unit ``axis`` by theta_k = multiplier_k q[coordinate_k] + offset_k; the reflected rotor inertias are
added on M's diagonal, as the tape's M does.

Reference: R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, section 6.2 (CRBA) and
section 2.13 (spatial inertia).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robodyn.rigid.dynamics import ManipulatorProgram

__all__ = ["NumericTree", "empty_subtrees"]


@dataclass(frozen=True, slots=True)
class NumericTree:
    """A tree of rigid bodies as numbers (B bodies, parents first, n coordinates).

    parent : (B,) int, -1 for the base; prismatic : (B,) bool; axis : (B, 3) unit, joint frame;
    rotation : (B, 3, 3) and position : (B, 3), the placement at q = 0 in the parent's joint frame;
    mass : (B,); com : (B, 3) and inertia : (B, 3, 3) about the centre of mass, joint frame;
    coordinate : (B,) int, multiplier : (B,), offset : (B,): theta_k = multiplier q[coordinate] + offset;
    rotor : (n,) the reflected rotor inertia of each coordinate.
    """

    parent: np.ndarray
    prismatic: np.ndarray
    axis: np.ndarray
    rotation: np.ndarray
    position: np.ndarray
    mass: np.ndarray
    com: np.ndarray
    inertia: np.ndarray
    coordinate: np.ndarray
    multiplier: np.ndarray
    offset: np.ndarray
    rotor: np.ndarray

    @staticmethod
    def from_program(program: ManipulatorProgram, parameters: Sequence[float]) -> NumericTree:
        """The bodies of ``program`` at the parameter values ``parameters`` ``(n_params,)`` (the tape
        interpreted: the bodies' constants depend on the parameters only)."""
        bodies, couplings = program.bodies, program.couplings
        values = [*(v for b in bodies for v in (*b.axis, *(e for row in b.rotation for e in row), *b.position,
                                                  b.mass, *b.com, *(e for row in b.inertia for e in row))),
                  *(v for _, multiplier, offset in couplings for v in (multiplier, offset)),
                  *(joint.rotor for joint in program.joints)]
        count = len(bodies)
        numbers = np.array(program.tape.evaluate(values, ([0.0], [0.0] * len(program.x), [0.0] * len(program.u),
                                                           list(parameters), [0.0] * program.n)))
        per_body = numbers[: 28 * count].reshape(count, 28)
        coupled = numbers[28 * count: 30 * count].reshape(count, 2)
        return NumericTree(np.array([b.parent for b in bodies], dtype=int), np.array([b.prismatic for b in bodies]),
                           per_body[:, 0:3], per_body[:, 3:12].reshape(count, 3, 3), per_body[:, 12:15],
                           per_body[:, 15], per_body[:, 16:19], per_body[:, 19:28].reshape(count, 3, 3),
                           np.array([c for c, _, _ in couplings], dtype=int), coupled[:, 0], coupled[:, 1],
                           numbers[30 * count:])

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """M(q) ``(n, n)`` at the coordinates ``q`` ``(n,)``: CRBA with spatial vectors in world coordinates at
        the world origin (angular part first)."""
        count = len(self.parent)
        theta = self.multiplier * np.asarray(q, dtype=float)[self.coordinate] + self.offset
        motion = np.zeros((count, 6))  # each joint's motion subspace S_k
        spatial = np.zeros((count, 6, 6))
        world_r, world_p = np.empty((count, 3, 3)), np.empty((count, 3))
        for k in range(count):
            r, p = self._placement(k, theta[k])
            if self.parent[k] >= 0:
                r_parent, p_parent = world_r[self.parent[k]], world_p[self.parent[k]]
                r, p = r_parent @ r, p_parent + r_parent @ p
            world_r[k], world_p[k] = r, p
            s = r @ self.axis[k]
            motion[k] = np.concatenate([np.zeros(3), s]) if self.prismatic[k] else np.concatenate([s, np.cross(p, s)])
            spatial[k] = _spatial_inertia(self.mass[k], p + r @ self.com[k], r @ self.inertia[k] @ r.T)
        for k in reversed(range(count)):  # composite inertias: each subtree's bodies added to its root
            if self.parent[k] >= 0:
                spatial[self.parent[k]] += spatial[k]
        forces = np.einsum("kij,kj->ki", spatial, motion)
        full = np.zeros((count, count))
        for k in range(count):
            line = _ancestry(self.parent, k)
            full[k, line] = motion[line] @ forces[k]
            full[line, k] = full[k, line]
        coupling = np.zeros((count, len(self.rotor)))
        coupling[np.arange(count), self.coordinate] = self.multiplier
        return coupling.T @ full @ coupling + np.diag(self.rotor)

    def _placement(self, k: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
        """(R, p) of body k's joint frame in its parent's at joint position ``theta`` (as rnea.placement)."""
        a, rotation = self.axis[k], self.rotation[k]
        if self.prismatic[k]:
            return rotation, self.position[k] + theta * (rotation @ a)
        c, s = np.cos(theta), np.sin(theta)
        skew = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
        return rotation @ (c * np.eye(3) + s * skew + (1.0 - c) * np.outer(a, a)), self.position[k]

    def carries(self) -> np.ndarray:
        """(B,) bool: whether each body has a mass or a rotational inertia of its own."""
        return (self.mass != 0) | np.any(self.inertia.reshape(len(self.mass), 9) != 0, axis=1)


def _spatial_inertia(mass: float, centre: np.ndarray, inertia: np.ndarray) -> np.ndarray:
    """The 6 x 6 spatial inertia at the world origin of a body with ``mass`` at ``centre`` (3,) and rotational
    ``inertia`` (3, 3) about it, world axes: [[I_c + m [c]x [c]x^T, m [c]x], [-m [c]x, m 1]]."""
    cross = np.array([[0.0, -centre[2], centre[1]], [centre[2], 0.0, -centre[0]], [-centre[1], centre[0], 0.0]])
    result = np.empty((6, 6))
    result[:3, :3] = inertia + mass * (cross @ cross.T)
    result[:3, 3:] = mass * cross
    result[3:, :3] = -mass * cross
    result[3:, 3:] = mass * np.eye(3)
    return result


def _ancestry(parent: np.ndarray, k: int) -> np.ndarray:
    """Body k and its ancestors (indices)."""
    line = [k]
    while parent[line[-1]] >= 0:
        line.append(int(parent[line[-1]]))
    return np.array(line)


def empty_subtrees(parent: Sequence[int] | np.ndarray, carries: Sequence[bool] | np.ndarray) -> list[bool]:
    """For each body of a tree (parents first), whether neither it nor any body below it has a mass or an
    inertia: the joints of those bodies move nothing, so the mass matrix is singular."""
    loaded = [bool(c) for c in carries]
    for k in reversed(range(len(loaded))):
        if loaded[k] and parent[k] >= 0:
            loaded[parent[k]] = True
    return [not c for c in loaded]
