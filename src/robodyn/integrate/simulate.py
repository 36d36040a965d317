"""``simulate()``: one entry point that picks the path by the method's family (docs/dev/simulation.md).

``simulate()`` takes the call as a value (:class:`robodyn.integrate.call.SimulationCall`) and chooses its path once,
by the model's structure (:func:`robodyn.model.structure.structure_of`, ``_PATHS``): in the chart of a manifold
(the chart model's call dispatched in turn), between sampled blocks' instants, from impact to impact, or plain.
Forward sensitivities make the call of the sensitivity system, dispatched the same way.

The methods are the registry :data:`robodyn.integrate.methods.registry.REGISTRY`; on the plain path the validated
call (``SimulationJob``) goes to the runner of its method's family (``_RUNNERS``):

- ``exact`` (the default for linear models): matrix exponentials, exact for the supported inputs;
- ``fixed`` (``euler``, ``heun``, ``rk4``, step ``dt``) and ``adaptive`` (``dopri5``, ``dop853``): the
  Runge–Kutta kernels, compiled with numba for symbolic models, run as plain Python for models given as
  callables;
- ``stiff`` (``radau``, ``bdf``, ``lsoda``): scipy's stiff solvers with the model's exact Jacobian;
- ``discrete`` (the default, and the only method, for discrete-time models: those with a ``sample_period``):
  the update map stepped at the sample instants (:mod:`robodyn.integrate.paths.discrete`).

Fixed-step methods sample the inputs at each step's start and hold them over the step (zero-order
hold), like a digital controller; adaptive methods evaluate them at every stage and stop exactly at
every input discontinuity.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import ArrayLike

from robodyn.base.budget import check_count
from robodyn.base.errors import InputError, RobodynWarning
from robodyn.diagrams.switching import is_switch
from robodyn.integrate.arguments import (
    as_rows,
    batch_size,
    float_array,
    initial_states,
    parameter_sets,
    read_span,
    tolerance_vector,
)
from robodyn.integrate.assemble import RunResult, batch_events, batch_result
from robodyn.integrate.call import SimulationCall
from robodyn.integrate.events import Event, ResolvedEvents, is_expression, resolve_events
from robodyn.integrate.guards import check_memory
from robodyn.integrate.job import DEFAULT_POINTS, PLAN_CACHE_SIZE, Result, SimulationJob, SimulationPlan
from robodyn.integrate.kernels.run import add_setup, run_adaptive, run_batch, run_fixed
from robodyn.integrate.limits import check_limits, limit_events, limits_left
from robodyn.integrate.methods.registry import METHOD_NAMES, Family, Method, lookup
from robodyn.integrate.paths.discrete import check_discrete, check_family, check_instants, run_discrete
from robodyn.model.structure import Path, Structure, structure_of
from robodyn.model.system import require_model
from robodyn.results.trajectory import BatchTrajectory, SimulationStats, Trajectory
from robodyn.signals import Inputs, Signal, StateFeedback, resolve_inputs

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["METHOD_NAMES", "SimulationJob", "SimulationPlan", "simulate"]

#: Steps of one fixed-step run, each an output row (50 million rows of a pendulum: 2.4 GB and minutes of stepping).
MAX_FIXED_STEPS: Final = 50_000_000



def simulate(
    model: ModelContract,
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
    limits: str = "warn",
    assemble: bool = False,
    sensitivities: Sequence[str] | str | None = None,
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
        (default otherwise), ``dop853``, ``radau``, ``bdf``, ``lsoda``: the names of
        :data:`robodyn.integrate.methods.registry.REGISTRY` (``METHOD_NAMES``), in any case. A discrete-time model
        (``sample_period`` set) takes only ``discrete``, its default: t are then its sample instants (with
        ``t_eval``, the values held from the last sample), ``stats.path`` is ``"discrete"``.
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
        Step budget of adaptive methods; the stiff methods may evaluate f at most ``2 * max_steps`` times.
    backend
        ``auto``, ``compiled`` or ``interpreted`` (the same kernels without numba).
    limits
        The coordinates' position limits (``model.position_limits()``, a URDF's): ``warn`` (a RobodynWarning when
        the run leaves them), ``events`` (terminal events ``<joint>_upper``/``_lower`` stop it there) or
        ``ignore`` (robodyn.integrate.limits).
    assemble
        For a model with closed loops or held points (``model.constraints()``): False (default) refuses an
        initial state off the constraints, naming the worst residual; True assembles it first, keeping its
        independent coordinates and velocities (robodyn.mechanisms.loops.constraints).
    sensitivities
        Integrate the forward sensitivities dx/dtheta alongside the state, error-controlled with it, for each
        ``theta`` named: a parameter, a state (its initial value) or ``"x0"`` (every initial state); read them with
        ``Trajectory.sensitivity(name)`` ``(T, n)`` and ``output_sensitivity(name)`` ``(T, n_outputs)``
        (robodyn.integrate.paths.sensitivities, docs/sensitivities.md).

    Returns
    -------
    Trajectory, or BatchTrajectory for a batch.
    """
    call = SimulationCall(model, t_span, x0, u, method, rtol, atol, dt, t_eval, events, params, max_steps, backend,
                          limits, assemble)
    left: list[str] = []
    if sensitivities is None:
        result = _run(call, left)
    else:  # the sensitivity equations alongside the state (robodyn.integrate.paths.sensitivities)
        require_model(model, "simulate")
        from robodyn.integrate.paths.sensitivities import with_sensitivities

        inner, finish = with_sensitivities(call, sensitivities)
        result = finish(_run(inner, left))
    for text in left:
        warnings.warn(text, RobodynWarning, stacklevel=2)
    return result


