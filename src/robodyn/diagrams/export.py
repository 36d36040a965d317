"""A diagram's functions for export (robodyn.model.exported.ExportedFunctions): the flattened diagram on one tape.

Each block's exported functions (its own tape) are replayed on a new tape (:meth:`robodyn.rigid.tape.Tape.replay`)
with the block's leaves moved to the diagram's: its time to the diagram's, its states and parameters to its rows
of the diagram's x and p, each of its inputs to what drives it — another block's output computed earlier, a
diagram input or a constant — in the diagram's evaluation order, as :meth:`Diagram._signals` evaluates them (an
input whose driver comes later reads 0.0: the block has no feedthrough from it). f is the blocks' derivatives
in the diagram's state order, h the diagram's outputs, and A, B, C, D their exact Jacobians by forward mode on
the flat tape. A diagram exports when it is continuous-time (no sampled block) and every block exports; the
blocks' rigid-body functions (mass, inverse dynamics, frames) stay with the blocks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from robodyn.model.exported import ExportedFunctions
from robodyn.rigid.tape import Tape, Value

if TYPE_CHECKING:
    from robodyn.diagrams.diagram import Diagram

__all__ = ["diagram_exported_functions"]


def diagram_exported_functions(diagram: Diagram) -> ExportedFunctions | None:
    """f, h and linearize of the flattened diagram, or None when it has sampled blocks or a block that does not
    export."""
    if diagram.sampling() is not None:
        return None
    blocks = dict(diagram.blocks)
    found = {name: block.exported_functions() for name, block in blocks.items()}
    parts = {name: part for name, part in found.items() if part is not None}
    if len(parts) != len(found):
        return None
    tape = Tape()
    n, m = diagram.n_states, diagram.n_inputs
    t, x, u = tape.leaf(0, 0), tape.leaves(1, n), tape.leaves(2, m)
    p = tape.leaves(3, len(diagram.parameters))
    zero = tape.const(0.0)
    outputs: dict[str, list[Value]] = {}

    def inputs_of(name: str) -> list[Value]:
        values = [zero] * blocks[name].n_inputs
        for inlet, kind, source, port in diagram.drivers(name):
            if kind == "signal":
                values[inlet] = outputs[source][port] if source in outputs else zero
            else:
                values[inlet] = u[source] if kind == "input" else tape.const(float(source))
        return values

    def replayed(name: str, function: str, block_inputs: list[Value]) -> list[Value]:
        rows, columns = diagram._slices[name]
        arguments = ([t], x[rows], block_inputs, p[columns])
        part = parts[name]
        return tape.replay(part.tape, part.functions[function], lambda a, i: arguments[a][i])

    for name in diagram._order:
        outputs[name] = replayed(name, "h", inputs_of(name))
    driven = {name: inputs_of(name) for name in blocks}
    f = [e for name in blocks for e in replayed(name, "f", driven[name])]
    h = [outputs[block][port] for block, port in diagram._outputs.values()]
    rows = tape.derive(f, [*x, *u])
    columns = tape.derive(h, [*x, *u])
    linearize = [*(e for r in rows for e in r[:n]), *(e for r in rows for e in r[n:]),
                 *(e for r in columns for e in r[:n]), *(e for r in columns for e in r[n:])]
    return ExportedFunctions(tape, {"f": f, "h": h, "linearize": linearize})
