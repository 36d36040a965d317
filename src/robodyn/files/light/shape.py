"""What sympy rewrites in an expression beyond the order of its operations, told without sympy.

The sympy reader (:mod:`robodyn.model.expr`) builds each expression of a model file with sympy's automatic
evaluation and prints its code from the result; the light reader (:mod:`robodyn.files.light.record`) writes
the expression as given. Their numbers agree to rounding only where sympy keeps the written arithmetic and merely
reorders the terms of a sum and the factors of a product. :func:`rewritten` finds, on the written tree, what sympy
(1.14, on real symbols) does beyond that, and the light reader then leaves the file to the sympy reader:

- the numbers of a sum are added first: ``1e16 + x - 1e16`` is ``x``, ``x - 0.3 - 1e-13`` is
  ``x - 0.3000000000001`` — more than one number among the terms of a sum;
- like terms are collected: ``x + y - y`` is ``x``, ``2*x - x`` is ``x`` — two terms equal up to their numbers;
- a number times a sum is distributed: ``3*(x - 0.3)`` is ``3*x - 0.9``, which rounds otherwise (a power of two,
  ``(x + y)/2``, scales exactly: its terms join the enclosing sum);
- powers of one base are combined: ``x**2/x`` is ``x``, ``x*y/x`` is ``y`` (which overflow elsewhere),
  ``sqrt(x)*x`` is ``x**(3/2)`` and ``1/(x*x)`` is ``x**(-2)`` (whose derivatives at 0 are 0 and -inf, where the
  written ones are 0*inf), and a power of a power is one: ``sqrt(x**2)`` is ``Abs(x)``, ``sqrt(x)**2`` is ``x``,
  ``exp(x)**2`` is ``exp(2*x)`` (``x*x`` is ``x**2``, the same number and derivative: integer powers with exponents of
  one sign, none under a divisor, may combine);
- ``exp`` and ``log`` cancel: ``exp(log(x))`` is ``x``, ``exp(2*log(x))`` is ``x**2``, ``log(exp(x))`` is ``x``;
- ``sin``, ``cos`` and ``tan`` shift by multiples of pi/2: ``sin(x + pi)`` is ``-sin(x)``, ``sin(x - pi/4)`` is
  ``-cos(x + pi/4)`` — a sum holding a constant other than a plain number in their argument.

Terms and bases are compared by a coarse key — numbers and signs set aside, sums and products as multisets — so
that what sympy finds equal is found equal here too (more is refused, never less). What this module does not see
(functions of constants that sympy evaluates exactly, ``sin(pi)`` is 0; identities such as
``atan2(y, 1) - atan(y)``) cancels at every point, and the error bounds of the generated code at the probe point
(:mod:`robodyn.files.light.bounds`) find it there.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["rewritten"]

Key = tuple[Any, ...]
#: Functions that shift their argument by multiples of pi/2.
_PERIODIC: Final = frozenset({"sin", "cos", "tan"})
_INVERSES: Final = frozenset({"asin", "acos", "atan", "atan2"})
_EULER: Final[Key] = ("number", math.e)  # the base of exp(a) and of e**a


class _Rewritten(Exception):
    """sympy would not keep the written arithmetic (the message says what it changes)."""


def rewritten(tree: ast.expr, constants: Mapping[int, float]) -> str | None:
    """What sympy's automatic evaluation would change in the written expression ``tree`` beyond the order of sums
    and products (see the module docstring), or None when it keeps the arithmetic.

    ``constants`` maps ``id(node)`` of every constant sub-tree of ``tree`` (no state, input, parameter or time) to
    its value as the light reader folds it; ``tree`` is in the grammar (the light reader has translated it).
    """
    try:
        _Shapes(constants).key(tree)
    except _Rewritten as exc:
        return str(exc)
    return None


class _Shapes:
    """The coarse keys of the sub-expressions of one tree, checking sympy's rewrites on the way."""

    def __init__(self, constants: Mapping[int, float]):
        self.constants = constants
        # each sub-tree's key, terms and factors, once: a nested sin(sin(...)) is looked at from two sides
        self.keys: dict[int, Key] = {}
        self.terms: dict[int, list[tuple[float, Key | None, ast.expr]]] = {}
        self.products: dict[int, tuple[float, list[tuple[Key, Any, ast.expr]]]] = {}
        self.divided: set[int] = set()  # id() of the factors found under a divisor

    def constant(self, node: ast.expr) -> bool:
        return id(node) in self.constants

    # --- sums ---------------------------------------------------------------------------------------------------
    def key(self, node: ast.expr) -> Key:
        """The key of an expression: its sum's terms (numbers set aside) as a multiset, or its one term's key."""
        if id(node) not in self.keys:
            self.keys[id(node)] = self.new_key(node)
        return self.keys[id(node)]

    def new_key(self, node: ast.expr) -> Key:
        if self.constant(node):
            return ("number", abs(self.constants[id(node)]))
        terms = self.summands(node, 1.0)
        coefficient, key, _ = terms[0]
        if len(terms) == 1 and key is not None:
            return key if abs(coefficient) == 1.0 else ("scaled", abs(coefficient), key)
        numbers = [t for t in terms if t[1] is None]
        if len(numbers) > 1:
            raise _Rewritten("sympy adds the numbers of a sum first: write one number per sum")
        keys = [key for _, key, _ in terms if key is not None]
        if len(set(keys)) < len(keys):
            raise _Rewritten("sympy collects like terms (equal up to a number): collect them in the file")
        return ("sum", tuple(sorted(((abs(c), ("number",) if k is None else k) for c, k, _ in terms), key=repr)))

    def summands(self, node: ast.expr, scale: float) -> list[tuple[float, Key | None, ast.expr]]:
        """(coefficient, key of the term without its numbers or None for a number, the term) of the flattened sum
        ``scale * node`` — through ``+ - ``, unary signs and a number times a sum (sympy distributes it)."""
        if id(node) not in self.terms:
            self.terms[id(node)] = self.new_summands(node)
        found = self.terms[id(node)]
        return found if scale == 1.0 else [(scale * c, key, term) for c, key, term in found]

    def new_summands(self, node: ast.expr) -> list[tuple[float, Key | None, ast.expr]]:
        if self.constant(node):
            return [(self.constants[id(node)], None, node)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            right = 1.0 if isinstance(node.op, ast.Add) else -1.0
            return [*self.summands(node.left, 1.0), *self.summands(node.right, right)]
        if isinstance(node, ast.UnaryOp):
            return self.summands(node.operand, -1.0 if isinstance(node.op, ast.USub) else 1.0)
        coefficient, factors = self.product(node)
        if len(factors) == 1 and factors[0][1] == 1.0 and _is_sum(factors[0][2]):
            if coefficient == 0.0 or math.frexp(abs(coefficient))[0] != 0.5:
                raise _Rewritten("sympy distributes a number over a sum, which rounds differently: "
                                 "write the terms multiplied out")
            return self.summands(factors[0][2], coefficient)  # a power of two: exactly the same terms
        return [(coefficient, _product_key(factors), node)]

    # --- products -----------------------------------------------------------------------------------------------
    def product(self, node: ast.expr) -> tuple[float, list[tuple[Key, Any, ast.expr]]]:
        """(the numbers' product, [(base key, exponent, base)]) of the flattened product ``node``; an exponent is a
        number or ``("symbolic", key)``, and a base occurs once (sympy combines x*x into x**2)."""
        if id(node) not in self.products:
            self.products[id(node)] = self.new_product(node)
        return self.products[id(node)]

    def new_product(self, node: ast.expr) -> tuple[float, list[tuple[Key, Any, ast.expr]]]:
        coefficient, factors = self.factors(node, 1.0)
        merged: dict[Key, tuple[Any, ast.expr]] = {}
        for base, exponent, written in factors:
            if base not in merged:
                merged[base] = (exponent, written)
                continue
            earlier = merged[base][0]
            if not isinstance(exponent, float) or not isinstance(earlier, float) or exponent * earlier <= 0 \
                    or not (exponent.is_integer() and earlier.is_integer()) \
                    or id(written) in self.divided or id(merged[base][1]) in self.divided:
                raise _Rewritten("sympy combines the powers of one base (x**2/x is x, exp(x)*exp(-x) is 1, "
                                 "sqrt(x)*x is x**(3/2), 1/(x*x) is x**(-2)): combine them in the file")
            merged[base] = (earlier + exponent, written)
        return coefficient, [(base, exponent, written) for base, (exponent, written) in merged.items()]

    def factors(self, node: ast.expr, power: float) -> tuple[float, list[tuple[Key, Any, ast.expr]]]:
        """The numbers' product and the factors of ``node ** power`` (``power`` is 1 or -1, a divisor's), flattened
        through ``* /``, signs and integer powers of products (sympy distributes those)."""
        if self.constant(node):
            return self.constants[id(node)] ** power, []
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Div):
            left, first = self.factors(node.left, power)
            right, second = self.factors(node.right, power if isinstance(node.op, ast.Mult) else -power)
            if isinstance(node.op, ast.Div):
                self.divided.update(id(written) for _, _, written in second)
            return left * right, [*first, *second]
        if isinstance(node, ast.UnaryOp):
            inner, found = self.factors(node.operand, power)
            return (-inner if isinstance(node.op, ast.USub) else inner), found
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            return self.power(node.left, node.right, power)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sqrt":
            return self.power(node.args[0], None, power)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "exp":
            _no_log_inside(node.args[0])
            return 1.0, [(_EULER, ("symbolic", self.key(node.args[0]), power), node)]
        return 1.0, [(self.key(node) if _is_sum(node) else self.atom(node), power, node)]

    def power(self, base: ast.expr, exponent: ast.expr | None, power: float
              ) -> tuple[float, list[tuple[Key, Any, ast.expr]]]:
        """The numbers and factors of ``(base ** exponent) ** power`` (``exponent`` None: a square root)."""
        inner = _unsigned(base)
        if _is_power(inner):
            raise _Rewritten("sympy makes a power of a power one power (sqrt(x**2) is Abs(x)): write one power")
        if exponent is not None and not self.constant(exponent):  # a base to a symbolic power: 2**x, e**x, x**y
            if self.constant(base):
                if self.constants[id(base)] == math.e:
                    _no_log_inside(exponent)
                return 1.0, [(("number", self.constants[id(base)]), ("symbolic", self.key(exponent), power), base)]
            return 1.0, [(self.key(base), ("symbolic", self.key(exponent), power), base)]
        k = 0.5 if exponent is None else self.constants[id(exponent)]
        if k in (0.0, 1.0):
            raise _Rewritten(f"sympy simplifies x**{k:g} to {'x' if k else '1'}: write that")
        total = k * power
        negated = _negations(base) % 2 == 1
        number = -1.0 if negated and total.is_integer() and total % 2 else 1.0
        if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Mult | ast.Div):
            coefficient, found = self.product(inner)
            if any(e != 1.0 and e != -1.0 for _, e, _ in found):
                raise _Rewritten("sympy makes a power of a power one power (sqrt(x*x) is Abs(x)): write one power")
            if k.is_integer():  # (x*y)**2 is x**2*y**2 to sympy
                return number * coefficient ** total, [(b, e * total, w) for b, e, w in found]
        return number, [(self.key(inner), total, base)]

    def atom(self, node: ast.expr) -> Key:
        """The key of a name or a call (the other nodes are sums, products and powers)."""
        if isinstance(node, ast.Name):
            return ("name", node.id)
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            return ("node", ast.dump(node))  # not reached for trees of the grammar
        name = node.func.id
        if name in _PERIODIC and _is_call(_unsigned(node.args[0]), _INVERSES):
            raise _Rewritten(f"sympy simplifies {name} of an inverse function (sin(asin(x)) is x, cos(atan(x)) is "
                             "1/sqrt(x**2 + 1)): write the simpler form")
        if name in _PERIODIC:
            for _, key, term in self.summands(node.args[0], 1.0):
                if key is None and not isinstance(term, ast.Constant):
                    raise _Rewritten(f"sympy shifts {name} by multiples of pi/2 (sin(x + pi) is -sin(x)): write "
                                     "the constant of its argument as a number")
        if name == "log" and _is_exponential(_unsigned(node.args[0])):
            raise _Rewritten("sympy cancels log(exp(x)) to x: write x")
        arguments = tuple(self.key(a) for a in node.args)
        if name in ("min", "max"):
            arguments = tuple(sorted(arguments, key=repr))
        return ("call", name, arguments)


