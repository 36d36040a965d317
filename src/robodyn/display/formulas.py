"""A model's equations for people: simplified, term by term, typeset as SVG without a network or JavaScript.

:func:`formulas` gives what ``robodyn show``, the report and notebooks display:

- the equations of motion, one per line (``latex_lines`` of the model), or for second-order models with closed
  forms the structure M(q) q'' + C(q, q') q' + g(q) = Q and then
- each nonzero entry of M(q) (the upper triangle: M is symmetric), C(q, q') q', g(q) and Q on its own line,
  simplified by ``trigsimp(expand(...))`` (robodyn.base.budget: entries above ``MAX_SIMPLIFIED_NODES`` nodes are
  shown as they are, and all of a model's simplification stops after ``SIMPLIFY_SECONDS``), with floats that are
  whole numbers written as integers (``1.0*l1`` is ``l1``).

:func:`svg` typesets one LaTeX line with matplotlib's mathtext (Computer Modern, text as paths: no fonts to
load): the page needs nothing but the SVG, and the LaTeX source stays in the SVG's ``<title>`` and ``aria-label``.
What mathtext cannot typeset is shown as its text. Only for display: nothing numeric reads these expressions.
"""

from __future__ import annotations

import functools
import html
import io
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["MAX_TYPESET", "Formula", "formulas", "formulas_html", "svg"]

FONT_SIZE: Final = 13  # points, of typeset formulas
MAX_TYPESET: Final = 40  # formulas typeset on a page (~0.1 s each); the others are listed as text below them
MAX_WIDTH: Final = 1400.0  # points: a wider line would shrink below ~60 % of its size in the page's column
MAX_TEXT: Final = 400  # characters of a line's text beyond which it is not typeset (it would be wider than that)


@dataclass(frozen=True, slots=True)
class Formula:
    """One displayed line: ``text`` for terminals (``M[shoulder, elbow] = ...``), ``latex`` to typeset;
    ``group`` names the term it belongs to (``"M(q)"``; empty for the equations of motion)."""

    group: str
    text: str
    latex: str


def formulas(model: Any) -> tuple[Formula, ...]:
    """The equations and terms of ``model`` to display (see the module docstring), kept in the model's memo.

    Empty when the model has no symbolic equations (a plain Python callable, a large chain): show its
    ``show_text()`` instead.
    """
    memo = model.memo()
    if "formulas" not in memo:
        memo["formulas"] = _build(model)
    return memo["formulas"]


def _build(model: Any) -> tuple[Formula, ...]:

    from robodyn.display.latex import latex_name

    terms = model.equation_terms()
    if not terms:  # first-order models: their equations, line by line (the text is show_text's)
        return tuple(Formula("", "", latex) for latex in model.latex_lines() or ())
    n = model.n_states // 2
    coordinates = model.states[:n]
    parts = [_TERMS.get(group, (group, group, group, group)) for group, _ in terms]
    result = [Formula("", " + ".join(p[2] for p in parts[:-1]) + " = " + parts[-1][2],
                      " + ".join(p[3] for p in parts[:-1]) + " = " + parts[-1][3])]  # the right-hand side is last
    deadline = time.perf_counter() + _seconds()
    for (group, matrix), (symbol, latex_symbol, _, _) in zip(terms, parts):
        for i in range(matrix.rows):
            for j in range(matrix.cols):
                if (matrix.cols > 1 and j < i) or matrix[i, j] == 0:
                    continue  # M is symmetric: its upper triangle; zeros are left out
                index = [coordinates[i]] + ([coordinates[j]] if matrix.cols > 1 else [])
                entry = _entry(matrix[i, j], deadline)
                text = f"{symbol}[{', '.join(index)}] = {entry['text']}"
                latex = f"{latex_symbol}_{{{','.join(latex_name(c) for c in index)}}} = {entry['latex']}"
                result.append(Formula(group, text, latex))
    return tuple(result)


