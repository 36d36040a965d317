"""Excitation trajectories for identification: finite Fourier series that make the base regressor well conditioned.

Each joint follows a finite Fourier series of one fundamental frequency w_f = 2 pi / period (J. Swevers,
C. Ganseman, D. B. Tukel, J. De Schutter, H. Van Brussel, "Optimal robot excitation and identification", IEEE
Trans. Robotics and Automation 13(5), 1997):

    q_i(t)   = q_i0 + sum_l  a_il / (w_f l) sin(w_f l t) - b_il / (w_f l) cos(w_f l t)
    q_i'(t)  =        sum_l  a_il cos(w_f l t) + b_il sin(w_f l t)
    q_i''(t) =        sum_l  w_f l (b_il cos(w_f l t) - a_il sin(w_f l t))            l = 1 .. H

periodic, so that repeated periods can be averaged, and band-limited to H / period Hz, so that a filter can
separate it from noise. :func:`design_excitation` chooses q_0, a and b to minimize the 2-norm condition number of
the base regressor (robodyn.identification.base_parameters) stacked at ``samples`` times over one period, by SLSQP
(scipy.optimize.minimize; log cond's gradient through the eigenvectors of Y_b^T Y_b, the regressor's derivatives in
q, q', q'' by central differences, and the series' own) under bounds that hold at *every* time, not only at the
samples: with r_il = sqrt(a_il^2 + b_il^2),

    |q_i - q_i0| <= sum_l r_il / (w_f l),    |q_i'| <= sum_l r_il,    |q_i''| <= sum_l w_f l r_il,

kept within the position limits (less ``margin`` of their range at each end), the velocity limits and, if given,
the acceleration limits. The bounds are conservative (the peaks of the terms rarely coincide), so the optimum
stays inside the limits. The start is random (``seed``), hence the result is reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import scipy.optimize
from numpy.typing import ArrayLike, NDArray

from robodyn.base.blas import one_blas_thread
from robodyn.base.budget import check_count
from robodyn.base.errors import InputError, ShapeError
from robodyn.identification.base_parameters import BaseParameters, base_parameters, triangular_factor
from robodyn.identification.regressor import evaluate, model_regressor
from robodyn.model.protocol import ModelContract, TorqueRegressor
from robodyn.model.system import Values

__all__ = ["Excitation", "design_excitation"]

Array = NDArray[np.float64]

SMOOTH: Final = 1e-9  # r_il = sqrt(a^2 + b^2 + SMOOTH^2): differentiable at 0, conservative by at most 1e-9 rad/s.
START_FILL: Final = 0.5  # The random start uses this fraction of every bound.
MAX_HARMONICS: Final = 100  # SLSQP solves dense problems in 2 n H variables: a 7-joint arm's has 1,400 at this H.
MAX_SAMPLES: Final = 20_000  # A 7-joint arm's stacked base regressor at this many times: 140,000 rows, ~70 MB.
FAILED_CONDITION: Final = 1e16  # cond reported for a rank-deficient sample (a zero singular value).
GRAM_LIMIT: Final = 1e7  # The optimizer's cond from Y_b^T Y_b is trusted up to here (eps 1e14 ~ 0.02 relative).
FD_STEP: Final = 1e-5  # Central-difference step in q, q', q'' (times their largest magnitude, at least 1): the
# regressor is smooth, so truncation (~1e-10 relative) and rounding (~eps / 1e-5 ~ 2e-11) are both far below what
# SLSQP can tell.


@dataclass(frozen=True, slots=True, eq=False)
class Excitation:
    """A periodic excitation trajectory: q_0 (n,), and the coefficients a, b (n, H) of the module's series.

    Attributes
    ----------
    coordinates : (n,)
        The joints, in the order of the rows.
    period
        The fundamental period 2 pi / w_f, in s.
    offsets : (n,)
        q_i0, the centre of each joint's motion.
    a, b : (n, H)
        The velocity's cosine and sine amplitudes of harmonic l (rad/s or m/s).
    condition
        cond(Y_b) of the base regressor stacked at ``samples`` equally spaced times of one period.
    initial_condition
        The same at the random start (how much the optimization gained).
    samples
        The number of times per period the condition is computed at.
    position_limits : (n, 2), velocity_limits : (n,)
        The limits the motion keeps (positions already narrowed by the margin).
    """

    coordinates: tuple[str, ...]
    period: float
    offsets: Array
    a: Array
    b: Array
    condition: float
    initial_condition: float
    samples: int
    position_limits: Array
    velocity_limits: Array

    def __post_init__(self) -> None:
        n, harmonics = len(self.coordinates), self.a.shape[-1]
        shapes = {"offsets": (n,), "a": (n, harmonics), "b": (n, harmonics), "position_limits": (n, 2),
                  "velocity_limits": (n,)}
        for label, shape in shapes.items():
            value = getattr(self, label)
            if value.shape != shape:
                raise ShapeError(f"Excitation.{label} has shape {value.shape}, expected {shape}")
            value.setflags(write=False)
        if not (math.isfinite(self.period) and self.period > 0):
            raise InputError(f"Excitation: period {self.period!r} must be a positive number of seconds")

    @property
    def harmonics(self) -> int:
        """H, the number of harmonics."""
        return int(self.a.shape[1])

    @property
    def frequencies(self) -> Array:
        """The harmonics' frequencies l / period, in Hz, (H,)."""
        return np.arange(1, self.harmonics + 1) / self.period

    def sample(self, t: ArrayLike) -> tuple[Array, Array, Array]:
        """q, q', q'' at the times ``t`` (T,), each (T, n)."""
        times = np.atleast_1d(np.asarray(t, dtype=float))
        if times.ndim != 1 or not np.all(np.isfinite(times)):
            raise InputError("Excitation.sample: t must be a vector of finite times")
        return _series(self.offsets, self.a, self.b, 2 * math.pi / self.period, times)

    def _repr_html_(self) -> str:
        from robodyn.display import result_html

        return result_html(self, f"Excitation: {self.harmonics} harmonics of {1 / self.period:.4g} Hz",
                           units={"period": "s"})

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``coordinates, period, offsets, a, b, condition, initial_condition, samples``."""
        return {"coordinates": list(self.coordinates), "period": self.period, "offsets": self.offsets.tolist(),
                "a": self.a.tolist(), "b": self.b.tolist(), "condition": self.condition,
                "initial_condition": self.initial_condition, "samples": self.samples}


def _series(offsets: Array, a: Array, b: Array, w: float, t: Array) -> tuple[Array, Array, Array]:
    """The module's series at times t (T,): q, q', q'' (T, n)."""
    harmonics = np.arange(1, a.shape[1] + 1)
    phase = w * np.outer(t, harmonics)  # (T, H)
    sin, cos = np.sin(phase), np.cos(phase)
    q = offsets + (sin / (w * harmonics)) @ a.T - (cos / (w * harmonics)) @ b.T
    qd = cos @ a.T + sin @ b.T
    qdd = (cos * w * harmonics) @ b.T - (sin * w * harmonics) @ a.T
    return q, qd, qdd


def _per_joint(value: float | Mapping[str, float] | ArrayLike, coordinates: tuple[str, ...], what: str) -> Array:
    """A positive limit per coordinate from a number, a mapping by name (every coordinate) or an array."""
    if isinstance(value, Mapping):
        missing = [c for c in coordinates if c not in value]
        if missing:
            raise InputError(f"design_excitation: {what} has no entry for {missing[0]!r}: give one per joint "
                             f"({', '.join(coordinates)}) or one number for all")
        value = [value[c] for c in coordinates]
    try:
        limits = np.broadcast_to(np.asarray(value, dtype=float), (len(coordinates),)).copy()
    except (TypeError, ValueError):
        raise InputError(f"design_excitation: {what} must be a positive number, one per joint or a mapping by "
                         "joint") from None
    if not np.all(np.isfinite(limits)) or np.any(limits <= 0):
        raise InputError(f"design_excitation: {what} {limits.tolist()} must be positive and finite")
    return limits


def _positions(model: ModelContract, coordinates: tuple[str, ...], given: Mapping[str, tuple[float, float]] | None,
               margin: float) -> Array:
    """(n, 2) position limits: ``given`` over the model's, narrowed by ``margin`` of the range at each end."""
    limits = {**model.position_limits(), **(given or {})}
    result = np.empty((len(coordinates), 2))
    for i, name in enumerate(coordinates):
        lower, upper = limits.get(name, (None, None))
        if lower is None or upper is None or not (math.isfinite(lower) and math.isfinite(upper) and upper > lower):
            raise InputError(f"design_excitation: joint {name!r} has no finite position limits (got {lower}, "
                             f"{upper}): give position_limits={{{name!r}: (lower, upper), ...}}")
        span = upper - lower
        result[i] = (lower + margin * span, upper - margin * span)
    return result


