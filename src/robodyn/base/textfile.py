"""Reading the text files robodyn is given (model files, URDF, input tables) with a size limit.

The limit is checked before reading: the path must name a regular file (FIFOs, devices and folders are
refused, since ``/dev/zero`` or a pipe would be read until memory runs out) and at most ``limit + 1``
bytes are read, so a file that grows while it is read is refused too.

JSON that robodyn reads back (cache records, manifests) goes through :func:`parse_json_limited`: a size
limit before parsing and a nesting limit, so a record of ``[[[[...`` or a huge file is refused with a
reason instead of raising RecursionError or MemoryError.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from robodyn.base.errors import InputError

__all__ = ["MAX_JSON_BYTES", "MAX_JSON_DEPTH", "MAX_TEXT_BYTES", "JsonLimitError", "UnusableFile", "csv_numbers",
           "file_kind", "parse_json_limited", "read_regular", "read_text_limited"]

MAX_TEXT_BYTES: Final = 1_000_000  # Model files, URDF files and input tables are text of at most this size.
MAX_JSON_BYTES: Final = 16_000_000  # Records and manifests robodyn writes are far smaller (a sweep's grid included).
MAX_JSON_DEPTH: Final = 32  # Nesting of the JSON robodyn writes: at most 4 levels; anything deeper is not ours.


_NO_FOLLOW: Final = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))


class UnusableFile(Exception):
    """A file :func:`read_regular` does not read: a link, a FIFO, a folder or device, too large, or refused by the
    caller's check; the message says which."""


def read_regular(path: str | os.PathLike[str], limit: int,
                 check: Callable[[os.stat_result], str | None] | None = None) -> bytes | None:
    """The bytes of the regular file ``path``, None when there is none; :class:`UnusableFile` otherwise.

    Opened without following a symbolic link and without blocking on a FIFO, and checked on the open descriptor
    before a byte is read (which closes the gap between checking and reading): a regular file of at most
    ``limit`` bytes for which ``check(stat)`` (the caller's rule: an owner, permissions) returns no objection.
    At most ``limit + 1`` bytes are read, so a file that grows meanwhile is refused too. What robodyn keeps for
    itself (the cache, a sweep's folder) is read this way.
    """
    try:
        fd = os.open(path, _NO_FOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:  # ELOOP: a symbolic link
        raise UnusableFile("a symbolic link" if os.path.islink(path) else exc.strerror or str(exc)) from None
    try:
        info = os.fstat(fd)
        objection = (None if stat.S_ISREG(info.st_mode) else f"not a regular file ({file_kind(info.st_mode)})") \
            or (check(info) if check is not None else None) \
            or (f"{info.st_size} bytes, larger than the limit of {limit} bytes" if info.st_size > limit else None)
        if objection is not None:
            raise UnusableFile(objection)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:  # it grew while being read
        raise UnusableFile(f"larger than the limit of {limit} bytes")
    return data


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, from its ``st_mode`` (of ``os.lstat``: a link is named too)."""
    return ("a folder" if stat.S_ISDIR(mode) else "a symbolic link" if stat.S_ISLNK(mode) else
            "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device")


class JsonLimitError(ValueError):
    """JSON refused by :func:`parse_json_limited`: too large, nested too deeply, or not JSON; says which."""


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


def parse_json_limited(data: bytes | str, *, limit: int = MAX_JSON_BYTES, depth: int = MAX_JSON_DEPTH) -> Any:
    """The JSON value in ``data``, refused (JsonLimitError) when larger than ``limit`` bytes, nested deeper
    than ``depth`` arrays and objects, not UTF-8, or not JSON (NaN and Infinity included: they are not JSON).

    The size is checked before parsing, the nesting after (an iterative walk, bounded by the size), and the
    parser's own recursion limit is caught: no input makes this raise anything but JsonLimitError.
    """
    if len(data) > limit:
        raise JsonLimitError(f"{len(data)} bytes of JSON, more than the limit of {limit}")
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value = json.loads(text, parse_constant=_no_constant)
    except UnicodeDecodeError as exc:
        raise JsonLimitError(f"not UTF-8 text (byte {exc.start})") from None
    except RecursionError:
        raise JsonLimitError(f"JSON nested more than {depth} levels deep") from None
    except ValueError as exc:
        raise JsonLimitError(f"not JSON: {exc}") from None
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if level > depth:
            raise JsonLimitError(f"JSON nested more than {depth} levels deep")
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def csv_numbers(path: str | os.PathLike[str], header: list[str], rows: list[tuple[int, str]]) -> Any:
    """The numbers of a CSV file's data ``rows`` (line number, text) under ``header``, as a float64 array
    ``(rows, columns)``: numpy's reader first (a large file), then line by line only to name the line and column
    that is wrong (a row of another length, a value that is not a number)."""
    import io

    import numpy as np

    try:
        table = np.loadtxt(io.StringIO("\n".join(line for _, line in rows)), delimiter=",", ndmin=2)
    except ValueError:
        table = None
    if table is not None and table.shape == (len(rows), len(header)):
        return table
    for number, line in rows:
        values = line.split(",")
        if len(values) != len(header):
            raise InputError(f"{path}:{number}: {len(values)} values for the {len(header)} columns {','.join(header)}")
        for column, value in enumerate(values):
            try:
                float(value)
            except ValueError:
                raise InputError(f"{path}:{number}: column {header[column]!r}: {value.strip()!r} is not a "
                                 "number") from None
    raise InputError(f"{path}: the rows could not be read as {len(header)} numbers each")  # pragma: no cover
