"""How results show themselves: HTML, LaTeX and SVG for notebooks and the report, plain text for terminals.

- :mod:`robodyn.display.html` — escaping, numbers, tables, matrices, inline plots, a result's HTML (the package's
  names are its names);
- :mod:`robodyn.display.text` — labelled matrices and numbers as plain text, as ``robodyn linearize`` prints them;
- :mod:`robodyn.display.latex` — LaTeX for robodyn's names and expressions (``theta_dot`` -> ``\\dot{\\theta}``);
- :mod:`robodyn.display.formulas` — a model's equations simplified for reading and typeset as SVG;
- :mod:`robodyn.display.cache` — the private cache of what took long to typeset;
- :mod:`robodyn.display.figures` — text on matplotlib figures: model names shown literally, plain log labels;
- :mod:`robodyn.display.page` — the pieces of robodyn's HTML pages: numbers as people read them, tables, matrices,
  figures, strict JSON.

Objects display themselves by asking for these pieces; nothing here knows a model's kind or class.
"""

from robodyn.display.html import *  # noqa: F403 - the package's names are its HTML module's
from robodyn.display.html import __all__ as __all__
