"""The layers hold: no module imports from a layer above its own (docs/dev/architecture.md, "Layers").

Every import of every module is read from its source — at module level, inside functions and under
``TYPE_CHECKING`` alike — and resolved to the robodyn module it names. A module may import from its own layer
and the layers below. Deliberate lazy imports upward (a result's ``.plot()`` reaching the plotting layer) are
listed in :data:`ALLOWED`, each with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src"

#: The layers from the bottom up: (name, module prefixes). A module belongs to the layer of its longest prefix.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("robodyn.base",)),
    ("rigid", ("robodyn.rigid",)),
    ("codegen", ("robodyn.codegen",)),
    ("display", ("robodyn.display",)),
    ("model", ("robodyn.model",)),
    ("signals", ("robodyn.signals",)),
    ("mechanisms", ("robodyn.mechanisms",)),
    ("diagrams", ("robodyn.diagrams",)),
    ("files", ("robodyn.files",)),
    ("results", ("robodyn.results",)),
    ("integrate", ("robodyn.integrate",)),
    ("linear", ("robodyn.linear",)),
    ("control", ("robodyn.control",)),
    ("linearization", ("robodyn.linearization",)),
    ("identification", ("robodyn.identification",)),
    ("analysis", ("robodyn.analysis",)),
    ("kinematics", ("robodyn.kinematics",)),
    ("export", ("robodyn.export",)),
    ("report", ("robodyn.report", "robodyn.sweep")),
    ("api", ("robodyn", "robodyn.reference", "robodyn.blocks")),
    ("cli", ("robodyn.cli",)),
)

#: The package version is defined in the root module, which imports nothing but the lazy loader: any layer reads it.
ROOT_NAMES_ANYWHERE = frozenset({"__version__"})

#: (importing module, imported module): deliberate lazy imports upward, each inside the function that needs it.
ALLOWED: dict[tuple[str, str], str] = {
    # a linear system answers control questions about itself (sys.poles(), sys.bode()): the methods delegate
    ("robodyn.model.kinds.linear", "robodyn.linear.lti"): "LinearSystem's methods: poles, zeros, step, ...",
    ("robodyn.model.kinds.linear", "robodyn.linear.margins"): "LinearSystem.margins()",
    ("robodyn.model.kinds.linear", "robodyn.linear.controllability"): "LinearSystem.controllability() and friends",
    ("robodyn.model.kinds.linear", "robodyn.linear.plots"): "LinearSystem.bode() / .nyquist() plots",
    # a trajectory follows a frame of its model: the kinematics of the run
    ("robodyn.results.trajectory", "robodyn.kinematics.paths"): "Trajectory.frame_path()",
    # an identification writes its own fit report (the page's pieces are the report layer's)
    ("robodyn.identification.identify", "robodyn.report.identify"): "Identification.report(path)",
}


def _layer(module: str) -> int | None:
    """The index of ``module``'s layer in :data:`LAYERS` (longest prefix), or None outside robodyn."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]


def _module_name(path: Path) -> tuple[str, str]:
    """(module, package) of the source file ``path`` under :data:`SOURCE`."""
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def _imports(tree: ast.Module, package: str) -> list[tuple[int, str]]:
    """(line, imported robodyn module) for every import in ``tree``; ``from robodyn import x`` names
    ``robodyn.x`` (a submodule or a name of the root module, which the scan then treats as the root's)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module == "robodyn":
                found += [(node.lineno, f"robodyn.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, module))
    return [(line, name) for line, name in found if name == "robodyn" or name.startswith("robodyn.")]


def _is_submodule(name: str) -> bool:
    relative = Path(*name.split("."))
    return (SOURCE / relative).is_dir() or (SOURCE / relative).with_suffix(".py").is_file()


def violations(sources: dict[str, tuple[str, str]]) -> list[str]:
    """Imports against the layer order in ``sources`` (module -> (package, source text)), one line each."""
    found = []
    for module, (package, text) in sources.items():
        own = _layer(module)
        assert own is not None, module
        for line, imported in _imports(ast.parse(text), package):
            if imported.startswith("robodyn.") and not _is_submodule(imported):
                name = imported.removeprefix("robodyn.")
                if "." not in name and name in ROOT_NAMES_ANYWHERE:
                    continue
                imported = "robodyn"  # a name of the root module: the api layer
            target = _layer(imported)
            if target is None or target <= own or (module, imported) in ALLOWED:
                continue
            found.append(f"{module}:{line} ({LAYERS[own][0]}) imports {imported} ({LAYERS[target][0]})")
    return found


def _package_sources() -> dict[str, tuple[str, str]]:
    sources = {}
    for path in sorted((SOURCE / "robodyn").rglob("*.py")):
        module, package = _module_name(path)
        sources[module] = (package, path.read_text(encoding="utf-8"))
    return sources


def test_every_module_has_a_layer() -> None:
    sources = _package_sources()
    assert len(sources) > 100
    assert all(_layer(module) is not None for module in sources)


def test_no_module_imports_from_a_layer_above() -> None:
    found = violations(_package_sources())
    assert not found, ("an import against the layer order (docs/dev/architecture.md: move the code down, or pass "
                       "what it needs from above):\n" + "\n".join(found))


def test_every_allowed_import_is_still_made() -> None:
    """An allow-list entry nobody needs any more is removed: the list says what the code does."""
    made = set()
    for module, (package, text) in _package_sources().items():
        made |= {(module, name) for _, name in _imports(ast.parse(text), package)}
    assert set(ALLOWED) <= made, sorted(set(ALLOWED) - made)


@pytest.mark.parametrize(("module", "source"), [
    ("robodyn.codegen.probe", "from robodyn.model.expr import TIME"),
    ("robodyn.codegen.probe", "def f():\n    from robodyn.integrate import status\n"),
    ("robodyn.model.probe", "def f():\n    from robodyn.analysis.classify import classify\n"),
    ("robodyn.model.probe", "def f():\n    from robodyn.integrate.events import Event\n"),
    ("robodyn.model.probe", "import robodyn.integrate"),
    ("robodyn.linear.probe", "from robodyn.report import figures"),
    ("robodyn.integrate.probe", "from robodyn.kinematics import kinematics"),
    ("robodyn.analysis.probe", "from robodyn import simulate"),
    ("robodyn.rigid.probe", "if TYPE_CHECKING:\n    from robodyn.model import Model\n"),
    ("robodyn.integrate.probe", "from ..analysis import linearize"),
    ("robodyn.report.probe", "import robodyn"),
    ("robodyn.base.errors", "from robodyn.cli.main import main"),
    ("robodyn.display.probe", "from robodyn.model.system import Model"),
])
def test_the_scan_catches_an_upward_import(module: str, source: str) -> None:
    package = module.rsplit(".", 1)[0]
    assert _layer(module) is not None
    assert violations({module: (package, source)})


@pytest.mark.parametrize(("module", "source"), [
    ("robodyn.model.probe", "from robodyn.codegen.module import c_entry\nfrom robodyn.base.errors import InputError"),
    ("robodyn.model.probe", "from robodyn import __version__"),
    ("robodyn.analysis.probe", "from robodyn.display import html_table\nfrom . import lti"),
    ("robodyn.cli.probe", "import robodyn\nfrom robodyn.report import analyze"),
    ("robodyn.results.trajectory",
     "def frame_path():\n    from robodyn.kinematics.paths import trajectory_kinematics\n"),
])
def test_the_scan_allows_imports_downward_and_the_listed_ones(module: str, source: str) -> None:
    package = module.rsplit(".", 1)[0]
    assert not violations({module: (package, source)})
