"""SHA-256, without loading OpenSSL for the small files a warm process checks.

Every file robodyn keeps in its cache is checked against its SHA-256 before it is used (the parsed-model record,
the machine code, the libraries). :mod:`hashlib` loads OpenSSL's bindings (~4 ms of a new process's start); the
few kilobytes a warm ``robodyn simulate`` checks are hashed as fast by CPython's built-in SHA-256, which needs no
library. Larger data (a big robot's machine code) goes to :mod:`hashlib`, whose OpenSSL code is several times
faster per byte. The digests are the same either way: SHA-256 is one function.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["LARGE_BYTES", "sha256", "sha256_hex"]

#: Data of at least this many bytes is hashed by :mod:`hashlib` (OpenSSL), smaller data by the built-in module.
LARGE_BYTES: Final = 1 << 20

try:  # CPython's own implementation: _sha256 in 3.11, _sha2 from 3.12
    from _sha256 import sha256 as _builtin
except ImportError:  # pragma: no cover - other Pythons
    try:
        from _sha2 import sha256 as _builtin
    except ImportError:
        _builtin = None


def sha256(data: bytes = b"") -> Any:
    """A SHA-256 hash object (``update``, ``digest``, ``hexdigest``) started with ``data``."""
    if _builtin is None or len(data) >= LARGE_BYTES:
        import hashlib

        return hashlib.sha256(data)
    return _builtin(data)


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` in hexadecimal."""
    return str(sha256(data).hexdigest())
