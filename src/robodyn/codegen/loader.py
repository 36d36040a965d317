"""The one module loader: Python files executed as fresh modules, and generated code through the cache.

- :func:`load_module` executes a Python file as a new module, with names injected before it runs
  (kernel templates get ``jit``, ``rhs``, ... this way; so do the signals evaluator, tableau data and
  the test harness).
- :func:`load_generated` takes generated source text, names it by its content hash, keeps it in the
  private cache folder (:mod:`robodyn.codegen.cache`) and imports it from there, so that numba's
  ``cache=True`` finds its machine code again in a new process. The file is compared with the text
  before every import: a file that differs (truncated, edited) is written again from the text.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from robodyn.atomic import write_text_atomic
from robodyn.codegen.cache import cache_dir, content_hash

__all__ = ["load_generated", "load_module"]

_loaded: dict[str, ModuleType] = {}
_lock = threading.Lock()


def load_module(path: Path, name: str, inject: Mapping[str, Any] | None = None) -> ModuleType:
    """Execute the Python file ``path`` as a new module named ``name`` with ``inject`` pre-defined."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - only for a missing file
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(inject or {})
    spec.loader.exec_module(module)
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
        try:
            current = path.read_text(encoding="utf-8") if path.exists() else None
        except (OSError, UnicodeDecodeError):
            current = None
        if current != text:
            write_text_atomic(path, text)
        module = load_module(path, name)
        sys.modules[name] = module  # lets numba and pickling find the module by name
        _loaded[name] = module
        return module
