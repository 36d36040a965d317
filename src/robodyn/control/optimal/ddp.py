"""The DDP family: iLQR/DDP and feasibility-driven DDP (FDDP), with input boxes, on robodyn's exact derivatives.

:func:`solve_ddp` minimizes sum_k dt l(t_k, x_k, u_k) + l_T(x_N) (Crocoddyl's convention: costs on the knots,
cost derivatives scaled by dt) subject to x_{k+1} = F(x_k, u_k), the step of :mod:`.steps`. Each iteration
gathers every knot's derivatives into arrays through the problem's batched calls (:class:`_Knots`), runs one
compiled backward pass (:mod:`.ddp_passes`), then a backtracking line search of rollouts (compiled, through the
model's machine code, when the problem offers it: :mod:`.batch.kernels`).

- ``method="ddp"``: Crocoddyl's SolverDDP (iLQR: Gauss-Newton, no second derivatives of the dynamics); every
  rollout starts at x0 and closes all gaps at once.
- ``method="fddp"``: SolverFDDP (Mastalli et al. 2020, "Crocoddyl: An Efficient and Versatile Framework for
  Multi-Contact Optimal Control", ICRA, algorithm 1): the gaps f_k = F(x_{k-1}, u_{k-1}) - x_k of an infeasible
  guess are kept in the backward pass and the rollout closes them by the factor (1 - alpha); the expected
  improvement has the gaps' terms.
- input bounds: SolverBoxFDDP/BoxDDP (Tassa et al. 2014, ICRA): the box QP per knot once the iterate is
  feasible, and the rollout's inputs clamped to the box.
- Levenberg-Marquardt regularization mu of Q_uu and V_xx (divided by ``regularization_factor`` after a step
  of alpha > 1/2, multiplied after one of alpha <= 1/64 or a failed factorization); line search on
  alpha = 1, 1/2, ..., 2^-9 accepting when the cost falls by more than 0.1 of the expected improvement
  dV_exp = alpha (d_g + alpha d_q / 2).
- stop: the iterate is feasible (no gaps) and |d_g + d_q / 2| < tolerance.
- state bounds, path inequalities, terminal equalities: an augmented Lagrangian outer loop
  (:mod:`.ddp_constraints`); converged only when their violation is below ``constraint_tolerance``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError, NumericalError, ShapeError
from robodyn.control.optimal import ddp_passes
from robodyn.control.optimal.ddp_constraints import AugmentedLagrangian, has_constraints
from robodyn.control.optimal.protocol import SolverOutcome, TranscribableProblem
from robodyn.control.optimal.steps import ZOH, DiscreteStep, discretize

__all__ = ["DDPOptions", "solve_ddp", "solve_registered_ddp", "solve_registered_fddp"]

Array = NDArray[np.float64]
Progress = Callable[[int, float, float], object]

METHODS = ("ddp", "fddp")
#: Crocoddyl's thresholds: accept a step when the cost falls by this fraction of the expected improvement ...
ACCEPT_STEP = 0.1
#: ... or, while infeasible (FDDP), when it rises by less than this multiple of it (a gap-closing step).
ACCEPT_NEGATIVE_STEP = 2.0
#: A step longer than this lowers the regularization; one no longer than the other raises it.
STEP_DECREASE, STEP_INCREASE = 0.5, 0.01
#: |d_g| below this accepts any step (the direction is flat).
FLAT_GRADIENT = 1e-12
ALPHAS = tuple(0.5 ** i for i in range(10))
#: The most augmented-Lagrangian multiplier updates of one solve.
MAX_MULTIPLIER_UPDATES = 30


@dataclass(frozen=True, slots=True)
class DDPOptions:
    """The options of :func:`solve_ddp` passed as keywords (``**options``).

    regularization_min, regularization_max : the range of mu; regularization_factor : its increase/decrease
    factor; gap_tolerance : a warm start whose largest gap is at most this (times max(1, |X|)) is feasible;
    penalty_weight, weight_growth : the augmented Lagrangian's initial weight and its growth;
    constraint_tolerance : the largest constraint violation of a converged solve; qp_tolerance : the box QP's
    gradient tolerance.
    """

    regularization_min: float = 1e-9
    regularization_max: float = 1e9
    regularization_factor: float = 10.0
    gap_tolerance: float = 1e-12
    penalty_weight: float = 1e3
    weight_growth: float = 10.0
    constraint_tolerance: float = 1e-6
    qp_tolerance: float = 1e-10

    @classmethod
    def from_keywords(cls, options: dict[str, Any]) -> DDPOptions:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise InputError(f"unknown DDP option(s) {', '.join(map(repr, unknown))}: the options are "
                             f"{', '.join(sorted(known))}")
        values = {}
        for name, value in options.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or value <= 0:
                raise InputError(f"DDP option {name} must be a finite number > 0, got {value!r}")
            values[name] = float(value)
        return cls(**values)


class _Knots:
    """The arrays of every knot's derivatives (the workspace of one solve) and how to gather them."""

    def __init__(self, problem: TranscribableProblem, step: DiscreteStep) -> None:
        N, n, m = problem.knots, len(problem.states), len(problem.inputs)
        self.problem, self.step, self.dt = problem, step, step.dt
        self.times = np.asarray(problem.times(), dtype=float)
        self.x0 = np.asarray(problem.x0, dtype=float)
        self.Fx, self.Fu = np.zeros((N, n, n)), np.zeros((N, n, m))
        self.lx, self.lu = np.zeros((N, n)), np.zeros((N, m))
        self.lxx, self.luu, self.lux = np.zeros((N, n, n)), np.zeros((N, m, m)), np.zeros((N, m, n))
        self.gaps = np.zeros((N + 1, n))
        self.K, self.k = np.zeros((N, m, n)), np.zeros((N, m))
        self.Vx, self.Vxx = np.zeros((N + 1, n)), np.zeros((N + 1, n, n))
        self.Qu, self.Quuk = np.zeros((N, m)), np.zeros((N, m))
        self.lx_T, self.lxx_T = np.zeros(n), np.zeros((n, n))
        bounds = np.asarray(problem.input_bounds, dtype=float).reshape(m, 2)
        self.lower, self.upper = np.ascontiguousarray(bounds[:, 0]), np.ascontiguousarray(bounds[:, 1])
        self.nq = int(problem.mechanical)
        compiled = problem.compiled_dynamics()
        self.addresses: NDArray[np.int64] | None = None
        self.p = np.zeros(0)
        if compiled is not None:
            self.addresses, self.p = compiled.addresses, np.ascontiguousarray(compiled.p, dtype=float)
        elif step.rule == ZOH:  # no call of the model: the compiled rollout needs no addresses
            self.addresses = np.zeros(4, dtype=np.int64)

    def gather(self, X: Array, U: Array, penalty: AugmentedLagrangian | None) -> tuple[float, float]:
        """Fill the derivatives and the gaps at (X, U) with batched calls (the step's stages and the running
        cost at every knot at once); returns (the objective, the objective plus penalties)."""
        problem, dt = self.problem, self.dt
        t = self.times[:-1]
        self.gaps[0] = self.x0 - X[0]
        x_next, self.Fx[:], self.Fu[:] = self.step.linearize_points(t, X[:-1], U)
        self.gaps[1:] = x_next - X[1:]
        d = problem.running_derivatives_points(t, X[:-1], U)
        objective = _knot_sum(dt * np.asarray(d.l, dtype=float))
        self.lx[:], self.lu[:] = dt * d.lx, dt * d.lu
        self.lxx[:], self.luu[:], self.lux[:] = dt * d.lxx, dt * d.luu, dt * d.lux
        extra = 0.0
        if penalty is not None:
            for k in range(U.shape[0]):
                p, px, pu, pxx, puu, pux = penalty.knot(k, float(t[k]), X[k], U[k])
                extra += p
                self.lx[k] += px
                self.lu[k] += pu
                self.lxx[k] += pxx
                self.luu[k] += puu
                self.lux[k] += pux
        d_T = problem.terminal_derivatives(X[-1])
        objective += d_T.l
        self.lx_T[:], self.lxx_T[:] = d_T.lx, d_T.lxx
        if penalty is not None:
            p, px, pxx = penalty.terminal(X[-1])
            extra += p
            self.lx_T += px
            self.lxx_T += pxx
        return objective, objective + extra

    def backward(self, feasible: bool, mu: float, box: bool, U: Array, bounds: Array, options: DDPOptions) -> bool:
        """One compiled backward pass from the gathered derivatives; False when Q_uu is not positive definite."""
        self.Vx[-1], self.Vxx[-1] = self.lx_T, self.lxx_T
        du_lb, du_ub = bounds[:, 0] - U, bounds[:, 1] - U
        failed = ddp_passes.backward_pass(
            self.Fx, self.Fu, self.lx, self.lu, self.lxx, self.luu, self.lux, self.gaps, feasible, mu, box,
            du_lb, du_ub, options.qp_tolerance, self.K, self.k, self.Vx, self.Vxx, self.Qu, self.Quuk)
        return bool(failed < 0)


