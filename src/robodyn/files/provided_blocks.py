"""Diagram blocks that layers above the files provide: ``model: ekf`` in a diagram file, made by
``robodyn.control.estimation.blocks.ekf``.

The files layer may not import the control layer (tests/test_layers.py), yet a diagram file names its estimators
like the library's blocks. The api layer (``robodyn/__init__.py``, run before any robodyn module) registers each
such block here with :func:`provide_block`: its name and a loader, a function of no arguments defined above that
imports the factory when a file first uses it. :mod:`robodyn.files.diagram` asks :func:`provided_block`. A provided
block's factory takes the plant as its first argument, ``plant``: the diagram reader resolves it as it resolves a
block (a catalog name, a file relative to the diagram's, a model written in).

This module imports nothing: it is loaded when ``robodyn`` is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["provide_block", "provided_block", "provided_names", "provided_text"]

_LOADERS: dict[str, Callable[[], Callable[..., Any]]] = {}
_TEXT: dict[str, tuple[str, ...]] = {}


def provide_block(name: str, loader: Callable[[], Callable[..., Any]], text: tuple[str, ...] = ()) -> None:
    """Register the block ``name`` (``model: name`` of a diagram file) made by the factory ``loader()`` returns;
    ``text``: its parameters that are words (a method's name), passed as written where the others are read as
    numbers."""
    _LOADERS[name] = loader
    _TEXT[name] = tuple(text)


def provided_text(name: str) -> tuple[str, ...]:
    """The parameters of the provided block ``name`` that are words (none for a name no layer provides)."""
    return _TEXT.get(name, ())


def provided_block(name: str) -> Callable[..., Any] | None:
    """The factory of the provided block ``name``, or None when no layer provides one."""
    loader = _LOADERS.get(name)
    return None if loader is None else loader()


def provided_names() -> tuple[str, ...]:
    """The provided blocks' names, sorted."""
    return tuple(sorted(_LOADERS))
