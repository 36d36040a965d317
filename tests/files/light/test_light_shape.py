"""What sympy rewrites beyond the order of the operations (robodyn.files.light.shape).

Each rule is there because sympy's model computes something else than the written arithmetic: for every
expression refused here a witness point shows the written arithmetic, evaluated in floating point as the light
reader would, away from the sympy model's value (by more than 1e-12, or finite against non-finite); the light reader
leaves such a file to the sympy reader, naming the rule. What sympy keeps (up to the order of sums and products)
the light reader reads.
"""

import ast
import math
import re
import warnings

import numpy as np
import pytest

from robodyn.files.light import record as light
from robodyn.files.loading import read_model_text

HEADER = "kind: first_order\nstates: [x, y]\ninputs: [u]\nparameters: {k: 2.0}\n"

#: expression -> (words of the rule that refuses it, a point where the written arithmetic and sympy's part)
REWRITTEN = {
    "1e16 + x - 1e16": ("numbers of a sum", {"x": 0.3}),
    "x - 0.3 - 1e-13": ("numbers of a sum", {"x": 0.3}),
    "(x - 1e16)*2 + 2e16": ("numbers of a sum", {"x": 0.3}),  # 2*(x - 1e16) is 2*x - 2e16 to sympy
    "x*1e16 + y - 1e16*x": ("like terms", {"x": 1.0, "y": 0.3}),
    "x + y - y": ("like terms", {"x": 1e-10, "y": 1.0}),
    "cos(x) + y - cos(x)": ("like terms", {"x": 0.0, "y": 1e-17}),
    "sin(y - x)*2 + u + sin(x - y)*2": ("like terms", {"x": 0.25, "y": 1.25, "u": 1e-17}),
    "3*(x - 0.3)": ("distributes a number", {"x": 0.30000000000000004}),
    "x**2/x": ("powers of one base", {"x": 1e200}),
    "x*y/x": ("powers of one base", {"x": 1e200, "y": 1e200}),
    "exp(x)*exp(-x)": ("powers of one base", {"x": 800.0}),
    "sqrt(x)*sqrt(x)": ("powers of one base", {"x": -1.0}),
    "x**0.5*x": ("powers of one base", None),  # the same number; its written derivative at 0 is 0*inf
    "1/(x*x)": ("powers of one base", None),  # x**(-2): the derivative at 0 is -inf, the written one 0*inf
    "(y*x)/(-1e16/x)": ("powers of one base", None),  # -1e-16*x**2*y: its derivative at 0 is 0, the written NaN
    "sqrt(x**2)": ("power of a power", {"x": 1e200}),
    "sqrt(x*x)": ("power of a power", {"x": 1e200}),
    "sqrt(x)**2": ("power of a power", {"x": -1.0}),
    "(x**2)**0.5": ("power of a power", {"x": 1e200}),
    "exp(log(x))": ("exp(log(x))", {"x": -1.0}),
    "exp(2*log(x))": ("exp(log(x))", {"x": -1.0}),
    "log(exp(x))": ("log(exp(x))", {"x": 1000.0}),
    "sin(x + pi)": ("multiples of pi/2", {"x": 1e-10}),
    "cos(x - pi/2)": ("multiples of pi/2", {"x": 1e-10}),
    "cos(acos(x))": ("inverse function", {"x": 2.0}),
    "tan(atan(x)) - x + y": ("inverse function", {"x": 1e300, "y": 1.0}),
    "x**1": ("simplifies x**1", None),  # the same number, kept simple
    "x**0*y": ("simplifies x**0", None),  # the same number; its written derivative at x = 0 is 0*inf
}
KEPT = ["x*x*y", "(x + y)/2 - u", "2*(x + 1) - y", "x - 0.3", "sin(2*pi*t) + x", "sqrt(x**2 + y**2)",
        "atan2(y, x + 2)", "log(1 + x*x)", "x**3 - 0.5*x", "k*(u - x)/(1 + y**2)", "exp(-x*x)*cos(y)",
        "min(x, y) - max(u, 0.5)", "abs(x - u)*sign(y - 0.25)", "e**x - x"]


def _written(node: ast.expr, values: dict[str, float]) -> float:
    """The written arithmetic in floating point, in the written order (what the light reader's code computes;
    NaN outside a function's domain, as compiled code gives)."""
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        return {"pi": math.pi, "e": math.e}.get(node.id, values.get(node.id, 0.5))
    if isinstance(node, ast.UnaryOp):
        return -_written(node.operand, values)
    if isinstance(node, ast.Call):
        args = [_written(a, values) for a in node.args]
        with np.errstate(all="ignore"):
            return float(getattr(np, {"asin": "arcsin", "acos": "arccos", "atan": "arctan"}.get(
                node.func.id, node.func.id))(*args))
    assert isinstance(node, ast.BinOp)
    a, b = np.float64(_written(node.left, values)), np.float64(_written(node.right, values))
    with np.errstate(all="ignore"):
        return float({ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide,
                      ast.Pow: np.power}[type(node.op)](a, b))


def _apart(a: float, b: float) -> bool:
    if not (math.isfinite(a) and math.isfinite(b)):
        return not (a == b or (math.isnan(a) and math.isnan(b)))
    return abs(a - b) > 1e-12 * max(abs(a), abs(b))


@pytest.mark.parametrize("expression", sorted(REWRITTEN))
def test_what_sympy_rewrites_is_left_to_the_sympy_reader(expression):
    words, witness = REWRITTEN[expression]
    text = HEADER + f"dynamics:\n  x: y\n  y: {expression}\n"
    with pytest.raises(light._Unsure, match=re.escape(words)):
        light._record(text, "case.yaml")
    assert light.light_record(text, "case.yaml") is None
    if witness is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = read_model_text(text, "case.yaml")
        point = {"x": 0.5, "y": 0.5, "u": 0.5, **witness}
        with np.errstate(all="ignore"):
            sympy_value = model.f_raw(0.0, np.array([point["x"], point["y"]]), np.array([point["u"]]),
                                      model.parameter_vector())[1]
    written = _written(ast.parse(expression, mode="eval").body, {**point, "k": 2.0})
    assert _apart(written, float(sympy_value)), (written, sympy_value)  # the rule is needed


@pytest.mark.parametrize("expression", KEPT)
def test_what_sympy_keeps_is_read_without_sympy(expression):
    text = HEADER + f"dynamics:\n  x: y\n  y: {expression}\n"
    assert light.light_record(text, "case.yaml") is not None


def test_each_sub_expression_is_judged_once(monkeypatch):
    """A nested sin(sin(...)) is looked at as a term and as an argument: without memory, twice per level (2**40
    visits here); with it, once per node."""
    from robodyn.files.light import shape as light_shape

    calls = []
    original = light_shape._Shapes.new_key
    monkeypatch.setattr(light_shape._Shapes, "new_key", lambda self, node: calls.append(node) or original(self, node))
    text = HEADER + "dynamics:\n  x: y\n  y: " + "sin(" * 40 + "x" + ")" * 40 + "\n"
    assert light.light_record(text, "case.yaml") is not None
    assert len(calls) <= 2 * 41
