"""Simulation of a model on a manifold (a floating base): the run in its chart, the result in its stored states.

:func:`in_chart` lifts the initial states to the chart's (robodyn.mechanisms.floating.chart: the stored state with
the base's tangent coordinates d = 0 appended) and gives ``simulate()`` the call to run instead — the ordinary
simulation of the chart model, whose kernels recentre the chart after every step (``fns[3]``) — with how to
project its trajectory back to the stored states (the base at c (+) d). The base rotation of each initial state
must be unit (the model's ``normalized``); a mapping's rotation left out is no rotation.

Events are evaluated at the stored state: the chart's event function recentres the chart state first
(robodyn.mechanisms.floating.chart.ChartModel.kernel_event_source), a callable ``g(t, x, u, p)`` is given the
projected state.
What needs the stored state inside the run otherwise is refused for now, naming what to use instead: inputs that
read the state (``u(t, x)``, state feedback), and the methods that cannot recentre a chart (``exact``, scipy's
stiff solvers, discrete time).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.base.errors import InputError
from robodyn.integrate.call import Finish, SimulationCall
from robodyn.integrate.methods.registry import lookup
from robodyn.model.events import Event, is_expression
from robodyn.model.values import values_to_vector
from robodyn.results.trajectory import BatchTrajectory, Trajectory
from robodyn.signals import StateFeedback

if TYPE_CHECKING:
    from robodyn.model.protocol import Chart

__all__ = ["in_chart"]


def _initial(model: Any, chart: Any, x0: Any) -> np.ndarray:
    """The initial states ``(N, n)`` (N = 1 for one; None: the model's own initial state), a mapping's rotation left
    out filled with no rotation; each row's rotation checked unit (and normalized when it is off by round-off)."""
    if x0 is None:
        return np.array([chart.checked(np.array(model.initial_state(), dtype=float))])
    if type(x0) is not list and isinstance(x0, Mapping):
        filled = chart.neutral(x0)
        values_to_vector(dict.fromkeys(filled, 0.0), model.states, "state", default=0.0)  # unknown names: refused
        columns = {k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in filled.items()}
        size = max(c.size for c in columns.values())
        if any(c.ndim != 1 or c.size not in (1, size) for c in columns.values()):
            raise InputError(f"x0: the values of a mapping must be numbers or sequences of one length, got lengths "
                             f"{sorted({c.size for c in columns.values()})}", key="x0")
        rows = np.zeros((size, model.n_states))
        for k, column in columns.items():
            rows[:, model.states.index(k)] = column
    else:
        array = np.asarray(x0, dtype=float)
        rows = array if array.ndim == 2 else array[None, :]
    return np.array([chart.checked(row) for row in rows])


def _stored_events(chart: Any, events: Any) -> Any:
    """``events`` for the chart's run: expressions as they are (the chart's symbol table and event source read them
    at the stored state), callables ``g(t, x, u, p)`` given the stored state (the chart state projected)."""
    if events is None:
        return None
    items = [events] if isinstance(events, Event | str) or callable(events) or is_expression(events) else events
    if not isinstance(items, Sequence):
        return events  # refused by the simulation with its message

    def stored(g: Callable[..., float]) -> Callable[..., float]:
        return lambda t, x, u, p: g(t, chart.project(x), u, p)

    out = []
    for item in items:
        event = item if isinstance(item, Event) else Event(item) if callable(item) and not is_expression(item) else item
        if isinstance(event, Event) and callable(event.expression) and not is_expression(event.expression):
            event = dataclasses.replace(event, expression=stored(event.expression))
        out.append(event)
    return out


def in_chart(call: SimulationCall, chart: Chart) -> tuple[SimulationCall, Finish]:
    """The call to run instead of ``call`` on ``call.model``'s ``chart`` (its ``chart()``: the initial states lifted,
    the tolerances and events for the chart's states), and how its result becomes ``call.model``'s (the states
    projected back, the outputs recomputed at them). InputError for what the chart cannot run (module docstring)."""
    model, u, method, atol = call.model, call.u, call.method, call.atol
    where = f"model {model.name!r} ({chart.manifold})"
    if callable(u) or isinstance(u, StateFeedback):
        raise InputError(f"{where}: inputs that read the state (u(t, x), state feedback) are not available with a "
                         f"{chart.manifold} yet: give signals of time", key="u")
    if method is not None and lookup(method).family not in ("adaptive", "implicit", "fixed"):
        raise InputError(f"{where}: method {method!r} cannot step on the manifold of the {chart.manifold}: use "
                         "dopri5 or dop853 (adaptive), radau or rosenbrock (stiff), or euler, heun, rk4 with dt",
                         key="method")
    rows = _initial(model, chart, call.x0)
    n = model.n_states
    if not (np.ndim(atol) == 0 or np.size(atol) == n):
        raise InputError(f"{where}: atol has {np.size(atol)} entries for {n} states: give one number or one per "
                         "state", key="atol")
    tolerances = chart.tolerances(np.broadcast_to(np.asarray(atol, dtype=float), (n,)).copy())
    lifted = chart.lift(rows)
    inner = call.replace(model=chart, x0=lifted if rows.shape[0] > 1 else lifted[0], atol=tolerances,
                         events=_stored_events(chart, call.events), assemble=False)
    return inner, functools.partial(_projected, model, chart)


def _projected(model: Any, chart: Any, result: Trajectory | BatchTrajectory) -> Trajectory | BatchTrajectory:
    """The run of ``chart`` as ``model``'s trajectory: the states projected, the outputs at them."""
    x = chart.project(result.x)
    if isinstance(result, BatchTrajectory):
        events = tuple(tuple(dataclasses.replace(e, x=chart.project(e.x)) for e in records)
                       for records in result.events)
        y = x.copy() if model.outputs_are_states else model.h_batch(result.t, x, result.u, result.params)
        return dataclasses.replace(result, x=x, y=y, x0=chart.project(result.x0), states=model.states,
                                   outputs=model.outputs, source=model, events=events)
    params = result.params if result.params is not None else model.parameter_vector(None)
    y = x.copy() if model.outputs_are_states else model.h_many(result.t, x, result.u, params)
    return dataclasses.replace(result, x=x, y=y, states=model.states, outputs=model.outputs, source=model,
                               events=tuple(dataclasses.replace(e, x=chart.project(e.x)) for e in result.events))
