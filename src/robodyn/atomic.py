"""Atomic file output: a file is either completely written or not touched at all.

Data is written to a temporary file in the destination folder, flushed to disk, then renamed over
the destination with :func:`os.replace` (atomic on POSIX and Windows). A failure leaves no partial file.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Final, TypeVar

from robodyn.errors import InputError

__all__ = ["check_output_folder", "check_output_path", "path_component", "rename_aside", "write_bytes_atomic",
           "write_text_atomic"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")
MAX_COMPONENT: Final = 100  # characters of a file or folder name derived from a model's name


def path_component(name: str, fallback: str = "model") -> str:
    """``name`` (a model's name, free text) reduced to one safe file or folder name.

    Characters other than letters, digits and ``_ . + -`` become ``_``; leading dots, dashes and underscores are dropped
    (no ``..``, no hidden files, nothing read as an option); at most :data:`MAX_COMPONENT` characters. A name
    with nothing left (``".."``, ``"/"``) gives ``fallback``. The result never contains a path separator.
    """
    text = _UNSAFE.sub("_", str(name)).lstrip("._-")[:MAX_COMPONENT].rstrip(".")
    return text if text.strip("_") else fallback


def _existing_ancestor(target: Path, option: str) -> Path:
    """The nearest existing ancestor of the missing ``target``: it must be a folder."""
    for parent in target.parents:
        if os.path.lexists(parent):
            if not parent.is_dir():
                raise InputError(f"{option} {target}: {parent} is not a folder: choose another location")
            return parent
    return Path(".")


_T = TypeVar("_T")
_CREATE: Final = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _exclusive(folder: Path, prefix: str, suffix: str, make: Callable[[str], _T]) -> tuple[_T, str]:
    """``make(path)`` for a new random name in ``folder`` (``make`` fails with FileExistsError when the name is
    taken: another is tried). What ``tempfile.mkstemp`` and ``mkdtemp`` do, without importing tempfile (with its
    shutil, random, bz2 and lzma: ~6 ms of every command's start-up)."""
    for _ in range(100):
        path = os.path.join(folder, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return make(path), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {folder}")


def rename_aside(path: Path) -> Path | None:
    """Rename the unusable file or folder ``path`` to ``<name>.broken-<time>-<pid>`` (``.1``, ``.2``, ... when that is
    taken; a symbolic link is renamed itself, never its target) and return the new path, or None when ``path`` is
    gone already. Other failures raise OSError for the caller to report (the cache warns, a sweep refuses)."""
    import time

    stamp = f"{path.name}.broken-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    aside, n = path.with_name(stamp), 0
    while os.path.lexists(aside):
        n += 1
        aside = path.with_name(f"{stamp}.{n}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return None
    return aside


def _new_file(folder: Path, prefix: str, suffix: str) -> tuple[int, str]:
    """A new file, opened for writing (owner-only until chmod), as ``tempfile.mkstemp``: (descriptor, path)."""
    return _exclusive(folder, prefix, suffix, lambda path: os.open(path, _CREATE, 0o600))


def _probe(folder: Path, target: Path, option: str) -> None:
    """Refuse ``target`` unless something can be created in ``folder`` (a read-only or virtual file system,
    missing permissions): a temporary folder is made and removed, nothing else is touched."""
    try:
        os.rmdir(_exclusive(folder, ".robodyn-probe-", "", lambda path: os.mkdir(path, 0o700))[1])
    except OSError as exc:
        raise InputError(f"{option} {target}: cannot write in {folder}: {exc.strerror or exc}: choose a writable "
                         "location") from None


def _check_special(target: Path, option: str, what: str) -> None:
    """Refuse a path that exists as something other than a regular file or folder: a device, a FIFO, a socket, a
    link to nothing (writing would replace the device, block on the FIFO or create the link's target)."""
    try:
        info = os.lstat(target)
    except (FileNotFoundError, NotADirectoryError):  # missing, or under a file: the ancestor check says which
        return
    except OSError as exc:
        raise InputError(f"{option} {target}: {exc.strerror or exc}: choose another location") from None
    if stat.S_ISLNK(info.st_mode) and not target.exists():
        raise InputError(f"{option} {target} is a symbolic link to nothing: remove it or choose another name")
    if target.exists() and not (target.is_file() or target.is_dir()):
        raise InputError(f"{option} {target} is a device, pipe or socket: name a {what}")


def check_output_path(path: str | os.PathLike[str], option: str = "cannot write", *, probe: bool = True) -> Path:
    """Refuse, before any work is done, an output path that cannot be a file: a folder, a path under a file, a
    device, pipe or dangling link, or (``probe``) a location where nothing can be created."""
    target = Path(path)
    if str(path) == "":
        raise InputError(f"{option}: the path is empty: name a file")
    _check_special(target, option, "file")
    if target.is_dir():
        raise InputError(f"{option} {target} is a folder: name a file inside it, e.g. {target / 'out'}{target.suffix}")
    folder = target.parent if target.parent.is_dir() else _existing_ancestor(target, option)
    if probe:
        _probe(folder, target, option)
    return target


def check_output_folder(path: str | os.PathLike[str], option: str = "cannot write") -> Path:
    """Refuse, before any work is done, a path that cannot be an output folder: a file, a device, a dangling
    link, a path under a file, or a location where nothing can be created (checked by creating and removing a
    temporary folder: nothing is left behind)."""
    target = Path(path)
    if str(path) == "":
        raise InputError(f"{option}: the path is empty: name a folder")
    _check_special(target, option, "folder")
    if target.exists() and not target.is_dir():
        raise InputError(f"{option} {target} is a file, not a folder: name a folder (it is created when missing)")
    _probe(target if target.is_dir() else _existing_ancestor(target, option), target, option)
    return target


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, creating parent folders; returns the path."""
    target = check_output_path(path, probe=False)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = _new_file(target.parent, f".{target.name}.", ".tmp")
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
