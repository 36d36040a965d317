"""Generated code fragments placed side by side in one module: their top-level names prefixed apart.

Models made of models (a diagram's blocks) and systems made of a model (its sensitivity equations) call the
functions a model generated for itself (``rhs``, ``jac``, ``jacp``, ``out_fn``) from one new module. Two fragments
may define the same names, so each fragment's own top-level names — functions, module-level values and the names
its ``from ... import ...`` lines bind — are prefixed wherever they appear in it (:func:`prefixed`).
"""

from __future__ import annotations

import ast
from typing import Final

__all__ = ["prefixed", "prefixed_source", "top_level_names"]

#: A tape's data in generated code (robodyn.codegen.llvm.tape.tape_source): ``<name> = straight_line(<nodes>, ...)``,
#: a literal of up to millions of characters that holds no name of the fragment.
_TAPE_CALL: Final = " = straight_line("


def top_level_names(tree: ast.Module, *, imports: bool = True) -> set[str] | None:
    """The names ``tree``'s top level defines (functions, assignments to names, and with ``imports`` the names of
    absolute ``from ... import`` lines), or None when it holds anything else (a class, a loop, a relative import)."""
    names: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef):
            names.add(statement.name)
        elif isinstance(statement, ast.Assign):
            names |= {t.id for t in statement.targets if isinstance(t, ast.Name)}
        elif imports and isinstance(statement, ast.ImportFrom) and statement.level == 0:
            names |= {alias.asname or alias.name for alias in statement.names}
        else:
            return None
    return names


class _Renamer(ast.NodeTransformer):
    """Prefixes ``names`` wherever they appear: definitions, uses and the names imports bind."""

    def __init__(self, names: set[str], prefix: str):
        self.names, self.prefix = names, prefix

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if node.name in self.names:
            node.name = self.prefix + node.name
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(self.prefix + node.id, node.ctx) if node.id in self.names else node

    def visit_alias(self, node: ast.alias) -> ast.AST:
        local = node.asname or node.name
        return ast.alias(node.name, self.prefix + local) if local in self.names else node


def prefixed(tree: ast.Module, names: set[str], prefix: str) -> str:
    """The source of ``tree`` with ``names`` (its :func:`top_level_names`) prefixed by ``prefix`` everywhere."""
    return ast.unparse(ast.fix_missing_locations(_Renamer(names, prefix).visit(tree)))


def prefixed_source(source: str, prefix: str) -> tuple[str, set[str]] | None:
    """``source`` with its top-level names prefixed (:func:`prefixed`) and those names, or None when it is not a
    fragment (:func:`top_level_names`). The tape data of its ``straight_line`` calls is set aside while the rest is
    parsed and written back, then put back as it was: parsing and unparsing a large robot's Jacobian tape (~6 MB of
    literal) took ~15 s, the rest of the fragment milliseconds."""
    kept: dict[str, str] = {}
    lines = []
    for line in source.splitlines():
        at = line.find(_TAPE_CALL)
        if at > 0 and not line[0].isspace():
            key = f"__robodyn_tape_data_{len(kept)}__"
            kept[key] = line[at + 3:]
            line = line[: at + 3] + key
        lines.append(line)
    tree = ast.parse("\n".join(lines))
    defined = top_level_names(tree)
    if defined is None:
        return None
    text = prefixed(tree, defined, prefix)
    for key, call in kept.items():
        text = text.replace(key, call, 1)
    return text, defined
