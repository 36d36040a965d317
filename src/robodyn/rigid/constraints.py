"""Bilateral constraints on the straight-line tape: closed loops, points held on paths, and the dynamics they leave.

A constraint row holds one component of a frame's pose: a world axis of the origin (``x``, ``y``, ``z``) or of the
orientation (``rx``, ``ry``, ``rz``), of frame a relative to frame b (a loop: the two frames meet) or to a path c(t)
given in the world frame (origins only); or it drives a coordinate, q_i = c(t) (J's row is e_i). Per row
:class:`ConstraintProgram` records

- the residual phi(t, q): p_a - p_b (or p_a - c(t)) along the axis, or along a unit ``direction`` n (a point held
  on a plane, n . p_a = c: a resting contact); for an orientation axis the rotation vector
  of R_a R_b^T to first order, 1/2 vee(R_a R_b^T - R_b R_a^T) (zero exactly when the frames agree; a pose loop
  is meant to close, where this is the small-angle rotation);
- its Jacobian row J = Jv_a - Jv_b (Jw for an orientation axis; robodyn.rigid.kinematics, world axes), so that
  the velocity residual is J q' - c'(t);
- J'q' - c''(t), the part of the acceleration residual J q'' + J'q' - c'' that does not depend on q''.

Constrained forward dynamics (index 1, stabilized):

    M q'' = Q - c + J^T lambda,    J q'' = gamma = -(J'q' - c'') - 2 alpha (J q' - c') - alpha^2 phi

solved through the tree's own factor of M (robodyn.rigid.rnea.TreeFactor): q''_0 = M^-1 (Q - c) (the free tree's
acceleration), Y = M^-1 J^T (one solve per row), S = J Y (k x k, positive definite while the rows are independent)
and lambda = S^-1 (gamma - J q''_0) by Cholesky on the tape, q'' = q''_0 + Y lambda. lambda is the force (moment)
the constraint applies to frame a along the row's world axis; frame b gets its opposite. The gamma terms in alpha
are Baumgarte's stabilization: the residual obeys phi'' + 2 alpha phi' + alpha^2 phi = 0 (critically damped at the
rate alpha, 1/s), so integration error that leaves the constraint decays instead of growing; on the constraint
(phi = phi' = 0) they vanish, so they change neither the motion nor its linearization there.

References: J. Baumgarte, "Stabilization of constraints and integrals of motion in dynamical systems", Computer
Methods in Applied Mechanics and Engineering 1 (1972) 1-16; R. Featherstone, *Rigid Body Dynamics Algorithms*,
Springer 2008, chapter 8 (closed loops).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from robodyn.rigid.kinematics import FrameSpec, KinematicsProgram
from robodyn.rigid.rnea import TreeFactor, cholesky_factor, cholesky_solve
from robodyn.rigid.tape import Value, dot

__all__ = ["AXES", "ConstraintProgram", "ConstraintRow"]

#: The components a row can hold: the origin along a world axis, or the orientation about one.
AXES: Final = ("x", "y", "z", "rx", "ry", "rz")


@dataclass(frozen=True, slots=True)
class ConstraintRow:
    """Frame ``a`` relative to frame ``b`` (a loop) or to a path (``b`` None: ``path`` = (c, c', c'') along the
    axis, tape values of t) along world axis ``axis`` (an index of :data:`AXES`); or, with ``a`` None, coordinate
    ``coordinate`` driven along ``path`` (a driving constraint: q_i = c(t)). With ``direction`` (a unit world vector
    n of tape values; ``b`` None) the row holds n . p_a on the path instead of one axis (``axis`` is then 0)."""

    a: FrameSpec | None
    b: FrameSpec | None
    axis: int
    path: tuple[Value, Value, Value] | None = None
    coordinate: int | None = None
    direction: tuple[Value, Value, Value] | None = None


class ConstraintProgram:
    """The residuals, Jacobian and constrained dynamics of ``rows`` on a tree's tape (see the module docstring).

    ``kinematics`` records the frames; ``tree`` is M's leaves-first factor, ``free`` the tree's own q''_0 = M^-1
    (Q - c) and ``alpha`` the Baumgarte rate (a tape value, 1/s).
    """

    def __init__(self, kinematics: KinematicsProgram, rows: Sequence[ConstraintRow], tree: TreeFactor,
                 free: Sequence[Value], alpha: Value):
        self.kinematics, self.rows, self.tree = kinematics, list(rows), tree
        self.free, self.alpha = list(free), alpha
        self.tape, self.n = kinematics.tape, kinematics.n

    def _frame(self, frame: FrameSpec, quantity: str) -> list[Value]:
        return self.kinematics.outputs(frame, quantity)

    @functools.cached_property
    def residual(self) -> list[Value]:
        """phi ``(k,)``."""
        result = []
        for row in self.rows:
            if row.a is None:
                assert row.path is not None and row.coordinate is not None
                result.append(self.kinematics.q[row.coordinate] - row.path[0])
                continue
            pose_a = self._frame(row.a, "pose")
            if row.direction is not None:
                assert row.path is not None
                result.append(dot(pose_a[9:12], row.direction) - row.path[0])
                continue
            if row.axis < 3:
                value = pose_a[9 + row.axis]
                if row.b is not None:
                    value = value - self._frame(row.b, "pose")[9 + row.axis]
                else:
                    assert row.path is not None
                    value = value - row.path[0]
            else:
                value = self._rotation_residual(pose_a, row)
            result.append(value)
        return result

    def _rotation_residual(self, pose_a: list[Value], row: ConstraintRow) -> Value:
        """1/2 vee(E - E^T)[axis - 3] with E = R_a R_b^T (R_b = I for a path: the frame held in the world's
        orientation)."""
        i, j = {3: (2, 1), 4: (0, 2), 5: (1, 0)}[row.axis]  # vee: (E_21 - E_12, E_02 - E_20, E_10 - E_01) / 2
        pose_b = self._frame(row.b, "pose") if row.b is not None else None

        def entry(r: int, c: int) -> Value:  # (R_a R_b^T)[r, c] = sum_k R_a[r, k] R_b[c, k]
            if pose_b is None:
                return pose_a[3 * r + c]
            total = pose_a[3 * r] * pose_b[3 * c]
            for k in (1, 2):
                total = total + pose_a[3 * r + k] * pose_b[3 * c + k]
            return total

        return (entry(i, j) - entry(j, i)) * self.tape.const(0.5)

    @functools.cached_property
    def jacobian(self) -> list[list[Value]]:
        """J ``(k, n)``: d phi / dq along the motion (for orientation rows, exactly where the frames agree)."""
        n, result = self.n, []
        zero, one = self.tape.const(0.0), self.tape.const(1.0)
        for row in self.rows:
            if row.a is None:
                result.append([one if j == row.coordinate else zero for j in range(n)])
                continue
            full = self._frame(row.a, "jacobian")
            if row.direction is not None:
                result.append([dot([full[i * n + j] for i in range(3)], row.direction) for j in range(n)])
                continue
            line = full[row.axis * n: (row.axis + 1) * n]
            if row.b is not None:
                other = self._frame(row.b, "jacobian")[row.axis * n: (row.axis + 1) * n]
                line = [a - b for a, b in zip(line, other)]
            result.append(list(line))
        return result

    @functools.cached_property
    def velocity(self) -> list[Value]:
        """J q' - c' ``(k,)``: the velocity residual."""
        qd = self.kinematics.qd
        result = []
        for row, line in zip(self.rows, self.jacobian):
            value = dot(line, qd)
            if row.path is not None:
                value = value - row.path[1]
            result.append(value)
        return result

    @functools.cached_property
    def bias(self) -> list[Value]:
        """J'q' - c'' ``(k,)``: the acceleration residual at q'' = 0."""
        result = []
        for row in self.rows:
            if row.a is None:
                value = self.tape.const(0.0)
            elif row.direction is not None:
                value = dot(self._frame(row.a, "bias")[:3], row.direction)
            else:
                value = self._frame(row.a, "bias")[row.axis]
            if row.b is not None:
                value = value - self._frame(row.b, "bias")[row.axis]
            elif row.path is not None:
                value = value - row.path[2]
            result.append(value)
        return result

    @functools.cached_property
    def _solution(self) -> tuple[list[Value], list[Value]]:
        """q'' ``(n,)`` and lambda ``(k,)`` of the stabilized constrained dynamics."""
        jacobian, alpha = self.jacobian, self.alpha
        two = self.tape.const(2.0)
        y = [self.tree.solve(line) for line in jacobian]  # the columns of M^-1 J^T
        s = [[dot(line, column) for column in y] for line in jacobian]
        gamma = [-b - two * alpha * v - alpha * alpha * r
                 for b, v, r in zip(self.bias, self.velocity, self.residual)]
        rhs = [g - dot(line, self.free) for g, line in zip(gamma, jacobian)]
        forces = cholesky_solve(cholesky_factor(s), rhs)
        acceleration = list(self.free)
        for column, force in zip(y, forces):
            acceleration = [a + c * force for a, c in zip(acceleration, column)]
        return acceleration, forces

    @property
    def acceleration(self) -> list[Value]:
        """q'' ``(n,)`` under the constraints."""
        return self._solution[0]

    @property
    def forces(self) -> list[Value]:
        """lambda ``(k,)``: the constraint force on frame a along each row's axis (N, or N m for orientation rows)."""
        return self._solution[1]