def _entry(expr: Any, deadline: float) -> Mapping[str, str]:
    """The text and LaTeX of one entry, simplified (kept in the display cache once simplified in full)."""
    import sympy

    from robodyn.base.budget import shown
    from robodyn.display.cache import remembered
    from robodyn.display.latex import latex_name, latex_of

    def compute(final: bool) -> dict[str, str] | None:
        simpler, complete = _readable(expr, deadline)
        if not (complete or final):
            return None  # the time ran out: shown as it is, and simplified again another time
        names = {s: latex_name(s.name) for s in simpler.free_symbols}
        return {"text": shown(simpler, sympy.sstr),
                "latex": shown(simpler, functools.partial(latex_of, names=names), latex=True)}

    kept = remembered("entry", (sympy.srepr(expr),), lambda: compute(False))
    return kept if kept is not None else compute(True)  # type: ignore[return-value]


def _seconds() -> float:
    from robodyn.base.budget import SIMPLIFY_SECONDS

    return SIMPLIFY_SECONDS


# The terms models name (robodyn.model.kinds.mechanical): entry symbol (text, LaTeX), and the term in the equation's
# structure (text, LaTeX); the last term of a model is its right-hand side.
_TERMS: Final = {
    "M(q)": ("M", "M", "M(q) q''", r"M(q)\,\ddot{q}"),
    "C(q, q') q'": ("(C q')", r"(C\dot{q})", "C(q, q') q'", r"C(q, \dot{q})\,\dot{q}"),
    "g(q)": ("g", "g", "g(q)", "g(q)"),
    "Q": ("Q", "Q", "Q", "Q"),
    "M": ("M", "M", "M q''", r"M\,\ddot{q}"),
    "B q' (damping)": ("(B q')", r"(B\dot{q})", "B q'", r"B\,\dot{q}"),
    "K q (stiffness)": ("(K q)", "(Kq)", "K q", "K q"),
    "F u": ("(F u)", "(Fu)", "F u", "F u"),
}


def _readable(expr: Any, deadline: float) -> tuple[Any, bool]:
    """``expr`` with whole-number floats as integers, simplified when small and while time is left; and whether
    that is the final answer (False: the time ran out before or during the simplification)."""
    import sympy

    from robodyn.base.budget import MAX_SIMPLIFIED_NODES, OverBudget, time_limit, within

    expr = _whole_numbers(expr)
    if not within(expr, MAX_SIMPLIFIED_NODES) or not _worth_simplifying(expr):
        return expr, True
    left = deadline - time.perf_counter()
    if left <= 0:
        return expr, False
    try:
        with time_limit(left):
            simpler = _whole_numbers(sympy.trigsimp(sympy.expand(expr)))
    except OverBudget:
        return expr, False
    return (simpler if sympy.count_ops(simpler) <= sympy.count_ops(expr) else expr), True


def _worth_simplifying(expr: Any) -> bool:
    """Whether trigonometric simplification can shorten ``expr``: trigonometric functions inside a sum or a power
    (``sin(q)**2 + cos(q)**2``, ``(l cos q + c)**2``); a product of symbols and one ``sin`` is as short as it gets."""
    import sympy

    trig = expr.atoms(sympy.sin, sympy.cos, sympy.tan)
    return bool(trig) and any(node.is_Add or node.is_Pow for node in sympy.preorder_traversal(expr)
                              if node.has(*trig) and node not in trig)


def _whole_numbers(expr: Any) -> Any:
    """``expr`` with the floats that are whole numbers as integers (the tape's ``1.0*l1`` is ``l1``)."""
    import sympy

    whole = {f: sympy.Integer(int(f)) for f in expr.atoms(sympy.Float) if float(f).is_integer()}
    return expr.xreplace(whole) if whole else expr


