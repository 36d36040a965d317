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

from robodyn.control.feedback_block import FeedbackBlock, port_name
from robodyn.control.mpc.solvers import STATUSES
from robodyn.model.roles import PlanActivity, PredictiveRole

__all__ = ["ACTIVE_RTOL", "REPORTS", "mpc_block", "plan_activity"]

Array = NDArray[np.float64]

#: The block's outputs after the plant's inputs.
REPORTS = ("status", "iterations")
_CODES = {status: float(k) for k, status in enumerate(STATUSES)}
#: A planned input or state within this fraction of max(1, |bound|) of a bound has the bound active.
ACTIVE_RTOL = 1e-6


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
    role = PredictiveRole("", controller.states, controller.inputs, tuple(map(port_name, controller.states)),
                          tuple(map(port_name, controller.inputs)), REPORTS[0], tuple(STATUSES),
                          controller.input_bounds, controller.state_bounds,
                          lambda x: plan_activity(controller, x))
    return FeedbackBlock(law, controller.states, controller.inputs, controller.dt, gain=law.gain, reports=REPORTS,
                         signals=signals, name=name, role=role,
                         describe=f"linear MPC ({controller.solver}, horizon {controller.horizon} steps)")


def plan_activity(controller: Any, x: Array) -> PlanActivity:
    """The bounds the plan from the state ``x`` (n,) reaches: an input bound when a planned input u_0 ... u_{N-1}
    is within :data:`ACTIVE_RTOL` of it, a state bound when a predicted state x_1 ... x_N is (x_0 is the measured
    state, not a variable of the QP); none when the plan is not usable."""
    plan = controller.solve(x)

    def reached(values: Array, bounds: Array) -> NDArray[np.bool_]:
        if not plan.solved:
            return np.zeros(bounds.shape, dtype=bool)
        finite = np.isfinite(bounds)  # an absent bound (+-inf) is never active
        limit = np.where(finite, bounds, 0.0)
        near = ACTIVE_RTOL * np.maximum(1.0, np.abs(limit))
        return np.stack([finite[:, k] & np.any(np.abs(values - limit[:, k]) <= near[:, k], axis=0) for k in (0, 1)],
                        axis=1)

    return PlanActivity(reached(plan.inputs, controller.input_bounds), reached(plan.states[1:],
                                                                               controller.state_bounds), plan.status)

