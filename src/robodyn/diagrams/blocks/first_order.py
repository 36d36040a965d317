"""The ``first_order`` block: tau y' + y = K u; sampled, y ← a y + K (1 − a) u with a = exp(−T/tau) (exact for a
held u)."""

from __future__ import annotations

import sympy

from robodyn.diagrams.blocks.common import discrete_form, number, sampled
from robodyn.diagrams.blocks.registry import BlockKind
from robodyn.model.expr import symbol
from robodyn.model.kinds.discrete import DiscreteSystem
from robodyn.model.kinds.symbolic import SymbolicSystem

__all__ = ["BLOCK", "discrete", "first_order"]


def first_order(K: float = 1.0, tau: float = 1.0, *, sample: float | None = None,
                name: str = "first_order") -> SymbolicSystem:
    """tau y' + y = K u: a first-order lag (a sensor's or an actuator's), state and output y."""
    values = {"K": number(K, "K", name), "tau": number(tau, "tau", name, positive=True)}
    return sampled(SymbolicSystem(["y"], ["u"], {"y": "(K*u - y)/tau"}, parameters=values, name=name), sample,
                   discrete)


def discrete(continuous: SymbolicSystem, period: float) -> DiscreteSystem:
    """The lag ``continuous`` sampled at ``period`` T: y ← a y + K (1 − a) u, a = exp(−T/tau) (exact for a held u)."""
    a = sympy.exp(-sympy.Float(period) / symbol("tau"))
    return discrete_form(continuous, period, [a * symbol(continuous.states[0]) + symbol("K") * (1 - a) * symbol("u")])


BLOCK = BlockKind("first_order", first_order, discrete)