def svg(latex: str, *, size: float = FONT_SIZE) -> str | None:
    """One line of LaTeX typeset as an inline ``<svg>`` element (its source in ``<title>``), or None when
    matplotlib's mathtext cannot typeset it (kept in the display cache: robodyn.display.cache)."""
    from importlib.metadata import version

    from robodyn.display.cache import remembered

    kept = remembered("svg", (latex, repr(float(size)), version("matplotlib")),
                      lambda: {"svg": _typeset(latex, size) or ""})
    return (kept or {}).get("svg") or None


def _typeset(latex: str, size: float) -> str | None:
    import matplotlib
    from matplotlib.figure import Figure

    buffer = io.StringIO()
    try:
        with matplotlib.rc_context({"mathtext.fontset": "cm", "svg.fonttype": "path"}):
            figure = Figure(figsize=(0.01, 0.01))
            figure.text(0, 0, f"${latex}$", fontsize=size)
            figure.savefig(buffer, format="svg", bbox_inches="tight", pad_inches=0.02, transparent=True,
                           metadata={"Date": None})
    except ValueError:  # mathtext's parser refused the expression
        return None
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    title = html.escape(latex, quote=True)
    text = text.replace("<svg ", f'<svg role="img" aria-label="{title}" ', 1)
    return re.sub(r"(<svg[^>]*>)", lambda match: f"{match.group(1)}<title>{title}</title>", text, count=1)


def _fits(formula: Formula) -> str | None:
    """The typeset line when it fits the page (at most MAX_WIDTH points wide; a longer text is not typeset at all:
    about 5 points a character), else None."""
    if len(formula.text or formula.latex) > MAX_TEXT:
        return None
    picture = svg(formula.latex)
    if picture is None:
        return f"<pre>{html.escape(formula.text or formula.latex)}</pre>"
    width = re.search(r'width="([\d.]+)pt"', picture)
    if width is not None and float(width.group(1)) > MAX_WIDTH:
        return None
    return f'<div class="formula">{picture}</div>'


def _too_long(group: str, names: list[str], longest: int) -> str:
    """What the page says instead of the entries of ``group`` that do not fit, and how to get them."""
    where = f"{', '.join(names[:4])}{', ...' if len(names) > 4 else ''}"
    evaluate = " and model.mass_matrix(q) evaluates M at a configuration" if group.startswith("M") else ""
    return (f'<p class="note">{html.escape(group or "The equations")}: {len(names)} entr'
            f'{"y is" if len(names) == 1 else "ies are"} too long to show here ({html.escape(where)}; up to {longest} '
            f"characters as text, unsimplified): robodyn show MODEL prints them in full{evaluate}.</p>")


def formulas_html(model: Any) -> str:
    """The formulas of ``model`` as HTML: one typeset line each, grouped under their term's name (the text form
    where a line cannot be typeset), or the model's ``show_text()`` when it has no symbolic equations. An entry too
    long to read on the page (typeset, it would shrink to a hairline) is not shown: a note names it and says how
    to get it."""
    shown = formulas(model)
    if not shown:
        return f"<pre>{html.escape(model.show_text())}</pre>"
    parts: list[str] = []
    group = None
    skipped: list[Formula] = []

    def flush() -> None:
        if skipped:
            names = [(f.text or f.latex).split(" = ", 1)[0][:60] for f in skipped]
            parts.append(_too_long(skipped[0].group, names, max(len(f.text or f.latex) for f in skipped)))
            skipped.clear()

    for formula in shown[:MAX_TYPESET]:
        if formula.group != group:
            flush()
            group = formula.group
            if group:
                parts.append(f"<h4>{html.escape(group)}</h4>")
        line = _fits(formula)
        if line is None:
            skipped.append(formula)
        else:
            parts.append(line)
    flush()
    rest = shown[MAX_TYPESET:]
    if rest:
        lines = "\n".join(f.text or f.latex for f in rest)
        parts.append(f"<p>The other {len(rest)} entries (of {len(shown)}), as text:</p><pre>{html.escape(lines)}</pre>")
    return "".join(parts)
