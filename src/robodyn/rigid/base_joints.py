"""The joints between the world and a robot's root link that are not bolted down: free-flyer and planar, on the tape.

A base joint has ``nq`` configuration entries and ``nv`` velocity entries (``nq = nv + 1``), in Pinocchio's
conventions so that numbers compare one to one:

==============  ====  ====  ===========================================  ==========================================
joint           nq    nv    configuration                                velocity (in the root link's own frame)
==============  ====  ====  ===========================================  ==========================================
``floating``    7     6     position x y z (world), unit quaternion       linear vx vy vz, angular wx wy wz
                            x y z w (world <- root)
``planar``      4     3     x y (world), cos(theta), sin(theta)           linear vx vy, angular wz
==============  ====  ====  ===========================================  ==========================================

Each class records on a :class:`~robodyn.rigid.tape.Tape`:

- :meth:`pose` — the root's rotation R (world <- root) and position p from a stored configuration;
- :meth:`derivative` — the configuration's time derivative for a velocity (p' = R v, quaternion' = 1/2 q (w, 0),
  ...): the equations of motion in stored coordinates (what ``f`` returns);
- a *chart* around a centre c: configurations c (+) d for a tangent vector d (``nv``), with
  :meth:`chart_pose` (the pose at c (+) d), :meth:`chart_rate` (d' for a velocity, so that c (+) d(t) moves with
  it) and :meth:`recentred` (the stored configuration c (+) d). The integrators take their steps in the chart
  centred at the step's start (robodyn.integrate: ``chart``), so the quaternion stays unit to round-off.

The chart of the free-flyer is position and orientation apart, both in the root's frame at the centre:
p = p_c + R_c dp, R = R_c Exp(phi); then dp' = Exp(phi) v and phi' = Jr(phi)^-1 w, with Jr the right Jacobian of
SO(3). It is not Pinocchio's SE(3) ``integrate`` (robodyn.mechanisms.floating.configuration has that one): the two agree
to first order at the centre, which is all the steps and the derivatives at d = 0 use. The planar chart is the
same in the plane. Functions of the angle with a removable singularity at 0 (sin(t/2)/t, the coefficient of
Jr^-1) are taken from their Taylor series below SMALL_ANGLE, blended without a branch on the tape (a step
function of theta^2), so that derivatives at d = 0 are exact and never 0 * inf.

References: J. Sola, J. Deray, D. Atchuthan, "A micro Lie theory for state estimation in robotics",
arXiv:1812.01537 (2018), appendices A-B (SO(3), SE(2) Jacobians); H. Munthe-Kaas, "High order Runge-Kutta methods
on manifolds", Appl. Numer. Math. 29 (1999) (steps in local coordinates).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from robodyn.rigid.spatial import Mat, Vec, cross, matvec
from robodyn.rigid.tape import Tape, Value

__all__ = ["BASE_JOINTS", "BaseJoint", "FreeFlyer", "PlanarBase", "base_joint", "quaternion_matrix"]

SMALL_ANGLE: Final = 1e-2  # Below this angle (rad) the Taylor series: the truncation error is < 1e-17 there.


def quaternion_matrix(quaternion: Sequence[Value]) -> Mat:
    """The rotation matrix of a unit quaternion (x, y, z, w)."""
    x, y, z, w = quaternion
    return [[1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w)],
            [2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w)],
            [2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y)]]


def quaternion_product(a: Sequence[Value], b: Sequence[Value]) -> list[Value]:
    """a b for quaternions (x, y, z, w)."""
    va, vb = list(a[:3]), list(b[:3])
    crossed = cross(va, vb)
    return [a[3] * vb[i] + b[3] * va[i] + crossed[i] for i in range(3)] + [
        a[3] * b[3] - (va[0] * vb[0] + va[1] * vb[1] + va[2] * vb[2])]


def _blend(tape: Tape, square: Value, exact: object, series: Sequence[float]) -> Value:
    """f(theta) from theta^2: ``exact(theta)`` above SMALL_ANGLE (theta floored there, so never 0), else the
    polynomial ``series`` in theta^2; the choice is a step function, whose derivative is zero."""
    floor = SMALL_ANGLE * SMALL_ANGLE
    theta = tape.binary("max", square, tape.const(floor)).sqrt()
    polynomial = tape.const(series[-1])
    for coefficient in reversed(series[:-1]):
        polynomial = polynomial * square + coefficient
    above = tape.unary("step", square - floor)
    return above * exact(theta) + (1.0 - above) * polynomial  # type: ignore[operator]


def rotation_exp(tape: Tape, phi: Sequence[Value]) -> list[Value]:
    """Exp(phi) of a rotation vector as a unit quaternion (x, y, z, w): (sin(t/2)/t phi, cos(t/2)), t = |phi|."""
    square = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
    sinc = _blend(tape, square, lambda t: (0.5 * t).sin() / t, (0.5, -1.0 / 48.0, 1.0 / 3840.0, -1.0 / 645120.0))
    cosine = _blend(tape, square, lambda t: (0.5 * t).cos(), (1.0, -1.0 / 8.0, 1.0 / 384.0, -1.0 / 46080.0))
    return [sinc * phi[0], sinc * phi[1], sinc * phi[2], cosine]


def inverse_right_jacobian(tape: Tape, phi: Sequence[Value], w: Sequence[Value]) -> Vec:
    """Jr(phi)^-1 w = w + 1/2 phi x w + beta phi x (phi x w), beta = 1/t^2 - (1 + cos t) / (2 t sin t)."""
    square = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
    beta = _blend(tape, square, lambda t: 1.0 / (t * t) - (1.0 + t.cos()) / (2.0 * t * t.sin()),
                  (1.0 / 12.0, 1.0 / 720.0, 1.0 / 30240.0, 1.0 / 1209600.0))
    once = cross(phi, w)
    twice = cross(phi, once)
    return [w[i] + 0.5 * once[i] + beta * twice[i] for i in range(3)]


class BaseJoint:
    """A base joint's geometry on the tape (see the module docstring); subclasses fill in the conventions."""

    kind: str
    nq: int
    nv: int
    subspace: tuple[int, ...]  # the spatial components (0-2 angular, 3-5 linear) of the velocity entries
    #: Names of the configuration and velocity entries, after ``base_``.
    configuration_names: tuple[str, ...]
    velocity_names: tuple[str, ...]

    def pose(self, tape: Tape, q: Sequence[Value]) -> tuple[Mat, Vec]:
        raise NotImplementedError

    def twist(self, tape: Tape, v: Sequence[Value]) -> tuple[Vec, Vec]:
        """The root's linear and angular velocity (3 + 3, root frame) from the ``nv`` velocity entries."""
        raise NotImplementedError

    def project(self, force: Vec, moment: Vec) -> list[Value]:
        """The ``nv`` generalized forces of a wrench on the root (root frame, at its origin)."""
        raise NotImplementedError

    def derivative(self, tape: Tape, q: Sequence[Value], v: Sequence[Value]) -> list[Value]:
        raise NotImplementedError

    def chart_pose(self, tape: Tape, centre: Sequence[Value], d: Sequence[Value]) -> tuple[Mat, Vec]:
        raise NotImplementedError

    def chart_rate(self, tape: Tape, d: Sequence[Value], v: Sequence[Value]) -> list[Value]:
        raise NotImplementedError

    def recentred(self, tape: Tape, centre: Sequence[Value], d: Sequence[Value]) -> list[Value]:
        raise NotImplementedError


