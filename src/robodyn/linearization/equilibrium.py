"""Operating points: solve f(t, x, u, p) = 0 for the states and inputs that are not fixed.

:func:`find_equilibrium` fixes some states and inputs by name and solves the n equations f = 0 for the
k remaining unknowns z (a mix of states and inputs). It returns a tuple of :class:`OperatingPoint`,
which feed :func:`~robodyn.linearization.linearize.linearize` (``linearize(model, op.x, op.u)``).

How it solves
-------------
- **Jacobian.** The exact one when the model has it (``model.jacobian_method``): sympy df/dx, df/du
  of a :class:`~robodyn.model.kinds.symbolic.SymbolicSystem`, the Cholesky-based exact Jacobians of a
  :class:`~robodyn.model.kinds.mechanical.ManipulatorSystem`, [A | B] of a
  :class:`~robodyn.model.kinds.linear.LinearSystem`; central differences with a scaled step otherwise. Only
  the columns of the unknowns are used: J = [df/dx | df/du][:, unknowns], shape (n, k).
- **Square systems** (k = n): ``scipy.optimize.root(method="hybr")`` (MINPACK's Powell hybrid method,
  which takes dogleg steps and so survives singular Jacobians).
- **Over- or under-determined systems** (k != n): ``scipy.optimize.least_squares`` (trust region
  reflective). An over-determined system has a solution only when the fixed values are consistent (its
  residual says whether they are); an under-determined one has a continuum of solutions, and each
  start returns *one of many* (the one least squares reaches from that start).
- **A start that is a solution** (f = 0 exactly there, a finite Jacobian) is the answer without calling the
  solver: MINPACK's hybrid method returns such a start unchanged (its first step is zero and its convergence test
  holds) and so does least squares (the gradient J^T f is zero: its ``gtol`` test holds before any step), so the
  result is the same and scipy.optimize is not imported (``robodyn linearize`` of a loop at rest). A first start
  within ``tol`` (a model's rest state: a Riccati fixed point to rounding) is the answer too: a solver could only
  move it within the tolerance asked for, at the cost of many evaluations of f (a Jacobian by differences).
- Every solver result is polished by at most :data:`POLISH_STEPS` Gauss–Newton steps (least squares on
  the exact Jacobian), kept only while they lower max |f|. A point counts as converged when
  max |f| <= ``tol`` (absolute, in the units of x').
- **Holding torque.** For a manipulator-form model M(q) q'' = Q(t, q, q', u) - c(t, q, q') with every
  coordinate fixed, the velocities fixed to zero (or left free: q' = q_dot forces them to zero) and some
  inputs unknown, the equilibrium condition is r(u) = Q - c = 0. When r is affine in the unknown inputs
  — checked by comparing a second evaluation with the exact dr/du — the holding input solves
  dr/du u = -r(u = 0) by linear least squares (minimum norm when there are more inputs than
  coordinates, again one of many); otherwise the general solver is used.
- **A model that knows where it rests** (``rest_state``: a diagram's sampled estimators, at the plant's rest
  point with the covariance of their steady-state filter) gives the first start when there is no ``guess``: a
  covariance's fixed point is far from any start drawn at random.
- **Several starts.** ``starts`` > 1 starts the first solve at ``guess`` and the others uniformly at
  random in ``box`` (default [-pi, pi] for *every* unknown, inputs included: give ``box`` for other
  scales). Solutions closer than :data:`DUPLICATE_DISTANCE` (per component, relative to
  max(1, |value|)) count once, and so do solutions whose states differ by whole turns 2 pi k in states
  the model is 2 pi-periodic in (an angle): theta = pi and theta = -pi are one point. Periodicity is
  checked numerically, by comparing f at :data:`PERIODIC_PROBES` points around the two solutions. Values
  are otherwise raw (the first solution found is kept, not wrapped), and -0.0 is stored as 0.0.

Reference: J. J. Moré, B. S. Garbow, K. E. Hillstrom, *User Guide for MINPACK-1*, ANL-80-74 (1980);
J. Nocedal, S. J. Wright, *Numerical Optimization*, 2nd ed., ch. 11 (nonlinear equations).
"""

