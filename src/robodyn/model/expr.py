"""Safe expression parser: user text -> sympy, through Python's ``ast`` and a whitelist.

Model files and command-line values are user text. They are never given to ``eval``, ``exec``,
``sympify`` or ``parse_expr``. Instead the text is parsed by :func:`ast.parse` (which only builds a tree
and runs nothing) and the tree is translated node by node; any node outside the whitelist is rejected
with the offending token.

Allowed (the grammar of model files, docs/models.md):

- numbers (integers and decimals), ``+ - * / **``, unary ``+ -`` and parentheses;
- the names the caller declares (states, inputs, parameters, ...), ``t`` where time is allowed,
  the constants ``pi`` and ``e``;
- calls of ``sin cos tan asin acos atan atan2 sinh cosh tanh exp log sqrt abs sign min max`` with
  positional arguments only.

Everything else — attribute access, subscripts, lambdas, comprehensions, conditional expressions,
comparisons, strings, keyword arguments, calls of other functions — raises :class:`ExpressionError`.
Constant sub-expressions are folded by sympy, so they are guarded against overflow and division by zero.
"""

from __future__ import annotations

import ast
import difflib
import math
import numbers
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Final

import sympy

from robodyn.base.errors import ExpressionError
from robodyn.base.names import (
    CONSTANT_NAMES,
    FUNCTION_ARGUMENTS,
    FUNCTION_NAMES,
    MAX_CONSTANT_EXPONENT,
    MAX_DEPTH,
    MAX_EXPONENT_DIGITS,
    MAX_LENGTH,
    RESERVED_NAMES,
    TIME_NAME,
    is_valid_name,
)

__all__ = [
    "CONSTANTS",
    "FUNCTIONS",
    "RESERVED_NAMES",
    "TIME",
    "as_expr",
    "expand_bounded",
    "expanded_terms",
    "is_valid_name",
    "narrow_integers",
    "parse_constant",
    "parse_expression",
    "symbol",
]

_EXACT_DIGITS: Final = 1000  # An exact rational power with more digits is evaluated in floating point.
_LARGEST: Final = 1.7976931348623157e308  # The largest double; constants beyond it would become inf.
_INT64: Final = 2**63 - 1  # Integers beyond it are stored as floats (compiled code has no wider integers).
MAX_EXPANDED_TERMS: Final = 20_000  # The most terms sympy.expand may be asked to produce.
_SHOWN: Final = 200  # Characters of the user's text repeated in an error message.


def as_expr(value: Any) -> Any:
    """A sympy expression for a value that is already one, or a number (a Python or numpy integer or float; never
    text: text goes through the safe parser, :func:`parse_expression`)."""
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"expected a sympy expression or a number, got {type(value).__name__}")
    return sympy.Integer(int(value)) if isinstance(value, numbers.Integral) else sympy.Float(float(value))


def _clip(text: str) -> str:
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN - 3]}..."


def expanded_terms(expr: sympy.Basic, limit: int = MAX_EXPANDED_TERMS) -> int:
    """An upper estimate of the work of ``sympy.expand(expr)``: the terms it produces (a term whose coefficient is
    a big integer, as in ``(1 + x)**10000``, counted once per 64-bit word of it), plus those produced inside
    function arguments; the count stops growing once it passes ``limit`` (so it stays cheap)."""
    memo: dict[sympy.Basic, int] = {}
    inside = [0]

    def terms(node: sympy.Basic) -> int:
        known = memo.get(node)
        if known is not None:
            return known
        if node.is_Atom:
            count = 1
        elif node.is_Add:
            count = min(limit + 1, sum(terms(a) for a in node.args))
        elif node.is_Mul:
            count = 1
            for a in node.args:
                count = min(limit + 1, count * terms(a))
        elif node.is_Pow:
            base, exponent = node.args
            k = terms(base)
            terms(exponent)
            if exponent.is_Integer and k > 1:
                n = abs(int(exponent)) if abs(int(exponent)) <= 10 * limit else 10 * limit
                # each term's coefficient (a multinomial one) has up to n log2(k) bits: count 64-bit words of it
                words = max(1, math.ceil(n * math.log2(k) / 64))
                count = min(limit + 1, math.comb(n + k - 1, k - 1) * words if min(n, k - 1) < 64 else limit + 1)
            else:
                count = 1
        else:  # a function: expand works inside its arguments; the call is one term
            inside[0] = min(limit + 1, inside[0] + sum(terms(a) for a in node.args))
            count = 1
        memo[node] = count
        return count

    return min(limit + 1, terms(expr) + inside[0])


def expand_bounded(expr: sympy.Expr, limit: int = MAX_EXPANDED_TERMS) -> sympy.Expr | None:
    """``sympy.expand(expr)``, or None when :func:`expanded_terms` says it would exceed ``limit`` terms."""
    if expanded_terms(expr, limit) > limit:
        return None
    return sympy.expand(expr)


