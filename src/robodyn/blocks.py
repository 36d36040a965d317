"""The block library of diagrams (:mod:`robodyn.diagrams.blocks.library`): ``robodyn.blocks.pid(kp=20, ki=5)`` and the
rest.

Each block is an ordinary robodyn model with the promised port names; ``robodyn.Diagram`` wires them to
mechanisms, and a ``kind: diagram`` file names them as ``model:`` with their arguments as ``parameters:``. A block
added to the library (one module in ``robodyn/diagrams/blocks/``) is here too, by its name.

The state estimators ``kalman``, ``ekf`` and ``ukf`` (:mod:`robodyn.control.estimation.blocks`: sampled Python
blocks built from a plant model, above the diagrams in the layers) are here too; a diagram file names them as
``model: ekf`` with the plant among their ``parameters`` (robodyn.files.diagram).
"""

from typing import Any

from robodyn.control.estimation.blocks import ekf, kalman, ukf
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

__all__ = ["BLOCKS", "dc_motor", "ekf", "first_order", "gain", "integrator", "kalman", "lti", "make_block", "pid",
           "quantizer", "saturation", "sum", "ukf"]
__all__ += sorted(set(BLOCKS) - set(__all__))  # blocks added to the library since (found from its files)


def __getattr__(name: str) -> Any:
    """A library block not imported above by name (one added since): its factory."""
    if name in BLOCKS:
        return BLOCKS[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *BLOCKS})
