"""Budgets for symbolic work that only serves display: an expression too large to print is not printed.

Printing (``sympy.sstr``, ``sympy.latex``, ``sympy.pretty``) costs time in proportion to the expression's
size (about 0.1 ms per node for ``sstr`` and ``latex``, much more for the two-dimensional ``pretty``), and a
model's equations can be arbitrarily large (a sum of thousands of terms, closed forms of a long chain). The
numbers robodyn computes never go through these printers, so an equation beyond the budget is shown as
:func:`too_large`'s placeholder instead, and everything else is still shown.

Sizes are counted by :func:`within`, a traversal that stops as soon as the budget is passed, so checking is
cheap whatever the expression. Work whose time cannot be told from the size (simplification) also runs under
:func:`time_limit`: in the main thread, a timer interrupts it after the stated seconds and the expression is
shown as it was; elsewhere (threads, where no timer can interrupt) the size limits alone bound it.

Work whose size the input sets (the blocks a diagram expands to, the sample instants of a run, the steps of a
fixed-step method) is bounded before it starts: :func:`check_count` compares the count, computed as a float
from the input alone (it may be huge or infinite), with the limit and raises an InputError naming the quantity,
the limit and the fix. Each limit is a named constant beside the code it guards, with the reason for its value.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any, Final

from robodyn.base.errors import InputError

__all__ = ["MAX_PRETTY_NODES", "MAX_SHOWN_NODES", "MAX_SIMPLIFIED_NODES", "SIMPLIFY_SECONDS", "OverBudget",
           "check_count", "shown", "time_limit", "too_large", "within"]

MAX_SHOWN_NODES: Final = 20_000  # nodes of one expression printed as one-line text or LaTeX (~2 s at most)
MAX_PRETTY_NODES: Final = 2_000  # nodes of one expression drawn two-dimensionally (sympy.pretty is ~10x slower)
MAX_SIMPLIFIED_NODES: Final = 600  # nodes of one expression worth simplifying for display (trigsimp: ~0.1-0.4 s)
SIMPLIFY_SECONDS: Final = 2.0  # time for simplifying all the terms of one model for display


class OverBudget(Exception):
    """Raised inside :func:`time_limit` when its time is up (caught by the code that set the limit)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block with :class:`OverBudget` after ``seconds`` of wall time.

    Only in the main thread of a process whose real-time timer and SIGALRM handler are unused (a timer is
    the only way to interrupt pure-Python work such as sympy's); elsewhere the block runs to its end, and the
    caller's size limits bound it.
    """
    usable = (threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
              and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
              and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None))
    if not usable:
        yield
        return

    def expire(_signum: int, _frame: Any) -> None:
        raise OverBudget(f"more than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)


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


def check_count(count: float, limit: int, what: str, fix: str, where: str = "") -> int:
    """``count`` (of ``what``: "sample instants", "leaf blocks"), counted before the work it measures, as an int;
    InputError "``where``: ``what`` would be ``count``, more than the limit of ``limit``: ``fix``" when it is larger
    than ``limit`` or not a finite number (a count computed as a float may overflow to inf or be NaN)."""
    if not count <= limit:  # also NaN
        shown = f"{count:,.0f}" if math.isfinite(count) and count < 1e15 else f"{count:.3g}"
        prefix = f"{where}: " if where else ""
        raise InputError(f"{prefix}{what} would be {shown}, more than the limit of {limit:,}: {fix}")
    return int(count)
