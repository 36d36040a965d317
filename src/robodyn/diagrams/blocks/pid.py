"""The ``pid`` block: a PID controller with a filtered derivative and optional limits (anti-windup), and its exact
sampled forms.

Continuous: e = r − y, v = kp e + ki xi + kd (e − xd)/tf, xi' = e, xd' = (e − xd)/tf; with ``umin``/``umax``,
u = min(umax, max(umin, v)) and xi' = e + (u − v)/(ki tt) (back-calculation anti-windup, Åström & Hägglund,
*Advanced PID Control*, 2006, §3.5).

Sampled (``sample=T``), the classical difference equations (K. J. Åström, T. Hägglund, *Advanced PID Control*,
ISA 2006, §13.3), with e = r − y:

- ``backward_euler`` (the default): I_k = ki (xi + T e), xi ← xi + T e; the derivative filter
  f_k = (tf xf + T e)/(tf + T), D_k = kd (e − f_k)/tf, xf ← f_k;
- ``tustin``: I_k = ki (xi + T e/2), xi ← xi + T e; f_k = w + b e, D_k = kd (e − f_k)/tf, w ← a f_k + b e with
  a = (2 tf − T)/(2 tf + T), b = T/(2 tf + T).

u_k = kp e + I_k + D_k (limited to [umin, umax] with back-calculation xi ← xi + T (e + (u − v)/(ki tt))).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from robodyn.base.errors import InputError
from robodyn.diagrams.blocks.common import fixed, number, with_corners
from robodyn.diagrams.blocks.registry import BlockKind
from robodyn.model.expr import symbol
from robodyn.model.kinds.discrete import DiscreteSystem
from robodyn.model.kinds.symbolic import SymbolicSystem

__all__ = ["BLOCK", "DISCRETIZATIONS", "discrete", "discrete_pid", "pid"]

DISCRETIZATIONS: Final = ("backward_euler", "tustin")


def pid(kp: float = 1.0, ki: float = 0.0, kd: float = 0.0, tf: float = 0.01, umin: float | None = None,
        umax: float | None = None, tt: float | None = None, *, sample: float | None = None,
        discretization: str = "backward_euler", name: str = "pid") -> SymbolicSystem:
    """A PID controller with a filtered derivative, u = kp e + ki ∫e + kd s/(tf s + 1) e with e = r − y.

    States: ``xi`` (∫e, when ki ≠ 0) and ``xd`` (the derivative filter's, when kd ≠ 0): v = kp e + ki xi +
    kd (e − xd)/tf. With ``umin``/``umax``, u = min(umax, max(umin, v)) and xi' = e + (u − v)/(ki tt)
    (back-calculation anti-windup, tracking time ``tt``, default kp/ki).
    """
    values = {"kp": number(kp, "kp", name)}
    ki_value, kd_value = number(ki, "ki", name), number(kd, "kd", name)
    e = "(r - y)"
    v = f"kp*{e}"
    states: list[str] = []
    dynamics: dict[str, str] = {}
    if ki_value != 0:
        values["ki"] = ki_value
        states.append("xi")
        v += " + ki*xi"
    if kd_value != 0:
        values["kd"], values["tf"] = kd_value, number(tf, "tf", name, positive=True)
        states.append("xd")
        dynamics["xd"] = f"({e} - xd)/tf"
        v += f" + kd*({e} - xd)/tf"
    limited = umin is not None or umax is not None
    u = v
    if umin is not None:
        values["umin"] = number(umin, "umin", name)
        u = f"max(umin, {u})"
    if umax is not None:
        values["umax"] = number(umax, "umax", name)
        u = f"min(umax, {u})"
    if umin is not None and umax is not None and values["umin"] >= values["umax"]:
        raise InputError(f"block {name!r}: umin = {values['umin']} must be below umax = {values['umax']}")
    if "xi" in states:
        if limited:
            values["tt"] = number(values["kp"] / ki_value if tt is None else tt, "tt", name, positive=True)
            dynamics["xi"] = f"{e} + (({u}) - ({v}))/(ki*tt)"
        else:
            dynamics["xi"] = e
    elif tt is not None:
        raise InputError(f"block {name!r}: tt (the anti-windup tracking time) needs an integral: give ki")
    if sample is not None:
        from robodyn.model.kinds.discrete import check_period

        return discrete_pid(values, check_period(sample, f"block {name!r}"), discretization,
                            (umin is not None, umax is not None), name)
    made = SymbolicSystem(states, ["r", "y"], {s: dynamics[s] for s in states}, parameters=values,
                          outputs={"u": u}, name=name)
    unlimited = made.expression(v, "the unlimited output")
    return with_corners(made, [unlimited - symbol(k) for k in ("umin", "umax") if k in values])


def discrete_pid(values: Mapping[str, float], period: float, discretization: str, limits: tuple[bool, bool],
                 name: str) -> DiscreteSystem:
    """The sampled PID of the gains ``values`` (kp; ki, kd, tf when present; umin, umax, tt) at ``period``, limited
    below and above as ``limits`` says."""
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
    return fixed(DiscreteSystem(states, ["r", "y"], {s: update[s] for s in states}, sample=period,
                                parameters=dict(values), outputs={"u": u}, name=name))


def discrete(continuous: SymbolicSystem, period: float, discretization: str = "backward_euler") -> DiscreteSystem:
    """The PID ``continuous`` (made by :func:`pid`) sampled at ``period``: :func:`discrete_pid` of its gains and
    limits, what ``pid(..., sample=period, discretization=...)`` makes."""
    values = {k: float(v) for k, v in continuous.parameters.items()}
    return discrete_pid(values, period, discretization, ("umin" in values, "umax" in values), continuous.name)


BLOCK = BlockKind("pid", pid, discrete)