class _Problem:
    """The optimization: variables x = (q_0 (n), a (n H), b (n H)); log cond and the constraints of the module."""

    def __init__(self, found: TorqueRegressor, base: BaseParameters, p: Array, period: float, harmonics: int,
                 samples: int, limits: tuple[Array, Array, Array | None]):
        self.found, self.base, self.p = found, base, p
        self.n, self.harmonics, self.w = len(found.coordinates), harmonics, 2 * math.pi / period
        self.times: Array = np.arange(samples, dtype=float) * (period / samples)
        self.positions, self.velocities, self.accelerations = limits

    def unpack(self, x: Array) -> tuple[Array, Array, Array]:
        n, H = self.n, self.harmonics
        return x[:n], x[n:n + n * H].reshape(n, H), x[n + n * H:].reshape(n, H)

    def rows(self, q: Array, qd: Array, qdd: Array) -> Array:
        """The base regressor stacked at samples (K, n) each: (K n, b)."""
        return self.base.base_regressor(evaluate(self.found, q, qd, qdd, self.p)).reshape(-1, self.base.count)

    def condition(self, x: Array) -> float:
        """cond(Y_b) at the samples of one period, from its singular values (the triangular factor's)."""
        offsets, a, b = self.unpack(x)
        singular = np.linalg.svd(triangular_factor(self.rows(*_series(offsets, a, b, self.w, self.times))),
                                 compute_uv=False)
        return float(singular[0] / singular[-1]) if singular[-1] > 0 else FAILED_CONDITION

    def objective(self, x: Array) -> tuple[float, Array]:
        """log cond(Y_b) and its gradient, from the eigenvalues lambda of G = Y_b^T Y_b: log cond = (log
        lambda_max - log lambda_min) / 2, accurate to eps cond^2 (1e-8 at cond 1e4; a cond beyond GRAM_LIMIT counts
        as GRAM_LIMIT), and d (log lambda) / 2 = (Y_b v)^T (dY_b v) / lambda for the eigenvector v. dY_b comes from
        central differences of the regressor in each joint's q, q' and q'' at all samples at once (rows of a
        sample depend on that sample alone), then the chain rule through the series: 6 n regressor evaluations per
        gradient instead of n (2 H + 1) condition numbers."""
        offsets, a, b = self.unpack(x)
        motion = _series(offsets, a, b, self.w, self.times)
        Wb = self.rows(*motion)
        values, vectors = np.linalg.eigh(Wb.T @ Wb)
        if not values[-1] > 0:
            return math.log(FAILED_CONDITION), np.zeros_like(x)
        floor = values[-1] / GRAM_LIMIT**2
        terms = [(vectors[:, -1], 1.0 / values[-1])]
        if values[0] > floor:
            terms.append((vectors[:, 0], -1.0 / values[0]))
        sensitivity = [np.empty((len(self.times), self.n)) for _ in range(3)]  # d log cond / d (q, q', q'')
        for kind in range(3):
            step = FD_STEP * max(1.0, float(np.abs(motion[kind]).max()))
            for i in range(self.n):
                shifted = [list(motion), list(motion)]
                for sign, moved in zip((1.0, -1.0), shifted):
                    moved[kind] = motion[kind].copy()
                    moved[kind][:, i] += sign * step
                change = (self.rows(*shifted[0]) - self.rows(*shifted[1])) / (2 * step)
                total = sum(weight * (Wb @ v) * (change @ v) for v, weight in terms)
                sensitivity[kind][:, i] = np.reshape(total, (len(self.times), self.n)).sum(axis=1)
        return 0.5 * math.log(values[-1] / max(values[0], floor)), self._chain(*sensitivity)

    def _chain(self, by_q: Array, by_qd: Array, by_qdd: Array) -> Array:
        """The gradient over x from the sensitivities to each sample's q, q', q'' (K, n) (the series' derivatives
        in the coefficients)."""
        harmonic = self.w * np.arange(1, self.harmonics + 1, dtype=float)
        phase = np.outer(self.times, harmonic)
        sin, cos = np.sin(phase), np.cos(phase)
        by_a = by_q.T @ (sin / harmonic) + by_qd.T @ cos - by_qdd.T @ (sin * harmonic)
        by_b = -by_q.T @ (cos / harmonic) + by_qd.T @ sin + by_qdd.T @ (cos * harmonic)
        return np.concatenate([by_q.sum(axis=0), by_a.ravel(), by_b.ravel()])

    def _radii(self, x: Array) -> tuple[Array, Array, Array, Array]:
        _, a, b = self.unpack(x)
        r = np.sqrt(a * a + b * b + SMOOTH**2)
        scale = self.w * np.arange(1, self.harmonics + 1, dtype=float)
        return r, a / r, b / r, scale

    def constraints(self, x: Array) -> Array:
        """g(x) >= 0: room above and below each joint's motion, then velocity (and acceleration) headroom."""
        offsets = x[:self.n]
        r, _, _, scale = self._radii(x)
        span, speed = (r / scale).sum(axis=1), r.sum(axis=1)
        rows = [self.positions[:, 1] - offsets - span, offsets - self.positions[:, 0] - span, self.velocities - speed]
        if self.accelerations is not None:
            rows.append(self.accelerations - (r * scale).sum(axis=1))
        return np.concatenate(rows)

    def constraint_jacobian(self, x: Array) -> Array:
        """d constraints / dx, ((3 or 4) n, n + 2 n H)."""
        n, H = self.n, self.harmonics
        _, da, db, scale = self._radii(x)
        rows = [(-1 / scale, -1.0), (-1 / scale, 1.0), (-np.ones(H), 0.0)]
        if self.accelerations is not None:
            rows.append((-scale, 0.0))
        blocks = []
        for weights, offset in rows:
            on_a, on_b = np.zeros((n, n, H)), np.zeros((n, n, H))
            on_a[np.arange(n), np.arange(n)] = weights * da
            on_b[np.arange(n), np.arange(n)] = weights * db
            blocks.append(np.hstack([offset * np.eye(n), on_a.reshape(n, n * H), on_b.reshape(n, n * H)]))
        return np.vstack(blocks)

    def inside(self, x: Array) -> Array:
        """``x`` with the offsets clipped into the position limits and each joint's coefficients scaled down to
        meet its bounds (SLSQP may end a rounding error outside them)."""
        offsets, a, b = self.unpack(np.array(x))
        offsets = np.clip(offsets, self.positions[:, 0], self.positions[:, 1])
        r = np.hypot(a, b)
        scale = self.w * np.arange(1, self.harmonics + 1, dtype=float)
        used = [(r / scale).sum(axis=1), r.sum(axis=1)]
        room = [np.minimum(self.positions[:, 1] - offsets, offsets - self.positions[:, 0]), self.velocities]
        if self.accelerations is not None:
            used.append((r * scale).sum(axis=1))
            room.append(self.accelerations)
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.min([np.where(u > 0, r_ / u, np.inf) for r_, u in zip(room, used)], axis=0)
        factor = np.minimum(1.0, factor)[:, None]
        return np.concatenate([offsets, (a * factor).ravel(), (b * factor).ravel()])

    def start(self, rng: np.random.Generator) -> Array:
        """Random coefficients scaled per joint to START_FILL of the tightest bound, centred offsets."""
        n, H = self.n, self.harmonics
        offsets = self.positions.mean(axis=1)
        a, b = rng.standard_normal((n, H)), rng.standard_normal((n, H))
        x = np.concatenate([offsets, a.ravel(), b.ravel()])
        r, _, _, scale = self._radii(x)
        room = [(self.positions[:, 1] - self.positions[:, 0]) / 2 / (r / scale).sum(axis=1),
                self.velocities / r.sum(axis=1)]
        if self.accelerations is not None:
            room.append(self.accelerations / (r * scale).sum(axis=1))
        factor = START_FILL * np.min(room, axis=0)
        return np.concatenate([offsets, (a * factor[:, None]).ravel(), (b * factor[:, None]).ravel()])


