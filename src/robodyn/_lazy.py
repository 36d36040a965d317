"""Names of a package loaded on first use (PEP 562), and the old import paths of modules that moved.

:func:`lazy_names` gives a package its module-level ``__getattr__`` and ``__dir__``. :data:`MOVED` lists the
modules that moved when the package was laid out by layer (issue 24: ``robodyn.cli_args`` is
``robodyn.cli.args``, ...); :func:`install_moved` lets the old names import the new modules, so code written
against them keeps working.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, table: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package`` for ``table`` (public name -> module).

    A name is imported from its module on first access and then stored in the package, so later look-ups
    do not come back here; a name whose module is ``package.name`` is that submodule.
    """

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        imported = importlib.import_module(module)
        value = imported if module == f"{package}.{name}" else getattr(imported, name)  # a submodule itself
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__


#: old module name -> the module it is now (the same module object under both names).
MOVED: Mapping[str, str] = {
    "robodyn.cli_args": "robodyn.cli.args",
    "robodyn.cli_kinematics": "robodyn.cli.kinematics",
    "robodyn.cli_report": "robodyn.cli.report",
    "robodyn.cli_sweep": "robodyn.cli.sweep",
    "robodyn.codegen.entry": "robodyn.integrate.entry",
    "robodyn.display_cache": "robodyn.display.cache",
    "robodyn.formulas": "robodyn.display.formulas",
    "robodyn.model.budget": "robodyn.budget",
    "robodyn.model.cached": "robodyn.model.files.cached",
    "robodyn.model.catalog": "robodyn.model.files.catalog",
    "robodyn.model.chain_closed": "robodyn.model.chain.closed",
    "robodyn.model.chain_file": "robodyn.model.chain.file",
    "robodyn.model.chain_frames": "robodyn.model.chain.frames",
    "robodyn.model.chain_outputs": "robodyn.model.chain.outputs",
    "robodyn.model.chain_parts": "robodyn.model.chain.parts",
    "robodyn.model.chain_quantities": "robodyn.model.chain.quantities",
    "robodyn.model.reader": "robodyn.model.files.reader",
    "robodyn.model.urdf": "robodyn.model.chain.pinocchio",
    "robodyn.model.urdf_chain": "robodyn.model.chain.urdf",
    "robodyn.model.urdf_file": "robodyn.model.chain.urdf_file",
    "robodyn.model.yamlio": "robodyn.model.files.yamlio",
    "robodyn.sweep_dask": "robodyn.sweep.cluster",
    "robodyn.sweep_plan": "robodyn.sweep.plan",
    "robodyn.sweep_store": "robodyn.sweep.store",
}


class _MovedFinder:
    """A meta path finder that answers an old module name (:data:`MOVED`) with the module it is now."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in MOVED:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(fullname, self)  # type: ignore[arg-type]  # a loader by its methods, not importlib.abc

    def create_module(self, spec: Any) -> Any:
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: Any) -> None:
        """The new module ran already: nothing to do."""


def install_moved() -> None:
    """Let the old names of :data:`MOVED` import (once per process)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())  # first: robodyn.model.catalog is also a folder of data
