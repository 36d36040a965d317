"""The private on-disk cache for generated modules and numba's machine code.

Generated source files are named by the SHA-256 of their content, so a changed model gets a new file
and an unchanged one is reused by a new process together with numba's cached machine code
(``cache=True`` keeps it in ``__pycache__`` beside the file). The folder is private (mode 0700) and
must belong to the current user: generated code is imported from it, so nobody else may write there.

The location is ``$ROBODYN_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/robodyn`` or
``~/.cache/robodyn``, with one subfolder per Python and numba version. That subfolder is robodyn's own
and is kept at 0700; the folder above it is created 0700 when missing but otherwise left as it is.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from pathlib import Path

from robodyn.errors import InputError

__all__ = ["cache_dir", "content_hash"]


def _base() -> Path:
    configured = os.environ.get("ROBODYN_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "robodyn"


def _private(path: Path, *, tighten: bool) -> None:
    """Create ``path`` (0700) or check that an existing one belongs to us.

    ``tighten``: set an existing folder to 0700 (only for robodyn's own subfolder, never for a folder
    the user named, such as their home folder).
    """
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.stat()
    except OSError as exc:
        raise InputError(
            f"cannot create the robodyn cache folder {path}: {exc.strerror or exc}: "
            "set ROBODYN_CACHE_DIR to a writable folder"
        ) from None
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise InputError(
            f"the robodyn cache folder {path} belongs to another user: set ROBODYN_CACHE_DIR to a folder of yours"
        )
    if tighten and stat.S_IMODE(info.st_mode) & 0o077:
        path.chmod(0o700)


def cache_dir(*, numba_code: bool = True) -> Path:
    """The private cache folder for this Python (and numba) version, created on first use.

    ``numba_code=False`` is for generated plain-Python modules (straight-line dynamics code), which do
    not depend on numba's version and should not pay for importing it.
    """
    base = _base()
    _private(base, tighten=False)
    version = f"py{sys.version_info.major}{sys.version_info.minor}"
    if numba_code:
        import numba

        version += f"-numba{numba.__version__}"
    folder = base / version
    _private(folder, tighten=True)
    return folder


def content_hash(*parts: str) -> str:
    """SHA-256 hex digest of the parts (separated, so that ("ab", "c") != ("a", "bc"))."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part.encode("utf-8"))
    return digest.hexdigest()
