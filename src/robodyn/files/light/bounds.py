"""Rounding-error bounds of straight-line code at one point, whatever the order of its sums and products.

The light reader (:mod:`robodyn.files.light.record`) writes a model file's expressions as given; sympy's code
computes the same arithmetic with the terms of each sum and the factors of each product in its own order, its
constants folded exactly (:mod:`robodyn.files.light.shape` refuses whatever else sympy rewrites). Two such
evaluations agree to a relative 1e-12 where the expression is well conditioned; where it is not — a sum that cancels
(``1e16 + x - 1e16``, ``sqrt(2)**2 - 2``), a function at a pole or a zero of a constant (``tan(pi/2)``,
``sin(pi)``, whose float value is 1.2e-16 where sympy's is 0), a product whose factors span so many decades that
another grouping overflows — they part.

:func:`inaccuracy` runs the generated function (``rhs``, ``jac``, ``out_fn``) on a :class:`Bound` per value: the
float value and a first-order bound on its distance to the exact value, valid for every order of the sums
(recursive summation of n terms in any order errs by at most (n - 1) u times the sum of their magnitudes, u the
unit roundoff) and products (n - 1 roundings in any order); N. J. Higham, *Accuracy and Stability of Numerical
Algorithms*, 2nd ed., SIAM 2002, ch. 3-4. A library function adds its rounding and multiplies the error of its
argument by its largest slope within that error (refused where its value changes sign or by half within that error:
the first-order bound would not hold, and sympy's exact value may be 0 or infinite). A branch (``sign``, the
selection of ``min``/``max``) decided within the errors of its comparison, a divisor or an argument within its error
of a pole or of the edge of its domain, or an output whose error bound exceeds :data:`RELATIVE` of its value: the
code is not accurate there, and the light reader leaves the file to the sympy reader.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Final, NamedTuple

__all__ = ["RELATIVE", "SPREAD", "Bound", "constant_bound", "inaccuracy"]

UNIT: Final = 2.0**-53  # The unit roundoff of double precision.
#: The largest error bound an output may have, relative to its value: ten times below the 1e-12 the light and the
#: sympy reader promise to agree to (the other order's own rounding, and library functions a few ulps apart).
RELATIVE: Final = 1e-13
#: The most decades the factors of one product may span in all (the sum of |log10| of each): any grouping of them
#: then stays within 1e-200 .. 1e200, far from overflow and underflow, at this point and at points near it.
SPREAD: Final = 200.0
_LIBRARY: Final = 2.0  # The rounding of a library function, in units of UNIT (within an ulp, and sympy's numpy).


class Bound(NamedTuple):
    """A computed value and what is known of its error (see the module docstring)."""

    value: float
    error: float  # a bound on |value - exact value|
    mass: float  # the sum of |terms| of the expression multiplied out (the scale of its rounding)
    terms: int  # the terms of the sum it is (1: not a sum)
    term_error: float  # the sum of the errors of those terms (error = term_error + (terms - 1) UNIT mass)
    spread: float  # decades spanned by the factors of the product it is


class _Inaccurate(Exception):
    """The code is not accurate at this point (the message says where)."""


class _Undefined(_Inaccurate):
    """The code has no finite value at this point (outside a function's domain, a division by zero, an overflow)."""


def _magnitude(value: float) -> float:
    return abs(math.log10(abs(value))) if value != 0.0 else 0.0


def _exact(value: float, error: float = 0.0) -> Bound:
    return Bound(value, error, abs(value), 1, error, _magnitude(value))


def _result(value: float, error: float) -> Bound:
    """A value that is neither a sum nor a product (a function's, a branch's)."""
    if not math.isfinite(value) or not math.isfinite(error):
        raise _Undefined("a value that is not finite")
    return _exact(value, error)


def _propagated(function: Callable[[float], float], slope: Callable[[float], float], a: Bound) -> float:
    """The error of f(a) inherited from the error of ``a``: the largest |f'| over [a - error, a + error] times that
    error. Refused where the interval is too wide for the first-order bound: f changes sign in it (``sin(pi)``,
    ``log(1 + 1e-17)``: sympy's exact value may be 0) or moves by half its value (``tan(pi/2)``, near a pole)."""
    if a.error == 0.0:
        return 0.0
    points = (a.value - a.error, a.value, a.value + a.error)
    try:
        values = [function(v) for v in points]
        steepest = max(abs(slope(v)) for v in points)
    except (ValueError, ZeroDivisionError, OverflowError):
        raise _Inaccurate("an argument within its error of a pole or the edge of a domain") from None
    low, middle, high = values
    if (low < 0.0) != (high < 0.0) or low == 0.0 or high == 0.0 or max(abs(low - middle), abs(high - middle)) > \
            0.5 * abs(middle):
        raise _Inaccurate("a function within the error of its argument of a zero or a pole")
    return steepest * a.error


_SLOPES: Final[Mapping[str, Callable[[float], float]]] = {
    "sin": math.cos, "cos": math.sin, "tan": lambda a: 1.0 + math.tan(a) ** 2,
    "asin": lambda a: 1.0 / math.sqrt(1.0 - a * a), "acos": lambda a: 1.0 / math.sqrt(1.0 - a * a),
    "atan": lambda a: 1.0 / (1.0 + a * a), "sinh": math.cosh, "cosh": math.sinh,
    "tanh": lambda a: 1.0 - math.tanh(a) ** 2, "exp": math.exp, "log": lambda a: 1.0 / _positive(a),
    "sqrt": lambda a: 0.5 / math.sqrt(_positive(a)),
}


def _exact_leaves(a: Bound, b: Bound) -> bool:
    """Two exact values that are not sums (whose result, when a double, is exact in every order)."""
    return a.error == b.error == 0.0 and a.terms == b.terms == 1 and math.isfinite(a.value) and math.isfinite(b.value)


def _exactly(a: float, b: float, total: float, op: ast.operator) -> bool:
    """Whether ``total`` is a + b (or a - b) without rounding (Knuth's TwoSum: the rounding error recovered)."""
    if isinstance(op, ast.Sub):
        b = -b
    if not math.isfinite(total):
        return False
    virtual = total - a
    return (a - (total - virtual)) + (b - virtual) == 0.0


def _constant_name(node: ast.expr) -> str | None:
    """``pi``, ``e`` or ``nan`` as written (``pi``) or as generated (``math.pi``), else None."""
    if isinstance(node, ast.Name) and node.id in ("pi", "e"):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "math":
        return node.attr
    return None


_SPLIT: Final = 2.0**27 + 1.0  # Veltkamp's splitter: a double into two halves of 26 bits


def _product_error(a: float, b: float, p: float) -> float:
    """a * b - p, exactly (Dekker's TwoProduct), or NaN where the halves would overflow or underflow: 0 when
    ``p`` is the product of ``a`` and ``b`` without rounding (then ``p / b`` is ``a`` without rounding too)."""
    if not all(1e-280 < abs(v) < 1e280 for v in (a, b, p)):
        return 0.0 if p == 0.0 and (a == 0.0 or b == 0.0) else math.nan
    halves = []
    for v in (a, b):
        high = _SPLIT * v - (_SPLIT * v - v)
        halves.append((high, v - high))
    (ah, al), (bh, bl) = halves
    return (((ah * bh - p) + ah * bl) + al * bh) + al * bl


def _exact_power(a: float, k: int, value: float) -> bool:
    """Whether ``value`` is a**k without rounding (products checked one by one, as compiled code multiplies)."""
    product = a
    for _ in range(k - 1):
        following = product * a
        if _product_error(product, a, following) != 0.0:
            return False
        product = following
    return product == value


def _positive(a: float) -> float:
    if a <= 0.0:
        raise ValueError("not positive")
    return a


class _Evaluator:
    """Runs expressions and assignments of straight-line code on bounds."""

    def __init__(self, names: dict[str, Bound], arrays: Mapping[str, Sequence[float]],
                 literal_errors: Mapping[float, float]):
        self.names, self.arrays, self.literal_errors = names, arrays, literal_errors

    def check(self, bound: Bound) -> Bound:
        if bound.spread > SPREAD:
            raise _Inaccurate(f"factors spanning more than {SPREAD:g} decades")
        return bound

    def expression(self, node: ast.expr) -> Bound:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
            value = float(node.value)
            if value != node.value:  # an integer beyond 2**53
                return self.check(_exact(value, UNIT * abs(value)))
            return self.check(_exact(value, self.literal_errors.get(abs(value), 0.0)))
        if isinstance(node, ast.Name) and node.id in self.names:
            return self.names[node.id]
        named = _constant_name(node)
        if named in ("pi", "e"):
            value = math.pi if named == "pi" else math.e
            return _exact(value, UNIT * value)
        if named == "nan":  # the branch for NaN arguments of light_record's min, max and sign
            return Bound(math.nan, 0.0, math.nan, 1, 0.0, 0.0)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int:  # x[i], u[i], p[i]
            return self.check(_exact(float(self.arrays[node.value.id][node.slice.value])))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            a = self.expression(node.operand)
            return a if isinstance(node.op, ast.UAdd) else a._replace(value=-a.value)
        if isinstance(node, ast.BinOp):
            return self.check(self.binary(node))
        if isinstance(node, ast.IfExp):
            return self.expression(node.body if self.condition(node.test) else node.orelse)
        if isinstance(node, ast.Call):
            return self.check(self.call(node))
        raise _Inaccurate(f"code the bounds do not know: {ast.unparse(node)[:60]}")

    def binary(self, node: ast.BinOp) -> Bound:
        a, b = self.expression(node.left), self.expression(node.right)
        if isinstance(node.op, ast.Add | ast.Sub):
            value = a.value + b.value if isinstance(node.op, ast.Add) else a.value - b.value
            if _exact_leaves(a, b) and _exactly(a.value, b.value, value, node.op):
                return _exact(value)  # two exact numbers whose sum is a double (an exponent minus 1, ...)
            terms, term_error, mass = a.terms + b.terms, a.term_error + b.term_error, a.mass + b.mass
            error = term_error + (terms - 1) * UNIT * mass
            return Bound(value, error, mass, terms, term_error, _magnitude(value))
        if isinstance(node.op, ast.Mult):
            value = a.value * b.value
            if _exact_leaves(a, b) and _product_error(a.value, b.value, value) == 0.0:
                return Bound(value, 0.0, abs(value), 1, 0.0, a.spread + b.spread)  # 1.0 * v, 2.0 * v, ...
            error = abs(a.value) * b.error + abs(b.value) * a.error + a.error * b.error + UNIT * abs(value)
            return Bound(value, error, a.mass * b.mass, 1, error, a.spread + b.spread)
        if isinstance(node.op, ast.Div):
            if abs(b.value) <= 2.0 * b.error or b.value == 0.0:
                raise (_Undefined if b.error == 0.0 else _Inaccurate)("a divisor within its error of zero")
            value = a.value / b.value
            if _exact_leaves(a, b) and _product_error(value, b.value, a.value) == 0.0:
                return Bound(value, 0.0, abs(value), 1, 0.0, a.spread + b.spread)
            error = (a.error + abs(value) * b.error) / (abs(b.value) - b.error) + UNIT * abs(value)
            return Bound(value, error, a.mass / abs(b.value), 1, error, a.spread + b.spread)
        if isinstance(node.op, ast.Pow):
            return self.power(a, b)
        raise _Inaccurate(f"an operator the bounds do not know: {ast.unparse(node)[:60]}")

    @staticmethod
    def power(a: Bound, b: Bound) -> Bound:
        k = b.value
        if (not k.is_integer() or b.error > 0.0) and a.value - a.error <= 0.0:
            undefined = a.value + a.error < 0.0 and b.error == 0.0
            raise (_Undefined if undefined else _Inaccurate)("a power of a base within its error of zero or below")
        try:
            value = a.value ** k
        except (ZeroDivisionError, OverflowError):
            raise _Undefined("a power out of range") from None
        if _exact_leaves(a, b) and k in (1.0, 2.0, 3.0, 4.0) and _exact_power(a.value, int(k), value):
            return Bound(value, 0.0, abs(value), 1, 0.0, k * a.spread)  # 1.0**2, 0.5**3: no rounding
        inherited = _propagated(lambda v: v ** k, lambda v: k * v ** (k - 1.0), a) if k != 0.0 else 0.0
        error = inherited + (abs(value * math.log(a.value)) * b.error if b.error else 0.0)
        error += _LIBRARY * UNIT * abs(value)
        mass = a.mass ** k if k.is_integer() and k > 0 and b.error == 0.0 else abs(value)
        return Bound(value, error, mass, 1, error, abs(k) * a.spread if b.error == 0.0 else _magnitude(value))

    def condition(self, node: ast.expr) -> bool:
        """A comparison's outcome, refused when the errors of its sides could turn it."""
        if isinstance(node, ast.BoolOp):
            outcomes = [self.condition(v) for v in node.values]
            return all(outcomes) if isinstance(node.op, ast.And) else any(outcomes)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self.condition(node.operand)
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            raise _Inaccurate(f"a condition the bounds do not know: {ast.unparse(node)[:60]}")
        if ast.dump(node.left) == ast.dump(node.comparators[0]):  # a == a: whether a is a number (not NaN)
            value = self.expression(node.left).value
            return (value == value) == isinstance(node.ops[0], ast.Eq | ast.LtE | ast.GtE)
        left, right = self.expression(node.left), self.expression(node.comparators[0])
        if abs(left.value - right.value) <= left.error + right.error and left.error + right.error > 0.0:
            raise _Inaccurate("a branch (sign, min, max) decided within rounding")
        compare: Mapping[type, Callable[[float, float], bool]] = {
            ast.Gt: lambda p, q: p > q, ast.GtE: lambda p, q: p >= q, ast.Lt: lambda p, q: p < q,
            ast.LtE: lambda p, q: p <= q, ast.Eq: lambda p, q: p == q, ast.NotEq: lambda p, q: p != q}
        if type(node.ops[0]) not in compare:
            raise _Inaccurate("a comparison the bounds do not know")
        return compare[type(node.ops[0])](left.value, right.value)

    def call(self, node: ast.Call) -> Bound:
        function = node.func
        if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name) and function.value.id == "math":
            name = function.attr
        elif isinstance(function, ast.Name):
            name = function.id
        else:
            raise _Inaccurate("a call the bounds do not know")
        args = [self.expression(a) for a in node.args]
        if name in _SLOPES and len(args) == 1:
            a = args[0]
            try:
                value = getattr(math, name)(a.value)
            except (ValueError, OverflowError):
                raise _Undefined(f"{name} outside its domain") from None
            return _result(value, _propagated(getattr(math, name), _SLOPES[name], a) + _LIBRARY * UNIT * abs(value))
        if name == "abs" and len(args) == 1:
            return _result(abs(args[0].value), args[0].error)
        if name in ("min", "max") and args:
            chosen = (min if name == "min" else max)(a.value for a in args)
            return _result(chosen, max(a.error for a in args))
        if name == "sign" and len(args) == 1:
            a = args[0]
            if abs(a.value) <= a.error and a.error > 0.0:
                raise _Inaccurate("a sign decided within rounding")
            return _result(0.0 if a.value == 0.0 else math.copysign(1.0, a.value), 0.0)
        if name == "copysign" and len(args) == 2:
            a, b = args
            if abs(b.value) <= b.error:
                raise _Inaccurate("a sign decided within rounding")
            return _result(math.copysign(a.value, b.value), a.error)
        if name == "atan2" and len(args) == 2:
            a, b = args
            squared = a.value * a.value + b.value * b.value
            if squared == 0.0 or math.hypot(a.value, b.value) <= 2.0 * (a.error + b.error):
                raise (_Undefined if a.error + b.error == 0.0 else _Inaccurate)("atan2 within its error of the origin")
            value = math.atan2(a.value, b.value)
            error = (abs(b.value) * a.error + abs(a.value) * b.error) / squared * 1.01
            return _result(value, error + _LIBRARY * UNIT * abs(value))
        raise _Inaccurate(f"a call the bounds do not know: {ast.unparse(node)[:60]}")


