"""What an event is: a zero crossing of g(t, x, u) that a simulation locates.

An event is an expression (text parsed by the safe parser, or a sympy expression in the model's symbols) or a
Python callable ``g(t, x, u, p) -> float``. ``direction`` selects crossings like scipy: +1 only rising (g goes
from negative to positive), -1 only falling, 0 both. A ``terminal`` event ends the simulation at the crossing.

A model may offer events of its own (a URDF robot's joint limits, ``limit_events()``); the simulation resolves
and compiles them (:mod:`robodyn.integrate.events`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from robodyn.base.errors import InputError

if TYPE_CHECKING:
    import sympy

__all__ = ["Event", "EventFunction", "is_expression"]

EventFunction = Callable[[float, np.ndarray, np.ndarray, np.ndarray], float]


@dataclass(frozen=True, slots=True)
class Event:
    """A zero crossing of ``expression`` to locate.

    Parameters
    ----------
    expression
        Text such as ``"theta - pi"`` (in the model's states, inputs, parameters and t), a sympy
        expression, or a callable ``g(t, x, u, p) -> float``.
    direction
        +1: rising crossings only; -1: falling only; 0: both.
    terminal
        Stop the simulation at the first such crossing.
    name
        Label in the results (default: the expression text, or ``event<k>``).
    """

    expression: str | sympy.Expr | EventFunction
    direction: int = 0
    terminal: bool = False
    name: str | None = None

    def __post_init__(self) -> None:
        if self.direction not in (-1, 0, 1):
            raise InputError(f"event direction must be -1, 0 or +1, got {self.direction!r}")
        if not (isinstance(self.expression, str) or is_expression(self.expression) or callable(self.expression)):
            raise InputError(f"an event is an expression or a callable g(t, x, u, p), got {self.expression!r}")

    def _repr_html_(self) -> str:
        from robodyn.display import result_html

        shown = self.expression if isinstance(self.expression, str) else repr(self.expression)
        return result_html(self, f"Event {self.name or shown!r}")


def is_expression(value: object) -> bool:
    """Whether ``value`` is a sympy expression (there is none unless sympy was imported: never import it here,
    so that a simulation without events needs no sympy)."""
    sympy = sys.modules.get("sympy")
    return sympy is not None and isinstance(value, sympy.Expr)
