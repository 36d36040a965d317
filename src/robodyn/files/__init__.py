"""Model files: YAML read safely, validated with ``file:line`` in every message, and the parsed-model cache.

- :mod:`~robodyn.files.loading` — :func:`load`, :func:`load_file`: a name, a path or a text to a model;
- :mod:`~robodyn.files.yamlio` — YAML with the line of every value;
- :mod:`~robodyn.files.reader` — a parsed document to a model (sympy; imported only when one is built), with the
  readers of ``kind: chain`` (:mod:`~robodyn.files.chain`) and ``kind: diagram`` (:mod:`~robodyn.files.diagram`)
  files;
- :mod:`~robodyn.files.catalog` — the built-in models (their YAML in ``builtin/``);
- :mod:`~robodyn.files.cached` — the parsed-model cache: a warm process needs no sympy; where a record is kept and
  under which key (:mod:`~robodyn.files.records`), what a diagram's record adds
  (:mod:`~robodyn.files.cached_diagram`), the symbol table that builds the full model on first use
  (:mod:`~robodyn.files.deferred`), and the light reader of plain first-order files (:mod:`robodyn.files.light`);
- :mod:`~robodyn.files.provided_blocks` — the diagram blocks layers above provide (the estimators: ``model: ekf``);
- :mod:`~robodyn.files.parameter_values` — new parameter values written into a model file's own text;
- :mod:`~robodyn.files.signal_text` — input signals as written on the command line (``step(0, 0, 1) + 0.5*sine(1,
  2)``), parsed without ``eval``.

The names are loaded on first use (PEP 562).
"""

from typing import TYPE_CHECKING

from robodyn.base.lazy import lazy_names

_LAZY: dict[str, str] = {
    "KINDS": "robodyn.files.loading",
    "load": "robodyn.files.loading",
    "load_file": "robodyn.files.loading",
    "model_from_document": "robodyn.files.loading",
    "model_text": "robodyn.files.loading",
    "read_model_text": "robodyn.files.loading",
    "source_stem": "robodyn.files.loading",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers: the same names, imported eagerly
    from robodyn.files.loading import (
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