from __future__ import annotations

import difflib
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeAlias

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import ConvergenceError, InputError, NumericalError, RobodynError, ShapeError, UnknownNameError
from robodyn.base.names import did_you_mean
from robodyn.linear.systems import require_continuous
from robodyn.linearization.derivatives import central_differences
from robodyn.linearization.points import OperatingPoint, finite_value
from robodyn.model.system import Values, require_model

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["DEFAULT_BOX", "DUPLICATE_DISTANCE", "POLISH_STEPS", "OperatingPoint", "find_equilibrium"]

Array: TypeAlias = NDArray[np.float64]
Box: TypeAlias = tuple[float, float] | Mapping[str, tuple[float, float]]

MAX_STARTS: Final = 10_000  # Each start is one root solve (milliseconds): more would run for minutes.
DEFAULT_BOX: Final = (-math.pi, math.pi)  # Range of random starts for every unknown not named in ``box``.
DUPLICATE_DISTANCE: Final = 1e-6  # Solutions closer than this (per component, relative) are one solution.
POLISH_STEPS: Final = 3  # Gauss-Newton steps after the scipy solver; each kept only if it lowers max |f|.
_AT_MINUS_PI: Final = 1e-9  # a wrapped angle this close to -pi is pi (equilibria are solved to ~1e-10)
PERIODIC_PROBES: Final = 3  # Points near a solution where f must repeat after a 2 pi shift to call it one turn.
PERIODIC_TOLERANCE: Final = 1e-9  # |f(x + 2 pi k e_i) - f(x)| relative to 1 + |f|: "periodic" (sin, cos round).
AFFINE_TOLERANCE: Final = 1e-9  # |r(u1) - (r(u0) + dr/du (u1 - u0))| relative to the sizes: "affine in u".
ADVICE: Final = ("try other guesses, more starts, or fix more variables; if no values of the unknowns can "
                 "satisfy f = 0 with the fixed ones, fix other variables")


# --- the problem: f restricted to the unknowns ------------------------------------------------------------
JacobianFunction: TypeAlias = Callable[[float, Array, Array, Array], Array]


def _exact_jacobian(model: ModelContract) -> JacobianFunction | None:
    """[df/dx | df/du] ``(n, n + m)`` at a point, when the model has exact derivatives."""
    if model.jacobian_method is None:
        return None
    return lambda t, x, u, p: np.hstack(model.jacobians_raw(t, x, u, p))


@dataclass(frozen=True, slots=True)
class _Problem:
    """f(t, x, u, p) as a function of the unknowns z ``(k,)``; ``base`` ``(n + m,)`` holds the fixed values.
    With targets, the residual goes on with h(t, x, u, p)[outputs] - values (trim: Simulink's findop)."""

    model: ModelContract
    time: float
    p: Array
    base: Array
    free: NDArray[np.intp]
    exact: JacobianFunction | None
    outputs: NDArray[np.intp]  # the targeted outputs' indices (none: f = 0 only)
    values: Array  # their values

    @property
    def equations(self) -> int:
        return self.model.n_states + self.outputs.size

    def point(self, z: Array) -> tuple[Array, Array]:
        full = self.base.copy()
        full[self.free] = z
        n = self.model.n_states
        return full[:n], full[n:]

    def residual(self, z: Array) -> Array:
        x, u = self.point(np.asarray(z, dtype=float))
        f = self.model.f_raw(self.time, x, u, self.p)
        if not self.outputs.size:
            return f
        y = np.asarray(self.model.h_raw(self.time, x, u, self.p), dtype=float)
        return np.concatenate([f, y[self.outputs] - self.values])

    def jacobian(self, z: Array) -> Array:
        z = np.asarray(z, dtype=float)
        if self.exact is None:
            return central_differences(self.residual, z)[0]
        x, u = self.point(z)
        J = np.asarray(self.exact(self.time, x, u, self.p), dtype=float)
        if self.outputs.size:
            exact_h = self.model.output_jacobians_raw(self.time, x, u, self.p)
            if exact_h is None:  # h without exact derivatives: difference the whole residual
                return central_differences(self.residual, z)[0]
            J = np.vstack([J, np.hstack([np.asarray(m, dtype=float) for m in exact_h])[self.outputs]])
        return J[:, self.free]


