"""Forward kinematics (robodyn.kinematics.frames) against Pinocchio, finite differences and textbook formulas.

- On seven URDF arms of example-robot-data (Pinocchio reads the same files): poses, the Jacobians in the
  three references (``world_aligned``, ``world``, ``local`` = Pinocchio's LOCAL_WORLD_ALIGNED, WORLD,
  LOCAL), the frame velocity and J'q' (getFrameClassicalAcceleration at q'' = 0) of every frame, at 10
  random states, within 1e-12 absolute. Mimic joints (the Panda's second finger) through q_full = G q + o:
  the Jacobian's columns contract with G, and Pinocchio's velocity is G q'.
- The geometric Jacobian against central differences of the poses, J'q' against a central difference in
  time of J(q + t q') q'.
- A batch of 50 configurations in one call equals 50 single calls bit for bit.
- Manipulability against the product of the Jacobian's singular values, and ~0 at the Puma 560's wrist
  singularity (q5 = 0) and the UR5's (wrist 2 at 0).
- The Puma 560 chain file (standard DH) against the product of the textbook DH matrices; a declared extra
  frame against its placement composed by hand; the errors (unknown frames, models without frames, shapes,
  non-finite values).
"""

from __future__ import annotations

import functools
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from scipy.spatial.transform import Rotation

import robodyn
from pinocchio_reference import ROBOTS, coupling
from robodyn.base.errors import InputError, RobodynWarning, ShapeError, UnknownNameError
from robodyn.kinematics import Kinematics, kinematics
from robodyn.kinematics.rotations import rotation_error

DATA = Path(__file__).resolve().parents[1] / "data"
ARMS = ["ur_description/urdf/ur5_robot.urdf", "kinova_description/robots/kinova.urdf",
        "xarm_description/urdf/xarm7.urdf", "z1_description/urdf/z1.urdf", "so_arm_description/urdf/so100.urdf",
        "panda_description/urdf/panda.urdf", "talos_data/robots/talos_left_arm.urdf"]
# Two exact formulas in double precision on O(1) numbers (positions below 1.5 m, unit axes, |q'| <= 1):
# rounding is ~1e-15; 1e-12 leaves room for the different orders of evaluation.
PINOCCHIO_ATOL = 1e-12
# Central differences with h ~ eps^(1/3) = 6e-6: truncation h^2 |f'''| / 6 ~ 4e-11 (third derivatives of
# poses and Jacobians of O(1) arms are O(1)) and rounding eps |f| / h ~ 4e-11; 1e-8 is far above both and far
# below any real error (a wrong column or sign is O(1)).
STEP = 6e-6
DIFFERENCE_ATOL = 1e-8


needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")


def _arm_id(relative: str) -> str:
    return relative.split("/")[-1].removesuffix(".urdf")


@dataclass(frozen=True)
class Arm:
    """A URDF arm loaded by robodyn and by Pinocchio, with the coupling q_full = G q + o between them."""

    kin: Kinematics
    reference: Any  # pinocchio.Model
    data: Any  # pinocchio.Data
    G: np.ndarray
    offset: np.ndarray

    @property
    def n(self) -> int:
        return len(self.kin.coordinates)

    def configuration(self, q: np.ndarray) -> np.ndarray:
        """Pinocchio's configuration vector at robodyn's coordinates q: (cos, sin) for continuous joints."""
        values: list[float] = []
        for joint, angle in zip(list(self.reference.joints)[1:], self.G @ q + self.offset):
            values += [np.cos(angle), np.sin(angle)] if joint.nq == 2 else [angle]
        return np.array(values)


@functools.cache
def _arm(relative: str) -> Arm:
    """The arm ``relative`` (loaded once per session: each compiles for ~0.3-1 s)."""
    pin = pytest.importorskip("pinocchio")
    path = ROBOTS / relative  # type: ignore[operator]
    kin = kinematics(robodyn.load(str(path)))
    reference = pin.buildModelFromUrdf(str(path))
    G, offset = coupling(path, reference, kin.coordinates)
    return Arm(kin, reference, reference.createData(), G, offset)


