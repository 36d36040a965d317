"""The exact discrete forms of the library blocks, by block name (for code written before each block became a
module of this folder: a block's discrete form is ``discrete`` of its own module, e.g.
:func:`robodyn.diagrams.blocks.pid.discrete_pid`; the shared machinery is :mod:`~robodyn.diagrams.blocks.common`).
"""

from __future__ import annotations

from typing import cast

from robodyn.diagrams.blocks.common import sampled
from robodyn.diagrams.blocks.pid import DISCRETIZATIONS, discrete_pid
from robodyn.model.kinds.discrete import DiscreteSystem
from robodyn.model.kinds.symbolic import SymbolicSystem

__all__ = ["DISCRETIZATIONS", "discrete_form", "discrete_pid"]


def discrete_form(continuous: SymbolicSystem, kind: str, period: float) -> DiscreteSystem:
    """The discrete form at ``period`` of the library block ``continuous`` of block kind ``kind`` (its module's
    ``discrete``; a block without states sampled and held)."""
    from robodyn.diagrams.blocks.library import KINDS
    from robodyn.model.kinds.discrete import check_period

    found = KINDS[kind] if kind in KINDS else None
    form = sampled(continuous, check_period(period, f"block {continuous.name!r}"),
                   None if found is None else found.discrete)
    return cast(DiscreteSystem, form)
