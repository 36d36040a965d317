"""``model: mpc`` in a diagram file: :func:`mpc_from_plant`, the block a diagram file's parameters make.

The files layer finds it through :mod:`robodyn.files.provided_blocks` (registered by ``robodyn/__init__.py``); it
calls it with the plant resolved as a block is and the block's ``sample:``.
"""

from __future__ import annotations

from typing import Any

from robodyn.base.errors import InputError
from robodyn.control.feedback_block import FeedbackBlock
from robodyn.control.mpc.block import mpc_block
from robodyn.control.mpc.controller import mpc

__all__ = ["mpc_from_plant"]


def mpc_from_plant(plant: Any, sample: float | None, *, horizon: Any, Q: Any, R: Any, Qf: Any = None,
                   bounds: Any = None, x_op: Any = None, u_op: Any = None, solver: str | None = None,
                   references: bool = False, name: str = "mpc") -> FeedbackBlock:
    """``model: mpc`` of a diagram file: the block of ``robodyn.mpc(plant, horizon, Q, R, Qf, bounds, dt=sample,
    x_op=, u_op=, solver=)`` (:func:`mpc_block`); ``sample`` (the block's ``sample:``) is required."""
    if sample is None:
        raise InputError(f"block {name!r} (mpc): give sample: T beside model: mpc, the controller's period in s")
    if isinstance(horizon, float) and horizon.is_integer():
        horizon = int(horizon)  # a text number read as a float
    controller = mpc(plant, horizon, Q, R, Qf, bounds, dt=sample, x_op=x_op, u_op=u_op, solver=solver)
    return mpc_block(controller, references=bool(references), name=name)
