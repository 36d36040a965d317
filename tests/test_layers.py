"""The layers hold: no module imports from a layer above its own (docs/dev/architecture.md, "Layers").

Every import of every module is read from its source — at module level, inside functions and under
``TYPE_CHECKING`` alike — and resolved to the robodyn module it names. A module may import from its own layer
and the layers below. Deliberate lazy imports upward (a result's ``.plot()`` reaching the plotting layer) are
listed in :data:`ALLOWED`, each with its reason.

The same imports make a graph of modules, which has no cycle: no two modules import each other, directly or
through others, whether the imports run at import time, inside a function or only for the type checker (a
deferred import hides a cycle from Python, not from the reader). The cycles left on purpose are listed in
:data:`ALLOWED_CYCLES`, each with its reason.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src"

#: The layers from the bottom up: (name, module prefixes). A module belongs to the layer of its longest prefix.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("robodyn.base",)),
    ("rigid", ("robodyn.rigid",)),
    ("codegen", ("robodyn.codegen",)),
    ("display", ("robodyn.display",)),
    ("signals", ("robodyn.signals",)),
    ("linear", ("robodyn.linear",)),
    ("model", ("robodyn.model",)),
    ("mechanisms", ("robodyn.mechanisms",)),
    ("diagrams", ("robodyn.diagrams",)),
    ("files", ("robodyn.files",)),
    ("results", ("robodyn.results",)),
    ("integrate", ("robodyn.integrate",)),
    ("linearization", ("robodyn.linearization",)),
    ("identification", ("robodyn.identification",)),
    ("analysis", ("robodyn.analysis",)),
    ("kinematics", ("robodyn.kinematics",)),
    ("control", ("robodyn.control",)),
    ("viewer", ("robodyn.viewer",)),
    ("export", ("robodyn.export",)),
    ("report", ("robodyn.report", "robodyn.sweep")),
    ("api", ("robodyn", "robodyn.reference", "robodyn.blocks")),
    ("cli", ("robodyn.cli",)),
)

#: Import cycles left on purpose: a set of modules (a strongly connected component of exactly those) or an
#: import (importer, imported) taken out of the graph, each with its reason.
ALLOWED_CYCLES: dict[frozenset[str] | tuple[str, str], str] = {
    # Model names the kinds it answers with (linear_model() -> LinearSystem, scalar_damping() -> ScalarDamping),
    # the contract types its members with the kinds, and the kinds are Models
    frozenset({
        "robodyn.model.kinds.callables", "robodyn.model.kinds.linear", "robodyn.model.kinds.manipulator_parameters",
        "robodyn.model.kinds.mechanical", "robodyn.model.kinds.symbolic", "robodyn.model.lean",
        "robodyn.model.parts", "robodyn.model.protocol", "robodyn.model.system",
    }): "the model contract names its kinds, and the kinds are models (Model's part defaults annotate with it)",
    # a class split over modules for size: its methods call the parts lazily, the parts annotate with the class
    frozenset({"robodyn.diagrams.diagram", "robodyn.diagrams.export", "robodyn.diagrams.rest",
               "robodyn.diagrams.sampled", "robodyn.diagrams.switching"}):
        "Diagram's export, rest-state, sampling and switching parts (read its internals)",
    frozenset({"robodyn.mechanisms.chain.exported", "robodyn.mechanisms.chain.frames",
               "robodyn.mechanisms.chain.outputs", "robodyn.mechanisms.chain.regressor",
               "robodyn.mechanisms.chain.system"}): "ChainSystem's exported, frames, outputs and regressor parts",
    # a model file may be a diagram whose blocks name catalog models and other files: reading recurses
    frozenset({"robodyn.files.catalog", "robodyn.files.diagram", "robodyn.files.loading", "robodyn.files.reader"}):
        "load -> reader -> diagram -> load (a diagram's blocks are model files or catalog names)",
}

#: The most entries :data:`ALLOWED_CYCLES` may hold: lowered as cycles are untangled, never raised.
MAX_ALLOWED_CYCLES = 4

#: (importing module, imported module): deliberate lazy imports upward, each inside the function that needs it.
ALLOWED: dict[tuple[str, str], str] = {
    # a trajectory follows a frame of its model: the kinematics of the run
    ("robodyn.results.trajectory", "robodyn.kinematics.paths"): "Trajectory.frame_path()",
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
                imported = "robodyn"  # a name of the root module: the api layer
            target = _layer(imported)
            if target is None or target <= own or (module, imported) in ALLOWED:
                continue
            found.append(f"{module}:{line} ({LAYERS[own][0]}) imports {imported} ({LAYERS[target][0]})")
    return found


def _resolved_imports(tree: ast.Module, package: str, modules: set[str]) -> list[tuple[int, str]]:
    """(line, imported robodyn module) for every import in ``tree``, resolved to modules: ``from pkg import
    name`` names ``pkg.name`` when that is a module (in ``modules`` or on disk), otherwise ``pkg``."""
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
            for alias in node.names:
                candidate = f"{module}.{alias.name}"
                found.append((node.lineno, candidate if candidate in modules or _is_submodule(candidate) else module))
    return [(line, name) for line, name in found if name == "robodyn" or name.startswith("robodyn.")]


def module_graph(sources: dict[str, tuple[str, str]]) -> dict[str, dict[str, int]]:
    """module -> {imported robodyn module: line of its first import} for every module in ``sources``."""
    modules = set(sources)
    graph: dict[str, dict[str, int]] = {}
    for module, (package, text) in sources.items():
        edges = graph.setdefault(module, {})
        for line, imported in sorted(_resolved_imports(ast.parse(text), package, modules)):
            if imported != module:
                edges.setdefault(imported, line)
    return graph


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[set[str]]:
    """The strongly connected components of ``graph`` (Tarjan, R. E. (1972), "Depth-first search and linear
    graph algorithms", SIAM J. Comput. 1(2)), iteratively; nodes only imported are components of their own."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, {}))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph.get(successor, {})))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    components.append(component)
    return components


