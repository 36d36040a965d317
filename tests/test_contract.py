"""The model contract holds in the code: consumers ask models for capabilities, never inspect them.

An AST scan of every module outside the folders that define the model kinds (``robodyn/model/``,
``robodyn/mechanisms/``, ``robodyn/diagrams/`` and ``robodyn/files/``, whose record is a model too): no
``isinstance``/``issubclass`` against a model kind (the base class ``Model`` is allowed: it tells a model from
something else), no access to a private attribute that a model class defines (``_f``, ``_mass_numeric``, ...), no
model ``__dict__`` or ``vars(model)``, no ``.kind`` compared with a model kind, no decision on ``type(model)`` (its
name in an error message is fine), no ``getattr``/``hasattr``/``setattr`` on a model, no private name imported from
those folders, and no attribute of a model read that the contract (:class:`robodyn.model.protocol.ModelContract`)
does not list. A "model" is a value whose name is ``model`` or ends in ``.model`` or ``_model``.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from robodyn.model.system import Model

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "robodyn"
MODEL = PACKAGE / "model"
#: The folders that define model kinds: the contract is theirs to implement, everyone else's to ask.
MODEL_FOLDERS = (MODEL, PACKAGE / "mechanisms", PACKAGE / "diagrams", PACKAGE / "files")
MODEL_MODULES = tuple(f"robodyn.{folder.name}" for folder in MODEL_FOLDERS)


@functools.cache  # parsed once per file run: the trees are only read
def _trees(*folders: Path) -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(encoding="utf-8")) for folder in folders
            for path in sorted(folder.rglob("*.py"))}


def _model_classes(trees: dict[Path, ast.Module]) -> set[str]:
    """Names of the classes in the model folders that derive (directly or not) from Model, Model itself excluded."""
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


_MODELISH = re.compile(r"(^|[._])model$")


def _is_model(node: ast.AST) -> bool:
    return _MODELISH.search(ast.unparse(node)) is not None


def _contract() -> set[str]:
    """The members of the contract: Model's public surface (tests/model/test_protocol.py keeps ModelContract equal)."""
    names = {n for n in dir(Model) if not n.startswith("_")}
    for klass in Model.__mro__:
        names |= set(getattr(klass, "__annotations__", {}))
    return {n for n in names if not n.startswith("_")} | {"_repr_html_", "_repr_latex_"}


def _model_kinds(trees: dict[Path, ast.Module]) -> set[str]:
    """The ``kind = "..."`` strings the model classes declare."""
    kinds = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if (isinstance(item, ast.Assign) and any(getattr(t, "id", "") == "kind" for t in item.targets)
                            and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str)):
                        kinds.add(item.value.value)
    return kinds


def _is_type_of_model(node: ast.AST) -> bool:
    """Whether ``node`` is ``type(<a model>)`` (its name may be shown; nothing may be decided on it)."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type"
            and len(node.args) == 1 and _is_model(node.args[0]))


@functools.cache  # read once for the file's 23 scans, not in each (~2 s a scan: 55 s -> 5 s for the file)
def _model_facts() -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    """The model classes, their private members, their kind strings and the contract's members."""
    model_trees = _trees(*MODEL_FOLDERS)
    kinds = _model_classes(model_trees)
    return (frozenset(kinds), frozenset(_private_members(model_trees, kinds)), frozenset(_model_kinds(model_trees)),
            frozenset(_contract()))


