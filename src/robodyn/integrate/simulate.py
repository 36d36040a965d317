"""``simulate()``: one entry point that picks the path (docs/dev/simulation.md).

- ``exact`` (the default for linear models): matrix exponentials, exact for the supported inputs;
- ``euler``, ``heun``, ``rk4`` (fixed step ``dt``) and ``dopri5``, ``dop853`` (adaptive): the Runge–Kutta
  kernels, compiled with numba for symbolic models, run as plain Python for models given as callables;
- ``radau``, ``bdf``, ``lsoda``: scipy's stiff solvers with the model's exact Jacobian.

Fixed-step methods sample the inputs at each step's start and hold them over the step (zero-order
hold), like a digital controller; adaptive methods evaluate them at every stage and stop exactly at
every input discontinuity.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import sympy
from numpy.typing import ArrayLike

from robodyn.errors import InputError, ShapeError, UnknownNameError
from robodyn.integrate.events import Event, ResolvedEvents, resolve_events
from robodyn.integrate.exact import exact_response
from robodyn.integrate.kernels import KernelSetup, kernel_module, run_adaptive, run_batch, run_fixed
from robodyn.integrate.stiff import STIFF_METHODS, RunResult, stiff_run
from robodyn.integrate.tableaus import ADAPTIVE, FIXED_STEP
from robodyn.model.system import Model, values_to_vector
from robodyn.signals import Constant, Inputs, Signal, StateFeedback, resolve_inputs
from robodyn.trajectory import BatchTrajectory, EventRecord, SimulationStats, Trajectory

__all__ = ["METHOD_NAMES", "simulate"]

METHOD_NAMES: Final = (*FIXED_STEP, *ADAPTIVE, *STIFF_METHODS, "exact")
DEFAULT_POINTS: Final = 1001  # Output points of the exact path and of batches when t_eval is not given.


def simulate(
    model: Model,
    t_span: float | tuple[float, float],
    x0: ArrayLike | Mapping[str, ArrayLike] | None = None,
    u: Any = None,
    *,
    method: str | None = None,
    rtol: float = 1e-6,
    atol: float | ArrayLike = 1e-9,
    dt: float | None = None,
    t_eval: ArrayLike | None = None,
    events: Sequence[Event | str] | Event | str | None = None,
    params: Mapping[str, ArrayLike] | ArrayLike | None = None,
    max_steps: int = 1_000_000,
    backend: str = "auto",
) -> Trajectory | BatchTrajectory:
    """Simulate ``model`` over ``t_span``.

    Parameters
    ----------
    model
        Any robodyn model.
    t_span
        ``(t0, t1)`` with t1 > t0, or ``t1`` (then t0 = 0).
    x0
        Initial state ``(n,)`` or a ``{name: value}`` mapping (states left out start at 0); ``(N, n)``
        or mapping values of length N run a batch. ``None``: all zero.
    u
        The inputs: ``None`` (zero), numbers, signals from :mod:`robodyn.signals`, a mapping
        ``{input: signal}``, a :class:`~robodyn.signals.StateFeedback`, or a callable ``u(t, x)``.
    method
        ``exact`` (default for linear models), ``euler``, ``heun``, ``rk4`` (need ``dt``), ``dopri5``
        (default otherwise), ``dop853``, ``radau``, ``bdf``, ``lsoda``.
    rtol, atol
        Tolerances of adaptive and stiff methods (``atol`` scalar or ``(n,)``).
    dt
        Step of fixed-step methods; the last step is shortened to end at t1.
    t_eval
        Output times (sorted, inside the span); adaptive methods fill them by dense output. Batches
        and the exact path use ``DEFAULT_POINTS`` evenly spaced times when it is not given.
    events
        Zero crossings to locate: :class:`~robodyn.integrate.events.Event` objects or expression text.
    params
        Parameter overrides by name; values of length N (or an ``(N, n_p)`` array) run a batch.
    max_steps
        Step budget of adaptive methods.
    backend
        ``auto``, ``compiled`` or ``interpreted`` (the same kernels without numba).

    Returns
    -------
    Trajectory, or BatchTrajectory for a batch.
    """
    t0, t1 = _span(t_span)
    states, x_batch = _initial_states(model, x0)
    parameters, p_batch = _parameter_sets(model, params)
    N = _batch_size(x_batch, p_batch, states.shape[0], parameters.shape[0])
    states = _rows(states, N)
    parameters = _rows(parameters, N)
    plan = _plan(model, u, events)
    inputs, resolved = plan.inputs, plan.events
    chosen = _method(model, method)
    grid = _output_times(t_eval, t0, t1)
    atol_vector = _atol(atol, model.n_states)
    _check_options(chosen, rtol, dt, max_steps, backend, grid)
    batch = x_batch or p_batch
    if chosen in FIXED_STEP:
        assert dt is not None
        grid = _fixed_grid(t0, t1, dt)
    elif batch and grid is None:
        grid = np.linspace(t0, t1, DEFAULT_POINTS)
    if chosen == "exact":
        runs = [_exact(model, (t0, t1), states[i], parameters[i], inputs, grid, resolved) for i in range(N)]
        return _assemble(model, chosen, "exact", runs, inputs, parameters, batch, states)
    if chosen in STIFF_METHODS:
        runs = [stiff_run(model, chosen, (t0, t1), states[i], parameters[i], inputs, grid, rtol, atol_vector, resolved)
                for i in range(N)]
        return _assemble(model, chosen, "stiff", runs, inputs, parameters, batch, states)
    setup, setup_seconds = plan.kernels(backend)
    stops = plan.breakpoints(t0, t1)
    if batch:
        assert grid is not None
        t, xs, us, totals, records = run_batch(setup, chosen, (t0, t1), states, parameters, stops, grid, rtol,
                                               atol_vector, max_steps, dt)
        stats = SimulationStats(setup.path, chosen, int(totals["nfev"]), int(totals["steps"]),
                                int(totals["rejected"]), setup_seconds + totals["compile_seconds"])
        return _batch(model, stats, t, xs, us, parameters, states, _batch_events(records, len(resolved), N))
    if chosen in FIXED_STEP:
        assert grid is not None
        run = run_fixed(setup, chosen, grid, states[0], parameters[0], dt)
    else:
        empty = np.empty(0) if grid is None else grid
        run = run_adaptive(setup, chosen, (t0, t1), states[0], parameters[0], stops, empty, rtol, atol_vector,
                           max_steps)
    run.compile_seconds += setup_seconds
    return _assemble(model, chosen, setup.path, [run], inputs, parameters, False, states)


# --- what repeated calls share -------------------------------------------------------------------------
PLAN_CACHE_SIZE: Final = 32  # Plans (inputs, events) kept per model; the oldest goes first.


@dataclass(slots=True, eq=False)
class _Plan:
    """A model's resolved inputs and events for one ``u`` and ``events``, with what is derived from them.

    Calls that pass equal immutable ``u`` and ``events`` again reuse it: no new resolution, packing,
    kernel set-up or breakpoint search (tens of microseconds each, against a compiled run of ~50 us).
    """

    model: Model
    inputs: Inputs
    events: ResolvedEvents
    setups: dict[str, KernelSetup] = field(default_factory=dict)
    stops: dict[tuple[float, float], np.ndarray] = field(default_factory=dict)

    def kernels(self, backend: str) -> tuple[KernelSetup, float]:
        """The kernel set-up for ``backend`` and the seconds spent making it now (0 when reused)."""
        setup = self.setups.get(backend)
        if setup is not None:
            return setup, 0.0
        setup = kernel_module(self.model, self.inputs, self.events, backend)
        self.setups[backend] = setup
        return setup, setup.compile_seconds

    def breakpoints(self, t0: float, t1: float) -> np.ndarray:
        """The inputs' breakpoints in (t0, t1) (kernels only read them)."""
        stops = self.stops.get((t0, t1))
        if stops is None:
            if len(self.stops) >= PLAN_CACHE_SIZE:
                self.stops.clear()
            stops = self.stops[(t0, t1)] = self.inputs.breakpoints(t0, t1)
        return stops


