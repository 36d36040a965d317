"""Rigid-body identification: a robot's base parameters from measured motion and joint torques.

:func:`identify_rigid` fits beta in tau = Y_b(q, q', q'') beta over the samples of measured q, q' and tau (q''
given, or from the zero-phase filter of robodyn.identification.rigid_data), Y_b the base regressor
(robodyn.identification.base_parameters), by weighted least squares, as W. Khalil, E. Dombre, *Modeling, Identification
and Control of Robots*, Hermes Penton 2002, and M. Gautier, W. Khalil, "On the identification of the inertial
parameters of robots", CDC 1988:

1. Ordinary least squares on the stacked rows; each joint's residual variance
   sigma_j^2 = |rho_j|^2 / (N - b_j), b_j the base parameters that act on joint j.
2. Each joint's rows weighted by 1 / sigma_j and solved again (Gautier and Khalil's two steps), repeated with the
   new residuals until no weight moves by more than :data:`WEIGHTS_RTOL`: the unweighted fit leaves a quiet
   joint's residual part of the loud joints' noise through the parameters they share (on a UR5 with 100 times
   quieter wrists, their sigma came out 30 % too high after two steps). ``weights`` given replace all this.
3. The final weighted fit: beta, its covariance sigma^2 (A^T A)^-1 with sigma^2 = |rho_w|^2 / (N n - b) (about 1
   when the weights are right), standard errors, correlations.

Each solve reduces the weighted rows to their triangular factor (QR in blocks) and takes the SVD of that factor
with unit-norm columns. Data that cannot tell some base parameters apart — a singular value at or below
``max(rows, b) eps`` of the largest — are refused, naming the parameters that move together in each unobserved
direction (those with at least :data:`NAMING_SHARE` of its largest entry).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.blas import one_blas_thread
from robodyn.base.errors import InputError, ShapeError
from robodyn.identification.base_parameters import BaseParameters, base_parameters, triangular_factor
from robodyn.identification.estimates import errors_and_correlation, undetermined
from robodyn.identification.regressor import evaluate, model_regressor, regressor
from robodyn.identification.rigid_data import Data, filtered, measurements
from robodyn.model.protocol import ModelContract
from robodyn.model.system import Values

if TYPE_CHECKING:
    from robodyn.identification.consistency import ConsistentParameters

__all__ = ["EXACT_RTOL", "MAX_FITS", "NAMING_SHARE", "WEIGHTS_RTOL", "RigidIdentification", "identify_rigid"]

Array = NDArray[np.float64]

NAMING_SHARE: Final = 0.1  # An unobserved direction names the base parameters with at least this share of it.
WEIGHTS_RTOL: Final = 0.01  # The default weights are settled when no joint's changes by more than 1 % in a fit ...
MAX_FITS: Final = 10  # ... or after this many fits.
EXACT_RTOL: Final = 1e-10  # Residuals below this of the torques are round-off: the data are exact, one fit decides.
EPS: Final = float(np.finfo(float).eps)


@dataclass(frozen=True, slots=True, eq=False)
class RigidIdentification:
    """Base parameters identified from measured motion and torques.

    Attributes
    ----------
    base
        The base parameters fitted (names, expressions in the standard ones, K).
    estimate : (b,)
        The identified base parameters, in the order of ``base.names``.
    standard_errors : (b,)
        Their standard deviations from the weighted fit's covariance.
    correlation : (b, b)
        Their correlation matrix.
    t : (N,)
        The times of the samples used (after filtering and decimation, when q'' was computed).
    residuals : (N, n)
        Measured minus predicted torques at those samples (unweighted).
    rms : (n,)
        Each joint's residual root mean square.
    weights : (n,)
        The weight of each joint's rows (1 / sigma_j by default).
    cost
        The weighted sum of squared residuals.
    condition
        The 2-norm condition number of the stacked base regressor at the samples (unweighted, SI units).
    method
        How q'' was obtained and the rows weighted.
    consistent
        Physically consistent standard parameters closest to the estimate (``consistent=True``), else None.
    """

    base: BaseParameters
    estimate: Array
    standard_errors: Array
    correlation: Array
    t: Array
    residuals: Array
    rms: Array
    weights: Array
    cost: float
    condition: float
    method: str
    consistent: ConsistentParameters | None = None

    def __post_init__(self) -> None:
        b, n, N = self.base.count, len(self.base.coordinates), len(self.t)
        shapes = {"estimate": (b,), "standard_errors": (b,), "correlation": (b, b), "t": (N,),
                  "residuals": (N, n), "rms": (n,), "weights": (n,)}
        for label, shape in shapes.items():
            value = getattr(self, label)
            if value.shape != shape:
                raise ShapeError(f"RigidIdentification.{label} has shape {value.shape}, expected {shape}")
            value.setflags(write=False)

    @property
    def names(self) -> tuple[str, ...]:
        """The base parameters' names (``base.names``)."""
        return self.base.names

    @property
    def relative_errors(self) -> Array:
        """Standard errors relative to the estimates' magnitudes, (b,) (inf where an estimate is 0)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.standard_errors == 0, 0.0, self.standard_errors / np.abs(self.estimate))

    def by_name(self) -> dict[str, float]:
        """``{base parameter: estimate}``."""
        return dict(zip(self.base.names, self.estimate.tolist()))

    def predict(self, model: ModelContract, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, *,
                params: Values | None = None) -> Array:
        """Joint torques the estimate predicts at samples q, q', q'' ((n,) or (N, n) each) of ``model``."""
        found = regressor(model, q, qd, qdd, params=params)
        if found.names != self.base.standard:
            raise InputError("predict: the model's regressor columns differ from those identified: give the model "
                             "the data were identified with")
        return np.asarray(self.base.base_regressor(found.Y) @ self.estimate)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``names, expressions, estimate, standard_errors, rms, weights, cost, condition, method``."""
        return {"names": list(self.base.names), "expressions": list(self.base.expressions),
                "estimate": self.estimate.tolist(), "standard_errors": self.standard_errors.tolist(),
                "rms": self.rms.tolist(), "weights": self.weights.tolist(), "cost": self.cost,
                "condition": self.condition, "method": self.method, "samples": len(self.t)}

    def text(self) -> str:
        """The estimates with their standard errors, and the residuals per joint."""
        width = max((len(name) for name in self.base.names), default=0)
        lines = [f"{self.base.count} base parameters from {len(self.t)} samples (condition {self.condition:.3g}; "
                 f"{self.method}):"]
        lines += [f"  {name:<{width}} = {value: .6g} +- {error:.2g}"
                  for name, value, error in zip(self.base.names, self.estimate, self.standard_errors)]
        lines.append("  residual rms per joint: " + ", ".join(
            f"{joint} {value:.3g}" for joint, value in zip(self.base.coordinates, self.rms)))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from robodyn.display import block, heading, html_table, note

        rows = list(zip(self.base.names, self.estimate.tolist(), self.standard_errors.tolist(),
                        self.base.expressions))
        joints = list(zip(self.base.coordinates, self.rms.tolist(), self.weights.tolist()))
        return block([heading(f"{self.base.count} base parameters identified from {len(self.t)} samples"),
                      html_table(rows, header=("base parameter", "estimate", "standard error", "expression"),
                                 row_header=True),
                      html_table(joints, header=("joint", "residual rms", "weight"), row_header=True),
                      note(f"condition {self.condition:.3g}; {self.method}")])


def _weights(weights: ArrayLike, n: int) -> Array:
    try:
        values = np.asarray(weights, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"identify_rigid: weights must be {n} positive numbers, one per joint") from None
    if values.shape != (n,) or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise InputError(f"identify_rigid: weights {np.asarray(weights).tolist()!r} must be {n} positive finite "
                         "numbers, one per joint (the inverse standard deviation of its torque errors)")
    return values


def _unobserved(base: BaseParameters, R: Array, rows: int) -> str | None:
    """None when the data determine every base parameter; else the sentence naming what they cannot tell apart.
    ``R`` (b, b) is the triangular factor of the stacked rows (``rows`` of them; robodyn.identification.estimates)."""
    tolerance = max(rows, R.shape[1]) * EPS
    found = undetermined(R, tolerance, zero=tolerance, share=NAMING_SHARE)
    groups = [f"{base.names[j]} (no effect in these data)" for j in found.dead]
    for columns, _, _ in found.directions:
        names = [base.names[j] for j in columns]
        groups.append(" and ".join(names) + (" (move together)" if len(names) > 1 else " (no effect)"))
    if not groups:
        return None
    return ("identify_rigid: these data cannot tell some base parameters apart: " + "; ".join(groups)
            + ". Excite every joint (a richer excitation: robodyn.design_excitation), or record more samples")


def _fit(A: Array, y: Array, base: BaseParameters) -> tuple[Array, Array, Array]:
    """Least squares of A beta = y: beta, the residual and (A^T A)^-1, by the triangular factor R of [A y] (QR in
    blocks, no Q formed) and the SVD of R with unit-norm columns; InputError naming what the data leave undetermined."""
    rows, b = A.shape
    if rows <= b:
        raise InputError(f"identify_rigid: {rows} equations for {b} base parameters: record more samples")
    factor = triangular_factor(np.column_stack([A, y]))
    R, projected = factor[:b, :b], factor[:b, b]
    norms = np.linalg.norm(R, axis=0)  # the columns of A have the norms of R's
    problem = _unobserved(base, R, rows)
    if problem is not None:
        raise InputError(problem)
    U, S, Vt = np.linalg.svd(R / norms)
    beta = (Vt.T @ ((U.T @ projected) / S)) / norms
    inverse = (Vt.T / S**2) @ Vt / np.outer(norms, norms)
    return beta, y - A @ beta, inverse


def _joint_sigmas(Yb: Array, residual: Array) -> Array:
    """Each joint's residual standard deviation |rho_j| / sqrt(N - b_j), b_j the base columns acting on joint
    j (Gautier and Khalil); floored at eps times the largest so that noise-free data keep finite weights."""
    N = Yb.shape[0]
    acting = np.count_nonzero(np.any(Yb != 0.0, axis=0), axis=1)  # (n,)
    dof = np.maximum(N - acting, 1)
    sigma = np.sqrt(np.sum(residual**2, axis=0) / dof)
    return np.maximum(sigma, EPS * max(float(sigma.max()), 1e-300))


def _settled_weights(Yb: Array, tau: Array, base: BaseParameters) -> tuple[Array, int]:
    """Gautier and Khalil's weights 1 / sigma_j from an unweighted fit, refitted with them until no weight moves by
    more than WEIGHTS_RTOL (at most MAX_FITS fits): the unweighted fit leaves a quiet joint's residual part of the
    loud joints' noise through the parameters they share, which the weighted fits remove. Returns the weights and
    the number of fits."""
    _, n, b = Yb.shape
    weights, size = np.ones(n), float(np.sqrt(np.mean(tau**2, axis=0)).max())
    for fits in range(1, MAX_FITS + 1):
        beta = _fit((Yb * weights[None, :, None]).reshape(-1, b), (tau * weights).reshape(-1), base)[0]
        sigma = _joint_sigmas(Yb, tau - Yb @ beta)
        updated = 1.0 / sigma
        settled = fits > 1 and np.all(np.abs(updated / updated.max() - weights / weights.max()) <= WEIGHTS_RTOL
                                      * weights / weights.max())
        weights = updated
        if settled or sigma.max() <= EXACT_RTOL * size:  # exact data: the weights are round-off and change nothing
            break
    return weights, fits


@one_blas_thread()  # small factorizations in loops: robodyn.base.blas
def identify_rigid(model: ModelContract, data: Data, *, qdd: ArrayLike | None = None, weights: ArrayLike | None = None,
                   cutoff: float | None = None, base: BaseParameters | None = None, consistent: bool = False,
                   params: Values | None = None) -> RigidIdentification:
    """Identify the base parameters of ``model`` from measured q, q' and joint torques (module docstring).

    Parameters
    ----------
    model
        A chain or a URDF robot on the tape; its geometry (and ``params``) is taken as known.
    data
        ``{"t": (N,), "q", "qd", "tau": (N, n)[, "qdd"]}``; or named columns (a mapping, or a CSV file with a
        header): ``t``, the coordinates, ``<joint>_dot``, ``<joint>_tau`` and optionally ``<joint>_ddot``; or a
        simulated Trajectory (q and q' its states, the torques its inputs ``<joint>_tau``). q' may be left out
        when q'' is computed. Non-finite values are refused with their row, times must increase strictly.
    qdd
        (N, n) accelerations, when measured or known; else q'' comes from the zero-phase filter at ``cutoff``.
    weights
        (n,) weight of each joint's rows; default: the inverse residual standard deviations, refitted until they
        settle (module docstring).
    cutoff
        The filter's cutoff frequency in Hz (needed when q'' is computed): five to ten times the motion's highest
        frequency.
    base
        The base parameters to fit (default ``robodyn.base_parameters(model, params=params)``).
    consistent
        Also find the physically consistent standard parameters nearest the estimate (robodyn.consistent_parameters,
        with the model's own as the prior).
    params
        Parameter overrides of the known geometry.

    Returns
    -------
    RigidIdentification
        The estimate with standard errors and correlations, residuals, weights and the condition number.
    """
    found = model_regressor(model, "identify_rigid")
    measured = measurements(data, found.coordinates, qdd)
    if measured.qdd is None:
        t, q, qd, acceleration, tau, how = filtered(measured, cutoff)
    elif measured.qd is None:
        raise InputError(f"{measured.source}: q'' is given but not q': give the velocities (<joint>_dot or qd)")
    else:
        t, q, qd, acceleration, tau = measured.t, measured.q, measured.qd, measured.qdd, measured.tau
        how = "q'' as given"
    base = base_parameters(model, params=params) if base is None else base
    if base.standard != found.names:
        raise InputError("identify_rigid: base= was computed for another model (its standard parameters differ): "
                         "give robodyn.base_parameters of this model")
    Yb = base.base_regressor(evaluate(found, q, qd, acceleration, model.parameter_vector(params)))  # (N, n, b)
    N, n, b = Yb.shape
    if weights is None:
        joint_weights, fits = _settled_weights(Yb, tau, base)
        how += f"; rows weighted by 1 / (each joint's residual deviation), {fits} fits"
    else:
        joint_weights = _weights(weights, n)
        how += "; rows weighted as given"
    A = (Yb * joint_weights[None, :, None]).reshape(-1, b)
    beta, weighted, inverse = _fit(A, (tau * joint_weights).reshape(-1), base)
    variance = float(weighted @ weighted) / max(N * n - b, 1)
    unit_errors, correlation = errors_and_correlation(inverse)  # correlations of the unscaled inverse: noise-free too
    errors = unit_errors * np.sqrt(variance)
    residuals = tau - Yb @ beta
    consistent_result = None
    if consistent:
        from robodyn.identification.consistency import consistent_parameters  # scipy.optimize only when asked for

        consistent_result = consistent_parameters(model, base, beta, standard_errors=errors, params=params)
    singular = np.linalg.svd(triangular_factor(Yb.reshape(-1, b)), compute_uv=False)
    return RigidIdentification(base, beta, errors, correlation, np.array(t), residuals,
                               np.sqrt(np.mean(residuals**2, axis=0)), joint_weights, float(weighted @ weighted),
                               float(singular[0] / singular[-1]), how, consistent_result)