# --- the dispatch: one path per structure --------------------------------------------------------------
def _run(call: SimulationCall, left: list[str]) -> Result:
    """``call`` run by the path of its model's structure (:data:`_PATHS`); the text of a run that left the position
    limits (``limits="warn"``) appended to ``left``."""
    require_model(call.model, "simulate")
    structure = structure_of(call.model)
    return _PATHS[structure.path](call, structure, left)


def _in_chart(call: SimulationCall, structure: Structure, left: list[str]) -> Result:
    """A manifold (a floating base): the run in its chart (robodyn.integrate.paths.chart)."""
    from robodyn.integrate.paths.chart import in_chart

    assert structure.chart is not None  # the path of a structure with a chart
    inner, finish = in_chart(call, structure.chart)
    return finish(_run(inner, left))


def _sampled(call: SimulationCall, structure: Structure, left: list[str]) -> Result:
    """Sampled blocks: integrated between their instants (robodyn.integrate.paths.sampled)."""
    from robodyn.integrate.paths.sampled import run_sampled

    return _checked(call, run_sampled(_job(call, structure)), left)


def _with_impacts(call: SimulationCall, structure: Structure, left: list[str]) -> Result:
    """Rigid contacts: integrated from impact to impact (robodyn.integrate.paths.impacts)."""
    from robodyn.integrate.paths.impacts import run_with_impacts

    return _checked(call, run_with_impacts(_job(call, structure)), left)


def _plain(call: SimulationCall, structure: Structure, left: list[str]) -> Result:
    """x' = f on a vector space (closed loops only checked at the start): the runner of the method's family."""
    job = _job(call, structure)
    return _checked(call, _RUNNERS[job.method.family](job), left)


#: The path of each structure (robodyn.model.structure.Structure.path; docs/dev/simulation.md "Dispatch").
_PATHS: Final[Mapping[Path, Callable[[SimulationCall, Structure, list[str]], Result]]] = {
    "chart": _in_chart,
    "sampled": _sampled,
    "impacts": _with_impacts,
    "plain": _plain,
}


def _checked(call: SimulationCall, result: Result, left: list[str]) -> Result:
    """``result``, its leaving of the model's position limits noted in ``left`` (``limits="warn"``)."""
    model = call.model
    text = limits_left(model, result.t, result.x) if call.limits == "warn" and model.position_limits() else None
    if text is not None:
        left.append(text)
    return result


