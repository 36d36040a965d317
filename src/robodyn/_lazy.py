"""Names of a package loaded on first use (PEP 562): ``robodyn`` and ``robodyn.model`` share this."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any


def lazy_names(package: str, table: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package`` for ``table`` (public name -> module).

    A name is imported from its module on first access and then stored in the package, so later look-ups
    do not come back here.
    """

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        source = importlib.import_module(module)
        value = getattr(source, name)
        here = sys.modules[package]
        setattr(here, name, value)
        # importing a submodule binds its name in the package (robodyn.sweep, the module, over the function
        # robodyn.sweep): the table's names from that module are bound to what the table says again
        for other, where in table.items():
            if where == module and isinstance(vars(here).get(other), ModuleType):
                setattr(here, other, getattr(source, other))
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
