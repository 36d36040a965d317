"""Inverse kinematics: joint coordinates that put a frame at a target position (and orientation).

:func:`inverse_kinematics` runs damped least squares — Levenberg–Marquardt with a damping that adapts per
start — from several starts at once (every start's pose and Jacobian in one compiled batch call per
iteration), projecting each step onto the joint limits. The error is e = [p_target - p(q); w log(R_t R^T)]
(the orientation rows only for a pose target; ``w`` in m/rad weighs them), the step
dq = (J^T J + lambda D)^-1 J^T e with D = diag(J^T J) + 1e-9 I (Marquardt's scaling). A step that does not
lower |e| is retried with 10 times the damping; an accepted one divides it by 3.

The result says whether the target was reached (|e| <= ``tolerance``) and, when it was not, how close
the best start came: a target out of reach ends with the arm stretched towards it and ``reachable`` False.

Reference: C. W. Wampler, "Manipulator inverse kinematic solutions based on vector formulations and damped
least-squares methods", IEEE SMC 16(1), 1986; D. W. Marquardt, "An algorithm for least-squares estimation
of nonlinear parameters", SIAM J. Appl. Math. 11(2), 1963.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError, ShapeError
from robodyn.base.numbers import finite_number
from robodyn.kinematics.frames import kinematics
from robodyn.kinematics.rotations import rotation_error, rotation_from_rpy
from robodyn.model.system import Values, real_array, require_model, values_to_vector

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["MAX_ITERATIONS", "MAX_STARTS", "MAX_WORK_BYTES", "IKResult", "check_search", "inverse_kinematics",
           "work_bytes"]

MAX_STARTS: Final = 100_000  # Starts run together; a few dozen find a solution wherever one is reachable.
MAX_ITERATIONS: Final = 100_000  # Iterations of the damped least squares (200 by default; 50 reach 1e-10 m).
MAX_WORK_BYTES: Final = 2**29  # 512 MiB: the estimated working arrays of all the starts together.


@dataclass(frozen=True)
class IKResult:
    """The outcome of :func:`inverse_kinematics`.

    Attributes
    ----------
    q : mapping coordinate -> value
        The best configuration found (every coordinate).
    vector : (n,)
        The same, in model order.
    residual : float
        |e| at ``q``: the position error in m, with the weighted orientation error for a pose target.
    position_error, orientation_error : float
        |p_target - p(q)| in m, and the rotation angle between the target and the reached orientation in
        rad (0 for a position target).
    reachable : bool
        Whether ``residual <= tolerance``.
    iterations : int
        Iterations of the start that produced ``q`` (of every start together when none converged).
    frame : str
    """

    q: Mapping[str, float]
    vector: np.ndarray
    residual: float
    position_error: float
    orientation_error: float
    reachable: bool
    iterations: int
    frame: str
    model: ModelContract = field(repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: q (by coordinate), residual, reachable, iterations, frame, the two errors."""
        return {"frame": self.frame, "q": dict(self.q), "residual": self.residual, "reachable": self.reachable,
                "iterations": self.iterations, "position_error": self.position_error,
                "orientation_error": self.orientation_error}

    def operating_point(self, params: Values | None = None) -> Any:
        """The operating point at this configuration: q from IK, q' = 0, and the inputs that hold the arm
        still there (robodyn.find_equilibrium with every state fixed), for :func:`robodyn.linearize`."""
        from robodyn.linearization.equilibrium import find_equilibrium

        n = len(self.vector)
        fixed = {**dict(self.q), **{name: 0.0 for name in self.model.states[n:]}}
        return find_equilibrium(self.model, fix=fixed, params=params)[0]

    def _repr_html_(self) -> str:
        from robodyn.display import result_html

        return result_html(self, "Inverse kinematics", units={"position_error": "m", "orientation_error": "rad"})


def _limits(model: ModelContract, coordinates: tuple[str, ...], use: bool) -> tuple[np.ndarray, np.ndarray]:
    lower, upper = np.full(len(coordinates), -np.inf), np.full(len(coordinates), np.inf)
    if use:
        for i, name in enumerate(coordinates):
            low, high = model.position_limits().get(name, (None, None))
            lower[i] = -np.inf if low is None else low
            upper[i] = np.inf if high is None else high
    return lower, upper


def work_bytes(starts: int, coordinates: int) -> int:
    """The estimated peak memory of one iteration over ``starts`` starts of an arm with ``coordinates`` joints:
    per start, the n x n normal equations and their temporaries (6 n^2 numbers), the Jacobian, the states
    and the steps (20 n), the errors and the rotations of a pose target (100), in float64."""
    n = coordinates
    return 8 * starts * (6 * n * n + 20 * n + 100)


