"""Physically consistent standard parameters that agree with identified base parameters.

Least squares on torques fits the base parameters beta = K theta without asking whether any real body has them; a
body's ten standard parameters are *physically consistent* when a positive mass density can produce them, which
holds exactly when its 4 x 4 pseudo-inertia

    J = [[Sigma, h], [h^T, m]],   Sigma = tr(I) / 2 * 1 - I,   h = m c   (I about the frame's origin)

is positive definite: a positive mass whose central inertia satisfies the triangle inequalities strictly
(P. M. Wensing, S. Kim, J.-J. E. Slotine, "Linear matrix inequalities for physically consistent inertial parameter
identification: a statistical perspective on the mass distribution", IEEE Robotics and Automation Letters 3(1),
2018). :func:`consistent_parameters` writes each body's J = L L^T with L lower triangular and exp on its diagonal (a
log-Cholesky chart of the positive-definite matrices, as C. Rucker, P. M. Wensing, "Smooth parameterization of
rigid-body inertia", IEEE RA-L 7(2), 2022), so every point is consistent, keeps the joint terms' coefficients
(armature, viscous and Coulomb friction, stiffness) non-negative by bounds, and minimizes by
scipy.optimize.least_squares (its "dogbox" method, with the exact Jacobian)

    sum_i ((K theta - beta_i) / s_i)^2  +  mu [ sum_k d(J_k, J0_k)^2 + sum_j ((psi_j - psi0_j) / w_j)^2 ]

with s_i = max(standard error_i, FIT_RTOL |beta_i|, FIT_ATOL max|beta|), d the affine-invariant distance between
positive-definite matrices, d(J, J0)^2 = |log(W J W^T)|_F^2 = sum log^2 lambda_r over the eigenvalues of J0^-1 J
(W = chol(J0)^-1; unitless, the same for a wrist and an upper arm: S. Lee, F. C. Park, "Geometric robot dynamic
identification", IEEE T-RO 36(2), 2020; the residuals are the ten entries of the matrix logarithm, smooth where the
eigenvalues meet, as they do at the prior itself), J0 the prior's pseudo-inertia (eigenvalues raised to at least
PRIOR_FLOOR of its largest: a massless or flat prior body is a limit, not a point of the chart), psi the joint terms
with w_j = |psi0_j| (1 where psi0_j = 0) and mu = ``regularization`` (default 1: a factor e in an eigenvalue weighs
like one standard error). The estimate is matched within its errors wherever consistent bodies can match it, and
the prior (the model's parameters, a CAD guess) decides what the base parameters leave open.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import scipy.optimize
from numpy.typing import ArrayLike, NDArray

from robodyn.base.blas import one_blas_thread
from robodyn.base.errors import InputError, ShapeError
from robodyn.identification.base_parameters import BaseParameters
from robodyn.identification.regressor import model_regressor
from robodyn.model.protocol import ModelContract
from robodyn.model.system import Values

__all__ = ["ConsistentParameters", "consistent_parameters", "pseudo_inertia", "standard_from_pseudo"]

Array = NDArray[np.float64]

FIT_RTOL: Final = 1e-4  # A base parameter without a standard error is weighed as if known to this fraction of
FIT_ATOL: Final = 1e-6  # itself, or this fraction of the largest one, whichever is larger. Where consistent bodies can
# match the estimate they do so far more closely (1e-10 of these on the Puma); 1e-6 and 1e-9 made the problem so
# stiff that least_squares crept along the prior's directions for hundreds of steps.
SOLVER_TOL: Final = 1e-10  # least_squares' ftol, xtol and gtol, by its "dogbox" method: joint terms that want to be
MAX_EVALUATIONS: Final = 1000  # negative land on their bound 0 (with "trf" they crept towards it for hundreds of
# evaluations on a noisy UR5: 53 evaluations against 300 unconverged; the Puma 11 against 26; a noisy Panda 375).
PRIOR_FLOOR: Final = 1e-4  # A prior body's pseudo-inertia eigenvalues are raised to this fraction of its largest.
NONNEGATIVE: Final = ("armature", "viscous", "coulomb", "stiffness")  # joint terms bounded below by 0
CHART_LIMIT: Final = 200.0  # log-Cholesky coordinates beyond this (a factor e^200) are no body: the step is refused
REFUSED: Final = 1e150  # ... by residuals this large
LOG_MEAN_RTOL: Final = 1e-6  # Eigenvalues this close use log's derivative at their geometric mean (error ~1e-12).
_LOWER: Final = np.tril_indices(4)
_UPPER: Final = np.triu_indices(4)
_TRIANGLE_WEIGHTS: Final = np.where(_UPPER[0] == _UPPER[1], 1.0, np.sqrt(2.0))  # |log M|_F^2 from 10 entries


def pseudo_inertia(theta: ArrayLike) -> Array:
    """J (4, 4) of a body's standard parameters [m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (inertia about the
    frame's origin)."""
    m, hx, hy, hz, xx, xy, yy, xz, yz, zz = np.asarray(theta, dtype=float)
    inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    J[:3, 3] = J[3, :3] = (hx, hy, hz)
    J[3, 3] = m
    return J