@dataclass(frozen=True, slots=True)
class _Attempt:
    z: Array
    residual: float  # max |f|; inf when the solve failed
    message: str


def _max_abs(values: Array) -> float:
    value = float(np.max(np.abs(values), initial=0.0))
    return value if math.isfinite(value) else math.inf


def _polish(problem: _Problem, z: Array) -> tuple[Array, float]:
    """At most POLISH_STEPS Gauss-Newton steps from z, each kept only if it lowers max |f|."""
    r = problem.residual(z)
    best = _max_abs(r)
    for _ in range(POLISH_STEPS):
        if best == 0.0 or not math.isfinite(best):
            break
        step = np.linalg.lstsq(problem.jacobian(z), -r, rcond=None)[0]
        trial = z + step
        r_trial = problem.residual(trial)
        if not _max_abs(r_trial) < best:
            break
        z, r, best = trial, r_trial, _max_abs(r_trial)
    return z, best


def _solve_from(problem: _Problem, z0: Array, f0: Array | None = None, tol: float = 0.0) -> _Attempt:
    """One solve from z0: hybr for square systems, least squares otherwise; failures are reported, not raised.
    ``f0``: the residual at z0 when known (a start that is a solution, or within ``tol`` of one, is its own answer:
    module docstring)."""
    square = problem.free.size == problem.equations
    if f0 is not None and _max_abs(f0) == 0.0 and np.all(np.isfinite(problem.jacobian(z0))):
        return _Attempt(np.array(z0, dtype=float), 0.0, "the start is a solution")  # what either solver returns
    if f0 is not None and _max_abs(f0) <= tol:
        return _Attempt(np.array(z0, dtype=float), _max_abs(f0), "the start is a solution within tol")
    import scipy.optimize  # here: a start that is a solution needs none of it (~0.2 s of a command's start-up)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # hybr's "not making good progress": judged by residual
        try:
            if square:
                solution = scipy.optimize.root(problem.residual, z0, jac=problem.jacobian, method="hybr")
            else:
                solution = scipy.optimize.least_squares(problem.residual, z0, jac=problem.jacobian, method="trf",
                                                        xtol=1e-15, ftol=1e-15, gtol=1e-15)
            z, residual = _polish(problem, np.asarray(solution.x, dtype=float))
        except (RobodynError, ValueError, ArithmeticError, np.linalg.LinAlgError) as error:
            return _Attempt(z0, math.inf, f"{type(error).__name__}: {error}")
    return _Attempt(z, residual, " ".join(str(solution.message).split()))


