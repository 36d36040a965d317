"""Atomic file output: a set of files is either completely written or not touched at all.

:func:`write_files_atomic` writes several files as one operation (an export's header and source, a report's
page and data, a trajectory and its plot); :func:`write_bytes_atomic` and :func:`write_text_atomic` write one.

1. **Every target is checked before anything is written**: a folder, device, pipe, socket or link to nothing in
   a file's place, a path under a file, a read-only file (refused even where the user could replace it: "make it
   writable (chmod u+w) or write elsewhere"), two names for the same file: InputError naming it and the fix.
2. **Each file is written to a temporary file in its own folder** (``.<name>.<random>.tmp``, created
   exclusively, flushed to disk), so a full disk or a file-size limit fails before any target is replaced: the
   temporary files are removed and the error names the file and the cause ("No space left on device").
3. **Then all are renamed into place** (:func:`os.replace`, atomic on POSIX and Windows). Should a rename fail
   (the folder changed under the process), the files already replaced are put back from hard links kept for the
   moment, so the old files are intact.

A replaced file keeps its permissions and, where the process may set them, its owner and group; a new file gets
``0666`` less the process's umask, as ``open()`` would give it. A **symbolic link** is written through: the link
stays a link and the file it points to gets the new content, atomically in that file's folder (a file with
several hard links is replaced under the name given: the other names keep the old content). Robodyn's own files
(the cache: ``mode=`` given) are written with that mode and a link in their place is replaced, never followed.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final, NamedTuple, TypeVar

from robodyn.base.errors import InputError

__all__ = ["Content", "check_output_folder", "check_output_path", "path_component", "rename_aside",
           "write_bytes_atomic", "write_files_atomic", "write_text_atomic"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")
MAX_COMPONENT: Final = 100  # characters of a file or folder name derived from a model's name

#: What a file is written from: bytes, text (UTF-8), or a function that writes the file at the path it is given
#: (a renderer that only writes to files: an animation); that path ends with the target's suffix.
Content = bytes | str | Callable[[str], None]

#: What to do about an error from the file system, by errno (the rest: "choose another location").
_FIXES: Final = {
    errno.ENOSPC: "free some space or write elsewhere",
    errno.EDQUOT: "free some space (the disk quota is used up) or write elsewhere",
    errno.EFBIG: "the file is larger than this system or process allows: write less or elsewhere",
    errno.EROFS: "the file system is read-only: write elsewhere",
    errno.EACCES: "choose a location you may write",
    errno.EPERM: "choose a location you may write",
}


_DEFAULT: Final = "cannot write"  # what a message starts with when the caller names no option


def _subject(option: str, path: Path) -> str:
    """How a message names ``path``: after the caller's option (``--out x.csv``), or alone for the default."""
    return str(path) if option == _DEFAULT else f"{option} {path}"


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
_Where = TypeVar("_Where", bound="str | os.PathLike[str]")  # a path, as the caller names it
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
    raise FileExistsError(errno.EEXIST, f"no free temporary name in {folder}")


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
        raise InputError(f"{_subject(option, target)} is a symbolic link to nothing: remove it or choose another name")
    if target.exists() and not (target.is_file() or target.is_dir()):
        raise InputError(f"{_subject(option, target)} is a device, pipe or socket: name a {what}")


class _Target(NamedTuple):
    """One file to write: the path as given, the file written (the file a link points to), what is there now."""

    given: Path
    real: Path
    old: os.stat_result | None  # the file replaced (None: a new file)


