"""The result of an optimal control problem: :class:`OptimalTrajectory`.

An OptimalTrajectory *is* a :class:`robodyn.Trajectory` (a subclass: the knots' times, states, inputs and the
model's outputs, with the solver's facts added), so it goes wherever a Trajectory is accepted — ``simulate``'s
input as a table, ``linearize_trajectory``, plots — with no conversion and no consumer taught a new type. Its
:meth:`to_csv` writes the columns ``robodyn optimize`` promises: ``t``, the states, then the inputs (the DDP family:
the input held from a knot to the next, the last row repeating the one before; collocation: the values at the
knots). :attr:`trajectory` gives the plain Trajectory, whose ``to_csv`` writes t, states and outputs as
``robodyn simulate`` does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robodyn.base.atomic import write_text_atomic
from robodyn.base.errors import InputError
from robodyn.base.numbers import frozen
from robodyn.results.csv_text import csv_text
from robodyn.results.trajectory import SimulationStats, Trajectory

__all__ = ["OptimalTrajectory", "optimization_stats"]

Array = NDArray[np.float64]


@dataclass(frozen=True, slots=True, eq=False)
class OptimalTrajectory(Trajectory):
    """An optimal trajectory: the :class:`~robodyn.results.trajectory.Trajectory` on the knots (t (N + 1,),
    x (N + 1, n), u (N + 1, m), y (N + 1, p) the outputs h(t, x, u)) and the solve.

    Attributes
    ----------
    cost : the objective at the solution
    violation : the largest violation of dynamics, bounds and constraints
    iterations : the solver's iterations
    status : the solver's status in words
    converged : whether the solver converged
    seconds : the solve's time (not loading or compiling)
    method : ``"fddp"``, ``"ddp"``, ``"collocation"``, ...
    gains : (N, m, n) the DDP family's feedback gains, or None
    input_interpolation : how the inputs go between knots: ``"hold"`` (the DDP family: u_k held over
        [t_k, t_{k+1})) or ``"linear"`` (collocation: the knot values, linear between them); what
        :func:`robodyn.tvlqr` takes for u*(t) by default
    """

    cost: float = float("nan")
    violation: float = float("nan")
    iterations: int = 0
    status: str = ""
    converged: bool = False
    seconds: float = 0.0
    method: str = ""
    gains: Array | None = None
    input_interpolation: str = "hold"

    def __post_init__(self) -> None:
        Trajectory.__post_init__(self)
        if self.input_interpolation not in ("hold", "linear"):
            raise InputError(f"OptimalTrajectory input_interpolation must be 'hold' or 'linear', got "
                             f"{self.input_interpolation!r}")
        if self.gains is not None:
            object.__setattr__(self, "gains", frozen(self.gains))

    @property
    def trajectory(self) -> Trajectory:
        """The plain :class:`Trajectory` (same arrays, shared read-only)."""
        return Trajectory(self.t, self.x, self.u, self.y, self.states, self.inputs, self.outputs, self.model,
                          self.stats, source=self.source, params=self.params)

    def summary(self) -> dict[str, Any]:
        """The solve's facts with the stable keys of ``robodyn optimize --json``."""
        return {"cost": float(self.cost), "violation": float(self.violation), "iterations": int(self.iterations),
                "status": self.status, "converged": bool(self.converged), "seconds": float(self.seconds),
                "method": self.method}

    def to_csv_text(self) -> str:
        """The CSV ``robodyn optimize`` writes: ``t``, the states, then the inputs, exact shortest floats."""
        table = np.hstack([self.t[:, None], self.x, self.u])
        return csv_text(["t", *self.states, *self.inputs], table.tolist())

    def to_csv(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_csv_text` atomically."""
        write_text_atomic(path, self.to_csv_text())


def optimization_stats(method: str) -> SimulationStats:
    """The ``stats`` of an optimal trajectory: path ``"optimal control"``, the method's name."""
    return SimulationStats("optimal control", method)