@dataclass(slots=True)
class _Iterate:
    """The current solution of a solve: states, inputs, costs and whether its rollout has no gaps."""

    X: Array
    U: Array
    objective: float
    cost: float
    feasible: bool


def _knot_sum(values: Array) -> float:
    """The sum of the knots' terms in knot order (the order of a loop adding them one by one)."""
    total = 0.0
    for value in values.tolist():
        total += value
    return total


def _rollout(knots: _Knots, it: _Iterate, alpha: float, fddp: bool, bounds: Array,
             penalty: AugmentedLagrangian | None) -> tuple[Array, Array, float, float]:
    """(X_try, U_try, objective, objective plus penalties) of the affine feedback with step alpha; the FDDP
    rollout starts each knot at F(previous) + (alpha - 1) f_k (a gap closed by the factor 1 - alpha). The
    states and inputs come from the compiled rollout when the problem offers its compiled f (or the step is a
    zero-order hold), else from a Python loop of steps; the costs from one batched call."""
    problem, step, dt, times = knots.problem, knots.step, knots.dt, knots.times
    X_try, U_try = np.empty_like(it.X), np.empty_like(it.U)
    keep_gaps = fddp and not it.feasible and alpha != 1.0
    lower, upper = knots.lower, knots.upper
    if knots.addresses is not None:
        from robodyn.control.optimal.batch.kernels import rollout

        if not rollout(knots.addresses, knots.p, step.rule, knots.nq, step.zoh, dt, times, knots.x0, it.X, it.U,
                       knots.k, knots.K, knots.gaps, alpha, keep_gaps, lower, upper, X_try, U_try):
            raise NumericalError("the rollout left the finite numbers")
    else:
        x = knots.x0
        for k in range(it.U.shape[0]):
            X_try[k] = x + (alpha - 1.0) * knots.gaps[k] if keep_gaps else x
            U_try[k] = ddp_passes.affine_inputs(it.U, knots.k, knots.K, it.X, X_try[k], k, alpha, lower, upper)
            x = step.advance(float(times[k]), X_try[k], U_try[k])
        X_try[-1] = x + (alpha - 1.0) * knots.gaps[-1] if keep_gaps else x
    objective = _knot_sum(dt * np.asarray(problem.running_points(times[:-1], X_try[:-1], U_try), dtype=float))
    objective += problem.terminal(X_try[-1])
    extra = 0.0
    if penalty is not None:
        for k in range(it.U.shape[0]):
            extra += penalty.knot_value(k, float(times[k]), X_try[k], U_try[k])
        extra += penalty.terminal(X_try[-1])[0]
    return X_try, U_try, objective, objective + extra


