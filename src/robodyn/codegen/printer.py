"""The one number printer of generated code: floats that round-trip exactly, sympy printers that use it.

Every generated source — the kernels' ``rhs``, event functions, lambdified numpy code, tape data —
prints a float64 through :func:`exact_float`, so that a number read back is the number printed
(``repr`` gives the shortest string that round-trips; 15 significant digits do not).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any, Final

__all__ = ["LambdifiedEntries", "code_symbols", "exact_float", "lambdify_entries", "numeric_form", "numpy_printer",
           "python_printer", "safe_label", "shared_subexpressions"]

_LABEL_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_.:=()-]")  # Characters of a model name kept out of the source.
#: The names generated code gives the symbols of its arguments, by position: the time, x[i], u[i], p[i] and a
#: chain's derived values d[i] (t, _x0, _u0, _p0, _d0).
_ARGUMENT_NAMES: Final = ("t", "_x", "_u", "_p", "_d")


def safe_label(name: str) -> str:
    """A model name reduced to harmless characters, for docstrings of generated code (a name from a model
    file holding quotes must not end the docstring and become code)."""
    return _LABEL_UNSAFE.sub("_", str(name))[:80]


def exact_float(value: float) -> str:
    """Python source for ``value`` that evaluates to the same float64 (``inf`` and ``nan`` included)."""
    number = float(value)
    if math.isfinite(number):
        return repr(number)
    return f"float({str(number)!r})"  # float('inf'), float('-inf'), float('nan')


def numeric_form(expr: Any) -> Any:
    """``expr`` ready to print as numeric code: ``DiracDelta(...)`` (which sympy writes for the derivatives
    of ``sign``, ``abs`` and their kin) and the derivatives of ``floor``, ``ceiling`` (a quantizer's) and ``sign`` of
    an argument sympy cannot prove real (``sign(sqrt(x) - 1)``), which sympy leaves unevaluated, replaced by 0 — the
    derivative everywhere off the jump, which is what numbers can represent (a smoothed form such as
    ``tanh(v/eps)`` suits the stiff solvers better)."""
    import sympy

    if isinstance(expr, sympy.MatrixBase):
        return expr.applyfunc(numeric_form)
    if not isinstance(expr, sympy.Basic):
        return expr
    if expr.has(sympy.DiracDelta):
        expr = expr.replace(sympy.DiracDelta, lambda *args: sympy.S.Zero)
    if expr.has(sympy.Derivative):
        expr = expr.replace(lambda e: isinstance(e, sympy.Derivative) and isinstance(e.expr, sympy.floor
                                                                                     | sympy.ceiling | sympy.sign),
                            lambda e: sympy.S.Zero)
    return expr


def _exact_print_float(self: Any, expr: Any) -> str:
    return exact_float(float(expr))


def numpy_printer() -> Any:
    """sympy's numpy printer for ``sympy.lambdify``, floats printed exactly, names imported unqualified.

    An instance rather than the class, so that lambdify imports what the printed code uses (``reduce``
    for ``min``/``max``); use it with ``dummify=True`` so that no model name can shadow those names.
    """
    from sympy.printing.numpy import NumPyPrinter

    printer_class = type("ExactNumPyPrinter", (NumPyPrinter,), {"_print_Float": _exact_print_float})
    return printer_class({"fully_qualified_modules": False, "inline": True, "allow_unknown_functions": True,
                          "user_functions": {}})


def python_printer() -> Any:
    """sympy's Python printer (``math`` functions, fully qualified), floats printed exactly."""
    from sympy.printing.pycode import PythonCodePrinter

    printer_class = type("ExactPythonPrinter", (PythonCodePrinter,), {"_print_Float": _exact_print_float})
    return printer_class({"fully_qualified_modules": True, "standard": "python3"})


def code_symbols(arguments: Sequence[Any]) -> dict[Any, Any]:
    """The symbols of ``arguments`` (the time, then groups of symbols: x, u, p and derived values) renamed as
    generated code names them: ``t``, ``_x0``, ``_u1``, ``_p2``, ``_d0``. No model name reaches the code, and the
    numba sources (robodyn.codegen.source) and the numpy functions (:func:`lambdify_entries`) of one expression
    compute the same operations in the same order — sympy orders the factors of a product and the terms of a sum
    by the names of their symbols, so ``-10*k*x`` is ``(-10*k)*x`` under one naming and ``(-10*x)*k`` under
    another: one overflows where the other does not."""
    import sympy

    renaming: dict[Any, Any] = {}
    for position, group in enumerate(arguments):
        prefix = _ARGUMENT_NAMES[position] if position < len(_ARGUMENT_NAMES) else f"_a{position}_"
        if isinstance(group, sympy.Basic):
            renaming[group] = sympy.Symbol(prefix if position == 0 else f"{prefix}0", real=True)
        else:
            renaming.update({s: sympy.Symbol(f"{prefix}{i}", real=True) for i, s in enumerate(group)})
    return renaming


def shared_subexpressions(exprs: Sequence[Any]) -> tuple[list[tuple[Any, Any]], list[Any]]:
    """``sympy.cse`` as every printer of robodyn calls it: intermediates ``_c0, _c1, ...`` in the order found."""
    import sympy

    return sympy.cse(list(exprs), symbols=sympy.numbered_symbols("_c"), order="none")


class LambdifiedEntries:
    """The compiled entries of :func:`lambdify_entries`: ``fn(*values) -> (size,)`` at one point, and
    ``fn.points(count, *values) -> (count, size)`` at ``count`` points, each argument's symbols given as arrays
    of ``count`` values (a vector argument as a ``(k, count)`` array: its rows are its symbols)."""

    __slots__ = ("index", "raw", "size")

    def __init__(self, raw: Callable[..., Any], index: Any, size: int) -> None:
        self.raw, self.index, self.size = raw, index, size

    def __call__(self, *values: Any) -> Any:
        import numpy as np

        if self.index.size == self.size:
            return np.asarray(self.raw(*values), dtype=float).reshape(self.size)
        out = np.zeros(self.size)
        if self.index.size:
            out[self.index] = np.asarray(self.raw(*values), dtype=float).reshape(-1)
        return out

    def points(self, count: int, *values: Any) -> Any:
        import numpy as np

        out = np.zeros((count, self.size))
        if self.index.size:
            entries = self.raw(*values)  # one value per entry: an array of count values, or a constant
            for column, entry in zip(self.index, entries, strict=True):
                out[:, column] = np.broadcast_to(np.asarray(entry, dtype=float), (count,))
        return out


def lambdify_entries(arguments: Sequence[Any], entries: Sequence[Any]) -> LambdifiedEntries:
    """``fn(*values) -> (len(entries),) float64``: the entries (sympy expressions in ``arguments``) evaluated
    by one ``sympy.lambdify`` call, common subexpressions shared, floats printed exactly, the symbols named as
    the numba sources name them (:func:`code_symbols`: the same operations in the same order); ``fn.points``
    evaluates them at many points at once (:class:`LambdifiedEntries`).

    Only the entries that are not exactly 0 are printed (derivatives are mostly zeros: dM/dq of 60 masses has
    216,000 entries, all 0, and lambdify's time grows with every entry it prints); the others are 0 in the
    result. Errors of the generated code (ZeroDivisionError with Python floats) propagate.
    """
    import numpy as np
    import sympy

    renaming = code_symbols(arguments)
    renamed = tuple(renaming[a] if isinstance(a, sympy.Basic) else tuple(renaming[s] for s in a) for a in arguments)
    flat = [numeric_form(e) for e in entries]
    nonzero = [k for k, e in enumerate(flat) if e != 0]
    printed = [flat[k].xreplace(renaming) if isinstance(flat[k], sympy.Basic) else flat[k] for k in nonzero]
    raw = sympy.lambdify(renamed, printed, modules="numpy",
                         cse=shared_subexpressions, printer=numpy_printer())  # no model name reaches the code
    return LambdifiedEntries(raw, np.array(nonzero, dtype=np.intp), len(flat))