def _plan(model: Model, u: Any, events: Any) -> _Plan:
    """Resolve ``u`` and ``events`` for ``model``, or reuse the plan of an earlier call with equal ones."""
    key = _plan_key(u, events)
    plans = model.memo().setdefault("simulate plans", {}) if key is not None else None
    if plans is not None:
        plan = plans.get(key)
        if plan is not None:
            return plan
    plan = _Plan(model, resolve_inputs(model.inputs, u), resolve_events(model, events))
    if plans is not None:
        if len(plans) >= PLAN_CACHE_SIZE:
            del plans[next(iter(plans))]
        plans[key] = plan
    return plan


_SCALAR_TYPES: Final = frozenset({type(None), bool, int, float, str})  # Keyed by value without further checks.


def _plan_key(u: Any, events: Any) -> tuple[Any, ...] | None:
    """A hashable key equal for arguments that resolve alike, or None (mutable or unhashable arguments).

    Types are part of the key (``True``, ``1`` and ``1.0`` compare equal but are validated differently);
    signals and events are frozen dataclasses compared by value, callables by identity.
    """
    if type(u) in _SCALAR_TYPES and events is None:  # the common call: no or constant inputs, no events
        return ((type(u), u), (type(None), None))
    parts: list[Any] = []
    for value in (u, events):
        key: tuple[Any, ...] | None
        if isinstance(value, list | tuple):
            entries = tuple(_key_item(v) for v in value)
            key = None if any(e is None for e in entries) else (type(value), entries)
        elif isinstance(value, Mapping):
            pairs = tuple((k, _key_item(v)) for k, v in value.items())
            key = None if any(v is None or not isinstance(k, str) for k, v in pairs) else (dict, pairs)
        else:
            key = _key_item(value)
        if key is None:
            return None
        parts.append(key)
    try:
        hash(tuple(parts))
    except TypeError:  # e.g. a Table signal holding arrays
        return None
    return tuple(parts)


