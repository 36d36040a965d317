"""The shape of the house holds: one concept per folder, none too large to read, tests that mirror the sources, no
private name borrowed across folders and no old module path used by robodyn itself (docs/dev/architecture.md).

Each check reads the sources as text and ``ast``; nothing is imported. Probes show that each one catches what it is
for.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "robodyn"

#: Lines of Python a folder may hold in its own files (its subfolders counted apart): "about 3,000".
FOLDER_LINES = 3_300


def _folder_lines(folder: Path) -> int:
    return sum(len(path.read_text(encoding="utf-8").splitlines()) for path in folder.glob("*.py"))


def _folders() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__" and any(p.glob("*.py")))


def test_no_folder_is_too_large_to_read() -> None:
    large = {str(f.relative_to(PACKAGE)): _folder_lines(f) for f in [PACKAGE, *_folders()]}
    assert len(large) > 20
    too_large = {name: lines for name, lines in large.items() if lines > FOLDER_LINES}
    assert not too_large, f"split these folders by concept (more than {FOLDER_LINES} lines of their own): {too_large}"


def test_the_tests_mirror_the_sources() -> None:
    """Every folder of tests/ (its data aside) is a folder of src/robodyn/: a test lives beside what it tests."""
    tests = ROOT / "tests"
    folders = [p for p in tests.rglob("*") if p.is_dir() and p.name != "__pycache__"
               and "data" not in p.relative_to(tests).parts]
    assert len(folders) > 15
    stray = [str(p.relative_to(tests)) for p in folders if not (PACKAGE / p.relative_to(tests)).is_dir()]
    assert not stray, f"test folders with no source folder of the same name: {stray}"
    names = [p.name for p in tests.rglob("test_*.py")]
    assert len(names) == len(set(names)), "two test files share a name (pytest imports them by name)"


def _top(module: str) -> str:
    """The folder of robodyn a module belongs to (``robodyn.linear.modes`` -> ``robodyn.linear``)."""
    return ".".join(module.split(".")[:2])


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def private_imports(module: str, source: str) -> list[str]:
    """``from robodyn.x import _y`` in ``module`` where robodyn.x is in another folder: a private name borrowed."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("robodyn."):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__") and _top(node.module) != _top(
                        module):
                    found.append(f"{module}:{node.lineno} imports {node.module}.{alias.name}")
    return found


def test_no_private_name_is_imported_from_another_folder() -> None:
    found = [hit for path in PACKAGE.rglob("*.py") for hit in private_imports(_module(path),
                                                                          path.read_text(encoding="utf-8"))]
    assert not found, "make the name public (a docstring and __all__) or move the code:\n" + "\n".join(found)


@pytest.mark.parametrize(("module", "source", "caught"), [
    ("robodyn.linearization.probe", "from robodyn.model.system import _names", True),
    ("robodyn.linearization.probe", "def f():\n    from robodyn.integrate.simulate import _Plan\n", True),
    ("robodyn.linearization.probe", "from robodyn.linearization.linearize import _central", False),
    ("robodyn.linearization.probe", "from robodyn.model.system import __version__", False),
])
def test_the_private_scan_catches_what_it_is_for(module: str, source: str, caught: bool) -> None:
    assert bool(private_imports(module, source)) is caught