def _product_key(factors: list[tuple[Key, Any, ast.expr]]) -> Key:
    """A product's key: its bases and exponents as a multiset (a lone base to the power 1 is the base's key)."""
    if len(factors) == 1 and factors[0][1] == 1.0:
        return factors[0][0]
    return ("product", tuple(sorted(((base, exponent) for base, exponent, _ in factors), key=repr)))


def _unsigned(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.UnaryOp):
        node = node.operand
    return node


def _negations(node: ast.expr) -> int:
    count = 0
    while isinstance(node, ast.UnaryOp):
        count += isinstance(node.op, ast.USub)
        node = node.operand
    return count


def _is_sum(node: ast.expr) -> bool:
    inner = _unsigned(node)
    return isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Add | ast.Sub)


def _is_call(node: ast.expr, names: frozenset[str]) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names


def _is_exponential(node: ast.expr) -> bool:
    """``exp(...)`` or ``e**...``."""
    if isinstance(node, ast.Call):
        return _is_call(node, frozenset({"exp"}))
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.left, ast.Name)
            and node.left.id == "e")


def _is_power(node: ast.expr) -> bool:
    """A power, a square root or an exponential (whose power sympy would merge with an outer one)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return True
    return _is_call(node, frozenset({"sqrt", "exp"}))


def _no_log_inside(node: ast.expr) -> None:
    """Refuse a ``log`` reached through the arithmetic of an exponent (exp(2*log(x)) is x**2 to sympy)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Call):
            if isinstance(current.func, ast.Name) and current.func.id == "log":
                raise _Rewritten("sympy cancels exp(log(x)) to x (and exp(2*log(x)) to x**2): write the power")
            continue
        if isinstance(current, ast.BinOp):
            stack += [current.left, current.right]
        elif isinstance(current, ast.UnaryOp):
            stack.append(current.operand)