def cycles(sources: dict[str, tuple[str, str]],
           allowed: dict[frozenset[str] | tuple[str, str], str] | None = None) -> tuple[list[str], list[str]]:
    """(import cycles not covered by ``allowed``, entries of ``allowed`` nobody needs), one line each.

    An edge entry (importer, imported) is taken out of the graph before the components are found (it must be
    an import made inside a component of the whole graph); a set entry covers a component of exactly those
    modules."""
    allowed = ALLOWED_CYCLES if allowed is None else allowed
    graph = module_graph(sources)
    edges = {entry for entry in allowed if isinstance(entry, tuple)}
    whole = {module: frozenset(component) for component in strongly_connected(graph) for module in component}
    unused = [f"{a} -> {b}" for a, b in sorted(edges)
              if b not in graph.get(a, {}) or whole.get(b) != whole.get(a)]
    cut = {a: {b: line for b, line in targets.items() if (a, b) not in edges} for a, targets in graph.items()}
    found, covered = [], set()
    for component in strongly_connected(cut):
        if len(component) < 2:
            continue
        if frozenset(component) in allowed:
            covered.add(frozenset(component))
            continue
        inside = [f"{a}:{line} -> {b}" for a in sorted(component) for b, line in sorted(cut[a].items())
                  if b in component]
        found.append(f"{len(component)} modules: " + "; ".join(inside))
    unused += [", ".join(sorted(entry)) for entry in allowed
               if isinstance(entry, frozenset) and entry not in covered]
    return found, unused


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
    ("robodyn.codegen.probe", "from robodyn import __version__"),
    ("robodyn.base.errors", "from robodyn.cli.main import main"),
    ("robodyn.display.probe", "from robodyn.model.system import Model"),
])
def test_the_scan_catches_an_upward_import(module: str, source: str) -> None:
    package = module.rsplit(".", 1)[0]
    assert _layer(module) is not None
    assert violations({module: (package, source)})


@pytest.mark.parametrize(("module", "source"), [
    ("robodyn.model.probe", "from robodyn.codegen.module import c_entry\nfrom robodyn.base.errors import InputError"),
    ("robodyn.model.probe", "from robodyn.base.version import __version__"),
    ("robodyn.analysis.probe", "from robodyn.display import html_table\nfrom . import lti"),
    ("robodyn.cli.probe", "import robodyn\nfrom robodyn.report import analyze"),
    ("robodyn.results.trajectory",
     "def frame_path():\n    from robodyn.kinematics.paths import trajectory_kinematics\n"),
])
def test_the_scan_allows_imports_downward_and_the_listed_ones(module: str, source: str) -> None:
    package = module.rsplit(".", 1)[0]
    assert not violations({module: (package, source)})


@functools.cache  # one scan for the two tests below (~1.8 s each)
def _package_cycles() -> tuple[list[str], list[str]]:
    return cycles(_package_sources())