def standard_from_pseudo(J: Array) -> Array:
    """The ten standard parameters of the pseudo-inertia ``J`` (the inverse of :func:`pseudo_inertia`)."""
    sigma = J[:3, :3]
    inertia = np.trace(sigma) * np.eye(3) - sigma
    return np.array([J[3, 3], J[0, 3], J[1, 3], J[2, 3], inertia[0, 0], inertia[0, 1], inertia[1, 1], inertia[0, 2],
                     inertia[1, 2], inertia[2, 2]])


def _chart(J: Array) -> Array:
    """The log-Cholesky coordinates (10,) of a positive-definite J."""
    L = np.linalg.cholesky(J)
    L[np.diag_indices(4)] = np.log(np.diag(L))
    return np.asarray(L[_LOWER], dtype=float)


def _unchart(phi: Array) -> Array:
    L = np.zeros((4, 4))
    L[_LOWER] = phi
    L[np.diag_indices(4)] = np.exp(np.diag(L))
    return L @ L.T


def _raised(J: Array) -> Array:
    """J with its eigenvalues raised to at least PRIOR_FLOOR of the largest (a positive-definite prior)."""
    values, vectors = np.linalg.eigh(J)
    top = values.max()
    if not top > 0:
        raise InputError("consistent_parameters: a prior body has no positive pseudo-inertia eigenvalue (no mass and "
                         "no inertia): give prior= standard parameters with a plausible guess for it")
    return (vectors * np.maximum(values, PRIOR_FLOOR * top)) @ vectors.T