def _target(path: str | os.PathLike[str], option: str, follow: bool) -> _Target:
    """``path`` checked as a file to write (see the module docstring, step 1), links followed when ``follow``."""
    given = Path(path)
    if str(path) == "":
        raise InputError(f"{option}: the path is empty: name a file")
    _check_special(given, option, "file")
    if given.is_dir() and (follow or not given.is_symlink()):
        raise InputError(f"{_subject(option, given)} is a folder: name a file inside it, e.g. "
                         f"{given / 'out'}{given.suffix}")
    if not given.parent.is_dir():
        _existing_ancestor(given, option)
    real = Path(os.path.realpath(given)) if follow else given.parent.resolve() / given.name
    try:
        old = os.stat(real) if follow else os.lstat(real)
    except (FileNotFoundError, NotADirectoryError):
        return _Target(given, real, None)
    except OSError as exc:
        raise InputError(f"{option} {given}: {exc.strerror or exc}: choose another location") from None
    if follow and (stat.S_IMODE(old.st_mode) & 0o222 == 0 or not os.access(real, os.W_OK)):
        via = f" (a link to {real})" if real != given.absolute() and given.is_symlink() else ""
        raise InputError(f"{_subject(option, given)}{via} is read-only: make it writable (chmod u+w) or write "
                         "elsewhere")
    return _Target(given, real, old if stat.S_ISREG(old.st_mode) else None)


def check_output_path(path: str | os.PathLike[str], option: str = _DEFAULT, *, probe: bool = True) -> Path:
    """Refuse, before any work is done, an output path that cannot be a file: a folder, a path under a file, a
    device, pipe or dangling link, a read-only file, or (``probe``) a location where nothing can be created. A
    link to a file is checked as that file (it is written through)."""
    target = _target(path, option, follow=True)
    if probe:
        folder = target.real.parent if target.real.parent.is_dir() else _existing_ancestor(target.real, option)
        _probe(folder, target.given, option)
    return target.given


def check_output_folder(path: str | os.PathLike[str], option: str = _DEFAULT) -> Path:
    """Refuse, before any work is done, a path that cannot be an output folder: a file, a device, a dangling
    link, a path under a file, or a location where nothing can be created (checked by creating and removing a
    temporary folder: nothing is left behind)."""
    target = Path(path)
    if str(path) == "":
        raise InputError(f"{option}: the path is empty: name a folder")
    _check_special(target, option, "folder")
    if target.exists() and not target.is_dir():
        raise InputError(f"{_subject(option, target)} is a file, not a folder: name a folder (it is created when "
                         "missing)")
    _probe(target if target.is_dir() else _existing_ancestor(target, option), target, option)
    return target


def _failed(target: _Target, exc: OSError, option: str) -> InputError:
    """The InputError of ``exc`` raised while writing ``target``: the file, the cause, what to do."""
    fix = _FIXES.get(exc.errno or 0, "choose another location")
    return InputError(f"{option} {target.given}: {exc.strerror or exc}: {fix}")


