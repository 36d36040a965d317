"""The model ``validity`` samples around an operating point, in the coordinates ``linearize`` used there.

A model on a manifold (a moving base) is sampled in its tangent model at x* (robodyn.mechanisms.floating.chart.
TangentModel), whose point is (0, v*); a model with closed loops in its independent coordinates at x*
(robodyn.mechanisms.loops.constraints.ReducedModel); any other model in its own states. In each, the Jacobian at
the point is ``linearize``'s A. This module sits above robodyn.linearization.linearize (it calls it); the steps of
linearize never import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.linearization.linearize import linearize
from robodyn.model.kinds.linear import LinearSystem
from robodyn.model.system import Values

if TYPE_CHECKING:
    from robodyn.mechanisms.floating.chart import TangentModel
    from robodyn.mechanisms.loops.constraints import ReducedModel
    from robodyn.model.protocol import Chart, ModelContract

__all__ = ["linearized_on_manifold", "linearized_reduced", "sampled_model"]


def linearized_on_manifold(model: ModelContract, chart: Chart, x_op: Any, u_op: Any, params: Any,
                           method: str) -> tuple[TangentModel, Any, Any, Any, LinearSystem]:
    """The tangent model at the stored state ``x_op`` (a mapping: a rotation left out is none), the point (0, v*)
    in it, the inputs, the parameters and ``linearize``'s exact result there (whose A is the tangent model's
    Jacobian at that point): what ``validity`` samples."""
    stored = model.state_vector(chart.neutral(x_op) if isinstance(x_op, Mapping) else x_op, default=0.0)
    _, x, u, p = model.arguments(0.0, stored, u_op, params)
    linear = linearize(model, x, u, params=p, method=method)
    return chart.tangent_model(x), np.array(linear.x_op), u, p, linear


def linearized_reduced(model: ModelContract, x_op: Values, u_op: Values | None, params: Values | None, method: str
                       ) -> tuple[ReducedModel, np.ndarray, np.ndarray, np.ndarray, LinearSystem]:
    """The model in its independent coordinates at x* (a mapping: assembled), the point z* there, the inputs, the
    parameters and ``linearize``'s result (the reduced model's Jacobian at z*): what ``validity`` samples."""
    from robodyn.mechanisms.loops.assembly import completed
    from robodyn.mechanisms.loops.constraints import ReducedModel

    _, _, u, p = model.arguments(0.0, np.zeros(model.n_states), u_op, params)
    x = completed(model, x_op, params=params) if isinstance(x_op, Mapping) else model.state_vector(x_op)
    linear = linearize(model, x, u, params=p, method=method)
    return ReducedModel(model, x, p), np.array(linear.x_op), u, p, linear


def sampled_model(model: ModelContract, x_op: Any, u_op: Any, params: Any, method: str
                  ) -> tuple[ModelContract, Any, Any, Any, LinearSystem, Any]:
    """The model ``validity`` samples, its point (x*, u*), the parameters, the linearization there and the model that
    maps points back to stored states (None: the model itself); see the module docstring."""
    chart = model.chart()
    if chart is not None:
        tangent, z, u, p, linear = linearized_on_manifold(model, chart, x_op, u_op, params, method)
        return tangent, z, u, p, linear, tangent
    if model.constraints() is not None:
        reduced, z, u, p, linear = linearized_reduced(model, x_op, u_op, params, method)
        return reduced, z, u, p, linear, reduced
    _, x, u, p = model.arguments(0.0, x_op, u_op, params)
    return model, x, u, p, linearize(model, x, u, params=p, method=method), None
