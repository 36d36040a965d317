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

__all__ = ["exact_float", "lambdify_entries", "numeric_form", "numpy_printer", "python_printer", "safe_label"]

_LABEL_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_.:=()-]")  # Characters of a model name kept out of the source.


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
    of ``sign``, ``abs`` and their kin) and the derivatives of ``floor`` and ``ceiling`` (a quantizer's, left
    unevaluated by sympy) replaced by 0 — the derivative everywhere off the jump, which is what numbers can
    represent (a smoothed form such as ``tanh(v/eps)`` suits the stiff solvers better)."""
    import sympy

    if isinstance(expr, sympy.MatrixBase):
        return expr.applyfunc(numeric_form)
    if not isinstance(expr, sympy.Basic):
        return expr
    if expr.has(sympy.DiracDelta):
        expr = expr.replace(sympy.DiracDelta, lambda *args: sympy.S.Zero)
    if expr.has(sympy.Derivative):
        expr = expr.replace(lambda e: isinstance(e, sympy.Derivative) and isinstance(e.expr, sympy.floor
                                                                                     | sympy.ceiling),
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


def lambdify_entries(arguments: Sequence[Any], entries: Sequence[Any]) -> Callable[..., Any]:
    """``fn(*values) -> (len(entries),) float64``: the entries (sympy expressions in ``arguments``) evaluated
    by one ``sympy.lambdify`` call, common subexpressions shared, floats printed exactly.

    Only the entries that are not exactly 0 are printed (derivatives are mostly zeros: dM/dq of 60 masses has
    216,000 entries, all 0, and lambdify's time grows with every entry it prints); the others are 0 in the
    result. Errors of the generated code (ZeroDivisionError with Python floats) propagate.
    """
    import numpy as np
    import sympy

    flat = [numeric_form(e) for e in entries]
    nonzero = [k for k, e in enumerate(flat) if e != 0]
    raw = sympy.lambdify(tuple(arguments), [flat[k] for k in nonzero], modules="numpy", cse=True,
                         printer=numpy_printer(), dummify=True)  # dummies: no model name shadows a printed name
    index = np.array(nonzero, dtype=np.intp)
    size = len(flat)
    if index.size == size:
        return lambda *values: np.asarray(raw(*values), dtype=float).reshape(size)

    def evaluate(*values: Any) -> Any:
        out = np.zeros(size)
        if index.size:
            out[index] = np.asarray(raw(*values), dtype=float).reshape(-1)
        return out

    return evaluate