def _umask() -> int:
    """The process's umask, read without changing it (Linux: /proc/self/status); 0o022 where it cannot be read."""
    try:
        with open("/proc/self/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _write_all(fd: int, data: bytes) -> None:
    """Every byte of ``data`` to the descriptor ``fd`` (os.write may write fewer), then to the disk."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.fsync(fd)


def _settle(temporary: str, target: _Target, mode: int | None) -> None:
    """Give the written ``temporary`` the replaced file's owner, group and permissions (``mode`` for robodyn's own
    files; a new file: 0666 less the umask). Set-id bits are kept only with the owner and group."""
    if mode is not None:
        os.chmod(temporary, mode)
        return
    if target.old is None:
        os.chmod(temporary, 0o666 & ~_umask())
        return
    keep = stat.S_IMODE(target.old.st_mode)
    written = os.stat(temporary)
    if (written.st_uid, written.st_gid) != (target.old.st_uid, target.old.st_gid):
        try:
            os.chown(temporary, target.old.st_uid, target.old.st_gid)
        except OSError:  # only root may give a file away; a member of the group may still set the group
            keep &= ~(stat.S_ISUID | stat.S_ISGID)
            try:
                os.chown(temporary, -1, target.old.st_gid)
            except OSError:
                pass
    os.chmod(temporary, keep)


def _write_temporary(target: _Target, content: Content, mode: int | None) -> str:
    """``content`` written into a new temporary file beside ``target.real`` (owner and mode settled): its path.
    The temporary file is removed when anything fails."""
    folder, name = target.real.parent, target.real.name
    suffix = f".tmp{target.real.suffix}" if callable(content) else ".tmp"
    fd, temporary = _new_file(folder, f".{name}.", suffix)
    try:
        if callable(content):
            os.close(fd)
            fd = -1
            content(temporary)
            fd = os.open(temporary, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            os.fsync(fd)
        else:
            _write_all(fd, content.encode("utf-8") if isinstance(content, str) else bytes(content))
        _settle(temporary, target, mode)
    except BaseException:
        _undo([temporary], [])
        raise
    finally:
        if fd >= 0:
            os.close(fd)
    return temporary


def _folders_for(target: _Target) -> list[Path]:
    """Create the missing folders of ``target``; the ones created, outermost first (removed again on failure)."""
    missing = []
    folder = target.real.parent
    while not os.path.lexists(folder):
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        os.mkdir(folder)
    return missing[::-1]


def _undo(temporaries: list[str], folders: list[Path]) -> None:
    """Remove the temporary files and the folders this write created (innermost first), as far as possible."""
    for temporary in temporaries:
        try:
            os.unlink(temporary)
        except OSError:
            pass
    for folder in reversed(folders):
        try:
            os.rmdir(folder)
        except OSError:
            pass


def _backup(target: _Target) -> str | None:
    """A hard link to the file ``target`` replaces, kept until every file is renamed into place (None: a new
    file, or a file system without hard links: that file cannot be put back)."""
    if target.old is None:
        return None
    try:
        return _exclusive(target.real.parent, f".{target.real.name}.", ".old",
                          lambda path: os.link(target.real, path))[1]
    except OSError:
        return None


def _rename_all(targets: list[_Target], temporaries: list[str], option: str) -> None:
    """Rename every temporary file over its target; on a failure put back the files already replaced."""
    backups = [_backup(target) for target in targets] if len(targets) > 1 else [None] * len(targets)
    done = 0
    try:
        for target, temporary in zip(targets, temporaries):
            os.replace(temporary, target.real)
            done += 1
    except OSError as exc:
        for target, backup in zip(targets[:done], backups):
            try:
                if backup is not None:
                    os.replace(backup, target.real)
                elif target.old is None:
                    os.unlink(target.real)
            except OSError:
                pass
        _undo(temporaries[done:], [])
        raise _failed(targets[done], exc, option) from None
    finally:
        _undo([backup for backup in backups if backup is not None], [])


def write_files_atomic(files: Mapping[_Where, Content], option: str = _DEFAULT, *,
                       mode: int | None = None) -> list[Path]:
    """Write ``files`` (path: content) as one operation (see the module docstring); returns the paths as given.

    Parameters
    ----------
    files
        Each path and what it holds: bytes, text (UTF-8), or a function writing the file at the path it is
        given (a temporary file ending with the target's suffix).
    option
        Starts every message (``"--out"``, ``"export: cannot write"``).
    mode
        None for the user's files (permissions and owner kept, links written through, read-only files
        refused); the permissions of robodyn's own files (the cache), written whatever is there.

    Raises
    ------
    InputError
        A target refused by the checks, or a failure of the file system while writing (naming the file and its
        cause: "No space left on device"); nothing is replaced then.
    """
    follow = mode is None
    targets = [_target(path, option, follow) for path in files]
    seen: dict[Path, Path] = {}
    for target in targets:
        if target.real in seen:
            raise InputError(f"{_subject(option, target.given)} and {seen[target.real]} are the same file: name "
                             "different files")
        seen[target.real] = target.given
    temporaries: list[str] = []
    folders: list[Path] = []
    current = targets[0] if targets else None
    try:
        for target, content in zip(targets, files.values()):
            current = target
            folders += _folders_for(target)
            temporaries.append(_write_temporary(target, content, mode))
    except OSError as exc:
        _undo(temporaries, folders)
        assert current is not None
        raise _failed(current, exc, option) from None
    except BaseException:
        _undo(temporaries, folders)
        raise
    _rename_all(targets, temporaries, option)
    return [target.given for target in targets]


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None) -> Path:
    """Write ``data`` to ``path`` atomically (:func:`write_files_atomic`), creating parent folders; returns the path."""
    return write_files_atomic({path: data}, mode=mode)[0]


def write_text_atomic(path: str | os.PathLike[str], text: str, *, mode: int | None = None) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically (:func:`write_files_atomic`); returns the path."""
    return write_files_atomic({path: text}, mode=mode)[0]
