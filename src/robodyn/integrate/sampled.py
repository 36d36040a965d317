"""The ``sampled`` path of ``simulate()``: a model with sampled blocks, integrated between its sample instants.

A diagram with sampled blocks (robodyn.model.sampled) evolves between instants as its flow model — its states,
then the sampled blocks' held outputs and inputs — and jumps at each instant t_k = t0 + k T (T the base period):
pending updates applied, outputs held anew. The flow runs the adaptive (or implicit) kernels on [t_k, t_{k+1}],
which end exactly at t_{k+1} (an interval's end, not an event located by search), with the inputs' breakpoints as
stops inside; the jump is evaluated from the blocks (at most a few microseconds of Python each).

Rows: a time t in [t_k, t_{k+1}) gets the values after the jump at t_k (a discrete state shows x[k], from which
the outputs at t_k are computed; the continuous states are continuous). Without ``t_eval`` the output times are
the base instants (and t1). One trajectory at a time; events are not located in such models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import numpy as np

from robodyn.errors import InputError
from robodyn.integrate.discrete import SAMPLE_RTOL, sample_count
from robodyn.integrate.kernels import run_adaptive
from robodyn.trajectory import SimulationStats, Trajectory

if TYPE_CHECKING:
    from robodyn.integrate.simulate import _Job

__all__ = ["run_sampled"]

_NO_STOPS: Final = np.empty(0)  # one object: the kernels remember the layout of a run by its arrays' identity


def run_sampled(job: _Job) -> Trajectory:
    """The trajectory of ``job.model`` (whose ``sampling()`` is set) over ``job.t_span``."""
    from robodyn.integrate.events import resolve_events
    from robodyn.integrate.simulate import _Plan

    model = job.model
    sampling = model.sampling()
    if job.batch:
        raise InputError(f"simulate: {model.name!r} has sampled blocks: simulate one initial state and parameter set "
                         "at a time (batches are for continuous-time models)")
    if len(job.plan.events):
        raise InputError(f"simulate: {model.name!r} has sampled blocks: events are not located in such models")
    if job.method.family not in ("adaptive", "implicit"):
        raise InputError(f"simulate: {model.name!r} has sampled blocks: use an adaptive or implicit method (dopri5, "
                         f"dop853, radau, rosenbrock), not {job.method.name!r}")
    flow = sampling.flow()
    plan = _Plan(flow, job.plan.inputs, resolve_events(flow, None))
    setup, seconds = plan.kernels(job.backend, job.method.family == "implicit")
    t0, t1 = job.t_span
    base = sampling.base
    count = sample_count(base, t0, t1)
    instants = t0 + base * np.arange(count + 1)
    if abs(instants[-1] - t1) <= SAMPLE_RTOL * base:
        instants[-1] = t1
    grid = job.t_eval if job.t_eval is not None else (
        instants if instants[-1] == t1 else np.append(instants, t1))
    p, inputs = job.parameters[0], job.plan.inputs
    atol = np.concatenate([job.atol, np.full(flow.n_states - model.n_states, float(np.max(job.atol)))])  # held: fixed
    z = sampling.start(t0, job.states[0], inputs.evaluate(t0, job.states[0]), p)
    times: list[np.ndarray] = []
    rows: list[np.ndarray] = []
    totals = {"nfev": 0, "steps": 0, "rejected": 0, "njev": 0, "nlu": 0}
    for k in range(count + 1):
        a = float(instants[k])
        if k > 0:
            z = sampling.jump(a, z, inputs.evaluate(a, z[: model.n_states]), p, k)
        b = float(instants[k + 1]) if k < count else t1
        if b <= a:  # t1 is this instant: its row is the state after the jump
            if grid.size and grid[-1] >= a:
                times.append(np.array([t1]))
                rows.append(z[None, :].copy())
            break
        inside = grid[(grid >= a) & (grid < b)] if k < count or b < t1 else grid[grid >= a]
        wanted = inside if inside.size and inside[-1] == b else np.append(inside, b)
        if totals["steps"] > job.max_steps:
            raise InputError(f"simulate: more than max_steps = {job.max_steps} steps by t = {a:g}: raise max_steps")
        stops = plan.breakpoints(a, b)
        run = run_adaptive(setup, job.method.name, (a, b), z, p, stops if stops.size else _NO_STOPS, wanted,
                           job.rtol, atol, job.max_steps)  # (one value: the kernels keep one layout per size)
        for key in totals:
            totals[key] += getattr(run, key)
        keep = run.t <= b if inside.size and inside[-1] == b else run.t < b
        times.append(run.t[keep])
        rows.append(run.x[keep])
        z = np.array(run.x[-1], dtype=float)
    t = np.concatenate(times) if times else np.zeros(0)
    Z = np.concatenate(rows) if rows else np.zeros((0, flow.n_states))
    n = model.n_states
    x = np.ascontiguousarray(Z[:, :n])
    u = inputs.evaluate_many(t, x)
    y = flow.h_many(t, Z, u, p)
    stats = SimulationStats(setup.path, job.method.name, totals["nfev"], totals["steps"], totals["rejected"],
                            seconds, from_cache=setup.cached, njev=totals["njev"], nlu=totals["nlu"])
    return Trajectory._adopt(t, x, u, np.asarray(y, dtype=float), model.states, model.inputs, model.outputs,
                             model.name, stats, (), source=model, params=p)