def _job(call: SimulationCall, structure: Structure) -> SimulationJob:
    """``call`` validated and prepared for a runner: the span, the initial states and parameters as rows (on the
    constraints of closed loops), the method, the resolved inputs and events, the output times."""
    model, events = call.model, call.events
    if model.n_states == 0 and model.sample_period is None:  # a sampled one is run: its outputs at its instants
        raise InputError(f"model {model.name!r} has no states: there is nothing to integrate; a static block (y = "
                         "h(t, u)) is evaluated with model.h or used as a block of a robodyn.Diagram")
    t0, t1 = read_span(call.t_span)
    states, x_batch = initial_states(model, call.x0)
    parameters, p_batch = parameter_sets(model, call.params)
    N = batch_size(x_batch, p_batch, states.shape[0], parameters.shape[0])
    if check_limits(call.limits) == "events" and model.position_limits():
        events = [*_listed(events), *limit_events(model)]
    chosen = _method(model, call.method)
    if chosen.family in ("adaptive", "implicit") and N == 1 and model.switching_events():
        events = [*_listed(events), *model.switching_events()]  # a diagram's corners (robodyn.integrate.corners)
    plan = _plan(model, call.u, events)
    grid = _output_times(call.t_eval, t0, t1)
    atol_vector = tolerance_vector(call.atol, model.n_states)
    dt, max_steps = call.dt, call.max_steps
    _check_options(chosen, call.rtol, dt, max_steps, call.backend, grid)
    points = grid.size if grid is not None else (DEFAULT_POINTS if N > 1 or chosen.family == "exact" else 0)
    if chosen.family == "fixed" and _is_positive(dt) and grid is None:
        points = _fixed_steps(t0, t1, float(dt)) + 1  # type: ignore[arg-type]
    if chosen.family == "discrete":
        points = check_discrete(model, (t0, t1), grid, dt, len(plan.events), max_steps)
    if structure.sampling is not None:  # sampled blocks: the run stops at every instant of the base period
        points = max(points, check_instants(structure.sampling.base, t0, t1, max_steps, "simulate") + 2)
    check_memory(model, N, points)
    states, parameters = as_rows(states, N), as_rows(parameters, N)
    if structure.constraints is not None:  # closed loops: on them, or refused
        from robodyn.mechanisms.loops.constraints import consistent_states

        states = consistent_states(model, t0, states, parameters, call.assemble)
    return SimulationJob(model, chosen, (t0, t1), states, parameters, plan, grid, call.rtol, atol_vector, dt,
                         max_steps, call.backend, x_batch or p_batch)


def _listed(events: Sequence[Event | str] | Event | str | None) -> list[Event | str]:
    """``events`` as a list (one event, text or an Event, or none)."""
    if events is None:
        return []
    return [events] if isinstance(events, str | Event) else list(events)


# --- the runners, one per family of methods ------------------------------------------------------------
def _run_exact(job: SimulationJob) -> Result:
    """``exact``: matrix exponentials on the output times (DEFAULT_POINTS of them without t_eval)."""
    grid = job.output_times()
    return job.assemble("exact", [_exact(job.model, job.t_span, x0, p, job.plan.inputs, grid, job.plan.events)
                                  for x0, p in zip(job.states, job.parameters)])


def _run_stiff(job: SimulationJob) -> Result:
    """``radau``, ``bdf``, ``lsoda``: scipy's ``solve_ivp``, one call per trajectory and input piece."""
    grid = job.output_times()
    from robodyn.integrate.paths.stiff import stiff_run  # scipy's solve_ivp, for comparison

    return job.assemble("stiff", [stiff_run(job.model, job.method.name, job.t_span, x0, p, job.plan.inputs, grid,
                                            job.rtol, job.atol, job.plan.events, job.max_steps)
                                  for x0, p in zip(job.states, job.parameters)])


def _run_fixed(job: SimulationJob) -> Result:
    """``euler``, ``heun``, ``rk4``: the fixed-step kernel on the grid of ``dt`` (inputs held over each step)."""
    assert job.dt is not None  # _check_options
    grid = _fixed_grid(*job.t_span, job.dt)
    if job.batch:
        return _kernel_batch(job, grid)
    setup, setup_seconds = job.plan.kernels(job.backend)
    run = run_fixed(setup, job.method.name, grid, job.states[0], job.parameters[0], job.dt)
    add_setup(run, setup, setup_seconds)
    return job.assemble(setup.path, [run])


