"""The private on-disk cache for generated modules and numba's machine code: a trust boundary.

Generated source files are named by the SHA-256 of their content, so a changed model gets a new file
and an unchanged one is reused by a new process together with numba's cached machine code. Everything
robodyn executes or unpickles from here is trusted only because nobody else can write it
(docs/dev/security.md):

- The location is ``$ROBODYN_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/robodyn`` or
  ``~/.cache/robodyn`` (the *base*, created 0700 when missing but otherwise left as it is: it may be
  the user's home). It must belong to the current user.
- robodyn's own folders below it — one per Python (and numba) version, and every folder in those
  (``__pycache__`` for numba, ``objects``, ``models``, ...) — are checked without following symbolic
  links (:func:`own_folder`): a symbolic link, a file or anything else in their place is moved aside and
  a real folder made; a version folder of another user is refused, a folder of another user inside a
  version folder is moved aside like their files; the permissions of a folder of ours are set to 0700
  through a descriptor opened with ``O_NOFOLLOW``.
- Every file read from them is opened with ``O_NOFOLLOW`` and checked on its descriptor
  (:func:`read_private`): a regular file of the current user that neither group nor others may write,
  and no larger than the limit of its kind (``MAX_*_BYTES`` below), checked before a byte is read.
  Anything else is moved aside (:func:`quarantine`) and rebuilt. A cache file is written
  (:func:`write_private`) after moving aside whatever non-file is in its place.
- numba's files for robodyn's code go to the version folder's ``__pycache__`` whatever
  ``NUMBA_CACHE_DIR`` or ``NUMBA_CACHE_LOCATOR_CLASSES`` say (:func:`adopt_numba_caches`), are read
  with the same checks, carry a SHA-256 of their content checked before unpickling (damaged machine
  code can crash LLVM), and a file numba cannot load is moved aside and compiled again.

An entry that is damaged (fails to load or verify) is renamed ``<name>.broken-<time>-<pid>`` and
rebuilt, with one warning line on stderr for the first such entry of a process (the ``robodyn.cache``
logger; Python's last-resort handler prints just the message when the application configured no
logging); further ones are logged at INFO.
"""

from __future__ import annotations

import io
import os
import pickle
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Final

from robodyn.base.atomic import rename_aside, write_bytes_atomic
from robodyn.base.digest import sha256
from robodyn.base.errors import InputError
from robodyn.base.textfile import MAX_JSON_BYTES, UnusableFile, read_regular

__all__ = ["CACHE_FILE_MODE", "MAX_DIGEST_BYTES", "MAX_MANIFEST_BYTES", "MAX_NUMBA_DATA_BYTES",
           "MAX_NUMBA_INDEX_BYTES", "MAX_OBJECT_BYTES", "MAX_RECORD_BYTES", "UntrustedFile", "adopt_numba_caches",
           "cache_dir", "content_hash", "object_code", "own_folder", "prepare_numba", "private_cfunc", "quarantine",
           "read_private", "read_trusted", "write_private"]

# The largest cache file of each kind robodyn reads (checked on the open descriptor before reading: a larger one
# is moved aside unread). Far above what robodyn writes: the largest of a warm cache in brackets. A generated
# module is read with the size of the text it must equal as its limit (robodyn.codegen.loader).
CACHE_FILE_MODE: Final = 0o644  # the cache's files: written by their owner only (read_private trusts nothing else)
MAX_OBJECT_BYTES: Final = 256 * 2**20  # an object file .o, exported or compiled by LLVM (260 kB)
MAX_DIGEST_BYTES: Final = 4096  # an object's .o.sha256 (64 hexadecimal digits)
MAX_NUMBA_INDEX_BYTES: Final = 16 * 2**20  # numba's index .nbi (7 kB)
MAX_NUMBA_DATA_BYTES: Final = 256 * 2**20  # numba's machine code .nbc (0.9 MB)
MAX_MANIFEST_BYTES: Final = 2**20  # an exported object's manifest objects/<key>.json (0.3 kB)
MAX_RECORD_BYTES: Final = MAX_JSON_BYTES  # 16 MB: a parsed-model record models/<key>.json (135 kB)

class _CacheLog:
    """The ``robodyn.cache`` logger, with :mod:`logging` imported when something is logged (importing it costs
    every command ~3 ms of start-up, and a healthy cache logs nothing)."""

    def __getattr__(self, name: str) -> Any:
        import logging

        return getattr(logging.getLogger("robodyn.cache"), name)