def _old_paths() -> dict[str, str]:
    """MOVED of robodyn.base.lazy, read from its source."""
    tree = ast.parse((PACKAGE / "base" / "lazy.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "MOVED":
            return ast.literal_eval(node.value)  # type: ignore[arg-type]
    raise AssertionError("MOVED not found")


def old_path_uses(source: str, moved: dict[str, str]) -> list[str]:
    """The old module paths ``source`` imports (``import a.b``, ``from a.b import c``, ``from a import b`` with a.b
    moved), also inside strings of code (``subprocess`` scripts)."""
    found = []
    pattern = re.compile(r"(?:^|[\s;\"'(])(?:from (robodyn(?:\.\w+)*) import ([\w, ()]+)|import (robodyn(?:\.\w+)+))")
    for match in pattern.finditer(source):
        module, names, imported = match.groups()
        if imported and imported in moved:
            found.append(imported)
        if module:
            if module in moved:
                found.append(module)
            for name in re.split(r"[,()\s]+", names or ""):
                if name and f"{module}.{name}" in moved:
                    found.append(f"{module}.{name}")
    return found


def test_robodyn_uses_no_old_module_path() -> None:
    """Sources, tests, benchmarks and examples import modules where they are (the old paths are for users' code)."""
    moved = _old_paths()
    assert len(moved) > 100
    found = []
    for folder in ("src", "tests", "benchmarks", "examples"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name in ("test_public_names.py", "test_shape.py"):  # old paths on purpose (and probes)
                continue
            found += [f"{path.relative_to(ROOT)}: {old}" for old in old_path_uses(path.read_text(encoding="utf-8"),
                                                                                  moved)]
    assert not found, "import these from their new modules (robodyn.base.lazy.MOVED):\n" + "\n".join(found)


@pytest.mark.parametrize(("source", "caught"), [
    ("from robodyn.analysis.linearize import linearize", ["robodyn.analysis.linearize"]),
    ("from robodyn import trajectory", ["robodyn.trajectory"]),
    ("import robodyn.model.chain.floating as f", ["robodyn.model.chain.floating"]),
    ("code = 'from robodyn.model import chart as c'", ["robodyn.model.chart"]),
    ("from robodyn.linearization.linearize import linearize", []),
    ("from robodyn import linearize, simulate", []),
])
def test_the_old_path_scan_catches_what_it_is_for(source: str, caught: list[str]) -> None:
    assert old_path_uses(source, _old_paths()) == caught


def _found_by_a_registry(path: Path) -> bool:
    """Whether the module declares a top-level ``BLOCK``: a block module, found by the block registry
    (docs/dev/architecture.md, "A block": one file per block, named nowhere else)."""
    return any(isinstance(node, (ast.Assign, ast.AnnAssign)) and "BLOCK" in {
        getattr(t, "id", None) for t in (node.targets if isinstance(node, ast.Assign) else [node.target])}
        for node in ast.parse(path.read_text(encoding="utf-8")).body)


def unnamed_modules(folder: Path) -> list[str]:
    """The modules and subpackages of ``folder`` its ``__init__.py`` docstring does not name as modules (``:mod:``
    paths ending in ``.name``, ````name````, ``name.py``, ``name/``); modules a registry finds need not be named."""
    init = folder / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) if init.exists() else None
    parts = sorted([p.stem for p in folder.glob("*.py") if p.stem not in ("__init__", "__main__")
                    and not _found_by_a_registry(p)]
                   + [p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()])
    if not doc:
        return parts or ["(no docstring)"]
    return [name for name in parts
            if not re.search(rf"(\.{name}(?![\w-])|``{name}``|`{name}`|\b{name}\.py\b|\b{name}/)", doc)]


def test_every_package_docstring_names_its_modules() -> None:
    """A folder's ``__init__.py`` says what each of its modules and subfolders holds (docs/dev/architecture.md: one
    concept per folder, told where it is); the root package's docstring is the user's, the layers table names its
    folders."""
    folders = [f for f in _folders() if f != PACKAGE]
    assert all((f / "__init__.py").exists() for f in folders), [str(f) for f in folders if not (f / "__init__.py")
                                                                 .exists()]
    unnamed = {str(f.relative_to(PACKAGE)): names for f in folders if (names := unnamed_modules(f))}
    assert not unnamed, f"name these modules in their package's docstring: {unnamed}"


@pytest.mark.parametrize(("doc", "unnamed"), [
    ('"""The registry (:mod:`~robodyn.x.registry`), ``tableaus`` and implicit.py."""', []),
    ('"""The registry, the tableaus and the implicit methods."""', ["implicit", "registry", "tableaus"]),
    ('"""(:mod:`~robodyn.x.registry_old`), ``tableaus``, implicit.py"""', ["registry"]),
    (None, ["implicit", "registry", "tableaus"]),
])
def test_the_docstring_scan_catches_what_it_is_for(tmp_path: Path, doc: str | None, unnamed: list[str]) -> None:
    for name in ("registry", "tableaus", "implicit"):
        (tmp_path / f"{name}.py").write_text("", encoding="utf-8")
    (tmp_path / "gain.py").write_text('BLOCK = BlockKind("gain", gain)\n', encoding="utf-8")  # found, not named
    if doc is not None:
        (tmp_path / "__init__.py").write_text(doc + "\n", encoding="utf-8")
    assert unnamed_modules(tmp_path) == unnamed
