"""Generated functions as straight-line code: a function ``name(t, x, u, p, out)`` read as one list of statements,
with a forwarder to a compiled tape (``__code = straight_line(nodes, outputs)``, robodyn.codegen.llvm.tape)
written out one assignment per node, with the same IEEE operations the tape's LLVM code performs.

What reads generated code statement by statement uses it: a diagram's inliner (robodyn.diagrams.code) and forward
mode on a model's ``rhs`` (robodyn.codegen.forward, for sensitivities and exact Jacobians).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from robodyn.codegen.text import python_identifier

__all__ = ["ARGUMENTS", "TAPE_NODES_INLINED", "expanded", "straight_line_body"]

ARGUMENTS: Final = ("t", "x", "u", "p", "out")  # The arguments of every generated model function, in order.
# --- tapes as straight-line code --------------------------------------------------------------------------
TAPE_NODES_INLINED: Final = 1000  # larger tapes are called (numba would lower each node: ~2.5 ms apiece)


def expanded(tree: ast.Module, name: str, limit: int | None = None) -> ast.Module:
    """``tree`` with ``name`` rewritten as straight-line code when it only forwards its arguments, through
    wrappers, to a tape (``__code = straight_line(nodes, outputs)``, robodyn.codegen.llvm.tape): one assignment
    per node, with the same IEEE operations the tape's LLVM code performs. Otherwise ``tree`` itself."""
    defs = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef)}
    tapes: dict[str, tuple[tuple[tuple[Any, ...], ...], tuple[int, ...]]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(
                statement.targets[0], ast.Name) and isinstance(statement.value, ast.Call) and isinstance(
                statement.value.func, ast.Name) and statement.value.func.id == "straight_line":
            try:
                nodes, positions = (ast.literal_eval(a) for a in statement.value.args[:2])
            except ValueError:
                continue
            tapes[statement.targets[0].id] = (nodes, positions)
    if name not in defs or not tapes:
        return tree
    found = _forwarded(defs, tapes, name, list(ARGUMENTS), 0)
    if found is None or len(found[0][0]) > (TAPE_NODES_INLINED if limit is None else limit):
        return tree
    (nodes, positions), arrays = found
    try:
        body = _tape_lines(nodes, positions, arrays)
    except (KeyError, TypeError, ValueError):
        return tree
    function = ast.parse(f"def {python_identifier(name)}(t, x, u, p, out):\n"
                         + "".join(f"    {line}\n" for line in body))
    return function


def _forwarded(defs: Mapping[str, ast.FunctionDef], tapes: Mapping[str, tuple[tuple[tuple[Any, ...], ...],
               tuple[int, ...]]], name: str, arguments: list[str], depth: int
               ) -> tuple[tuple[tuple[tuple[Any, ...], ...], tuple[int, ...]], list[str]] | None:
    """The tape ``name`` forwards to and the caller's names of the tape's arguments, or None."""
    function = defs[name]
    parameters = [a.arg for a in function.args.args]
    body = [s for s in function.body if not isinstance(s, ast.Pass) and not (
        isinstance(s, ast.Return) and s.value is None)]
    if depth > 8 or len(parameters) != len(arguments) or len(body) != 1 or not isinstance(body[0], ast.Expr):
        return None
    call = body[0].value
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.keywords or not all(
            isinstance(a, ast.Name) and a.id in parameters for a in call.args):
        return None
    mapping = dict(zip(parameters, arguments))
    passed = [mapping[a.id] for a in call.args]  # type: ignore[attr-defined]
    if call.func.id in tapes:
        return (tapes[call.func.id], passed) if len(passed) == 6 else None
    if call.func.id in defs:
        return _forwarded(defs, tapes, call.func.id, passed, depth + 1)
    return None


def _tape_lines(nodes: Sequence[tuple[Any, ...]], positions: Sequence[int], arrays: list[str]) -> list[str]:
    """Straight-line Python of a tape: leaf (k, i) reads ``arrays[k][i]`` (k = 0: t), output j goes to
    ``arrays[5][j]``. min, max, step and sign are written as the tape's LLVM selects (NaN included)."""
    value: list[str] = []
    lines: list[str] = []
    unary = {"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "log", "sqrt"}
    for j, (op, a, b) in enumerate(nodes):
        if op == "const":
            number = float.fromhex(a) if isinstance(a, str) else float(a)
            value.append(repr(number) if math.isfinite(number) else f"float({str(number)!r})")
            continue
        if op == "leaf":
            value.append("t" if a == 0 else f"{arrays[a]}[{b}]")
            continue
        x = value[a]
        y = value[b] if op in ("add", "sub", "mul", "div", "pow", "atan2", "min", "max") else ""
        expression = {
            "add": f"{x} + {y}", "sub": f"{x} - {y}", "mul": f"{x} * {y}", "div": f"{x} / {y}", "neg": f"-{x}",
            "pow": f"math.pow({x}, {y})", "atan2": f"math.atan2({x}, {y})", "abs": f"abs({x})",
            "min": f"{x} if {x} <= {y} else {y}", "max": f"{x} if {x} >= {y} else {y}",
            "step": f"1.0 if {x} >= 0.0 else 0.0", "sign": f"1.0 if {x} > 0.0 else (-1.0 if {x} < 0.0 else {x} * 0.0)",
        }.get(str(op)) or (f"math.{op}({x})" if op in unary else None)
        if expression is None:
            raise ValueError(f"tape operation {op!r}")
        lines.append(f"_v{j} = {expression}")
        value.append(f"_v{j}")
    lines += [f"{arrays[5]}[{j}] = {value[node]}" for j, node in enumerate(positions)]
    return lines



def straight_line_body(text: str, name: str, nodes: int | None = None) -> list[ast.stmt] | None:
    """The statements of ``name(t, x, u, p, out)`` when ``text`` is that one function in straight-line code, or
    forwards to a tape of at most ``nodes`` nodes (default: as blocks are inlined) written out; else None."""
    try:
        tree = expanded(ast.parse(text), name, TAPE_NODES_INLINED if nodes is None else nodes)
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].name != name:
        return None
    function = tree.body[0]
    return function.body if [a.arg for a in function.args.args] == list(ARGUMENTS) else None
