"""The ``sum`` block: y = Σ sᵢ uᵢ over the inputs u1 … un, no states (sampled: the equation held)."""

from __future__ import annotations

import sympy

from robodyn.base.budget import check_count
from robodyn.base.errors import InputError
from robodyn.diagrams.blocks.common import MAX_BLOCK_PORTS, sampled
from robodyn.diagrams.blocks.registry import BlockKind
from robodyn.model.expr import symbol
from robodyn.model.kinds.symbolic import SymbolicSystem

__all__ = ["BLOCK", "sum"]


def sum(signs: str = "++", *, sample: float | None = None, name: str = "sum") -> SymbolicSystem:
    """y = Σ sᵢ uᵢ over the inputs u1 … un, one per character of ``signs`` (``"+-"``: y = u1 − u2)."""
    if not isinstance(signs, str) or not signs or set(signs) - {"+", "-"}:
        raise InputError(f"block {name!r}: signs must be text of + and - (one per input, e.g. \"+-\"), got {signs!r}")
    check_count(len(signs), MAX_BLOCK_PORTS, "its inputs (one per sign)", "add the signals with several sum blocks",
                f"block {name!r}")
    inputs = [f"u{i + 1}" for i in range(len(signs))]
    terms = [symbol(u) if s == "+" else -symbol(u) for u, s in zip(inputs, signs)]
    return sampled(SymbolicSystem([], inputs, [], outputs={"y": sympy.Add(*terms)}, name=name), sample)


BLOCK = BlockKind("sum", sum)
