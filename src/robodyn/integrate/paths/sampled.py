"""The ``sampled`` path of ``simulate()``: a model with sampled blocks, integrated between its sample instants.

A diagram with sampled blocks (robodyn.diagrams.sampled) evolves between instants as its flow model — its states,
then the sampled blocks' held outputs and inputs — and jumps at each instant t_k = t0 + k T (T the base period):
pending updates applied, outputs held anew. The flow runs the adaptive (or implicit) kernels on [t_k, t_{k+1}],
which end exactly at t_{k+1} (an interval's end, not an event located by search), with the inputs' breakpoints as
stops inside; the jump is evaluated from the blocks (at most a few microseconds of Python each).

Rows: a time t in [t_k, t_{k+1}) gets the values after the jump at t_k (a discrete state shows x[k], from which
the outputs at t_k are computed; the continuous states are continuous). Without ``t_eval`` the output times are
the base instants (and t1). A batch runs its trajectories one after the other; events are not located in such
models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError
from robodyn.integrate.kernels.run import run_adaptive
from robodyn.integrate.paths.discrete import SAMPLE_RTOL, sample_count
from robodyn.results.trajectory import BatchTrajectory, SimulationStats, Trajectory

if TYPE_CHECKING:
    from robodyn.integrate.job import SimulationJob
    from robodyn.signals import Inputs

__all__ = ["run_sampled"]

_NO_STOPS: Final = np.empty(0)  # one object: the kernels remember the layout of a run by its arrays' identity
CHUNK: Final = 1024  # Sample intervals whose breakpoints one call finds (one call per interval: ~50 us each).


def run_sampled(job: SimulationJob) -> Trajectory | BatchTrajectory:
    """The trajectory of ``job.model`` (whose ``sampling()`` is set) over ``job.t_span``; a batch runs its
    trajectories one after the other on the common grid (``t_eval``, or the base instants)."""
    from robodyn.integrate.events import resolve_events
    from robodyn.integrate.job import SimulationPlan

    model = job.model
    sampling = model.sampling()
    assert sampling is not None  # the structure's path: sampled
    if len(job.plan.events):
        raise InputError(f"simulate: {model.name!r} has sampled blocks: events are not located in such models")
    if job.method.family not in ("adaptive", "implicit"):
        raise InputError(f"simulate: {model.name!r} has sampled blocks: use an adaptive or implicit method (dopri5, "
                         f"dop853, radau, rosenbrock), not {job.method.name!r}")
    flow = sampling.flow()
    plan = SimulationPlan(flow, job.plan.inputs, resolve_events(flow, None))
    setup, seconds = plan.kernels(job.backend, job.method.family == "implicit")
    t0, t1 = job.t_span
    base = sampling.base
    count = sample_count(base, t0, t1)
    instants = t0 + base * np.arange(count + 1)
    if abs(instants[-1] - t1) <= SAMPLE_RTOL * base:
        instants[-1] = t1
    grid: np.ndarray = job.t_eval if job.t_eval is not None else (
        instants if instants[-1] == t1 else np.append(instants, t1))
    totals = {"nfev": 0, "steps": 0, "rejected": 0, "njev": 0, "nlu": 0}
    stops = _Stops(job.plan.inputs, instants, t1)
    runs = [_one(job, sampling, flow, stops, setup, instants, grid, x0, p, totals)
            for x0, p in zip(job.states, job.parameters)]
    stats = SimulationStats(setup.path, job.method.name, totals["nfev"], totals["steps"], totals["rejected"],
                            seconds, from_cache=setup.cached, njev=totals["njev"], nlu=totals["nlu"])
    if job.batch:
        return BatchTrajectory._adopt(grid, np.stack([r[1] for r in runs]), np.stack([r[2] for r in runs]),
                                      np.stack([r[3] for r in runs]), job.states, job.parameters, model.states,
                                      model.inputs, model.outputs, tuple(model.parameters), model.name, stats,
                                      ((),) * len(runs), source=model)
    t, x, u, y = runs[0]
    return Trajectory._adopt(t, x, u, y, model.states, model.inputs, model.outputs, model.name, stats, (),
                             source=model, params=job.parameters[0])


class _Stops:
    """The inputs' breakpoints inside each interval [t_k, t_{k+1}), asked of the inputs once per :data:`CHUNK`
    intervals and cut from there (a breakpoint is a time of its signal, whatever interval it is asked on: the same
    times, exactly, as asking each interval). Where a chunk holds too many (a pulse far faster than the samples), each
    interval is asked alone, as before."""

    def __init__(self, inputs: Inputs, instants: np.ndarray, t1: float) -> None:
        self.inputs, self.instants, self.t1 = inputs, instants, t1
        self.first = self.stop = 0  # the intervals of the chunk held
        self.times: np.ndarray | None = _NO_STOPS

    def inside(self, k: int, a: float, b: float) -> np.ndarray:
        """The breakpoints in (a, b), the interval k (_NO_STOPS for none)."""
        if not self.first <= k < self.stop:
            self._chunk(k)
        if self.times is None:
            found = self.inputs.breakpoints(a, b)
        else:
            found = self.times[self.times.searchsorted(a, "right"):self.times.searchsorted(b, "left")]
        return found if found.size else _NO_STOPS

    def _chunk(self, k: int) -> None:
        count = self.instants.size - 1
        self.first, self.stop = k, min(k + CHUNK, count + 1)
        end = float(self.instants[self.stop]) if self.stop <= count else self.t1
        try:
            self.times = self.inputs.breakpoints(float(self.instants[k]), max(end, float(self.instants[k])))
        except InputError:  # more edges than one call may return: interval by interval
            self.times = None


def _one(job: SimulationJob, sampling: Any, flow: Any, stops: _Stops, setup: Any, instants: np.ndarray,
         grid: np.ndarray, x0: np.ndarray, p: np.ndarray, totals: dict[str, int]) -> tuple[np.ndarray, ...]:
    """One trajectory: t, x, u, y on the rows (``grid``'s points, and t1)."""
    model, inputs = job.model, job.plan.inputs
    t1 = job.t_span[1]
    count = instants.size - 1
    atol = np.concatenate([job.atol, np.full(flow.n_states - model.n_states, float(np.max(job.atol)))])  # held: fixed
    z = sampling.start(job.t_span[0], x0, inputs.evaluate(job.t_span[0], x0), p)
    times: list[np.ndarray] = []
    rows: list[np.ndarray] = []
    used = totals["steps"]
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
        # grid is sorted (t_eval is checked so): its points in [a, b), or [a, t1] on the last interval
        first = int(grid.searchsorted(a, "left"))
        inside = grid[first:int(grid.searchsorted(b, "left"))] if k < count or b < t1 else grid[first:]
        wanted = inside if inside.size and inside[-1] == b else np.concatenate((inside, (b,)))
        if totals["steps"] - used > job.max_steps:
            raise InputError(f"simulate: more than max_steps = {job.max_steps} steps by t = {a:g}: raise max_steps")
        run = run_adaptive(setup, job.method.name, (a, b), z, p, stops.inside(k, a, b), wanted, job.rtol, atol,
                           job.max_steps)  # (_NO_STOPS, one value: the kernels keep one layout per size)
        for key in totals:
            totals[key] += getattr(run, key)
        keep = run.t <= b if inside.size and inside[-1] == b else run.t < b
        times.append(run.t[keep])
        rows.append(run.x[keep])
        z = np.array(run.x[-1], dtype=float)
    t = np.concatenate(times) if times else np.zeros(0)
    Z = np.concatenate(rows) if rows else np.zeros((0, flow.n_states))
    x = np.ascontiguousarray(Z[:, : model.n_states])
    u = inputs.evaluate_many(t, x)
    return t, x, u, np.asarray(flow.h_many(t, Z, u, p), dtype=float)
