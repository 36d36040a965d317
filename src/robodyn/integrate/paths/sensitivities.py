"""Forward sensitivities alongside the state: ``simulate(..., sensitivities=["x0", "k"])``.

The sensitivity equations S_j' = f_x S_j + df/dtheta_j are integrated with the state as one system, the
:class:`robodyn.model.derived.sensitivity.SensitivityModel` of [x, S_1, ..., S_k], by ``simulate`` itself (which
runs the call :func:`with_sensitivities` makes and hands its result back to be split): every method
(explicit, fixed-step, implicit, scipy's stiff ones, the exact path of linear models), batches, events, inputs and
diagrams apply unchanged. This module reads the names, builds the initial state (S_j(0) = 0 for a parameter, the
unit vector e_i for the initial state x0_i), the parameters (with state feedback, G = du/dx = -K after them), the
tolerances and the result.

Error control is CVODES's simultaneous corrector with the sensitivities in the error test (``errconS``, Hindmarsh
et al., ACM TOMS 31(3), 2005, section 3.2; CasADi's ``fsens_err_con``): each step's error estimate covers x and
every S_j, with the same rtol and, like CVODES with ``pbar`` the nominal parameter values, the absolute tolerance
of S_j divided by the size of theta_j: the model's value of a parameter (1 where it is 0), 1 for an initial state.
dx = S_j dtheta_j is then held to the state's tolerance for relative changes of a parameter, and for changes of an
initial state in its own unit. The sizes do not depend on the run's values, so a batch gives each run exactly what
it gives alone. An implicit method solves the whole system with Newton (robodyn.model.derived.sensitivity_code: the
exact
Jacobian of [x, S] for straight-line code, else the block-diagonal one; RODAS4 needs the former).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.base.errors import InputError, ShapeError
from robodyn.integrate.arguments import initial_states, parameter_sets, tolerance_vector
from robodyn.integrate.call import Finish, SimulationCall
from robodyn.model.derived.sensitivity import Direction, SensitivityModel, sensitivity_model
from robodyn.model.events import Event, is_expression
from robodyn.model.structure import structure_of
from robodyn.results.trajectory import BatchTrajectory, EventRecord, Trajectory
from robodyn.signals import Signal, StateFeedback, TrackingFeedback

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["read_directions", "with_sensitivities"]


def read_directions(model: ModelContract, names: Sequence[str] | str) -> tuple[Direction, ...]:
    """The directions ``names`` asks for: ``"x0"`` (every initial state), a state's name (its initial value), a
    parameter's name; in order, each once. InputError for an empty list, a derived parameter or an unknown name."""
    items = [part.strip() for part in names.split(",")] if isinstance(names, str) else list(names)
    choices = f"'x0' (every initial state), a state ({', '.join(model.states)})"
    if model.parameters:
        choices += f" or a parameter ({', '.join(model.parameters)})"
    if not items:
        raise InputError(f"sensitivities: no names given: give {choices}")
    found: dict[str, Direction] = {}
    for item in items:
        if not isinstance(item, str):
            raise InputError(f"sensitivities: {item!r} is not a name: give {choices}")
        if item == "x0":
            found.update({s: Direction(s, "state", i) for i, s in enumerate(model.states) if s not in found})
        elif item in model.parameters:
            found.setdefault(item, Direction(item, "parameter", list(model.parameters).index(item)))
        elif item in model.states:
            found.setdefault(item, Direction(item, "state", model.states.index(item)))
        elif item in model.derived_parameters:
            raise InputError(f"sensitivities: parameter {item!r} of model {model.name!r} is derived ({item} = "
                             f"{model.derived_parameters[item]}): take the sensitivities with respect to the "
                             f"parameters it is computed from; the choices are {choices}")
        else:
            raise InputError(f"sensitivities: {item!r} is not a state or parameter of model {model.name!r}: give "
                             f"{choices}")
    return tuple(found.values())


def _check_model(model: ModelContract) -> None:
    """InputError for the models whose sensitivities are not integrated (yet), naming the first reason
    (robodyn.model.structure.Structure.obstacles)."""
    reasons = structure_of(model).obstacles()
    if reasons:
        raise InputError(f"sensitivities of model {model.name!r} are not available: {reasons[0]}; simulate it "
                         "without sensitivities, or difference whole simulations")


def _inputs(model: ModelContract, u: Any, size: int) -> tuple[Any, np.ndarray | None]:
    """The inputs for [x, S] (``size`` entries) and G = du/dx ``(m, n)`` with state feedback (else None): the gain
    K acts on x only, and G = -K moves S's inputs' tangents (robodyn.model.derived.sensitivity_code)."""
    if isinstance(u, StateFeedback):
        n, m = model.n_states, model.n_inputs
        if u.K.shape != (m, n):
            raise ShapeError(f"StateFeedback K has shape {u.K.shape}, expected ({m}, {n}) for model {model.name!r}")
        K = np.zeros((m, size))
        K[:, :n] = u.K
        reference = np.zeros(size)
        reference[:n] = u.reference_state
        return StateFeedback(K, reference, u.references), -u.K
    if isinstance(u, TrackingFeedback):
        raise InputError("sensitivities under a tracking feedback (robodyn.tvlqr's u = u*(t) - K(t) (x - x*(t))): "
                         "its time-varying gain du/dx = -K(t) is not carried into the sensitivity system; simulate "
                         "without sensitivities, or give a StateFeedback (a constant gain) or the inputs as signals")
    if callable(u) and not isinstance(u, Signal):
        raise InputError("sensitivities with an input function u(t, x): how u depends on x is not known; give the "
                         "inputs as signals (functions of t per input), a StateFeedback, or make the controller a "
                         "block of a robodyn.Diagram")
    return u, None


