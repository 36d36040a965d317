"""Configurations of a robot on a moving base as points of a Lie group: q (+) v and q1 (-) q0, in numpy.

For a free-flyer the base's configuration is a rigid motion (p, R) in SE(3) and its velocity a twist in the base's
frame, so ``integrate(q, v) = q Exp(v)`` and ``difference(q0, q1) = Log(q0^-1 q1)`` with SE(3)'s exponential and
logarithm — Pinocchio's ``integrate`` and ``difference`` for ``JointModelFreeFlyer``, equal to round-off. A planar
base is the same in SE(2); the joints add their velocities. These define the tangent space in which
``linearize`` differentiates (x (-) x0) and in which a configuration is displaced.

The functions take one configuration ``(nq,)`` or a batch ``(N, nq)`` (and ``(nv,)`` or ``(N, nv)``).

Reference: J. Sola, J. Deray, D. Atchuthan, "A micro Lie theory for state estimation in robotics",
arXiv:1812.01537 (2018), examples 5-7 (SE(2), SE(3)); Pinocchio's ``exp6``/``log6`` follow the same formulas.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from robodyn.base.errors import InputError, ShapeError

__all__ = [
    "chart_recentre",
    "configuration_difference",
    "configuration_integrate",
    "difference",
    "integrate_configuration",
    "quaternion_matrices",
    "rotation_series",
]

_SERIES: Final = 1e-4  # Below this angle the Taylor series of the coefficients (the error is < 1e-17 there).


def _skew(w: np.ndarray) -> np.ndarray:
    """(..., 3) -> (..., 3, 3) cross-product matrices."""
    zero = np.zeros(w.shape[:-1])
    return np.stack([np.stack([zero, -w[..., 2], w[..., 1]], -1), np.stack([w[..., 2], zero, -w[..., 0]], -1),
                     np.stack([-w[..., 1], w[..., 0], zero], -1)], -2)


def quaternion_matrices(quaternions: np.ndarray) -> np.ndarray:
    """(..., 4) unit quaternions (x, y, z, w) -> (..., 3, 3) rotation matrices."""
    x, y, z, w = (quaternions[..., i] for i in range(4))
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                     np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                     np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], -2)


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    va, vb, wa, wb = a[..., :3], b[..., :3], a[..., 3:], b[..., 3:]
    return np.concatenate([wa * vb + wb * va + np.cross(va, vb), wa * wb - np.sum(va * vb, -1, keepdims=True)], -1)


def rotation_series(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """sin(t)/t, (1 - cos t)/t^2, (t - sin t)/t^3 for angles ``theta`` (any shape, >= 0), each of that shape, with
    their Taylor series near t = 0 (the coefficients of the exponential of so(3) and se(2))."""
    small = theta < _SERIES
    t = np.where(small, 1.0, theta)
    t2 = theta * theta
    a = np.where(small, 1 - t2 / 6, np.sin(t) / t)
    b = np.where(small, 0.5 - t2 / 24, (1 - np.cos(t)) / (t * t))
    c = np.where(small, 1 / 6 - t2 / 120, (t - np.sin(t)) / (t * t * t))
    return a, b, c


def _rotation_exp(w: np.ndarray) -> np.ndarray:
    """Exp of rotation vectors (..., 3) as quaternions (..., 4)."""
    theta = np.linalg.norm(w, axis=-1)
    small = theta < _SERIES
    t = np.where(small, 1.0, theta)
    half = np.where(small, 0.5 - theta * theta / 48, np.sin(0.5 * t) / t)
    quaternion = np.concatenate([half[..., None] * w, np.cos(0.5 * theta)[..., None]], -1)
    return np.where(quaternion[..., 3:] < 0, -quaternion, quaternion)  # w >= 0 (Pinocchio's sign above angle pi)


def _rotation_log(rotation: np.ndarray) -> np.ndarray:
    """Log of rotation matrices (..., 3, 3) as rotation vectors (..., 3), also near angle pi."""
    trace = np.trace(rotation, axis1=-2, axis2=-1)
    theta = np.arccos(np.clip(0.5 * (trace - 1), -1.0, 1.0))
    axis = np.stack([rotation[..., 2, 1] - rotation[..., 1, 2], rotation[..., 0, 2] - rotation[..., 2, 0],
                     rotation[..., 1, 0] - rotation[..., 0, 1]], -1)
    small = theta < _SERIES
    t = np.where(small, 1.0, theta)
    factor = np.where(small, 0.5 + theta * theta / 12, t / (2 * np.sin(t)))
    w = factor[..., None] * axis
    near_pi = theta > np.pi - 1e-6  # sin(theta) vanishes: the axis from the symmetric part
    if np.any(near_pi):
        for index in zip(*np.nonzero(near_pi)) if near_pi.ndim else [()]:
            r = rotation[index]
            k = int(np.argmax(np.diag(r)))
            column = r[:, k] + np.eye(3)[k]
            direction = column / np.linalg.norm(column)
            w[index] = theta[index] * direction * np.sign(direction @ axis[index] or 1.0)
    return w


def _left_jacobian(w: np.ndarray) -> np.ndarray:
    """V(w) = I + (1 - cos t)/t^2 [w] + (t - sin t)/t^3 [w]^2 (..., 3, 3): SE(3)'s translation part."""
    _, b, c = rotation_series(np.linalg.norm(w, axis=-1))
    skew = _skew(w)
    return np.eye(3) + b[..., None, None] * skew + c[..., None, None] * (skew @ skew)


