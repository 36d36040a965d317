"""The model contract holds in the code: consumers ask models for capabilities, never inspect them.

An AST scan of every module outside ``robodyn/model/``: no ``isinstance``/``issubclass`` against a model
kind (the base class ``Model`` is allowed: it tells a model from something else), no access to a private
attribute that a model class defines (``_f``, ``_mass_numeric``, ...) and no model ``__dict__``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "robodyn"
MODEL = PACKAGE / "model"


def _trees(folder: Path) -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(folder.rglob("*.py"))}


def _model_classes(trees: dict[Path, ast.Module]) -> set[str]:
    """Names of the classes in model/ that derive (directly or not) from Model, Model itself excluded."""
    bases: dict[str, set[str]] = {}
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
    kinds = {"Model"}
    changed = True
    while changed:
        changed = False
        for name, parents in bases.items():
            if name not in kinds and parents & kinds:
                kinds.add(name)
                changed = True
    return kinds - {"Model"}


def _private_members(trees: dict[Path, ast.Module], classes: set[str]) -> set[str]:
    """Private (single underscore) methods and attributes defined by the model classes."""
    names: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ClassDef) and node.name in classes | {"Model"}):
                continue
            for item in ast.walk(node):
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(item.name)
                elif isinstance(item, ast.Attribute) and isinstance(item.value, ast.Name) and item.value.id == "self":
                    if isinstance(item.ctx, ast.Store):
                        names.add(item.attr)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def _class_names(node: ast.expr) -> list[str]:
    """The class names an isinstance() second argument mentions (tuples and ``A | B`` unions)."""
    if isinstance(node, ast.Tuple):
        return [name for element in node.elts for name in _class_names(element)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _class_names(node.left) + _class_names(node.right)
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    return []


def _violations(trees: dict[Path, ast.Module]) -> list[str]:
    """What ``trees`` (modules outside model/) do that the contract forbids, one line each."""
    model_trees = _trees(MODEL)
    kinds = _model_classes(model_trees)
    private = _private_members(model_trees, kinds)
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2):
                tested = set(_class_names(node.args[1])) & kinds
                if tested:
                    found.append(f"{path.name}:{node.lineno}: {node.func.id} on the model kind(s) {sorted(tested)}")
            if isinstance(node, ast.Attribute) and node.attr in private:
                if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                    found.append(f"{path.name}:{node.lineno}: private model attribute {ast.unparse(node)}")
            if isinstance(node, ast.Attribute) and node.attr == "__dict__" and "model" in ast.unparse(node.value):
                found.append(f"{path.name}:{node.lineno}: a model's __dict__: {ast.unparse(node)}")
    return found


def test_the_scan_knows_the_model_kinds_and_their_private_members() -> None:
    trees = _trees(MODEL)
    kinds = _model_classes(trees)
    assert {"System", "SymbolicSystem", "LinearSystem", "ManipulatorSystem", "MechanicalSystem",
            "LagrangianSystem", "ChainSystem", "UrdfSystem"} <= kinds
    assert {"_f", "_h", "_checked", "_factor"} <= _private_members(trees, kinds)


def test_no_module_outside_model_inspects_a_model() -> None:
    outside = {path: tree for path, tree in _trees(PACKAGE).items() if MODEL not in path.parents}
    assert len(outside) > 20  # the scan sees the package
    violations = _violations(outside)
    assert not violations, "ask the model for a capability instead:\n" + "\n".join(violations)


@pytest.mark.parametrize("source", [
    "isinstance(m, ChainSystem)", "isinstance(m, LinearSystem | MechanicalSystem)",
    "isinstance(m, (robodyn.SymbolicSystem, int))", "m._f(t, x, u, p)", "model.__dict__['x']",
])
def test_the_scan_catches_each_pattern(source: str) -> None:
    assert _violations({Path("probe.py"): ast.parse(source)})


def test_the_scan_allows_asking_and_the_base_class() -> None:
    assert not _violations({Path("probe.py"): ast.parse(
        "isinstance(m, Model)\nm.f_raw(t, x, u, p)\nm.jacobian_method\nself._f = 1")})
