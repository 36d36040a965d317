"""The API reference, generated from the public names' signatures and docstrings: ``docs/reference.md``.

``python -m robodyn.reference > docs/reference.md`` writes it; a test checks that the file in the repository
is what this module writes, so the reference cannot fall behind the code.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from pathlib import Path, PurePath
from types import MappingProxyType
from typing import Any, Final

__all__ = ["MODULES", "public_names", "reference_text"]

_GROUPS = (
    ("Models", ("load", "load_file", "read_model_text", "Model", "System", "SymbolicSystem", "LinearSystem",
                "MechanicalSystem", "ManipulatorSystem", "LagrangianSystem", "CATALOG", "ScalarDamping")),
    ("Simulation", ("simulate", "Trajectory", "BatchTrajectory", "SimulationStats", "Event", "StateFeedback")),
    ("Analysis", ("classify", "Classification", "find_equilibrium", "OperatingPoint", "linearize",
                  "linearize_trajectory", "LTVSystem", "modes", "Modes", "Mode", "modal_decomposition",
                  "ModalDecomposition", "forced_response", "validity", "Validity", "existence", "Existence",
                  "lipschitz", "LipschitzBound", "picard", "PicardIterates", "second_order", "SecondOrder",
                  "Response", "verify", "Verification")),
    ("Rigid-body identification", ("regressor", "Regressor", "base_parameters", "BaseParameters", "design_excitation",
                                   "Excitation", "identify_rigid", "RigidIdentification", "consistent_parameters",
                                   "ConsistentParameters")),
    ("Kinematics", ("Kinematics", "Pose", "inverse_kinematics", "IKResult", "FramePath", "animate")),
    ("Errors", ("RobodynError", "InputError", "ModelFileError", "ExpressionError", "UnknownNameError",
                "ShapeError", "NumericalError", "SingularMatrixError", "ConvergenceError", "RobodynWarning")),
)


def _summary(obj: Any) -> str:
    """The docstring's first paragraph, on one line."""
    text = inspect.getdoc(obj) or ""
    first = text.split("\n\n")[0]
    return " ".join(first.split())


def _signature(obj: Any) -> str:
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"
    return re.sub(r" at 0x[0-9a-f]+", "", text)  # no memory addresses in default values


#: The public modules besides ``robodyn`` itself: every name in their ``__all__`` is documented.
MODULES: Final = (
    ("Models (`robodyn.model`)", "robodyn.model"),
    ("Rigid-body mechanisms (`robodyn.mechanisms`)", "robodyn.mechanisms"),
    ("Model files (`robodyn.files`)", "robodyn.files"),
    ("Input signals (`robodyn.signals`)", "robodyn.signals"),
    ("Figures (`robodyn.results.plots`)", "robodyn.results.plots"),
    ("Kinematics (`robodyn.kinematics`)", "robodyn.kinematics"),
    ("The block library of diagrams (`robodyn.blocks`)", "robodyn.blocks"),
)


def _members(cls: type, documented: set[type]) -> list[tuple[str, Any]]:
    """The public methods and properties of ``cls``: its own and those of the classes it inherits from that are
    not documented on their own (mixins such as a chain's derived quantities), not those a documented base class
    has (its own or its bases'), not ``object``'s."""
    result: dict[str, Any] = {}
    inherited = {base for owner in cls.__mro__[1:] if owner in documented for base in owner.__mro__}
    for owner in reversed(cls.__mro__):
        if owner is object or (owner is not cls and owner in inherited):
            continue
        for name, member in vars(owner).items():
            if name.startswith("_"):
                continue
            if isinstance(member, staticmethod | classmethod):
                member = member.__func__
            if callable(member) or isinstance(member, property):
                result[name] = member
    return sorted(result.items())


def public_names() -> dict[str, list[str]]:
    """Every public name by module: ``robodyn``'s ``__all__`` and each of :data:`MODULES`' (what the reference
    must document; a test checks it does)."""
    import importlib

    import robodyn

    names = {"robodyn": sorted(set(robodyn.__all__) - {"__version__"})}
    for _, module in MODULES:
        names[module] = sorted(importlib.import_module(module).__all__)
    return names


def _entry(name: str, obj: Any, documented: set[type]) -> list[str]:
    if inspect.isclass(obj):
        lines = [f"### `{name}`", "", f"class `{name}{_signature(obj)}`", "", _summary(obj), ""]
        for member_name, member in _members(obj, documented):
            head = f"`{member_name}` (property)" if isinstance(member, property) else \
                f"`{member_name}{_signature(member)}`"
            summary = _summary(member)
            lines.append(f"- {head}: {summary}" if summary else f"- {head}")
        return [*lines, ""]
    if inspect.ismodule(obj):
        return [f"### `{name}`", "", f"The module `{obj.__name__}` (its own section below): {_summary(obj)}", ""]
    if callable(obj):
        return [f"### `{name}{_signature(obj)}`", "", _summary(obj), ""]
    if isinstance(obj, Mapping) or (isinstance(obj, tuple | list | frozenset | set) and len(obj) <= 40):
        kind = "read-only mapping" if isinstance(obj, MappingProxyType) else type(obj).__name__
        return [f"### `{name}`", "", f"A {kind} of {len(obj)} entries: {', '.join(map(str, obj))}.", ""]
    if isinstance(obj, PurePath):
        return [f"### `{name}`", "", f"A path inside the installed package: `{_in_package(obj)}`.", ""]
    return [f"### `{name}`", "", f"A {type(obj).__name__}: `{obj!r}`"[:200], ""]


def _in_package(path: PurePath) -> str:
    """``path`` from the folder holding the ``robodyn`` package (the reference is the same in every checkout)."""
    root = Path(__file__).resolve().parent.parent
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return Path(path).name


def _public(module: Any, name: str) -> Any:
    """The object the name stands for: a submodule of the same name (``robodyn.sweep``, which importing binds in
    the package) stands for the function it defines."""
    value = getattr(module, name)
    return getattr(value, name, value) if inspect.ismodule(value) else value


def reference_text() -> str:
    """The reference as Markdown (deterministic: the same text for the same code)."""
    import importlib

    import robodyn

    names = public_names()
    public = set(names["robodyn"])
    listed = {name for _, group in _GROUPS for name in group}
    lines = ["# API reference", "",
             "Generated from the docstrings by `python -m robodyn.reference` (a test keeps it in sync). The names",
             "of the first sections are importable from `robodyn`; the later sections are modules of their own. The",
             "tutorial ([tutorial.md](tutorial.md)) shows them in use.", ""]
    groups = [*_GROUPS, ("Other", tuple(sorted(public - listed)))]
    entries: list[tuple[str, list[tuple[str, Any]]]] = []
    for title, group in groups:
        present = [(n, _public(robodyn, n)) for n in group if n in public]
        if present:
            entries.append((title, present))
    for title, module in MODULES:
        imported = importlib.import_module(module)
        shown = {n for _, items in entries for n, _ in items}
        present = [(n, _public(imported, n)) for n in names[module] if n not in shown]
        if present:
            entries.append((title, present))
    documented = {obj for _, items in entries for _, obj in items if inspect.isclass(obj)}
    for title, items in entries:
        lines += [f"## {title}", ""]
        for name, obj in items:
            lines += _entry(name, obj, documented)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(reference_text(), end="")
