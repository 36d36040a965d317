"""Closed forms of a chain's equations, for printing small chains: the tape substituted back into sympy.

:class:`ChainClosedForms` is a mixin of :class:`robodyn.mechanisms.chain.system.ChainSystem`: ``mass_expr``,
``bias_expr``
and ``forces_expr`` are built on first use (they swell for long chains, so only chains of up to
CLOSED_FORM_LIMIT joints use them, for ``show``, ``classify`` and ``existence``); nothing numeric does.
"""

from __future__ import annotations

import functools
from typing import Any

import sympy

from robodyn.model.expr import TIME, symbol
from robodyn.rigid.tape import Value

__all__ = ["ChainClosedForms"]


class ChainClosedForms:
    """The closed forms of a chain (mixin; the chain provides the tape program and the symbols)."""

    _program: Any
    _joint_terms: list[dict[str, Any]]
    coordinates: tuple[str, ...]
    x_symbols: tuple[sympy.Symbol, ...]
    u_symbols: tuple[sympy.Symbol, ...]
    p_symbols: tuple[sympy.Symbol, ...]

    @property
    def n_coordinates(self) -> int:
        return len(self.coordinates)

    def _closed_forms(self, values: list[Value]) -> list[Any]:
        arguments = (None, self.x_symbols, self.u_symbols, self.p_symbols, self.acceleration_symbols)

        def leaf(argument: int, index: int) -> Any:
            return TIME if argument == 0 else arguments[argument][index]  # type: ignore[index]

        return self._program.tape.to_sympy(values, leaf)

    @functools.cached_property
    def acceleration_symbols(self) -> tuple[sympy.Symbol, ...]:
        """Symbols of q'' (the closed form of inverse dynamics uses them)."""
        return tuple(symbol(f"{c}_ddot") for c in self.coordinates)

    @functools.cached_property
    def mass_expr(self) -> sympy.Matrix:
        """M(q) in closed form (the straight-line code substituted back)."""
        n = self.n_coordinates
        return sympy.Matrix(n, n, self._closed_forms([e for row in self._program.mass for e in row]))

    @functools.cached_property
    def bias_expr(self) -> sympy.Matrix:
        """c(q, q') in closed form: Coriolis, centrifugal, gravity, friction and spring terms."""
        return sympy.Matrix(self._closed_forms(self._program.bias))

    @functools.cached_property
    def forces_expr(self) -> sympy.Matrix:
        """Q: the generalized force on each velocity entry (a ball joint's three torques)."""
        return sympy.Matrix([f for t in self._joint_terms
                             for f in (t["force"] if isinstance(t["force"], tuple) else (t["force"],))])


