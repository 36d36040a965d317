"""Rotation matrices, unit quaternions and roll-pitch-yaw angles, vectorized over leading dimensions.

Conventions: R maps frame coordinates to world coordinates; roll-pitch-yaw (r, p, y) means
R = Rz(y) Ry(p) Rx(r) (URDF's ``rpy``); quaternions are (w, x, y, z) with w >= 0.

Reference: K. Shoemake, "Animating rotation with quaternion curves", SIGGRAPH 1985; the matrix to
quaternion conversion picks the largest of the four candidate divisors (S. W. Shepperd, "Quaternion from
rotation matrix", J. Guidance and Control 1(3), 1978), so it is accurate for every rotation.
"""

from __future__ import annotations

import numpy as np

__all__ = ["quaternion_from_rotation", "rotation_error", "rotation_from_quaternion", "rotation_from_rpy",
           "rpy_from_rotation", "skew"]


def rotation_from_rpy(rpy: np.ndarray) -> np.ndarray:
    """R = Rz(yaw) Ry(pitch) Rx(roll): ``(..., 3)`` -> ``(..., 3, 3)``."""
    angles = np.asarray(rpy, dtype=float)
    cr, sr = np.cos(angles[..., 0]), np.sin(angles[..., 0])
    cp, sp = np.cos(angles[..., 1]), np.sin(angles[..., 1])
    cy, sy = np.cos(angles[..., 2]), np.sin(angles[..., 2])
    rows = [[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr]]
    return np.stack([np.stack(row, axis=-1) for row in rows], axis=-2)


def rpy_from_rotation(rotation: np.ndarray) -> np.ndarray:
    """(roll, pitch, yaw) of R = Rz(yaw) Ry(pitch) Rx(roll): ``(..., 3, 3)`` -> ``(..., 3)``; pitch in
    [-pi/2, pi/2]; at pitch = +-pi/2 (gimbal lock) roll is 0 and yaw carries the whole rotation about z."""
    R = np.asarray(rotation, dtype=float)
    cos_pitch = np.hypot(R[..., 0, 0], R[..., 1, 0])
    pitch = np.arctan2(-R[..., 2, 0], cos_pitch)
    locked = cos_pitch < 1e-12
    roll = np.where(locked, 0.0, np.arctan2(R[..., 2, 1], R[..., 2, 2]))
    yaw = np.where(locked, np.arctan2(-R[..., 0, 1], R[..., 1, 1]), np.arctan2(R[..., 1, 0], R[..., 0, 0]))
    return np.stack([roll, pitch, yaw], axis=-1)


