"""Base parameters: the combinations of a robot's standard parameters that its joint torques determine.

The regressor's columns (robodyn.identification.regressor) are not independent: a body's mass at the end of a link acts
like a change of the link's own first moment and inertia, a joint's rotor inertia like the inertia of the body it
turns, and some parameters do not act at all (the first body's mass when its joint axis is vertical). Only
*base parameters* beta = K theta can be told apart from torques: ``Y theta = Y_b beta`` for every motion, with
Y_b the columns of one independent subset of the standard parameters (each base parameter is "grouped on" one of
them) and K (b, P) holding the identity on that subset and the regrouping coefficients elsewhere.

:func:`base_parameters` finds them numerically, as M. Gautier, "Numerical calculation of the base inertial
parameters of robots", J. Robotic Systems 8(4), 1991 (the count and the grouping of W. Khalil's symbolic rules,
M. Gautier, W. Khalil, IEEE Trans. Robotics and Automation 6(3), 1990, without deriving them):

1. W (N n, P): Y stacked at N random samples of (q, q', q'') (positions within the model's limits where it has
   them, else in [-pi, pi]; velocities and accelerations standard normal), seeded.
2. The rank: QR with column pivoting of W, ``W P = Q R``; the rank r is the number of |R_kk| above
   ``threshold = tolerance |R_11|``, by default ``tolerance = max(N n, P) eps`` (the rank-revealing threshold of
   LAPACK's and numpy's matrix_rank). W is not scaled: a column of round-off (a DH twist of pi/2 in floating
   point leaves 6e-17 where a zero belongs) must stay below the threshold instead of being normalized up to one.
3. The grouping: the standard parameters in the model's order (bodies parent first, in each
   m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz, then the joint terms) are taken one by one and kept when their
   column's distance from the span of those kept before exceeds the threshold (Gram–Schmidt, orthogonalized
   twice). Columns below the threshold are the unidentifiable parameters; the others not kept are *grouped*:
   their column is the least-squares combination of the kept ones, whose coefficients fill K. The order makes the
   choice Khalil's: a child's mass, its first moment along the joint axis and one of its diagonal inertias move
   into its parent's parameters. The kept count must equal the rank (else NumericalError: take more samples).

Steps 2 and 3 run on the triangular factor R of W (:func:`triangular_factor`, P x P): R has W's column geometry
(norms, angles, distances between spans), so pivoting and selecting on it decide as on W, on a small matrix.

References: W. Khalil, E. Dombre, *Modeling, Identification and Control of Robots*, Hermes Penton 2002;
Gautier (1991) above.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

from robodyn.base.blas import one_blas_thread
from robodyn.base.errors import InputError, NumericalError, ShapeError
from robodyn.identification.regressor import evaluate, model_regressor
from robodyn.model.protocol import ModelContract, TorqueRegressor
from robodyn.model.system import Values

__all__ = ["QR_BLOCK", "ROUNDOFF_RTOL", "BaseParameters", "base_parameters", "independent_columns", "regressor_rank",
           "triangular_factor"]

Array = NDArray[np.float64]

ROWS_PER_COLUMN: Final = 5  # Default samples: at least this many rows of W per column (an overdetermined W).
MIN_SAMPLES: Final = 20  # ... and at least this many samples.
QR_BLOCK: Final = 100  # Rows added per step of triangular_factor (see there).
ROUNDOFF_RTOL: Final = 1e-10  # A regrouping coefficient whose term carries at most this share of the grouped
# column is the least-squares fit's round-off and is set to 0: measured up to 1e-13 on the Puma 560, UR5 and Panda,
# whose real coefficients are all above 1e-5 (geometric constants such as 0.4318 or a squared length).


@dataclass(frozen=True, slots=True, eq=False)
class BaseParameters:
    """The identifiable combinations of a model's standard parameters: beta = K theta.

    Attributes
    ----------
    names : (b,)
        Each base parameter, named after the standard parameter it is grouped on (``link2.Izz``).
    expressions : (b,)
        Each as a combination of standard parameter names, e.g. ``link2.Izz + 0.18*link3.m`` (coefficients shown
        to six digits; ``K`` has them to round-off).
    K : (b, P)
        beta = K @ theta over the standard parameters ``standard`` (the columns of robodyn.regressor's Y); a
        coefficient whose term is at most :data:`ROUNDOFF_RTOL` of its column is round-off and set to 0.
    standard : (P,)
        The standard parameter names.
    independent : (b,)
        The columns of the standard parameters the base ones are grouped on: ``Y_b = Y[..., independent]``.
    values : (b,)
        The model's base parameters, ``K @ standard_values``.
    standard_values : (P,)
        The model's standard parameters (at the ``params`` given).
    unidentifiable
        Standard parameters without effect on the torques (zero columns): no experiment can find them.
    grouped
        Standard parameters that appear only inside other base parameters.
    tolerance
        The relative rank tolerance used; ``threshold`` = ``tolerance`` |R_11| is the absolute one.
    threshold
        Columns (and residuals of columns) at or below it count as zero, in N m per unit of parameter over the
        stacked samples.
    samples, seed
        How many random samples W stacked, and the seed that drew them.
    coordinates : (n,)
        The rows of the regressor.
    """

    names: tuple[str, ...]
    expressions: tuple[str, ...]
    K: Array
    standard: tuple[str, ...]
    independent: NDArray[np.intp]
    values: Array
    standard_values: Array
    unidentifiable: tuple[str, ...]
    grouped: tuple[str, ...]
    tolerance: float
    threshold: float
    samples: int
    seed: int | None
    coordinates: tuple[str, ...]

    def __post_init__(self) -> None:
        b, size = len(self.names), len(self.standard)
        for label, shape in (("K", (b, size)), ("independent", (b,)), ("values", (b,)), ("standard_values", (size,))):
            value = getattr(self, label)
            if value.shape != shape:
                raise ShapeError(f"BaseParameters.{label} has shape {value.shape}, expected {shape}")
            value.setflags(write=False)
        if len(self.expressions) != b:
            raise ShapeError(f"BaseParameters: {len(self.expressions)} expressions for {b} base parameters")

    @property
    def count(self) -> int:
        """b, the number of base parameters."""
        return len(self.names)

    def base_regressor(self, Y: Array) -> Array:
        """Y_b: the columns ``independent`` of a regressor Y (..., n, P), so that ``Y_b @ beta = Y @ theta``."""
        Y = np.asarray(Y, dtype=float)
        if Y.shape[-1] != len(self.standard):
            raise ShapeError(f"base_regressor: Y has {Y.shape[-1]} columns, expected {len(self.standard)} (the "
                             "standard parameters of the same model)")
        return Y[..., self.independent]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``count, names, expressions, values, unidentifiable, grouped, tolerance, threshold,
        samples, seed``."""
        return {"count": self.count, "names": list(self.names), "expressions": list(self.expressions),
                "values": self.values.tolist(), "unidentifiable": list(self.unidentifiable),
                "grouped": list(self.grouped), "tolerance": self.tolerance, "threshold": self.threshold,
                "samples": self.samples, "seed": self.seed}

    def text(self) -> str:
        """One line per base parameter, its value and its expression (a value within rounding of the sum it is
        made of, 16 eps sum |K_ij theta_j|, shows as 0)."""
        width = max((len(name) for name in self.names), default=0)
        rounding = 16 * np.finfo(float).eps * (np.abs(self.K) @ np.abs(self.standard_values))
        shown = np.where(np.abs(self.values) <= rounding, 0.0, self.values)
        lines = [f"{self.count} base parameters of {len(self.standard)} standard ones (rank tolerance "
                 f"{self.tolerance:.3g}):"]
        lines += [f"  {name:<{width}} = {value: .6g}  = {expression}"
                  for name, value, expression in zip(self.names, shown, self.expressions)]
        if self.unidentifiable:
            lines.append(f"  no effect on the torques: {', '.join(self.unidentifiable)}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from robodyn.display import block, heading, html_table, note

        rounding = 16 * np.finfo(float).eps * (np.abs(self.K) @ np.abs(self.standard_values))
        shown = np.where(np.abs(self.values) <= rounding, 0.0, self.values)
        rows = list(zip(self.names, shown.tolist(), self.expressions))
        parts = [heading(f"{self.count} base parameters of {len(self.standard)} standard ones"),
                 html_table(rows, header=("base parameter", "value", "expression"), row_header=True),
                 note(f"rank tolerance {self.tolerance:.3g} (threshold {self.threshold:.3g}) over {self.samples} "
                      "random samples")]
        if self.unidentifiable:
            parts.append(note(f"no effect on the torques: {', '.join(self.unidentifiable)}"))
        return block(parts)


def triangular_factor(A: Array) -> Array:
    """R of A = Q R (Q not formed), min(rows, columns) x columns, by Householder QR of the rows in blocks of
    :data:`QR_BLOCK` stacked under the R so far (the same R up to the signs of its rows, at any height of A).

    Small factorizations stay out of the BLAS thread pool: on a two-core machine, LAPACK's QR of 250 x 53 took 46 ms
    under load against 0.2 ms for 150 x 53 (threads waiting for busy cores), so 12,000 rows of an identification
    cost 170 ms at once and ~25 ms in blocks; and the blocks run on one BLAS thread (robodyn.base.blas), whose hand-offs
    cost 0.5-20 ms per block on two idle cores against 0.14 ms of arithmetic.
    """
    rows, columns = A.shape
    R = np.zeros((0, columns))
    with one_blas_thread():
        for start in range(0, rows, QR_BLOCK):
            stacked = np.vstack([R, A[start:start + QR_BLOCK]])
            R = scipy.linalg.qr(stacked, mode="r", check_finite=False)[0][:min(len(stacked), columns)]
    return R


def regressor_rank(W: Array, tolerance: float | None = None) -> tuple[int, float, float]:
    """The numerical rank of a stacked regressor W (rows, P) by QR with column pivoting (step 2 of the module).

    Returns ``(rank, tolerance, threshold)``: the relative tolerance used (default ``max(W.shape) eps``) and the
    absolute threshold ``tolerance |R_11|`` that the |R_kk| counted exceed.
    """
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or W.size == 0:
        raise ShapeError(f"regressor_rank: W has shape {W.shape}: give a non-empty (rows, columns) matrix")
    return _rank(triangular_factor(W), W.shape, tolerance)


def _rank(R: Array, shape: tuple[int, ...], tolerance: float | None) -> tuple[int, float, float]:
    """:func:`regressor_rank` from the triangular factor R of W (its columns have W's geometry, so pivoting R
    decides as pivoting W would), ``shape`` W's."""
    relative = max(shape) * float(np.finfo(float).eps) if tolerance is None else float(tolerance)
    if not 0.0 < relative < 1.0:
        raise InputError(f"base parameters: tolerance {tolerance!r} must lie in (0, 1): a relative rank tolerance "
                         "(default max(rows, columns) * machine epsilon)")
    with one_blas_thread():
        diagonal = np.abs(np.diag(scipy.linalg.qr(R, mode="r", pivoting=True)[0]))
    threshold = relative * float(diagonal[0]) if diagonal.size else 0.0
    return int(np.count_nonzero(diagonal > threshold)), relative, threshold


def independent_columns(W: Array, threshold: float) -> tuple[list[int], list[int]]:
    """Step 3 of the module: the columns of W (rows, P) kept in order — each farther than ``threshold`` from the
    span of those kept before — and the zero columns (norm at most ``threshold``)."""
    kept: list[int] = []
    zero: list[int] = []
    basis = np.zeros((W.shape[0], 0))
    for j in range(W.shape[1]):
        column = W[:, j]
        if np.linalg.norm(column) <= threshold:
            zero.append(j)
            continue
        residual = column - basis @ (basis.T @ column)
        residual -= basis @ (basis.T @ residual)  # twice is enough (Giraud et al., Numer. Math. 101, 2005)
        size = np.linalg.norm(residual)
        if size > threshold:
            kept.append(j)
            basis = np.column_stack([basis, residual / size])
    return kept, zero


def _random_motion(found: TorqueRegressor, model: ModelContract, count: int, seed: int | None
                   ) -> tuple[Array, Array, Array]:
    """``count`` samples of q (within the model's finite position limits, else [-pi, pi]), q' and q'' (standard
    normal), (count, n) each."""
    rng = np.random.default_rng(seed)
    limits = model.position_limits()
    n = len(found.coordinates)
    low, high = np.full(n, -math.pi), np.full(n, math.pi)
    for i, name in enumerate(found.coordinates):
        lower, upper = limits.get(name, (None, None))
        if lower is not None and upper is not None and upper > lower:
            low[i], high[i] = lower, upper
    return rng.uniform(low, high, (count, n)), rng.standard_normal((count, n)), rng.standard_normal((count, n))


def _term(coefficient: float, name: str) -> str:
    """`` + c*name`` / `` - c*name`` with c to six digits (omitted when it shows as 1)."""
    shown = f"{abs(coefficient):.6g}"
    sign = "-" if coefficient < 0 else "+"
    return f" {sign} {name}" if shown == "1" else f" {sign} {shown}*{name}"


def _expressions(K: Array, independent: Sequence[int], standard: Sequence[str]) -> tuple[str, ...]:
    """Each base parameter as text: its own standard parameter, then the grouped ones with their coefficients."""
    texts = []
    for i, own in enumerate(independent):
        terms = [_term(float(K[i, j]), standard[int(j)]) for j in np.flatnonzero(K[i]) if j != own]
        texts.append(standard[own] + "".join(terms))
    return tuple(texts)


def _grouping(W: Array, kept: list[int], dependent: list[int]) -> Array:
    """K (b, P): the identity on the kept columns, the least-squares coefficients of the dependent ones on them
    (round-off below ROUNDOFF_RTOL of the dependent column's norm set to 0)."""
    K = np.zeros((len(kept), W.shape[1]))
    K[np.arange(len(kept)), kept] = 1.0
    if dependent:
        coefficients = np.linalg.lstsq(W[:, kept], W[:, dependent], rcond=None)[0]
        norms = np.linalg.norm(W, axis=0)
        share = np.abs(coefficients) * norms[kept][:, None] / norms[dependent][None, :]
        coefficients[share <= ROUNDOFF_RTOL] = 0.0
        K[:, dependent] = coefficients
    return K


@one_blas_thread()  # small factorizations in loops: robodyn.base.blas
def base_parameters(model: ModelContract, *, samples: int | None = None, tolerance: float | None = None,
                    seed: int | None = 0, params: Values | None = None) -> BaseParameters:
    """The base parameters of ``model``: how many, which, and their expressions in the standard parameters.

    Parameters
    ----------
    model
        A chain or a URDF robot on the tape (``model.torque_regressor()`` is not None).
    samples
        Random (q, q', q'') samples stacked (default: enough for ``5 P`` rows, at least 20).
    tolerance
        Relative rank tolerance of the QR (default ``max(N n, P) eps``; see the module docstring).
    seed
        Seed of the samples (None: fresh entropy); the default makes the result reproducible.
    params
        Parameter overrides: the geometry they change decides the grouping; the values are ``K`` times the
        standard parameters there.

    Returns
    -------
    BaseParameters
        ``count``, ``names``, ``expressions``, ``K``, ``values`` and the unidentifiable and grouped parameters.

    Raises
    ------
    NumericalError
        When the pivoted rank and the ordered selection disagree (samples too few or too special).
    """
    found = model_regressor(model, "base_parameters")
    n, size = len(found.coordinates), len(found.names)
    if samples is None:
        samples = max(MIN_SAMPLES, math.ceil(ROWS_PER_COLUMN * size / n))
    if isinstance(samples, bool) or not isinstance(samples, int | np.integer) or samples * n < size:
        raise InputError(f"base_parameters: samples={samples!r}: give an integer of at least {math.ceil(size / n)} "
                         f"(the {size} columns need as many rows; {n} rows per sample)")
    p = model.parameter_vector(params)
    W = evaluate(found, *_random_motion(found, model, int(samples), seed), p).reshape(-1, size)
    R = triangular_factor(W)  # W's column geometry in (P, P): the steps below on R decide as on W
    rank, relative, threshold = _rank(R, W.shape, tolerance)
    kept, zero = independent_columns(R, threshold)
    if len(kept) != rank:
        raise NumericalError(f"base_parameters: the pivoted QR finds rank {rank} but the ordered selection keeps "
                             f"{len(kept)} columns at threshold {threshold:.3g}: take more samples (samples=) or "
                             "another seed")
    dependent = [j for j in range(size) if j not in kept and j not in zero]
    K = _grouping(R, kept, dependent)
    names, theta = tuple(found.names[j] for j in kept), found.values(p)
    return BaseParameters(names, _expressions(K, kept, found.names), K, found.names, np.array(kept, dtype=np.intp),
                          K @ theta, theta, tuple(found.names[j] for j in zero),
                          tuple(found.names[j] for j in dependent), relative, threshold, int(samples), seed,
                          found.coordinates)
