"""The ``saturation`` block: y = min(upper, max(lower, u)), no states; its corners u = lower and u = upper are
events in a diagram (sampled: the equation held)."""

from __future__ import annotations

from robodyn.base.errors import InputError
from robodyn.diagrams.blocks.common import number, sampled, with_corners
from robodyn.diagrams.blocks.registry import BlockKind
from robodyn.model.expr import symbol
from robodyn.model.kinds.symbolic import SymbolicSystem

__all__ = ["BLOCK", "saturation"]


def saturation(lower: float = -1.0, upper: float = 1.0, *, sample: float | None = None,
               name: str = "saturation") -> SymbolicSystem:
    """y = min(upper, max(lower, u))."""
    values = {"lower": number(lower, "lower", name), "upper": number(upper, "upper", name)}
    if values["lower"] >= values["upper"]:
        raise InputError(f"block {name!r}: lower = {values['lower']} must be below upper = {values['upper']}")
    made = SymbolicSystem([], ["u"], [], parameters=values, outputs={"y": "min(upper, max(lower, u))"}, name=name)
    return sampled(with_corners(made, [symbol("u") - symbol("lower"), symbol("u") - symbol("upper")]), sample)


BLOCK = BlockKind("saturation", saturation)