class FreeFlyer(BaseJoint):
    """Six degrees of freedom: Pinocchio's ``JointModelFreeFlyer``."""

    kind, nq, nv = "floating", 7, 6
    subspace = (3, 4, 5, 0, 1, 2)  # the spatial components (angular first) of the velocity entries, in their order
    configuration_names = ("x", "y", "z", "qx", "qy", "qz", "qw")
    velocity_names = ("vx", "vy", "vz", "wx", "wy", "wz")

    def pose(self, tape: Tape, q: Sequence[Value]) -> tuple[Mat, Vec]:
        return quaternion_matrix(q[3:7]), list(q[:3])

    def twist(self, tape: Tape, v: Sequence[Value]) -> tuple[Vec, Vec]:
        return list(v[:3]), list(v[3:6])

    def project(self, force: Vec, moment: Vec) -> list[Value]:
        return [*force, *moment]

    def derivative(self, tape: Tape, q: Sequence[Value], v: Sequence[Value]) -> list[Value]:
        rotation, _ = self.pose(tape, q)
        half = [0.5 * e for e in quaternion_product(q[3:7], [v[3], v[4], v[5], tape.const(0.0)])]
        return [*matvec(rotation, v[:3]), *half]

    def chart_pose(self, tape: Tape, centre: Sequence[Value], d: Sequence[Value]) -> tuple[Mat, Vec]:
        rotation_c = quaternion_matrix(centre[3:7])
        moved = matvec(rotation_c, d[:3])
        return (quaternion_matrix(quaternion_product(centre[3:7], rotation_exp(tape, d[3:6]))),
                [centre[i] + moved[i] for i in range(3)])

    def chart_rate(self, tape: Tape, d: Sequence[Value], v: Sequence[Value]) -> list[Value]:
        turn = quaternion_matrix(rotation_exp(tape, d[3:6]))
        return [*matvec(turn, v[:3]), *inverse_right_jacobian(tape, d[3:6], v[3:6])]

    def recentred(self, tape: Tape, centre: Sequence[Value], d: Sequence[Value]) -> list[Value]:
        moved = matvec(quaternion_matrix(centre[3:7]), d[:3])
        return [*(centre[i] + moved[i] for i in range(3)), *quaternion_product(centre[3:7], rotation_exp(tape, d[3:6]))]


