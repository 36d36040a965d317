"""How results show themselves: HTML, LaTeX and SVG for notebooks and the report.

- :mod:`robodyn.display.html` — escaping, numbers, tables, matrices, inline plots, a result's HTML;
- :mod:`robodyn.display.formulas` — a model's equations simplified for reading and typeset as SVG;
- :mod:`robodyn.display.cache` — the private cache of what took long to typeset.

Objects display themselves by asking for these pieces; nothing here knows a model's kind or class.
"""

from robodyn.display.html import *  # noqa: F403 - the package's names are its HTML module's
from robodyn.display.html import __all__ as __all__
