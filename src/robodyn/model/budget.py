"""Budgets for symbolic work that only serves display: an expression too large to print is not printed.

Printing (``sympy.sstr``, ``sympy.latex``, ``sympy.pretty``) costs time in proportion to the expression's
size (about 0.1 ms per node for ``sstr`` and ``latex``, much more for the two-dimensional ``pretty``), and a
model's equations can be arbitrarily large (a sum of thousands of terms, closed forms of a long chain). The
numbers robodyn computes never go through these printers, so an equation beyond the budget is shown as
:func:`too_large`'s placeholder instead, and everything else is still shown.

Sizes are counted by :func:`within`, a traversal that stops as soon as the budget is passed, so checking is
cheap whatever the expression.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["MAX_PRETTY_NODES", "MAX_SHOWN_NODES", "shown", "too_large", "within"]

MAX_SHOWN_NODES: Final = 20_000  # nodes of one expression printed as one-line text or LaTeX (~2 s at most)
MAX_PRETTY_NODES: Final = 2_000  # nodes of one expression drawn two-dimensionally (sympy.pretty is ~10x slower)


def within(expr: Any, limit: int) -> bool:
    """Whether ``expr`` (a sympy expression or matrix) has at most ``limit`` nodes; stops counting past it."""
    import sympy

    count = 0
    for _node in sympy.preorder_traversal(expr):
        count += 1
        if count > limit:
            return False
    return True


def too_large(limit: int = MAX_SHOWN_NODES, *, latex: bool = False) -> str:
    """The placeholder shown for an expression beyond the budget (plain text, or LaTeX ``\\text{...}``)."""
    text = f"(too large to show: more than {limit:,} operations; it is evaluated from generated code)"
    return rf"\text{{{text}}}" if latex else text


def shown(expr: Any, render: Callable[[Any], str], *, limit: int = MAX_SHOWN_NODES, latex: bool = False) -> str:
    """``render(expr)`` when ``expr`` is within ``limit`` nodes, else :func:`too_large`'s placeholder."""
    return render(expr) if within(expr, limit) else too_large(limit, latex=latex)