def _whole(value: object, label: str, least: int, most: int | None, meaning: str) -> int:
    """``value`` as an int within [least, most]; InputError naming ``label`` otherwise."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer) or value < least or (
            most is not None and value > most):
        bound = f"from {least} to {most:,}" if most is not None else f">= {least}"
        raise InputError(f"inverse kinematics: {label} {value!r:.40}: {meaning} must be a whole number {bound}")
    return int(value)


def check_search(starts: object, seed: object, coordinates: int, *, max_iterations: object = 200,
                 options: Mapping[str, str] | None = None) -> tuple[int, int, int]:
    """``(starts, seed, max_iterations)`` checked before any work: whole numbers, starts in [1, MAX_STARTS],
    seed >= 0, max_iterations in [1, MAX_ITERATIONS], and the estimated memory of the starts
    (:func:`work_bytes`) at most MAX_WORK_BYTES. ``options`` renames the arguments in the messages (the
    command line passes ``{"starts": "--starts", "seed": "--seed"}``). InputError otherwise."""
    label = {"starts": "starts", "seed": "seed", "max_iterations": "max_iterations", **(options or {})}
    count = _whole(starts, label["starts"], 1, MAX_STARTS, "the number of starts")
    chosen = _whole(seed, label["seed"], 0, None, "the seed")
    iterations = _whole(max_iterations, label["max_iterations"], 1, MAX_ITERATIONS, "the iteration limit")
    needed = work_bytes(count, coordinates)
    if needed > MAX_WORK_BYTES:
        fits = MAX_WORK_BYTES // work_bytes(1, coordinates)
        raise InputError(f"inverse kinematics: {label['starts']} {count} on {coordinates} joints would need about "
                         f"{needed / 2**20:,.0f} MiB (the limit is {MAX_WORK_BYTES // 2**20} MiB): give at most "
                         f"{fits:,} starts")
    return count, chosen, iterations


def _positive(value: object, label: str) -> float:
    """A tolerance or weight of inverse kinematics: a positive finite number."""
    message = "inverse kinematics: {what} {value!r:.40}: give a positive finite number"
    return finite_number(value, label, not_real=message, not_finite=message, positive=message)


def _target(position: Any, orientation: Any) -> tuple[np.ndarray, np.ndarray | None]:
    p = real_array(position, "inverse kinematics: the target position (x, y, z in m)")
    if p.shape != (3,) or not np.all(np.isfinite(p)):
        raise ShapeError(f"inverse kinematics: the target position must be 3 finite numbers (m), got {position!r:.80}")
    if orientation is None:
        return p, None
    R = real_array(orientation, "inverse kinematics: the target orientation (roll, pitch, yaw in rad, or a 3x3 "
                                "rotation)")
    if R.shape == (3,):
        R = rotation_from_rpy(R)
    if R.shape != (3, 3) or not np.all(np.isfinite(R)) or not np.allclose(R @ R.T, np.eye(3), atol=1e-9):
        raise ShapeError("inverse kinematics: the target orientation must be roll, pitch, yaw (3 numbers, rad) or a "
                         f"rotation matrix (3x3, orthonormal), got {orientation!r:.80}")
    return p, R


def inverse_kinematics(model: ModelContract, position: Any, *, orientation: Any = None, frame: str | None = None,
                       q0: Values | None = None, starts: int = 8, seed: int = 0, limits: bool = True,
                       tolerance: float = 1e-10, max_iterations: int = 200, orientation_weight: float = 1.0,
                       params: Values | None = None) -> IKResult:
    """Joint coordinates that put ``frame`` at ``position`` (3,) (m, world frame), and at ``orientation``
    (roll, pitch, yaw in rad, or a 3x3 rotation) when given.

    Parameters
    ----------
    q0
        The first start (default: the middle of the joint limits, 0 where a joint has none); the others are
        drawn uniformly within the limits (within +-pi where there are none) from ``seed``.
    starts
        How many starts run together (>= 1).
    limits
        Keep every coordinate within the model's position limits (``model.position_limits()``).
    tolerance
        |e| at which a start has reached the target (m, and weighted rad for a pose).

    Raises
    ------
    InputError
        The model has no frames, an unknown frame, a bad target or start, starts outside [1, MAX_STARTS] (or
        more than MAX_WORK_BYTES of estimated memory: :func:`check_search`), a seed < 0, max_iterations
        outside [1, MAX_ITERATIONS], a tolerance or weight that is not a positive number.
    """
    require_model(model, "inverse_kinematics")
    K = kinematics(model)
    name = K.frame_name(frame)
    if K.rates != K.coordinates:
        raise InputError(f"inverse kinematics of model {model.name!r}: not built for ball joints yet (a quaternion "
                         "is not a vector to step): replace each ball by three hinges about orthogonal axes")
    target_p, target_R = _target(position, orientation)
    starts, seed, max_iterations = check_search(starts, seed, len(K.coordinates), max_iterations=max_iterations)
    tolerance = _positive(tolerance, "tolerance")
    orientation_weight = _positive(orientation_weight, "orientation_weight")
    if not isinstance(limits, bool | np.bool_):
        raise InputError(f"inverse kinematics: limits {limits!r:.40}: give True (keep the joints within their limits) "
                         "or False")
    coordinates = K.coordinates
    n = len(coordinates)
    lower, upper = _limits(model, coordinates, limits)
    Q = _starts(coordinates, lower, upper, q0, starts, seed)
    rows = 6 if target_R is not None else 3

    def errors(configurations: np.ndarray) -> np.ndarray:
        pose = K.pose(configurations, name, params=params)
        e = np.empty((configurations.shape[0], rows))
        e[:, :3] = target_p - pose.position
        if target_R is not None:
            e[:, 3:] = orientation_weight * rotation_error(pose.rotation, target_R)
        return e

    e = errors(Q)
    norms = np.linalg.norm(e, axis=1)
    damping = np.full(starts, 1e-3)
    iterations = np.zeros(starts, dtype=int)
    active = norms > tolerance
    total = 0
    while active.any() and total < max_iterations:
        total += 1
        J = K.jacobian(Q[active], name, params=params)[:, :rows]
        if target_R is not None:
            J[:, 3:] *= orientation_weight
        JtJ = np.einsum("kin,kim->knm", J, J)
        gradient = np.einsum("kin,ki->kn", J, e[active])
        scale = np.einsum("knn->kn", JtJ) + 1e-9
        index = np.flatnonzero(active)
        improved = np.zeros(len(index), dtype=bool)
        for _ in range(8):  # raise the damping until the step lowers |e| (or give up this iteration)
            trial = ~improved
            if not trial.any():
                break
            system = JtJ[trial] + damping[index[trial], None, None] * (scale[trial][:, :, None] * np.eye(n))
            step = np.linalg.solve(system, gradient[trial][:, :, None])[:, :, 0]
            candidate = np.clip(Q[index[trial]] + step, lower, upper)
            e_new = errors(candidate)
            norm_new = np.linalg.norm(e_new, axis=1)
            better = norm_new < norms[index[trial]]
            chosen = index[trial][better]
            Q[chosen], e[chosen], norms[chosen] = candidate[better], e_new[better], norm_new[better]
            damping[chosen] /= 3.0
            damping[index[trial][~better]] *= 10.0
            improved[np.flatnonzero(trial)[better]] = True
        iterations[index] += 1
        stalled = damping > 1e12  # no step helps: a local minimum (or the target is out of reach)
        active = (norms > tolerance) & ~stalled
        if (norms <= tolerance).any():
            break
    best = int(np.argmin(norms))
    pose = K.pose(Q[best], name, params=params)
    angle = 0.0 if target_R is None else float(np.linalg.norm(rotation_error(pose.rotation, target_R)))
    reached = bool(norms[best] <= tolerance)
    return IKResult(dict(zip(coordinates, Q[best].tolist())), Q[best].copy(), float(norms[best]),
                    float(np.linalg.norm(target_p - pose.position)), angle, reached,
                    int(iterations[best]) if reached else total, name, model)


def _starts(coordinates: tuple[str, ...], lower: np.ndarray, upper: np.ndarray, q0: Values | None,
            count: int, seed: int) -> np.ndarray:
    """(count, n) starting configurations: q0 (or the middle of the limits), then uniform draws."""
    n = len(coordinates)
    bounded = np.isfinite(lower) & np.isfinite(upper)
    low = np.where(bounded, lower, np.maximum(lower, -math.pi))
    high = np.where(bounded, upper, np.minimum(upper, math.pi))
    middle = (np.where(bounded, lower, 0.0) + np.where(bounded, upper, 0.0)) / 2
    first = np.where(bounded, middle, np.clip(0.0, lower, upper))
    if q0 is not None:
        first = np.clip(values_to_vector(q0, coordinates, "coordinate", default=0.0), lower, upper)
    rng = np.random.default_rng(seed)
    Q = np.vstack([first, rng.uniform(low, high, (count - 1, n))]) if count > 1 else first[None, :].copy()
    return np.ascontiguousarray(Q)