def quaternion_from_rotation(rotation: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z), w >= 0, of a rotation matrix: ``(..., 3, 3)`` -> ``(..., 4)``."""
    R = np.asarray(rotation, dtype=float)
    trace = R[..., 0, 0] + R[..., 1, 1] + R[..., 2, 2]
    candidates = np.stack([1.0 + trace, 1.0 + 2.0 * R[..., 0, 0] - trace, 1.0 + 2.0 * R[..., 1, 1] - trace,
                           1.0 + 2.0 * R[..., 2, 2] - trace], axis=-1)  # 4 w^2, 4 x^2, 4 y^2, 4 z^2
    best = np.argmax(candidates, axis=-1)
    s = np.sqrt(np.maximum(np.take_along_axis(candidates, best[..., None], axis=-1)[..., 0], 0.0))  # 2 |q_best|
    d = {"zy": R[..., 2, 1] - R[..., 1, 2], "xz": R[..., 0, 2] - R[..., 2, 0], "yx": R[..., 1, 0] - R[..., 0, 1],
         "xy": R[..., 0, 1] + R[..., 1, 0], "xz+": R[..., 0, 2] + R[..., 2, 0], "yz": R[..., 1, 2] + R[..., 2, 1]}
    with np.errstate(divide="ignore", invalid="ignore"):
        options = [np.stack([s / 2, d["zy"] / (2 * s), d["xz"] / (2 * s), d["yx"] / (2 * s)], axis=-1),
                   np.stack([d["zy"] / (2 * s), s / 2, d["xy"] / (2 * s), d["xz+"] / (2 * s)], axis=-1),
                   np.stack([d["xz"] / (2 * s), d["xy"] / (2 * s), s / 2, d["yz"] / (2 * s)], axis=-1),
                   np.stack([d["yx"] / (2 * s), d["xz+"] / (2 * s), d["yz"] / (2 * s), s / 2], axis=-1)]
    q = np.choose(best[..., None], options)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., :1] < 0, -q, q)


def rotation_from_quaternion(quaternion: np.ndarray) -> np.ndarray:
    """Rotation matrix of a quaternion (w, x, y, z) (normalized first): ``(..., 4)`` -> ``(..., 3, 3)``."""
    q = np.asarray(quaternion, dtype=float)
    w, x, y, z = np.moveaxis(q / np.linalg.norm(q, axis=-1, keepdims=True), -1, 0)
    rows = [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
    return np.stack([np.stack(row, axis=-1) for row in rows], axis=-2)


def skew(v: np.ndarray) -> np.ndarray:
    """The matrix [v]x with [v]x w = v x w: ``(..., 3)`` -> ``(..., 3, 3)``."""
    v = np.asarray(v, dtype=float)
    zero = np.zeros(v.shape[:-1])
    return np.stack([np.stack([zero, -v[..., 2], v[..., 1]], -1), np.stack([v[..., 2], zero, -v[..., 0]], -1),
                     np.stack([-v[..., 1], v[..., 0], zero], -1)], axis=-2)


def rotation_error(current: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The rotation vector (axis times angle, world axes) that turns ``current`` into ``target``: log(R_t R_c^T),
    ``(..., 3, 3)`` each (broadcast) -> ``(..., 3)``; accurate to a few eps at every angle (at pi exactly,
    either axis sign). Vectorized: a batch of rotations costs one pass of array operations."""
    E = np.asarray(target, dtype=float) @ np.swapaxes(np.asarray(current, dtype=float), -1, -2)
    cos_angle = np.clip((np.trace(E, axis1=-2, axis2=-1) - 1.0) / 2.0, -1.0, 1.0)
    vee = np.stack([E[..., 2, 1] - E[..., 1, 2], E[..., 0, 2] - E[..., 2, 0], E[..., 1, 0] - E[..., 0, 1]], axis=-1)
    angle = np.arctan2(0.5 * np.linalg.norm(vee, axis=-1), cos_angle)
    # up to pi/2: angle / (2 sin) times vee (-> vee / 2 near 0), amplification <= pi/4
    tiny = angle < 1e-12
    near = vee * np.where(tiny, 0.5, angle / (2.0 * np.sin(np.where(tiny, 1.0, angle))))[..., None]
    # beyond pi/2: the axis from the symmetric part, (E + E^T) / 2 = cos I + (1 - cos) a a^T (1 - cos >= 1),
    # its sign from vee = 2 sin(angle) a
    outer = ((E + np.swapaxes(E, -1, -2)) / 2.0 - cos_angle[..., None, None] * np.eye(3)) \
        / np.maximum(1.0 - cos_angle, 1.0)[..., None, None]
    diagonal = np.diagonal(outer, axis1=-2, axis2=-1)
    column = np.argmax(diagonal, axis=-1)
    pivot = np.take_along_axis(diagonal, column[..., None], axis=-1)
    axis = np.take_along_axis(outer, column[..., None, None], axis=-1)[..., 0] / np.sqrt(np.maximum(pivot, 1e-300))
    axis = np.where(np.sum(axis * vee, axis=-1, keepdims=True) < 0, -axis, axis)
    return np.where((cos_angle >= 0)[..., None], near, axis * angle[..., None])
