"""Reading the text files robodyn is given (model files, URDF, input tables) with a size limit.

The limit is checked before reading: the path must name a regular file (FIFOs, devices and folders are
refused, since ``/dev/zero`` or a pipe would be read until memory runs out) and at most ``limit + 1``
bytes are read, so a file that grows while it is read is refused too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from robodyn.errors import InputError

__all__ = ["MAX_TEXT_BYTES", "read_text_limited"]

MAX_TEXT_BYTES: Final = 1_000_000  # Model files, URDF files and input tables are text of at most this size.


def read_text_limited(path: str | os.PathLike[str], what: str, *, limit: int = MAX_TEXT_BYTES,
                      encoding: str = "utf-8", error: type[InputError] = InputError) -> str:
    """The text of the regular file ``path`` (``what`` names it in messages: "model file", "table").

    Raises ``error`` for a missing file, one that is not a regular file, one larger than ``limit`` bytes,
    and one that is not text in ``encoding``.
    """
    file = Path(path)
    try:
        with open(file, "rb", buffering=0, opener=_open_nonblocking) as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise error(f"{file}: not a regular file (a folder, pipe or device): give the path of a {what}")
            if info.st_size > limit:
                raise error(f"{file}: {what} of {info.st_size} bytes, larger than the limit of {limit} bytes: "
                            f"is it a {what}?")
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise error(f"{file}: no such file: cannot read {what} {file}: check the path") from None
    except IsADirectoryError:
        raise error(f"{file}: is a folder: give the path of a {what}") from None
    except OSError as exc:
        raise error(f"{file}: cannot read {what} {file}: {exc.strerror or exc}: check the path") from None
    if len(data) > limit:
        raise error(f"{file}: {what} larger than the limit of {limit} bytes: is it a {what}?")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise error(f"{file}: cannot read {what} {file}: not {encoding.upper()} text (byte {exc.start}): "
                    "save it as text") from None


def _open_nonblocking(name: str, flags: int) -> int:
    """Open without blocking on a FIFO with no writer (it is refused right after by the S_ISREG check)."""
    return os.open(name, flags | getattr(os, "O_NONBLOCK", 0))
