"""The one module loader: Python files executed as fresh modules, and generated code through the cache.

- :func:`load_module` executes a Python file as a new module, with names injected before it runs
  (kernel templates get ``jit``, ``rhs``, ... this way; so do the signals evaluator, tableau data and
  the test harness).
- :func:`load_generated` takes generated source text, names it by its content hash, keeps it in the
  private cache folder (:mod:`robodyn.codegen.cache`) and imports it from there, so that numba's
  ``cache=True`` finds its machine code again in a new process. The module is compiled from the text
  itself, never from the file or a ``__pycache__/*.pyc`` beside it (a planted or damaged ``.pyc`` is
  never read); the file is there for numba (its cache is keyed by the file's content) and tracebacks.
  It is compared with the text before every import: a file that differs (truncated, edited) or that
  fails the cache's checks (:func:`robodyn.codegen.cache.read_private`; a file larger than the text is
  not read at all) is moved aside and written again. numba's cache of the module's functions is
  robodyn's checked one (:func:`robodyn.codegen.cache.adopt_numba_caches`).
"""

from __future__ import annotations

import functools
import importlib.util
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from robodyn.base.atomic import write_text_atomic
from robodyn.codegen.cache import (
    CACHE_FILE_MODE,
    adopt_numba_caches,
    cache_dir,
    content_hash,
    prepare_numba,
    quarantine,
    read_trusted,
)

__all__ = ["load_generated", "load_module"]


@functools.cache
def _verified_loader() -> type:
    """The loader class of generated text, made on first use: ``importlib.abc`` (with importlib.resources) costs
    a command ~3 ms of start-up, and a warm run loads no generated module."""
    import importlib.abc

    class VerifiedText(importlib.abc.InspectLoader):
        """A loader whose code is compiled from text robodyn generated and checked (not read from disk)."""

        def __init__(self, text: str, path: str):
            self._text, self._path = text, path

        def get_source(self, fullname: str) -> str:
            return self._text

        def get_code(self, fullname: str) -> Any:
            return compile(self._text, self._path, "exec", dont_inherit=True)

        def is_package(self, fullname: str) -> bool:
            return False

    return VerifiedText


_loaded: dict[str, ModuleType] = {}
_lock = threading.Lock()


def load_module(path: Path, name: str, inject: Mapping[str, Any] | None = None,
                also: Sequence[Path] = ()) -> ModuleType:
    """Execute the Python file ``path`` as a new module named ``name`` with ``inject`` pre-defined.

    The files in ``also`` (robodyn's own templates) are executed after it in the same namespace, as if
    their text followed ``path``'s.
    """
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - only for a missing file
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(inject or {})
    spec.loader.exec_module(module)
    for extra in also:  # the file's own loader runs its code in this module's namespace
        extra_spec = importlib.util.spec_from_file_location(name, extra)
        if extra_spec is None or extra_spec.loader is None:  # pragma: no cover - only for a missing file
            raise ImportError(f"cannot load {extra}")
        extra_spec.loader.exec_module(module)
    return module


def load_generated(text: str, prefix: str, *, numba_code: bool = True) -> ModuleType:
    """The module of generated source ``text``, imported once per process from the private cache.

    ``prefix`` starts the module name (the rest is the content hash); ``numba_code=False`` puts plain
    Python in a folder that does not depend on numba's version (and does not import numba).
    """
    name = f"{prefix}_{content_hash(text)[:24]}"
    with _lock:
        module = _loaded.get(name)
        if module is not None:
            return module
        path = cache_dir(numba_code=numba_code) / f"{name}.py"
        expected = text.encode("utf-8")
        current = read_trusted(path, len(expected))  # a larger file is not this text: moved aside unread
        if current != expected:
            if current is not None:
                quarantine(path, "its text differs from the generated code")
            write_text_atomic(path, text, mode=CACHE_FILE_MODE)
        if numba_code:
            prepare_numba()
        spec = importlib.util.spec_from_loader(name, _verified_loader()(text, str(path)), origin=str(path))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        module.__file__ = str(path)
        spec.loader.exec_module(module)  # runs the code compiled from the verified text, never a .pyc
        if numba_code:
            adopt_numba_caches(module.__dict__)
        sys.modules[name] = module  # lets numba and pickling find the module by name
        _loaded[name] = module
        return module
