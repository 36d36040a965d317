"""robodyn's generated straight-line functions, compiled to LLVM IR without numba.

The ``rhs``, ``event_fn`` and ``jac`` robodyn generates for symbolic models (:mod:`robodyn.codegen.source`)
are straight-line Python: ``_x0 = x[0]``, arithmetic, ``math`` functions, conditional expressions, and
``out[k] = ...``. :func:`function_ir` translates such a function of a generated module into the LLVM IR of
``void name_c(double t, double *x, double *u, double *p, double *out)`` — the C entry the kernels call —
which llvmlite compiles in milliseconds (:mod:`robodyn.codegen.llvm.native`), where numba would first need
~0.7 s to import and initialize itself and then ~0.4 s to compile. A new model's first result therefore
does not wait for numba.

The text is parsed with :mod:`ast` and translated node by node from a whitelist; anything else (a call of
a numba helper, a loop, an unknown name) raises :class:`Unsupported` and the caller lets numba compile the
function instead. Nothing is evaluated. Arithmetic is IEEE double without fast-math flags, as numba
compiles it (``error_model="numpy"``: a division by zero gives inf or NaN); integer powers up to 4 are
products, as in numba; other powers call ``pow``.
"""

from __future__ import annotations

import ast
import struct
from typing import Final

from robodyn.base.digest import sha256

__all__ = ["Unsupported", "function_ir"]

_ARGUMENTS: Final = ("t", "x", "u", "p", "out")
_UNARY_MATH: Final = {"sin": "llvm.sin.f64", "cos": "llvm.cos.f64", "exp": "llvm.exp.f64", "log": "llvm.log.f64",
                      "sqrt": "llvm.sqrt.f64", "fabs": "llvm.fabs.f64", "floor": "llvm.floor.f64",
                      "ceil": "llvm.ceil.f64", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
                      "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "log10": "log10", "expm1": "expm1",
                      "log1p": "log1p"}
_BINARY_MATH: Final = {"atan2": "atan2", "pow": "llvm.pow.f64", "copysign": "llvm.copysign.f64",
                       "fmod": "fmod", "hypot": "hypot"}
_CONSTANTS: Final = {"pi": 3.141592653589793, "e": 2.718281828459045, "inf": float("inf"), "nan": float("nan")}
_OPERATORS: Final = {ast.Add: "fadd", ast.Sub: "fsub", ast.Mult: "fmul", ast.Div: "fdiv"}
_COMPARISONS: Final = {ast.Gt: "ogt", ast.GtE: "oge", ast.Lt: "olt", ast.LtE: "ole", ast.Eq: "oeq", ast.NotEq: "une"}


class Unsupported(Exception):
    """The function uses something outside the straight-line subset (numba compiles it instead)."""


def _double(value: float) -> str:
    return "0x" + struct.pack(">d", value).hex().upper()