def _run_adaptive(job: SimulationJob) -> Result:
    """``dopri5``, ``dop853``, ``radau``, ``rosenbrock``: the adaptive kernel, stopping at the inputs' breakpoints."""
    grid = job.output_times()
    if job.batch:
        assert grid is not None
        return _kernel_batch(job, grid)
    setup, setup_seconds = job.plan.kernels(job.backend, job.method.family == "implicit")
    stops = job.plan.breakpoints(*job.t_span)
    run = run_adaptive(setup, job.method.name, job.t_span, job.states[0], job.parameters[0], stops,
                       np.empty(0) if grid is None else grid, job.rtol, job.atol, job.max_steps)
    if any(is_switch(name) for name in job.plan.events.names):
        from robodyn.integrate.corners import across_corners

        run = across_corners(job, setup, run, grid)
    add_setup(run, setup, setup_seconds)
    return job.assemble(setup.path, [run])


def _kernel_batch(job: SimulationJob, grid: np.ndarray) -> BatchTrajectory:
    """A batch through the kernels (fixed, adaptive or implicit) on the common ``grid``."""
    setup, setup_seconds = job.plan.kernels(job.backend, job.method.family == "implicit")
    stops = job.plan.breakpoints(*job.t_span)
    t, xs, us, totals, records = run_batch(setup, job.method.name, job.t_span, job.states, job.parameters, stops,
                                           grid, job.rtol, job.atol, job.max_steps, job.dt)
    stats = SimulationStats(setup.path, job.method.name, int(totals["nfev"]), int(totals["steps"]),
                            int(totals["rejected"]), setup_seconds + totals["compile_seconds"],
                            from_cache=bool(totals["from_cache"]) and (setup_seconds == 0.0 or setup.cached),
                            njev=int(totals.get("njev", 0)),
                            nlu=int(totals.get("nlu", 0)))
    N = job.states.shape[0]
    return batch_result(job.model, stats, t, xs, us, job.parameters, job.states,
                        batch_events(records, len(job.plan.events), N))


_RUNNERS: Final[Mapping[Family, Callable[[SimulationJob], Result]]] = {
    "fixed": _run_fixed,
    "adaptive": _run_adaptive,
    "implicit": _run_adaptive,
    "stiff": _run_stiff,
    "exact": _run_exact,
    "discrete": run_discrete,
}


# --- what repeated calls share -------------------------------------------------------------------------
def _plan(model: ModelContract, u: Any, events: Any) -> SimulationPlan:
    """Resolve ``u`` and ``events`` for ``model``, or reuse the plan of an earlier call with equal ones."""
    key = _plan_key(u, events)
    plans = model.memo().setdefault("simulate plans", {}) if key is not None else None
    if plans is not None:
        plan = plans.get(key)
        if plan is not None:
            return plan
    plan = SimulationPlan(model, resolve_inputs(model.inputs, u), resolve_events(model, events))
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
    if isinstance(value, Signal | Event) or is_expression(value):
        return (type(value), value)
    if callable(value) and not isinstance(value, StateFeedback):  # by identity; the key keeps it alive
        return (type(value), id(value), value)
    return None


def _method(model: ModelContract, method: str | None) -> Method:
    """The registry entry of ``method``; without one, ``discrete`` for discrete-time models, ``exact`` for linear
    models and else ``dopri5``. A discrete-time model takes only ``discrete``, and only it (check_family)."""
    if method is None:
        default = "exact" if model.linear_by_construction() is not None else "dopri5"
        return lookup("discrete" if model.sample_period is not None else default)
    return check_family(model, lookup(method))


