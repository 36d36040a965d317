"""The record of a plain first-order model file, made without sympy: a new file's first run without the import.

A ``kind: first_order`` file whose parameters are numbers — states, inputs, parameters, ``dynamics`` and
``outputs`` as expressions of the whitelisted grammar (docs/models.md), ``units`` — needs no algebra to run: its
generated functions are its expressions, written as straight-line code, and the exact Jacobian is their forward-mode
derivative (:func:`robodyn.codegen.forward.jacobian_lines`). :func:`light_record` builds the parsed-model record of
such a file (:mod:`robodyn.files.cached`) from Python's ``ast`` and a whitelist, as the safe parser does, so a
new file's first simulation skips importing sympy (about 0.3 s of a 0.6 s run).

What the code computes. The sympy reader prints sympy's canonical form of each expression (terms reordered, like
terms collected, constants folded exactly); this reader writes the expressions as the file does, in the order written,
constants folded in floating point. The two must agree to 1e-12 relative, whichever reader made the record (one file,
one meaning), so this reader also declines what sympy computes otherwise than the written arithmetic
(:mod:`robodyn.files.light.shape`: ``1e16 + x - 1e16`` is ``x`` to sympy) and code whose error bounds at the
probe points are wider than 1e-13 in some order of its sums and products (:mod:`robodyn.files.light.bounds`:
``sin(pi)*x``, a sum that cancels, factors spanning too many decades). Its ``min``, ``max`` and ``sign`` give NaN
for NaN and, at a tie, the mean of the arguments' derivatives, as the sympy model does.
tests/files/light/test_light_record.py
checks every field of the records and the functions' values against the sympy reader's; the record, once made, is
what every later process on the machine runs, so the results of one file stay the same from run to run.

It never decides anything the sympy reader would decide otherwise: whatever it does not recognize — a derived or
constant-expression parameter, another kind or key, a name or expression the reader would refuse or warn about, a
division by something that is zero at a probe point (``x/(x - x)``, which sympy folds to a refused infinity), a
constant out of double range, more than :data:`robodyn.base.names.MAX_DEPTH` levels — makes :func:`light_record`
return None, and the sympy reader reads the file (and words its error). Every expression is evaluated at one probe
point (states, inputs and time at distinct values in (0.3, 0.8), parameters at their defaults) for that check; the
error bounds of the generated code are judged there and at two more points (those values moved above 1 and negated).
"""

from __future__ import annotations

import ast
import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from robodyn.base.names import (
    CONSTANT_NAMES,
    FUNCTION_ARGUMENTS,
    MAX_CONSTANT_EXPONENT,
    MAX_DEPTH,
    MAX_EXPONENT_DIGITS,
    MAX_LENGTH,
    TIME_NAME,
    plain_number,
)
from robodyn.files.light.bounds import constant_bound, inaccuracy
from robodyn.files.light.shape import rewritten

__all__ = ["light_record"]

_KEYS: Final = frozenset({"name", "kind", "description", "parameters", "inputs", "outputs", "units", "states",
                          "dynamics"})
_MATH_UNARY: Final = frozenset({"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "log",
                                "sqrt"})
_OPERATORS: Final[Mapping[type, Callable[[float, float], float]]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b,
}
_TINY: Final = 1e-12  # A divisor this small at the probe point may be zero in exact arithmetic: sympy decides.
#: (scale, offset) of the points where the code's accuracy is checked: the probe point first (where every value is
#: defined), then larger and negative values of the states, inputs and time (light_bounds; see _Probe.check).
_PROBES: Final = ((1.0, 0.0), (3.0, 0.4), (-1.0, 0.0))
_INDENT: Final = "    "


class _Unsure(Exception):
    """Something the sympy reader must judge (it reads the file, and words any error)."""


def light_record(text: str, source: str) -> dict[str, Any] | None:
    """The model fields of the parsed-model record of the model file ``text`` (``source`` names it) when it is a
    plain first-order model (see the module docstring), else None. Never raises: the sympy reader judges the rest.

    The fields are those :func:`robodyn.files.cached` records (``name`` ... ``checks_overrides``, ``sources``
    with ``rhs``, ``jacobian`` and ``output``); the caller adds the format, version and key.
    """
    try:
        return _record(text, source)
    except Exception:  # _Unsure, or what the sympy reader words as bad input
        return None