def _events(events: Any, n: int, n_p: int) -> Any:
    """The events for [x, S]: expressions as they are (they read x[i], i < n), callables given x and p of the model."""
    if events is None or isinstance(events, str) or is_expression(events):
        return events
    listed = [events] if isinstance(events, Event) or callable(events) else list(events)
    wrapped = []
    for k, event in enumerate(listed):
        item = event if isinstance(event, Event) else Event(event)
        g = item.expression
        if callable(g) and not is_expression(g):
            def sliced(t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray, g: Callable[..., float] = g) -> float:
                return g(t, x[:n], u, p[:n_p])

            item = Event(sliced, item.direction, item.terminal, item.name or f"event{k}")
        wrapped.append(item)
    return wrapped


def _scales(model: ModelContract, directions: Sequence[Direction]) -> np.ndarray:
    """The size of each theta_j, S_j's atol being atol over it: |the model's value| of a parameter (1 where it is 0),
    1 for an initial state (module docstring)."""
    defaults = model.default_parameters()[1]
    sizes = np.array([abs(float(defaults[d.index])) if d.kind == "parameter" else 1.0 for d in directions])
    return np.where(sizes > 0, sizes, 1.0)


def with_sensitivities(call: SimulationCall, names: Sequence[str] | str) -> tuple[SimulationCall, Finish]:
    """The call of the sensitivity system of ``call.model`` for ``names`` (see the module docstring) to run instead
    of ``call``, and how its result becomes the model's trajectory with its sensitivities."""
    model = call.model
    _check_model(model)
    directions = read_directions(model, names)
    n, n_p, k = model.n_states, len(model.parameters), len(directions)
    states, x_batch = initial_states(model, call.x0)
    parameters, p_batch = parameter_sets(model, call.params)
    inputs, gain = _inputs(model, call.u, n * (k + 1))
    augmented = sensitivity_model(model, directions, gain is not None)
    if str(call.method or "").lower() == "rosenbrock" and augmented.jacobian_method == "block diagonal":
        raise InputError(f"method 'rosenbrock' needs the exact Jacobian of the sensitivity system, and model "
                         f"{model.name!r} gives only the block-diagonal one (its code is not straight-line): use "
                         "method='radau'")
    start = np.zeros(n * k)
    for j, d in enumerate(directions):
        if d.kind == "state":
            start[j * n + d.index] = 1.0
    x_aug = np.hstack([states, np.tile(start, (states.shape[0], 1))])
    p_aug = parameters if gain is None else np.hstack([parameters, np.tile(gain.reshape(-1), (len(parameters), 1))])
    atol = tolerance_vector(call.atol, n)
    scales = _scales(model, directions)
    inner = call.replace(model=augmented, x0=x_aug if x_batch else x_aug[0], u=inputs,
                         params=p_aug if p_batch else p_aug[0], events=_events(call.events, n, n_p),
                         atol=np.concatenate([atol, *(atol / scale for scale in scales)]))
    return inner, functools.partial(_split, model=model, augmented=augmented)


def _split(result: Trajectory | BatchTrajectory, model: ModelContract, augmented: SensitivityModel
           ) -> Trajectory | BatchTrajectory:
    """The run of [x, S] as the model's trajectory with its sensitivities."""
    n, n_p, k, p = model.n_states, len(model.parameters), augmented.k, model.n_outputs
    lead = result.x.shape[:-1]
    x, sensitivities = result.x[..., :n], result.x[..., n:].reshape(*lead, k, n)
    y, outputs = (x, None) if model.outputs_are_states else (result.y[..., :p],
                                                            result.y[..., p:].reshape(*lead, k, p))
    labels = tuple(d.label for d in augmented.directions)
    if isinstance(result, BatchTrajectory):
        events = tuple(tuple(_event(e, n) for e in run) for run in result.events)
        return BatchTrajectory._adopt(result.t, x, result.u, y, result.x0[:, :n], result.params[:, :n_p],
                                      model.states, model.inputs, model.outputs, tuple(model.parameters), model.name,
                                      result.stats, events, source=model, sensitivities=sensitivities,
                                      output_sensitivities=outputs, sensitivity_names=labels,
                                      sensitivity_method=augmented.method)
    params = None if result.params is None else result.params[:n_p]
    return Trajectory._adopt(result.t, x, result.u, y, model.states, model.inputs, model.outputs, model.name,
                             result.stats, tuple(_event(e, n) for e in result.events), source=model, params=params,
                             left_inputs=result.left_inputs, sensitivities=sensitivities,
                             output_sensitivities=outputs, sensitivity_names=labels,
                             sensitivity_method=augmented.method)


def _event(record: EventRecord, n: int) -> EventRecord:
    return EventRecord(record.name, record.t, record.x[:n], record.terminal)