def _violations(trees: dict[Path, ast.Module]) -> list[str]:
    """What ``trees`` (modules outside the model folders) do that the contract forbids, one line each."""
    kinds, private, kind_names, contract = _model_facts()
    found = []
    for path, tree in trees.items():
        def report(node: ast.AST, what: str, where: str = path.name) -> None:
            found.append(f"{where}:{getattr(node, 'lineno', 0)}: {what}: {ast.unparse(node)[:80]}")

        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2):
                tested = set(_class_names(node.args[1])) & kinds
                if tested:
                    report(node, f"{node.func.id} on the model kind(s) {sorted(tested)}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
                if node.func.id in ("getattr", "hasattr", "setattr", "delattr") and _is_model(node.args[0]):
                    report(node, f"{node.func.id} on a model (ask for a capability of the contract)")
                if node.func.id == "vars" and _is_model(node.args[0]):
                    report(node, "a model's vars()")
            if (isinstance(node, ast.Attribute) and node.attr not in ("__name__", "__qualname__")
                    and _is_type_of_model(node.value)):
                report(node, "an attribute of a model's class (ask for a capability instead)")
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                if any(_is_type_of_model(o) or (isinstance(o, ast.Attribute) and _is_type_of_model(o.value))
                       for o in operands):
                    report(node, "a decision on a model's class (ask for a capability instead)")
                for operand in operands:
                    if isinstance(operand, ast.Attribute) and operand.attr == "kind":
                        constants = {o.value for o in operands if isinstance(o, ast.Constant)}
                        for o in operands:
                            if isinstance(o, ast.Tuple | ast.List | ast.Set):
                                constants |= {e.value for e in o.elts if isinstance(e, ast.Constant)}
                        if _is_model(operand.value) or constants & kind_names:
                            report(node, "a model's kind compared (ask for a capability instead)")
            if isinstance(node, ast.Attribute) and node.attr in private:
                if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                    report(node, "private model attribute")
            if isinstance(node, ast.Attribute) and node.attr == "__dict__" and "model" in ast.unparse(node.value):
                report(node, "a model's __dict__")
            if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and _is_model(node.value)
                    and node.attr not in contract and not node.attr.startswith("__")):
                report(node, f"{node.attr!r} is not in the model contract")
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(MODEL_MODULES):
                hidden = [alias.name for alias in node.names if alias.name.startswith("_")]
                if hidden:
                    report(node, f"private name(s) {hidden} imported from {node.module}")
    return found


def test_the_scan_knows_the_model_kinds_and_their_private_members() -> None:
    trees = _trees(*MODEL_FOLDERS)
    kinds = _model_classes(trees)
    assert {"System", "SymbolicSystem", "LinearSystem", "ManipulatorSystem", "MechanicalSystem",
            "LagrangianSystem", "ChainSystem", "UrdfSystem"} <= kinds
    assert {"_f", "_h", "_checked", "_factor"} <= _private_members(trees, kinds)


def test_no_module_outside_the_model_folders_inspects_a_model() -> None:
    outside = {path: tree for path, tree in _trees(PACKAGE).items()
               if not any(folder in path.parents for folder in MODEL_FOLDERS)}
    assert len(outside) > 20  # the scan sees the package
    violations = _violations(outside)
    assert not violations, "ask the model for a capability instead:\n" + "\n".join(violations)


@pytest.mark.parametrize("source", [
    "isinstance(m, ChainSystem)", "isinstance(m, LinearSystem | MechanicalSystem)",
    "isinstance(m, (robodyn.SymbolicSystem, int))", "m._f(t, x, u, p)", "model.__dict__['x']",
    "if model.kind == 'chain':\n    pass", "ok = self.model.kind != 'linear'", "urdf = m.kind in ('urdf', 'chain')",
    "if type(model).__name__ == 'ChainSystem':\n    pass", "if type(model) is ChainSystem:\n    pass",
    "fast = type(model).arguments is Model.arguments",
    "getattr(model, '_f')", "hasattr(model, 'coordinates')", "getattr(problem.model, 'x_symbols', None)",
    "setattr(model, 'name', 'x')", "vars(model)", "from robodyn.files.loading import _describe",
    "from robodyn.model import _lazy_names, load", "model.x_symbols", "n = self._model.n_coordinates",
    "h = problem.model.h_expr",
])
def test_the_scan_catches_each_pattern(source: str) -> None:
    assert _violations({Path("probe.py"): ast.parse(source)})


def test_the_scan_allows_asking_and_the_base_class() -> None:
    assert not _violations({Path("probe.py"): ast.parse(
        "isinstance(m, Model)\nm.f_raw(t, x, u, p)\nm.jacobian_method\nself._f = 1\nmodel.symbolic_form()\n"
        "model.n_states\nif model.manipulator() is None:\n    raise InputError(f'got {type(model).__name__}')\n"
        "title = f'{type(model).__name__} {model.name!r}'\n"
        "ok = signal.kind == 'step'\nfrom robodyn.base.names import did_you_mean")})


def test_a_chains_frames_and_outputs_use_its_public_tape_view() -> None:
    """robodyn.mechanisms.chain.frames and .outputs read the chain through ChainSystem.tape_view(), never its
    privates."""
    reaches = []
    for name in ("frames.py", "outputs.py"):
        tree = ast.parse((PACKAGE / "mechanisms" / "chain" / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                    and ast.unparse(node.value) != "super()"):
                reaches.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    assert not reaches, "\n".join(reaches)
