"""What a diagram's parsed-model record holds beyond a model file's (robodyn.files.cached).

A diagram file names other files as blocks; its record is keyed by all of them (robodyn.files.records), and
holds, besides the composed sources every record holds (``rhs``, its Jacobian, ``out_fn``):

- ``block_diagram``: the drawing's facts, as :meth:`robodyn.Diagram.block_diagram` gives them (blocks, wires, the
  diagram's inputs and outputs, the ports where its loops open);
- ``linearization``: the source of the composed ``lin`` ([A | B | C | D] by forward mode), compiled by the record's
  model as the diagram compiles it (robodyn.model.compiled.linearization_function): the same text, the same bits;
- ``loop``: for the record of a loop opened at a port (``linearize(..., open=port)``), the names of the injected
  input and the returned output.

A record of a diagram is made only when the record answers as the diagram does (:func:`recordable`): continuous
blocks only, no corners to stop at (saturations, limited PIDs), composed straight-line code. Everything else about
it (``show``, the blocks themselves, a robot block's frames, df/dp) is the full diagram's, built on first need.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from robodyn.base.names import is_qualified_name

if TYPE_CHECKING:
    from robodyn.model.system import Model

__all__ = ["checked_fields", "diagram_fields", "drawing", "recordable"]


def recordable(full: Model) -> bool:
    """Whether the diagram ``full`` can be answered from a record: everything the record's model says of it is what
    it says itself (no sampled blocks, no corners to stop at, an exact composed linearization)."""
    return (full.sampling() is None and not full.switching_events() and full.jacobian_method is not None
            and full.linearization_source() is not None)


def diagram_fields(full: Model) -> dict[str, Any] | None:
    """The record's ``diagram`` field for ``full`` (JSON data), or None for a model that is not a diagram."""
    drawing_ = full.block_diagram()
    if drawing_ is None:
        return None
    plain = {**drawing_, "wires": [list(w) for w in drawing_["wires"]]}
    return {"block_diagram": plain, "linearization": full.linearization_source(), "loop": None}


def drawing(fields: dict[str, Any]) -> dict[str, Any]:
    """:meth:`Model.block_diagram` from the record's field (wires as tuples, as the diagram gives them)."""
    found = fields["block_diagram"]
    return {**found, "blocks": {k: dict(v) for k, v in found["blocks"].items()},
            "wires": [tuple(w) for w in found["wires"]], "inputs": {k: list(v) for k, v in found["inputs"].items()},
            "outputs": dict(found["outputs"]), "loops": list(found["loops"])}


def checked_fields(value: Any) -> bool:
    """Whether ``value`` is a valid ``diagram`` field: names where names are, text where text is, nothing else."""
    if not (isinstance(value, dict) and set(value) == {"block_diagram", "linearization", "loop"}):
        return False
    if not isinstance(value["linearization"], str):
        return False
    loop = value["loop"]
    if not (loop is None or (isinstance(loop, list) and len(loop) == 2 and all(is_qualified_name(n) for n in loop))):
        return False
    return _checked_drawing(value["block_diagram"])


def _checked_drawing(found: Any) -> bool:
    if not (isinstance(found, dict) and set(found) == {"blocks", "wires", "inputs", "outputs", "loops"}):
        return False
    blocks, wires, inputs, outputs, loops = (found[k] for k in ("blocks", "wires", "inputs", "outputs", "loops"))
    if not (isinstance(blocks, dict) and all(is_qualified_name(b) and _block(v) for b, v in blocks.items())):
        return False
    if not (isinstance(wires, list) and all(isinstance(w, list) and len(w) == 4 and all(
            is_qualified_name(part) for part in w) for w in wires)):
        return False
    if not (isinstance(inputs, dict) and all(is_qualified_name(k) and isinstance(v, list) and all(
            is_qualified_name(port) for port in v) for k, v in inputs.items())):
        return False
    return isinstance(outputs, dict) and all(is_qualified_name(k) and is_qualified_name(v) for k, v in
                                             outputs.items()) and isinstance(loops, list) and all(
        is_qualified_name(port) for port in loops)


def _block(value: Any) -> bool:
    """One block's facts: its model's name and kind (text), its ports (names), its sample period (None here)."""
    sample = value.get("sample") if isinstance(value, dict) else None
    return (isinstance(value, dict) and set(value) == {"model", "kind", "inputs", "outputs", "sample"}
            and isinstance(value["model"], str) and isinstance(value["kind"], str)
            and all(isinstance(value[k], list) and all(is_qualified_name(n) for n in value[k])
                    for k in ("inputs", "outputs"))
            and (sample is None or (type(sample) is float and math.isfinite(sample) and sample > 0)))