def _starting_point(problem: TranscribableProblem, warm_start: tuple[Array, Array] | None) -> tuple[Array, Array]:
    X, U = problem.initial_guess() if warm_start is None else warm_start
    N, n, m = problem.knots, len(problem.states), len(problem.inputs)
    try:
        X, U = np.array(X, dtype=float), np.array(U, dtype=float)
    except (TypeError, ValueError):
        raise InputError("warm_start must be two numeric arrays (X, U)") from None
    if X.shape != (N + 1, n) or U.shape != (N, m):
        raise ShapeError(f"warm_start X {X.shape} and U {U.shape}: expected ({N + 1}, {n}) and ({N}, {m})")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(U))):
        raise InputError("warm_start contains non-finite numbers: give finite states and inputs")
    return X, U


def _accept(fddp: bool, it: _Iterate, d_g: float, dV: float, dV_exp: float) -> bool:
    """Crocoddyl's acceptance of a step: a fraction of the expected decrease, or any step while infeasible
    (DDP) / a bounded increase that closes gaps (FDDP)."""
    if dV_exp >= 0.0:
        return abs(d_g) < FLAT_GRADIENT or (not fddp and not it.feasible) or dV > ACCEPT_STEP * dV_exp
    return fddp and not it.feasible and dV > ACCEPT_NEGATIVE_STEP * dV_exp