class _Emitter:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, str] = {}
        self.declared: dict[str, int] = {}
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def emit(self, text: str) -> str:
        value = self.fresh()
        self.lines.append(f"  {value} = {text}")
        return value

    def call(self, callee: str, operands: list[str]) -> str:
        self.declared[callee] = len(operands)
        return self.emit(f"call double @{callee}({', '.join(f'double {o}' for o in operands)})")

    def element(self, node: ast.Subscript) -> str:
        """The address of ``x[k]`` (x an argument, k an integer constant)."""
        if not (isinstance(node.value, ast.Name) and node.value.id in _ARGUMENTS[1:]
                and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int and node.slice.value >= 0):
            raise Unsupported(f"subscript {ast.unparse(node)}")
        return self.emit(f"getelementptr inbounds double, ptr %{node.value.id}, i64 {node.slice.value}")

    def value(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
            return _double(float(node.value))
        if isinstance(node, ast.Name):
            if node.id == "t":
                return "%t"
            if node.id not in self.names:
                raise Unsupported(f"unknown name {node.id!r}")
            return self.names[node.id]
        if isinstance(node, ast.Subscript):
            return self.emit(f"load double, ptr {self.element(node)}, align 8")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self.emit(f"fneg double {self.value(node.operand)}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
            return self.value(node.operand)
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        if isinstance(node, ast.IfExp):
            test, yes, no = self.condition(node.test), self.value(node.body), self.value(node.orelse)
            return self.emit(f"select i1 {test}, double {yes}, double {no}")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "math" \
                and node.attr in _CONSTANTS:
            return _double(_CONSTANTS[node.attr])
        if isinstance(node, ast.Call):
            return self.called(node)
        raise Unsupported(f"expression {ast.unparse(node)}")

    def binary(self, node: ast.BinOp) -> str:
        left = self.value(node.left)
        if isinstance(node.op, ast.Pow):
            exponent = node.right
            if isinstance(exponent, ast.Constant) and type(exponent.value) is int and 1 <= exponent.value <= 4:
                result = left
                for _ in range(exponent.value - 1):
                    result = self.emit(f"fmul double {result}, {left}")
                return result
            return self.call("llvm.pow.f64", [left, self.value(exponent)])
        operation = _OPERATORS.get(type(node.op))
        if operation is None:
            raise Unsupported(f"operator {ast.unparse(node)}")
        return self.emit(f"{operation} double {left}, {self.value(node.right)}")

    def condition(self, node: ast.expr) -> str:
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARISONS:
            left, right = self.value(node.left), self.value(node.comparators[0])
            return self.emit(f"fcmp {_COMPARISONS[type(node.ops[0])]} double {left}, {right}")
        if isinstance(node, ast.BoolOp) and len(node.values) >= 2:
            parts = [self.condition(v) for v in node.values]
            result = parts[0]
            for part in parts[1:]:
                result = self.emit(f"{'and' if isinstance(node.op, ast.And) else 'or'} i1 {result}, {part}")
            return result
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return self.emit(f"xor i1 {self.condition(node.operand)}, true")
        raise Unsupported(f"condition {ast.unparse(node)}")

    def called(self, node: ast.Call) -> str:
        if node.keywords:
            raise Unsupported(f"call {ast.unparse(node)}")
        function = node.func
        if isinstance(function, ast.Name) and function.id == "float" and len(node.args) == 1 \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            try:
                return _double(float(node.args[0].value))
            except ValueError as exc:
                raise Unsupported(f"call {ast.unparse(node)}") from exc
        arguments = [self.value(a) for a in node.args]
        if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name) and function.value.id == "math":
            if function.attr in _UNARY_MATH and len(arguments) == 1:
                return self.call(_UNARY_MATH[function.attr], arguments)
            if function.attr in _BINARY_MATH and len(arguments) == 2:
                return self.call(_BINARY_MATH[function.attr], arguments)
        if isinstance(function, ast.Name) and function.id == "abs" and len(arguments) == 1:
            return self.call("llvm.fabs.f64", arguments)
        if isinstance(function, ast.Name) and function.id in ("min", "max") and len(arguments) >= 2:
            result = arguments[0]  # Python's min/max: the first of equal values, a NaN first argument stays
            for other in arguments[1:]:
                test = self.emit(f"fcmp {'olt' if function.id == 'min' else 'ogt'} double {other}, {result}")
                result = self.emit(f"select i1 {test}, double {other}, double {result}")
            return result
        raise Unsupported(f"call {ast.unparse(node)}")

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Return) and node.value is None:
            return
        if isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            return  # pass, a docstring
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            value = self.value(node.value)
            if isinstance(target, ast.Name) and target.id not in _ARGUMENTS and target.id != "math":
                self.names[target.id] = value
                return
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == "out":
                self.lines.append(f"  store double {value}, ptr {self.element(target)}, align 8")
                return
        raise Unsupported(f"statement {ast.unparse(node)}")


def function_ir(module_text: str, name: str) -> tuple[str, str]:
    """LLVM IR of the C entry ``<name>_c`` of the function ``name(t, x, u, p, out)`` of a generated module, and
    the symbol (named by the content hash of the IR, so equal functions share one compiled object).

    Raises :class:`Unsupported` when the function is not in the straight-line subset (or not there).
    """
    try:
        tree = ast.parse(module_text)
    except (SyntaxError, RecursionError) as exc:
        raise Unsupported(f"the module does not parse: {exc}") from exc
    found = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name]
    if len(found) != 1 or [a.arg for a in found[0].args.args] != list(_ARGUMENTS):
        raise Unsupported(f"no function {name}(t, x, u, p, out)")
    emitter = _Emitter()
    try:
        for statement in found[0].body:
            emitter.statement(statement)
    except RecursionError as exc:  # an expression nested deeper than Python's stack: numba's problem, as before
        raise Unsupported("an expression is nested too deeply") from exc
    body = "\n".join(emitter.lines)
    symbol = f"robodyn_tape_py_{sha256(body.encode()).hexdigest()[:24]}"
    declarations = [f"declare double @{callee}({', '.join(['double'] * arity)})"
                    for callee, arity in sorted(emitter.declared.items())]
    header = (f"define void @{symbol}(double %t, ptr %x, ptr %u, ptr %p, ptr noalias %out) "
              "nounwind {\nentry:")
    return "\n".join([*declarations, header, body, "  ret void", "}", ""]), symbol
