"""The ``quantizer`` block: y = q round(u / q), no states; its steps are events in a diagram (sampled: the
equation held)."""

from __future__ import annotations

import sympy

from robodyn.diagrams.blocks.common import number, sampled, with_corners
from robodyn.diagrams.blocks.registry import BlockKind
from robodyn.model.expr import symbol
from robodyn.model.kinds.symbolic import SymbolicSystem

__all__ = ["BLOCK", "quantizer"]


def quantizer(q: float = 1.0, *, sample: float | None = None, name: str = "quantizer") -> SymbolicSystem:
    """y = q round(u / q) = q floor(u / q + 1/2) (halves rounded up): an encoder of resolution q (dy/du = 0
    between steps)."""
    step = symbol("q")
    rounded = sympy.floor(symbol("u") / step + sympy.Rational(1, 2))
    made = SymbolicSystem([], ["u"], [], parameters={"q": number(q, "q", name, positive=True)},
                          outputs={"y": step * rounded}, name=name)
    steps = sympy.sin(sympy.pi * (symbol("u") / step + sympy.Rational(1, 2)))  # zero where the output steps
    return sampled(with_corners(made, [steps]), sample)


BLOCK = BlockKind("quantizer", quantizer)
