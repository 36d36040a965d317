"""Kept results: what a pure computation gave, as JSON data in the private cache, keyed by what it was computed from.

Some work a command repeats gives the same answer every time and costs far more than reading it back: typesetting a
formula (robodyn.display.cache), or a loop's margins, which import python-control (a second of a command's start-up)
for a polynomial computation of microseconds. :func:`kept` returns ``compute()``'s value from
``<cache>/pyXY/<folder>/<key>.json`` when it is there and passes ``check``, else computes it and keeps it. The key is
the SHA-256 of the kind, robodyn's version and every part the caller names (the inputs' bytes, the versions of the
libraries that computed it, a fingerprint of the code).

Like every cache file (docs/dev/security.md) an entry is read through ``read_trusted`` (a regular file of the user,
at most ``limit`` bytes), parsed with limits (no NaN or Infinity, 32 levels), must carry the SHA-256 of its content
and pass the caller's ``check`` of every field; anything else is moved aside and computed again. Entries are data,
never code. A cache that cannot be written only costs the work next time.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from robodyn.base.version import __version__

__all__ = ["FORMAT", "code_fingerprint", "enabled", "kept", "library_stamp"]

FORMAT: Final = "1"
_PACKAGE: Final = Path(__file__).resolve().parents[1]  # robodyn/


def enabled() -> bool:
    """Whether results of analyses (a report's sections, a loop's margins) are kept and read back: not with
    ``ROBODYN_KEPT=0``, which computes them every time (typeset formulas stay kept: robodyn.display.cache)."""
    return os.environ.get("ROBODYN_KEPT") != "0"


def kept(folder: str, kind: str, parts: Sequence[str], compute: Callable[[], Any], check: Callable[[Any], bool],
         limit: int) -> Any:
    """``compute()``'s value for ``(kind, parts)`` — JSON data — from the cache folder ``folder`` when kept there
    and ``check`` accepts it, else computed and kept (a value of None is returned but not kept). An exception of
    ``compute`` propagates and nothing is kept."""
    from robodyn.base.digest import sha256
    from robodyn.base.errors import InputError
    from robodyn.base.textfile import JsonLimitError, parse_json_limited
    from robodyn.codegen.cache import cache_dir, content_hash, own_folder, quarantine, read_trusted, write_private

    try:
        path = own_folder(cache_dir(numba_code=False) / folder) / (
            content_hash("robodyn kept", FORMAT, __version__, kind, *parts) + ".json")
    except InputError:  # no usable cache: compute
        return compute()
    data = read_trusted(path, limit)
    if data is not None:
        try:
            wrapper = parse_json_limited(data, limit=limit)
            if not (isinstance(wrapper, dict) and set(wrapper) == {"sha256", "value"}):
                raise JsonLimitError("not a kept result")
            if wrapper["sha256"] != sha256(_text(wrapper["value"])).hexdigest():
                raise JsonLimitError("its content does not match its SHA-256")
            if not check(wrapper["value"]):
                raise JsonLimitError("a field of the wrong type or size")
            return wrapper["value"]
        except JsonLimitError as exc:
            quarantine(path, str(exc))
    value = compute()
    if value is not None:
        write_private(path, json.dumps({"sha256": sha256(_text(value)).hexdigest(), "value": value}).encode())
    return value


def _text(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=True, allow_nan=False).encode()


@functools.cache
def code_fingerprint() -> str:
    """SHA-256 of every Python source of robodyn (its path and bytes): results whose code is all of robodyn (a
    report's sections) are kept under it, so that any change of the code computes them again (~10 ms, once)."""
    from robodyn.base.digest import sha256

    digest = sha256(b"robodyn sources")
    for path in sorted(_PACKAGE.rglob("*.py")):
        data = path.read_bytes()
        digest.update(f"{path.relative_to(_PACKAGE).as_posix()}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def library_stamp(*names: str) -> str:
    """What the installed libraries ``names`` are, found without importing them: each distribution's ``.dist-info``
    folder name (its version) beside the package, else the package's ``__init__.py`` size and time; ``-`` for one
    that is missing. Part of a key, so that an upgrade computes a kept result again."""
    import importlib.util

    stamps = []
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None or spec.origin is None:
            stamps.append(f"{name}=-")
            continue
        origin = Path(spec.origin)
        found = [entry for entry in _listing(str(origin.parent.parent))
                 if entry.startswith(f"{name}-") and entry.endswith(".dist-info")]
        if found:
            stamps.append(" ".join(sorted(found)))
        else:
            status = origin.stat()
            stamps.append(f"{origin}:{status.st_size}:{status.st_mtime_ns}")
    return "\n".join(stamps)


@functools.cache
def _listing(folder: str) -> tuple[str, ...]:
    try:
        return tuple(os.listdir(folder))
    except OSError:
        return ()
