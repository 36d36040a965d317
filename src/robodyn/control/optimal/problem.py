"""An optimal control problem: :class:`OptimalControlProblem`.

minimize  sum over the horizon of l(t, x, u) dt + l_T(x_N)  subject to  x' = f(t, x, u; p), x(0) = x0,
input and state boxes, g(t, x, u) <= 0 on the path and e(x_N) = 0 at the end, on [0, T] cut into N intervals.

The problem satisfies :class:`~robodyn.control.optimal.protocol.TranscribableProblem`, the solvers' one contract;
:meth:`OptimalControlProblem.solve` hands it to the solver registered under its method
(:data:`~robodyn.control.optimal.solvers.SOLVERS`) and wraps the answer into an
:class:`~robodyn.control.optimal.result.OptimalTrajectory`. Everything a user gives is checked in the constructor,
before any work: names, weights, sizes, bounds, x0 within its bounds, finite numbers, the method's names and a
model with exact derivatives.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import ConvergenceError, InputError
from robodyn.base.names import did_you_mean
from robodyn.base.numbers import finite_number, float_array, frozen
from robodyn.control.optimal.batch.points import ModelPoints, points_arrays
from robodyn.control.optimal.constraints import BOUND_KEYS, Constraints, box, build_constraints
from robodyn.control.optimal.costs import Costs, build_costs
from robodyn.control.optimal.protocol import (
    BatchCostDerivatives,
    CompiledDynamics,
    CostDerivatives,
    SolverOutcome,
    TerminalDerivatives,
)
from robodyn.control.optimal.references import by_name, number, reference, trajectory_columns
from robodyn.control.optimal.result import OptimalTrajectory, optimization_stats
from robodyn.control.optimal.solvers import SOLVERS, solver
from robodyn.model.system import require_model

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["INTEGRATORS", "TRANSCRIPTIONS", "OptimalControlProblem"]

Array = NDArray[np.float64]

INTEGRATORS: Final = ("euler", "rk4")
TRANSCRIPTIONS: Final = ("trapezoidal", "hermite_simpson")
MAX_KNOTS: Final = 1_000_000  # More knots than this is a typing error, not a problem.
HOLD_ITERATIONS: Final = 5  # Gauss–Newton steps of the inputs that hold x0 still.
HOLD_RTOL: Final = 1e-12  # ... stopped when the rates' residual is below this times max(1, |f(x0, 0)|).


def _choice(value: Any, choices: tuple[str, ...], what: str) -> str:
    if not isinstance(value, str) or value not in choices:
        raise InputError(f"unknown {what} {value!r}: use one of {', '.join(choices)}"
                         f"{did_you_mean(str(value), list(choices))}")
    return value


def _check_model(model: ModelContract) -> None:
    """InputError for a model without exact derivatives, a discrete or sampled one, or one without inputs."""
    require_model(model, "OptimalControlProblem")
    name = f"model {model.name!r} ({model.kind})"
    if model.sample_period is not None or model.sampling() is not None:
        raise InputError(f"{name} is discrete or has sampled blocks: optimal control here needs continuous "
                         "dynamics x' = f(t, x, u); use the continuous blocks (leave out sample:)")
    method = model.jacobian_method
    if method is None or method == "block diagonal":
        raise InputError(f"{name} has no exact Jacobian of f (robodyn would difference it, and the solvers need "
                         "exact derivatives): write it as a model file (symbolic, mechanical, Lagrangian, chain, "
                         "URDF) or a diagram of such blocks")
    if model.n_inputs == 0:
        raise InputError(f"{name} has no inputs: there is nothing to optimize")


class OptimalControlProblem:
    """An optimal control problem on a model (see the module docstring and docs/control.md).

    Parameters
    ----------
    model
        A model with exact derivatives (``model.jacobian_method`` set): symbolic, mechanical, Lagrangian, chains,
        URDF robots, diagrams without sampled blocks.
    horizon
        T > 0, in seconds.
    knots
        N >= 2: the number of intervals of dt = T / N (N + 1 knots t_k = k dt).
    x0 : (n,) or {state: value}
        The initial state (a mapping must name every state).
    costs
        ``{state, input, terminal, frame, running}`` (:mod:`~robodyn.control.optimal.costs`).
    bounds
        ``{inputs: {name: [lower, upper]}, states: {...}}`` (:mod:`~robodyn.control.optimal.constraints`).
    constraints
        ``{path: [g, ...], terminal: {state: value} or [e, ...]}``.
    params
        Overrides of the model's parameters by name.
    method, integrator, transcription
        The solver (a name of :data:`~robodyn.control.optimal.solvers.SOLVERS`: ``fddp``, ``ddp``,
        ``collocation``), the DDP family's step (``euler``: semi-implicit on mechanical models; ``rk4``) and the
        collocation's transcription (``trapezoidal``, ``hermite_simpson``).
    guess
        A Trajectory or a trajectory file (CSV/NPZ) to start from, resampled on the knots (its inputs, when it has
        them; else the inputs that hold x0); default: x0 at every knot and the inputs that hold x0 still.
    folder
        Where relative file names (references, guess) are found (default: the working directory).

    Raises
    ------
    InputError, UnknownNameError, ShapeError, ExpressionError
        Naming the value and the fix.
    """

    def __init__(self, model: ModelContract, horizon: float, knots: int, x0: Any, costs: Mapping[str, Any] | None,
                 bounds: Mapping[str, Any] | None = None, constraints: Mapping[str, Any] | None = None,
                 params: Mapping[str, Any] | None = None, *, method: str = "fddp", integrator: str = "rk4",
                 transcription: str = "hermite_simpson", guess: Any = None, folder: str | Path | None = None):
        self.method = _choice(method, tuple(SOLVERS), "method")
        self.integrator = _choice(integrator, INTEGRATORS, "integrator")
        self.transcription = _choice(transcription, TRANSCRIPTIONS, "transcription")
        _check_model(model)
        self._horizon = finite_number(horizon, "horizon", positive="horizon: must be > 0, got {number:g}: give the "
                                      "duration in seconds", not_real="horizon: expected a number of seconds, got "
                                      "{value!r}", not_finite="horizon: {value!r} is not finite: give a number")
        if isinstance(knots, bool) or not isinstance(knots, int | np.integer) or not 2 <= knots <= MAX_KNOTS:
            raise InputError(f"knots: must be an integer from 2 to {MAX_KNOTS}, got {knots!r:.40}: the number of "
                             "intervals of the horizon")
        self._knots = int(knots)
        folder = Path.cwd() if folder is None else Path(folder)
        if params:
            given = by_name(params, tuple(model.parameters), "parameter", "params")
            model = model.with_parameters({k: number(v, f"params.{k}") for k, v in given.items()})
        self.model = model
        self.p = frozen(model.parameter_vector(None))
        self._x0 = self._initial_state(x0)
        self._t0 = 0.0
        states, inputs = tuple(model.states), tuple(model.inputs)
        self.costs: Costs = build_costs(costs, model, self.p, folder)
        given_bounds = by_name(bounds or {}, BOUND_KEYS, "bound kind", "bounds")
        self._input_bounds = box(given_bounds.get("inputs"), inputs, "input", "bounds.inputs")
        self._state_bounds = box(given_bounds.get("states"), states, "state", "bounds.states")
        outside = [(name, v, lo, hi) for name, v, (lo, hi) in zip(states, self._x0, self._state_bounds, strict=True)
                   if not lo <= v <= hi]
        if outside:
            name, v, lo, hi = outside[0]
            raise InputError(f"x0: {name} = {v:g} is outside its bounds [{lo:g}, {hi:g}]: start inside them")
        parameters = dict(zip(model.parameters, self.p.tolist(), strict=True))
        self.constraints: Constraints = build_constraints(constraints, states, inputs, parameters)
        self._linear: bool | None = None
        self._points = ModelPoints(model, self.p)
        self._guess = None if guess is None else self._resampled(guess, folder)

    def _initial_state(self, x0: Any) -> Array:
        model = self.model
        if isinstance(x0, Mapping):
            given = by_name(x0, tuple(model.states), "state", "x0")
            missing = [name for name in model.states if name not in given]
            if missing:
                raise InputError(f"x0: give every state: {', '.join(missing)} missing")
            return frozen([number(given[name], f"x0.{name}") for name in model.states])
        return float_array(x0, "x0", shape=(model.n_states,))

    def _resampled(self, guess: Any, folder: Path) -> tuple[Array, Array]:
        """(X (N + 1, n), U (N, m)) of a guess, linear between its times."""
        from robodyn.results.trajectory import Trajectory

        t = self.times()
        source = Trajectory.load(folder / guess) if isinstance(guess, str | os.PathLike) else guess
        X = np.array([reference(source, self.states, "state", "guess", folder).at(tk) for tk in t])
        columns = trajectory_columns(source)
        if columns is not None and all(name in columns[1] for name in self.inputs):
            U = np.array([reference(source, self.inputs, "input", "guess", folder).at(tk) for tk in t[:-1]])
        else:
            U = np.tile(self._holding_inputs(), (self.knots, 1))
        return frozen(X), frozen(U)

    # --- TranscribableProblem ----------------------------------------------------------------------------
    @property
    def states(self) -> tuple[str, ...]: return tuple(self.model.states)
    @property
    def inputs(self) -> tuple[str, ...]: return tuple(self.model.inputs)
    @property
    def horizon(self) -> float: return self._horizon
    @property
    def knots(self) -> int: return self._knots

    @property
    def dt(self) -> float:
        """T / N."""
        return self._horizon / self._knots

    @property
    def x0(self) -> Array: return self._x0

    @property
    def mechanical(self) -> int:
        """nq for a second-order model (states q then q'), else 0."""
        return self.model.n_states // 2 if self.model.order == 2 else 0

    @property
    def linear(self) -> bool:
        """Whether f is linear time-invariant, x' = A x + B u: the model's exact ``affine_form`` with no constant
        term (asked once)."""
        if self._linear is None:
            form = self.model.affine_form(self.p)
            self._linear = form is not None and not np.any(form[2])
        return self._linear

    @property
    def input_bounds(self) -> Array: return self._input_bounds
    @property
    def state_bounds(self) -> Array: return self._state_bounds
    @property
    def n_path(self) -> int: return self.constraints.n_path
    @property
    def n_terminal(self) -> int: return self.constraints.n_terminal

    def times(self) -> Array:
        """t0 + k dt, k = 0..N (t0 = 0 unless :meth:`receding` moved it)."""
        return self._t0 + np.linspace(0.0, self._horizon, self._knots + 1)

    def receding(self, x0: Any, t0: float = 0.0) -> OptimalControlProblem:
        """The same problem started from ``x0`` (n,) at time ``t0``: its knots t0 + k dt, where references, running
        costs and a time-varying model are read. Everything else is shared, nothing rebuilt: the problem a receding
        horizon solves at each sample (:mod:`~robodyn.control.mpc.receding`). ``x0`` may lie outside the state
        bounds (a measured state); the solvers' bounds then pull the plan back inside."""
        clone = copy.copy(self)
        clone._x0 = float_array(x0, "x0", shape=(self.model.n_states,))
        clone._t0 = finite_number(t0, "t0")
        return clone

    def f(self, t: float, x: Array, u: Array) -> Array:
        return np.asarray(self.model.f_raw(t, x, u, self.p), dtype=float)

    def f_jacobians(self, t: float, x: Array, u: Array) -> tuple[Array, Array]:
        A, B = self.model.jacobians_raw(t, x, u, self.p)
        return np.asarray(A, dtype=float), np.asarray(B, dtype=float)

    def running(self, t: float, x: Array, u: Array) -> float:
        return self.costs.running(t, x, u)

    def running_derivatives(self, t: float, x: Array, u: Array) -> CostDerivatives:
        return self.costs.running_derivatives(t, x, u)

    def terminal(self, x: Array) -> float:
        return self.costs.terminal(x)

    def terminal_derivatives(self, x: Array) -> TerminalDerivatives:
        return self.costs.terminal_derivatives(x)

    def path(self, t: float, x: Array, u: Array) -> Array:
        path = self.constraints.path
        return np.zeros(0) if path is None else path.values(t, x, u)

    def path_jacobians(self, t: float, x: Array, u: Array) -> tuple[Array, Array]:
        path = self.constraints.path
        if path is None:
            return np.zeros((0, len(x))), np.zeros((0, len(u)))
        return path.jacobians(t, x, u)

    def terminal_constraint(self, x: Array) -> Array:
        terminal = self.constraints.terminal
        return np.zeros(0) if terminal is None else terminal.values(self._horizon, x, np.zeros(self.model.n_inputs))

    def terminal_constraint_jacobian(self, x: Array) -> Array:
        terminal = self.constraints.terminal
        if terminal is None:
            return np.zeros((0, len(x)))
        return terminal.jacobians(self._horizon, x, np.zeros(self.model.n_inputs))[0]

    def terminal_values(self) -> Array:
        """(n,) the states ``terminal: {state: value}`` fixes, NaN for the others (and for the expression form)."""
        return self.constraints.terminal_values

    # --- the batched twins (protocol.py): one call for P points ------------------------------------------
    def f_points(self, t: Array, X: Array, U: Array) -> Array:
        return self._points.f(t, X, U)

    def f_jacobians_points(self, t: Array, X: Array, U: Array) -> tuple[Array, Array]:
        return self._points.jacobians(t, X, U)

    def running_points(self, t: Array, X: Array, U: Array) -> Array:
        return self.costs.running_points(*points_arrays(t, X, U))

    def running_derivatives_points(self, t: Array, X: Array, U: Array) -> BatchCostDerivatives:
        return self.costs.running_derivatives_points(*points_arrays(t, X, U))

    def path_points(self, t: Array, X: Array, U: Array) -> Array:
        path = self.constraints.path
        if path is None:
            return np.zeros((len(t), 0))
        return path.values_points(*points_arrays(t, X, U))

    def path_jacobians_points(self, t: Array, X: Array, U: Array) -> tuple[Array, Array]:
        path = self.constraints.path
        if path is None:
            return np.zeros((len(t), 0, self.model.n_states)), np.zeros((len(t), 0, self.model.n_inputs))
        return path.jacobians_points(*points_arrays(t, X, U))

    def compiled_dynamics(self) -> CompiledDynamics | None:
        """The model's compiled f and Jacobian (addresses and parameters), or None for a model without them."""
        return self._points.compiled()

    def initial_guess(self) -> tuple[Array, Array]:
        if self._guess is not None:
            return self._guess[0].copy(), self._guess[1].copy()
        X = np.tile(self._x0, (self._knots + 1, 1))
        return X, np.tile(self._holding_inputs(), (self._knots, 1))

    def _holding_inputs(self) -> Array:
        """(m,) the inputs that hold x0 still: least squares of the rate part of f(0, x0, u) in u (the rows of q''
        on a mechanical model, all rows otherwise), a few Gauss–Newton steps from u = 0 (minimum-norm steps: an
        input that acts on no rate stays 0), clipped to the input bounds; 0 where f is not finite."""
        rows = slice(self.mechanical, None)
        u = np.zeros(self.model.n_inputs)
        scale = max(1.0, float(np.max(np.abs(self.f(self._t0, self._x0, u)[rows]), initial=0.0)))
        for _ in range(HOLD_ITERATIONS):
            residual = self.f(self._t0, self._x0, u)[rows]
            if not np.all(np.isfinite(residual)) or np.max(np.abs(residual), initial=0.0) <= HOLD_RTOL * scale:
                break
            B = self.f_jacobians(self._t0, self._x0, u)[1][rows]
            step = np.linalg.lstsq(B, residual, rcond=None)[0]
            if not np.all(np.isfinite(step)):
                break
            u = np.clip(u - step, self._input_bounds[:, 0], self._input_bounds[:, 1])
        return u if np.all(np.isfinite(u)) else np.zeros_like(u)

    # --- solving -----------------------------------------------------------------------------------------
    def solve(self, *, method: str | None = None, check: bool = True, **options: Any) -> OptimalTrajectory:
        """Solve with the problem's method (or ``method``), passing ``options`` to the solver (``progress``:
        ``progress(iteration, cost, violation)`` after each iteration).

        Raises
        ------
        ConvergenceError
            When the solver does not converge (unless ``check=False``): the status, the last cost and the
            violation in the message, the :class:`OptimalTrajectory` reached as ``.result``.
        """
        name = self.method if method is None else _choice(method, tuple(SOLVERS), "method")
        outcome = solver(name)(self, **options)
        if not isinstance(outcome, SolverOutcome):
            raise InputError(f"the solver {name!r} returned {type(outcome).__name__}, not a SolverOutcome")
        result = self._result(outcome)
        if check and not result.converged:
            error = ConvergenceError(
                f"{name} did not converge: {result.status}; last cost {result.cost:.6g}, violation "
                f"{result.violation:.3g}: try more iterations, another initial guess or method, or looser bounds")
            error.result = result  # type: ignore[attr-defined]
            raise error
        return result

    def _result(self, outcome: SolverOutcome) -> OptimalTrajectory:
        X = np.asarray(outcome.X, dtype=float)
        U = np.asarray(outcome.U, dtype=float)
        n, m, N = self.model.n_states, self.model.n_inputs, self._knots
        if X.shape != (N + 1, n) or U.shape != (N, m):
            raise InputError(f"the solver {outcome.method!r} returned X {X.shape} and U {U.shape}, expected "
                             f"{(N + 1, n)} and {(N, m)}")
        last = U[-1] if outcome.U_final is None else np.asarray(outcome.U_final, dtype=float).reshape(m)
        u = np.vstack([U, last[None, :]])
        t = self.times()
        y = np.asarray(self.model.h_many(t, X, u, self.p), dtype=float)
        return OptimalTrajectory(t, X, u, y, self.states, self.inputs, tuple(self.model.outputs), self.model.name,
                                 optimization_stats(outcome.method), source=self.model, params=self.p,
                                 cost=float(outcome.cost), violation=float(outcome.violation),
                                 iterations=int(outcome.iterations), status=str(outcome.status),
                                 converged=bool(outcome.converged), seconds=float(outcome.seconds),
                                 method=outcome.method, gains=outcome.gains,
                                 input_interpolation="linear" if outcome.method == "collocation" else "hold")

    def _repr_html_(self) -> str:
        """The problem at a glance: model, horizon, knots, method and its step, the cost terms, bounds and
        constraints (for notebooks)."""
        from robodyn.display import block, heading, html_table

        bounded = [name for name, (lo, hi) in zip(self.inputs, self.input_bounds, strict=True)
                   if np.isfinite(lo) or np.isfinite(hi)]
        rows = [("model", self.model.name), ("horizon [s]", self._horizon), ("knots", self._knots),
                ("dt [s]", self.dt), ("method", self.method), ("integrator (DDP family)", self.integrator),
                ("transcription (collocation)", self.transcription),
                ("cost terms", ", ".join(self.costs.names) or "none"),
                ("bounded inputs", ", ".join(bounded) or "none"),
                ("path inequalities", self.n_path), ("terminal equalities", self.n_terminal)]
        return block([heading("Optimal control problem"), html_table(rows, row_header=True)])

    def __repr__(self) -> str:
        return (f"OptimalControlProblem({self.model.name!r}, horizon={self._horizon:g}, knots={self._knots}, "
                f"method={self.method!r}, costs={', '.join(self.costs.names) or 'none'})")