log = _CacheLog()
_PACKAGE = Path(__file__).resolve().parents[1]  # robodyn's own sources: numba code there is cached here too
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # opening a FIFO planted in place of a file must not hang
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UntrustedFile(Exception):
    """A cache file robodyn must not use: a link, not a regular file, another user's, writable by others, or
    larger than the limit of its kind."""


def _uid() -> int | None:
    return os.getuid() if hasattr(os, "getuid") else None


def _base() -> Path:
    configured = os.environ.get("ROBODYN_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg).expanduser() / "robodyn"
    try:
        home = Path.home()
    except (RuntimeError, KeyError):  # HOME unset and no entry in the password database
        raise InputError("cannot find a home folder for robodyn's cache (HOME is not set and the user has no "
                         "passwd entry): set ROBODYN_CACHE_DIR to a folder of yours") from None
    return home / ".cache" / "robodyn"


def _check_base(path: Path) -> None:
    """Create the base folder (0700) or check that the existing one (links followed: the user named it) is ours."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.stat()
    except OSError as exc:
        raise InputError(
            f"cannot create the robodyn cache folder {path}: {exc.strerror or exc}: "
            "set ROBODYN_CACHE_DIR to a writable folder"
        ) from None
    if not stat.S_ISDIR(info.st_mode):
        raise InputError(f"the robodyn cache folder {path} is not a folder: set ROBODYN_CACHE_DIR to a folder")
    if _uid() is not None and info.st_uid != _uid():
        raise InputError(
            f"the robodyn cache folder {path} belongs to another user: set ROBODYN_CACHE_DIR to a folder of yours"
        )


def own_folder(path: Path, *, refuse_foreign: bool = False) -> Path:
    """Make ``path`` a private (0700) folder of the current user, never following a symbolic link.

    A link, a file or anything else in its place is moved aside (:func:`quarantine`), never followed, changed or
    written into, and a folder made. A folder of another user is moved aside like their files: inside robodyn's
    private folders only root, or a folder the user loosened, could have let it in. With ``refuse_foreign`` (the
    version folders, in the user's base, which others may be able to write) it is refused instead (InputError):
    robodyn does not take over other users' folders. InputError too when the folder cannot be made.
    """
    for _attempt in range(3):
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:  # another process made it: check theirs
                pass
            except OSError as exc:
                raise InputError(f"cannot create the robodyn cache folder {path}: {exc.strerror or exc}: "
                                 "set ROBODYN_CACHE_DIR to a writable folder") from None
            continue
        except OSError as exc:
            raise InputError(f"cannot read the robodyn cache folder {path}: {exc.strerror or exc}") from None
        problem = ("a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a folder" if not stat.S_ISDIR(info.st_mode)
                   else "it belongs to another user" if _uid() is not None and info.st_uid != _uid() else None)
        if problem == "it belongs to another user" and refuse_foreign:
            raise InputError(f"the robodyn cache folder {path} belongs to another user: remove it, or set "
                             "ROBODYN_CACHE_DIR to a folder of yours")
        if problem is not None:
            if not quarantine(path, problem):
                raise InputError(f"the robodyn cache folder {path} is unusable ({problem}) and cannot be moved "
                                 "aside: remove it, or set ROBODYN_CACHE_DIR to a folder of yours")
            continue
        if stat.S_IMODE(info.st_mode) & 0o077:
            try:
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC)
            except OSError:  # replaced by a link in between: check again
                continue
            try:
                now = os.fstat(fd)
                if stat.S_ISDIR(now.st_mode) and (_uid() is None or now.st_uid == _uid()):
                    os.fchmod(fd, 0o700)
            finally:
                os.close(fd)
            continue  # check the result
        return path
    raise InputError(f"the robodyn cache folder {path} keeps changing: another process replaces it; "
                     "set ROBODYN_CACHE_DIR to a folder only you can write")


def cache_dir(*, numba_code: bool = True) -> Path:
    """The private cache folder for this Python (and numba) version, created on first use.

    ``numba_code=False`` is for generated plain-Python modules (straight-line dynamics code) and LLVM
    object code, which do not depend on numba's version and should not pay for importing it.
    """
    base = _base()
    _check_base(base)
    version = f"py{sys.version_info.major}{sys.version_info.minor}"
    if numba_code:
        import numba

        version += f"-numba{numba.__version__}"
    return own_folder(base / version, refuse_foreign=True)


def content_hash(*parts: str) -> str:
    """SHA-256 hex digest of the parts (separated, so that ("ab", "c") != ("a", "bc"))."""
    digest = sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part.encode("utf-8"))
    return digest.hexdigest()


def read_private(path: Path, limit: int = MAX_OBJECT_BYTES) -> bytes | None:
    """The bytes of the cache file ``path``, None if there is none; UntrustedFile if it must not be used.

    Read by :func:`robodyn.base.textfile.read_regular` (no link followed, no FIFO waited on, checked on the open
    descriptor before anything is read): a regular file of the current user that neither group nor others may
    write, of at most ``limit`` bytes (the limit of its kind, ``MAX_*_BYTES``).
    """
    def private(info: os.stat_result) -> str | None:
        if _uid() is not None and info.st_uid != _uid():
            return "it belongs to another user"
        return "group or others may write it" if stat.S_IMODE(info.st_mode) & 0o022 else None

    try:
        return read_regular(path, limit, private)
    except UnusableFile as exc:
        raise UntrustedFile(str(exc)) from None


def read_trusted(path: Path, limit: int = MAX_OBJECT_BYTES) -> bytes | None:
    """:func:`read_private`, with an untrusted file moved aside (:func:`quarantine`) and read as missing."""
    try:
        return read_private(path, limit)
    except UntrustedFile as exc:
        quarantine(path, str(exc))
        return None


def _make_room(path: Path) -> None:
    """Move aside whatever is at ``path`` and is not a regular file (a folder, a FIFO, a link planted where a cache
    file is written): writing would fail there on every run, block, or go through the link."""
    try:
        info = os.lstat(path)
    except OSError:  # nothing there (or nothing robodyn can see: the write says why)
        return
    if not stat.S_ISREG(info.st_mode):
        quarantine(path, "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a regular file")


def write_private(path: Path, data: bytes) -> bool:
    """Write the cache file ``path`` atomically (:func:`robodyn.base.atomic.write_bytes_atomic`) after moving aside
    whatever non-file is in its place; False when it cannot be written (a read-only or full cache only costs a
    compilation next time)."""
    _make_room(path)
    try:
        write_bytes_atomic(path, data, mode=CACHE_FILE_MODE)
    except (OSError, InputError) as exc:
        log.debug("robodyn: the cache file %s is not written: %s", path, exc)
        return False
    return True


_reported: list[Path] = []  # entries moved aside by this process


def quarantine(path: Path, reason: str) -> bool:
    """Move the damaged or untrusted cache entry ``path`` aside (``<name>.broken-<time>``), with one warning line.

    Renaming moves a symbolic link itself, never its target. Returns whether ``path`` is free now (moved, or
    gone already); False, with a warning, when it cannot be moved.
    """
    try:
        if rename_aside(path) is None:
            return True  # gone already
    except OSError as exc:
        log.warning("robodyn: the cache entry %s is unusable (%s) and cannot be moved aside (%s): it is not used",
                    path, reason, exc.strerror or exc)
        return False
    # one line per process on stderr: a cache damaged all over (a full disk) would otherwise print one per file
    level = 20 if _reported else 30  # logging.INFO, logging.WARNING
    _reported.append(path)
    log.log(level, "robodyn: moved the unusable cache file %s aside (%s); it is rebuilt", path, reason)
    return True


def _reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# --- numba's cache ------------------------------------------------------------------------------------
_numba: dict[str, Any] = {}  # the classes below, built on first use (importing numba)


def _numba_folder(py_file: str) -> Path | None:
    """Where numba keeps the machine code of functions defined in ``py_file``: None if not robodyn's code."""
    source = Path(os.path.abspath(py_file))
    try:
        base = Path(os.path.abspath(_base()))
    except (RuntimeError, KeyError, OSError):  # no home folder: then nothing can be in robodyn's cache
        base = None
    if base is not None and source.parent.parent == base:  # a generated module (in a version folder)
        folder = cache_dir()
        return own_folder(folder / "__pycache__") if source.parent == folder else None
    try:
        source.resolve().relative_to(_PACKAGE)
    except ValueError:
        return None
    folder = cache_dir()
    # robodyn's own numba code (codegen/linalg.py): a folder per source folder, as numba names them
    import hashlib  # numba names the folder by SHA-1

    subpath = f"{source.parent.name}_{hashlib.sha1(str(source.parent).encode()).hexdigest()}"
    return own_folder(own_folder(folder / "package") / subpath)


_SEAL = b"robodyn numba cache 1\n"  # numba's files as robodyn writes them: this, SHA-256 of the rest, the rest


def _seal(payload: bytes) -> bytes:
    return _SEAL + sha256(payload).digest() + payload


def _unseal(data: bytes) -> bytes:
    """The payload of a sealed file; ValueError if it is not one or is damaged (numba's machine code with a
    flipped bit can crash the process while loading: it is checked first)."""
    if not data.startswith(_SEAL):
        raise ValueError("not a file robodyn wrote")
    digest, payload = data[len(_SEAL):len(_SEAL) + 32], data[len(_SEAL) + 32:]
    if sha256(payload).digest() != digest:
        raise ValueError("its SHA-256 digest does not match")
    return payload


def _numba_classes() -> dict[str, Any]:
    if _numba:
        return _numba
    import inspect

    from numba.core import caching

    class PrivateLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """numba's cache for robodyn's code: in robodyn's private folder (checked, never through a link)."""

        def __init__(self, py_func: Any, py_file: str, folder: Path):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(folder)

        def ensure_cache_path(self) -> None:
            own_folder(Path(self._cache_path))

        def get_cache_path(self) -> str:
            return self._cache_path

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            folder = _numba_folder(py_file) if os.path.exists(py_file) else None
            return None if folder is None else cls(py_func, py_file, folder)

    class PrivateIndexDataCacheFile(caching.IndexDataCacheFile):
        """numba's index (.nbi) and data (.nbc) files, read only when trusted; a damaged one is moved aside."""

        def _load_index(self) -> dict[Any, Any]:
            path = Path(self._index_path)
            try:
                data = read_private(path, MAX_NUMBA_INDEX_BYTES)
                if data is None:
                    return {}
                stream = io.BytesIO(_unseal(data))
                if pickle.load(stream) != self._version:  # another numba's index: numba ignores it too
                    return {}
                stamp, overloads = pickle.loads(stream.read())
                if not isinstance(overloads, dict):
                    raise TypeError("the index is not a mapping")
            except UntrustedFile as exc:
                quarantine(path, str(exc))
                return {}
            except Exception as exc:  # whatever unpickling garbage raises
                quarantine(path, _reason(exc))
                return {}
            return overloads if stamp == self._source_stamp else {}

        def _load_data(self, name: str) -> Any:
            path = Path(self._data_path(name))
            try:
                data = read_private(path, MAX_NUMBA_DATA_BYTES)
                if data is None:
                    raise FileNotFoundError(path)  # numba's load() treats OSError as "not cached"
                return pickle.loads(_unseal(data))
            except UntrustedFile as exc:
                quarantine(path, str(exc))
            except OSError:
                raise
            except Exception as exc:  # whatever unpickling garbage raises
                quarantine(path, _reason(exc))
            raise FileNotFoundError(path)

        @contextmanager
        def _open_for_write(self, filepath: str) -> Iterator[IO[bytes]]:
            """Sealed (:func:`_seal`) into a private temporary file (0600, never through a link), renamed into place."""
            buffer = io.BytesIO()
            yield buffer
            temporary = f"{filepath}.tmp.{os.getpid()}.{time.time_ns()}"
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(_seal(buffer.getvalue()))
                _make_room(Path(filepath))  # a folder there would fail every run's write, never healed
                os.replace(temporary, filepath)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise

    class PrivateImpl(caching.CompileResultCacheImpl):
        """numba's CacheImpl with robodyn's locator only (NUMBA_CACHE_DIR and NUMBA_CACHE_LOCATOR_CLASSES ignored)."""

        def __init__(self, py_func: Any):
            self._lineno = py_func.__code__.co_firstlineno
            qualname = getattr(py_func, "__qualname__", py_func.__name__)
            source_path = inspect.getfile(py_func)
            locator = PrivateLocator.from_function(py_func, source_path)
            if locator is None:
                raise RuntimeError(f"{source_path} is not robodyn's code")
            self._locator = locator
            modname = os.path.splitext(os.path.basename(source_path))[0]
            self._filename_base = self.get_filename_base(f"{modname}.{qualname}", getattr(sys, "abiflags", ""))

    class PrivateFunctionCache(caching.FunctionCache):
        """numba's per-function cache in robodyn's folder: untrusted or damaged files are moved aside."""

        _impl_class = PrivateImpl

        def __init__(self, py_func: Any):
            super().__init__(py_func)
            self._cache_file = PrivateIndexDataCacheFile(
                cache_path=self._cache_path, filename_base=self._impl.filename_base,
                source_stamp=self._impl.locator.get_source_stamp())

        def load_overload(self, sig: Any, target_context: Any) -> Any:
            try:
                return super().load_overload(sig, target_context)
            except InputError:
                raise
            except Exception as exc:  # unpickled, but numba could not rebuild it
                key = self._index_key(sig, target_context.codegen())
                name = self._cache_file._load_index().get(key)
                if name is not None:  # the data file numba could not rebuild; the index stays valid
                    quarantine(Path(self._cache_file._data_path(name)), _reason(exc))
                return None

        def save_overload(self, sig: Any, data: Any) -> None:
            try:
                super().save_overload(sig, data)
            except OSError as exc:  # a full or read-only disk only costs a compilation next time
                log.debug("numba's cache for %s not saved: %s", self._name, exc)

    caching.CacheImpl._locator_classes.insert(0, PrivateLocator)  # type: ignore[arg-type]  # no files of numba's choosing for our code
    _numba.update(locator=PrivateLocator, cache=PrivateFunctionCache)
    return _numba


def prepare_numba() -> None:
    """Make numba place robodyn's code's cache files in the private folder from the start.

    Called before a generated module runs: its ``njit(cache=True)`` then creates nothing in
    ``NUMBA_CACHE_DIR``. :func:`adopt_numba_caches` is what guarantees the location and the checks.
    """
    _numba_classes()


def adopt_numba_caches(namespace: dict[str, Any]) -> None:
    """Give every cached numba function in ``namespace`` that robodyn defines robodyn's checked cache.

    Covers the functions of a generated module and the robodyn functions it imports (codegen.linalg).
    """
    from numba.core.dispatcher import Dispatcher

    classes = _numba_classes()
    for value in list(namespace.values()):
        if not isinstance(value, Dispatcher):
            continue
        current: Any = getattr(value, "_cache", None)
        if current is None or isinstance(current, classes["cache"]) or type(current).__name__ == "NullCache":
            continue  # already robodyn's, or cache=False (nothing on disk)
        try:
            value._cache = classes["cache"](value.py_func)  # type: ignore[attr-defined]
        except RuntimeError:  # not robodyn's code
            continue


class _LazyCFunc:
    """A numba C callback compiled (or loaded from robodyn's checked cache) when its address is first asked."""

    def __init__(self, function: Any, signature: Any, options: dict[str, Any]):
        self._function, self._signature, self._options = function, signature, options
        self._compiled: Any = None
        self.__name__ = function.__name__
        self.__wrapped__ = function

    def _compile(self, cached: bool) -> None:
        from numba.core import sigutils
        from numba.core.ccallback import CFunc

        compiled = CFunc(self._function, sigutils.normalize_signature(self._signature), locals={},
                         options=self._options)
        if cached:
            compiled._cache = _numba_classes()["cache"](self._function)  # type: ignore[attr-defined]  # robodyn's
        compiled.compile()
        self._compiled = compiled

    @property
    def address(self) -> int:
        """The machine address of the C function (compiles it on first use)."""
        if self._compiled is None:
            self._compile(cached=True)
        return int(self._compiled.address)

    def export(self) -> tuple[bytes, str]:
        """Compile without numba's cache (once) and return the machine code as an object and its symbol
        (robodyn.codegen.objects keeps it for processes without numba)."""
        if self._compiled is None or self._compiled.cache_hits:
            self._compile(cached=False)  # numba's cached code has no LLVM module to emit
        return object_code(self._compiled)

    @property
    def cache_hits(self) -> int:
        """1 when the machine code came from the on-disk cache, 0 when it was compiled (or not yet made)."""
        return 0 if self._compiled is None else int(self._compiled.cache_hits)


def private_cfunc(signature: Any, **options: Any) -> Any:
    """Decorator: ``numba.cfunc(signature, cache=True, **options)`` with robodyn's private, checked cache
    (:func:`adopt_numba_caches` does the same for jitted functions), compiled lazily on ``.address``."""

    def wrap(function: Any) -> _LazyCFunc:
        return _LazyCFunc(function, signature, options)

    return wrap


def object_code(cfunc: Any) -> tuple[bytes, str]:
    """The ELF object and the symbol of a numba ``CFunc`` compiled in this process (not loaded from numba's cache:
    a cached library has no LLVM module to emit); robodyn.codegen.objects keeps it as ``export``."""
    library = cfunc._library
    return bytes(library._codegen._tm.emit_object(library._final_module)), str(cfunc.native_name)
