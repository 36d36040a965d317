"""The model contract's numba sources of the Jacobian and the outputs, compiled, against the models' own
exact derivatives (symbolic Jacobians, the manipulator formula, the compiled tape) and outputs.

Tolerance: the generated code and the model evaluate the same expressions along different routes
(cse and a numba Cholesky solve against lambdify and scipy / the tape), so they agree to rounding:
1e-12 relative to the largest entry.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.codegen.loader import load_generated

ROOT = Path(__file__).resolve().parents[2]

HEADER = """import math

import numba
import numpy as np

from robodyn.codegen.linalg import cholesky_solve_lower, manipulator_solve
from robodyn.codegen.llvm.tape import straight_line

jit = numba.njit(cache=True, nogil=True, error_model="numpy")
hjit = numba.njit(cache=True, nogil=True, error_model="numpy")
"""


def _compiled(source: str) -> object:
    return load_generated(HEADER + "\n\n" + source, "robodyn_test_sources")


def _models() -> list[robodyn.Model]:
    nonlinear = robodyn.SymbolicSystem(["a", "b"], ["w"], {"a": "b*sin(a) + w**2", "b": "-k*a*b + exp(w)"},
                                       parameters={"k": 1.5}, outputs={"y": "a*b + w", "z": "cos(b)"},
                                       name="nonlinear")
    return [nonlinear, robodyn.load("double_pendulum"), robodyn.load("cart_pole"),
            robodyn.load(ROOT / "examples" / "planar_arm.yaml"), robodyn.load(ROOT / "tests" / "data" / "puma560.yaml")]


#: the Puma's chain (~6 s cold) goes the planar arm's chain way: with -m slow
SLOW = {"puma560"}


@pytest.mark.parametrize("model", [pytest.param(m, marks=pytest.mark.slow) if m.name in SLOW else m for m in _models()],
                         ids=lambda m: m.name)
def test_generated_jacobian_equals_the_models_exact_one(model: robodyn.Model) -> None:
    module = _compiled(model.kernel_jacobian_source())
    rng = np.random.default_rng(3)
    n, m = model.n_states, model.n_inputs
    p = model.parameter_vector()
    for _ in range(5):
        x, u = rng.uniform(-1.5, 1.5, n), rng.uniform(-1, 1, m)
        out = np.full(n * (n + m), np.nan)
        module.jac(0.0, x, u, p, out)
        A, B = model.jacobians_raw(0.0, x, u, p)
        expected = np.concatenate([A.reshape(-1), B.reshape(-1)])
        np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(expected).max()))


@pytest.mark.parametrize("model", _models()[:2], ids=lambda m: m.name)
def test_generated_outputs_equal_h(model: robodyn.Model) -> None:
    module = _compiled(model.kernel_output_source())
    rng = np.random.default_rng(4)
    p = model.parameter_vector()
    for _ in range(5):
        x, u = rng.uniform(-1.5, 1.5, model.n_states), rng.uniform(-1, 1, model.n_inputs)
        out = np.full(model.n_outputs, np.nan)
        module.out_fn(0.0, x, u, p, out)
        np.testing.assert_allclose(out, model.h_raw(0.0, x, u, p), rtol=1e-13, atol=1e-13)


def test_python_callables_have_no_sources() -> None:
    system = robodyn.System(lambda t, x, u, p: -x, states=["x"])
    assert system.kernel_rhs_source() is None and system.kernel_jacobian_source() is None
    assert system.kernel_output_source() is None and not system.compilable
