"""What a diagram assembles from its blocks for the reports and the operating-point search: the rest state
(:func:`rest_state`), the blocks' roles (:func:`roles`) and the diagram with more of its signals as outputs
(:func:`with_outputs`).

**Rest state.** A block that knows where it rests for given inputs (a sampled estimator: the plant's rest point and
its steady-state filter's covariance, robodyn.control.estimation.rest) answers ``rest_state``; the others keep the
state they are given. The diagram evaluates its signals at the state (as at an instant of every block), asks each
block for its rest state at its inputs there, and repeats with the states so assembled until none changes (a block's
inputs may come from another's outputs: the estimator reads the controller's input, which reads the estimate), at
most :data:`REST_PASSES` times. The result is a start for ``find_equilibrium``, not a solution it trusts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Final

import numpy as np

from robodyn.base.errors import InputError, RobodynError
from robodyn.model.roles import EstimatorRole, Role, qualified
from robodyn.model.system import Vector

if TYPE_CHECKING:
    from robodyn.diagrams.diagram import Diagram

__all__ = ["REST_PASSES", "rest_state", "roles", "with_outputs"]

REST_PASSES: Final = 4  # evaluations of the signals while assembling a rest state (a chain settles one block a pass)


def _block_inputs(diagram: Diagram, t: float, x: Vector, u: Vector, p: Vector) -> dict[str, Vector]:
    """Each block's inputs at the state ``x``, every sampled block evaluated as at its instant."""
    sampling = diagram.sampling()
    if sampling is None:
        return diagram._signals(t, x, u, p)[2]
    return sampling.signals(t, sampling.start(t, x, u, p), u, p, set(sampling.every))[1]


def rest_state(diagram: Diagram, t: float, x: Vector, u: Vector, p: Vector) -> Vector | None:
    """The diagram's state near ``x`` (n,) with its blocks at their rest states (module docstring), or None when no
    block offers one."""
    state = np.array(x, dtype=float)
    offered = False
    for _ in range(REST_PASSES):
        try:
            inputs = _block_inputs(diagram, t, state, u, p)
        except (RobodynError, ArithmeticError, np.linalg.LinAlgError):  # the signals fail here: keep what there is
            break
        changed = False
        for block, model in diagram.blocks.items():
            rows, columns = diagram._slices[block]
            rest = model.rest_state(t, state[rows], inputs[block], p[columns])
            if rest is None:
                continue
            offered = True
            rest = np.asarray(rest, dtype=float)
            if rest.shape == state[rows].shape and not np.array_equal(rest, state[rows]):
                state[rows], changed = rest, True
        if not changed:
            break
    return state if offered else None


def roles(diagram: Diagram) -> tuple[Role, ...]:
    """The blocks' roles with their names qualified by the block's name; an estimator's ``truth`` is the states of
    the block that is a model of its plant (same name and states), when there is one."""
    found: list[Role] = []
    for block, model in diagram.blocks.items():
        for role in model.roles():
            role = qualified(role, block)
            if isinstance(role, EstimatorRole) and not any(role.truth):
                plant = next((b for b, other in diagram.blocks.items() if b != block and other.name == role.plant
                              and tuple(other.states) == role.states), None)
                if plant is not None:
                    role = replace(role, truth=tuple(f"{plant}.{s}" for s in role.states))
            found.append(role)
    return tuple(found)


def with_outputs(diagram: Diagram, outputs: Mapping[str, str]) -> Diagram:
    """The same diagram (blocks, wires, inputs, parameter values) with ``outputs`` ``{name: "block.port"}`` added
    to its own; a block's input port wired to another block stands for the output that drives it."""
    from robodyn.diagrams.diagram import Diagram

    if not isinstance(outputs, Mapping):
        raise InputError(f"diagram {diagram.name!r}: with_outputs takes {{name: 'block.port'}}, got {outputs!r}")
    blocks = diagram.blocks

    def port(block: str, index: int, side: str) -> str:
        model = blocks[block]
        return f"{block}.{(model.outputs if side == 'out' else model.inputs)[index]}"

    clash = sorted(set(outputs) & set(diagram.outputs))
    if clash:
        raise InputError(f"diagram {diagram.name!r}: the output {clash[0]!r} exists already: name the added one "
                         "otherwise")
    own = {name: port(b, j, "out") for name, (b, j) in diagram._outputs.items()}
    wires = [(port(w.source, w.port, "out"), port(w.target, w.inlet, "in")) for w in diagram._wires]
    driven = {target: source for source, target in wires}  # an input port is the output that drives it
    outputs = {name: driven.get(str(signal), signal) for name, signal in outputs.items()}
    inputs: dict[str, str | list[str]] = {k: [port(b, i, "in") for b, i in v] for k, v in diagram._inputs.items()}
    defaults = {port(b, i, "in"): value for (b, i), value in diagram._defaults.items()}
    wider = Diagram(blocks, wires, inputs, {**own, **outputs}, defaults=defaults, name=diagram.name)
    if dict(wider.parameters) != dict(diagram.parameters):  # values set on this diagram (with_parameters, --param)
        wider = wider.with_parameters(dict(diagram.parameters))
    return wider