def _se2_v(angle: np.ndarray) -> np.ndarray:
    a, b, _ = rotation_series(np.abs(angle))
    b = b * angle
    return np.stack([np.stack([a, -b], -1), np.stack([b, a], -1)], -2)


def configuration_integrate(base: str, nq: int, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """q (+) v for a robot on a ``base`` (``floating``, ``planar`` or ``fixed``): ``(..., nq)``."""
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    out = np.empty((*np.broadcast_shapes(q.shape[:-1], v.shape[:-1]), nq))
    if base == "floating":
        rotation = quaternion_matrices(q[..., 3:7])
        out[..., :3] = q[..., :3] + np.einsum("...ij,...j->...i", rotation @ _left_jacobian(v[..., 3:6]), v[..., :3])
        quaternion = _product(q[..., 3:7], _rotation_exp(v[..., 3:6]))
        out[..., 3:7] = quaternion / np.linalg.norm(quaternion, axis=-1, keepdims=True)
        out[..., 7:] = q[..., 7:] + v[..., 6:]
    elif base == "planar":
        c, s = q[..., 2], q[..., 3]
        rotation = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)
        out[..., :2] = q[..., :2] + np.einsum("...ij,...j->...i", rotation @ _se2_v(v[..., 2]), v[..., :2])
        turn_c, turn_s = np.cos(v[..., 2]), np.sin(v[..., 2])
        cosine, sine = c * turn_c - s * turn_s, s * turn_c + c * turn_s
        norm = np.hypot(cosine, sine)
        out[..., 2], out[..., 3] = cosine / norm, sine / norm
        out[..., 4:] = q[..., 4:] + v[..., 3:]
    else:
        out[...] = q + v
    return out