def _record(text: str, source: str) -> dict[str, Any]:
    from robodyn.files.loading import source_stem
    from robodyn.files.yamlio import read_yaml
    from robodyn.model.values import check_names

    data = read_yaml(text, source).data
    if not isinstance(data, dict) or data.get("kind") != "first_order" or not set(data) <= _KEYS:
        raise _Unsure
    if not isinstance(data.get("name", ""), str) or not isinstance(data.get("description") or "", str):
        raise _Unsure
    name = data.get("name") or source_stem(source)
    parameters = _parameters(data.get("parameters"))
    states, inputs = _names(data.get("states")), _names(data.get("inputs", []))
    outputs = data.get("outputs")
    if not states or not isinstance(outputs, dict | None):
        raise _Unsure
    outputs = outputs or {}
    check_names({"states": states, "inputs": inputs, "parameters": list(parameters), "outputs": list(outputs)})
    dynamics = data.get("dynamics")
    if not isinstance(dynamics, dict) or set(dynamics) != set(states):
        raise _Unsure
    probe = _Probe(states, inputs, parameters)
    rhs = _function("rhs", probe.assignments([dynamics[s] for s in states]))
    output = _function("out_fn", probe.assignments(list(outputs.values()) if outputs else None))
    units = _units(data.get("units"), {*states, *inputs, *outputs, *parameters})
    sources = {"rhs": rhs, "jacobian": _jacobian(rhs, len(states), len(inputs)), "output": output}
    probe.check(list(sources.values()))
    return {
        "name": name, "kind": "first_order", "order": 1,
        "states": states, "inputs": inputs, "outputs": list(outputs) or list(states),
        "parameters": [[k, v] for k, v in parameters.items()],
        "derived_parameters": {}, "declared_units": units, "units": dict(units), "position_limits": {},
        "jacobian_method": "symbolic", "parameter_jacobian_method": "symbolic",
        "outputs_are_states": not outputs, "linear_by_construction": None,
        "sources": sources,
        "warnings": [], "checks_overrides": False,
    }


