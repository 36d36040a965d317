"""The linearization modules import one another one way: no cycle, deferred imports included (linearize ->
equilibrium -> tangent points -> linearize was one, and find_equilibrium was passed back as a callable)."""

from __future__ import annotations

import ast
from pathlib import Path

import robodyn.linearization

FOLDER = Path(robodyn.linearization.__file__).resolve().parent
PREFIX = "robodyn.linearization."


def _graph() -> dict[str, set[str]]:
    """Module -> the modules of the folder it imports anywhere (module level, functions, TYPE_CHECKING)."""
    graph: dict[str, set[str]] = {}
    for path in FOLDER.glob("*.py"):
        name = PREFIX + path.stem if path.stem != "__init__" else PREFIX.rstrip(".")
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module.startswith(PREFIX):
                    targets.add(node.module)
                elif node.module == PREFIX.rstrip("."):  # from robodyn.linearization import tangent_points
                    targets.update(PREFIX + a.name for a in node.names if (FOLDER / f"{a.name}.py").exists())
            elif isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.startswith(PREFIX))
        graph[name] = targets - {name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (its modules in order), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*stack[stack.index(target):], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_linearization_modules_import_one_another_without_a_cycle() -> None:
    graph = _graph()
    assert PREFIX + "derivatives" in graph[PREFIX + "linearize"]  # the scan sees imports
    assert PREFIX + "tangent_points" in graph[PREFIX + "equilibrium"]  # ... deferred ones too
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


def test_the_cycle_search_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
