"""Kept results of display-only work: simplified equation entries and typeset formulas, in the private cache.

Simplifying the terms of a two-link arm takes about a second and typesetting a formula a tenth of one; a report
of the same model is often made again. :func:`remembered` keeps each result as a JSON file of strings in
``<cache>/pyXY/display/<key>.json`` (robodyn.codegen.kept: the key the SHA-256 of what was computed — the
expression's text, the LaTeX and the font size, the versions of robodyn and matplotlib —, the entry read through
``read_trusted``, at most :data:`MAX_ENTRY_BYTES`, its SHA-256 checked); the strings are only shown — escaped in
HTML, or an SVG robodyn wrote — and never evaluated. A damaged entry is moved aside and computed again; a cache that
cannot be written only costs the work next time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

__all__ = ["MAX_ENTRY_BYTES", "remembered"]

MAX_ENTRY_BYTES: Final = 4_000_000  # one entry: a typeset formula's SVG is ~20 kB, a long one ~1 MB
FORMAT: Final = "1"


def remembered(kind: str, parts: tuple[str, ...], compute: Callable[[], Mapping[str, str] | None],
               ) -> Mapping[str, str] | None:
    """``compute()``'s strings for ``(kind, parts)``, from the cache when kept there, else computed and kept (a
    result of None is not kept: it may be a time budget that ran out); robodyn.codegen.kept keeps them."""
    from robodyn.codegen.kept import kept

    found: Mapping[str, str] | None = kept("display", kind, (FORMAT, *parts), lambda: _plain(compute()), _all_text,
                                           MAX_ENTRY_BYTES)
    return found


def _plain(value: Mapping[str, str] | None) -> dict[str, str] | None:
    return None if value is None else dict(value)


def _all_text(value: object) -> bool:
    """Whether ``value`` maps text to text (what an entry holds)."""
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
