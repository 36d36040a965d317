"""The block library of diagrams (:mod:`robodyn.diagrams.blocks.library`): ``robodyn.blocks.pid(kp=20, ki=5)`` and the
rest.

Each block is an ordinary robodyn model with the promised port names; ``robodyn.Diagram`` wires them to
mechanisms, and a ``kind: diagram`` file names them as ``model:`` with their arguments as ``parameters:``. A block
added to the library (one module in ``robodyn/diagrams/blocks/``) is here too, by its name.
"""

from typing import Any

from robodyn.diagrams.blocks.library import (
    BLOCKS,
    dc_motor,
    first_order,
    gain,
    integrator,
    lti,
    make_block,
    pid,
    quantizer,
    saturation,
    sum,
)

__all__ = ["BLOCKS", "dc_motor", "first_order", "gain", "integrator", "lti", "make_block", "pid", "quantizer",
           "saturation", "sum"]
__all__ += sorted(set(BLOCKS) - set(__all__))  # blocks added to the library since (found from its files)


def __getattr__(name: str) -> Any:
    """A library block not imported above by name (one added since): its factory."""
    if name in BLOCKS:
        return BLOCKS[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *BLOCKS})
