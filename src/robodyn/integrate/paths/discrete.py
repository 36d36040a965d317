"""The ``discrete`` path of ``simulate()``: a discrete-time model stepped at its sample instants.

A model with a sample period dt (``model.sample_period``, e.g. a :class:`~robodyn.LinearSystem` with ``dt``)
has an update map, not a derivative: x[k+1] = f(t_k, x[k], u[k]) with t_k = t0 + k dt (for a linear model
x[k+1] = A x[k] + B u[k], y[k] = C x[k] + D u[k]). The inputs are sampled at t_k (any robodyn signal, a
constant, a :class:`~robodyn.signals.StateFeedback` of x[k], or a callable u(t, x)). Nothing is approximated:
the recursion is the model. Without ``t_eval`` the output times are the sample instants t_0 .. t_K with
t_K <= t1 (the last one within SAMPLE_RTOL dt of t1 counts); with ``t_eval`` each time t gets the values of
the last sample at or before it (zero-order hold: x[k], u[k], y[k] for t_k <= t < t_{k+1}).

A run takes at most ``max_steps`` steps (checked before any work, :func:`check_instants`, which the sampled path
shares): a sample period must also be at least :data:`MIN_PERIOD_FRACTION` of the times' magnitude, so that the
instants t0 + k dt are distinct numbers.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError
from robodyn.integrate.assemble import RunResult
from robodyn.integrate.methods.registry import Method
from robodyn.signals import Inputs

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["MIN_PERIOD_FRACTION", "SAMPLE_RTOL", "check_discrete", "check_family", "check_instants", "discrete_run",
           "run_discrete", "sample_count"]

SAMPLE_RTOL: Final = 1e-9  # A time within this fraction of dt past a sample instant still counts as reaching it.
#: The shortest sample period relative to max(|t0|, |t1|): the instants t0 + k dt are then rounded by at most ~2e-7
#: dt in double precision (shorter periods are placed ever less exactly, down to neighbouring instants that are
#: equal).
MIN_PERIOD_FRACTION: Final = 1e-9


def sample_count(period: float, t0: float, t1: float) -> int:
    """K, the index of the last sample instant t0 + K dt at or before t1 (to SAMPLE_RTOL dt): the steps taken."""
    return max(0, math.floor((t1 - t0) / period + SAMPLE_RTOL))


def check_instants(period: float, t0: float, t1: float, max_steps: int, where: str) -> int:
    """K, the sample instants of ``period`` over [t0, t1] (:func:`sample_count`), refused before any work beyond
    ``max_steps`` or for a period below :data:`MIN_PERIOD_FRACTION` of the times (InputError naming the fix)."""
    from robodyn.base.budget import check_count

    check_count((t1 - t0) / period, max_steps, f"the sample instants of dt = {period:g} s over [{t0:g}, {t1:g}]",
                "lengthen the sample period or shorten the span (or raise simulate's max_steps)", where)
    scale = max(abs(t0), abs(t1))
    if period < MIN_PERIOD_FRACTION * scale:
        raise InputError(f"{where}: the sample period {period:g} s is below {MIN_PERIOD_FRACTION:g} of the times "
                         f"(|t| up to {scale:g} s): its instants t0 + k dt would be rounded by more than "
                         f"{2.3e-16 / MIN_PERIOD_FRACTION:.1g} dt; lengthen the period or start the run nearer t = 0")
    return sample_count(period, t0, t1)


def check_family(model: ModelContract, method: Method) -> Method:
    """``method``, unless it does not fit the model: a discrete-time model takes only the ``discrete`` family,
    a continuous-time one anything else (InputError naming the fix)."""
    period = model.sample_period
    if period is not None and method.family != "discrete":
        raise InputError(f"simulate: {model.name!r} is discrete-time (dt = {period:g} s): its update map x[k+1] = "
                         f"A x[k] + B u[k] is stepped, not integrated: use method='discrete' (or leave method out), "
                         f"not {method.name!r}")
    if period is None and method.family == "discrete":
        raise InputError(f"simulate: method {method.name!r} steps a discrete-time model; {model.name!r} is "
                         "continuous-time: leave method out, or sample a linear model first (linear.discretize(dt))")
    return method


def check_discrete(model: ModelContract, t_span: tuple[float, float], grid: np.ndarray | None, dt: float | None,
                   events: int, max_steps: int) -> int:
    """Refuse what the discrete path cannot do, before any work; the number of output times.

    Parameters
    ----------
    model
        A discrete-time model (``sample_period`` set).
    t_span, grid
        The span and the output times asked for (``t_eval``, or None).
    dt
        ``simulate``'s ``dt``: None, or the model's own sample period.
    events
        How many events were asked for (they are not located on this path).
    max_steps
        The step budget.
    """
    period = model.sample_period
    assert period is not None  # simulate() sends only discrete-time models here
    if dt is not None and not (isinstance(dt, numbers.Real) and not isinstance(dt, bool)
                               and abs(float(dt) - period) <= SAMPLE_RTOL * period):
        raise InputError(f"simulate: {model.name!r} is discrete-time and steps at its own sample period dt = "
                         f"{period:g} s: leave dt out (got dt={dt!r}), or discretize the continuous system again")
    if events:
        raise InputError("simulate: events are not located on the discrete path (the state jumps from sample to "
                         "sample): find the sign changes in the trajectory instead")
    t0, t1 = t_span
    steps = check_instants(period, t0, t1 if grid is None else float(grid[-1]), max_steps, "simulate")
    return int(grid.size) if grid is not None else steps + 1


def run_discrete(job: Any) -> Any:
    """The ``discrete`` family's runner of ``simulate()``: ``job`` is its validated call (``SimulationJob``: model,
    t_span, states (N, n), parameters (N, n_p), plan, t_eval); one :func:`discrete_run` per trajectory, assembled."""
    return job.assemble("discrete", [discrete_run(job.model, job.t_span, x0, p, job.plan.inputs, job.t_eval)
                                     for x0, p in zip(job.states, job.parameters)])


def discrete_run(model: ModelContract, t_span: tuple[float, float], x0: np.ndarray, p: np.ndarray, inputs: Inputs,
                 grid: np.ndarray | None) -> RunResult:
    """One trajectory of x[k+1] = f(t_k, x[k], u[k]) from x[0] = x0 at t0 (validated by :func:`check_discrete`).

    Parameters
    ----------
    model
        A discrete-time model; a linear one (``linear_model``) is stepped by its matrices A, B.
    t_span : (t0, t1)
    x0 : (n,)
    p : (n_p,)
    inputs
        The resolved inputs, sampled at each t_k.
    grid : (T,), optional
        Output times: the held sample values there; None for the sample instants.

    Returns
    -------
    RunResult
        t (T,), x (T, n) and the applied inputs u (T, m); ``steps`` and ``nfev`` count the updates.
    """
    period = model.sample_period
    assert period is not None
    t0 = t_span[0]
    steps = sample_count(period, t0, t_span[1] if grid is None else float(grid[-1]))
    times = t0 + period * np.arange(steps + 1, dtype=float)
    x = np.full((steps + 1, model.n_states), np.nan)
    x[0] = x0
    with np.errstate(all="ignore"):  # overflow is reported once, with its time and state (check_states)
        if inputs.depends_on_state:
            u = _closed_loop(model, times, x, p, inputs)
        else:
            u = inputs.evaluate_many(times)
            _open_loop(model, times, x, u, p)
    if grid is None:
        return RunResult(times, x, nfev=steps, steps=steps, u=u)
    held = np.clip(np.floor((grid - t0) / period + SAMPLE_RTOL).astype(np.int64), 0, steps)
    return RunResult(np.array(grid, dtype=float), x[held], nfev=steps, steps=steps, u=u[held])


def _open_loop(model: ModelContract, times: np.ndarray, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> None:
    """Fill x[1:] for inputs known in advance, u (K+1, m)."""
    linear = model.linear_model(p)
    if linear is not None:
        A, forced = linear.A, u[:-1] @ linear.B.T
        for k in range(times.size - 1):
            x[k + 1] = A @ x[k] + forced[k]
        return
    for k in range(times.size - 1):
        x[k + 1] = model.f_raw(float(times[k]), x[k], u[k], p)


def _closed_loop(model: ModelContract, times: np.ndarray, x: np.ndarray, p: np.ndarray, inputs: Inputs) -> np.ndarray:
    """Fill x[1:] for inputs of the state (feedback, u(t, x)); the applied inputs (K+1, m), NaN after an overflow."""
    u = np.full((times.size, model.n_inputs), np.nan)
    linear = model.linear_model(p)
    for k in range(times.size):
        if not np.all(np.isfinite(x[k])):  # overflowed: the inputs of an infinite state are not evaluated
            break
        u[k] = inputs.evaluate(float(times[k]), x[k])
        if k + 1 < times.size:
            x[k + 1] = linear.A @ x[k] + linear.B @ u[k] if linear is not None else \
                model.f_raw(float(times[k]), x[k], u[k], p)
    return u
