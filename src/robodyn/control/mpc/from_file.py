"""``model: mpc`` in a diagram file: :func:`mpc_from_plant`, the block a diagram file's parameters make.

The files layer finds it through :mod:`robodyn.files.provided_blocks` (registered by ``robodyn/__init__.py``); it
calls it with the plant resolved as a block is and the block's ``sample:``.

``method`` chooses the controller:

- ``linear`` (the default): the linear MPC of :func:`~robodyn.control.mpc.controller.mpc` on the plant linearized at
  its operating point and held over the period, a QP at every sample (:func:`~robodyn.control.mpc.block.mpc_block`);
- ``fddp``, ``ddp``, ``collocation``: nonlinear MPC by real-time iterations
  (:class:`~robodyn.control.mpc.receding.RecedingHorizon`) on the optimal control problem the same parameters make
  (:func:`receding_problem`): ``horizon`` knots of the period over horizon * T, the plant's own dynamics between them
  (``integrator``: ``rk4`` by default), the bounds as the problem's, and the costs of the linear MPC about the
  operating point.

The costs are the linear MPC's, so that both plan the same near the operating point. The linear MPC minimizes
sum_{k<N} (dx_k' Q dx_k + du_k' R du_k) + dx_N' Qf dx_N (dx = x - x_op, du = u - u_op); the DDP family sums the running
cost l(x_k, u_k) T over the knots (collocation integrates it by its quadrature) and adds the terminal cost, both with
a factor 1/2 (:mod:`~robodyn.control.optimal.costs`). The problem's weights are therefore 2 Q / T, 2 R / T and 2 Qf:
its cost is the linear MPC's sum. Qf defaults to the linear MPC's: the discrete LQR's Riccati solution of the plant
linearized at the operating point and held over T.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError
from robodyn.base.names import did_you_mean
from robodyn.control.feedback_block import FeedbackBlock
from robodyn.control.mpc.block import mpc_block
from robodyn.control.mpc.controller import MPC, mpc
from robodyn.control.optimal.solvers import SOLVERS

if TYPE_CHECKING:
    from robodyn.control.optimal.problem import OptimalControlProblem
    from robodyn.model.protocol import ModelContract

__all__ = ["METHODS", "mpc_from_plant", "receding_problem"]

Array = NDArray[np.float64]

#: ``method`` of ``model: mpc``: the linear MPC, or an optimal control solver run by real-time iterations.
METHODS: Final = ("linear", *SOLVERS)


def mpc_from_plant(plant: Any, sample: float | None, *, horizon: Any, Q: Any, R: Any, Qf: Any = None,
                   bounds: Any = None, x_op: Any = None, u_op: Any = None, solver: str | None = None,
                   references: bool = False, method: str = "linear", integrator: str | None = None,
                   iterations: Any = None, name: str = "mpc") -> FeedbackBlock:
    """``model: mpc`` of a diagram file (module docstring); ``sample`` (the block's ``sample:``) is required.

    ``method="linear"``: the block of ``robodyn.mpc(plant, horizon, Q, R, Qf, bounds, dt=sample, x_op=, u_op=,
    solver=)`` (:func:`mpc_block`); outputs the plant's inputs, ``status`` and ``iterations``.
    ``method`` ``fddp``, ``ddp`` or ``collocation``: the block of ``RecedingHorizon(receding_problem(...),
    iterations=iterations or 1)``; outputs the plant's inputs, ``cost`` and ``violation`` of each sample's plan.
    """
    if sample is None:
        raise InputError(f"block {name!r} (mpc): give sample: T beside model: mpc, the controller's period in s")
    if not isinstance(method, str) or method not in METHODS:
        raise InputError(f"mpc: unknown method {method!r}: use one of {', '.join(METHODS)}"
                         f"{did_you_mean(str(method), list(METHODS))}")
    horizon, iterations = _whole(horizon), _whole(iterations)
    if method == "linear":
        for label, value in (("integrator", integrator), ("iterations", iterations)):
            if value is not None:
                raise InputError(f"mpc: {label} is for the nonlinear methods "
                                 f"({', '.join(METHODS[1:])}): give method: fddp, or leave {label} out")
        controller = mpc(plant, horizon, Q, R, Qf, bounds, dt=sample, x_op=x_op, u_op=u_op, solver=solver)
        return mpc_block(controller, references=bool(references), name=name)
    for label, value, why in (("solver", solver, "names the linear MPC's QP solver"),
                              ("references", references or None, "are the linear MPC's reference ports")):
        if value is not None:
            raise InputError(f"mpc: {label} {why}; method {method} plans with the plant's own "
                             f"dynamics: leave {label} out (or use method: linear)")
    from robodyn.control.mpc.receding import RecedingHorizon

    problem = receding_problem(plant, sample, horizon, Q, R, Qf, bounds, x_op=x_op, u_op=u_op, method=method,
                               integrator="rk4" if integrator is None else integrator)
    planner = RecedingHorizon(problem, iterations=1 if iterations is None else iterations)
    return planner.block(sample, name=name)


def receding_problem(plant: ModelContract, sample: float, horizon: int, Q: Any, R: Any, Qf: Any = None,
                     bounds: Any = None, *, x_op: Any = None, u_op: Any = None, method: str = "fddp",
                     integrator: str = "rk4") -> OptimalControlProblem:
    """The optimal control problem of ``model: mpc`` with a nonlinear ``method`` (module docstring): ``horizon``
    knots of ``sample`` s, the weights 2 Q / T, 2 R / T, 2 Qf about the operating point (x_op, u_op), the bounds
    and x0 = x_op. Q, R, Qf, the bounds and the operating point are read and checked as the linear MPC reads them
    (:func:`~robodyn.control.mpc.controller.mpc`), and refused alike."""
    from robodyn.control.optimal.problem import OptimalControlProblem

    linear = mpc(plant, horizon, Q, R, Qf, bounds, dt=sample, x_op=x_op, u_op=u_op)
    T = linear.dt
    x0, u0 = np.array(linear.plant.x_op), np.array(linear.plant.u_op)
    states, inputs = linear.states, linear.inputs
    costs = {"state": {"weights": 2.0 * np.asarray(linear.Q) / T, "reference": dict(zip(states, x0.tolist()))},
             "input": {"weights": 2.0 * np.asarray(linear.R) / T, "reference": dict(zip(inputs, u0.tolist()))},
             "terminal": {"weights": 2.0 * np.asarray(linear.Qf), "reference": dict(zip(states, x0.tolist()))}}
    start = np.clip(x0, linear.state_bounds[:, 0], linear.state_bounds[:, 1])  # replaced by each measured state
    return OptimalControlProblem(plant, linear.horizon * T, linear.horizon, start, costs, _bounds(linear),
                                 method=method, integrator=integrator)


def _bounds(linear: MPC) -> dict[str, dict[str, list[float | None]]]:
    """The linear MPC's boxes as a problem's ``bounds`` (None for no bound on a side)."""
    def side(value: float) -> float | None:
        return None if math.isinf(value) else float(value)

    return {kind: {label: [side(lo), side(hi)] for label, (lo, hi) in zip(names, box, strict=True)
                   if not (math.isinf(lo) and math.isinf(hi))}
            for kind, names, box in (("states", linear.states, linear.state_bounds),
                                     ("inputs", linear.inputs, linear.input_bounds))}


def _whole(value: Any) -> Any:
    """A text number read as a float that is whole (``30`` read as 30.0) as an int; anything else as given."""
    return int(value) if isinstance(value, float) and value.is_integer() else value
