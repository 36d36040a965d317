"""A straight-line tape of float64 scalar operations: rigid-body algorithms are recorded on it.

A :class:`Tape` is a list of nodes; node ``i`` is an operation on earlier nodes, a constant, or an
entry of an argument array (a *leaf*: the time, a state, an input, a parameter, or an entry of an
extra vector such as the accelerations of inverse dynamics). Nodes are hash-consed (an operation on
the same operands is recorded once) and folded where the result is known: arithmetic on constants,
``x * 0``, ``x * 1``, ``x + 0``, ``x - x``, ``-(-x)``. So zeros and ones that come from the geometry
(a joint axis along z, a DH twist of pi/2 given exactly, a link at rest) prune the tape instead of
swelling it, and the tape grows with the number of operations the algorithm performs, never with the
size of an expanded closed form.

:class:`Value` wraps a node for arithmetic (``a * b + c``) so that algorithms read like the textbook.
:meth:`Tape.derive` appends forward-mode derivatives (the chain rule over the nodes, zero derivatives
pruned). :mod:`robodyn.codegen.llvm.tape` compiles a tape to machine code; :meth:`Tape.to_sympy` turns
outputs back into closed forms, for showing small models to a person.

Reference: A. Griewank, A. Walther, *Evaluating Derivatives*, 2nd ed., SIAM 2008, chapters 2-3
(straight-line programs, forward mode).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

__all__ = ["BINARY", "UNARY", "Tape", "Value", "dot"]

# Operation codes. Leaves: ("leaf", argument, index); constants: ("const", value, 0).
UNARY: Final = ("neg", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "log",
                "sqrt", "abs", "sign", "step")  # step(x) = 1.0 if x >= 0 else 0.0 (for min/max derivatives)
BINARY: Final = ("add", "sub", "mul", "div", "pow", "atan2", "min", "max")
_COMMUTATIVE: Final = frozenset({"add", "mul", "min", "max"})


def _sign(x: float) -> float:
    return 0.0 if x == 0 or x != x else math.copysign(1.0, x)


def _safe(function: Callable[..., float]) -> Callable[..., float]:
    """``function`` with IEEE results (inf, NaN) instead of Python's exceptions, for constant folding."""
    def folded(*args: float) -> float:
        try:
            return float(function(*args))
        except (ValueError, ZeroDivisionError, OverflowError):
            return math.nan
    return folded


def _divide(a: float, b: float) -> float:
    if b == 0:
        return math.nan if a == 0 or a != a else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


_FOLD: Final[Mapping[str, Callable[..., float]]] = {
    "neg": lambda a: -a, "sin": _safe(math.sin), "cos": _safe(math.cos), "tan": _safe(math.tan),
    "asin": _safe(math.asin), "acos": _safe(math.acos), "atan": math.atan, "sinh": _safe(math.sinh),
    "cosh": _safe(math.cosh), "tanh": math.tanh, "exp": _safe(math.exp), "log": _safe(math.log),
    "sqrt": _safe(math.sqrt), "abs": abs, "sign": _sign, "step": lambda a: 1.0 if a >= 0 else 0.0,
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": _divide,
    "pow": _safe(math.pow), "atan2": math.atan2, "min": min, "max": max,
}