# --- arguments ---------------------------------------------------------------------------------------------
def _unknown_name(name: str, names: Sequence[str], where: str) -> UnknownNameError:
    close = difflib.get_close_matches(name, list(names), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return UnknownNameError(f"{where}: unknown state or input {name!r} (the model's states and inputs: "
                            f"{', '.join(names)}){hint}")




def _fixed_values(fix: Mapping[str, float] | None, names: Sequence[str]) -> dict[int, float]:
    """``{index into [x, u]: value}`` from ``fix``."""
    if fix is None:
        return {}
    if not isinstance(fix, Mapping):
        raise InputError(f"fix must map state/input names to values, got {fix!r}: write {{'theta': 0.3}}")
    index = {name: i for i, name in enumerate(names)}
    fixed: dict[int, float] = {}
    for name, value in fix.items():
        if name not in index:
            raise _unknown_name(str(name), names, "fix")
        fixed[index[name]] = finite_value(value, f"fixed value of {name!r}")
    return fixed


def target_outputs(targets: Mapping[str, float] | None, outputs: Sequence[str]) -> tuple[NDArray[np.intp], Array]:
    """The targeted outputs' indices and values from ``{output: value}``."""
    if targets is None:
        return np.zeros(0, dtype=np.intp), np.zeros(0)
    if not isinstance(targets, Mapping):
        raise InputError(f"targets must map output names to values, got {targets!r}: write {{'y': 0.5}}")
    index, values = [], []
    for name, value in targets.items():
        if name not in outputs:
            raise UnknownNameError(f"targets: unknown output {name!r} (the model's outputs: {', '.join(outputs)})"
                                   f"{did_you_mean(str(name), list(outputs))}")
        index.append(outputs.index(name))
        values.append(finite_value(value, f"target of output {name!r}"))
    return np.array(index, dtype=np.intp), np.array(values, dtype=float)


def _guess_vector(guess: Values | None, unknowns: Sequence[str], names: Sequence[str]) -> Array:
    """The first start ``(k,)`` from a mapping over the unknowns or an array in their order; default 0."""
    if guess is None:
        return np.zeros(len(unknowns))
    if isinstance(guess, Mapping):
        start = np.zeros(len(unknowns))
        for name, value in guess.items():
            if name not in unknowns:
                if name in names:
                    raise InputError(f"guess names {name!r}, which is fixed: guess only the unknowns "
                                     f"({', '.join(unknowns)})")
                raise _unknown_name(str(name), names, "guess")
            start[unknowns.index(name)] = finite_value(value, f"guess for {name!r}")
        return start
    try:
        start = np.array(guess, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"guess must be numbers or a {{name: value}} mapping, got {guess!r}") from None
    if start.shape != (len(unknowns),):
        raise ShapeError(f"guess has {start.size} value(s), expected {len(unknowns)}: one per unknown "
                         f"({', '.join(unknowns)}), or a {{name: value}} mapping")
    if not np.all(np.isfinite(start)):
        bad = [unknowns[int(i)] for i in np.flatnonzero(~np.isfinite(start))]
        raise InputError(f"guess for {', '.join(bad)} is not finite: give finite numbers")
    return start


def _bounds(box: Box | None, unknowns: Sequence[str], names: Sequence[str]) -> tuple[Array, Array]:
    """Lower and upper ends ``(k,)`` of the random starts."""
    ranges = dict.fromkeys(unknowns, DEFAULT_BOX)
    if isinstance(box, Mapping):
        for name, pair in box.items():
            if name not in names:
                raise _unknown_name(str(name), names, "box")
            if name in ranges:
                ranges[name] = pair
    elif box is not None:
        ranges = dict.fromkeys(unknowns, box)
    low, high = np.zeros(len(unknowns)), np.zeros(len(unknowns))
    for i, name in enumerate(unknowns):
        pair = ranges[name]
        if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise InputError(f"box for {name!r} must be a pair (low, high), got {pair!r}")
        low[i] = finite_value(pair[0], f"box low end for {name!r}")
        high[i] = finite_value(pair[1], f"box high end for {name!r}")
        if not low[i] < high[i]:
            raise InputError(f"box for {name!r} is empty: ({low[i]}, {high[i]}); give low < high")
    return low, high


def _check_options(starts: int, tol: float, seed: int | None) -> None:
    if isinstance(starts, bool) or not isinstance(starts, int | np.integer) or starts < 1:
        raise InputError(f"starts must be a whole number >= 1, got {starts!r}")
    if starts > MAX_STARTS:
        raise InputError(f"starts = {starts} is more than {MAX_STARTS}: each start is a root solve; ask for fewer "
                         "(or fix more variables, or narrow the box)")
    if isinstance(tol, bool) or not isinstance(tol, int | float | np.floating) or not 0 < tol < math.inf:
        raise InputError(f"tol must be a positive finite number, got {tol!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)):
        raise InputError(f"seed must be a whole number or None, got {seed!r}")


# --- holding torque ----------------------------------------------------------------------------------------
def _holding_applies(model: ModelContract, fixed: Mapping[int, float]) -> bool:
    """All coordinates fixed, velocities fixed to 0 or free, some input free (indices into [x, u])."""
    manipulator = model.manipulator()
    if manipulator is None or model.n_inputs == 0:
        return False
    n = manipulator.n_coordinates
    coordinates_fixed = all(i in fixed for i in range(n))
    velocities_rest = all(fixed.get(i, 0.0) == 0.0 for i in range(n, 2 * n))
    inputs_free = any(j not in fixed for j in range(2 * n, 2 * n + model.n_inputs))
    return coordinates_fixed and velocities_rest and inputs_free


def _holding_input(model: ModelContract, time: float, p: Array, base: Array,
                   free_inputs: NDArray[np.intp]) -> Array | None:
    """u solving Q - c = 0 at rest when that is affine in the free inputs, else None.

    r(u) = Q(t, q, 0, u) - c(t, q, 0); D = dr/du[:, free] (exact); with r affine, r(u) = r(u0) + D (u - u0),
    so the free inputs solve D du = -r(u0) (least squares, minimum norm when D has more columns than rows).
    """
    n2 = model.n_states
    x, u0 = base[:n2], base[n2:].copy()
    u0[free_inputs] = 0.0
    manipulator = model.manipulator()
    assert manipulator is not None  # the caller asked for a second-order model's parts
    r0, dr_du = manipulator.rhs_terms(time, x, u0, p)
    D = dr_du[:, free_inputs]
    u1 = u0.copy()
    u1[free_inputs] = 1.0
    r1 = manipulator.rhs_terms(time, x, u1, p)[0]
    scale = 1.0 + max(_max_abs(r0), _max_abs(r1), _max_abs(D))
    if not math.isfinite(scale) or _max_abs(r1 - r0 - D.sum(axis=1)) > AFFINE_TOLERANCE * scale:
        return None
    u = u0
    u[free_inputs] = np.linalg.lstsq(D, -r0, rcond=None)[0]
    return u


# --- the solver --------------------------------------------------------------------------------------------
def find_equilibrium(
    model: ModelContract,
    fix: Mapping[str, float] | None = None,
    guess: Values | None = None,
    starts: int = 1,
    *,
    params: Values | None = None,
    t: float = 0.0,
    tol: float = 1e-10,
    seed: int | None = 0,
    box: Box | None = None,
    targets: Mapping[str, float] | None = None,
) -> tuple[OperatingPoint, ...]:
    """Solve f(t, x, u, p) = 0 for the states and inputs not fixed by ``fix`` (and, with ``targets``, the named
    outputs equal to the given values: trim).

    Parameters
    ----------
    model
        Any robodyn model.
    fix
        ``{name: value}`` for the states and inputs held fixed; every other state and input is unknown.
    guess
        Start of the first solve: a mapping over (some of) the unknowns or an array ``(k,)`` in the
        model's order of the unknowns (states first, then inputs); default 0.
    starts
        Number of starts: the first at ``guess``, the others uniformly random in ``box``.
    params
        Parameter overrides.
    t
        The time, for time-varying models.
    tol
        A point is an equilibrium when max |f| <= tol (absolute, in the units of x').
    seed
        Seed of the random starts (``None``: fresh entropy).
    box
        Range of the random starts: a pair ``(low, high)`` for every unknown, or ``{name: (low, high)}``
        for some of them; unknowns not named get :data:`DEFAULT_BOX`, [-pi, pi].
    targets
        ``{output: value}``: the outputs y = h(t, x, u) to hold at these values (python-control's ``find_eqpt``
        with ``y0``/``iy``, Simulink's ``findop``). The equations are then f = 0 and h[output] = value, n + len(targets)
        of them, and the residual is the largest of |f| and |h - value|. More unknowns than equations: one of many
        solutions per start; fewer: a solution only when the targets are consistent with the fixed values
        (the error says which case it was).

    Returns
    -------
    tuple of OperatingPoint
        Every distinct converged solution, sorted by residual then by norm of (x, u). A single point
        for the holding-torque path. When there are more unknowns than equations each start yields one
        of infinitely many solutions. Without ``guess`` and ``box``, states that are angles (f repeats after
        a whole turn of them) are given in (-pi, pi]: the shoulder at -26.70 rad is reported at -pi/2.
        A model on a moving base (a floating or planar base) is solved in its tangent space around the guess
        and the fixed values, and its points are stored states (robodyn.linearization.tangent_points: the base's
        configuration is fixed whole or not at all; ``guess`` and ``box`` are mappings there).

    Raises
    ------
    UnknownNameError
        A name in ``fix``, ``guess`` or ``box`` that is not a state or input, or in ``targets`` that is not an
        output (with a did-you-mean).
    InputError
        A non-finite value, a guess naming a fixed variable, bad ``starts``, ``tol`` or ``box``.
    ConvergenceError
        No start converged; the message gives the best residual reached and what to try.

    Examples
    --------
    >>> pendulum = robodyn.load("pendulum")  # doctest: +SKIP
    >>> find_equilibrium(pendulum, {"theta": 0.3, "theta_dot": 0.0})[0].u  # doctest: +SKIP
    array([2.89905323])                      # the holding torque m g l sin(0.3)
    """
    require_model(model, "find_equilibrium")
    chart = model.chart()
    if chart is not None:  # a moving base: solved in its tangent space (robodyn.linearization.tangent_points)
        from robodyn.linearization.tangent_points import MOVING_BASE_HINT, stored_points, tangent_problem

        tangent, tangent_fix, tangent_guess = tangent_problem(model, chart, fix, guess, params=params, t=t, box=box,
                                                              targets=targets)
        try:
            found = find_equilibrium(tangent, tangent_fix, tangent_guess, starts, params=params, t=t, tol=tol,
                                     seed=seed, box=box)
        except ConvergenceError as error:
            raise ConvergenceError(f"{error} ({MOVING_BASE_HINT})") from None
        return stored_points(model, tangent, found)
    require_continuous(model, "find_equilibrium", "its fixed points solve x = A x + B u, i.e. x = (I - A)^-1 B u: "
                       "np.linalg.solve(np.eye(n) - A, B @ u)", sampled_ok=True)
    _check_options(starts, tol, seed)
    time, _, _, p = model.arguments(t, np.zeros(model.n_states), None, params)
    names = (*model.states, *model.inputs)
    fixed = _fixed_values(fix, names)
    base = np.zeros(len(names))
    for index, value in fixed.items():
        base[index] = value
    free = np.array([i for i in range(len(names)) if i not in fixed], dtype=np.intp)
    unknowns = [names[i] for i in free]
    first = _guess_vector(guess, unknowns, names)
    if guess is None:
        first = _rest_start(model, time, p, base, free, first)
    low, high = _bounds(box, unknowns, names)
    outputs, values = target_outputs(targets, model.outputs)
    problem = _Problem(model, time, p, base, free, _exact_jacobian(model), outputs, values)
    start = None
    try:
        start = problem.residual(first)  # a wrong shape is the model's bug: f_raw raises ShapeError
    except NumericalError:  # a singular first guess (a linkage laid out straight): that start fails, the others run
        pass
    if free.size == 0:
        return (_checked_fixed(problem, tol),)
    if _holding_applies(model, fixed) and not outputs.size:
        held = _hold(problem, tol)
        if held is not None:
            return (held,)
    rng = np.random.default_rng(seed)
    attempts = [_solve_from(problem, first, start, tol)]
    attempts += [_solve_from(problem, rng.uniform(low, high)) for _ in range(starts - 1)]
    method = "root-hybr" if free.size == problem.equations else "least-squares"
    points = [_operating_point(problem, a.z, a.residual, tol, method) for a in attempts if a.residual <= tol]
    if not points:
        raise _no_convergence(problem, attempts, unknowns, fixed)
    # angles found from the default starts are shown in (-pi, pi]; where the caller chose a guess or a box, or
    # outputs are targeted (a turn may change them), the solutions stay where they were found
    wrap = guess is None and box is None and not outputs.size
    return _distinct([_wrapped(problem, p) for p in points] if wrap else points, problem)


def _rest_start(model: ModelContract, time: float, p: Array, base: Array, free: NDArray[np.intp], first: Array
                ) -> Array:
    """The default first start ``(k,)``: the model's rest state (``rest_state``: a sampled estimator's steady-state
    filter, assembled by a diagram) at the fixed values and zeros, when it offers one; ``first`` otherwise."""
    n = model.n_states
    full = base.copy()
    full[free] = first
    rest = model.rest_state(time, full[:n], full[n:], p)
    if rest is None:
        return first
    rest = np.asarray(rest, dtype=float)
    if rest.shape != (n,) or not np.all(np.isfinite(rest)):
        return first
    full[:n] = rest
    return full[free]


def _operating_point(problem: _Problem, z: Array, residual: float, tol: float, method: str) -> OperatingPoint:
    x, u = problem.point(z)
    model = problem.model
    return OperatingPoint(x + 0.0, u + 0.0, model.states, model.inputs, residual, residual <= tol, method)  # no -0


def _checked_fixed(problem: _Problem, tol: float) -> OperatingPoint:
    """Nothing is free: the given point is returned if it is an equilibrium."""
    residual = _max_abs(problem.residual(np.zeros(0)))
    if not residual <= tol:
        what, measure = (("an equilibrium with the targeted outputs", "max(|f|, |h - target|)") if problem.outputs.size
                         else ("an equilibrium", "max|f|"))
        raise ConvergenceError(
            f"model {problem.model.name!r}: every state and input is fixed and the point is not {what} "
            f"(residual {measure} = {residual:.3g} > tol = {tol:.3g}): leave some states or inputs free"
        )
    return _operating_point(problem, np.zeros(0), residual, tol, "fixed")


def _hold(problem: _Problem, tol: float) -> OperatingPoint | None:
    """The holding-torque point, or None when r is not affine in u or the inputs cannot hold q."""
    model = problem.model
    n2 = model.n_states
    base = problem.base.copy()
    base[problem.free[problem.free < n2]] = 0.0  # free velocities: q' = q_dot forces them to zero
    free_inputs = problem.free[problem.free >= n2] - n2
    u = _holding_input(model, problem.time, problem.p, base, free_inputs)
    if u is None:
        return None
    x = base[:n2]
    residual = _max_abs(model.f_raw(problem.time, x, u, problem.p))
    if not residual <= tol:
        return None  # the general solver reports the failure with its best residual
    return OperatingPoint(x + 0.0, u + 0.0, model.states, model.inputs, residual, True, "holding-torque")  # no -0


def _distinct(points: list[OperatingPoint], problem: _Problem) -> tuple[OperatingPoint, ...]:
    """Sorted by (residual, norm); a point within DUPLICATE_DISTANCE of a better one, or whole turns away from
    it in states f is 2 pi-periodic in, is dropped."""
    def key(point: OperatingPoint) -> tuple[float, float]:
        return point.residual, float(np.linalg.norm(np.concatenate([point.x, point.u])))

    n = problem.model.n_states
    kept: list[tuple[OperatingPoint, Array]] = []
    for point in sorted(points, key=key):
        z = np.concatenate([point.x, point.u])
        if any(_close(z, other) for _, other in kept):
            continue
        turned = [j for j, (_, other) in enumerate(kept) if _same_modulo_turns(problem, other, z)]
        if not turned:
            kept.append((point, z))
        elif _unwrapped(z[:n]) < _unwrapped(kept[turned[0]][1][:n]):  # of one point, keep theta = pi over -pi
            kept[turned[0]] = (point, z)
    return tuple(point for point, _ in kept)


def _wrapped(problem: _Problem, point: OperatingPoint) -> OperatingPoint:
    """``point`` with each state that is an angle (f repeats after a whole turn of it: :func:`_same_modulo_turns`)
    moved by whole turns into (-pi, pi]: the shoulder at -26.70 rad is the same equilibrium as at -pi/2."""
    x = point.x
    inside = x - 2 * math.pi * np.ceil((x - math.pi) / (2 * math.pi))
    inside[np.abs(inside + math.pi) <= _AT_MINUS_PI] = math.pi  # -pi and +pi are one angle: (-pi, pi]
    z = np.concatenate([x, point.u])
    target = z.copy()
    target[: x.size] = inside
    if np.array_equal(target, z):
        return point
    if not _same_modulo_turns(problem, z, target):  # not all of them are angles: one state at a time
        target = z.copy()
        for i in np.flatnonzero(inside != x):
            trial = target.copy()
            trial[i] = inside[i]
            if _same_modulo_turns(problem, target, trial):
                target = trial
        if np.array_equal(target, z):
            return point
    wrapped = target[: x.size] + 0.0
    residual = _max_abs(problem.model.f_raw(problem.time, wrapped, point.u, problem.p))
    return OperatingPoint(wrapped, point.u, point.states, point.inputs, residual, point.converged, point.method)


def _unwrapped(x: Array) -> int:
    """How many states lie outside (-pi, pi]."""
    return int(np.count_nonzero((x <= -math.pi) | (x > math.pi)))


def _close(a: Array, b: Array) -> bool:
    """Within DUPLICATE_DISTANCE per component, relative to max(1, |value|)."""
    scale = np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
    return bool(np.max(np.abs(a - b) / scale, initial=0.0) < DUPLICATE_DISTANCE)


def _same_modulo_turns(problem: _Problem, a: Array, b: Array) -> bool:
    """Whether the points ``a`` and ``b`` ([x, u], ``(n + m,)``) differ only by whole turns 2 pi k in some
    states, and f repeats after that shift at :data:`PERIODIC_PROBES` points around ``a`` (those states
    are angles)."""
    n = problem.model.n_states
    if problem.outputs.size:
        return False  # targeted outputs may change with a turn: solutions a turn apart are kept apart
    turns = np.round((b - a) / (2 * math.pi))
    turns[n:] = 0.0  # inputs are never angles
    shift = turns * 2 * math.pi
    if not turns.any() or not _close(a + shift, b):
        return False
    probes = np.random.default_rng(0).uniform(-0.5, 0.5, (PERIODIC_PROBES, n))  # fixed: the answer is repeatable
    x, u = a[:n], a[n:]
    try:
        with np.errstate(all="ignore"):
            for delta in probes:
                here = problem.model.f_raw(problem.time, x + delta, u, problem.p)
                there = problem.model.f_raw(problem.time, x + shift[:n] + delta, u, problem.p)
                if not np.all(np.abs(there - here) <= PERIODIC_TOLERANCE * (1.0 + np.abs(here))):
                    return False
    except (RobodynError, ArithmeticError, ValueError):
        return False  # f fails near the points (a singular mass matrix): keep both
    return True


def _no_convergence(problem: _Problem, attempts: Sequence[_Attempt], unknowns: Sequence[str],
                    fixed: Mapping[int, float]) -> ConvergenceError:
    model = problem.model
    best = min(attempts, key=lambda a: a.residual)
    where = ", ".join(f"{n}={v:.6g}" for n, v in zip(unknowns, best.z.tolist()))
    note = ""
    if model.manipulator() is not None:
        moving = [model.states[i] for i in range(model.n_states // 2, model.n_states) if fixed.get(i, 0.0) != 0.0]
        if moving:
            note = f" (velocities {', '.join(moving)} are fixed to nonzero values, but q' = q_dot must be 0)"
    k, equations = len(unknowns), problem.equations
    targeted = f" (f = 0 and {problem.outputs.size} output target{'s' * (problem.outputs.size != 1)})" \
        if problem.outputs.size else ""
    measure = "max(|f|, |h - target|)" if problem.outputs.size else "max|f|"
    kind = ("square system, root-hybr" if k == equations
            else f"{k} unknown{'s' * (k != 1)} for {equations} equations{targeted}, least squares: "
                 + ("over-determined, so the fixed values and targets must be consistent" if k < equations
                    else "under-determined, so each start finds one of many"))
    return ConvergenceError(
        f"model {model.name!r}: no equilibrium found for {', '.join(unknowns)} from {len(attempts)} start(s) "
        f"({kind}): best residual {measure} = {best.residual:.3g} at {where} ({best.message}){note}; {ADVICE}"
    )
