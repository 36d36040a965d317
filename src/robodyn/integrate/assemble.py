"""What a simulation returns: the runs of a family's runner as a Trajectory or a BatchTrajectory, with outputs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from robodyn.integrate.guards import check_states
from robodyn.integrate.hint import stiffness_hint
from robodyn.integrate.runs import RunResult
from robodyn.results.trajectory import BatchTrajectory, EventRecord, SimulationStats, Trajectory

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract
    from robodyn.signals import Inputs

__all__ = ["RunResult", "assemble", "batch_events", "batch_result"]


def _outputs(model: ModelContract, t: np.ndarray, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Outputs y (T, p); ``x`` itself when y = x (the Trajectory shares the read-only array)."""
    return model.h_many(t, x, u, p)


def assemble(model: ModelContract, method: str, path: str, runs: list[RunResult], inputs: Inputs,
             parameters: np.ndarray, batch: bool, initial: np.ndarray) -> Trajectory | BatchTrajectory:
    """The result of ``runs`` (one per row of ``parameters``): a Trajectory, or a BatchTrajectory for a batch."""
    for i, run in enumerate(runs):  # the kernels' batches check themselves (rows after a terminal event are NaN)
        check_states(model, method, run.t, run.x, f" (trajectory {i} of the batch)" if batch else "")
    if not batch:
        run = runs[0]
        u = run.u if run.u is not None else inputs.evaluate_many(run.t, run.x)
        stats = SimulationStats(path, method, run.nfev, run.steps, run.rejected, run.compile_seconds,
                                from_cache=run.from_cache, njev=run.njev, nlu=run.nlu,
                                hint=stiffness_hint(model, method, run, parameters[0], inputs))
        return Trajectory._adopt(run.t, run.x, u, _outputs(model, run.t, run.x, u, parameters[0]), model.states,
                                 model.inputs, model.outputs, model.name, stats, tuple(run.events), source=model,
                                 params=parameters[0], left_inputs=inputs.left_limits(run.t, run.x, u))
    stats = SimulationStats(path, method, sum(r.nfev for r in runs), sum(r.steps for r in runs),
                            sum(r.rejected for r in runs), sum(r.compile_seconds for r in runs))
    us = [run.u if run.u is not None else inputs.evaluate_many(run.t, run.x) for run in runs]
    return batch_result(model, stats, runs[0].t, np.stack([run.x for run in runs]), np.stack(us), parameters, initial,
                  tuple(tuple(run.events) for run in runs))


def batch_result(model: ModelContract, stats: SimulationStats, t: np.ndarray, xs: np.ndarray, us: np.ndarray,
           parameters: np.ndarray, initial: np.ndarray, events: tuple[tuple[EventRecord, ...], ...]) -> BatchTrajectory:
    """A BatchTrajectory from runs on the grid ``t`` (T,): xs (N, T, n), us (N, T, m), parameters (N, n_p)."""
    return BatchTrajectory._adopt(t, xs, us, _batch_outputs(model, t, xs, us, parameters), initial, parameters,
                                  model.states, model.inputs, model.outputs, tuple(model.parameters), model.name,
                                  stats, events, source=model)


def batch_events(records: list[list[EventRecord]], n_events: int, N: int) -> tuple[tuple[EventRecord, ...], ...]:
    """Each trajectory's events as tuples; without events to locate, N empty tuples without a loop."""
    return tuple(map(tuple, records)) if n_events else ((),) * N


def _batch_outputs(model: ModelContract, t: np.ndarray, xs: np.ndarray, us: np.ndarray,
                   parameters: np.ndarray) -> np.ndarray:
    """Outputs y (N, T, p) of N runs on the grid ``t`` (T,) (``xs`` itself when y = x)."""
    return model.h_batch(t, xs, us, parameters)