def constant_bound(node: ast.expr) -> Bound:
    """The bound of a constant sub-expression as written in a model file (numbers, ``pi``, ``e``, the grammar's
    functions): its value folded in floating point and the error against the exact value sympy folds.

    Raises
    ------
    ValueError
        When the value is not known to within its error (a branch decided within rounding, a pole, ...).
    """
    try:
        return _Evaluator({}, {}, {}).expression(node)
    except _Inaccurate as exc:
        raise ValueError(str(exc)) from None


def inaccuracy(source: str, arrays: Mapping[str, Sequence[float]], time: float,
               literal_errors: Mapping[float, float], *, undefined: bool = False) -> str | None:
    """Why the generated function ``source`` (``name(t, x, u, p, out)``, straight-line code) may differ from its
    exact values by more than :data:`RELATIVE` at the point ``t = time``, ``x, u, p = arrays[...]`` in some order of
    its sums and products — or None when every output is that accurate there.

    ``literal_errors`` maps the magnitude of a number in the code to its error (a constant the light reader
    folded; a number it does not list is exact). With ``undefined`` a point where the code has no finite value
    (outside a function's domain) gives None: nothing to judge there.
    """
    tree = ast.parse(source).body[0]
    assert isinstance(tree, ast.FunctionDef)
    evaluator = _Evaluator({"t": _exact(time)}, arrays, literal_errors)
    try:
        for statement in tree.body:
            if not isinstance(statement, ast.Assign):
                continue
            bound = evaluator.expression(statement.value)
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                evaluator.names[target.id] = bound
            elif not math.isfinite(bound.value):
                raise _Undefined(f"{ast.unparse(target)} is not finite")
            elif not (bound.error <= RELATIVE * abs(bound.value)) or (bound.value == 0.0 and bound.error > 0.0):
                return (f"{ast.unparse(target)} = {bound.value!r} is known to {bound.error:.2g} only "
                        "(a cancellation, or a function near a pole or zero)")
    except _Undefined as exc:
        return None if undefined else str(exc)
    except _Inaccurate as exc:
        return str(exc)
    return None
