"""The ``impacts`` path of ``simulate()``: a model with rigid contacts, integrated from impact to impact.

A model whose ``impacts()`` is set (robodyn.mechanisms.contact.impacts.ImpactSet) is integrated in its current mode
(which
contacts rest, held on their planes) with that mode's terminal events — each free contact's touchdown, each held
one's lift-off — and the user's events. At a touchdown the velocities jump by the impact map (a bounce shorter than
the contact's ``rest_time`` is made plastic and the contact rests from then on); at a lift-off the contact is free
again; the run then goes on from the event in the new mode. Contacts on their plane and not leaving it at t0 rest
from the start.

The events are recorded in the trajectory: ``<name>_impact`` at each touchdown (with the state just after the
jump), ``<name>_rest`` where a contact comes to rest, ``<name>_liftoff`` where it leaves; the row at an impact time
shows the state after the jump. Adaptive and implicit methods only; a batch runs its trajectories one after the
other.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError
from robodyn.integrate.assemble import RunResult
from robodyn.integrate.events import resolve_events
from robodyn.integrate.guards import check_states
from robodyn.integrate.kernels.run import run_adaptive
from robodyn.model.events import Event
from robodyn.results.trajectory import BatchTrajectory, EventRecord, SimulationStats, Trajectory

if TYPE_CHECKING:
    from robodyn.integrate.job import SimulationJob
    from robodyn.model.protocol import Impacts

__all__ = ["MAX_IMPACTS", "run_with_impacts"]

MAX_IMPACTS: Final = 100_000  # mode changes a run may take (a contact chattering without coming to rest)


def run_with_impacts(job: SimulationJob) -> Trajectory | BatchTrajectory:
    """The trajectory (or batch) of ``job.model`` (whose ``impacts()`` is set) over ``job.t_span``."""
    from robodyn.integrate.assemble import assemble, batch_result
    from robodyn.integrate.job import DEFAULT_POINTS

    if job.method.family not in ("adaptive", "implicit"):
        raise InputError(f"simulate: {job.model.name!r} has impact contacts: use an adaptive or implicit method "
                         f"(dopri5, dop853, radau, rosenbrock), not {job.method.name!r}", key="method")
    impacts = _impacts(job)
    taken = [name for name in job.plan.events.names if impacts.event_contact(name) is not None]
    if taken:
        raise InputError(f"simulate: event {taken[0]!r} is named like a contact's own (<contact>_touchdown, "
                         "<contact>_liftoff): rename it")
    for p in job.parameters:  # an override may make a law unphysical (a restitution above 1 gains energy)
        impacts.check(p, "" if len(job.parameters) == 1 else " (a parameter set of the batch)")
    plans: dict[frozenset[int], Any] = {}
    grid = job.t_eval
    if job.batch and grid is None:  # a batch shares its output times
        grid = np.linspace(job.t_span[0], job.t_span[1], DEFAULT_POINTS)
    runs = [_one(job, x0, p, plans, grid) for x0, p in zip(job.states, job.parameters)]
    path = next(iter(plans.values())).kernels(job.backend, job.method.family == "implicit")[0].path
    if not job.batch:
        return assemble(job.model, job.method.name, path, runs, job.plan.inputs, job.parameters, False, job.states)
    assert grid is not None
    for i, run in enumerate(runs):
        check_states(job.model, job.method.name, run.t, run.x, f" (trajectory {i} of the batch)")
    runs = [_padded(run, grid) for run in runs]  # a run stopped by a terminal event of the user's: NaN after it
    stats = SimulationStats(path, job.method.name, sum(r.nfev for r in runs), sum(r.steps for r in runs),
                            sum(r.rejected for r in runs), sum(r.compile_seconds for r in runs))
    return batch_result(job.model, stats, grid, np.stack([r.x for r in runs]), np.stack([_inputs(r) for r in runs]),
                        job.parameters, job.states, tuple(tuple(r.events) for r in runs))


def _inputs(run: RunResult) -> np.ndarray:
    """The inputs of a run of :func:`_one` (which always records them)."""
    assert run.u is not None
    return run.u


def _padded(run: RunResult, grid: np.ndarray) -> RunResult:
    """``run`` on all of ``grid``: its rows, then NaN."""
    if run.t.size == grid.size:
        return run
    x = np.full((grid.size, run.x.shape[1]), np.nan)
    x[: run.t.size] = run.x
    u = None if run.u is None else np.full((grid.size, run.u.shape[1]), np.nan)
    if u is not None and run.u is not None:
        u[: run.t.size] = run.u
    return dataclasses.replace(run, t=grid, x=x, u=u)


def _one(job: SimulationJob, x0: np.ndarray, p: np.ndarray, plans: dict[frozenset[int], Any], grid: np.ndarray | None
         ) -> RunResult:
    """One trajectory, mode by mode (``plans``: each mode's resolved events and kernels, shared by a batch), at the
    output times ``grid`` (None: the steps)."""
    from robodyn.integrate.job import SimulationPlan

    model, impacts = job.model, _impacts(job)
    t, t1 = job.t_span
    x = np.array(x0, dtype=float)
    held = impacts.pushing(t, x, job.plan.inputs.evaluate(t, x), p, impacts.resting(t, x, p))
    last = np.full(len(impacts), -np.inf)  # each contact's last impact time
    times, states, inputs, found = [], [], [], []
    totals = {"nfev": 0, "steps": 0, "rejected": 0, "njev": 0, "nlu": 0, "compile_seconds": 0.0}
    cached = True
    first = 0.0  # the first step of a piece: the kernel's choice, after a mode change an eighth of a rest time
    for change in range(MAX_IMPACTS + 1):
        if change == MAX_IMPACTS:
            raise InputError(f"simulate: {model.name!r} changed contact modes {MAX_IMPACTS} times by t = {t:g} s "
                             "(a contact chattering): raise the contacts' rest_time")
        plan = plans.get(held)
        if plan is None:
            mode = impacts.mode(held)
            events = resolve_events(mode, [*_user_events(job), *impacts.events(held)])
            plan = plans[held] = SimulationPlan(mode, job.plan.inputs, events)
        setup, _ = plan.kernels(job.backend, job.method.family == "implicit")
        wanted = np.empty(0) if grid is None else grid[grid >= t]
        run = run_adaptive(setup, job.method.name, (t, t1), x, p, plan.breakpoints(t, t1), wanted, job.rtol,
                           job.atol, job.max_steps, first)
        for key in totals:
            totals[key] += getattr(run, key)
        cached = cached and run.from_cache
        record = run.events[-1] if run.events and run.events[-1].terminal else None
        switch = None if record is None else impacts.event_contact(record.name)
        keep = np.ones(run.t.size, dtype=bool) if switch is None else run.t < record.t  # type: ignore[union-attr]
        times.append(run.t[keep])
        states.append(run.x[keep])
        inputs.append(job.plan.inputs.evaluate_many(run.t[keep], run.x[keep]) if run.u is None else run.u[keep])
        found += [e for e in run.events if impacts.event_contact(e.name) is None]
        if switch is None:  # reached t1, or stopped by a terminal event of the user's
            break
        assert record is not None
        k, what = switch
        t, x = record.t, np.array(record.x, dtype=float)
        name = impacts.names[k]
        u = job.plan.inputs.evaluate(t, x)
        if what == "touchdown":
            after = impacts.jump(t, x, p, k, held, plastic=False)
            if t - last[k] < impacts.rest_times[k] or impacts.flight(t, after, u, p, k, held) < impacts.rest_times[k]:
                after = impacts.jump(t, x, p, k, held, plastic=True)  # a bounce shorter than rest_time: it rests
                if k in impacts.pushing(t, after, u, p, held | {k}):
                    held = held | {k}
            last[k] = t
            x = after
            found.append(EventRecord(f"{name}_impact", t, x.copy()))
            if k in held:
                found.append(EventRecord(f"{name}_rest", t, x.copy()))
        else:
            held = held - {k}
            last[k] = -np.inf
            found.append(EventRecord(f"{name}_liftoff", t, x.copy()))
        # the first step must end before the point can come back to its plane (a bounce of at least rest_time),
        # or the touchdown would fall inside it unseen: the gap starts at 0, and only a sign change is located
        first = float(np.min(impacts.rest_times)) / 8.0
        if t >= t1:
            break
    tt, xx, uu = np.concatenate(times), np.concatenate(states), np.concatenate(inputs)
    return RunResult(tt, xx, nfev=int(totals["nfev"]), steps=int(totals["steps"]), rejected=int(totals["rejected"]),
                     events=found, u=uu, compile_seconds=float(totals["compile_seconds"]), from_cache=cached,
                     njev=int(totals["njev"]), nlu=int(totals["nlu"]))


def _user_events(job: SimulationJob) -> list[Event]:
    """The simulation's own events (the plan holds them resolved for the free model) for another mode's table."""
    events = job.plan.events
    items = events.expressions if events.expressions is not None else events.functions
    return [Event(e, int(d), bool(term), name)
            for e, d, term, name in zip(items, events.direction, events.terminal, events.names)]


def _impacts(job: SimulationJob) -> Impacts:
    """The impacts of the job's model (simulate's dispatch sends only models that have them here)."""
    impacts = job.model.impacts()
    assert impacts is not None  # the structure's path: impacts
    return impacts