def narrow_integers(value: sympy.Expr) -> sympy.Expr:
    """``value`` with the rational constants whose numerator or denominator exceed int64 as floats: what is
    handed to the code generators (compiled code has no wider integers; ``-x*10**19`` would not compile)."""
    big = {a: sympy.Float(a) for a in value.atoms(sympy.Rational) if abs(a.p) > _INT64 or a.q > _INT64}
    return value.xreplace(big) if big else value


def _min(*args: sympy.Expr) -> sympy.Expr:
    return sympy.Min(*args)


def _max(*args: sympy.Expr) -> sympy.Expr:
    return sympy.Max(*args)


_SYMPY_FUNCTIONS: Final[Mapping[str, Callable[..., sympy.Expr]]] = {
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "asin": sympy.asin, "acos": sympy.acos,
    "atan": sympy.atan, "atan2": sympy.atan2, "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh,
    "exp": sympy.exp, "log": sympy.log, "sqrt": sympy.sqrt, "abs": sympy.Abs, "sign": sympy.sign,
    "min": _min, "max": _max,
}
# name -> (sympy function, smallest and largest number of arguments: robodyn.base.names.FUNCTION_ARGUMENTS)
FUNCTIONS: Final[Mapping[str, tuple[Callable[..., sympy.Expr], int, int]]] = {
    name: (_SYMPY_FUNCTIONS[name], *counts) for name, counts in FUNCTION_ARGUMENTS.items()}

CONSTANTS: Final[Mapping[str, sympy.Expr]] = {"pi": sympy.pi, "e": sympy.E}
# the names are spelled out in robodyn.base.names (no sympy there): both tables must agree
assert set(_SYMPY_FUNCTIONS) == FUNCTION_NAMES and set(CONSTANTS) == CONSTANT_NAMES, "update robodyn.base.names"


def symbol(name: str) -> sympy.Symbol:
    """The sympy symbol robodyn uses for ``name`` (real-valued, so ``d|x|/dx = sign(x)``)."""
    return sympy.Symbol(name, real=True)


#: The time symbol ``t``.
TIME: Final = symbol(TIME_NAME)


_NODE_WORDS: Final[Mapping[type, str]] = {
    ast.Attribute: "attribute access",
    ast.Subscript: "subscripts",
    ast.Lambda: "lambda functions",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "comprehensions",
    ast.IfExp: "conditional expressions",
    ast.Compare: "comparisons",
    ast.BoolOp: "boolean operators",
    ast.NamedExpr: "assignment expressions",
    ast.Starred: "starred arguments",
    ast.List: "lists",
    ast.Tuple: "tuples",
    ast.Set: "sets",
    ast.Dict: "dictionaries",
    ast.JoinedStr: "strings",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
}

_CHAIN_OPS: Final = (ast.Add, ast.Sub, ast.Mult, ast.Div)

_BINARY_HINTS: Final[Mapping[type, str]] = {
    ast.BitXor: "'^' is not a power: write '**'",
    ast.FloorDiv: "'//' is not allowed: write '/'",
    ast.Mod: "'%' is not allowed",
    ast.MatMult: "'@' is not allowed",
}


