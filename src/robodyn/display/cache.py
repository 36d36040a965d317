"""Kept results of display-only work: simplified equation entries and typeset formulas, in the private cache.

Simplifying the terms of a two-link arm takes about a second and typesetting a formula a tenth of one; a report
of the same model is often made again. :func:`remembered` keeps each result as a JSON file of strings in
``<cache>/pyXY/display/<key>.json``, the key the SHA-256 of what was computed (the expression's text, the LaTeX
and the font size, the versions of robodyn and matplotlib). Like every cache file it is read through
``robodyn.codegen.cache.read_trusted`` (a regular file of the user, at most :data:`MAX_ENTRY_BYTES`) and parsed
with limits; the strings are only shown — escaped in HTML, or an SVG robodyn wrote — and never evaluated. A
damaged entry is moved aside and computed again; a cache that cannot be written only costs the work next time.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Final

__all__ = ["MAX_ENTRY_BYTES", "remembered"]

MAX_ENTRY_BYTES: Final = 4_000_000  # one entry: a typeset formula's SVG is ~20 kB, a long one ~1 MB
FORMAT: Final = "1"


def remembered(kind: str, parts: tuple[str, ...], compute: Callable[[], Mapping[str, str] | None],
               ) -> Mapping[str, str] | None:
    """``compute()``'s strings for ``(kind, parts)``, from the cache when kept there, else computed and kept (a
    result of None is not kept: it may be a time budget that ran out)."""
    from robodyn import __version__
    from robodyn.codegen.cache import cache_dir, content_hash, own_folder, quarantine, read_trusted, write_private
    from robodyn.errors import InputError
    from robodyn.textfile import JsonLimitError, parse_json_limited

    try:
        path = own_folder(cache_dir(numba_code=False) / "display") / (
            content_hash("robodyn display", FORMAT, __version__, kind, *parts) + ".json")
    except InputError:  # no usable cache: compute
        return compute()
    data = read_trusted(path, MAX_ENTRY_BYTES)
    if data is not None:
        try:
            value = parse_json_limited(data, limit=MAX_ENTRY_BYTES, depth=2)
            if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
                return value
            raise JsonLimitError("not a mapping of text")
        except JsonLimitError as exc:
            quarantine(path, str(exc))
    result = compute()
    if result is not None:
        write_private(path, json.dumps(dict(result)).encode())
    return result
