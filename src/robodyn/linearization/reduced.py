"""Linearization of a constrained mechanism in its independent coordinates (robodyn.mechanisms.loops.constraints).

A model with closed loops keeps every coordinate of its tree as a state, but moves on the manifold phi(q) = 0,
J q' = c': its linear model lives in the tangent space, with d = n - k independent coordinates. With T ``(2n, 2d)``
the tangent map at the point and P the selection of the independent coordinates and velocities (P T = I),

    A_r = P A T,    B_r = P B,    C_r = C T,    D_r = D,

exact because the flow keeps the manifold (A T = T A_r); A and B are the full model's exact Jacobians, whose
Baumgarte terms vanish along the tangent directions.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from robodyn.base.errors import InputError, NumericalError
from robodyn.model.kinds.linear import LinearSystem
from robodyn.model.protocol import ModelContract
from robodyn.model.system import Values

__all__ = ["reduced_linearization"]


def reduced_linearization(model: ModelContract, t: float, x: Values, u: Values | None, params: Values | None
                          ) -> LinearSystem:
    """The exact linear model of ``model`` (with ``constraints()``) at a consistent state ``x`` (a mapping: the
    states it names held, the others assembled), in the independent coordinates (states ``<q_i>``, then
    ``<q_i>_dot``); its outputs are the model's, constraint forces included. The point is resolved
    (robodyn.linearization.linearize.transform checked the method)."""
    constraints = model.constraints()
    assert constraints is not None  # robodyn.linearization.linearize.transform sends only such models here
    if isinstance(x, Mapping):  # the states named held, the others assembled
        from robodyn.mechanisms.loops.assembly import completed

        x = completed(model, x, params=params, t=t)
    time, xv, uv, p = model.arguments(t, x, u, params)
    constraints.consistent(time, xv, p, what="the operating point")  # refused off the constraints, residual named
    split = constraints.split(time, xv, p)
    A, B = model.jacobians_raw(time, xv, uv, p)
    outputs = model.output_jacobians_raw(time, xv, uv, p)
    if outputs is None:
        raise InputError(f"linearize: model {model.name!r} has constraints but no exact output Jacobian")
    C, D = outputs
    n = constraints.n
    rows = [*split.independent, *(n + i for i in split.independent)]
    T = split.tangent
    A_r, B_r, C_r = A[rows] @ T, B[rows], C @ T
    if not all(np.all(np.isfinite(m)) for m in (A_r, B_r, C_r, D)):
        raise NumericalError(f"linearize: {model.name!r} has non-finite derivatives at this point (a singular "
                             "configuration of the mechanism?)")
    names = tuple(model.states[i] for i in rows)
    A_r, B_r, C_r, D, x_op, u_op = (np.array(m, dtype=float, order="C") for m in (A_r, B_r, C_r, D, xv[rows], uv))
    for array in (A_r, B_r, C_r, D, x_op, u_op):
        array.setflags(write=False)
    named = {*names, *model.inputs, *model.outputs}
    units = MappingProxyType({k: v for k, v in model.units().items() if k in named})
    return LinearSystem.from_fields(A_r, B_r, C_r, D, x_op, u_op, names, model.inputs, model.outputs, model.name,
                                    "manipulator", 0.0, None, units)
