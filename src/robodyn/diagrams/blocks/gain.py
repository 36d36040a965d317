"""The ``gain`` block: y = k u, no states (sampled: the equation held)."""

from __future__ import annotations

from robodyn.diagrams.blocks.common import number, sampled
from robodyn.diagrams.blocks.registry import BlockKind
from robodyn.model.kinds.symbolic import SymbolicSystem

__all__ = ["BLOCK", "gain"]


def gain(k: float = 1.0, *, sample: float | None = None, name: str = "gain") -> SymbolicSystem:
    """y = k u: a static gain (no states)."""
    return sampled(SymbolicSystem([], ["u"], [], parameters={"k": number(k, "k", name)}, outputs={"y": "k*u"},
                                  name=name), sample)


BLOCK = BlockKind("gain", gain)