class PlanarBase(BaseJoint):
    """Motion in the world's x-y plane: Pinocchio's ``JointModelPlanar`` (q = x, y, cos theta, sin theta)."""

    kind, nq, nv = "planar", 4, 3
    subspace = (3, 4, 2)
    configuration_names = ("x", "y", "cos", "sin")
    velocity_names = ("vx", "vy", "wz")

    def pose(self, tape: Tape, q: Sequence[Value]) -> tuple[Mat, Vec]:
        zero, one = tape.const(0.0), tape.const(1.0)
        c, s = q[2], q[3]
        return [[c, -s, zero], [s, c, zero], [zero, zero, one]], [q[0], q[1], zero]

    def twist(self, tape: Tape, v: Sequence[Value]) -> tuple[Vec, Vec]:
        zero = tape.const(0.0)
        return [v[0], v[1], zero], [zero, zero, v[2]]

    def project(self, force: Vec, moment: Vec) -> list[Value]:
        return [force[0], force[1], moment[2]]

    def derivative(self, tape: Tape, q: Sequence[Value], v: Sequence[Value]) -> list[Value]:
        c, s = q[2], q[3]
        return [c * v[0] - s * v[1], s * v[0] + c * v[1], -(s * v[2]), c * v[2]]

    def _turned(self, centre: Sequence[Value], angle: Value) -> tuple[Value, Value]:
        c, s = angle.cos(), angle.sin()
        return centre[2] * c - centre[3] * s, centre[3] * c + centre[2] * s

    def chart_pose(self, tape: Tape, centre: Sequence[Value], d: Sequence[Value]) -> tuple[Mat, Vec]:
        return self.pose(tape, self.recentred(tape, centre, d))

    def chart_rate(self, tape: Tape, d: Sequence[Value], v: Sequence[Value]) -> list[Value]:
        c, s = d[2].cos(), d[2].sin()
        return [c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]]

    def recentred(self, tape: Tape, centre: Sequence[Value], d: Sequence[Value]) -> list[Value]:
        cos_c, sin_c = centre[2], centre[3]
        cosine, sine = self._turned(centre, d[2])
        return [centre[0] + cos_c * d[0] - sin_c * d[1], centre[1] + sin_c * d[0] + cos_c * d[1], cosine, sine]


BASE_JOINTS: Final = {"floating": FreeFlyer, "planar": PlanarBase}


def base_joint(kind: str) -> BaseJoint:
    """The base joint of a kind (``floating`` or ``planar``)."""
    return BASE_JOINTS[kind]()
