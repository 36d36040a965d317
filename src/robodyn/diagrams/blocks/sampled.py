"""The exact discrete forms of the library blocks, for blocks made with ``sample=T`` (robodyn.diagrams.blocks.library).

A sampled block reads its inputs at t_k = k T, updates its state there and holds its outputs until t_{k+1}
(zero-order hold). Its discrete form is exact for held inputs where the block is linear: the matrix exponential
of the continuous block (``first_order``, ``dc_motor``, ``integrator``, ``lti`` by ZOH: scipy.signal.cont2discrete),
and the classical difference equations of the PID (K. J. Åström, T. Hägglund, *Advanced PID Control*, ISA 2006,
§13.3), with e = r − y:

- ``backward_euler`` (the default): I_k = ki (xi + T e), xi ← xi + T e; the derivative filter
  f_k = (tf xf + T e)/(tf + T), D_k = kd (e − f_k)/tf, xf ← f_k;
- ``tustin``: I_k = ki (xi + T e/2), xi ← xi + T e; f_k = w + b e, D_k = kd (e − f_k)/tf, w ← a f_k + b e with
  a = (2 tf − T)/(2 tf + T), b = T/(2 tf + T).

u_k = kp e + I_k + D_k (limited to [umin, umax] with back-calculation xi ← xi + T (e + (u − v)/(ki tt))). Static
blocks (gain, sum, saturation, quantizer) keep their equation, sampled and held. The period is part of the
discrete form: a sampled library block is made again for another period.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np

from robodyn.base.errors import InputError
from robodyn.model.kinds.discrete import DiscreteSystem
from robodyn.model.kinds.symbolic import SymbolicSystem

__all__ = ["DISCRETIZATIONS", "discrete_form", "discrete_pid"]

DISCRETIZATIONS: Final = ("backward_euler", "tustin")


def discrete_form(continuous: SymbolicSystem, kind: str, period: float) -> DiscreteSystem:
    """The discrete form at ``period`` of the library block ``continuous`` (of block kind ``kind``; not pid)."""
    import sympy

    from robodyn.model.expr import symbol

    T = sympy.Float(period)
    x = [symbol(s) for s in continuous.states]
    if kind == "integrator":  # x' = u: exact for a held u
        update: Sequence[Any] = [x[0] + T * symbol("u")]
    elif kind == "first_order":  # tau y' = K u - y
        a = sympy.exp(-T / symbol("tau"))
        update = [a * x[0] + symbol("K") * (1 - a) * symbol("u")]
    elif kind == "dc_motor" and x:  # L i' = v - R i - ke N omega
        a = sympy.exp(-T * symbol("R") / symbol("L"))
        update = [a * x[0] + (1 - a) / symbol("R") * (symbol("v") - symbol("ke") * symbol("N") * symbol("omega"))]
    elif kind == "lti" and x:
        update = _zoh(continuous, period)
    elif not x:
        update = []
    else:
        raise InputError(f"block {continuous.name!r}: no discrete form of {kind!r}")
    outputs = None if continuous.outputs_are_states else dict(zip(continuous.outputs, continuous.h_expr))
    form = DiscreteSystem(continuous.states, continuous.inputs, list(update), sample=period,
                          parameters=dict(continuous.parameters), outputs=outputs, name=continuous.name)
    object.__setattr__(form, "declared_units", continuous.declared_units)
    return _fixed(form)


def _zoh(continuous: SymbolicSystem, period: float) -> list[Any]:
    import scipy.signal
    import sympy

    zero_x, zero_u = np.zeros(continuous.n_states), np.zeros(continuous.n_inputs)
    A, B = continuous.jacobians_raw(0.0, zero_x, zero_u, continuous.parameter_vector())
    C = np.zeros((1, continuous.n_states))
    Ad, Bd, *_ = scipy.signal.cont2discrete((A, B, C, np.zeros((1, continuous.n_inputs))), period, method="zoh")
    x = sympy.Matrix(continuous.x_symbols)
    u = sympy.Matrix(continuous.u_symbols)
    return list(sympy.Matrix(Ad.tolist()) * x + sympy.Matrix(Bd.tolist()) * u)


def discrete_pid(values: Mapping[str, float], period: float, discretization: str, limits: tuple[bool, bool],
                 name: str) -> DiscreteSystem:
    """The sampled PID of the gains ``values`` (kp; ki, kd, tf when present; umin, umax, tt) at ``period``."""
    if discretization not in DISCRETIZATIONS:
        raise InputError(f"block {name!r}: discretization must be one of {', '.join(DISCRETIZATIONS)}, got "
                         f"{discretization!r}")
    T = repr(float(period))
    e = "(r - y)"
    v = f"kp*{e}"
    states: list[str] = []
    update: dict[str, str] = {}
    if "ki" in values:
        states.append("xi")
        v += f" + ki*(xi + {T}*{e})" if discretization == "backward_euler" else f" + ki*(xi + {T}/2*{e})"
    if "kd" in values:
        states.append("xd")
        if discretization == "backward_euler":
            filtered = f"((tf*xd + {T}*{e})/(tf + {T}))"
            update["xd"] = filtered
        else:
            b = f"({T}/(2*tf + {T}))"
            filtered = f"(xd + {b}*{e})"
            update["xd"] = f"((2*tf - {T})/(2*tf + {T}))*{filtered} + {b}*{e}"
        v += f" + kd*({e} - {filtered})/tf"
    u = v
    if limits[0]:
        u = f"max(umin, {u})"
    if limits[1]:
        u = f"min(umax, {u})"
    if "xi" in states:
        update["xi"] = f"xi + {T}*({e} + (({u}) - ({v}))/(ki*tt))" if any(limits) else f"xi + {T}*{e}"
    return _fixed(DiscreteSystem(states, ["r", "y"], {s: update[s] for s in states}, sample=period,
                                 parameters=dict(values), outputs={"u": u}, name=name))


def _fixed(form: DiscreteSystem) -> DiscreteSystem:
    """Marks a discrete form made for its period (``with_sample_period`` refuses it)."""
    object.__setattr__(form, "_period_fixed", True)
    return form
