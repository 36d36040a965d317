"""Forward-mode derivatives of generated straight-line code (robodyn.codegen.forward) against the models' exact
symbolic Jacobians."""

from __future__ import annotations

import ast

import numpy as np
import pytest

import robodyn
from robodyn.codegen.forward import NotStraightLine, jacobian_lines
from robodyn.codegen.module import function_header, straight_line_function
from robodyn.diagrams.blocks import library as blocks
from robodyn.model.kinds.symbolic import SymbolicSystem


def compiled_jacobian(model: robodyn.Model):
    """jac(t, x, u, p, out) of the model's rhs source, differentiated and compiled by LLVM."""
    tree = ast.parse(model.kernel_rhs_source())
    (function,) = [s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "rhs"]
    n, m = model.n_states, model.n_inputs
    lines = jacobian_lines(function.body, n, n, m)
    text = "\n".join([function_header("test", n, m, len(model.parameters)), "@jit",
                      "def jac(t, x, u, p, out):", *(f"    {line}" for line in lines), "    return", ""])
    jac = straight_line_function(text, "jac")
    assert jac is not None, "not compiled as straight-line code"
    return jac


FUNCTIONS = SymbolicSystem(
    ["a", "b"], ["v"],
    {"a": "sin(a)*exp(b) + atan2(a, b + 3) - tanh(v)**3 + sqrt(b**2 + 1) + log(2 + cos(a))",
     "b": "abs(a - v) + max(a, v) - min(b, 0.5*v) + a**-2 + (b**2 + 1)**1.25 / (1 + a**2) + asin(0.3*tanh(a))"
          " + cosh(b/4)"},
    name="functions")


@pytest.mark.parametrize("model", [robodyn.load("pendulum"), robodyn.load("double_pendulum"), robodyn.load("cart_pole"),
                                   robodyn.load("joint"), FUNCTIONS,
                                   blocks.pid(kp=2.0, ki=1.0, kd=0.5, umin=-1.0, umax=1.0)],
                         ids=lambda m: m.name)
def test_forward_mode_equals_the_symbolic_jacobian(model: robodyn.Model) -> None:
    jac = compiled_jacobian(model)
    n, m = model.n_states, model.n_inputs
    p = model.parameter_vector()
    rng = np.random.default_rng(7)
    for _ in range(10):
        x, u = rng.uniform(0.2, 1.5, n) * rng.choice([-1, 1], n), rng.uniform(-2.0, 2.0, m)
        out = np.empty(n * (n + m))
        jac(0.0, x, u, p, out)
        A, B = model.jacobians_raw(0.0, x, u, p)
        scale = max(1.0, np.abs(A).max(), np.abs(B).max() if B.size else 0.0)
        assert np.all(np.isfinite(out))
        np.testing.assert_allclose(out[: n * n].reshape(n, n), A, rtol=1e-12, atol=1e-13 * scale)
        np.testing.assert_allclose(out[n * n:].reshape(n, m), B, rtol=1e-12, atol=1e-13 * scale)


def test_branches_take_the_derivative_of_the_branch_taken() -> None:
    saturated = blocks.pid(kp=2.0, ki=1.0, umin=-1.0, umax=1.0)
    jac = compiled_jacobian(saturated)
    p = saturated.parameter_vector()
    for e, slope in ((0.1, True), (5.0, False)):  # inside the limits, and saturated (anti-windup)
        x, u = np.array([0.0]), np.array([e, 0.0])
        out = np.empty(3)
        jac(0.0, x, u, p, out)
        A, B = saturated.jacobians_raw(0.0, x, u, p)
        np.testing.assert_allclose(out, [A[0, 0], *B[0]], rtol=1e-14)
        assert (out[0] == 0.0) == slope  # no correction inside the limits


def test_what_is_not_straight_line_is_refused() -> None:
    body = ast.parse("def rhs(t, x, u, p, out):\n    for i in range(2):\n        out[i] = x[i]\n").body[0].body
    with pytest.raises(NotStraightLine):
        jacobian_lines(body, 2, 2, 0)
    called = ast.parse("def rhs(t, x, u, p, out):\n    helper(t, x, u, p, out)\n").body[0].body
    with pytest.raises(NotStraightLine):
        jacobian_lines(called, 1, 1, 0)