def _key_item(value: Any) -> tuple[Any, ...] | None:
    """The key of one input or event (see :func:`_plan_key`), or None when it cannot be keyed."""
    if value is None or isinstance(value, bool | int | float | str | np.floating | np.integer):
        return (type(value), value)
    if isinstance(value, Signal | Event | sympy.Expr):
        return (type(value), value)
    if callable(value) and not isinstance(value, StateFeedback):  # by identity; the key keeps it alive
        return (type(value), id(value), value)
    return None


def _finite(value: Any, label: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{label} must be a number, got {value!r}") from None
    if not np.isfinite(number):
        raise InputError(f"{label} must be finite, got {number}")
    return number


def _numbers(value: Any, label: str) -> np.ndarray:
    """``value`` as a float64 array, or InputError naming ``label`` (not numpy's ValueError)."""
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{label} must be numbers, got {value!r}") from None


def _span(t_span: float | tuple[float, float]) -> tuple[float, float]:
    if type(t_span) is float and math.isfinite(t_span) and t_span > 0:  # the common case: t1 alone
        return 0.0, t_span
    if isinstance(t_span, bool):
        raise InputError(f"t_span must be (t0, t1) or t1, got {t_span!r}")
    if isinstance(t_span, int | float | np.number):
        t0, t1 = 0.0, _finite(t_span, "t_final")
    else:
        try:
            first, last = t_span
        except (TypeError, ValueError):
            raise InputError(f"t_span must be (t0, t1) or t1, got {t_span!r}") from None
        t0, t1 = _finite(first, "t0"), _finite(last, "t_final")
    if not t1 > t0:
        raise InputError(f"t_final = {t1:g} must be greater than t0 = {t0:g}")
    return t0, t1


def _initial_states(model: Model, x0: Any) -> tuple[np.ndarray, bool]:
    n = model.n_states
    if x0 is None:
        return np.zeros((1, n)), False
    if type(x0) is not list and isinstance(x0, Mapping):
        unknown = [k for k in x0 if k not in model.states]
        if unknown:
            model.state_vector({unknown[0]: 0.0}, default=0.0)  # raises with a did-you-mean
        columns = {k: np.atleast_1d(_numbers(v, f"x0[{k!r}]")) for k, v in x0.items()}
        _check_columns(columns, "x0")
        size = max((c.size for c in columns.values()), default=1)
        rows = np.zeros((size, n))
        for k, column in columns.items():
            rows[:, model.states.index(k)] = column
        _check_finite(rows, "x0")
        return rows, size > 1
    array = _numbers(x0, "x0")
    if array.ndim == 1 and array.shape[0] == n and _all_finite(array):  # the common case: one state vector
        return (array if type(x0) is list or type(x0) is tuple else array.copy())[None, :], False
    if array.ndim == 2:
        if array.shape[1] != n:
            raise ShapeError(f"x0 has shape {array.shape}, expected (N, {n}) for the states {', '.join(model.states)}")
        _check_finite(array, "x0")
        return array.copy(), True
    return model.state_vector(array)[None, :], False


def _parameter_sets(model: Model, params: Any) -> tuple[np.ndarray, bool]:
    if params is None:  # the defaults (validated with the model)
        return np.fromiter(model.parameters.values(), float, len(model.parameters))[None, :], False
    names = tuple(model.parameters)
    defaults = model.parameter_vector()
    if isinstance(params, Mapping):
        for key in params:
            if key not in names:
                raise UnknownNameError(f"unknown parameter {key!r} (the model's parameters: {', '.join(names)})")
        columns = {k: np.atleast_1d(_numbers(v, f"params[{k!r}]")) for k, v in params.items()}
        _check_columns(columns, "params")
        size = max((c.size for c in columns.values()), default=1)
        rows = np.tile(defaults, (size, 1))
        for k, column in columns.items():
            rows[:, names.index(k)] = column
        _check_finite(rows, "params")
        return rows, size > 1
    array = _numbers(params, "params")
    if array.ndim == 2:
        if array.shape[1] != len(names):
            raise ShapeError(f"params has shape {array.shape}, expected (N, {len(names)})")
        _check_finite(array, "params")
        return array.copy(), True
    return values_to_vector(array, names, "parameter")[None, :], False


def _check_columns(columns: Mapping[str, np.ndarray], label: str) -> None:
    """Each column is one value or a 1-D list of N values, with the same N for all."""
    size = max((c.size for c in columns.values()), default=1)
    for k, column in columns.items():
        if column.ndim != 1:
            raise ShapeError(f"{label}[{k!r}] has shape {column.shape}: give a number or a list of N values")
        if column.size not in (1, size):
            raise ShapeError(f"{label}[{k!r}] has {column.size} values where others have {size}: give N values each")


def _rows(array: np.ndarray, N: int) -> np.ndarray:
    """``array`` (1, k) or (N, k) as an (N, k) array.

    The arrays of :func:`_initial_states` and :func:`_parameter_sets` are already fresh and writable (the
    kernels are typed for those), so N rows are returned as they are and one row is copied N times.
    """
    if array.shape[0] == N:
        return array
    return np.broadcast_to(array, (N, array.shape[1])).copy()


def _check_finite(array: np.ndarray, label: str) -> None:
    if not _all_finite(array):
        raise InputError(f"{label} contains non-finite values: give finite numbers")


def _all_finite(array: np.ndarray) -> bool:
    """Whether every entry of a float array is finite (small arrays without numpy's per-call cost)."""
    if array.size <= 16:
        return all(map(math.isfinite, array.ravel().tolist()))
    return bool(np.isfinite(array).all())


def _batch_size(x_batch: bool, p_batch: bool, n_x: int, n_p: int) -> int:
    if x_batch and p_batch and n_x != n_p:
        raise ShapeError(f"x0 has {n_x} rows but params has {n_p}: give the same number, or one of them once")
    return max(n_x, n_p)


def _method(model: Model, method: str | None) -> str:
    if method is None:
        return "exact" if model.linear_by_construction() is not None else "dopri5"
    if not isinstance(method, str):
        raise InputError(f"method must be a name, one of {', '.join(METHOD_NAMES)}; got {method!r}")
    chosen = method.lower()
    if chosen not in METHOD_NAMES:
        raise InputError(f"unknown method {method!r}: one of {', '.join(METHOD_NAMES)}")
    return chosen


def _output_times(t_eval: ArrayLike | None, t0: float, t1: float) -> np.ndarray | None:
    if t_eval is None:
        return None
    times = _numbers(t_eval, "t_eval").reshape(-1)
    if times.size == 0 or not np.all(np.isfinite(times)):
        raise InputError("t_eval must be a non-empty list of finite times")
    if np.any(np.diff(times) < 0) or times[0] < t0 or times[-1] > t1:
        raise InputError(f"t_eval must be sorted and inside [{t0:g}, {t1:g}]")
    return times


def _atol(atol: float | ArrayLike, n: int) -> np.ndarray:
    if type(atol) is float and math.isfinite(atol) and atol >= 0:  # the common case, without numpy checks
        vector = np.empty(n)
        vector.fill(atol)
        return vector
    given = _numbers(atol, "atol")
    values = np.broadcast_to(given, (n,)) if given.shape in ((), (1,), (n,)) else None
    if values is None or not np.all(np.isfinite(values)) or np.any(values < 0):
        raise InputError(f"atol must be a non-negative number or {n} of them")
    return np.array(values)


def _check_options(method: str, rtol: float, dt: float | None, max_steps: int, backend: str,
                   grid: np.ndarray | None) -> None:
    if backend not in ("auto", "compiled", "interpreted"):
        raise InputError(f"backend must be auto, compiled or interpreted, got {backend!r}")
    if not _is_positive(rtol):
        raise InputError(f"rtol must be a positive number, got {rtol!r}")
    if not (type(max_steps) is int or isinstance(max_steps, int | np.integer)) or max_steps < 1:
        raise InputError(f"max_steps must be a positive whole number, got {max_steps!r}")
    if method in FIXED_STEP:
        if dt is None:
            raise InputError(f"method {method!r} takes a fixed step: give dt (--dt), e.g. dt=1e-3")
        if not _is_positive(dt):
            raise InputError(f"dt must be a positive number, got {dt!r}")
        if grid is not None:
            raise InputError(f"method {method!r} outputs every step: give dt instead of t_eval")


def _is_positive(value: Any) -> bool:
    """Whether ``value`` is a finite real number > 0 (False for text, None, NaN)."""
    if type(value) is float:  # the common case, without the abstract base class check
        return math.isfinite(value) and value > 0
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    number = float(value)
    return math.isfinite(number) and number > 0


def _fixed_grid(t0: float, t1: float, dt: float) -> np.ndarray:
    count = int(np.ceil((t1 - t0) / dt * (1 - 1e-12)))
    if count > 50_000_000:
        raise InputError(f"dt = {dt:g} needs {count} steps over [{t0:g}, {t1:g}]: choose a larger dt")
    grid = t0 + dt * np.arange(count + 1, dtype=float)
    grid[-1] = t1
    return grid


# --- the exact path ------------------------------------------------------------------------------------
def _linear_form(model: Model, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A, B, c) with x' = A x + B u + c, for models whose dynamics are linear and time-invariant."""
    form = model.affine_form(p)
    if form is None:
        raise InputError(
            f"method 'exact' needs a linear time-invariant model; {model.name!r} is not: use method='dopri5'"
        )
    return form


def _exact(model: Model, t_span: tuple[float, float], x0: np.ndarray, p: np.ndarray, inputs: Inputs,
           grid: np.ndarray | None, events: ResolvedEvents) -> RunResult:
    if len(events):
        raise InputError("events are not located on the exact path: use method='dopri5'")
    if inputs.function is not None:
        raise InputError("a Python input function u(t, x) has no exact form: use method='dopri5'")
    A, B, c = _linear_form(model, p)
    channels = list(inputs.signals)
    if inputs.feedback is not None:  # u = u_ref - K (x - x_ref): closed loop A - B K, constant B K x_ref
        K = np.asarray(inputs.feedback.K, dtype=float)
        c = c + B @ K @ inputs.feedback.reference_state
        A, channels = A - B @ K, list(inputs.feedback.references)
    B_all, signals = B, channels
    if np.any(c != 0):
        B_all, signals = np.hstack([B, c[:, None]]), [*channels, Constant(1.0)]
    times = grid if grid is not None else np.linspace(t_span[0], t_span[1], DEFAULT_POINTS)
    states = exact_response(A, B_all, x0, times, signals, t0=t_span[0])
    return RunResult(times, states, steps=times.size - 1)


# --- results -------------------------------------------------------------------------------------------
def _outputs(model: Model, t: np.ndarray, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Outputs y (T, p); ``x`` itself when y = x (the Trajectory shares the read-only array)."""
    return model.h_many(t, x, u, p)


def _assemble(model: Model, method: str, path: str, runs: list[RunResult], inputs: Inputs, parameters: np.ndarray,
              batch: bool, initial: np.ndarray) -> Trajectory | BatchTrajectory:
    """The result of ``runs`` (one per row of ``parameters``): a Trajectory, or a BatchTrajectory for a batch."""
    if not batch:
        run = runs[0]
        u = run.u if run.u is not None else inputs.evaluate_many(run.t, run.x)
        stats = SimulationStats(path, method, run.nfev, run.steps, run.rejected, run.compile_seconds)
        return Trajectory._adopt(run.t, run.x, u, _outputs(model, run.t, run.x, u, parameters[0]), model.states,
                                 model.inputs, model.outputs, model.name, stats, tuple(run.events))
    stats = SimulationStats(path, method, sum(r.nfev for r in runs), sum(r.steps for r in runs),
                            sum(r.rejected for r in runs), sum(r.compile_seconds for r in runs))
    us = [run.u if run.u is not None else inputs.evaluate_many(run.t, run.x) for run in runs]
    return _batch(model, stats, runs[0].t, np.stack([run.x for run in runs]), np.stack(us), parameters, initial,
                  tuple(tuple(run.events) for run in runs))


def _batch(model: Model, stats: SimulationStats, t: np.ndarray, xs: np.ndarray, us: np.ndarray,
           parameters: np.ndarray, initial: np.ndarray, events: tuple[tuple[EventRecord, ...], ...]) -> BatchTrajectory:
    """A BatchTrajectory from runs on the grid ``t`` (T,): xs (N, T, n), us (N, T, m), parameters (N, n_p)."""
    return BatchTrajectory._adopt(t, xs, us, _batch_outputs(model, t, xs, us, parameters), initial, parameters,
                                  model.states, model.inputs, model.outputs, tuple(model.parameters), model.name,
                                  stats, events)


def _batch_events(records: list[list[EventRecord]], n_events: int, N: int) -> tuple[tuple[EventRecord, ...], ...]:
    """Each trajectory's events as tuples; without events to locate, N empty tuples without a loop."""
    return tuple(map(tuple, records)) if n_events else ((),) * N


def _batch_outputs(model: Model, t: np.ndarray, xs: np.ndarray, us: np.ndarray, parameters: np.ndarray) -> np.ndarray:
    """Outputs y (N, T, p) of N runs on the grid ``t`` (T,) (``xs`` itself when y = x)."""
    return model.h_batch(t, xs, us, parameters)