def test_no_import_cycle_outside_the_allow_list() -> None:
    found, _ = _package_cycles()
    assert not found, ("modules that import each other (docs/dev/architecture.md, \"Cycles\": move the shared piece "
                       "to the lower module, or pass what is needed as a parameter):\n" + "\n".join(found))


def test_every_allowed_cycle_is_still_there() -> None:
    """An allowed cycle that is gone, or an allowed import that no longer closes one, is removed from the list."""
    _, unused = _package_cycles()
    assert not unused, unused


def test_the_allow_list_of_cycles_is_short() -> None:
    assert len(ALLOWED_CYCLES) <= MAX_ALLOWED_CYCLES, "untangle a cycle rather than list it"
    assert all(reason.strip() for reason in ALLOWED_CYCLES.values())


_PROBE_B = "from robodyn.probe.a import f\ndef g():\n    pass\n"


@pytest.mark.parametrize("source", [
    "from robodyn.probe.b import g\ndef f():\n    pass\n",  # at module level
    "def f():\n    from robodyn.probe.b import g\n    return g\n",  # deferred, inside a function
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from robodyn.probe.b import g\n",  # type-only
    "def f():\n    from robodyn.probe import b\n",  # a submodule named in a from-import
    "def f():\n    from . import b\n",  # relative
    "import robodyn.probe.b\n",
])
def test_the_cycle_scan_catches_a_cycle(source: str) -> None:
    sources = {"robodyn.probe.a": ("robodyn.probe", source), "robodyn.probe.b": ("robodyn.probe", _PROBE_B)}
    found, _ = cycles(sources, {})
    assert len(found) == 1 and "robodyn.probe.a:" in found[0] and "robodyn.probe.b:1 -> robodyn.probe.a" in found[0]


def test_the_cycle_scan_finds_a_longer_cycle_and_leaves_a_chain_alone() -> None:
    chain = {"robodyn.probe.a": ("robodyn.probe", "from robodyn.probe.b import g"),
             "robodyn.probe.b": ("robodyn.probe", "from robodyn.probe.c import h"),
             "robodyn.probe.c": ("robodyn.probe", "from robodyn.base.errors import InputError")}
    assert cycles(chain, {}) == ([], [])
    closed = {**chain, "robodyn.probe.c": ("robodyn.probe", "def h():\n    from robodyn.probe.a import f\n")}
    found, _ = cycles(closed, {})
    assert len(found) == 1 and found[0].startswith("3 modules")


def test_a_name_of_a_package_is_an_import_of_the_package() -> None:
    """``from robodyn.probe import g`` with g defined in robodyn/probe/__init__: the package, not a module probe.g."""
    sources = {"robodyn.probe": ("robodyn.probe", "from robodyn.probe.a import f\ndef g():\n    pass\n"),
               "robodyn.probe.a": ("robodyn.probe", "def f():\n    from robodyn.probe import g\n")}
    assert module_graph(sources)["robodyn.probe.a"] == {"robodyn.probe": 2}
    assert len(cycles(sources, {})[0]) == 1


def test_the_cycle_allow_list_covers_a_set_or_an_edge_and_reports_what_is_unused() -> None:
    sources = {"robodyn.probe.a": ("robodyn.probe", "def f():\n    from robodyn.probe.b import g\n"),
               "robodyn.probe.b": ("robodyn.probe", _PROBE_B)}
    pair = frozenset({"robodyn.probe.a", "robodyn.probe.b"})
    assert cycles(sources, {pair: "reason"}) == ([], [])
    assert cycles(sources, {("robodyn.probe.a", "robodyn.probe.b"): "reason"}) == ([], [])
    found, unused = cycles(sources, {("robodyn.probe.b", "robodyn.probe.c"): "reason",
                                     frozenset({"robodyn.probe.a", "robodyn.probe.c"}): "reason"})
    assert len(found) == 1
    assert unused == ["robodyn.probe.b -> robodyn.probe.c", "robodyn.probe.a, robodyn.probe.c"]
    chain = {"robodyn.probe.a": ("robodyn.probe", "from robodyn.probe.b import g"),
             "robodyn.probe.b": ("robodyn.probe", "")}
    assert cycles(chain, {("robodyn.probe.a", "robodyn.probe.b"): "reason"}) == ([], ["robodyn.probe.a -> "
                                                                                    "robodyn.probe.b"])
