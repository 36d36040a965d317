"""robodyn's version: one string, the same as ``[project] version`` in pyproject.toml.

It lives at the bottom of the layers so that any module may stamp it (cache records, C headers, sweep manifests,
``robodyn --version``) without importing the root package, which names every public module; the root re-exports
it as ``robodyn.__version__``.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
