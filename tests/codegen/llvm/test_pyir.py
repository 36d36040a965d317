"""robodyn.codegen.llvm.pyir: generated straight-line functions compiled by LLVM without numba.

References: the same generated module compiled by numba (the kernels' route before), and the models' own
numpy evaluation (lambdify of the sympy expressions). Tolerance 1e-14 relative to the largest entry: the
operations are the same IEEE ones in the same order, except integer powers (numba squares, the IR
multiplies) and the math library's functions, which differ by an ulp or so.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.codegen.llvm.native import native_address
from robodyn.codegen.llvm.pyir import Unsupported, function_ir
from robodyn.codegen.loader import load_generated
from robodyn.codegen.source import UNROLL_LIMIT
from robodyn.model.compiled import jacobian_text, module_text

ROOT = Path(__file__).resolve().parents[3]
_C = ctypes.CFUNCTYPE(None, ctypes.c_double, *([ctypes.c_void_p] * 4))


def _call(address: int, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray, size: int) -> np.ndarray:
    out = np.full(size, np.nan)
    arrays = [np.ascontiguousarray(a, dtype=float) for a in (x, u, p)]
    _C(address)(t, *(a.ctypes.data for a in arrays), out.ctypes.data)
    return out


SPECIAL = robodyn.SymbolicSystem(
    ["a", "b"], ["w"],
    {"a": "sign(a)*abs(b)**1.5 + min(a, w) - max(b, 2*w) + atan2(b, a) + tanh(w)/(1 + a**2)",
     "b": "sqrt(1 + b**2) + exp(-a)*log(2 + w**2) + b**(-2) + a**5 + cos(t)*asin(w/2) + sinh(w)*acos(w/3)"},
    name="special")


def _cases() -> list[tuple[robodyn.Model, str]]:
    nonlinear = robodyn.SymbolicSystem(["a", "b"], ["w"], {"a": "b*sin(a) + w**2", "b": "-k*a*b + exp(w)"},
                                       parameters={"k": 1.5}, name="nonlinear")
    return [(nonlinear, "rhs"), (nonlinear, "jac"), (SPECIAL, "jac"), (robodyn.load("pendulum"), "rhs"),
            (robodyn.load("double_pendulum"), "rhs"),
            (robodyn.load(ROOT / "examples" / "joint.yaml"), "rhs")]


@pytest.mark.parametrize(("model", "name"), _cases(), ids=lambda case: getattr(case, "name", case))
def test_functions_compiled_by_llvm_equal_numbas(model: robodyn.Model, name: str) -> None:
    rng = np.random.default_rng(5)
    n, m, p = model.n_states, model.n_inputs, model.parameter_vector()
    text, size = (module_text(model), n) if name == "rhs" else (jacobian_text(model), n * (n + m))
    assert text is not None
    address, _ = native_address(*function_ir(text, name))  # supported: these models take the fast route
    numba_version = getattr(load_generated(text, "robodyn_test_pyir"), name)
    for _ in range(5):
        x, u, t = rng.uniform(-1.5, 1.5, n), rng.uniform(-1, 1, m), float(rng.uniform(0, 3))
        expected = np.full(size, np.nan)
        numba_version(t, x, u, p, expected)
        got = _call(address, t, x, u, p, size)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-14 * max(1.0, np.abs(expected).max()))


def test_functions_of_the_expression_grammar_match_the_models_numpy_evaluation() -> None:
    address, _ = native_address(*function_ir(module_text(SPECIAL), "rhs"))
    rng = np.random.default_rng(11)
    for _ in range(50):
        x, u, t = rng.uniform(-2, 2, 2), rng.uniform(-1, 1, 1), float(rng.uniform(0, 5))
        expected = SPECIAL.f_raw(t, x, u, SPECIAL.parameter_vector())
        np.testing.assert_allclose(_call(address, t, x, u, np.zeros(0), 2), expected, rtol=1e-13, atol=1e-13)


def test_code_calling_numba_helpers_is_left_to_numba() -> None:
    """A chain's compiled tape and the Jacobian solve of a mechanical model of more than UNROLL_LIMIT coordinates
    (robodyn.codegen.linalg) are numba's; a smaller one's Jacobian is straight-line code (its unrolled factor)."""
    with pytest.warns(robodyn.RobodynWarning):  # its link 3's identified inertia (kept as given)
        chain = robodyn.load(ROOT / "tests" / "data" / "puma560.yaml")
    with pytest.raises(Unsupported):
        function_ir(module_text(chain), "rhs")
    jacobian = jacobian_text(robodyn.load(f"mbk:n={UNROLL_LIMIT + 1}"))
    assert jacobian is not None
    with pytest.raises(Unsupported):
        function_ir(jacobian, "jac")
    small = jacobian_text(robodyn.load("double_pendulum"))
    assert small is not None and function_ir(small, "jac")


_MODULE = '''
@jit
def rhs(t, x, u, p, out):
{body}
    return
'''


@pytest.mark.parametrize("body", [
    "    __import__('os').system('echo owned')",
    "    out[0] = __import__('os').getpid()",
    "    out[0] = x.ctypes.data",
    "    for i in range(2):\n        out[i] = x[i]",
    "    out[0] = helper(x[0])",
    "    out[0] = x[-1]",
    "    out[0] = x[_i]",
    "    out[0] = y[0]",
    "    out[0] = x[0] // 2",
    "    out[0] = math.sin(x[0], x[1])",
    "    math = x[0]",
    "    out[0] = float('one')",
    "    x[0] = 1.0",
    "    out[0] = 'text'",
])
def test_anything_outside_the_straight_line_subset_is_refused(body: str) -> None:
    with pytest.raises(Unsupported):
        function_ir(_MODULE.format(body=body), "rhs")


def test_a_missing_function_or_other_arguments_are_refused() -> None:
    with pytest.raises(Unsupported, match="no function"):
        function_ir(_MODULE.format(body="    pass"), "event_fn")
    with pytest.raises(Unsupported, match="no function"):
        function_ir("def rhs(t, x, out):\n    pass\n", "rhs")
    with pytest.raises(Unsupported, match="does not parse"):
        function_ir("def rhs(:\n", "rhs")


def test_equal_functions_share_one_symbol_and_different_ones_do_not() -> None:
    first = function_ir(_MODULE.format(body="    out[0] = x[0] * 2.0"), "rhs")[1]
    again = function_ir("# another module\n" + _MODULE.format(body="    out[0] = x[0] * 2.0"), "rhs")[1]
    other = function_ir(_MODULE.format(body="    out[0] = x[0] * 3.0"), "rhs")[1]
    assert first == again != other


def test_a_very_deep_expression_is_left_to_numba_not_a_crash() -> None:
    deep = "x[0]" + " * (1.0 + x[1]" * 3000 + ")" * 3000
    with pytest.raises(Unsupported):
        function_ir(_MODULE.format(body=f"    out[0] = {deep}"), "rhs")
