"""One ``simulate()`` call as a value: the model, the span, the initial state, the inputs and the options.

The paths that run another model in place of the one given — a floating base's chart
(robodyn.integrate.paths.chart), the sensitivity system (robodyn.integrate.paths.sensitivities) — take a
:class:`SimulationCall` and give back the call to run instead and a :data:`Finish` that turns that run's result
into the caller's (projecting the chart's states back, splitting off the sensitivities). ``simulate()`` runs the
transformed call by its own dispatch (docs/dev/simulation.md "Dispatch"): no path calls ``simulate`` back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from numpy.typing import ArrayLike

from robodyn.results.trajectory import BatchTrajectory, Trajectory

if TYPE_CHECKING:
    from robodyn.integrate.events import Event
    from robodyn.model.protocol import ModelContract

__all__ = ["Finish", "SimulationCall"]

#: Turns the result of a transformed call into the result of the call it was made from.
Finish = Callable[[Trajectory | BatchTrajectory], Trajectory | BatchTrajectory]


@dataclass(frozen=True, slots=True, eq=False)
class SimulationCall:
    """The arguments of one ``simulate()`` call, unvalidated (robodyn.integrate.simulate.simulate documents
    each); ``replace`` gives a copy with some changed."""

    model: ModelContract
    t_span: float | tuple[float, float]
    x0: ArrayLike | Mapping[str, ArrayLike] | None
    u: Any
    method: str | None
    rtol: float
    atol: float | ArrayLike
    dt: float | None
    t_eval: ArrayLike | None
    events: Sequence[Event | str] | Event | str | None
    params: Mapping[str, ArrayLike] | ArrayLike | None
    max_steps: int
    backend: str
    limits: str
    assemble: bool

    def replace(self, **changes: Any) -> SimulationCall:
        """This call with the arguments ``changes`` given instead."""
        return dataclasses.replace(self, **changes)