@dataclass(frozen=True, slots=True, eq=False)
class ConsistentParameters:
    """Standard parameters with every body physically consistent, as close to an estimate as the bodies allow.

    Attributes
    ----------
    standard : (P,)
        The standard parameter names (robodyn.regressor's columns).
    values : (P,)
        The consistent standard parameters.
    prior : (P,)
        The parameters they were drawn towards.
    bodies : (B,)
        The links; ``masses`` (B,), ``centres`` (B, 3) and ``inertias`` (B, 3, 3) about the centre of mass, in
        each body's joint frame, for writing back into a model file.
    base_values, base_target : (b,)
        K @ ``values`` and the base parameters it was fitted to; ``base_misfit`` (b,) their difference over s_i.
    cost
        The minimized objective (module docstring).
    converged
        Whether scipy's least_squares met its tolerances.
    """

    standard: tuple[str, ...]
    values: Array
    prior: Array
    bodies: tuple[str, ...]
    masses: Array
    centres: Array
    inertias: Array
    base_values: Array
    base_target: Array
    base_misfit: Array
    cost: float
    converged: bool

    def __post_init__(self) -> None:
        P, B, b = len(self.standard), len(self.bodies), len(self.base_target)
        shapes = {"values": (P,), "prior": (P,), "masses": (B,), "centres": (B, 3), "inertias": (B, 3, 3),
                  "base_values": (b,), "base_target": (b,), "base_misfit": (b,)}
        for label, shape in shapes.items():
            value = getattr(self, label)
            if value.shape != shape:
                raise ShapeError(f"ConsistentParameters.{label} has shape {value.shape}, expected {shape}")
            value.setflags(write=False)

    def by_name(self) -> dict[str, float]:
        """``{standard parameter: value}``."""
        return dict(zip(self.standard, self.values.tolist()))

    def _repr_html_(self) -> str:
        from robodyn.display import block, heading, html_table, note

        rows = [(link, mass, ", ".join(f"{c:.4g}" for c in centre),
                 ", ".join(f"{m:.4g}" for m in np.linalg.eigvalsh(inertia)))
                for link, mass, centre, inertia in zip(self.bodies, self.masses.tolist(), self.centres,
                                                       self.inertias)]
        return block([heading("Physically consistent parameters"),
                      html_table(rows, header=("link", "mass [kg]", "centre of mass [m]",
                                               "principal moments [kg m^2]"), row_header=True),
                      note(f"largest base misfit {np.abs(self.base_misfit).max(initial=0.0):.3g} standard errors; "
                           f"converged: {'yes' if self.converged else 'no'}")])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``standard, values, prior, bodies, masses, centres, inertias, base_misfit, cost,
        converged``."""
        return {"standard": list(self.standard), "values": self.values.tolist(), "prior": self.prior.tolist(),
                "bodies": list(self.bodies), "masses": self.masses.tolist(), "centres": self.centres.tolist(),
                "inertias": self.inertias.tolist(), "base_misfit": self.base_misfit.tolist(), "cost": self.cost,
                "converged": self.converged}


class _Problem:
    """Variables: 10 log-Cholesky coordinates per body, then the joint terms; residuals of the module's sum."""

    def __init__(self, base: BaseParameters, bodies: int, target: Array, scale: Array, prior: Array, mu: float):
        self.K, self.bodies, self.target, self.scale, self.mu = base.K, bodies, target, scale, mu
        split = 10 * bodies
        self.priors = [_raised(pseudo_inertia(prior[10 * k:10 * k + 10])) for k in range(bodies)]
        self.whiten = [np.linalg.inv(np.linalg.cholesky(J)) for J in self.priors]  # W J0 W^T = 1
        self.joint_prior = prior[split:]
        self.joint_scale = np.where(self.joint_prior != 0.0, np.abs(self.joint_prior), 1.0)

    def start(self) -> Array:
        return np.concatenate([*(_chart(J) for J in self.priors), self.joint_prior])

    def theta(self, x: Array) -> Array:
        split = 10 * self.bodies
        pieces = [standard_from_pseudo(_unchart(x[10 * k:10 * k + 10])) for k in range(self.bodies)]
        return np.concatenate([*pieces, x[split:]])

    def residuals(self, x: Array) -> Array:
        split, root = 10 * self.bodies, np.sqrt(self.mu)
        if np.abs(x[:split]).max(initial=0.0) > CHART_LIMIT:  # a trial step beyond any body: refused by its cost
            return np.full(len(self.target) + 10 * self.bodies + len(x) - split, REFUSED)
        fit = (self.K @ self.theta(x) - self.target) / self.scale
        distances = []
        for k, W in enumerate(self.whiten):
            values, vectors = np.linalg.eigh(W @ _unchart(x[10 * k:10 * k + 10]) @ W.T)
            distances.append(root * _TRIANGLE_WEIGHTS * ((vectors * np.log(values)) @ vectors.T)[_UPPER])
        joints = root * (x[split:] - self.joint_prior) / self.joint_scale
        return np.concatenate([fit, *distances, joints])

    def jacobian(self, x: Array) -> Array:
        """d residuals / dx, exactly: J = L L^T gives dJ = dL L^T + L dL^T per coordinate, theta is linear in J,
        and the logarithm of M = W J W^T = V diag(lambda) V^T moves by V (F o V^T dM V) V^T with
        F_rs = (log lambda_r - log lambda_s) / (lambda_r - lambda_s), 1 / lambda_r on the diagonal (Daleckii and
        Krein; 1 / sqrt(lambda_r lambda_s) where the two agree to LOG_MEAN_RTOL)."""
        split, root, b = 10 * self.bodies, np.sqrt(self.mu), len(self.target)
        rows = np.zeros((b + 10 * self.bodies + len(x) - split, len(x)))
        if np.abs(x[:split]).max(initial=0.0) > CHART_LIMIT:
            return rows
        for k, W in enumerate(self.whiten):
            L = np.zeros((4, 4))
            L[_LOWER] = x[10 * k:10 * k + 10]
            L[np.diag_indices(4)] = np.exp(np.diag(L))
            changes = []
            for i, j in zip(*_LOWER):
                dL = np.zeros((4, 4))
                dL[i, j] = L[i, j] if i == j else 1.0
                changes.append(dL @ L.T + L @ dL.T)
            dtheta = np.column_stack([standard_from_pseudo(dJ) for dJ in changes])  # (10, 10)
            rows[:b, 10 * k:10 * k + 10] = self.K[:, 10 * k:10 * k + 10] @ dtheta / self.scale[:, None]
            values, vectors = np.linalg.eigh(W @ L @ L.T @ W.T)
            F = _log_divided_differences(values)
            for m, dJ in enumerate(changes):
                inner = vectors.T @ W @ dJ @ W.T @ vectors
                rows[b + 10 * k:b + 10 * k + 10, 10 * k + m] = root * _TRIANGLE_WEIGHTS * (
                    (vectors @ (F * inner) @ vectors.T)[_UPPER])
        rows[:b, split:] = self.K[:, split:] / self.scale[:, None]
        rows[b + 10 * self.bodies:, split:] = np.diag(root / self.joint_scale)
        return rows


