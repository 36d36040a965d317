"""Stiff methods through scipy (``radau``, ``bdf``, ``lsoda``) with the model's exact Jacobian.

The methods are the ``stiff`` family of :data:`robodyn.integrate.methods.registry.REGISTRY`, which names each one's
``solve_ivp`` solver; ``STIFF_METHODS`` (name -> solver) is kept for compatibility, derived from it.

The span is cut at the inputs' discontinuities and each piece is one ``solve_ivp`` call, so no edge is
stepped over; inputs are evaluated with the piece's midpoint as ``t_piece`` (docs/dev/simulation.md).
The Jacobian is the model's exact one (df/dx + df/du du/dx, with du/dx = -K under state feedback) when
it has one (``model.jacobian_method``), and otherwise left to scipy's finite differences.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import NumericalError
from robodyn.integrate.assemble import RunResult
from robodyn.integrate.events import ResolvedEvents
from robodyn.integrate.methods.registry import REGISTRY, names
from robodyn.results.trajectory import EventRecord
from robodyn.signals import Inputs

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["STIFF_METHODS", "RunResult", "stiff_run"]

STIFF_METHODS: Final[Mapping[str, str]] = MappingProxyType(
    {name: REGISTRY[name].scipy_name for name in names("stiff")}  # type: ignore[misc]
)


class _Stop(Exception):
    """Raised inside scipy's callbacks to end a run that has failed (caught in :func:`stiff_run`)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def _state_text(model: ModelContract, state: np.ndarray) -> str:
    return ", ".join(f"{name} = {value:.10g}" for name, value in zip(model.states, state.tolist()))


def _jacobian(model: ModelContract, inputs: Inputs, p: np.ndarray, evaluate_u: Callable[..., np.ndarray]) -> Any:
    """df/dx + df/du du/dx, du/dx the inputs' ``state_gain(t)`` (-K under state feedback, -K(t) under a tracking
    feedback, zero for time signals); None for Python functions u(t, x) or a model without exact Jacobians."""
    if inputs.state_gain(0.0) is None or model.jacobian_method is None:
        return None

    def jacobian(t: float, x: np.ndarray) -> np.ndarray:
        dfdx, dfdu = model.jacobians_raw(float(t), x, evaluate_u(t, x), p)
        du_dx = inputs.state_gain(float(t))
        return dfdx if du_dx is None or du_dx.shape[1] == 0 else dfdx + dfdu @ du_dx

    return jacobian


def stiff_run(
    model: ModelContract,
    method: str,
    t_span: tuple[float, float],
    x0: np.ndarray,
    p: np.ndarray,
    inputs: Inputs,
    t_eval: np.ndarray | None,
    rtol: float,
    atol: float | np.ndarray,
    events: ResolvedEvents,
    max_steps: int = 1_000_000,
) -> RunResult:
    """Integrate with scipy's ``Radau``, ``BDF`` or ``LSODA`` piece by piece between input edges."""
    t0, t1 = t_span
    evaluator = inputs.python_evaluator()
    data = inputs.compiled(model.n_states) if inputs.is_compilable else None
    cuts = np.concatenate([[t0], inputs.breakpoints(t0, t1), [t1]])
    times, states, records = [np.array([t0])], [x0[None, :]], []
    nfev = steps = 0
    x = x0.copy()
    evaluations = [0]
    budget = 2 * max_steps  # evaluations: the step guard of the kernels (max_steps attempts), for scipy

    def stop_nonfinite(what: str, t: float, state: np.ndarray, value: Any) -> _Stop:
        bad = np.flatnonzero(~np.isfinite(np.asarray(value, dtype=float)))
        label = f" (state {model.states[int(bad[0])]})" if bad.size and np.size(value) == model.n_states else ""
        return _Stop(f"{method}: a non-finite {what} appeared at t = {t:.10g}{label}, from the state "
                     f"{_state_text(model, state)}: the solution blows up or leaves the model's domain there; "
                     "check the model and the initial state, or shorten the time span")

    for a, b in itertools.pairwise(cuts):
        middle = 0.5 * (a + b)
        u_buffer = np.zeros(model.n_inputs)

        def input_at(t: float, state: np.ndarray, middle: float = middle, u_buffer: np.ndarray = u_buffer,
                     ) -> np.ndarray:
            evaluator(t, middle, state, data, u_buffer)
            return u_buffer.copy()

        def rhs(t: float, state: np.ndarray, input_at: Callable[..., np.ndarray] = input_at) -> np.ndarray:
            evaluations[0] += 1
            if evaluations[0] > budget:
                raise _Stop(f"{method}: more than {budget} evaluations before t = {t:.10g} (state "
                            f"{_state_text(model, state)}): the solution may blow up or the step size collapse "
                            "there; check the model, shorten the time span or allow more steps (max_steps)")
            if not np.all(np.isfinite(state)):
                raise stop_nonfinite("state", t, state, state)
            value = model.f_raw(t, state, input_at(t, state), p)
            if not np.all(np.isfinite(value)):
                raise stop_nonfinite("derivative", t, state, value)
            return value

        scipy_events = []
        for k, g in enumerate(events.functions):
            def crossing(t: float, state: np.ndarray, g: Any = g, input_at: Any = input_at, k: int = k) -> float:
                value = float(g(t, state, input_at(t, state), p))
                if not np.isfinite(value):
                    raise _Stop(f"{method}: event {events.names[k]!r} is not finite ({value}) at t = {t:.10g} "
                                f"with the state {_state_text(model, state)}: fix the event function there")
                return value
            crossing.terminal = bool(events.terminal[k])  # type: ignore[attr-defined]
            crossing.direction = float(events.direction[k])  # type: ignore[attr-defined]
            scipy_events.append(crossing)
        inside = None if t_eval is None else t_eval[(t_eval > a) & (t_eval <= b)]
        from scipy.integrate import solve_ivp  # here: importing scipy.integrate costs ~0.1 s at start-up

        try:
            solution = solve_ivp(
                rhs, (a, b), x, method=STIFF_METHODS[method], t_eval=inside, rtol=rtol, atol=atol,
                jac=_jacobian(model, inputs, p, input_at), events=scipy_events or None, dense_output=True,
            )
        except _Stop as stop:
            raise NumericalError(stop.message) from None
        if solution.status == -1:
            t_end = float(solution.t[-1]) if solution.t.size else a
            state = solution.y[:, -1] if solution.y.size else x
            raise NumericalError(f"{method} failed at t = {t_end:.10g} with the state {_state_text(model, state)}: "
                                 f"{solution.message} (try smaller tolerances, or check the model for a "
                                 "singularity there)")
        nfev += int(solution.nfev)
        steps += len(solution.sol.ts) - 1 if solution.sol is not None else len(solution.t) - 1
        keep = solution.t > a if t_eval is None else np.ones(solution.t.size, dtype=bool)
        times.append(solution.t[keep])
        states.append(solution.y.T[keep])
        for k, (hits, values) in enumerate(zip(solution.t_events or [], solution.y_events or [])):
            records += [EventRecord(events.names[k], float(th), np.array(v), bool(events.terminal[k]))
                        for th, v in zip(hits, values)]
        if solution.status == 1:  # a terminal event
            break
        x = solution.y[:, -1].copy() if t_eval is None else solution.sol(b)
    if t_eval is not None and t_eval[0] > t0:
        times, states = times[1:], states[1:]
    records.sort(key=lambda record: record.t)
    return RunResult(np.concatenate(times), np.concatenate(states), nfev=nfev, steps=steps, events=records)
