"""What a block does in a closed loop that reports show (``roles()`` of the model contract): a state estimator
(:class:`EstimatorRole`: its estimates, their variances and the states they estimate) or a predictive controller
(:class:`PredictiveRole`: its bounds, its status output and the plan it makes from a state).

A block answers with its own ports' names; a diagram answers for its blocks, every name qualified (``ekf.x_hat``)
and each estimate paired with the diagram state it estimates (the truth), when one block of the diagram is a model
of the estimated plant's name and states.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

__all__ = ["EstimatorRole", "PlanActivity", "PredictiveRole", "Role", "qualified"]

Array = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class EstimatorRole:
    """A state estimator: ``estimates[i]`` and ``variances[i]`` (its outputs) are the estimate of the plant's state
    ``states[i]`` and its variance; ``truth[i]`` the diagram state it estimates (None when not in a diagram or no
    block is the plant)."""

    block: str
    plant: str
    states: tuple[str, ...]
    estimates: tuple[str, ...]
    variances: tuple[str, ...]
    truth: tuple[str | None, ...] = ()

    def __post_init__(self) -> None:
        if not len(self.states) == len(self.estimates) == len(self.variances):
            raise ValueError("EstimatorRole: one estimate and one variance per state")


@dataclass(frozen=True, slots=True)
class PlanActivity:
    """One plan's bounds at their limits: ``inputs`` (m, 2) and ``states`` (n, 2) booleans, column 0 the lower
    bound, 1 the upper; ``status`` the solve's status text."""

    inputs: NDArray[np.bool_]
    states: NDArray[np.bool_]
    status: str


@dataclass(frozen=True, slots=True)
class PredictiveRole:
    """A predictive controller: it reads the signals ``reads`` (the controlled model's states ``states``), applies
    its outputs ``applies`` (the model's inputs ``inputs``) and reports its solver's ``status`` (an output, the index
    into ``statuses``). ``input_bounds`` (m, 2) and ``state_bounds`` (n, 2) are its limits (+-inf: none);
    ``plan(x)`` re-plans from the state x (n,) and says which bounds the plan reaches."""

    block: str
    states: tuple[str, ...]
    inputs: tuple[str, ...]
    reads: tuple[str, ...]
    applies: tuple[str, ...]
    status: str
    statuses: tuple[str, ...]
    input_bounds: Array
    state_bounds: Array
    plan: Callable[[Array], PlanActivity]


Role = EstimatorRole | PredictiveRole


def qualified(role: Role, block: str) -> Role:
    """``role`` with its port names prefixed by the diagram's block name ``block`` (``x_hat`` -> ``ekf.x_hat``)."""
    def names(ports: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(f"{block}.{port}" for port in ports)

    if isinstance(role, EstimatorRole):
        truth = tuple(None if state is None else f"{block}.{state}" for state in role.truth)
        return replace(role, block=block, estimates=names(role.estimates), variances=names(role.variances),
                       truth=truth)
    return replace(role, block=block, reads=names(role.reads), applies=names(role.applies),
                   status=f"{block}.{role.status}")
