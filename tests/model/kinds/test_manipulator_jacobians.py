"""Exact manipulator Jacobians (no symbolic inverse) vs the symbolic Jacobian of the explicit f."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

import robodyn


def explicit_jacobians(model: robodyn.ManipulatorSystem):
    """Independent reference: f = [q', M^-1 r] with the symbolic inverse (fine for 2x2), differentiated."""
    n = model.n_coordinates
    accel = model.mass_expr.inv() * model.rhs_expr
    f = sympy.Matrix([*model.qd_symbols, *accel])
    args = (model.t_symbol, model.x_symbols, model.u_symbols, model.p_symbols)
    dfdx = sympy.lambdify(args, f.jacobian(model.x_symbols), "numpy")
    dfdu = sympy.lambdify(args, f.jacobian(model.u_symbols), "numpy")
    assert f.shape == (2 * n, 1)
    return dfdx, dfdu


@pytest.mark.parametrize("name", ["double_pendulum", "cart_pole", "pendulum", "joint", "mbk"])
def test_manipulator_jacobians_equal_explicit_symbolic_ones(name):
    model = robodyn.load(name)
    reference_x, reference_u = explicit_jacobians(model)
    rng = np.random.default_rng(7)
    p = model.parameter_vector()
    for _ in range(10):  # non-equilibrium points
        x = rng.uniform(-2, 2, model.n_states)
        u = rng.uniform(-1, 1, model.n_inputs)
        t = float(rng.uniform(0, 1))
        dfdx, dfdu = model.jacobians(t, x, u)
        expected_x = np.asarray(reference_x(t, x, u, p), dtype=float)
        expected_u = np.asarray(reference_u(t, x, u, p), dtype=float)
        # Both are exact formulas evaluated in double precision: agreement to ~1e-13 relative to the
        # entries' size; 1e-11 leaves room for the different evaluation orders.
        scale = 1.0 + np.max(np.abs(expected_x))
        np.testing.assert_allclose(dfdx, expected_x, rtol=0, atol=1e-11 * scale)
        np.testing.assert_allclose(dfdu, expected_u, rtol=0, atol=1e-11 * scale)


def test_jacobians_of_linear_mechanical_system_equal_first_order_form():
    model = robodyn.load("mbk:n=4")
    linear = model.to_linear()
    dfdx, dfdu = model.jacobians(0.0, np.zeros(8))
    np.testing.assert_allclose(dfdx, linear.A, rtol=0, atol=1e-14)
    np.testing.assert_allclose(dfdu, linear.B, rtol=0, atol=1e-14)


def test_jacobians_report_singular_mass_matrix():
    model = robodyn.LagrangianSystem(["q"], ["u"], kinetic="m*(1 - sin(q)**2)*q_dot**2/2", forces={"q": "u"},
                                     parameters={"m": 1.0})
    with pytest.raises(robodyn.SingularMatrixError, match="not positive definite"):
        model.jacobians(0.0, [np.pi / 2, 0.0], [0.0])


@pytest.mark.parametrize("name", ["double_pendulum", "cart_pole", "pendulum", "joint", "mbk:n=6",
                                  pytest.param("mbk:n=7", marks=pytest.mark.slow)])  # n=7: one more size, ~14 s
def test_the_generated_jacobian_equals_the_explicit_symbolic_one(name):
    """The kernels' ``jac``: straight-line code on the unrolled factor up to UNROLL_LIMIT coordinates (compiled by
    LLVM, no numba), the work-array solve above; both against the symbolic inverse's Jacobian (the tolerance of
    the test above)."""
    from robodyn.codegen.llvm.pyir import Unsupported, function_ir
    from robodyn.codegen.source import UNROLL_LIMIT
    from robodyn.model.compiled import jacobian_text, python_function

    model = robodyn.load(name)
    text = jacobian_text(model)
    if model.n_coordinates <= UNROLL_LIMIT:
        assert function_ir(text, "jac")  # straight-line: no numba in the process
    else:
        with pytest.raises(Unsupported):
            function_ir(text, "jac")
    jac = python_function(model, "jacobian")
    reference_x, reference_u = explicit_jacobians(model)
    rng = np.random.default_rng(11)
    n, m, p = model.n_states, model.n_inputs, model.parameter_vector()
    for _ in range(5):
        x, u, t = rng.uniform(-2, 2, n), rng.uniform(-1, 1, m), float(rng.uniform(0, 1))
        out = np.empty(n * (n + m))
        jac(t, x, u, p, out)
        expected_x = np.asarray(reference_x(t, x, u, p), dtype=float)
        scale = 1.0 + np.max(np.abs(expected_x))
        np.testing.assert_allclose(out[: n * n].reshape(n, n), expected_x, rtol=0, atol=1e-11 * scale)
        np.testing.assert_allclose(out[n * n:].reshape(n, m), np.asarray(reference_u(t, x, u, p), dtype=float),
                                   rtol=0, atol=1e-11 * scale)
    singular = robodyn.LagrangianSystem(["q"], ["u"], kinetic="m*(1 - sin(q)**2)*q_dot**2/2", forces={"q": "u"},
                                        parameters={"m": 1.0})
    out = np.empty(2 * 3)
    python_function(singular, "jacobian")(0.0, np.array([np.pi / 2, 0.0]), np.zeros(1), np.ones(1), out)
    assert np.isnan(out[2:4]).all()  # M not positive definite: NaN, as the work-array solve gives
