"""Names of a package loaded on first use (PEP 562), and the old import paths of modules that moved.

:func:`lazy_names` gives a package its module-level ``__getattr__`` and ``__dir__``. :data:`MOVED` lists the
modules that moved when the package was laid out by layer (``robodyn.cli_args`` is ``robodyn.cli.args``) and
then by concept (``robodyn.analysis.linearize`` is ``robodyn.linearization.linearize``); :func:`install_moved`
lets the old names import the new modules, with a DeprecationWarning, so code written against them keeps working
for a release. :func:`forwarded_names` does the same for a module that became a package of the same name.
"""

from __future__ import annotations

import importlib
import sys
import warnings
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


def forwarded_names(package: str, module: str, names: tuple[str, ...]) -> tuple[Callable[[str], Any],
                                                                                Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` of a package that was a module (``robodyn.integrate.kernels`` is now the
    folder of the kernels; what the module held is ``module``): ``names`` still resolve, each with a
    DeprecationWarning naming where it is now, and the package's submodules import as usual."""
    known = frozenset(names)

    def __getattr__(name: str) -> Any:
        if name not in known:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warnings.warn(f"{package}.{name} moved to {module}.{name}: import it from there (the old name goes in the "
                      "next release)", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(module), name)  # not kept: every use of the old name is told

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | known)

    return __getattr__, __dir__


#: old module name -> the module it is now (the same module object under both names): the layout by layer
#: (issue 24: ``robodyn.cli_args``) and the layout by concept (issue 46: ``robodyn.analysis.linearize`` is
#: ``robodyn.linearization.linearize``). An old name still imports, with a DeprecationWarning; the names of
#: the second layout go in the release after it. (The kernels' templates are not here: they are sources a loader
#: executes, never imported.)
MOVED: Mapping[str, str] = {
    "robodyn.report.page": "robodyn.display.page",
    "robodyn.report.identify": "robodyn.identification.report",
    "robodyn.signals.parse": "robodyn.files.signal_text",
    "robodyn.model.names": "robodyn.base.names",
    "robodyn._lazy": "robodyn.base.lazy",
    "robodyn.analysis.assembly": "robodyn.mechanisms.loops.assembly",
    "robodyn.analysis.balancing": "robodyn.linear.balancing",
    "robodyn.analysis.base_parameters": "robodyn.identification.base_parameters",
    "robodyn.analysis.consistency": "robodyn.identification.consistency",
    "robodyn.analysis.controllability": "robodyn.linear.controllability",
    "robodyn.analysis.crossings": "robodyn.linear.crossings",
    "robodyn.analysis.design": "robodyn.control.design",
    "robodyn.analysis.equilibrium": "robodyn.linearization.equilibrium",
    "robodyn.analysis.estimates": "robodyn.identification.estimates",
    "robodyn.analysis.excitation": "robodyn.identification.excitation",
    "robodyn.analysis.families": "robodyn.linearization.families",
    "robodyn.analysis.identify": "robodyn.identification.identify",
    "robodyn.analysis.identify_fit": "robodyn.identification.fit",
    "robodyn.analysis.identify_problem": "robodyn.identification.problem",
    "robodyn.analysis.identify_rigid": "robodyn.identification.rigid",
    "robodyn.analysis.linearize": "robodyn.linearization.linearize",
    "robodyn.analysis.linearize_lean": "robodyn.linearization.lean",
    "robodyn.analysis.linearizer": "robodyn.linearization.linearizer",
    "robodyn.analysis.lti": "robodyn.linear.lti",
    "robodyn.analysis.ltv": "robodyn.linearization.ltv",
    "robodyn.analysis.margins": "robodyn.linear.margins",
    "robodyn.analysis.measured": "robodyn.identification.measured",
    "robodyn.analysis.modes": "robodyn.linear.modes",
    "robodyn.analysis.operating_point": "robodyn.linearization.points",
    "robodyn.analysis.reduced": "robodyn.linearization.reduced",
    "robodyn.analysis.regressor": "robodyn.identification.regressor",
    "robodyn.analysis.response": "robodyn.linear.response",
    "robodyn.analysis.rigid_data": "robodyn.identification.rigid_data",
    "robodyn.analysis.step_metrics": "robodyn.linear.step_metrics",
    "robodyn.analysis.systems": "robodyn.linear.systems",
    "robodyn.analysis.tangent_points": "robodyn.linearization.tangent_points",
    "robodyn.analysis.validity": "robodyn.linearization.validity",
    "robodyn.atomic": "robodyn.base.atomic",
    "robodyn.blas": "robodyn.base.blas",
    "robodyn.budget": "robodyn.base.budget",
    "robodyn.cli_args": "robodyn.cli.args",
    "robodyn.cli_kinematics": "robodyn.cli.kinematics",
    "robodyn.cli_report": "robodyn.cli.report",
    "robodyn.cli_sweep": "robodyn.cli.sweep",
    "robodyn.codegen.entry": "robodyn.integrate.kernels.entry",
    "robodyn.codegen.native": "robodyn.codegen.llvm.native",
    "robodyn.codegen.pyir": "robodyn.codegen.llvm.pyir",
    "robodyn.codegen.rowcall": "robodyn.codegen.llvm.rowcall",
    "robodyn.codegen.solve_ir": "robodyn.codegen.llvm.solve",
    "robodyn.codegen.tape_llvm": "robodyn.codegen.llvm.tape",
    "robodyn.digest": "robodyn.base.digest",
    "robodyn.display_cache": "robodyn.display.cache",
    "robodyn.errors": "robodyn.base.errors",
    "robodyn.formulas": "robodyn.display.formulas",
    "robodyn.integrate.chart": "robodyn.integrate.paths.chart",
    "robodyn.integrate.discrete": "robodyn.integrate.paths.discrete",
    "robodyn.integrate.entry": "robodyn.integrate.kernels.entry",
    "robodyn.integrate.entry_arguments": "robodyn.integrate.kernels.entry_arguments",
    "robodyn.integrate.exact": "robodyn.linear.exact",
    "robodyn.integrate.exact_image": "robodyn.integrate.paths.exact_image",
    "robodyn.integrate.exact_steps": "robodyn.linear.exact_steps",
    "robodyn.integrate.paths.exact": "robodyn.linear.exact",
    "robodyn.integrate.paths.exact_steps": "robodyn.linear.exact_steps",
    "robodyn.integrate.fused": "robodyn.integrate.kernels.fused",
    "robodyn.integrate.fused_ir": "robodyn.integrate.kernels.fused_ir",
    "robodyn.integrate.impacts": "robodyn.integrate.paths.impacts",
    "robodyn.integrate.implicit": "robodyn.integrate.methods.implicit",
    "robodyn.integrate.kernel_module": "robodyn.integrate.kernels.module",
    "robodyn.integrate.native_kernels": "robodyn.integrate.kernels.native",
    "robodyn.integrate.run_image": "robodyn.integrate.kernels.run_image",
    "robodyn.integrate.sampled": "robodyn.integrate.paths.sampled",
    "robodyn.integrate.sensitivities": "robodyn.integrate.paths.sensitivities",
    "robodyn.integrate.stiff": "robodyn.integrate.paths.stiff",
    "robodyn.integrate.tableaus": "robodyn.integrate.methods.tableaus",
    "robodyn.model.blocks": "robodyn.diagrams.blocks.library",
    "robodyn.model.blocks_sampled": "robodyn.diagrams.blocks.sampled",
    "robodyn.model.budget": "robodyn.base.budget",
    "robodyn.model.cached": "robodyn.files.cached",
    "robodyn.model.callables": "robodyn.model.kinds.callables",
    "robodyn.model.catalog": "robodyn.files.catalog",
    "robodyn.model.chain": "robodyn.mechanisms",
    "robodyn.model.chain.closed": "robodyn.mechanisms.chain.closed",
    "robodyn.model.chain.configuration": "robodyn.mechanisms.floating.configuration",
    "robodyn.model.chain.constrained": "robodyn.mechanisms.loops.constrained",
    "robodyn.model.chain.contacts": "robodyn.mechanisms.contact.contacts",
    "robodyn.model.chain.exported": "robodyn.mechanisms.chain.exported",
    "robodyn.model.chain.file": "robodyn.files.chain",
    "robodyn.model.chain.floating": "robodyn.mechanisms.floating.chain",
    "robodyn.model.chain.frames": "robodyn.mechanisms.chain.frames",
    "robodyn.model.chain.impacts": "robodyn.mechanisms.contact.impacts",
    "robodyn.model.chain.linearization": "robodyn.mechanisms.chain.linearization",
    "robodyn.model.chain.outputs": "robodyn.mechanisms.chain.outputs",
    "robodyn.model.chain.parts": "robodyn.mechanisms.chain.parts",
    "robodyn.model.chain.pinocchio": "robodyn.mechanisms.urdf.pinocchio",
    "robodyn.model.chain.quantities": "robodyn.mechanisms.chain.quantities",
    "robodyn.model.chain.regressor": "robodyn.mechanisms.chain.regressor",
    "robodyn.model.chain.system": "robodyn.mechanisms.chain.system",
    "robodyn.model.chain.tape_view": "robodyn.mechanisms.chain.tape_view",
    "robodyn.model.chain.tree": "robodyn.mechanisms.loops.tree",
    "robodyn.model.chain.urdf": "robodyn.mechanisms.urdf.chain",
    "robodyn.model.chain.urdf_file": "robodyn.mechanisms.urdf.file",
    "robodyn.model.chain_closed": "robodyn.mechanisms.chain.closed",
    "robodyn.model.chain_file": "robodyn.files.chain",
    "robodyn.model.chain_frames": "robodyn.mechanisms.chain.frames",
    "robodyn.model.chain_outputs": "robodyn.mechanisms.chain.outputs",
    "robodyn.model.chain_parts": "robodyn.mechanisms.chain.parts",
    "robodyn.model.chain_quantities": "robodyn.mechanisms.chain.quantities",
    "robodyn.model.chart": "robodyn.mechanisms.floating.chart",
    "robodyn.model.constraints": "robodyn.mechanisms.loops.constraints",
    "robodyn.model.diagram": "robodyn.diagrams.diagram",
    "robodyn.model.diagram_build": "robodyn.diagrams.build",
    "robodyn.model.diagram_code": "robodyn.diagrams.code",
    "robodyn.model.diagram_export": "robodyn.diagrams.export",
    "robodyn.model.diagram_parameters": "robodyn.diagrams.parameters",
    "robodyn.model.diagram_switching": "robodyn.diagrams.switching",
    "robodyn.model.discrete": "robodyn.model.kinds.discrete",
    "robodyn.model.files": "robodyn.files",
    "robodyn.model.files.cached": "robodyn.files.cached",
    "robodyn.model.files.cached_diagram": "robodyn.files.cached_diagram",
    "robodyn.model.files.catalog": "robodyn.files.catalog",
    "robodyn.model.files.deferred": "robodyn.files.deferred",
    "robodyn.model.files.diagram_file": "robodyn.files.diagram",
    "robodyn.model.files.light_bounds": "robodyn.files.light.bounds",
    "robodyn.model.files.light_record": "robodyn.files.light.record",
    "robodyn.model.files.light_shape": "robodyn.files.light.shape",
    "robodyn.model.files.loading": "robodyn.files.loading",
    "robodyn.model.files.parameter_values": "robodyn.files.parameter_values",
    "robodyn.model.files.reader": "robodyn.files.reader",
    "robodyn.model.files.records": "robodyn.files.records",
    "robodyn.model.files.yamlio": "robodyn.files.yamlio",
    "robodyn.model.lagrange": "robodyn.model.kinds.lagrange",
    "robodyn.model.linear": "robodyn.model.kinds.linear",
    "robodyn.model.linearization": "robodyn.model.kinds.symbolic_jacobians",
    "robodyn.model.manipulator_parameters": "robodyn.model.kinds.manipulator_parameters",
    "robodyn.model.mechanical": "robodyn.model.kinds.mechanical",
    "robodyn.model.point_frames": "robodyn.model.kinds.point_frames",
    "robodyn.model.reader": "robodyn.files.reader",
    "robodyn.model.sampled": "robodyn.diagrams.sampled",
    "robodyn.model.sensitivity": "robodyn.model.derived.sensitivity",
    "robodyn.model.sensitivity_code": "robodyn.model.derived.sensitivity_code",
    "robodyn.model.symbolic": "robodyn.model.kinds.symbolic",
    "robodyn.model.symbolic_form": "robodyn.model.kinds.symbolic_form",
    "robodyn.model.urdf": "robodyn.mechanisms.urdf.pinocchio",
    "robodyn.model.urdf_chain": "robodyn.mechanisms.urdf.chain",
    "robodyn.model.urdf_file": "robodyn.mechanisms.urdf.file",
    "robodyn.model.yamlio": "robodyn.files.yamlio",
    "robodyn.plots": "robodyn.results.plots",
    "robodyn.plots_frequency": "robodyn.linear.plots",
    "robodyn.progress": "robodyn.base.progress",
    "robodyn.sweep_dask": "robodyn.sweep.cluster",
    "robodyn.sweep_plan": "robodyn.sweep.plan",
    "robodyn.sweep_store": "robodyn.sweep.store",
    "robodyn.textfile": "robodyn.base.textfile",
    "robodyn.trajectory": "robodyn.results.trajectory",
    "robodyn.trajectory_files": "robodyn.results.files",
    "robodyn.trajectory_sensitivities": "robodyn.results.sensitivities",
}

class _MovedFinder:
    """A meta path finder that answers an old module name (:data:`MOVED`) with the module it is now."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in MOVED:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(fullname, self)  # type: ignore[arg-type]  # a loader by its methods, not importlib.abc

    def create_module(self, spec: Any) -> Any:
        warnings.warn(f"{spec.name} moved to {MOVED[spec.name]}: import it from there (the old name goes in the "
                      "next release)", DeprecationWarning, stacklevel=2)
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: Any) -> None:
        """The new module ran already: nothing to do."""


def install_moved() -> None:
    """Let the old names of :data:`MOVED` import (once per process)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())  # first: robodyn.model.catalog is also a folder of data