def _line_search(knots: _Knots, it: _Iterate, fddp: bool, bounds: Array, penalty: AugmentedLagrangian | None,
                 terms: tuple[float, float]) -> tuple[_Iterate | None, float]:
    """The first accepted step of alpha = 1, 1/2, ...: (the new iterate or None, the last alpha tried)."""
    d_g, d_q = terms
    alpha = ALPHAS[0]
    for alpha in ALPHAS:
        try:  # a rollout that diverges is a rejected step (Crocoddyl's forward_error)
            X_try, U_try, objective, cost = _rollout(knots, it, alpha, fddp, bounds, penalty)
        except NumericalError:
            continue
        if not math.isfinite(cost) or not np.all(np.isfinite(X_try)):
            continue
        dv = 0.0
        if fddp and not it.feasible:
            dv = ddp_passes.gap_correction(knots.Vxx, knots.gaps, X_try, it.X)
        d0, d1 = d_g + dv, d_q - 2.0 * dv
        if _accept(fddp, it, d0, it.cost - cost, alpha * (d0 + 0.5 * alpha * d1)):
            return _Iterate(X_try, U_try, objective, cost, it.feasible or alpha == 1.0 or not fddp), alpha
    return None, alpha


def _violation(knots: _Knots, it: _Iterate, bounds: Array, penalty: AugmentedLagrangian | None) -> float:
    """The largest gap (0 once feasible), input bound and constraint violation of the iterate."""
    worst = 0.0 if it.feasible else float(np.max(np.abs(knots.gaps)))
    worst = max(worst, float(np.max(bounds[:, 0] - it.U, initial=0.0)),
                float(np.max(it.U - bounds[:, 1], initial=0.0)))
    if penalty is not None:
        worst = max(worst, penalty.violation(knots.times, it.X, it.U))
    return worst