@functools.cache
def _puma() -> Kinematics:
    """The Puma 560 chain file (its link 3 inertia, as measured, breaks the triangle inequality: robodyn warns)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobodynWarning)
        return kinematics(robodyn.load(str(DATA / "puma560.yaml")))


def _states(n: int, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (count, n)), rng.uniform(-1.0, 1.0, (count, n))


# --- against Pinocchio ---------------------------------------------------------------------------------------
@needs_robots
@pytest.mark.parametrize("relative", ARMS, ids=_arm_id)
def test_frames_agree_with_pinocchio(relative: str) -> None:
    """Pose (rotation, position, matrix, quaternion, rpy), J in the three references, J q' and J'q' of every
    frame at 10 random states; every robodyn frame (a URDF link) is a Pinocchio frame."""
    pin = pytest.importorskip("pinocchio")
    arm = _arm(relative)
    kin, reference, data, G = arm.kin, arm.reference, arm.data, arm.G
    # Pinocchio's BODY frame of a link (z1 and so100 have joints named like their links)
    missing = [f for f in kin.frames if not reference.existFrame(f, pin.BODY)]
    assert not missing, f"robodyn frames Pinocchio does not have: {missing}"
    references = {"world_aligned": pin.LOCAL_WORLD_ALIGNED, "world": pin.WORLD, "local": pin.LOCAL}
    qs, qds = _states(arm.n, 10, len(relative))
    for q, qd in zip(qs, qds):
        configuration, velocity = arm.configuration(q), G @ qd
        pin.forwardKinematics(reference, data, configuration, velocity, np.zeros(reference.nv))
        pin.updateFramePlacements(reference, data)
        pin.computeJointJacobians(reference, data, configuration)
        for frame in kin.frames:
            fid = reference.getFrameId(frame, pin.BODY)
            placement = data.oMf[fid]
            pose = kin.pose(q, frame)
            np.testing.assert_allclose(pose.rotation, placement.rotation, rtol=0, atol=PINOCCHIO_ATOL)
            np.testing.assert_allclose(pose.position, placement.translation, rtol=0, atol=PINOCCHIO_ATOL)
            np.testing.assert_allclose(pose.matrix, placement.homogeneous, rtol=0, atol=PINOCCHIO_ATOL)
            x, y, z, w = pin.Quaternion(placement.rotation).coeffs()
            expected_quaternion = np.array([w, x, y, z]) * (1.0 if w >= 0 else -1.0)
            np.testing.assert_allclose(pose.quaternion, expected_quaternion, rtol=0, atol=PINOCCHIO_ATOL)
            # rpy, compared modulo 2 pi (roll and yaw may be pi and -pi); ill-conditioned only at pitch = +-pi/2,
            # which random states do not come near (to ~1e-3, so errors stay below ~1e-13 / 1e-3)
            turns = np.remainder(pose.rpy - pin.rpy.matrixToRpy(placement.rotation) + np.pi, 2 * np.pi) - np.pi
            np.testing.assert_allclose(turns, 0.0, rtol=0, atol=1e-9)
            for name, pin_reference in references.items():
                expected = pin.getFrameJacobian(reference, data, fid, pin_reference) @ G
                np.testing.assert_allclose(kin.jacobian(q, frame, reference=name), expected, rtol=0,
                                           atol=PINOCCHIO_ATOL, err_msg=f"{frame} {name}")
            twist = pin.getFrameVelocity(reference, data, fid, pin.LOCAL_WORLD_ALIGNED)
            np.testing.assert_allclose(kin.velocity(q, qd, frame), np.r_[twist.linear, twist.angular], rtol=0,
                                       atol=PINOCCHIO_ATOL)
            bias = pin.getFrameClassicalAcceleration(reference, data, fid, pin.LOCAL_WORLD_ALIGNED)
            np.testing.assert_allclose(kin.bias_acceleration(q, qd, frame), np.r_[bias.linear, bias.angular],
                                       rtol=0, atol=PINOCCHIO_ATOL, err_msg=frame)


# --- against finite differences ------------------------------------------------------------------------------
@needs_robots
@pytest.mark.parametrize("relative", ["ur_description/urdf/ur5_robot.urdf", "panda_description/urdf/panda.urdf",
                                      "kinova_description/robots/kinova.urdf"], ids=_arm_id)
def test_jacobian_is_the_derivative_of_the_pose(relative: str) -> None:
    """Column j of J (world_aligned): (p(q + h e_j) - p(q - h e_j)) / 2h on top, log(R(q + h e_j) R(q - h e_j)^T)
    / 2h below (rotation_error; the log of an odd function of h, so the error is O(h^2) as for p)."""
    kin = _arm(relative).kin
    n = len(kin.coordinates)
    qs, _ = _states(n, 3, 11)
    steps = STEP * np.eye(n)
    for frame in (kin.default_frame, kin.frames[len(kin.frames) // 2]):
        for q in qs:
            plus, minus = kin.pose(q + steps, frame), kin.pose(q - steps, frame)  # one batch call each
            linear = (plus.position - minus.position).T / (2 * STEP)
            angular = np.stack([rotation_error(minus.rotation[j], plus.rotation[j]) for j in range(n)], axis=1)
            expected = np.vstack([linear, angular / (2 * STEP)])
            np.testing.assert_allclose(kin.jacobian(q, frame), expected, rtol=0, atol=DIFFERENCE_ATOL)
            # the vee of dR R^T (the skew part), an independent route for the angular rows
            dR = (plus.rotation - minus.rotation) / (2 * STEP)
            omega = np.einsum("jab,cb->jac", dR, kin.pose(q, frame).rotation)  # dR R^T = [w]x per column j
            vee = np.stack([omega[:, 2, 1] - omega[:, 1, 2], omega[:, 0, 2] - omega[:, 2, 0],
                            omega[:, 1, 0] - omega[:, 0, 1]], axis=0) / 2
            np.testing.assert_allclose(kin.jacobian(q, frame)[3:], vee, rtol=0, atol=DIFFERENCE_ATOL)


@needs_robots
@pytest.mark.parametrize("relative", ["ur_description/urdf/ur5_robot.urdf", "panda_description/urdf/panda.urdf",
                                      "kinova_description/robots/kinova.urdf"], ids=_arm_id)
def test_bias_acceleration_is_the_time_derivative_of_the_velocity(relative: str) -> None:
    """J'q' = d/dt (J(q + t q') q') at t = 0 (q'' = 0), by a central difference in t (tolerance: STEP)."""
    kin = _arm(relative).kin
    n = len(kin.coordinates)
    qs, qds = _states(n, 4, 12)
    for frame in (kin.default_frame, kin.frames[len(kin.frames) // 2]):
        for q, qd in zip(qs, qds):
            later, earlier = kin.jacobian(q + STEP * qd, frame), kin.jacobian(q - STEP * qd, frame)
            expected = (later - earlier) @ qd / (2 * STEP)
            np.testing.assert_allclose(kin.bias_acceleration(q, qd, frame), expected, rtol=0, atol=DIFFERENCE_ATOL)
            # and the same with the velocity function, J(q) q'
            expected_velocity = (kin.velocity(q + STEP * qd, qd, frame) - kin.velocity(q - STEP * qd, qd, frame))
            np.testing.assert_allclose(kin.bias_acceleration(q, qd, frame), expected_velocity / (2 * STEP), rtol=0,
                                       atol=DIFFERENCE_ATOL)


def test_puma_jacobian_and_bias_by_differences() -> None:
    """The same two difference checks on a standard-DH chain file (link frames after Rx(alpha))."""
    kin = _puma()
    qs, qds = _states(6, 3, 13)
    steps = STEP * np.eye(6)
    for q, qd in zip(qs, qds):
        plus, minus = kin.pose(q + steps, "link6"), kin.pose(q - steps, "link6")
        angular = np.stack([rotation_error(minus.rotation[j], plus.rotation[j]) for j in range(6)], axis=1)
        expected = np.vstack([(plus.position - minus.position).T, angular]) / (2 * STEP)
        np.testing.assert_allclose(kin.jacobian(q, "link6"), expected, rtol=0, atol=DIFFERENCE_ATOL)
        later, earlier = kin.jacobian(q + STEP * qd, "link6"), kin.jacobian(q - STEP * qd, "link6")
        np.testing.assert_allclose(kin.bias_acceleration(q, qd, "link6"), (later - earlier) @ qd / (2 * STEP),
                                   rtol=0, atol=DIFFERENCE_ATOL)


# --- batches ---------------------------------------------------------------------------------------------------
@needs_robots
@pytest.mark.parametrize("relative", ["panda_description/urdf/panda.urdf", "kinova_description/robots/kinova.urdf"],
                         ids=_arm_id)
def test_batch_equals_single_calls_bit_for_bit(relative: str) -> None:
    """50 configurations in one call give, row for row, exactly the single-call results."""
    kin = _arm(relative).kin
    qs, qds = _states(len(kin.coordinates), 50, 14)
    frame = kin.default_frame
    pose = kin.pose(qs, frame)
    assert pose.rotation.shape == (50, 3, 3) and pose.position.shape == (50, 3)
    batch: dict[str, np.ndarray] = {
        "rotation": pose.rotation, "position": pose.position, "matrix": pose.matrix, "quaternion": pose.quaternion,
        "rpy": pose.rpy, "origins": kin.origins(qs), "velocity": kin.velocity(qs, qds, frame),
        "bias": kin.bias_acceleration(qs, qds, frame), "manipulability": np.asarray(kin.manipulability(qs, frame)),
        **{name: kin.jacobian(qs, frame, reference=name) for name in ("world_aligned", "world", "local")}}
    assert batch["world"].shape == (50, 6, len(kin.coordinates))
    for k, (q, qd) in enumerate(zip(qs, qds)):
        one = kin.pose(q, frame)
        single = {"rotation": one.rotation, "position": one.position, "matrix": one.matrix,
                  "quaternion": one.quaternion, "rpy": one.rpy, "origins": kin.origins(q),
                  "velocity": kin.velocity(q, qd, frame), "bias": kin.bias_acceleration(q, qd, frame),
                  "manipulability": kin.manipulability(q, frame),
                  **{name: kin.jacobian(q, frame, reference=name) for name in ("world_aligned", "world", "local")}}
        for name, value in single.items():
            assert np.array_equal(batch[name][k], value), f"row {k}: {name}"
    # one velocity broadcast over the batch is the same as repeating it
    assert np.array_equal(kin.velocity(qs, qds[0], frame), kin.velocity(qs, np.tile(qds[0], (50, 1)), frame))


# --- manipulability --------------------------------------------------------------------------------------------
@needs_robots
def test_manipulability_is_the_product_of_singular_values() -> None:
    """sqrt(det(J J^T)) = prod(singular values of J) for a 6 x n Jacobian, n >= 6 (and the 3 x n parts)."""
    for relative in ("ur_description/urdf/ur5_robot.urdf", "xarm_description/urdf/xarm7.urdf"):
        kin = _arm(relative).kin
        qs, _ = _states(len(kin.coordinates), 5, 15)
        for q in qs:
            J = kin.jacobian(q)
            for part, rows in (("full", slice(0, 6)), ("linear", slice(0, 3)), ("angular", slice(3, 6))):
                expected = float(np.prod(np.linalg.svd(J[rows], compute_uv=False)))
                # det of a product of O(1) matrices: relative rounding ~1e-15, 1e-12 absolute is loose
                assert kin.manipulability(q, part=part) == pytest.approx(expected, rel=1e-10, abs=1e-12)
        batch = kin.manipulability(qs)
        assert isinstance(batch, np.ndarray) and batch.shape == (5,)


# sqrt(det(J J^T)) at an exact singularity: det(J J^T) is 0 up to its rounding, ~eps times the product of the
# other eigenvalues of J J^T (<= ~1e-2 for these arms), i.e. <= ~1e-18, whose square root is ~1e-9; 1e-7 bounds
# that with margin and is far below the values 0.5 rad away from the singularity (>= 1e-4 at these states).
SINGULAR_BOUND = 1e-7


def test_manipulability_vanishes_at_the_puma_wrist_singularity() -> None:
    """Puma 560 at q5 = 0: the axes of joints 4 and 6 line up, J has rank 5 and the manipulability is ~0; at
    q5 = 0.5 it is not."""
    kin = _puma()
    rng = np.random.default_rng(16)
    for _ in range(5):
        q = rng.uniform(-np.pi, np.pi, 6)
        q[4] = 0.0
        assert kin.manipulability(q, "link6") < SINGULAR_BOUND
        assert np.linalg.matrix_rank(kin.jacobian(q, "link6"), tol=1e-9) == 5
        q[4] = 0.5
        assert kin.manipulability(q, "link6") > 1e3 * SINGULAR_BOUND


def test_manipulability_at_a_singularity_is_zero_to_rounding() -> None:
    """At the Puma's wrist singularity the product of the singular values of J is ~5e-18; sqrt(det(J J^T))
    loses half the digits (robodyn/kinematics/frames.py, Kinematics.manipulability)."""
    kin = _puma()
    q = np.random.default_rng(16).uniform(-np.pi, np.pi, 6)
    q[4] = 0.0
    assert float(np.prod(np.linalg.svd(kin.jacobian(q, "link6"), compute_uv=False))) < 1e-15
    assert kin.manipulability(q, "link6") < 1e-12


@needs_robots
def test_manipulability_vanishes_at_the_ur5_wrist_singularity() -> None:
    """UR5 with wrist 2 at 0 (and at pi): wrist 1 and wrist 3 axes are parallel, so rank J = 5."""
    kin = _arm("ur_description/urdf/ur5_robot.urdf").kin
    rng = np.random.default_rng(17)
    for wrist in (0.0, np.pi):
        q = rng.uniform(-np.pi, np.pi, 6)
        q[4] = wrist
        axes = kin.jacobian(q, "tool0")[3:]
        assert np.linalg.norm(np.cross(axes[:, 3], axes[:, 5])) < 1e-12  # the two wrist axes, parallel
        assert kin.manipulability(q, "tool0") < SINGULAR_BOUND
        q[4] = wrist + 0.5
        assert kin.manipulability(q, "tool0") > 1e3 * SINGULAR_BOUND


# --- the Puma 560 against textbook DH --------------------------------------------------------------------------
def _number(value: Any) -> float:
    """A DH entry of the YAML file: a number, or ``pi``, ``-pi/2``, ``pi/4``-style text (parsed here)."""
    if isinstance(value, int | float):
        return float(value)
    match = re.fullmatch(r"\s*(-?)\s*pi\s*(?:/\s*([0-9.]+))?\s*", str(value))
    assert match, f"unexpected DH entry {value!r}"
    return (-1.0 if match.group(1) else 1.0) * np.pi / (float(match.group(2)) if match.group(2) else 1.0)


def _dh(theta: float, d: float, a: float, alpha: float) -> np.ndarray:
    """Rz(theta) Tz(d) Tx(a) Rx(alpha), the standard (distal) DH transform."""
    ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
    return np.array([[ct, -st * ca, st * sa, a * ct], [st, ct * ca, -ct * sa, a * st], [0, sa, ca, d], [0, 0, 0, 1]])


def test_puma_links_are_products_of_dh_matrices() -> None:
    """link_i = T_1 ... T_i with T_k = Rz(q_k) Tz(d_k) Tx(a_k) Rx(alpha_k) from tests/data/puma560.yaml (no theta
    offsets there): 4x4 products of O(1) numbers, equal within 1e-13."""
    table = yaml.safe_load((DATA / "puma560.yaml").read_text(encoding="utf-8"))
    rows = [(joint["child"], joint["dh"]) for joint in table["joints"]]
    kin = _puma()
    np.testing.assert_array_equal(kin.pose(np.zeros(6), "base").matrix, np.eye(4))
    rng = np.random.default_rng(18)
    for q in rng.uniform(-np.pi, np.pi, (10, 6)):
        T = np.eye(4)
        for k, (link, dh) in enumerate(rows):
            theta = q[k] + _number(dh.get("theta", 0.0))
            T = T @ _dh(theta, _number(dh["d"]), _number(dh["a"]), _number(dh["alpha"]))
            np.testing.assert_allclose(kin.pose(q, link).matrix, T, rtol=0, atol=1e-13, err_msg=link)
    assert kin.default_frame == "link6"
    # the origins: base, then each joint's frame origin (standard DH: the frames at the distal end)
    points = kin.origins(np.zeros(6))
    assert points.shape == (7, 3) and np.array_equal(points[0], np.zeros(3))


# --- declared frames and errors ---------------------------------------------------------------------------------
TCP_XYZ, TCP_RPY = (0.01, -0.02, 0.107), (0.3, -0.2, -0.785398)
MARK_XYZ, MARK_RPY = (0.0, 0.05, 0.0), (0.0, 0.0, 1.0)


@pytest.fixture(scope="module")
def panda_with_tcp(tmp_path_factory: pytest.TempPathFactory) -> Kinematics:
    """tests/data/panda_chain.yaml with ``tcp`` fixed to panda_link7 and ``mark`` fixed to tcp."""
    table = yaml.safe_load((DATA / "panda_chain.yaml").read_text(encoding="utf-8"))
    table["name"] = "panda_tcp"
    table["frames"] = {"tcp": {"parent": "panda_link7", "xyz": list(TCP_XYZ), "rpy": list(TCP_RPY)},
                       "mark": {"parent": "tcp", "xyz": list(MARK_XYZ), "rpy": list(MARK_RPY)}}
    path = tmp_path_factory.mktemp("frames") / "panda_tcp.yaml"
    path.write_text(yaml.safe_dump(table, sort_keys=False), encoding="utf-8")
    return kinematics(robodyn.load(str(path)))


def _placement(xyz: tuple[float, ...], rpy: tuple[float, ...]) -> np.ndarray:
    """The 4x4 of xyz and rpy (R = Rz(yaw) Ry(pitch) Rx(roll), scipy's extrinsic 'xyz')."""
    T = np.eye(4)
    T[:3, :3] = Rotation.from_euler("xyz", rpy).as_matrix()
    T[:3, 3] = xyz
    return T


def test_declared_frames_compose_with_their_parents(panda_with_tcp: Kinematics) -> None:
    """tcp = link7 * placement(tcp), mark = tcp * placement(mark); the tcp Jacobian is link7's with the lever
    arm moved: Jv_tcp = Jv_7 - [p_tcp - p_7]x Jw_7, Jw_tcp = Jw_7."""
    kin = panda_with_tcp
    assert kin.frames[-2:] == ("tcp", "mark") and kin.default_frame == "mark"
    tcp, mark = _placement(TCP_XYZ, TCP_RPY), _placement(MARK_XYZ, MARK_RPY)
    rng = np.random.default_rng(19)
    for q in rng.uniform(-2, 2, (5, 7)):
        link7 = kin.pose(q, "panda_link7").matrix
        np.testing.assert_allclose(kin.pose(q, "tcp").matrix, link7 @ tcp, rtol=0, atol=1e-13)
        np.testing.assert_allclose(kin.pose(q, "mark").matrix, link7 @ tcp @ mark, rtol=0, atol=1e-13)
        J7, Jt = kin.jacobian(q, "panda_link7"), kin.jacobian(q, "tcp")
        arm = kin.position(q, "tcp") - kin.position(q, "panda_link7")
        np.testing.assert_allclose(Jt[:3], J7[:3] - np.cross(arm[:, None], J7[3:], axis=0), rtol=0, atol=1e-13)
        np.testing.assert_allclose(Jt[3:], J7[3:], rtol=0, atol=1e-13)


def test_unknown_frame_names_the_frames(panda_with_tcp: Kinematics) -> None:
    with pytest.raises(UnknownNameError, match=r"no frame 'flange'.*panda_link0.*panda_link7.*tcp.*mark"):
        panda_with_tcp.pose(np.zeros(7), "flange")
    for call in (lambda: panda_with_tcp.jacobian(np.zeros(7), "flange"),
                 lambda: panda_with_tcp.bias_acceleration(np.zeros(7), np.zeros(7), "flange")):
        with pytest.raises(UnknownNameError, match="flange"):
            call()


def test_a_model_without_frames_is_refused() -> None:
    with pytest.raises(InputError, match="has no frames"):
        kinematics(robodyn.load("joint"))


def test_wrong_shapes_and_non_finite_values_are_refused(panda_with_tcp: Kinematics) -> None:
    kin = panda_with_tcp
    for q in (np.zeros(6), np.zeros(8), np.zeros((3, 6)), np.zeros((2, 3, 7)), np.zeros((7, 1))):
        with pytest.raises(ShapeError, match="expected 7 coordinates"):
            kin.pose(q)
    with pytest.raises(ShapeError, match="velocities"):
        kin.velocity(np.zeros((4, 7)), np.zeros((3, 7)))
    with pytest.raises(ShapeError, match="velocities"):
        kin.bias_acceleration(np.zeros(7), np.zeros(6))
    for bad in (np.nan, np.inf):
        q = np.zeros((3, 7))
        q[1, 2] = bad
        with pytest.raises(InputError, match="non-finite"):
            kin.jacobian(q)
        with pytest.raises(InputError, match="non-finite"):
            kin.bias_acceleration(np.zeros(7), np.full(7, bad))
    with pytest.raises(InputError, match="unknown Jacobian reference"):
        kin.jacobian(np.zeros(7), reference="body")
    with pytest.raises(InputError, match="unknown manipulability part"):
        kin.manipulability(np.zeros(7), part="rotational")


def test_manipulability_of_a_planar_arm_is_the_product_of_its_singular_values():
    """Issue 23: the linear rows of a planar two-link arm (3 x 2) have rank 2; det(J J^T) = 0 is no measure of it."""
    arm = robodyn.load("two_link_arm")
    K = robodyn.Kinematics(arm)
    l1, l2 = arm.parameters["l1"], 0.8  # the tool sits 0.8 beyond the elbow (two_link_arm.yaml's tool frame)
    for q in ([0.5, -0.8], [0.1, 2.0], [-1.0, 0.3]):
        J = K.jacobian(q)[:3]
        assert K.manipulability(q, part="linear") == pytest.approx(np.prod(np.linalg.svd(J, compute_uv=False)),
                                                                   rel=1e-12)
        assert K.manipulability(q, part="linear") == pytest.approx(l1 * l2 * abs(np.sin(q[1])), rel=1e-12)
    assert K.manipulability([0.5, 0.0], part="linear") < 1e-12  # stretched out: singular