class _Translator:
    """Translate a parsed expression tree into sympy, rejecting anything outside the whitelist."""

    def __init__(self, text: str, names: Mapping[str, sympy.Expr], where: str, allow_time: bool):
        self.text = text
        self.names = names
        self.where = where
        self.allow_time = allow_time

    def fail(self, node: ast.AST | None, problem: str) -> ExpressionError:
        token = ast.get_source_segment(self.text, node) if node is not None else None
        at = ""
        if token is not None and isinstance(node, ast.expr):
            at = f" at column {node.col_offset + 1}"
            problem = f"{problem}: {token!r}{at}"
        return ExpressionError(f"{self.where}: {problem} in {_clip(self.text)!r}")

    def visit(self, node: ast.AST, depth: int = 0) -> sympy.Expr:
        if depth > MAX_DEPTH:
            raise self.fail(None, f"expression nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return self.folded(node, -self.visit(node.operand, depth + 1))
            if isinstance(node.op, ast.UAdd):
                return self.visit(node.operand, depth + 1)
            raise self.fail(node, "operator not allowed (only unary + and -)")
        if isinstance(node, ast.BinOp):
            return self.binary(node, depth)
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        word = _NODE_WORDS.get(type(node), f"'{type(node).__name__}' syntax")
        raise self.fail(node, f"{word} not allowed")

    def constant(self, node: ast.Constant) -> sympy.Expr:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            kind = "strings" if isinstance(value, str | bytes) else f"{type(value).__name__} constants"
            raise self.fail(node, f"{kind} not allowed (only real numbers)")
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(node, "number is not finite")
        if isinstance(value, int) and value.bit_length() > 1000:
            raise self.fail(node, "number too large for double precision")
        return sympy.Integer(value) if isinstance(value, int) else sympy.Float(value)

    def name(self, node: ast.Name) -> sympy.Expr:
        ident = node.id
        if ident in self.names:
            return self.names[ident]
        if ident in CONSTANTS:
            return CONSTANTS[ident]
        if ident == TIME_NAME and self.allow_time:
            return TIME
        if ident in FUNCTIONS:
            raise self.fail(node, f"function '{ident}' used without calling it")
        known = sorted(self.names) + sorted(CONSTANTS) + ([TIME_NAME] if self.allow_time else [])
        close = difflib.get_close_matches(ident, known, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        shown = ", ".join(known) if len(known) <= 40 else ", ".join(known[:40]) + ", ..."
        raise self.fail(node, f"unknown name (known: {shown}){hint}")

    def binary(self, node: ast.BinOp, depth: int) -> sympy.Expr:
        # A chain a + b - c + ... is a left-nested tree; walk its spine iteratively so that long sums
        # and products do not count as nesting depth.
        spine: list[ast.BinOp] = []
        current: ast.expr = node
        while isinstance(current, ast.BinOp) and isinstance(current.op, _CHAIN_OPS):
            spine.append(current)
            current = current.left
        if not spine:
            return self.single(node, self.visit(node.left, depth + 1), depth)
        # Runs of + and - (or * and /) become one sympy Add (Mul) of all their operands, built and checked
        # once: adding one term at a time re-sorts the growing sum each time (a 1,750-term sum took 36 s).
        operands: list[sympy.Expr] = [self.visit(current, depth + 1)]
        additive: bool | None = None
        last: ast.BinOp = spine[-1]
        for link in reversed(spine):
            group = isinstance(link.op, ast.Add | ast.Sub)
            if additive is not None and group != additive:
                operands = [self.combined(last, operands, additive)]
            additive, last = group, link
            right = self.visit(link.right, depth + 1)
            if isinstance(link.op, ast.Div) and right.is_zero:
                raise self.fail(link, "division by zero")
            operands.append(-right if isinstance(link.op, ast.Sub) else 1 / right if isinstance(link.op, ast.Div)
                            else right)
        return self.combined(last, operands, bool(additive))

    def combined(self, node: ast.BinOp, operands: list[sympy.Expr], additive: bool) -> sympy.Expr:
        """The sum (or product) of ``operands``, checked like every folded value."""
        return self.folded(node, sympy.Add(*operands) if additive else sympy.Mul(*operands))

    def single(self, node: ast.BinOp, left: sympy.Expr, depth: int) -> sympy.Expr:
        """A binary operation outside + - * / (a power, or one refused) on an already translated left operand."""
        if type(node.op) in _BINARY_HINTS:
            raise self.fail(node, _BINARY_HINTS[type(node.op)])
        right = self.visit(node.right, depth + 1)
        if isinstance(node.op, ast.Pow):
            self.check_power(node, left, right)
            return self.folded(node, self.power(left, right))
        raise self.fail(node, "operator not allowed (only + - * / **)")

    @staticmethod
    def power(base: sympy.Expr, exponent: sympy.Expr) -> sympy.Expr:
        """``base**exponent``; an exact rational power with huge digits is evaluated in floating point."""
        if base.is_Rational and exponent.is_Integer:
            digits = max(len(str(abs(base.p))), len(str(base.q))) * abs(int(exponent))
            if digits > _EXACT_DIGITS:
                return sympy.Float(base.evalf(30) ** exponent)
        return base**exponent

    def check_power(self, node: ast.BinOp, base: sympy.Expr, exponent: sympy.Expr) -> None:
        """Refuse constant powers whose value would be astronomically large (``9**9**9``)."""
        if not exponent.is_Number:
            return
        exp_size = abs(float(exponent))
        if base.is_Number:
            magnitude = abs(float(base)) if base.is_finite else math.inf
            if magnitude == 0 and float(exponent) < 0:
                raise self.fail(node, "division by zero")
            digits = exp_size * math.log10(magnitude) if magnitude > 0 else 0.0
            if float(exponent) < 0:
                digits = -digits
            if abs(digits) > MAX_EXPONENT_DIGITS:
                raise self.fail(node, f"number out of double-precision range (about 10**{digits:.4g})")
        elif exp_size > MAX_CONSTANT_EXPONENT:
            raise self.fail(node, f"exponent too large (at most {MAX_CONSTANT_EXPONENT})")

    def folded(self, node: ast.AST, value: sympy.Expr) -> sympy.Expr:
        """Check what sympy folded: constants must be finite real doubles (``acos(2)``, ``exp(1000)`` fail)."""
        if value.has(sympy.zoo, sympy.oo, sympy.nan, sympy.I):
            raise self.fail(node, "value is not a finite real number")
        if value.is_number and not value.is_Number:
            real, imag = sympy.N(value, 20).as_real_imag()
            if imag != 0 or not real.is_finite:
                raise self.fail(node, "value is not a finite real number")
            if abs(real) > _LARGEST:
                raise self.fail(node, "number too large for double precision")
        for atom in value.atoms(sympy.Number):
            if abs(float(atom)) > _LARGEST:
                raise self.fail(node, "number too large for double precision")
        return value

    def call(self, node: ast.Call, depth: int) -> sympy.Expr:
        if not isinstance(node.func, ast.Name):
            raise self.fail(node.func, "only calls of named functions are allowed")
        name = node.func.id
        if name not in FUNCTIONS:
            allowed = ", ".join(FUNCTIONS)
            raise self.fail(node.func, f"unknown function (allowed: {allowed})")
        if node.keywords:
            raise self.fail(node, "keyword arguments not allowed")
        function, least, most = FUNCTIONS[name]
        if not least <= len(node.args) <= most:
            count = str(least) if least == most else f"{least} or more"
            raise self.fail(node, f"{name}() takes {count} argument(s), got {len(node.args)}")
        args = [self.visit(arg, depth + 1) for arg in node.args]
        result = function(*args)
        if name == "atan2" and result.has(sympy.I) and all(a.is_number for a in args):
            # sympy writes atan2 of constants whose signs it cannot decide with logarithms of I; it is real
            y, x = (float(sympy.N(a, 20)) for a in args)
            result = sympy.Float(math.atan2(y, x))
        return self.folded(node, result)


def parse_expression(
    text: str | int | float,
    names: Mapping[str, sympy.Expr],
    *,
    where: str = "expression",
    allow_time: bool = True,
) -> sympy.Expr:
    """Parse user text into a sympy expression, allowing only the whitelisted grammar.

    Parameters
    ----------
    text
        The expression, e.g. ``"(u - b*qd - k*q)/J"``. A plain number is accepted as well.
    names
        The names the expression may use and the sympy expressions they stand for (usually symbols
        made with :func:`symbol`).
    where
        Where the text comes from, e.g. ``"joint.yaml:7: dynamics.qd"``; it starts every error message.
    allow_time
        Whether the time ``t`` may appear.

    Raises
    ------
    ExpressionError
        For anything outside the whitelist, with the offending token and its column.
    """
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise ExpressionError(f"{where}: expected an expression or a number, got {text!r}")
    if not isinstance(text, str):
        if isinstance(text, float) and not math.isfinite(text):
            raise ExpressionError(f"{where}: number is not finite: {text!r}")
        if isinstance(text, int) and text.bit_length() > 1000:
            raise ExpressionError(f"{where}: number too large for double precision (about 2**{text.bit_length()})")
        return sympy.Integer(text) if isinstance(text, int) else sympy.Float(text)
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"{where}: expression longer than {MAX_LENGTH} characters")
    source = " ".join(text.split())  # YAML block scalars may span lines; Python needs one line
    if not source:
        raise ExpressionError(f"{where}: empty expression: write a number or a formula")
    try:
        with warnings.catch_warnings():  # e.g. "invalid decimal literal" for '1if x': the error says it all
            warnings.simplefilter("ignore")
            tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        column = f" at column {exc.offset}" if exc.offset else ""
        raise ExpressionError(f"{where}: invalid syntax{column} in {_clip(text)!r}: {_clip(exc.msg)}") from None
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        raise ExpressionError(f"{where}: cannot parse {text[:80]!r}: {_clip(str(exc))}") from None
    translator = _Translator(source, names, where, allow_time)
    try:
        return translator.visit(tree.body)
    except RecursionError:
        raise ExpressionError(f"{where}: expression too deeply nested") from None
    except (TypeError, ValueError, ArithmeticError) as exc:
        # sympy refusing a combination (e.g. a function of a function name); report, never crash
        if isinstance(exc, ExpressionError):
            raise
        raise ExpressionError(f"{where}: cannot evaluate {_clip(text)!r}: {_clip(str(exc))}") from None


def parse_constant(text: str | int | float, *, where: str = "value") -> float:
    """Parse a constant such as ``"pi/2"`` or ``"2*9.81"`` into a finite float with the parser and sympy
    (:func:`robodyn.model.quantities.parse_number` reads plain numbers without them and comes here otherwise)."""
    value = parse_expression(text, {}, where=where, allow_time=False)
    if not value.is_number:  # pragma: no cover - no names are allowed, so it is always a number
        raise ExpressionError(f"{where}: {text!r} is not a constant")
    number = complex(sympy.N(value, 17))
    if number.imag != 0 or not math.isfinite(number.real):
        raise ExpressionError(f"{where}: {text!r} is not a finite real number")
    return number.real
