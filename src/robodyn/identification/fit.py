"""The fit of robodyn.identify: Levenberg–Marquardt on the exact sensitivities, then the statistics at the optimum.

scipy's ``least_squares`` minimizes 1/2 |r(z)|^2 over the problem's coordinates z (robodyn.identification.problem)
with MINPACK's Levenberg–Marquardt (``method="lm"``), or its trust-region reflective method when some numbers are
bounded (``"trf"``, the bounds mapped to z), with the Jacobian from the sensitivities and the variables scaled by
the Jacobian's columns. At the optimum the estimates' covariance comes from J in the fitted numbers' own units
(see robodyn.identification.identify); the data's ability to tell the numbers apart is checked at the guess, before any
iteration, and again at the optimum.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.base.errors import RobodynError
from robodyn.identification.estimates import errors_and_correlation
from robodyn.identification.problem import Problem, check_identifiable
from robodyn.identification.result import RANK_TOLERANCE, TOLERANCE, Identification, no_convergence

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["fit"]


def fit(problem: Problem, bounds: Mapping[int, tuple[float, float]], noise_known: bool,
        max_evaluations: int) -> Identification:
    """Fit ``problem`` (see the module docstring); ``bounds`` by the index of a fitted number."""
    from scipy.optimize import least_squares

    z0 = np.zeros(len(problem.unknowns))
    try:
        J0 = problem.jacobian(z0)
    except RobodynError as exc:
        raise type(exc)(f"identify: the model does not simulate at the first guess: {exc}") from None
    check_identifiable(J0 / problem.dtheta(problem.theta(z0))[None, :], problem.unknowns, RANK_TOLERANCE,
                       "at the first guess")
    low, high = _z_bounds(problem, bounds)
    method = "trf" if bounds else "lm"
    solution = least_squares(problem.residuals, z0, jac=problem.jacobian, method=method, x_scale="jac",
                             bounds=(low, high) if bounds else (-np.inf, np.inf), ftol=TOLERANCE, xtol=TOLERANCE,
                             gtol=TOLERANCE, max_nfev=max_evaluations)
    if solution.status <= 0 or not np.all(np.isfinite(solution.fun)):
        raise no_convergence(float(solution.cost), float(solution.optimality), problem.evaluations,
                             str(solution.message))
    return _result(problem, solution.x, noise_known, float(solution.optimality), str(solution.message))


def _z_bounds(problem: Problem, bounds: Mapping[int, tuple[float, float]]) -> tuple[Any, Any]:
    low, high = np.full(len(problem.unknowns), -np.inf), np.full(len(problem.unknowns), np.inf)
    for k, (a, b) in bounds.items():
        unknown = problem.unknowns[k]
        if unknown.positive:  # z = log(theta / guess): a bound at or below 0 is no bound
            low[k] = math.log(a / unknown.guess) if a > 0 else -np.inf
            high[k] = math.log(b / unknown.guess) if b > 0 else -np.inf
        else:
            low[k], high[k] = (a - unknown.guess) / unknown.scale, (b - unknown.guess) / unknown.scale
    return low, high


def _result(problem: Problem, z: NDArray[np.float64], noise_known: bool, gradient: float,
            message: str) -> Identification:
    theta = problem.theta(z)
    r = problem.residuals(z)
    J = problem.jacobian(z) / problem.dtheta(theta)[None, :]  # dr/dtheta: the covariance in the numbers' own units
    names = [u.name for u in problem.unknowns]
    check_identifiable(J, problem.unknowns, RANK_TOLERANCE, "at the optimum")
    m, k = r.size, theta.size
    dof = m - k
    cost = 0.5 * float(r @ r)
    s2 = 1.0 if noise_known else 2.0 * cost / dof
    _, s, vt = np.linalg.svd(J, full_matrices=False)
    covariance = s2 * (vt.T / s**2) @ vt  # (J^T J)^-1 from the SVD: no normal equations formed
    errors, correlation = errors_and_correlation(covariance)
    runs = problem.trajectories(z)
    params = {u.parameter: value for u, value in zip(problem.unknowns, theta.tolist()) if u.parameter is not None}
    rms, fit_percent, noise = _output_statistics(problem, runs, math.sqrt(s2))
    return Identification(
        values=MappingProxyType(dict(zip(names, theta.tolist()))),
        standard_errors=MappingProxyType(dict(zip(names, errors.tolist()))),
        correlation=correlation, covariance=covariance, residuals=r.copy(), cost=cost,
        model=problem.model.with_parameters(params), noise=noise, rms=rms, fit=fit_percent, fitted=tuple(runs),
        measured=tuple(run.table for run in problem.runs), samples=m, degrees_of_freedom=dof,
        evaluations=problem.evaluations, gradient_norm=gradient, message=message)


def _output_statistics(problem: Problem, runs: list[Any], s: float
                       ) -> tuple[Mapping[str, float], Mapping[str, float], Mapping[str, float]]:
    """Per measured output over all runs: rms of y - y_measured, the fit percentage (1 - |e| / |y_measured -
    mean|) and the noise level (sigma s: the estimated one, or the given one when s = 1)."""
    errors: dict[str, list[NDArray[np.float64]]] = {}
    measured: dict[str, list[NDArray[np.float64]]] = {}
    sigma: dict[str, float] = {}
    for run, trajectory in zip(problem.runs, runs):
        for j, name in enumerate(run.outputs):
            y = trajectory.y[:, trajectory.outputs.index(name)]
            errors.setdefault(name, []).append(y - run.Y[:, j])
            measured.setdefault(name, []).append(run.Y[:, j])
            sigma.setdefault(name, s / float(run.weights[j]))
    rms, fit_percent = {}, {}
    for name, parts in errors.items():
        e, y = np.concatenate(parts), np.concatenate(measured[name])
        rms[name] = float(np.sqrt(np.mean(e**2)))
        spread = float(np.linalg.norm(y - y.mean()))
        fit_percent[name] = 100.0 * (1.0 - float(np.linalg.norm(e)) / spread) if spread > 0 else math.nan
    return MappingProxyType(rms), MappingProxyType(fit_percent), MappingProxyType(sigma)