class Tape:
    """Straight-line code: ``nodes[i] = (op, a, b)``, operands ``a``, ``b`` earlier node indices.

    Leaves are ``("leaf", argument, index)``: entry ``index`` of argument array ``argument`` (the
    emitter decides what the arguments are, e.g. ``(t, x, u, p, a)``; ``t`` is argument 0, index 0).
    Constants are ``("const", value, 0)``.
    """

    def __init__(self) -> None:
        self.nodes: list[tuple[str, Any, Any]] = []
        self._index: dict[tuple[str, Any, Any], int] = {}
        self._sympy: dict[Any, Value] = {}  # sympy expression -> value, for from_sympy

    def __len__(self) -> int:
        return len(self.nodes)

    # --- recording ------------------------------------------------------------------------------
    def _add(self, key: tuple[str, Any, Any]) -> Value:
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = len(self.nodes)
            self.nodes.append(key)
        return Value(self, index)

    def const(self, value: float) -> Value:
        """A constant node (``-0.0`` is recorded as ``0.0``)."""
        number = float(value)
        return self._add(("const", number + 0.0, 0))

    def leaf(self, argument: int, index: int) -> Value:
        """Entry ``index`` of argument array ``argument``."""
        return self._add(("leaf", int(argument), int(index)))

    def leaves(self, argument: int, count: int) -> list[Value]:
        return [self.leaf(argument, i) for i in range(count)]

    def constant_of(self, value: Value) -> float | None:
        """The number a node holds, or None when it is not a constant."""
        op, a, _ = self.nodes[value.index]
        return a if op == "const" else None

    def unary(self, op: str, x: Value) -> Value:
        c = self.constant_of(x)
        if c is not None:
            return self.const(_FOLD[op](c))
        if op == "neg" and self.nodes[x.index][0] == "neg":
            return Value(self, self.nodes[x.index][1])
        return self._add((op, x.index, 0))

    def binary(self, op: str, x: Value, y: Value) -> Value:
        a, b = self.constant_of(x), self.constant_of(y)
        if a is not None and b is not None:
            return self.const(_FOLD[op](a, b))
        simple = self._simplify(op, x, y, a, b)
        if simple is not None:
            return simple
        i, j = x.index, y.index
        if op in _COMMUTATIVE and j < i:
            i, j = j, i
        return self._add((op, i, j))

    def _simplify(self, op: str, x: Value, y: Value, a: float | None, b: float | None) -> Value | None:
        """Algebraic identities with a constant operand (or equal operands); None when none applies."""
        if op == "add":
            return y if a == 0 else x if b == 0 else None
        if op == "sub":
            if b == 0:
                return x
            if a == 0:
                return self.unary("neg", y)
            return self.const(0.0) if x.index == y.index else None
        if op == "mul":
            if a == 0 or b == 0:
                return self.const(0.0)
            if a == 1 or b == 1:
                return y if a == 1 else x
            if a == -1 or b == -1:
                return self.unary("neg", y if a == -1 else x)
            return None
        if op == "div":
            if b == 1:
                return x
            if b == -1:
                return self.unary("neg", x)
            if a == 0 and b != 0:
                return self.const(0.0)
            return None
        if op == "pow":
            if b == 1:
                return x
            if b == 0:
                return self.const(1.0)
            if b == 0.5:
                return self.unary("sqrt", x)
            if b is not None and b == int(b) and 2 <= b <= 4:  # small integer powers as products
                result = x
                for _ in range(int(b) - 1):
                    result = result * x
                return result
            return None
        return None

    # --- from and to sympy ---------------------------------------------------------------------------
    def from_sympy(self, expr: Any, symbols: Mapping[Any, Value]) -> Value:
        """Record a sympy expression; ``symbols`` maps each of its free symbols to a value.

        Handles the functions of robodyn's expression grammar (robodyn.model.expr) and numbers.
        Conversions are memoized per tape, so an expression used twice is recorded once.
        """
        import sympy

        key = (expr, id(symbols))
        cached = self._sympy.get(key)
        if cached is not None:
            return cached
        result = self._convert(expr, symbols, sympy)
        self._sympy[key] = result
        return result

    def _convert(self, expr: Any, symbols: Mapping[Any, Value], sympy: Any) -> Value:
        if isinstance(expr, int | float):
            return self.const(float(expr))
        if expr.is_Symbol:
            if expr not in symbols:
                raise KeyError(f"symbol {expr} has no value on the tape")
            return symbols[expr]
        if expr.is_Number or expr.is_NumberSymbol:
            return self.const(float(expr))
        args = [self.from_sympy(a, symbols) for a in expr.args]
        if expr.is_Add:
            return _fold(args, lambda p, q: p + q)
        if expr.is_Mul:
            return _fold(args, lambda p, q: p * q)
        if expr.is_Pow:
            base, exponent = args
            if expr.exp == -1:
                return self.const(1.0) / base
            if expr.exp.is_Rational and expr.exp < 0:
                return self.const(1.0) / self.binary("pow", base, self.const(float(-expr.exp)))
            return self.binary("pow", base, exponent)
        names = {sympy.sin: "sin", sympy.cos: "cos", sympy.tan: "tan", sympy.asin: "asin", sympy.acos: "acos",
                 sympy.atan: "atan", sympy.sinh: "sinh", sympy.cosh: "cosh", sympy.tanh: "tanh", sympy.exp: "exp",
                 sympy.log: "log", sympy.Abs: "abs", sympy.sign: "sign"}
        head = expr.func
        if head in names and len(args) == 1:
            return self.unary(names[head], args[0])
        if head is sympy.atan2:
            return self.binary("atan2", args[0], args[1])
        if head in (sympy.Min, sympy.Max):
            return _fold(args, lambda p, q: self.binary("min" if head is sympy.Min else "max", p, q))
        raise TypeError(f"cannot record {type(expr).__name__} ({expr}) on a tape")

    def to_sympy(self, outputs: Sequence[Value], leaves: Callable[[int, int], Any]) -> list[Any]:
        """Closed-form sympy expressions of ``outputs``; ``leaves(argument, index)`` gives each leaf's symbol.

        This substitutes the straight-line code back: the result swells with the size of the algorithm,
        so use it only to show small models.
        """
        import sympy

        functions = {"sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "asin": sympy.asin, "acos": sympy.acos,
                     "atan": sympy.atan, "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh,
                     "exp": sympy.exp, "log": sympy.log, "sqrt": sympy.sqrt, "abs": sympy.Abs, "sign": sympy.sign,
                     "step": lambda a: sympy.Heaviside(a, 1), "neg": lambda a: -a}
        binary = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                  "div": lambda a, b: a / b, "pow": lambda a, b: a**b, "atan2": sympy.atan2, "min": sympy.Min,
                  "max": sympy.Max}
        values: dict[int, Any] = {}
        for index in sorted(self.cone(outputs)):
            op, a, b = self.nodes[index]
            if op == "leaf":
                values[index] = leaves(a, b)
            elif op == "const":
                values[index] = sympy.Integer(int(a)) if a == int(a) and abs(a) < 2**53 else sympy.Float(a)
            elif op in functions:
                values[index] = functions[op](values[a])
            else:
                values[index] = binary[op](values[a], values[b])
        return [values[o.index] for o in outputs]

    def evaluate(self, outputs: Sequence[Value], arguments: Sequence[Sequence[float]]) -> list[float]:
        """The numbers of ``outputs`` for the leaf values ``arguments[argument][index]``, interpreted node by node
        in Python with IEEE results (inf, NaN; no exception), nothing compiled: for the few nodes that hold a
        model's constants (its bodies at given parameters), where compiling would cost more than it saves."""
        values: dict[int, float] = {}
        for index in sorted(self.cone(outputs)):
            op, a, b = self.nodes[index]
            if op == "leaf":
                values[index] = float(arguments[a][b])
            elif op == "const":
                values[index] = a
            elif op in BINARY:
                values[index] = _FOLD[op](values[a], values[b])
            else:
                values[index] = _FOLD[op](values[a])
        return [values[o.index] for o in outputs]

    def replay(self, source: Tape, outputs: Sequence[Value], leaves: Callable[[int, int], Value]) -> list[Value]:
        """``outputs`` of the tape ``source`` recorded again on this tape, each leaf ``(argument, index)`` of
        ``source`` replaced by ``leaves(argument, index)`` (a value of this tape): how models made of models put
        their blocks' functions on one tape. The operations are the same, in the same order; constants fold
        anew where a replaced leaf is one."""
        values: dict[int, Value] = {}
        for index in sorted(source.cone(outputs)):
            op, a, b = source.nodes[index]
            if op == "leaf":
                values[index] = leaves(a, b)
            elif op == "const":
                values[index] = self.const(a)
            elif op in BINARY:
                values[index] = self.binary(op, values[a], values[b])
            else:
                values[index] = self.unary(op, values[a])
        return [values[o.index] for o in outputs]

    # --- analysis ----------------------------------------------------------------------------------
    def cone(self, outputs: Sequence[Value]) -> set[int]:
        """Indices of the nodes the outputs depend on (themselves included)."""
        needed = {o.index for o in outputs}
        for index in range(max(needed, default=-1), -1, -1):
            if index in needed:
                op, a, b = self.nodes[index]
                if op in UNARY:
                    needed.add(a)
                elif op in BINARY:
                    needed.add(a)
                    needed.add(b)
        return needed

    def derive(self, outputs: Sequence[Value], variables: Sequence[Value],
               hold: Sequence[Value] = ()) -> list[list[Value]]:
        """d outputs / d variables by forward mode; the derivative nodes are appended to the tape.

        ``variables`` are leaves. Nodes in ``hold`` are treated as independent of the variables (their
        derivatives are zero), e.g. accelerations held fixed while inverse dynamics is differentiated.
        Returns ``[output][variable]`` values (constant zeros where an output does not depend on one).
        """
        position = {v.index: k for k, v in enumerate(variables)}
        held = {h.index for h in hold}
        cone = self.cone(outputs)
        tangents: dict[int, dict[int, Value]] = {}
        zero = self.const(0.0)
        for index in sorted(cone):
            if index in held:
                continue
            op, a, b = self.nodes[index]
            if op == "leaf":
                if index in position:
                    tangents[index] = {position[index]: self.const(1.0)}
                continue
            if op == "const":
                continue
            ta, tb = tangents.get(a), tangents.get(b) if op in BINARY else None
            if not ta and not tb:
                continue
            tangents[index] = self._tangent(op, Value(self, index), Value(self, a), Value(self, b), ta or {}, tb or {})
        return [[tangents.get(o.index, {}).get(k, zero) for k in range(len(variables))] for o in outputs]

    def _tangent(self, op: str, node: Value, x: Value, y: Value, dx: dict[int, Value], dy: dict[int, Value]
                 ) -> dict[int, Value]:
        """The tangent of ``node = op(x, y)`` from those of its operands (sparse: variable -> value)."""
        if op in BINARY:
            fx, fy = self._partials(op, node, x, y)
            result: dict[int, Value] = {}
            for k, d in dx.items():
                result[k] = fx * d
            for k, d in dy.items():
                term = fy * d
                result[k] = result[k] + term if k in result else term
        else:
            factor = self._partial(op, node, x)
            result = {k: factor * d for k, d in dx.items()}
        return {k: v for k, v in result.items() if self.constant_of(v) != 0.0}

    def _partial(self, op: str, node: Value, x: Value) -> Value:
        """d op(x) / dx for a unary operation."""
        one = self.const(1.0)
        rules: dict[str, Callable[[], Value]] = {
            "neg": lambda: self.const(-1.0), "sin": lambda: x.cos(), "cos": lambda: -x.sin(),
            "tan": lambda: one + node * node, "asin": lambda: one / (one - x * x).sqrt(),
            "acos": lambda: -(one / (one - x * x).sqrt()), "atan": lambda: one / (one + x * x),
            "sinh": lambda: self.unary("cosh", x), "cosh": lambda: self.unary("sinh", x),
            "tanh": lambda: one - node * node, "exp": lambda: node, "log": lambda: one / x,
            "sqrt": lambda: self.const(0.5) / node, "abs": lambda: self.unary("sign", x),
            "sign": lambda: self.const(0.0), "step": lambda: self.const(0.0),
        }
        return rules[op]()

    def _partials(self, op: str, node: Value, x: Value, y: Value) -> tuple[Value, Value]:
        """(d/dx, d/dy) of a binary operation."""
        one = self.const(1.0)
        if op == "add":
            return one, one
        if op == "sub":
            return one, self.const(-1.0)
        if op == "mul":
            return y, x
        if op == "div":
            return one / y, -(node / y)
        if op == "pow":
            exponent = self.constant_of(y)
            if exponent is not None:
                return y * self.binary("pow", x, self.const(exponent - 1.0)), self.const(0.0)
            return y * self.binary("pow", x, y - one), node * self.unary("log", x)
        if op == "atan2":  # atan2(y=x, x=y): d/dx = y / (x^2 + y^2), d/dy = -x / (x^2 + y^2)
            square = x * x + y * y
            return y / square, -(x / square)
        first = self.unary("step", y - x) if op == "min" else self.unary("step", x - y)  # 1 where x is chosen
        return first, one - first


