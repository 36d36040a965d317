"""Every public name is listed once in effect: a package's lazy table, its TYPE_CHECKING imports and ``__all__`` agree.

Each package that loads its names on first use (robodyn, robodyn.model, robodyn.mechanisms, robodyn.files,
robodyn.signals, ...) writes them in three places: the table ``_LAZY`` (name -> module), the imports under
``TYPE_CHECKING`` (for type checkers and IDEs) and ``__all__``. This test reads the three from the source and
fails on any difference, then imports every name through the package.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src"
PACKAGES = sorted(
    ".".join(path.parent.relative_to(SOURCE).parts) for path in (SOURCE / "robodyn").rglob("__init__.py")
    if "_LAZY" in path.read_text(encoding="utf-8")
)
#: Names a table resolves on purpose without listing them in __all__ (each has a comment at its entry).
NOT_IN_ALL = {"robodyn.signals": {"HELD_KINDS", "N_COEF"}}


def _parts(package: str) -> tuple[dict[str, str], dict[str, str], set[str], set[str]]:
    """(lazy table, TYPE_CHECKING name -> module, __all__, names imported eagerly) of ``package``'s __init__."""
    path = SOURCE.joinpath(*package.split("."), "__init__.py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    table: dict[str, str] = {}
    checking: dict[str, str] = {}
    listed: set[str] = set()
    eager: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if "_LAZY" in names and isinstance(node.value, ast.Dict):
                table = {ast.literal_eval(k): ast.literal_eval(v) for k, v in zip(node.value.keys, node.value.values)
                         if k is not None}
            if "__all__" in names and node.value is not None:
                listed = set(ast.literal_eval(node.value))
        elif isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for item in node.body:
                if isinstance(item, ast.ImportFrom) and item.module:
                    checking.update({alias.asname or alias.name: item.module for alias in item.names})
                elif isinstance(item, ast.Import):  # a public submodule: import robodyn.blocks as blocks
                    checking.update({alias.asname: alias.name for alias in item.names if alias.asname})
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("robodyn."):
            if node.module != "robodyn.base.lazy":
                eager |= {alias.asname or alias.name for alias in node.names}
    return table, checking, listed, eager


def test_the_scan_finds_the_lazy_packages() -> None:
    assert {"robodyn", "robodyn.model", "robodyn.signals"} <= set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_the_table_the_type_checking_imports_and_all_agree(package: str) -> None:
    table, checking, listed, eager = _parts(package)
    assert table, f"{package}: no _LAZY table found"
    hidden = NOT_IN_ALL.get(package, set())
    assert checking == {k: v for k, v in table.items() if k not in hidden}, (
        f"{package}: the TYPE_CHECKING imports differ from _LAZY: "
        f"{sorted(set(checking.items()) ^ set(table.items()))}")
    expected = (set(table) - hidden) | eager | ({"__version__"} if package == "robodyn" else set())
    assert listed == expected, f"{package}: __all__ differs from the table: {sorted(listed ^ expected)}"


@pytest.mark.parametrize("package", PACKAGES)
def test_every_listed_name_imports_from_its_module(package: str) -> None:
    table, _, _, _ = _parts(package)
    module = importlib.import_module(package)
    for name, source in table.items():
        value = getattr(module, name)
        if source == f"{package}.{name}" and not hasattr(importlib.import_module(source), name):  # robodyn.blocks
            assert value is importlib.import_module(source), f"{package}.{name}"
            continue
        expected = getattr(importlib.import_module(source), name)
        if isinstance(value, ModuleType):  # robodyn.sweep: the package of that name, callable as the function
            assert callable(value) and value.__name__ == f"{package}.{name}", f"{package}.{name}"
        else:
            assert value is expected, f"{package}.{name}"


def test_the_old_paths_of_moved_modules_import_the_new_modules() -> None:
    """Code written against the flat layout (``from robodyn.sweep_plan import Span``, docs before issue 24) keeps
    working: each old name is the new module itself."""
    import robodyn
    from robodyn.base.lazy import MOVED

    assert len(MOVED) >= 140
    for old, new in MOVED.items():
        assert not SOURCE.joinpath(*old.split(".")).with_suffix(".py").exists(), f"{old} exists again"
        sys.modules.pop(old, None)  # told again, whoever imported it before
        with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
            assert importlib.import_module(old) is importlib.import_module(new), old
    sys.modules.pop("robodyn.sweep_plan", None)
    with pytest.warns(DeprecationWarning):
        from robodyn.sweep_plan import Span  # the documented spellings

    assert Span is robodyn.sweep.plan.Span


@pytest.mark.parametrize(("package", "name", "module"), [
    ("robodyn.integrate.methods", "REGISTRY", "robodyn.integrate.methods.registry"),
    ("robodyn.integrate.kernels", "run_adaptive", "robodyn.integrate.kernels.run"),
])
def test_a_module_that_became_a_package_still_answers_its_names(package: str, name: str, module: str) -> None:
    """robodyn.integrate.methods and .kernels were modules before their folders: their names still resolve, with a
    DeprecationWarning naming the new home, and are the same objects."""
    old = importlib.import_module(package)
    with pytest.warns(DeprecationWarning, match=f"{package}.{name} moved to {module}.{name}"):
        value = getattr(old, name)
    assert value is getattr(importlib.import_module(module), name)
    with pytest.raises(AttributeError):
        old.no_such_name  # noqa: B018


def test_the_packages_that_were_modules_still_give_their_names() -> None:
    """robodyn.files, .chain, robodyn.sweep, .display and .cli were modules: their names are still there."""
    expected = {
        "robodyn.files": ["KINDS", "load", "load_file", "model_from_document", "model_text", "read_model_text",
                                "source_stem"],
        "robodyn.mechanisms": ["CLOSED_FORM_LIMIT", "DEFAULT_FRICTION_SMOOTHING", "DEFAULT_GRAVITY", "ChainSystem",
                                "Joint", "Link"],
        "robodyn.sweep": ["DEFAULT_CHUNK", "MAX_SAMPLES", "REDUCERS", "Span", "SweepPlan", "iter_parts", "load_sweep",
                          "parse_range", "run_chunk", "sweep", "write_part"],
        "robodyn.display": ["html_table", "model_html", "result_html", "svg_plot"],
        "robodyn.cli": ["main"],
    }
    for package, names in expected.items():
        module = importlib.import_module(package)
        for name in names:
            assert getattr(module, name) is not None, f"{package}.{name}"