def configuration_difference(base: str, nv: int, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """q1 (-) q0, the velocity that integrates q0 to q1 in unit time: ``(..., nv)``."""
    q0, q1 = np.asarray(q0, dtype=float), np.asarray(q1, dtype=float)
    out = np.empty((*np.broadcast_shapes(q0.shape[:-1], q1.shape[:-1]), nv))
    if base == "floating":
        r0, r1 = quaternion_matrices(q0[..., 3:7]), quaternion_matrices(q1[..., 3:7])
        relative = np.swapaxes(r0, -1, -2) @ r1
        w = _rotation_log(relative)
        moved = np.einsum("...ji,...j->...i", r0, q1[..., :3] - q0[..., :3])
        out[..., :3] = np.linalg.solve(_left_jacobian(w), moved[..., None])[..., 0]
        out[..., 3:6] = w
        out[..., 6:] = q1[..., 7:] - q0[..., 7:]
    elif base == "planar":
        c0, s0, c1, s1 = q0[..., 2], q0[..., 3], q1[..., 2], q1[..., 3]
        angle = np.arctan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
        dx, dy = q1[..., 0] - q0[..., 0], q1[..., 1] - q0[..., 1]
        moved = np.stack([c0 * dx + s0 * dy, -s0 * dx + c0 * dy], -1)
        out[..., :2] = np.linalg.solve(_se2_v(angle), moved[..., None])[..., 0]
        out[..., 2] = angle
        out[..., 3:] = q1[..., 4:] - q0[..., 4:]
    else:
        out[...] = q1 - q0
    return out


def chart_recentre(base: str, centre: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The base configuration c (+) d in the integrators' chart (robodyn.rigid.base_joints: position and rotation
    apart, in the centre's frame), ``(..., nq_base)`` from ``centre`` ``(..., nq_base)`` and ``d``
    ``(..., nv_base)``."""
    centre, d = np.asarray(centre, dtype=float), np.asarray(d, dtype=float)
    if base == "floating":
        position = centre[..., :3] + np.einsum("...ij,...j->...i", quaternion_matrices(centre[..., 3:7]), d[..., :3])
        return np.concatenate([position, _product(centre[..., 3:7], _rotation_exp(d[..., 3:6]))], -1)
    c, s = centre[..., 2], centre[..., 3]
    turn_c, turn_s = np.cos(d[..., 2]), np.sin(d[..., 2])
    return np.stack([centre[..., 0] + c * d[..., 0] - s * d[..., 1], centre[..., 1] + s * d[..., 0] + c * d[..., 1],
                     c * turn_c - s * turn_s, s * turn_c + c * turn_s], -1)


def _layout(model: Any) -> tuple[str, int, int]:
    """(base, nq, nv) of a model: a floating or planar base's from its chart, else n coordinates of a second-order
    model (q + v)."""
    chart = model.chart()
    if chart is not None:
        return chart.robot.base, chart.robot.nq, chart.robot.nv
    if model.order != 2:
        raise InputError(f"model {model.name!r} has no configuration: integrate_configuration and difference take a "
                         "rigid-body or second-order model")
    n = model.n_states // 2
    return "fixed", n, n


def _entries(values: Any, size: int, what: str, model: Any) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim not in (1, 2) or array.shape[-1] != size or not np.all(np.isfinite(array)):
        raise ShapeError(f"model {model.name!r}: {what} must be finite, of shape ({size},) or (N, {size}); got shape "
                         f"{array.shape}")
    return array


def integrate_configuration(model: Any, q: Any, v: Any) -> np.ndarray:
    """q (+) v: the configuration reached from ``q`` ``(nq,)`` (or ``(N, nq)``) moving with velocity ``v`` ``(nv,)``
    for unit time — SE(3)'s exponential for a floating base, SE(2)'s for a planar one, q + v for joints
    (Pinocchio's ``integrate``)."""
    base, nq, nv = _layout(model)
    return configuration_integrate(base, nq, _entries(q, nq, "q", model), _entries(v, nv, "v", model))


def difference(model: Any, q0: Any, q1: Any) -> np.ndarray:
    """q1 (-) q0 ``(nv,)`` (or ``(N, nv)``): the velocity that moves ``q0`` to ``q1`` in unit time, the logarithm of
    SE(3) (SE(2)) for the base (Pinocchio's ``difference``); the tangent space of linearization."""
    base, nq, nv = _layout(model)
    return configuration_difference(base, nv, _entries(q0, nq, "q0", model), _entries(q1, nq, "q1", model))
