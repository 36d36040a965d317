"""Atomic file output: a file is either completely written or not touched at all.

Data is written to a temporary file in the destination folder, flushed to disk, then renamed over
the destination with :func:`os.replace` (atomic on POSIX and Windows). A failure leaves no partial file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from robodyn.errors import InputError

__all__ = ["check_output_path", "write_bytes_atomic", "write_text_atomic"]


def check_output_path(path: str | os.PathLike[str], option: str = "cannot write") -> Path:
    """Refuse, before any work is done, an output path that cannot be a file: a folder, or a path under a file."""
    target = Path(path)
    if target.is_dir():
        raise InputError(f"{option} {target} is a folder: name a file inside it, e.g. {target / 'out'}{target.suffix}")
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{option} {target}: {parent} is not a folder: choose another location")
            break
    return target


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, creating parent folders; returns the path."""
    target = check_output_path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise InputError(f"cannot write {target}: {exc.strerror or exc}: choose a writable location") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically; returns the path."""
    return write_bytes_atomic(path, text.encode("utf-8"))
