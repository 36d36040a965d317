"""One ``simulate()`` call as its runners see it: the validated call (:class:`SimulationJob`) and what repeated calls
with the same inputs and events share (:class:`SimulationPlan`). robodyn.integrate.simulate makes them; the paths
(corners, impacts, sampled blocks) read them and make plans of their own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import numpy as np

from robodyn.integrate.assemble import assemble
from robodyn.integrate.events import ResolvedEvents
from robodyn.integrate.kernels.run import KernelSetup, kernel_module
from robodyn.integrate.methods.registry import Method
from robodyn.integrate.runs import RunResult
from robodyn.results.trajectory import BatchTrajectory, Trajectory
from robodyn.signals import Inputs

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["DEFAULT_POINTS", "PLAN_CACHE_SIZE", "Result", "SimulationJob", "SimulationPlan"]

DEFAULT_POINTS: Final = 1001  # Output points of the exact path and of batches when t_eval is not given.

Result = Trajectory | BatchTrajectory


@dataclass(slots=True, eq=False)
class SimulationJob:
    """One validated ``simulate()`` call: what the runner of its method's family needs."""

    model: ModelContract
    method: Method
    t_span: tuple[float, float]
    states: np.ndarray  # (N, n) initial states
    parameters: np.ndarray  # (N, n_p)
    plan: SimulationPlan
    t_eval: np.ndarray | None  # the output times asked for
    rtol: float
    atol: np.ndarray  # (n,)
    dt: float | None
    max_steps: int
    backend: str
    batch: bool

    def output_times(self) -> np.ndarray | None:
        """``t_eval``; for a batch without it :data:`DEFAULT_POINTS` evenly spaced times; else None (the
        method's own steps)."""
        if self.batch and self.t_eval is None:
            return np.linspace(self.t_span[0], self.t_span[1], DEFAULT_POINTS)
        return self.t_eval

    def assemble(self, path: str, runs: list[RunResult]) -> Result:
        """The result of ``runs``, one per trajectory, made by ``path``."""
        return assemble(self.model, self.method.name, path, runs, self.plan.inputs, self.parameters, self.batch,
                         self.states)


PLAN_CACHE_SIZE: Final = 32  # Plans (inputs, events) kept per model; the oldest goes first.


@dataclass(slots=True, eq=False)
class SimulationPlan:
    """A model's resolved inputs and events for one ``u`` and ``events``, with what is derived from them.

    Calls that pass equal immutable ``u`` and ``events`` again reuse it: no new resolution, packing,
    kernel set-up or breakpoint search (tens of microseconds each, against a compiled run of ~50 us).
    """

    model: ModelContract
    inputs: Inputs
    events: ResolvedEvents
    setups: dict[str, KernelSetup] = field(default_factory=dict)
    stops: dict[tuple[float, float], np.ndarray] = field(default_factory=dict)

    def kernels(self, backend: str, jacobian: bool = False) -> tuple[KernelSetup, float]:
        """The kernel set-up for ``backend`` (with the model's Jacobian for the implicit methods) and the seconds
        spent making it now (0 when reused)."""
        key = f"{backend} jacobian" if jacobian else backend
        setup = self.setups.get(key)
        if setup is not None:
            return setup, 0.0
        setup = kernel_module(self.model, self.inputs, self.events, backend, jacobian)
        self.setups[key] = setup
        return setup, setup.compile_seconds

    def breakpoints(self, t0: float, t1: float) -> np.ndarray:
        """The inputs' breakpoints in (t0, t1) (kernels only read them)."""
        stops = self.stops.get((t0, t1))
        if stops is None:
            if len(self.stops) >= PLAN_CACHE_SIZE:
                self.stops.clear()
            stops = self.stops[(t0, t1)] = self.inputs.breakpoints(t0, t1)
        return stops