def _log_divided_differences(values: Array) -> Array:
    """F (4, 4) of :meth:`_Problem.jacobian`: the divided differences of log at the eigenvalues."""
    a, b = values[:, None], values[None, :]
    close = np.abs(a - b) <= LOG_MEAN_RTOL * np.maximum(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(close, 1.0 / np.sqrt(a * b), (np.log(a) - np.log(b)) / (a - b))


@one_blas_thread()  # small factorizations in loops: robodyn.base.blas
def consistent_parameters(model: ModelContract, base: BaseParameters, estimate: ArrayLike, *,
                          standard_errors: ArrayLike | None = None, prior: ArrayLike | None = None,
                          regularization: float = 1.0, params: Values | None = None) -> ConsistentParameters:
    """Physically consistent standard parameters of ``model`` whose base parameters match ``estimate``.

    Parameters
    ----------
    model
        The chain or URDF robot ``base`` belongs to.
    base
        Its base parameters (robodyn.base_parameters).
    estimate : (b,)
        The base parameters to match (an identification's ``estimate``).
    standard_errors : (b,)
        Their standard errors (s_i of the module docstring; default none: matched to FIT_RTOL of themselves).
    prior : (P,)
        Standard parameters to stay close to (default: the model's own, at ``params``).
    regularization
        mu, the weight of the distance to the prior against the fit: the default 1 weighs a factor e in a
        pseudo-inertia eigenvalue like one standard error of misfit (the prior as a belief of that width). On noisy
        UR5 and Panda identifications it kept the bodies' masses within a factor 1.6 of the prior's (most within 10 %)
        where the data leave them open (1e-2 let a Panda finger's grow ninefold to gain 0.2 standard error) and
        the misfit below one standard error rms;
        where consistent bodies can match the estimate, any mu matches it (the Puma to 1e-10).
    params
        Parameter overrides for the model's own standard parameters.

    Returns
    -------
    ConsistentParameters
        The standard parameters, each body's mass, centre of mass and central inertia, and the fit's misfit.
    """
    found = model_regressor(model, "consistent_parameters")
    if base.standard != found.names:
        raise InputError("consistent_parameters: base= belongs to another model: give robodyn.base_parameters of "
                         "this model")
    target = _vector(estimate, base.count, "estimate")
    errors = np.zeros(base.count) if standard_errors is None else _vector(standard_errors, base.count,
                                                                          "standard_errors")
    theta0 = (found.values(model.parameter_vector(params)) if prior is None
              else _vector(prior, len(found.names), "prior"))
    if not (np.isfinite(regularization) and regularization > 0):
        raise InputError(f"consistent_parameters: regularization={regularization!r} must be a positive number")
    scale = np.maximum.reduce([np.abs(errors), FIT_RTOL * np.abs(target),
                               np.full(base.count, FIT_ATOL * max(float(np.abs(target).max()), 1e-300))])
    B = len(found.bodies)
    problem = _Problem(base, B, target, scale, theta0, float(regularization))
    lower = np.full(len(found.names), -np.inf)
    for j, name in enumerate(found.names[10 * B:]):
        if name.rsplit(".", 1)[1] in NONNEGATIVE:
            lower[10 * B + j] = 0.0
    x0 = np.maximum(problem.start(), lower)
    solution = scipy.optimize.least_squares(problem.residuals, x0, jac=problem.jacobian, bounds=(lower, np.inf),
                                            method="dogbox", x_scale="jac", xtol=SOLVER_TOL, ftol=SOLVER_TOL,
                                            gtol=SOLVER_TOL, max_nfev=MAX_EVALUATIONS)
    theta = problem.theta(solution.x)
    masses, centres, inertias = _bodies(theta, B)
    fitted = base.K @ theta
    return ConsistentParameters(found.names, theta, theta0, found.bodies, masses, centres, inertias, fitted, target,
                                (fitted - target) / scale, float(solution.cost), bool(solution.status > 0))


def _vector(value: ArrayLike, size: int, what: str) -> Array:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"consistent_parameters: {what} must be {size} numbers") from None
    if array.shape != (size,) or not np.all(np.isfinite(array)):
        raise ShapeError(f"consistent_parameters: {what} has shape {array.shape}: give {size} finite numbers")
    return array


def _bodies(theta: Array, count: int) -> tuple[Array, Array, Array]:
    """Each body's mass (B,), centre of mass (B, 3) and inertia about it (B, 3, 3) from standard parameters."""
    masses, centres, inertias = np.empty(count), np.empty((count, 3)), np.empty((count, 3, 3))
    for k in range(count):
        m, *h = theta[10 * k:10 * k + 4]
        xx, xy, yy, xz, yz, zz = theta[10 * k + 4:10 * k + 10]
        c = np.array(h) / m
        origin = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        masses[k], centres[k] = m, c
        inertias[k] = origin - m * (c @ c * np.eye(3) - np.outer(c, c))
    return masses, centres, inertias
