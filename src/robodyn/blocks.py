"""The block library of diagrams (:mod:`robodyn.diagrams.blocks.library`): ``robodyn.blocks.pid(kp=20, ki=5)`` and the
rest.

Each block is an ordinary robodyn model with the promised port names; ``robodyn.Diagram`` wires them to
mechanisms, and a ``kind: diagram`` file names them as ``model:`` with their arguments as ``parameters:``.
"""

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
