"""Model files: YAML read safely, validated with ``file:line`` in every message, and the parsed-model cache.

- :mod:`~robodyn.model.files.loading` — :func:`load`, :func:`load_file`: a name, a path or a text to a model;
- :mod:`~robodyn.model.files.yamlio` — YAML with the line of every value;
- :mod:`~robodyn.model.files.reader` — a parsed document to a model (sympy; imported only when one is built);
- :mod:`~robodyn.model.files.catalog` — the built-in models;
- :mod:`~robodyn.model.files.cached` — the parsed-model cache: a warm process needs no sympy.

The names are loaded on first use (PEP 562).
"""

from typing import TYPE_CHECKING

from robodyn._lazy import lazy_names

_LAZY: dict[str, str] = {
    "KINDS": "robodyn.model.files.loading",
    "load": "robodyn.model.files.loading",
    "load_file": "robodyn.model.files.loading",
    "model_from_document": "robodyn.model.files.loading",
    "model_text": "robodyn.model.files.loading",
    "read_model_text": "robodyn.model.files.loading",
    "source_stem": "robodyn.model.files.loading",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers: the same names, imported eagerly
    from robodyn.model.files.loading import (
        KINDS,
        load,
        load_file,
        model_from_document,
        model_text,
        read_model_text,
        source_stem,
    )

__getattr__, __dir__ = lazy_names(__name__, _LAZY)

__all__ = ["KINDS", "load", "load_file", "model_from_document", "model_text", "read_model_text", "source_stem"]
