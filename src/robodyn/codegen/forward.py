"""Forward-mode derivatives of generated straight-line functions, as straight-line code.

robodyn's generated functions ``name(t, x, u, p, out)`` for symbolic models — and diagrams composed of them
(robodyn.diagrams.code) — are straight-line Python: assignments of arithmetic, ``math`` functions and
conditional expressions to locals and to ``out[i]``. :func:`jacobian_lines` differentiates such a body with
respect to x and u by the chain rule, statement by statement (forward mode, Griewank & Walther, *Evaluating
Derivatives*, 2nd ed., SIAM 2008, ch. 3): every nested operation is first given a name (three-address form), then
each name gets one tangent per direction it depends on — directions it does not depend on are never written, so
the sparsity of the blocks of a diagram prunes the code. The result writes d out[i] / d(x, u) row-major into a
buffer: exact (no differencing), and again straight-line code that LLVM compiles in milliseconds
(robodyn.codegen.llvm.pyir).

Branches are differentiated pointwise: ``a if c else b`` has the tangent ``da if c else db``, min and max the
tangent of the argument they select, and floor, ceil and the sign the zero derivative they have off their jumps.
Anything else (a loop, a call of a helper) raises :class:`NotStraightLine`.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence
from typing import Final

__all__ = ["NotStraightLine", "jacobian_lines", "seeded_derivatives"]

_ARRAYS: Final = ("x", "u", "p")
#: d f(a) / da in terms of the argument ``a`` and the result ``r`` (both names)
_UNARY: Final = {
    "sin": "math.cos({a})", "cos": "-math.sin({a})", "tan": "(1.0 + {r} * {r})", "exp": "{r}",
    "log": "(1.0 / {a})", "sqrt": "(0.5 / {r})", "asin": "(1.0 / math.sqrt(1.0 - {a} * {a}))",
    "acos": "(-1.0 / math.sqrt(1.0 - {a} * {a}))", "atan": "(1.0 / (1.0 + {a} * {a}))",
    "sinh": "math.cosh({a})", "cosh": "math.sinh({a})", "tanh": "(1.0 - {r} * {r})",
    "log10": "(0.43429448190325176 / {a})", "expm1": "({r} + 1.0)", "log1p": "(1.0 / (1.0 + {a}))",
    "fabs": "(1.0 if {a} > 0.0 else (-1.0 if {a} < 0.0 else 0.0))", "floor": "0.0", "ceil": "0.0",
}


class NotStraightLine(Exception):
    """The body has a statement or an expression the differentiator does not handle."""


def jacobian_lines(body: Sequence[ast.stmt], n_rows: int, n_x: int, n_u: int, offset: int = 0,
                   target: str = "out", prefix: str = "") -> list[str]:
    """Lines computing the body's values and their derivatives into ``target`` from ``offset`` on: d out / dx
    ``(n_rows, n_x)`` then d out / du ``(n_rows, n_u)``, each row-major, for the ``n_rows`` entries ``out[i]`` the
    body assigns (every entry is written; an entry the body never assigns has zero derivatives).

    ``body``: the statements of a function ``(t, x, u, p, out)`` — assignments to names and to ``out[k]`` with
    constant k, ``return`` and ``pass``. ``prefix`` starts the names of the new locals (to keep two parts of one
    function apart).
    """
    writer = _Differentiator(n_x + n_u, n_x, prefix)
    _walk(writer, body, n_rows)
    for i in range(n_rows):
        row = writer.rows.get(i, {})
        writer.lines += [f"{target}[{offset + i * n_x + j}] = {row.get(j, '0.0')}" for j in range(n_x)]
        writer.lines += [f"{target}[{offset + n_rows * n_x + i * n_u + k}] = {row.get(n_x + k, '0.0')}"
                         for k in range(n_u)]
    return writer.lines


def seeded_derivatives(body: Sequence[ast.stmt], n_rows: int, seeds: Mapping[tuple[str, int], Mapping[int, str]],
                       prefix: str = "") -> tuple[list[str], dict[int, str], dict[int, dict[int, str]]]:
    """The body's values and their tangents along directions the caller seeds, for the caller to lay out.

    ``seeds[(array, index)]`` gives the tangent of ``array[index]`` (``"x"``, ``"u"`` or ``"p"``) in each direction
    as an expression (a number, a name, or another array entry such as ``x[7]``): ``{("p", 2): {0: "1.0"}}`` makes
    direction 0 the derivative with respect to p[2]; ``{("x", i): {j: f"x[{n + j * n + i}]"}}`` the directional
    derivative along the columns of a matrix stored after the state (forward sensitivities, f_x S). Returns the
    lines, the name (or constant) holding each ``out[i]`` the body assigns and each one's tangents ``{direction:
    name}`` (a direction it does not depend on is missing: its tangent is 0).
    """
    writer = _Differentiator(0, 0, prefix, seeds)
    _walk(writer, body, n_rows)
    return writer.lines, writer.row_values, writer.rows


def _walk(writer: _Differentiator, body: Sequence[ast.stmt], n_rows: int) -> None:
    """Differentiate ``body`` statement by statement into ``writer`` (its ``rows`` and ``row_values``)."""
    for statement in body:
        if isinstance(statement, ast.Pass) or (isinstance(statement, ast.Return) and statement.value is None):
            continue
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            raise NotStraightLine(ast.unparse(statement))
        destination = statement.targets[0]
        value, tangent = writer.expression(statement.value)
        if isinstance(destination, ast.Name) and destination.id not in ("t", *_ARRAYS, "out"):
            name = writer.bind(destination.id, value)
            writer.tangents[destination.id] = writer.name_tangent(name, tangent)
        elif (isinstance(destination, ast.Subscript) and isinstance(destination.value, ast.Name)
              and destination.value.id == "out" and isinstance(destination.slice, ast.Constant)
              and type(destination.slice.value) is int and 0 <= destination.slice.value < n_rows):
            held = writer.temporary(value)
            writer.row_values[destination.slice.value] = held
            writer.rows[destination.slice.value] = writer.name_tangent(held, tangent)
        else:
            raise NotStraightLine(ast.unparse(statement))


class _Differentiator:
    def __init__(self, directions: int, n_x: int, prefix: str,
                 seeds: Mapping[tuple[str, int], Mapping[int, str]] | None = None):
        self.directions, self.n_x, self.prefix, self.seeds = directions, n_x, prefix, seeds
        self.row_values: dict[int, str] = {}  # out[i] -> the name or constant holding its value
        self.lines: list[str] = []
        self.tangents: dict[str, dict[int, str]] = {}  # a local's name -> {direction: name of its tangent}
        self.rows: dict[int, dict[int, str]] = {}
        self.values: dict[str, str] = {}  # a local's name in the body -> its name here (renamed on rebinding)
        self.count = 0

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"_{self.prefix}{stem}{self.count}"

    def temporary(self, value: str) -> str:
        if _is_name(value):
            return value
        name = self.fresh("w")
        self.lines.append(f"{name} = {value}")
        return name

    def bind(self, local: str, value: str) -> str:
        """A new name for a body local's value (a local may be assigned again later: its old tangents stay)."""
        name = self.fresh("v")
        self.lines.append(f"{name} = {value}")
        self.values[local] = name
        return name

    def name_tangent(self, value: str, tangent: dict[int, str]) -> dict[int, str]:
        named = {}
        for direction, expression in tangent.items():
            if _is_name(expression) or _is_number(expression):
                named[direction] = expression
            else:
                name = self.fresh("d")
                self.lines.append(f"{name} = {expression}")
                named[direction] = name
        return named

    # --- expressions: (the value as a name or constant, {direction: tangent expression}) -------------------
    def expression(self, node: ast.expr) -> tuple[str, dict[int, str]]:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
            number = float(node.value)
            return (repr(number) if math.isfinite(number) else f"float({str(number)!r})"), {}
        if isinstance(node, ast.Name):
            if node.id == "t":
                return "t", {}
            if node.id not in self.values:
                raise NotStraightLine(f"unknown name {node.id!r}")
            return self.values[node.id], self.tangents.get(node.id, {})
        if isinstance(node, ast.Subscript):
            if not (isinstance(node.value, ast.Name) and node.value.id in _ARRAYS
                    and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int):
                raise NotStraightLine(ast.unparse(node))
            array, index = node.value.id, node.slice.value
            if self.seeds is not None:
                return f"{array}[{index}]", dict(self.seeds.get((array, index), {}))
            seed = {"x": index, "u": self.n_x + index}.get(array)
            return f"{array}[{index}]", ({seed: "1.0"} if seed is not None else {})
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "math":
            return ast.unparse(node), {}
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            a, da = self.operand(node.operand)
            if isinstance(node.op, ast.UAdd):
                return a, da
            return f"(-{a})", {k: f"(-{v})" for k, v in da.items()}
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        if isinstance(node, ast.IfExp):
            test = self.condition(node.test)
            a, da = self.operand(node.body)
            b, db = self.operand(node.orelse)
            tangent = {k: f"({da.get(k, '0.0')} if {test} else {db.get(k, '0.0')})" for k in sorted({*da, *db})}
            return f"({a} if {test} else {b})", tangent
        if isinstance(node, ast.Call):
            return self.call(node)
        raise NotStraightLine(ast.unparse(node))

    def operand(self, node: ast.expr) -> tuple[str, dict[int, str]]:
        """An operand as a name or constant (nested operations are named first) and its named tangents."""
        value, tangent = self.expression(node)
        name = self.temporary(value) if not _is_number(value) else value
        return name, self.name_tangent(name, tangent)

    def condition(self, node: ast.expr) -> str:
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, _ = self.operand(node.left)
            right, _ = self.operand(node.comparators[0])
            return f"({left} {_COMPARE[type(node.ops[0])]} {right})" if type(node.ops[0]) in _COMPARE else _fail(node)
        if isinstance(node, ast.BoolOp):
            parts = [self.condition(v) for v in node.values]
            return "(" + (" and " if isinstance(node.op, ast.And) else " or ").join(parts) + ")"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return f"(not {self.condition(node.operand)})"
        raise NotStraightLine(ast.unparse(node))

    def binary(self, node: ast.BinOp) -> tuple[str, dict[int, str]]:
        a, da = self.operand(node.left)
        if isinstance(node.op, ast.Pow):
            exponent = node.right
            if isinstance(exponent, ast.Constant) and isinstance(exponent.value, int | float) \
                    and not isinstance(exponent.value, bool):
                k = float(exponent.value)
                power = f"{a} ** {exponent.value!r}"
                slope = f"({k!r} * {a} ** {exponent.value - 1!r})" if k != 1 else "1.0"
                return power, {d: f"{slope} * {v}" for d, v in da.items()}
            b, db = self.operand(exponent)
            result = self.temporary(f"{a} ** {b}")
            tangent = {d: f"{b} * {a} ** ({b} - 1.0) * {v}" for d, v in da.items()}
            for d, v in db.items():
                tangent[d] = _plus(tangent.get(d), f"{result} * math.log({a}) * {v}")
            return result, tangent
        b, db = self.operand(node.right)
        if isinstance(node.op, ast.Add | ast.Sub):
            sign = "+" if isinstance(node.op, ast.Add) else "-"
            tangent = dict(da)
            for d, v in db.items():
                tangent[d] = f"({tangent[d]} {sign} {v})" if d in tangent else (v if sign == "+" else f"(-{v})")
            return f"({a} {sign} {b})", tangent
        if isinstance(node.op, ast.Mult):
            tangent = {d: f"{v} * {b}" for d, v in da.items()}
            for d, v in db.items():
                tangent[d] = _plus(tangent.get(d), f"{a} * {v}")
            return f"({a} * {b})", tangent
        if isinstance(node.op, ast.Div):
            result = self.temporary(f"{a} / {b}")
            tangent = {d: f"{v} / {b}" for d, v in da.items()}
            for d, v in db.items():
                tangent[d] = _plus(tangent.get(d), f"(-{result} * {v} / {b})")
            return result, tangent
        raise NotStraightLine(ast.unparse(node))

    def call(self, node: ast.Call) -> tuple[str, dict[int, str]]:
        function = node.func
        if node.keywords:
            raise NotStraightLine(ast.unparse(node))
        if isinstance(function, ast.Name) and function.id == "float" and len(node.args) == 1 \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            return ast.unparse(node), {}
        arguments = [self.operand(a) for a in node.args]
        names = [a for a, _ in arguments]
        if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name) and function.value.id == "math":
            label = function.attr
        elif isinstance(function, ast.Name) and function.id in ("abs", "min", "max"):
            label = function.id
        else:
            raise NotStraightLine(ast.unparse(node))
        if label in ("min", "max"):  # the tangent of the argument selected (robodyn.codegen.llvm.pyir's order)
            result, tangent = arguments[0]
            for other, d_other in arguments[1:]:
                test = f"({other} {'<' if label == 'min' else '>'} {result})"
                result = self.temporary(f"({other} if {test} else {result})")
                chosen = {k: f"({d_other.get(k, '0.0')} if {test} else {tangent.get(k, '0.0')})"
                          for k in sorted({*d_other, *tangent})}
                tangent = self.name_tangent(result, chosen)
            return result, tangent
        if label == "abs":
            label = "fabs"
        call = f"math.{label}({', '.join(names)})" if label != "fabs" else f"abs({names[0]})"
        if label in _UNARY and len(arguments) == 1:
            (a, da), result = arguments[0], self.temporary(call)
            slope = _UNARY[label].format(a=a, r=result)
            return result, ({} if slope == "0.0" else {d: f"{slope} * {v}" for d, v in da.items()})
        if len(arguments) == 2 and label in ("atan2", "pow", "hypot", "copysign"):
            (a, da), (b, db) = arguments
            result = self.temporary(call)
            if label == "pow":
                parts = ({d: f"{b} * math.pow({a}, {b} - 1.0) * {v}" for d, v in da.items()},
                         {d: f"{result} * math.log({a}) * {v}" for d, v in db.items()})
            elif label == "atan2":  # d atan2(a, b) = (b da - a db) / (a^2 + b^2)
                parts = ({d: f"{b} * {v} / ({a} * {a} + {b} * {b})" for d, v in da.items()},
                         {d: f"(-{a} * {v} / ({a} * {a} + {b} * {b}))" for d, v in db.items()})
            elif label == "hypot":
                parts = ({d: f"{a} * {v} / {result}" for d, v in da.items()},
                         {d: f"{b} * {v} / {result}" for d, v in db.items()})
            else:  # copysign(a, b) = |a| sign(b): d = sign(a) sign(b) da off a = 0
                parts = ({d: f"math.copysign(1.0, {a}) * math.copysign(1.0, {b}) * {v}" for d, v in da.items()}, {})
            tangent = dict(parts[0])
            for d, v in parts[1].items():
                tangent[d] = _plus(tangent.get(d), v)
            return result, tangent
        raise NotStraightLine(ast.unparse(node))


_COMPARE: Final = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="}


def _fail(node: ast.AST) -> str:
    raise NotStraightLine(ast.unparse(node))


def _plus(left: str | None, right: str) -> str:
    return right if left is None else f"({left} + {right})"


def _is_name(text: str) -> bool:
    return text.isidentifier() or (text.endswith("]") and text.split("[")[0] in _ARRAYS)


def _is_number(text: str) -> bool:
    try:
        number = float(text)
    except ValueError:
        return False
    return math.isfinite(number)
