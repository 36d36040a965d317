"""Linear MPC as a sampled block of a diagram: :func:`mpc_block`.

At each instant t_k (every ``dt`` of the controller) the block solves the MPC's QP from the signals it reads — the
plant's states (measured or estimated), and, with ``references=True``, a state reference held over the horizon —
and holds the plan's first input until the next instant. It also outputs ``status``, the solve's status as its
index in :data:`~robodyn.control.mpc.solvers.STATUSES` (0 solved, 1 inaccurate, 2 infeasible, 3 iteration limit,
4 failed), and ``iterations``, so that a run records the solver's state at every step.

When a solve gives no usable plan the block applies the last usable plan's input for this instant (that plan
shifted by the samples elapsed, its last input held past its end), or the operating point's input when there was
none: what a real controller falls back on, recorded by ``status``. An instant no later than the last solve's (a new
run, or a diagram probing its blocks) starts the controller afresh (its warm start and fallback forgotten), so that a
run's numbers do not depend on what was solved before it.

Its derivative for ``linearize`` is exact: the first input's sensitivity at the plan's active set
(:mod:`~robodyn.control.mpc.sensitivity`); the reports' rows are zero.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robodyn.control.feedback_block import FeedbackBlock
from robodyn.control.mpc.solvers import STATUSES

__all__ = ["REPORTS", "mpc_block"]

Array = NDArray[np.float64]

#: The block's outputs after the plant's inputs.
REPORTS = ("status", "iterations")
_CODES = {status: float(k) for k, status in enumerate(STATUSES)}


class _Law:
    """The block's law: solve, apply the first input, fall back on the last usable plan."""

    def __init__(self, controller: Any, references: bool) -> None:
        self.controller, self.references = controller, references
        self.n = len(controller.states)
        self.good: tuple[float, Array] | None = None  # (time, inputs) of the last usable plan
        self.time = -math.inf

    def __call__(self, t: float, signals: Array) -> Array:
        controller = self.controller
        if t <= self.time:  # a new run (or the diagram probing the block before one): start afresh
            controller.reset()
            self.good = None
        self.time = t
        x, x_ref = signals[:self.n], (signals[self.n:] if self.references else None)
        plan = controller.solve(x, x_ref)
        if plan.status in ("solved", "inaccurate") and np.all(np.isfinite(plan.inputs)):
            self.good = (t, plan.inputs.copy())
            u = plan.inputs[0]
        elif self.good is not None:
            since, inputs = self.good
            u = inputs[min(round((t - since) / controller.dt), inputs.shape[0] - 1)]
        else:
            u = np.asarray(controller.plant.u_op, dtype=float)
        return np.concatenate([u, [_CODES.get(plan.status, float(len(STATUSES))), float(plan.iterations)]])

    def gain(self, t: float, signals: Array) -> Array:
        controller = self.controller
        x, x_ref = signals[:self.n], (signals[self.n:] if self.references else None)
        K = controller.gain(x, x_ref, references=self.references)
        return np.vstack([K, np.zeros((len(REPORTS), K.shape[1]))])


def mpc_block(controller: Any, *, references: bool = False, name: str = "mpc") -> FeedbackBlock:
    """The linear MPC ``controller`` (:class:`~robodyn.control.mpc.controller.MPC`) as a sampled diagram block at its
    period (module docstring). Inputs: the states (dots as ``__``), then with ``references`` one port
    ``<state>_ref`` per state; outputs: the inputs, then ``status`` and ``iterations``."""
    law = _Law(controller, references)
    signals = tuple(f"{name_}_ref".replace(".", "__") for name_ in controller.states) if references else ()
    return FeedbackBlock(law, controller.states, controller.inputs, controller.dt, gain=law.gain, reports=REPORTS,
                         signals=signals, name=name,
                         describe=f"linear MPC ({controller.solver}, horizon {controller.horizon} steps)")

