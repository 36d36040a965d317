"""Rotation conversions (robodyn.kinematics.rotations) against scipy.spatial.transform.Rotation.

Quaternions and rotation matrices both ways on random rotations and on rotations within 1e-12 .. 1e-2 of
pi (where w ~ 0 and the trace formula fails); roll-pitch-yaw both ways, including gimbal lock; the rotation
error log(R_t R_c^T) against scipy's rotation vector, near 0, in the middle and near pi.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from robodyn.kinematics.rotations import (
    quaternion_from_rotation,
    rotation_error,
    rotation_from_quaternion,
    rotation_from_rpy,
    rpy_from_rotation,
    skew,
)

EPS = np.finfo(float).eps
# Conversions of unit-size numbers in a handful of operations: rounding ~1e-16 per entry; 1e-13 is loose.
ATOL = 1e-13
NEAR_PI = [1e-2, 1e-4, 1e-6, 2e-6, 1e-7, 1e-9, 1e-12, 0.0]  # pi - angle


def _axes(count: int, seed: int) -> np.ndarray:
    axes = np.random.default_rng(seed).normal(size=(count, 3))
    return axes / np.linalg.norm(axes, axis=1, keepdims=True)


def _near_pi() -> Rotation:
    """Rotations by pi - d about random axes, for every d in NEAR_PI (8 axes each), and about x, y, z."""
    vectors = [axis * (np.pi - d) for d in NEAR_PI for axis in [*_axes(8, 1), *np.eye(3)]]
    return Rotation.from_rotvec(vectors)


def _wxyz(rotation: Rotation) -> np.ndarray:
    """scipy's quaternion (x, y, z, w) as (w, x, y, z) with w >= 0."""
    xyzw = rotation.as_quat()
    wxyz = np.concatenate([xyzw[..., 3:], xyzw[..., :3]], axis=-1)
    return np.where(wxyz[..., :1] < 0, -wxyz, wxyz)


@pytest.mark.parametrize("kind", ["random", "near pi"])
def test_quaternions_and_matrices_round_trip(kind: str) -> None:
    rotations = Rotation.random(200, random_state=2) if kind == "random" else _near_pi()
    R = rotations.as_matrix()
    q = quaternion_from_rotation(R)
    assert q.shape == (len(R), 4) and np.all(q[:, 0] >= 0)
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, rtol=0, atol=ATOL)
    expected = _wxyz(rotations)
    # at w = 0 exactly (angle pi) q and -q are the same rotation and both have w >= 0: compare up to sign
    sign = np.where(np.sum(q * expected, axis=1) < 0, -1.0, 1.0)[:, None]
    np.testing.assert_allclose(q, sign * expected, rtol=0, atol=ATOL)
    np.testing.assert_allclose(rotation_from_quaternion(q), R, rtol=0, atol=ATOL)
    # a quaternion that is not normalized is normalized first
    np.testing.assert_allclose(rotation_from_quaternion(3.0 * q), R, rtol=0, atol=ATOL)
    # one at a time, the same as in a batch
    np.testing.assert_allclose(quaternion_from_rotation(R[0]), q[0], rtol=0, atol=0)


def test_rotation_from_quaternion_is_orthonormal() -> None:
    q = np.random.default_rng(3).normal(size=(100, 4))
    R = rotation_from_quaternion(q)
    np.testing.assert_allclose(R @ np.swapaxes(R, -1, -2), np.broadcast_to(np.eye(3), R.shape), rtol=0, atol=ATOL)
    np.testing.assert_allclose(np.linalg.det(R), 1.0, rtol=0, atol=ATOL)
    np.testing.assert_allclose(R, Rotation.from_quat(np.c_[q[:, 1:], q[:, :1]]).as_matrix(), rtol=0, atol=ATOL)


def test_rpy_round_trip_and_scipy() -> None:
    """R = Rz(yaw) Ry(pitch) Rx(roll) is scipy's extrinsic 'xyz'; rpy_from_rotation inverts it for pitch in
    (-pi/2, pi/2) (2e-3 away from +-pi/2: the angles' condition number is ~1 / cos(pitch) ~ 500, error < 1e-12)."""
    rng = np.random.default_rng(4)
    rpy = np.c_[rng.uniform(-np.pi, np.pi, 300), rng.uniform(-np.pi / 2 + 2e-3, np.pi / 2 - 2e-3, 300),
                rng.uniform(-np.pi, np.pi, 300)]
    R = rotation_from_rpy(rpy)
    np.testing.assert_allclose(R, Rotation.from_euler("xyz", rpy).as_matrix(), rtol=0, atol=ATOL)
    np.testing.assert_allclose(rpy_from_rotation(R), rpy, rtol=0, atol=1e-12)
    # and from any rotation: rpy_from_rotation then rotation_from_rpy gives the rotation back
    others = Rotation.random(200, random_state=5).as_matrix()
    np.testing.assert_allclose(rotation_from_rpy(rpy_from_rotation(others)), others, rtol=0, atol=ATOL)