@one_blas_thread()  # small factorizations in loops: robodyn.base.blas
def design_excitation(model: ModelContract, *, velocity_limits: float | Mapping[str, float] | ArrayLike,
                      period: float = 10.0, harmonics: int = 5,
                      position_limits: Mapping[str, tuple[float, float]] | None = None,
                      acceleration_limits: float | Mapping[str, float] | ArrayLike | None = None,
                      margin: float = 0.05, samples: int | None = None, seed: int | None = 0, maxiter: int = 100,
                      base: BaseParameters | None = None, params: Values | None = None) -> Excitation:
    """A finite Fourier excitation of ``model`` within its limits that minimizes cond(Y_b) (module docstring).

    Parameters
    ----------
    model
        A chain or a URDF robot on the tape.
    velocity_limits
        |q'| bound per joint: one number, a mapping by joint or an (n,) array (rad/s, m/s).
    period
        The fundamental period in s; the harmonics are 1/period ... H/period Hz.
    harmonics
        H, the number of harmonics per joint.
    position_limits
        ``{joint: (lower, upper)}``, over the model's own ``position_limits()``; every joint needs finite ones.
    acceleration_limits
        Optional |q''| bound, as ``velocity_limits``.
    margin
        Fraction of each joint's range left free at both ends.
    samples
        Times per period at which the condition number is computed (default max(20 H, 3 b / n)).
    seed
        Seed of the random start (None: fresh entropy).
    maxiter
        SLSQP iterations.
    base
        The base parameters whose regressor is conditioned (default ``robodyn.base_parameters(model)``).
    params
        Parameter overrides of the model's geometry.

    Returns
    -------
    Excitation
        Its coefficients, ``sample(t)`` for q, q', q'', and the condition number reached.
    """
    found = model_regressor(model, "design_excitation")
    coordinates, n = found.coordinates, len(found.coordinates)
    if isinstance(harmonics, bool) or not isinstance(harmonics, int) or not 1 <= harmonics <= MAX_HARMONICS:
        raise InputError(f"design_excitation: harmonics={harmonics!r} must be a whole number from 1 to "
                         f"{MAX_HARMONICS}")
    if isinstance(maxiter, bool) or not isinstance(maxiter, int) or maxiter < 1:
        raise InputError(f"design_excitation: maxiter={maxiter!r} must be a whole number of iterations >= 1")
    if not (isinstance(period, int | float) and math.isfinite(period) and period > 0):
        raise InputError(f"design_excitation: period={period!r} must be a positive number of seconds")
    if not 0.0 <= margin < 0.5:
        raise InputError(f"design_excitation: margin={margin!r} must lie in [0, 0.5): a fraction of each range")
    base = base_parameters(model, params=params) if base is None else base
    if samples is None:
        samples = max(20 * harmonics, math.ceil(3 * base.count / n))
    if isinstance(samples, bool) or not isinstance(samples, int) or samples * n < base.count:
        raise InputError(f"design_excitation: samples={samples!r}: give an integer of at least "
                         f"{math.ceil(base.count / n)} (the {base.count} base parameters need as many rows)")
    check_count(samples, MAX_SAMPLES, "the samples per period", "give fewer samples", "design_excitation")
    limits = (_positions(model, coordinates, position_limits, margin),
              _per_joint(velocity_limits, coordinates, "velocity_limits"),
              None if acceleration_limits is None else _per_joint(acceleration_limits, coordinates,
                                                                  "acceleration_limits"))
    problem = _Problem(found, base, model.parameter_vector(params), float(period), harmonics, samples, limits)
    x0 = problem.start(np.random.default_rng(seed))
    solution = scipy.optimize.minimize(problem.objective, x0, jac=True, method="SLSQP", options={"maxiter": maxiter},
                                       constraints=[{"type": "ineq", "fun": problem.constraints,
                                                     "jac": problem.constraint_jacobian}])
    x, initial = problem.inside(solution.x), problem.condition(x0)
    condition = problem.condition(x)
    if condition > initial:  # SLSQP stopped somewhere worse than its start (it may, on this non-smooth objective)
        x, condition = x0, initial
    offsets, a, b = problem.unpack(x)
    return Excitation(coordinates, float(period), offsets.copy(), a.copy(), b.copy(), condition, initial, samples,
                      limits[0], limits[1])