def solve_ddp(problem: TranscribableProblem, *, method: str = "fddp", integrator: str = "rk4",
              max_iterations: int = 200, tolerance: float = 1e-9, regularization: float = 1e-9,
              warm_start: tuple[Array, Array] | None = None, progress: Progress | None = None,
              **options: Any) -> SolverOutcome:
    """Solve ``problem`` by DDP (``method="ddp"``) or FDDP (``"fddp"``) on the step ``integrator``.

    Parameters
    ----------
    problem : the problem (its knots, dynamics, costs, bounds and constraints).
    method : "ddp" or "fddp".
    integrator : a rule of :data:`robodyn.control.optimal.steps.STEPS` ("euler", "rk4", "zoh").
    max_iterations : the most line searches (iterations) made.
    tolerance : the stop on the expected improvement |d_g + d_q / 2| of a feasible iterate.
    regularization : the initial Levenberg-Marquardt mu of Q_uu and V_xx.
    warm_start : (X (N + 1, n), U (N, m)), or None for ``problem.initial_guess()``.
    progress : called as progress(iteration, cost, violation) after each iteration.
    options : :class:`DDPOptions` by keyword.

    Returns
    -------
    SolverOutcome : the last iterate; ``cost`` is the objective without constraint terms, ``gains`` the last
    backward pass's K (N, m, n) (u = U - K (x - X)).
    """
    if method not in METHODS:
        raise InputError(f"unknown DDP method {method!r}: choose 'ddp' or 'fddp'")
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, int) or max_iterations < 0:
        raise InputError(f"max_iterations must be an integer >= 0, got {max_iterations!r}")
    for name, value in (("tolerance", tolerance), ("regularization", regularization)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == math.inf:
            raise InputError(f"{name} must be a finite number > 0, got {value!r}")
    settings = DDPOptions.from_keywords(options)
    X, U = _starting_point(problem, warm_start)
    knots = _Knots(problem, discretize(problem, integrator))
    start = time.perf_counter()
    outcome = _iterate(knots, X, U, method, max_iterations, float(tolerance), float(regularization), settings,
                       progress)
    return outcome(time.perf_counter() - start)


def _iterate(knots: _Knots, X: Array, U: Array, method: str, max_iterations: int, tolerance: float, mu: float,
             options: DDPOptions, progress: Progress | None) -> Callable[[float], SolverOutcome]:
    """The iterations of :func:`solve_ddp`; returns the outcome awaiting its time."""
    problem, fddp = knots.problem, method == "fddp"
    bounds = np.asarray(problem.input_bounds, dtype=float).reshape(len(problem.inputs), 2)
    box = bool(np.any(np.isfinite(bounds)))
    penalty = (AugmentedLagrangian(problem, options.penalty_weight, options.weight_growth)
               if has_constraints(problem) else None)
    objective, cost = knots.gather(X, U, penalty)
    scale = max(1.0, float(np.max(np.abs(X))))
    it = _Iterate(X, U, objective, cost, float(np.max(np.abs(knots.gaps))) <= options.gap_tolerance * scale)
    iterations, updates, status, converged, recalculate = 0, 0, "", False, False
    while True:
        if recalculate:
            it.objective, it.cost = knots.gather(it.X, it.U, penalty)
        while not knots.backward(it.feasible, mu, box, it.U, bounds, options):
            if mu >= options.regularization_max:
                status = "the regularization reached its maximum: Q_uu is not positive definite; check the costs"
                break
            mu = min(mu * options.regularization_factor, options.regularization_max)
        if status:
            break
        terms = ddp_passes.expected_terms(knots.Qu, knots.k, knots.Quuk, knots.Vx, knots.Vxx, knots.gaps,
                                          it.feasible)
        if it.feasible and abs(terms[0] + 0.5 * terms[1]) < tolerance:
            if penalty is None or penalty.violation(knots.times, it.X, it.U) <= options.constraint_tolerance:
                converged, status = True, "converged: the expected improvement is below the tolerance"
                break
            updates += 1
            if updates > MAX_MULTIPLIER_UPDATES:
                status = (f"constraints still violated by {penalty.violation(knots.times, it.X, it.U):.3g} after "
                          f"{MAX_MULTIPLIER_UPDATES} multiplier updates: raise penalty_weight or check feasibility")
                break
            penalty.update(knots.times, it.X, it.U)
            recalculate = True
            continue
        if iterations >= max_iterations:
            status = (f"not converged in {max_iterations} iterations (expected improvement "
                      f"{abs(terms[0] + 0.5 * terms[1]):.3g}): raise max_iterations or check the problem")
            break
        accepted, alpha = _line_search(knots, it, fddp, bounds, penalty, terms)
        iterations += 1
        recalculate = accepted is not None
        if accepted is not None:
            it = accepted
        if alpha > STEP_DECREASE:
            mu = max(mu / options.regularization_factor, options.regularization_min)
        if alpha <= STEP_INCREASE:
            mu = min(mu * options.regularization_factor, options.regularization_max)
            if mu >= options.regularization_max:
                status = "the regularization reached its maximum: no step decreases the cost"
                break
        if progress is not None:
            progress(iterations, it.objective, _violation(knots, it, bounds, penalty))
    violation = _violation(knots, it, bounds, penalty)
    gains = knots.K.copy()

    def finish(seconds: float) -> SolverOutcome:
        return SolverOutcome(X=it.X, U=it.U, cost=it.objective, violation=violation, iterations=iterations,
                             status=status, converged=converged, seconds=seconds, method=method, gains=gains)
    return finish


def solve_registered_ddp(problem: TranscribableProblem, **options: Any) -> SolverOutcome:
    """The registry's ``"ddp"``: :func:`solve_ddp` with ``method="ddp"`` and the problem's own ``integrator``
    (an OptimalControlProblem's) unless ``options`` name one."""
    options.setdefault("integrator", getattr(problem, "integrator", "rk4"))
    return solve_ddp(problem, **{**options, "method": "ddp"})


def solve_registered_fddp(problem: TranscribableProblem, **options: Any) -> SolverOutcome:
    """The registry's ``"fddp"``: :func:`solve_ddp` with ``method="fddp"`` and the problem's own ``integrator``."""
    options.setdefault("integrator", getattr(problem, "integrator", "rk4"))
    return solve_ddp(problem, **{**options, "method": "fddp"})
