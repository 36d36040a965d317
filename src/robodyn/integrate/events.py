"""Events of a simulation resolved for the kernels: parsed, checked against the model's names, compiled.

What an event is (:class:`Event`: an expression or a callable ``g(t, x, u, p)``, a direction, terminal or not) is
:mod:`robodyn.model.events`'s; it is importable from here too. :func:`resolve_events` turns a simulation's events
into :class:`ResolvedEvents`: symbolic expressions the model's compiled module evaluates, or Python functions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.base.errors import InputError
from robodyn.model.events import Event, EventFunction, is_expression

if TYPE_CHECKING:
    import sympy

    from robodyn.model.protocol import ModelContract

__all__ = ["Event", "ResolvedEvents", "is_expression", "resolve_events"]


@dataclass(frozen=True, slots=True)
class ResolvedEvents:
    """Events ready for the kernels: symbolic expressions (compilable) or Python functions."""

    names: tuple[str, ...]
    direction: np.ndarray  # int64 (k,)
    terminal: np.ndarray  # int64 (k,)
    expressions: tuple[sympy.Expr, ...] | None  # all symbolic, or None
    functions: tuple[EventFunction, ...]  # numeric evaluators, one per event

    def __len__(self) -> int:
        return len(self.names)

    @property
    def is_compilable(self) -> bool:
        return self.expressions is not None

    def python_event_fn(self) -> Callable[[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]:
        """``event_fn(t, x, u, p, out)`` for the interpreted path."""
        functions = self.functions

        def event_fn(t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
            for k, g in enumerate(functions):
                out[k] = g(t, x, u, p)

        return event_fn


def resolve_events(model: ModelContract, events: Sequence[Event | str] | Event | str | None) -> ResolvedEvents:
    """Parse and check the events of a simulation against the model's names."""
    if events is None:
        items: list[Event] = []
    elif isinstance(events, Event | str) or is_expression(events) or callable(events):
        items = [events if isinstance(events, Event) else Event(events)]
    elif isinstance(events, Sequence):
        items = [e if isinstance(e, Event) else Event(e) for e in events]
    else:
        raise InputError(f"events must be an Event, an expression, a callable g(t, x, u, p) or a list of them; "
                         f"got {events!r}")
    names, expressions, functions = [], [], []
    table = model.symbol_table() if items else None  # None for models of Python callables
    for k, event in enumerate(items):
        expr = event.expression
        label = event.name or (expr if isinstance(expr, str) else f"event{k}")
        names.append(str(label))
        if callable(expr) and not is_expression(expr):
            functions.append(expr)
            continue
        if table is None:
            raise InputError(
                f"event {label!r}: a model given as Python callables takes events as callables g(t, x, u, p)"
            )
        parsed = table.expression(expr, f"events[{k}]")
        expressions.append(parsed)
        functions.append(_numeric(table, parsed))
    all_symbolic = len(expressions) == len(items)
    return ResolvedEvents(
        tuple(names),
        np.array([e.direction for e in items], dtype=np.int64),
        np.array([int(e.terminal) for e in items], dtype=np.int64),
        tuple(expressions) if all_symbolic else None,
        tuple(functions),
    )


def _numeric(table: Any, expr: sympy.Expr) -> EventFunction:
    import sympy

    evaluate = table.lambdify(sympy.Matrix([expr]))

    def g(t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> float:
        return float(evaluate(t, x, u, p)[0, 0])

    return g

