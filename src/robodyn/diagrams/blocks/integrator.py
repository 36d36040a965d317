"""The ``integrator`` block: x' = u, y = y0 + x; sampled, x ← x + T u (exact for a held u)."""

from __future__ import annotations

import sympy

from robodyn.diagrams.blocks.common import discrete_form, number, sampled
from robodyn.diagrams.blocks.registry import BlockKind
from robodyn.model.expr import symbol
from robodyn.model.kinds.discrete import DiscreteSystem
from robodyn.model.kinds.symbolic import SymbolicSystem

__all__ = ["BLOCK", "discrete", "integrator"]


def integrator(y0: float = 0.0, *, sample: float | None = None, name: str = "integrator") -> SymbolicSystem:
    """x' = u, y = y0 + x: the integral of u starting at y0 (the state x starts at 0)."""
    return sampled(SymbolicSystem(["x"], ["u"], {"x": "u"}, parameters={"y0": number(y0, "y0", name)},
                                  outputs={"y": "y0 + x"}, name=name), sample, discrete)


def discrete(continuous: SymbolicSystem, period: float) -> DiscreteSystem:
    """The integrator ``continuous`` sampled at ``period`` T: x ← x + T u (exact for a held u)."""
    x = symbol(continuous.states[0])
    return discrete_form(continuous, period, [x + sympy.Float(period) * symbol("u")])


BLOCK = BlockKind("integrator", integrator, discrete)