def _output_times(t_eval: ArrayLike | None, t0: float, t1: float) -> np.ndarray | None:
    if t_eval is None:
        return None
    times = float_array(t_eval, "t_eval").reshape(-1)
    if times.size == 0 or not np.all(np.isfinite(times)):
        raise InputError("t_eval must be a non-empty list of finite times")
    if np.any(np.diff(times) < 0) or times[0] < t0 or times[-1] > t1:
        raise InputError(f"t_eval must be sorted and inside [{t0:g}, {t1:g}]")
    return times


def _check_options(method: Method, rtol: float, dt: float | None, max_steps: int, backend: str,
                   grid: np.ndarray | None) -> None:
    if backend not in ("auto", "compiled", "interpreted"):
        raise InputError(f"backend must be auto, compiled or interpreted, got {backend!r}")
    if not _is_positive(rtol):
        raise InputError(f"rtol must be a positive number, got {rtol!r}")
    if not (type(max_steps) is int or isinstance(max_steps, int | np.integer)) or max_steps < 1:
        raise InputError(f"max_steps must be a positive whole number, got {max_steps!r}")
    if method.family == "fixed":
        if dt is None:
            raise InputError(f"method {method.name!r} takes a fixed step: give dt (--dt), e.g. dt=1e-3")
        if not _is_positive(dt):
            raise InputError(f"dt must be a positive number, got {dt!r}")
        if grid is not None:
            raise InputError(f"method {method.name!r} outputs every step: give dt instead of t_eval")


def _is_positive(value: Any) -> bool:
    """Whether ``value`` is a finite real number > 0 (False for text, None, NaN)."""
    if type(value) is float:  # the common case, without the abstract base class check
        return math.isfinite(value) and value > 0
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    number = float(value)
    return math.isfinite(number) and number > 0


def _fixed_steps(t0: float, t1: float, dt: float) -> int:
    """The steps of ``dt`` over [t0, t1] (the last one shorter), at most MAX_FIXED_STEPS (InputError otherwise)."""
    steps = (t1 - t0) / dt * (1 - 1e-12)
    check_count(steps, MAX_FIXED_STEPS, f"the steps of dt = {dt:g} s over [{t0:g}, {t1:g}]",
                "choose a larger dt or a shorter span", "simulate")
    return math.ceil(steps)


def _fixed_grid(t0: float, t1: float, dt: float) -> np.ndarray:
    count = _fixed_steps(t0, t1, dt)
    grid = t0 + dt * np.arange(count + 1, dtype=float)
    grid[-1] = t1
    return grid


# --- the exact path ------------------------------------------------------------------------------------
def _linear_form(model: ModelContract, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A, B, c) with x' = A x + B u + c, for models whose dynamics are linear and time-invariant."""
    form = model.affine_form(p)
    if form is None:
        raise InputError(
            f"method 'exact' needs a linear time-invariant model; {model.name!r} is not: use method='dopri5'"
        )
    return form


def _exact(model: ModelContract, t_span: tuple[float, float], x0: np.ndarray, p: np.ndarray, inputs: Inputs,
           grid: np.ndarray | None, events: ResolvedEvents) -> RunResult:
    if len(events):
        raise InputError("events are not located on the exact path: use method='dopri5'")
    if inputs.function is not None:
        raise InputError("a Python input function u(t, x) has no exact form: use method='dopri5'")
    if inputs.tracking is not None:
        raise InputError("a tracking feedback (time-varying gain) has no exact form: use method='dopri5'")
    A, B, c = _linear_form(model, p)
    channels = list(inputs.signals)
    if inputs.feedback is not None:  # u = u_ref - K (x - x_ref): closed loop A - B K, constant B K x_ref
        K = np.asarray(inputs.feedback.K, dtype=float)
        c = c + B @ K @ inputs.feedback.reference_state
        A, channels = A - B @ K, list(inputs.feedback.references)
    from robodyn.linear.exact import exact_response, with_constant

    B_all, signals = with_constant(B, c, channels)
    times = grid if grid is not None else np.linspace(t_span[0], t_span[1], DEFAULT_POINTS)

    with np.errstate(all="ignore"):  # overflow is reported once, with its time and state (_check_states)
        states = exact_response(A, B_all, x0, times, signals, t0=t_span[0])
    return RunResult(times, states, steps=times.size - 1)
