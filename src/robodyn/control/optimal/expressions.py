"""User expressions of a problem (a running cost, path inequalities, terminal equalities) as compiled functions
with their exact derivatives.

The text goes through the safe parser (:func:`robodyn.model.expr.parse_expression`: never eval, sympify or
parse_expr); the derivatives are sympy's (``sympy.diff``, exact), and values and derivatives are compiled together
by :func:`robodyn.codegen.printer.lambdify_entries`, the printer of the symbolic models' numpy functions (symbols
renamed, common subexpressions shared, floats printed exactly), so no user name reaches the generated code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError

if TYPE_CHECKING:
    from robodyn.codegen.printer import LambdifiedEntries

__all__ = ["CompiledExpressions", "compile_expressions"]

Array = NDArray[np.float64]


@dataclass(frozen=True, slots=True, eq=False)
class CompiledExpressions:
    """k expressions e(t, x, u) and their exact derivatives, evaluated by one compiled call.

    ``values(t, x, u)`` : (k,); ``jacobians(t, x, u)`` : (ex (k, n), eu (k, m)); ``hessian(t, x, u)`` (only when
    built with ``second=True``, for k = 1): (n + m, n + m), the variables ordered x then u. The ``*_points``
    twins take t (P,), X (P, n), U (P, m) and answer with a leading P axis (the same generated code on arrays).
    """

    count: int
    n: int
    m: int
    texts: tuple[str, ...]
    _values: LambdifiedEntries
    _first: LambdifiedEntries
    _second: LambdifiedEntries | None

    def values(self, t: float, x: Array, u: Array) -> Array:
        return np.asarray(self._values(t, x, u), dtype=float).reshape(self.count)

    def jacobians(self, t: float, x: Array, u: Array) -> tuple[Array, Array]:
        flat = np.asarray(self._first(t, x, u), dtype=float).reshape(self.count, self.n + self.m)
        return flat[:, :self.n].copy(), flat[:, self.n:].copy()

    def hessian(self, t: float, x: Array, u: Array) -> Array:
        if self._second is None:
            raise InputError("internal: these expressions were compiled without second derivatives")
        size = self.n + self.m
        return np.asarray(self._second(t, x, u), dtype=float).reshape(size, size)

    def values_points(self, t: Array, X: Array, U: Array) -> Array:
        """(P, k) the values at P points."""
        return self._values.points(len(t), t, X.T, U.T)

    def jacobians_points(self, t: Array, X: Array, U: Array) -> tuple[Array, Array]:
        """(ex (P, k, n), eu (P, k, m))."""
        flat = self._first.points(len(t), t, X.T, U.T).reshape(len(t), self.count, self.n + self.m)
        return flat[:, :, :self.n].copy(), flat[:, :, self.n:].copy()

    def hessian_points(self, t: Array, X: Array, U: Array) -> Array:
        """(P, n + m, n + m)."""
        if self._second is None:
            raise InputError("internal: these expressions were compiled without second derivatives")
        size = self.n + self.m
        return self._second.points(len(t), t, X.T, U.T).reshape(len(t), size, size)


def compile_expressions(texts: Sequence[str | int | float], states: Sequence[str], inputs: Sequence[str],
                        parameters: Mapping[str, float], *, where: str, allow_time: bool = True,
                        allow_inputs: bool = True, second: bool = False,
                        offsets: Sequence[float] | None = None) -> CompiledExpressions:
    """Parse ``texts`` (expressions of the states, the inputs where allowed, ``t`` where allowed, the model's
    parameters at the given values, ``pi`` and ``e``) and compile them with their exact first (and for one
    expression, ``second``) derivatives. ``offsets`` are subtracted from the expressions (a terminal value x_i = v
    is the expression x_i minus v). ExpressionError (an InputError) names ``where`` and the entry."""
    import sympy

    from robodyn.codegen.printer import lambdify_entries
    from robodyn.model.expr import TIME, parse_expression, symbol

    xs = [symbol(name) for name in states]
    us = [symbol(name) for name in inputs]
    names: dict[str, Any] = {name: s for name, s in zip(states, xs, strict=True)}
    if allow_inputs:
        names.update(zip(inputs, us, strict=True))
    for name, value in parameters.items():
        names.setdefault(name, sympy.Float(float(value)))
    exprs = []
    for k, text in enumerate(texts):
        expr = parse_expression(text, names, where=f"{where}[{k}]" if len(texts) > 1 else where,
                                allow_time=allow_time)
        exprs.append(expr - (offsets[k] if offsets is not None else 0))
    variables = [*xs, *us]
    first = [sympy.diff(e, v) for e in exprs for v in variables]
    arguments = (TIME, tuple(xs), tuple(us))
    hess = None
    if second:
        if len(exprs) != 1:
            raise InputError("internal: second derivatives are compiled for one expression")
        gradient = first
        hess = lambdify_entries(arguments, [sympy.diff(g, v) for g in gradient for v in variables])
    return CompiledExpressions(len(exprs), len(xs), len(us), tuple(str(t) for t in texts),
                               lambdify_entries(arguments, exprs), lambdify_entries(arguments, first), hess)
