"""Building a diagram: its ports and wires parsed and checked, its blocks' slices, feedthrough and evaluation
order (robodyn.diagrams.diagram's helpers)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np

from robodyn.base.errors import InputError, RobodynError, UnknownNameError
from robodyn.base.names import did_you_mean

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["BLOCK_NAME", "MAX_DIAGRAM_BLOCKS", "MAX_DIAGRAM_DEPTH", "Wire", "check_size", "diagram_inputs",
           "diagram_outputs", "evaluation_order", "feedthrough", "has_exact",
           "port", "slices", "unknown", "wire"]

BLOCK_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_WIRE: Final = re.compile(r"\s*([^\s.]+)\.(\S+)\s*->\s*([^\s.]+)\.(\S+)\s*\Z")
_FEEDTHROUGH_TOLERANCE: Final = 1e-12  # |dh/du| above this (relative to 1 + |h|) at a probe: direct feedthrough
#: Blocks of a diagram with the diagrams inside it expanded (a diagram used twice counts twice): hand-made diagrams
#: have tens; 512 first-order blocks take ~5 s to build and simulate (warm), 4,096 about 50 s.
MAX_DIAGRAM_BLOCKS: Final = 1_000
#: Levels of diagrams inside diagrams (a controller inside a loop inside a plant is 3); reading one costs ~20 Python
#: frames, and a file that deep is generated or hostile.
MAX_DIAGRAM_DEPTH: Final = 16


@dataclass(frozen=True, slots=True)
class Wire:
    """Output ``port`` of block ``source`` drives input ``inlet`` of block ``target`` (indices into the ports)."""

    source: str
    port: int
    target: str
    inlet: int


def check_size(blocks: float, depth: float, where: str) -> None:
    """Refuse, before anything is built, a diagram of more than :data:`MAX_DIAGRAM_BLOCKS` blocks (those of the
    diagrams inside it counted) or nested more than :data:`MAX_DIAGRAM_DEPTH` levels deep (InputError)."""
    from robodyn.base.budget import check_count

    check_count(depth, MAX_DIAGRAM_DEPTH, "the levels of diagrams inside diagrams",
                "write the inner diagrams' blocks into fewer levels", where)
    check_count(blocks, MAX_DIAGRAM_BLOCKS, "the blocks it expands to (those of the diagrams inside it counted)",
                "include fewer copies of its sub-diagrams, or split it into diagrams simulated apart", where)


def port(blocks: Mapping[str, ModelContract], text: str, side: str, name: str) -> tuple[str, int]:
    """(block, index) of ``"block.port"``; ``side`` is "output" or "input"."""
    block, dot, port = str(text).strip().partition(".")
    if not dot or not port:
        raise InputError(f"diagram {name!r}: {text!r} is not a port: write block.{side}")
    if block not in blocks:
        raise unknown(block, list(blocks), f"diagram {name!r}: unknown block", "blocks")
    model = blocks[block]
    ports = model.outputs if side == "output" else model.inputs
    if port not in ports:
        raise unknown(port, list(ports), f"diagram {name!r}: block {block!r} has no {side} port",
                       f"its {side} ports")
    return block, ports.index(port)


def unknown(name: str, names: list[str], what: str, listing: str) -> UnknownNameError:
    return UnknownNameError(f"{what} {name!r} ({listing}: {', '.join(names) or 'none'}){did_you_mean(name, names)}")


def wire(blocks: Mapping[str, ModelContract], item: str | tuple[str, str], name: str) -> Wire:
    if isinstance(item, str):
        found = _WIRE.match(item)
        if found is None:
            raise InputError(f"diagram {name!r}: connection {item!r} is not \"block.output -> block.input\"")
        source, target = f"{found[1]}.{found[2]}", f"{found[3]}.{found[4]}"
    elif isinstance(item, tuple | list) and len(item) == 2:
        source, target = str(item[0]), str(item[1])
    else:
        raise InputError(f"diagram {name!r}: connection {item!r} is not \"block.output -> block.input\"")
    return Wire(*port(blocks, source, "output", name), *port(blocks, target, "input", name))


def diagram_inputs(blocks: Mapping[str, ModelContract], inputs: Mapping[str, str | Sequence[str]] | None,
                    name: str) -> dict[str, tuple[tuple[str, int], ...]]:
    if inputs is None:
        return {}
    if not isinstance(inputs, Mapping):
        raise InputError(f"diagram {name!r}: inputs must map names to block inputs, got {inputs!r}")
    return {str(k): tuple(port(blocks, v, "input", name) for v in ([targets] if isinstance(targets, str)
                                                                    else targets))
            for k, targets in inputs.items()}


def diagram_outputs(blocks: Mapping[str, ModelContract], outputs: Mapping[str, str] | None,
                     name: str) -> dict[str, tuple[str, int]]:
    if outputs is None:
        return {f"{b}.{y}": (b, j) for b, model in blocks.items() for j, y in enumerate(model.outputs)}
    if not isinstance(outputs, Mapping):
        raise InputError(f"diagram {name!r}: outputs must map names to block outputs, got {outputs!r}")
    found = {str(k): port(blocks, v, "output", name) for k, v in outputs.items()}
    states = {f"{b}.{s}" for b, model in blocks.items() for s in model.states}
    for label, (block, j) in found.items():  # an output named like a state is that state (tables write it once)
        source = f"{block}.{blocks[block].outputs[j]}"
        if label in states and label != source:
            raise InputError(f"diagram {name!r}: the output {label!r} is {source}, but a state has its name: name "
                             "the output otherwise")
    return found


def slices(blocks: Mapping[str, ModelContract]) -> dict[str, tuple[slice, slice]]:
    """Each block's states and parameters in the diagram's vectors."""
    found, at, ap = {}, 0, 0
    for block, model in blocks.items():
        found[block] = (slice(at, at + model.n_states), slice(ap, ap + len(model.parameters)))
        at, ap = at + model.n_states, ap + len(model.parameters)
    return found


def has_exact(model: ModelContract) -> bool:
    if model.jacobian_method is None:
        return False
    x, u = np.zeros(model.n_states), np.zeros(model.n_inputs)
    return model.output_jacobians_raw(0.0, x, u, model.parameter_vector()) is not None


def feedthrough(model: ModelContract) -> frozenset[int]:
    """The inputs an output depends on at once (direct feedthrough): the columns of dh/du nonzero at either of two
    probe points. An input outside it (an estimator's applied input, which only its update reads) may be driven
    by a block that the block drives without an algebraic loop. A block whose output derivative cannot be evaluated
    at a probe point feeds every input through (the safe side: a loop through it is refused, never misordered)."""
    if model.n_inputs == 0:
        return frozenset()
    p = model.parameter_vector()
    found: set[int] = set()
    for scale in (0.1, -0.37):
        x = scale * (1.0 + np.arange(model.n_states)) / max(model.n_states, 1)
        u = scale * (1.0 + np.arange(model.n_inputs)) / model.n_inputs
        try:
            exact = model.output_jacobians_raw(0.0, x, u, p)
        except RobodynError:  # no derivative at this probe point (an MPC infeasible there): every input counts
            return frozenset(range(model.n_inputs))
        if exact is not None:
            D = np.asarray(exact[1], dtype=float)
        else:
            step = 1e-6
            base = model.h_raw(0.0, x, u, p)
            D = np.column_stack([(model.h_raw(0.0, x, u + step * e, p) - base) / step for e in np.eye(u.size)])
            D = D * (np.abs(D) > 1e-6 * (1.0 + np.abs(base))[:, None])  # differencing noise is not feedthrough
        found.update(int(j) for j in np.flatnonzero(np.any(np.abs(D) > _FEEDTHROUGH_TOLERANCE, axis=0)))
    return frozenset(found)


def evaluation_order(blocks: Mapping[str, ModelContract], wires: Sequence[Wire], name: str,
                      through: Mapping[str, frozenset[int]]) -> tuple[str, ...]:
    """Blocks ordered so that every block follows the blocks that drive its feedthrough inputs (``through``: each
    block's, :func:`feedthrough`); an algebraic loop (a cycle through feedthrough inputs) is an InputError naming
    the cycle."""
    needs = {b: sorted({w.source for w in wires if w.target == b and w.inlet in through[b]}) for b in blocks}
    order: list[str] = []
    state = dict.fromkeys(blocks, 0)  # 0 new, 1 on the path, 2 done

    def visit(block: str, path: list[str]) -> None:
        if state[block] == 2:
            return
        if state[block] == 1:
            cycle = [*path[path.index(block):], block]
            raise InputError(f"diagram {name!r}: algebraic loop {' -> '.join(reversed(cycle))}: each of these "
                             "blocks' outputs depends on its input at once (direct feedthrough); put a block with "
                             "state (a lag, an integrator) in the loop or split a block")
        state[block] = 1
        for source in needs[block]:
            visit(source, [*path, block])
        state[block] = 2
        order.append(block)

    for block in blocks:
        visit(block, [])
    return tuple(order)
