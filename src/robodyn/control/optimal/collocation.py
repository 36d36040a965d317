"""Direct collocation: an optimal control problem transcribed (:mod:`.transcription`) and solved by IPOPT
(:mod:`.ipopt`) on the problem's exact sparse Jacobians.

:func:`solve_collocation` is the solver registered as ``"collocation"``. The Hessian of the Lagrangian is IPOPT's
limited-memory quasi-Newton approximation: the exact one needs the dynamics' and the constraints' second
derivatives, which the problem does not give (differences of exact Jacobians would not be exact).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError
from robodyn.control.optimal.ipopt import solve_ipopt
from robodyn.control.optimal.protocol import SolverOutcome, TranscribableProblem
from robodyn.control.optimal.transcription import Transcription

__all__ = ["HESSIANS", "solve_collocation", "solve_registered_collocation"]

Array = NDArray[np.float64]

HESSIANS: Final = ("limited-memory",)


class TranscribedNLP:
    """A :class:`~.transcription.Transcription` as the :class:`~.ipopt.SparseNLP` IPOPT solves."""

    def __init__(self, transcription: Transcription) -> None:
        self.transcription = transcription
        self.size = transcription.layout.size
        self.n_constraints = transcription.n_constraints
        self.rows, self.cols = transcription.rows, transcription.cols

    def values(self, z: Array) -> tuple[float, Array]:
        tr = self.transcription
        points = tr.evaluate(z)
        return tr.objective(z, points), tr.constraints(z, points)

    def derivatives(self, z: Array) -> tuple[Array, Array]:
        return self.transcription.jacobian(z)


def solve_collocation(problem: TranscribableProblem, *, transcription: str = "hermite_simpson",
                      max_iterations: int = 500, tolerance: float = 1e-8, hessian: str = "limited-memory",
                      warm_start: tuple[Array, Array] | None = None,
                      progress: Callable[[int, float, float], object] | None = None,
                      **options: Any) -> SolverOutcome:
    """Solve ``problem`` by direct collocation with IPOPT.

    Parameters
    ----------
    problem : TranscribableProblem
    transcription : ``"hermite_simpson"`` (separated form, fourth order) or ``"trapezoidal"`` (second order);
        see :mod:`robodyn.control.optimal.transcription`.
    max_iterations : IPOPT's ``max_iter``.
    tolerance : IPOPT's ``tol`` (its scaled optimality error; the constraint violation is below it too).
    hessian : ``"limited-memory"`` (IPOPT's L-BFGS approximation of the Lagrangian's Hessian).
    warm_start : (X (N + 1, n), U (N, m) or (N + 1, m)) the start instead of ``problem.initial_guess()``.
    progress : called as progress(iteration, cost, violation) after each IPOPT iteration.
    **options : further IPOPT options by name (``mu_init``, ``print_level``, ``linear_solver``, ...).

    Returns
    -------
    SolverOutcome
        X (N + 1, n); U (N, m) the inputs at the knots 0..N-1 and ``U_final`` (m,) the input at t_N; the cost
        (the quadrature of the running cost plus the terminal cost), the largest violation of defects, bounds
        and constraints; IPOPT's iterations and status in words; ``seconds`` the IPOPT solve alone.
    """
    _check_settings(max_iterations, tolerance, hessian, options)
    tr = Transcription(problem, transcription)
    problem.compiled_dynamics()  # the model's machine code made or loaded here, not inside the timed solve
    X0, U0 = problem.initial_guess() if warm_start is None else warm_start
    z0 = tr.guess(X0, U0)
    nlp = TranscribedNLP(tr)
    settings = {"max_iter": int(max_iterations), "tol": float(tolerance), "hessian_approximation": hessian,
                **options}
    run = solve_ipopt(nlp, z0, tr.bounds(), options=settings, progress=progress, violation=tr.violation)
    X, U = tr.unpack(run.z)
    return SolverOutcome(X=X, U=U[:-1].copy(), cost=run.f, violation=tr.violation(run.z, run.g),
                         iterations=run.iterations, status=run.status, converged=run.converged,
                         seconds=run.seconds, method="collocation", U_final=U[-1].copy())


def _check_settings(max_iterations: int, tolerance: float, hessian: str, options: Mapping[str, Any]) -> None:
    if hessian not in HESSIANS:
        raise InputError(f"hessian {hessian!r} is not available: use one of {', '.join(HESSIANS)} (the exact "
                         "Hessian needs second derivatives of the dynamics, which the problem does not give)")
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, int | np.integer) or max_iterations < 0:
        raise InputError(f"max_iterations {max_iterations!r}: give a whole number >= 0")
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not (
            math.isfinite(tolerance) and tolerance > 0):
        raise InputError(f"tolerance {tolerance!r}: give a finite number > 0")
    for key in ("max_iter", "tol", "hessian_approximation"):
        if key in options:
            raise InputError(f"IPOPT option {key!r} is set by solve_collocation's own argument: use "
                             f"{ {'max_iter': 'max_iterations', 'tol': 'tolerance'}.get(key, 'hessian')}=")


def solve_registered_collocation(problem: TranscribableProblem, **options: Any) -> SolverOutcome:
    """The registry's ``"collocation"``: :func:`solve_collocation` with the problem's own ``transcription`` (an
    OptimalControlProblem's) unless ``options`` name one."""
    options.setdefault("transcription", getattr(problem, "transcription", "hermite_simpson"))
    return solve_collocation(problem, **options)
