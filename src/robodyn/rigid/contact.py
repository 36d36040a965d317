"""Compliant contact of frames' points with planes, on the straight-line tape: smooth forces the stiff solvers take.

A contact is the origin p of a frame against the plane through p0 with unit normal n (world frame). With the
gap g = n . (p - p0), the penetration delta = max(-g, 0) and its rate delta' = -n . v (v = Jv q', the origin's
velocity),

- the normal force (Hunt and Crossley) is f_n = max(0, delta^e (k + d delta')): zero at touchdown whatever the
  speed, so the force is continuous (e = 3/2 is Hertz's exponent for a sphere; the max keeps the plane from
  pulling the point back as it leaves);
- friction is Coulomb's, regularized: F_t = -mu f_n v_t / sqrt(|v_t|^2 + eps^2) with v_t the velocity along the
  plane. Sliding faster than eps it is mu f_n against the slip to a relative 1 - eps^2 / (2 |v_t|^2); held by a
  tangential load F < mu f_n the point creeps at |v_t| = eps F / sqrt((mu f_n)^2 - F^2) instead of sticking (a
  box on an incline of slope theta < atan(mu): eps tan(theta) / sqrt(mu^2 - tan(theta)^2)).

The force F = f_n n + F_t acts at the origin: the generalized force Jv^T F joins the joints' forces Q, so the
tree's forward dynamics, its exact Jacobians and every path that uses them see it.

Reference: K. H. Hunt, F. R. E. Crossley, "Coefficient of restitution interpreted as damping in vibroimpact",
J. Applied Mechanics 42 (1975) 440-445; the regularization as in M. A. Sherman, A. Seth, S. L. Delp, "Simbody",
Procedia IUTAM 2 (2011) 241-261.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from robodyn.rigid.kinematics import FrameSpec
from robodyn.rigid.tape import Tape, Value, dot

__all__ = ["ContactForces", "ContactSpec", "Frames", "plane_gap", "plane_normal_row"]


class Frames(Protocol):
    """Frames' poses and Jacobians on a tape: robodyn.rigid.kinematics.KinematicsProgram (a fixed base) or
    robodyn.rigid.floating.MovingFrames (a moving one). ``n`` velocity entries, ``qd`` their leaves."""

    tape: Tape
    n: int
    qd: list[Value]

    def outputs(self, frame: FrameSpec, quantity: str) -> list[Value]: ...


def plane_gap(kinematics: Frames, frame: FrameSpec, point: Sequence[Value], normal: Sequence[Value]
              ) -> Value:
    """g = n . (p - p0): the frame's origin's signed distance (m) from the plane through p0 with unit normal n."""
    pose = kinematics.outputs(frame, "pose")
    return dot([pose[9 + i] - point[i] for i in range(3)], normal)


def plane_normal_row(kinematics: Frames, frame: FrameSpec, normal: Sequence[Value]) -> list[Value]:
    """dg/dq = n^T Jv ``(n,)``: the gap's rate is this row times q'."""
    n = kinematics.n
    jacobian = kinematics.outputs(frame, "jacobian")
    return [dot([jacobian[i * n + j] for i in range(3)], normal) for j in range(n)]


@dataclass(frozen=True, slots=True)
class ContactSpec:
    """Frame ``frame``'s origin against the plane through ``point`` with unit ``normal`` (world; tape values), with
    stiffness k, damping d, exponent e, friction mu and the slip regularization eps (m/s)."""

    frame: FrameSpec
    point: tuple[Value, Value, Value]
    normal: tuple[Value, Value, Value]
    stiffness: Value
    damping: Value
    exponent: Value
    friction: Value
    slip: Value


@dataclass(frozen=True, slots=True)
class ContactForces:
    """Per contact: the normal force f_n, the friction force (3, world) and the slip speed |v_t|, and the
    generalized force of all of them ``(n,)``."""

    normal: list[Value]
    friction: list[list[Value]]
    slip: list[Value]
    generalized: list[Value]

    @staticmethod
    def of(kinematics: Frames, contacts: Sequence[ContactSpec]) -> ContactForces:
        tape, n = kinematics.tape, kinematics.n
        zero = tape.const(0.0)
        generalized = [zero] * n
        normals, frictions, slips = [], [], []
        for contact in contacts:
            jacobian = kinematics.outputs(contact.frame, "jacobian")
            rows = [jacobian[i * n: (i + 1) * n] for i in range(3)]
            velocity = [dot(row, kinematics.qd) for row in rows]
            normal = contact.normal
            gap = plane_gap(kinematics, contact.frame, contact.point, normal)
            depth = tape.binary("max", -gap, zero)
            rate = -dot(velocity, normal)
            force = tape.binary("max", zero, tape.binary("pow", depth, contact.exponent)
                                * (contact.stiffness + contact.damping * rate))
            along = dot(velocity, normal)
            tangential = [velocity[i] - along * normal[i] for i in range(3)]
            slip = dot(tangential, tangential).sqrt()
            scale = -contact.friction * force / (dot(tangential, tangential) + contact.slip * contact.slip).sqrt()
            friction = [scale * tangential[i] for i in range(3)]
            total = [force * normal[i] + friction[i] for i in range(3)]
            for j in range(n):
                generalized[j] = generalized[j] + dot([rows[i][j] for i in range(3)], total)
            normals.append(force)
            frictions.append(friction)
            slips.append(slip)
        return ContactForces(normals, frictions, slips, generalized)