def _names(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Unsure
    return value


def _parameters(table: Any) -> dict[str, float]:
    """Parameters given as plain numbers (an expression, ``2*pi`` or ``m*l**2``, is the sympy reader's)."""
    if table is None:
        return {}
    if not isinstance(table, dict) or not all(isinstance(k, str) for k in table):
        raise _Unsure
    return {k: _parameter_value(v) for k, v in table.items()}


def _parameter_value(value: Any) -> float:
    """A number as the sympy reader keeps it (a float as given, an exact integer, a plain decimal literal)."""
    if type(value) is float and math.isfinite(value):
        return value
    number = plain_number(value) if isinstance(value, int | str) and not isinstance(value, bool) else None
    if number is None:
        raise _Unsure
    return number


def _units(table: Any, known: set[str]) -> dict[str, str]:
    """``units: {name: unit}`` as the sympy reader takes it (short printable text for a known name)."""
    if table is None:
        return {}
    if not isinstance(table, dict) or not all(
            k in known and isinstance(v, str) and v.strip() and len(v) <= 40 and v.isprintable()
            for k, v in table.items()):
        raise _Unsure
    return {str(k): v.strip() for k, v in table.items()}


class _Probe:
    """Translates the expressions of one model into code, evaluating each at the probe point as it goes."""

    def __init__(self, states: Sequence[str], inputs: Sequence[str], parameters: Mapping[str, float]):
        self.locals: dict[str, tuple[str, float]] = {}  # a model name -> (its local in the code, its probe value)
        self.constants: dict[int, float] = {}  # id() of a constant node of the expression read -> its value
        self.hoists: list[list[tuple[str, ast.expr]]] = [[]]  # per generated function: (local, code) to assign first
        self.n_states, self.n_inputs = len(states), len(inputs)
        self.literal_errors: dict[float, float] = {}  # |a folded constant| -> its error (light_bounds)
        for prefix, names in (("x", states), ("u", inputs)):
            for i, n in enumerate(names):
                self.locals[n] = (f"_{prefix}{i}", _probe_value(len(self.locals) + 1))
        for i, (n, value) in enumerate(parameters.items()):
            self.locals[n] = (f"_p{i}", value)
        self.time = _probe_value(len(self.locals) + 1)

    def check(self, sources: Iterable[str]) -> None:
        """Unsure unless every output of the generated ``sources`` is accurate to light_bounds.RELATIVE in every order
        of its sums and products (then sympy's order computes the same numbers) at the probe point, and at two
        more where it is defined: states, inputs and time larger than 1 and negative (other branches of min, max
        and sign, other scales), the parameters at their defaults."""
        values = [value for _, value in self.locals.values()]
        n = self.n_states + self.n_inputs
        for scale, offset in _PROBES:
            moved = [offset + scale * v for v in values[:n]]
            arrays = {"x": moved[:self.n_states], "u": moved[self.n_states:], "p": values[n:]}
            time = offset + scale * self.time
            for source in sources:
                reason = inaccuracy(source, arrays, time, self.literal_errors, undefined=(scale, offset) != _PROBES[0])
                if reason is not None:
                    raise _Unsure(reason)

    def assignments(self, values: Sequence[Any] | None) -> list[str]:
        """The body of a generated function writing the expressions ``values`` (None: the states): ``_x0 = x[0]``
        ... for the model names they use (states, inputs, parameters), the arguments they hoisted, then
        ``out[i] = ...`` for each expression."""
        self.hoists.append([])
        exprs = [ast.Name(local) for local, _ in list(self.locals.values())[:self.n_states]] if values is None \
            else [self.expression(v) for v in values]
        hoisted = self.hoists[-1]
        used = {node.id for e in [*exprs, *(c for _, c in hoisted)] for node in ast.walk(e)
                if isinstance(node, ast.Name)}
        order = [local for local, _ in self.locals.values() if local in used]
        return [*(f"{local} = {local[1]}[{local[2:]}]" for local in order),
                *(f"{name} = {ast.unparse(code)}" for name, code in hoisted),
                *(f"out[{i}] = {ast.unparse(e)}" for i, e in enumerate(exprs))]

    def expression(self, value: Any) -> ast.expr:
        """The code of an expression of the file (text or a number), checked at the probe point."""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise _Unsure
        if not isinstance(value, str):
            return self.term(ast.Constant(value), 0)[0]
        if len(value) > MAX_LENGTH or not value.split():
            raise _Unsure
        with warnings.catch_warnings():  # "invalid decimal literal" for '1if x': the sympy reader words the error
            warnings.simplefilter("ignore")
            tree = ast.parse(" ".join(value.split()), mode="eval")
        self.constants = {}
        code = self.term(tree.body, 0)[0]
        change = rewritten(tree.body, self.constants)
        if change is not None:
            raise _Unsure(change)  # sympy computes something else than the written arithmetic
        self.fold_errors(tree.body, False)
        return code

    def fold_errors(self, node: ast.expr, inside_constant: bool) -> None:
        """Keep the error of each constant the code holds folded (light_bounds judges the code with them)."""
        constant = id(node) in self.constants
        if constant and not inside_constant:
            try:
                bound = constant_bound(node)
            except ValueError as exc:
                raise _Unsure(f"a constant {exc}") from None  # sympy's exact value decides
            self.literal_errors[abs(bound.value)] = max(self.literal_errors.get(abs(bound.value), 0.0), bound.error)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.fold_errors(child, constant)

    def term(self, node: ast.expr, depth: int) -> tuple[ast.expr, float, bool]:
        """(code, value at the probe point, whether it is a constant) of ``node``."""
        code, value, constant = self.translated(node, depth)
        if constant:
            self.constants[id(node)] = value
        return code, value, constant

    def translated(self, node: ast.expr, depth: int) -> tuple[ast.expr, float, bool]:
        if depth > MAX_DEPTH:
            raise _Unsure
        if isinstance(node, ast.Constant):
            number = node.value
            if isinstance(number, bool) or not isinstance(number, int | float) or (
                    isinstance(number, int) and number.bit_length() > 1000):
                raise _Unsure
            return _number(_finite(float(number))), float(number), True
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                local, value = self.locals[node.id]
                return ast.Name(local), value, False
            if node.id in CONSTANT_NAMES:
                value = math.pi if node.id == "pi" else math.e
                return ast.Attribute(ast.Name("math"), node.id), value, True
            if node.id == TIME_NAME:
                return ast.Name("t"), self.time, False
            raise _Unsure
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            code, value, constant = self.term(node.operand, depth + 1)
            if isinstance(node.op, ast.UAdd):
                return code, value, constant
            return self.folded(ast.UnaryOp(ast.USub(), code), -value, constant)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return self.binary(node, depth)
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        raise _Unsure

    def binary(self, node: ast.BinOp, depth: int) -> tuple[ast.expr, float, bool]:
        left, a, left_constant = self.term(node.left, depth + 1)
        right, b, right_constant = self.term(node.right, depth + 1)
        if isinstance(node.op, ast.Div) and abs(b) <= _TINY:
            raise _Unsure
        if isinstance(node.op, ast.Pow):
            right = _exponent(node.right, right)
            if right_constant and (abs(b) > MAX_CONSTANT_EXPONENT or (left_constant and a != 0.0
                                   and abs(b * math.log10(abs(a))) > MAX_EXPONENT_DIGITS)):
                raise _Unsure
        value = _OPERATORS[type(node.op)](a, b)  # ZeroDivisionError, OverflowError: unsure
        if isinstance(node.op, ast.Pow) and isinstance(node.left, ast.Name) and node.left.id == "e" \
                and not right_constant:  # e**a is exp(a), as sympy writes it
            return self.folded(ast.Call(ast.Attribute(ast.Name("math"), "exp"), [right], []), math.exp(b), False)
        return self.folded(ast.BinOp(left, node.op, right), value, left_constant and right_constant)

    def call(self, node: ast.Call, depth: int) -> tuple[ast.expr, float, bool]:
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTION_ARGUMENTS or node.keywords:
            raise _Unsure
        name = node.func.id
        least, most = FUNCTION_ARGUMENTS[name]
        if not least <= len(node.args) <= most:
            raise _Unsure
        arguments = _flattened(name, node.args) if name in ("min", "max") else node.args
        terms = [self.term(a, depth + 1) for a in arguments]
        codes, values = [c for c, _, _ in terms], [v for _, v, _ in terms]
        constant = all(c for _, _, c in terms)
        if name in _MATH_UNARY or name == "atan2":
            if name == "atan2" and values[0] == 0.0 and values[1] == 0.0:
                raise _Unsure  # atan2(0, 0): sympy's nan
            function = getattr(math, name)
            return self.folded(ast.Call(ast.Attribute(ast.Name("math"), name), codes, []), function(*values), constant)
        if name == "abs":
            return self.folded(ast.Call(ast.Name(name), codes, []), abs(values[0]), constant)
        if constant:
            return self.folded(ast.Constant(0.0), _selected(name, values), True)
        return self.folded(self.selection(name, [self.hoisted(c) for c in codes]), _selected(name, values), False)

    def selection(self, name: str, args: list[ast.expr]) -> ast.expr:
        """The code of ``sign``, ``min`` or ``max`` of ``args`` (names or numbers) as the sympy model computes it:
        NaN for a NaN argument (as numpy does; Python's ``min(1.0, nan)`` is 1.0), and at a tie of ``min`` or
        ``max`` the mean of the arguments' derivatives (sympy's Heaviside(0) is 1/2): ``a if a < b else (b if b < a
        else a + 0.5*(b - a))``, whose value at a tie is ``a`` and whose forward derivative is the mean there."""
        if name == "sign":  # 1, -1, 0 at 0 and NaN for NaN: constants, whose derivative is 0 (not 0*inf)
            a = args[0]
            zero = ast.IfExp(ast.Compare(a, [ast.Eq()], [ast.Constant(0.0)]), ast.Constant(0.0),
                             ast.Attribute(ast.Name("math"), "nan"))
            negative = ast.IfExp(ast.Compare(a, [ast.Lt()], [ast.Constant(0.0)]), ast.Constant(-1.0), zero)
            return ast.IfExp(ast.Compare(a, [ast.Gt()], [ast.Constant(0.0)]), ast.Constant(1.0), negative)
        order = ast.Lt() if name == "min" else ast.Gt()
        result = args[0]
        for k, b in enumerate(args[1:]):
            a = self.hoisted(result) if k else result
            tie = ast.BinOp(a, ast.Add(), ast.BinOp(ast.Constant(0.5), ast.Mult(), ast.BinOp(b, ast.Sub(), a)))
            result = ast.IfExp(ast.Compare(a, [order], [b]), a, ast.IfExp(ast.Compare(b, [order], [a]), b, tie))
        return result

    def hoisted(self, code: ast.expr) -> ast.expr:
        """``code`` as a local assigned before the outputs (an argument used more than once), or itself."""
        if isinstance(code, ast.Name | ast.Constant):
            return code
        name = f"_h{sum(len(h) for h in self.hoists)}"  # unique in the record
        self.hoists[-1].append((name, code))
        return ast.Name(name)

    @staticmethod
    def folded(code: ast.expr, value: Any, constant: bool) -> tuple[ast.expr, float, bool]:
        """A finite real value (a complex power, inf or nan is unsure); a constant becomes its number."""
        if not isinstance(value, float):
            raise _Unsure
        value = _finite(value)
        return (_number(value) if constant else code), value, constant


def _flattened(name: str, args: Sequence[ast.expr]) -> list[ast.expr]:
    """The arguments of ``min`` or ``max`` with those of nested calls of the same function and without repeats, as
    sympy's Min and Max hold them (``max(t, max(y, t))`` is ``Max(t, y)``: its derivative at a tie is a mean of 2)."""
    found: dict[str, ast.expr] = {}
    for a in args:
        inner, negations = a, 0
        while isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.USub | ast.UAdd):
            negations += isinstance(inner.op, ast.USub)
            inner = inner.operand
        if negations % 2 == 0:  # +max(x, y) and -(-max(x, y)) are max(x, y)
            a = inner
        nested = isinstance(a, ast.Call) and isinstance(a.func, ast.Name) and a.func.id == name and not a.keywords
        for b in (_flattened(name, a.args) if isinstance(a, ast.Call) and nested else [a]):
            found.setdefault(ast.dump(b), b)
    return list(found.values())