@pytest.mark.parametrize("pitch", [np.pi / 2, -np.pi / 2])
def test_rpy_at_gimbal_lock(pitch: float) -> None:
    """At pitch = +-pi/2 only roll -+ yaw is defined: roll is 0 and the rotation is reproduced."""
    for roll, yaw in [(0.3, -1.2), (-2.0, 2.5), (0.0, 0.0)]:
        R = rotation_from_rpy(np.array([roll, pitch, yaw]))
        angles = rpy_from_rotation(R)
        assert angles[0] == 0.0 and angles[1] == pytest.approx(pitch, abs=1e-7)
        np.testing.assert_allclose(rotation_from_rpy(angles), R, rtol=0, atol=ATOL)


def test_skew_is_the_cross_product() -> None:
    rng = np.random.default_rng(6)
    v, w = rng.normal(size=(20, 3)), rng.normal(size=(20, 3))
    np.testing.assert_allclose(np.einsum("kij,kj->ki", skew(v), w), np.cross(v, w), rtol=0, atol=ATOL)


def _error_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    """(current, target) pairs: random, and target = exp(w) current with |w| near 0, in the middle and near pi."""
    rng = np.random.default_rng(7)
    currents = Rotation.random(40, random_state=8).as_matrix()
    angles = [0.0, 1e-14, 1e-9, 1e-6, 0.1, 1.0, 2.0, 3.0, *(np.pi - np.array(NEAR_PI[:-1]))]
    cases = [(c, t) for c, t in zip(currents[:20], Rotation.random(20, random_state=9).as_matrix())]
    for angle in angles:
        for current, axis in zip(currents[20:25], _axes(5, int(rng.integers(1 << 30)))):
            cases.append((current, Rotation.from_rotvec(angle * axis).as_matrix() @ current))
    return cases


def test_rotation_error_is_scipys_rotation_vector() -> None:
    """rotation_error(Rc, Rt) = Rotation.from_matrix(Rt Rc^T).as_rotvec() (scipy goes through the quaternion,
    accurate everywhere). The entries of Rt Rc^T are known to ~eps; up to pi/2 the vee formula scales their
    rounding by angle / (2 sin(angle)) <= pi/4, beyond it the symmetric part gives the axis with no
    amplification, so 1e-12 holds at every angle."""
    for current, target in _error_cases():
        expected = Rotation.from_matrix(target @ current.T).as_rotvec()
        tolerance = 1e-12
        np.testing.assert_allclose(rotation_error(current, target), expected, rtol=0, atol=tolerance,
                                   err_msg=f"angle {np.linalg.norm(expected)!r}")


@pytest.mark.parametrize("distance", [1e-9, 1e-10, 1e-12])
def test_rotation_error_within_1e_9_of_pi(distance: float) -> None:
    """Angle pi - distance about random axes: the axis from the symmetric part, the sign from the (tiny but
    exact to ~eps) skew part; agrees with scipy to 1e-12 and has the angle pi - distance to ~1e-15."""
    for current, axis in zip(Rotation.random(10, random_state=10).as_matrix(), _axes(10, 11)):
        rotation = Rotation.from_rotvec((np.pi - distance) * axis)
        target = rotation.as_matrix() @ current
        error = rotation_error(current, target)
        np.testing.assert_allclose(error, Rotation.from_matrix(target @ current.T).as_rotvec(), rtol=0, atol=1e-12)
        np.testing.assert_allclose(error, (np.pi - distance) * axis, rtol=0, atol=1e-12)


def test_rotation_error_at_pi_exactly() -> None:
    """At the angle pi, +-pi axis are the same rotation: either sign, norm pi."""
    for current, axis in zip(Rotation.random(10, random_state=12).as_matrix(), [*_axes(7, 13), *np.eye(3)]):
        target = (2 * np.outer(axis, axis) - np.eye(3)) @ current  # exp(pi [axis]x) = 2 a a^T - I
        error = rotation_error(current, target)
        assert np.linalg.norm(error) == pytest.approx(np.pi, abs=1e-12)
        sign = 1.0 if error @ axis > 0 else -1.0
        np.testing.assert_allclose(error, sign * np.pi * axis, rtol=0, atol=1e-12)
