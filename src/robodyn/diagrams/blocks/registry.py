"""The block kinds of the library, found from the files of this folder: one module per block.

A block module (``diagrams/blocks/<name>.py``) defines its factory (the continuous form: a function returning a
:class:`~robodyn.model.kinds.symbolic.SymbolicSystem`, its arguments being the block's parameters), its exact
discrete form when it has states, and one :class:`BlockKind` named ``BLOCK``. :func:`block_kinds` lists the
package with :mod:`pkgutil`, imports every module but the shared ones (:data:`SHARED`) and collects their
``BLOCK`` records, sorted by name: adding a block is adding one file.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from robodyn.base.errors import InputError
from robodyn.diagrams.blocks.common import Discrete

__all__ = ["SHARED", "BlockKind", "block_kinds", "collect"]

#: The modules of this folder that are not blocks (the shared machinery and the tables built from the blocks).
SHARED: Final = frozenset({"common", "library", "registry", "sampled"})


@dataclass(frozen=True)
class BlockKind:
    """One library block: its ``name`` (``model:`` of a diagram file, ``make_block``'s kind), ``make`` (its factory,
    whose keyword arguments are the block's parameters, ``sample=T`` among them) and ``discrete`` (its exact
    discrete form, (continuous block, period) -> sampled block; None for a block that never has states, whose
    sampled form is its equation held)."""

    name: str
    make: Callable[..., Any]
    discrete: Discrete | None = None


def collect(kinds: Iterable[BlockKind]) -> tuple[BlockKind, ...]:
    """``kinds`` sorted by name; two of one name are an InputError (naming the name)."""
    found: dict[str, BlockKind] = {}
    for kind in kinds:
        if not isinstance(kind, BlockKind):
            raise InputError(f"a block module's BLOCK must be a BlockKind, got {kind!r}")
        if kind.name in found:
            raise InputError(f"two library blocks are named {kind.name!r}: block names must be unique")
        found[kind.name] = kind
    return tuple(found[name] for name in sorted(found))


@cache
def block_kinds() -> tuple[BlockKind, ...]:
    """Every block of the library (the ``BLOCK`` of each module of this folder), sorted by name."""
    package = importlib.import_module(__package__ or "robodyn.diagrams.blocks")
    kinds = []
    for module in sorted(info.name for info in pkgutil.iter_modules(package.__path__)):
        if module in SHARED or module.startswith("_"):
            continue
        loaded = importlib.import_module(f"{package.__name__}.{module}")
        if not hasattr(loaded, "BLOCK"):
            raise InputError(f"{loaded.__name__} defines no BLOCK (a BlockKind): every module of "
                             f"robodyn.diagrams.blocks but {', '.join(sorted(SHARED))} is a library block")
        kinds.append(loaded.BLOCK)
    return collect(kinds)