def dot(a: Sequence[Value], b: Sequence[Value]) -> Value:
    """sum_i a_i b_i, left to right (a, b non-empty and of one length)."""
    total = a[0] * b[0]
    for x, y in zip(a[1:], b[1:]):
        total = total + x * y
    return total


def _fold(values: Sequence[Value], combine: Callable[[Value, Value], Value]) -> Value:
    result = values[0]
    for value in values[1:]:
        result = combine(result, value)
    return result


class Value:
    """A node of a :class:`Tape`, with arithmetic that records new nodes (numbers become constants)."""

    __slots__ = ("index", "tape")

    def __init__(self, tape: Tape, index: int):
        self.tape = tape
        self.index = index

    def _other(self, other: Any) -> Value:
        return other if isinstance(other, Value) else self.tape.const(other)

    def __add__(self, other: Any) -> Value:
        return self.tape.binary("add", self, self._other(other))

    def __radd__(self, other: Any) -> Value:
        return self.tape.binary("add", self._other(other), self)

    def __sub__(self, other: Any) -> Value:
        return self.tape.binary("sub", self, self._other(other))

    def __rsub__(self, other: Any) -> Value:
        return self.tape.binary("sub", self._other(other), self)

    def __mul__(self, other: Any) -> Value:
        return self.tape.binary("mul", self, self._other(other))

    def __rmul__(self, other: Any) -> Value:
        return self.tape.binary("mul", self._other(other), self)

    def __truediv__(self, other: Any) -> Value:
        return self.tape.binary("div", self, self._other(other))

    def __rtruediv__(self, other: Any) -> Value:
        return self.tape.binary("div", self._other(other), self)

    def __neg__(self) -> Value:
        return self.tape.unary("neg", self)

    def sin(self) -> Value:
        return self.tape.unary("sin", self)

    def cos(self) -> Value:
        return self.tape.unary("cos", self)

    def sqrt(self) -> Value:
        return self.tape.unary("sqrt", self)

    def tanh(self) -> Value:
        return self.tape.unary("tanh", self)

    def __repr__(self) -> str:
        return f"Value({self.tape.nodes[self.index]!r} @ {self.index})"

