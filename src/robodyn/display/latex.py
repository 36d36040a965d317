"""LaTeX for robodyn's names and expressions: ``theta_dot`` -> ``\\dot{\\theta}``, factors set apart.

Shared by a model's ``latex_text()`` and the typeset equations (:mod:`robodyn.display.formulas`). sympy is
imported only when an expression is printed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["latex_name", "latex_of"]


def latex_name(name: str) -> str:
    """LaTeX for a robodyn name: ``theta`` -> ``\\theta``, ``q_dot`` -> ``\\dot{q}``, ``x1`` -> ``x_{1}``,
    ``elbow`` -> ``\\mathrm{elbow}`` (a name of several letters is one upright word, not a product of italic
    letters), ``lc2`` -> ``\\mathrm{lc}_{2}``, ``q_ref`` -> ``q_{\\mathrm{ref}}``."""
    dots = 0
    while name.endswith("_dot") and len(name) > 4:
        name, dots = name[:-4], dots + 1
    head, _, sub = name.strip("_").partition("_")
    if not sub:
        match = re.fullmatch(r"(.*?[A-Za-z])(\d+)", head)
        head, sub = (match.group(1), match.group(2)) if match else (head, "")
    parts = [_latex_word(part) for part in sub.split("_") if part]
    base = _latex_word(head) + (f"_{{{','.join(parts)}}}" if parts else "")
    if dots == 0:
        return base
    accent = {1: r"\dot", 2: r"\ddot"}.get(dots, r"\dddot")
    return f"{accent}{{{base}}}"


def latex_of(expr: Any, names: Mapping[Any, str]) -> str:
    """LaTeX of ``expr`` with the symbols' LaTeX ``names`` (:func:`latex_name`), factors separated by a thin space
    (``l_{1}\\,\\mathrm{lc}_{2}``: names of several letters would run together)."""
    import sympy

    return sympy.latex(expr, symbol_names=dict(names), mul_symbol=r"\,")


def _latex_word(word: str) -> str:
    """One part of a name: digits and single letters as they are, Greek letters by name, words upright."""
    from sympy.printing.latex import tex_greek_dictionary

    if word.isdigit() or len(word) == 1:
        return word
    greek = tex_greek_dictionary.get(word) or (f"\\{word}" if word.lower() in _GREEK else None)
    return greek if greek is not None else r"\mathrm{" + word.replace("_", r"\_") + "}"


_GREEK: Final = frozenset(("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
                           "sigma tau upsilon phi chi psi omega").split())
