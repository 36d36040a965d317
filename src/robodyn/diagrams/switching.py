"""A diagram's corners as events: where a block's equations are not smooth, the simulation stops and restarts.

A saturation's output has corners where its input crosses a limit, a limited PID's where its unlimited sum does,
a quantizer steps where u/q + 1/2 crosses an integer. A block says where with ``switching_expressions()``:
functions g of its own symbols whose sign changes there (``u - lower``, ``u - upper``; sin(pi (u/q + 1/2)) for the
quantizer's steps). A diagram writes them in its own symbols (:class:`DiagramSymbols`) by substituting, for each
input of the block, the expression of the signal that drives it — a block whose outputs are its states, or whose
outputs are expressions (``output_expressions()``: symbolic models), recursively; a corner behind a block
without expressions (a chain's kinematic output) is left to the step control. ``simulate`` adds them as terminal
events and restarts the integration at each crossing (robodyn.integrate.simulate), so no step straddles a corner:
the integration is as accurate across it as between corners.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError

if TYPE_CHECKING:
    import sympy

    from robodyn.diagrams.diagram import Diagram
    from robodyn.model.events import Event

__all__ = ["SWITCH_PREFIX", "DiagramSymbols", "is_switch", "switching_events"]

SWITCH_PREFIX: Final = "@corner "  # names of the events a simulation adds at corners (not shown among its events)


class DiagramSymbols:
    """The symbol table of a diagram: its states, inputs and parameters as real sympy symbols of its dotted names
    (for events the diagram makes; events a user gives a diagram are callables g(t, x, u, p))."""

    def __init__(self, diagram: Diagram):
        from robodyn.model.expr import TIME, symbol

        self.name = diagram.name
        self.t_symbol = TIME
        self.x_symbols = tuple(symbol(s) for s in diagram.states)
        self.u_symbols = tuple(symbol(s) for s in diagram.inputs)
        self.p_symbols = tuple(symbol(s) for s in diagram.parameters)
        self._known = {*self.x_symbols, *self.u_symbols, *self.p_symbols, TIME}

    def expression(self, value: Any, where: str) -> Any:
        """``value`` when it is a sympy expression in the diagram's symbols; text is refused (its dotted names are
        no expressions): give a diagram's events as callables."""
        import sympy

        if isinstance(value, sympy.Basic) and value.free_symbols <= self._known:
            return value
        raise InputError(f"diagram {self.name!r}: {where}: give an event of a diagram as a callable g(t, x, u, p) "
                         "(x, u, p in the diagram's order), not as text")

    def lambdify(self, exprs: sympy.Matrix) -> Callable[..., np.ndarray]:
        from robodyn.codegen.printer import lambdify_entries

        shape = exprs.shape
        entries = lambdify_entries((self.t_symbol, self.x_symbols, self.u_symbols, self.p_symbols), list(exprs))
        return lambda t, x, u, p: entries(t, x, u, p).reshape(shape)


def switching_events(diagram: Diagram) -> list[Event]:
    """The corners of the diagram's blocks as terminal events (direction 0), named ``SWITCH_PREFIX + block.k``."""
    from robodyn.model.events import Event

    table = diagram.symbol_table()
    blocks = diagram.blocks
    state = dict(zip(diagram.states, table.x_symbols))
    parameter = dict(zip(diagram.parameters, table.p_symbols))
    inputs = dict(zip(diagram.inputs, table.u_symbols))
    found: dict[tuple[str, int], Any] = {}

    def signal(block: str, port: int) -> Any:
        key = (block, port)
        if key not in found:
            found[key] = _output(block, port)
        return found[key]

    def _output(block: str, port: int) -> Any:
        model = blocks[block]
        if model.outputs_are_states:
            return state[f"{block}.{model.states[port]}"]
        exprs = model.output_expressions()
        if exprs is None:
            return None
        return _in_diagram(block, exprs[port])

    def driving(block: str, inlet: int) -> Any:
        _, kind, a, b = diagram.drivers(block)[inlet]
        if kind == "input":
            return inputs[diagram.inputs[a]]
        if kind == "const":
            import sympy

            return sympy.Float(a)
        if kind == "signal":
            return signal(a, b)
        return None

    def _in_diagram(block: str, expr: Any) -> Any:
        model = blocks[block]
        own = model.symbol_table()
        if own is None:
            return None
        mapping: dict[Any, Any] = {}
        for name, sym in zip(model.states, own.x_symbols):
            mapping[sym] = state[f"{block}.{name}"]
        for name, sym in zip(model.parameters, own.p_symbols):
            mapping[sym] = parameter[f"{block}.{name}"]
        used = expr.free_symbols
        for inlet, sym in enumerate(own.u_symbols):
            if sym in used:
                value = driving(block, inlet)
                if value is None:
                    return None
                mapping[sym] = value
        return expr.xreplace(mapping)

    events: list[Event] = []
    for block, model in blocks.items():
        for k, expr in enumerate(model.switching_expressions()):
            written = _in_diagram(block, expr)
            if written is not None:
                events.append(Event(written, direction=0, terminal=True, name=f"{SWITCH_PREFIX}{block}.{k}"))
    return events


def is_switch(name: str) -> bool:
    """Whether an event is one a simulation added at a corner."""
    return name.startswith(SWITCH_PREFIX)