def _selected(name: str, values: Sequence[float]) -> float:
    if name == "sign":
        return 0.0 if values[0] == 0.0 else math.copysign(1.0, values[0])
    return float(min(values) if name == "min" else max(values))


def _probe_value(k: int) -> float:
    """The k-th of distinct probe values in [0.3, 0.8) (the golden-ratio sequence: no two alike, none special)."""
    return 0.3 + 0.5 * (k * 0.6180339887498949 % 1.0)


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise _Unsure
    return value + 0.0  # -0.0 is 0.0, as sympy folds it


def _number(value: float) -> ast.expr:
    """A float literal (a negative one as a negation, which ``ast.unparse`` parenthesizes where needed)."""
    return ast.UnaryOp(ast.USub(), ast.Constant(-value)) if value < 0.0 else ast.Constant(value)


def _exponent(written: ast.expr, code: ast.expr) -> ast.expr:
    """An integer literal exponent stays an integer (``x**2`` is a multiplication in compiled code, as sympy's)."""
    negated = isinstance(written, ast.UnaryOp) and isinstance(written.op, ast.USub)
    literal = written.operand if negated and isinstance(written, ast.UnaryOp) else written
    if isinstance(literal, ast.Constant) and type(literal.value) is int and abs(literal.value) <= MAX_CONSTANT_EXPONENT:
        return ast.Constant(-literal.value if negated else literal.value)
    return code


def _function(name: str, lines: Sequence[str]) -> str:
    """The source of ``name(t, x, u, p, out)`` with the body ``lines``, as robodyn.codegen.source writes them."""
    return "\n".join([f"@jit\ndef {name}(t, x, u, p, out):", *(_INDENT + line for line in lines),
                      f"{_INDENT}return", ""])


def _jacobian(rhs: str, n: int, m: int) -> str:
    """``jac(t, x, u, p, out)``: df/dx (n, n) then df/du (n, m), row-major, the forward-mode derivative of ``rhs``."""
    from robodyn.codegen.forward import jacobian_lines

    body = ast.parse(rhs).body[0]
    assert isinstance(body, ast.FunctionDef)
    return _function("jac", jacobian_lines(body.body, n, n, m))
