"""A straight-line tape printed as C99: one ``const double`` per node, IEEE arithmetic, nothing but ``<math.h>``.

:func:`c_function` prints the nodes some outputs need (robodyn.codegen.llvm.tape.tape_data) as a static function

.. code-block:: c

    static void name(double t, const double *x, const double *u, const double *p, const double *a, double *out)

with the same meaning as the tape's compiled functions (leaf (0, 0) reads ``t``; leaves (k, i), k = 1..4, read
``x[i]``, ``u[i]``, ``p[i]``, ``a[i]``; output j goes to ``out[j]``) and the same operations in the same order:
constants as exact hexadecimal literals, ``min``/``max``/``step``/``sign`` as the comparisons the LLVM path
emits (so NaN and signed zeros propagate alike), the transcendental functions as ``<math.h>``'s. Compiled without
``-ffast-math`` it gives the Python results to the last bits of the math library.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

from robodyn.codegen.text import c_identifier

__all__ = ["c_function", "c_literal"]

_ARGUMENTS: Final = ("t", "x", "u", "p", "a")
_INFIX: Final = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_CALLS: Final = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
                 "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "exp": "exp", "log": "log", "sqrt": "sqrt",
                 "abs": "fabs", "pow": "pow", "atan2": "atan2"}


def c_literal(value: float) -> str:
    """``value`` as an exact C99 literal (hexadecimal; INFINITY, NAN from ``<math.h>``)."""
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "(-INFINITY)"
    return f"({value.hex()})" if value < 0 or (value == 0 and math.copysign(1.0, value) < 0) else value.hex()


def _expression(node: tuple[Any, ...], v: Sequence[str]) -> str:
    op, a, b = node
    if op == "const":
        return c_literal(float.fromhex(a) if isinstance(a, str) else float(a))
    if op == "leaf":
        return "t" if a == 0 else f"{_ARGUMENTS[a]}[{b}]"
    if op in _INFIX:
        return f"{v[a]} {_INFIX[op]} {v[b]}"
    if op == "neg":
        return f"-{v[a]}"
    if op == "min":
        return f"{v[a]} <= {v[b]} ? {v[a]} : {v[b]}"
    if op == "max":
        return f"{v[a]} >= {v[b]} ? {v[a]} : {v[b]}"
    if op == "step":
        return f"{v[a]} >= 0.0 ? 1.0 : 0.0"
    if op == "sign":
        return f"{v[a]} < 0.0 ? -1.0 : ({v[a]} > 0.0 ? 1.0 : {v[a]} * 0.0)"
    if op in ("pow", "atan2"):
        return f"{_CALLS[op]}({v[a]}, {v[b]})"
    if op in _CALLS:
        return f"{_CALLS[op]}({v[a]})"
    raise ValueError(f"unknown tape operation {op!r}")


def c_function(name: str, nodes: Sequence[tuple[Any, ...]], positions: Sequence[int]) -> str:
    """The C99 source of ``static void name(t, x, u, p, a, out)`` computing the nodes' ``positions`` into ``out``
    (see the module docstring). Arguments it does not read are cast to void (no unused-parameter warnings)."""
    names = [f"v{k}" for k in range(len(nodes))]
    read = {_ARGUMENTS[a] for op, a, _ in nodes if op == "leaf"}
    name = c_identifier(name)
    lines = [f"static void {name}(double t, const double *x, const double *u, const double *p, const double *a,",
             "                    double *out)", "{"]
    lines += [f"    (void){argument};" for argument in _ARGUMENTS if argument not in read]
    if not positions:
        lines.append("    (void)out;")
    for k, node in enumerate(nodes):
        lines.append(f"    const double {names[k]} = {_expression(node, names)};")
    lines += [f"    out[{j}] = {names[k]};" for j, k in enumerate(positions)]
    lines += ["}", ""]
    return "\n".join(lines)
