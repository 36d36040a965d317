"""sign() and abs() in model expressions: every derivative path gives the derivative off the jump (0 for
sign, +-1 for abs) instead of failing on sympy's DiracDelta — linearize (symbolic and manipulator), the
stiff solvers' Jacobian and the generated kernel Jacobian. References: the derivatives by hand."""

from __future__ import annotations

import numpy as np

import robodyn


def test_symbolic_model_with_sign_and_abs_linearizes_and_runs_stiff() -> None:
    model = robodyn.SymbolicSystem(["x", "v"], ["u"], {"x": "v", "v": "-2*sign(v) - x + u + abs(x)"}, name="coulomb")
    linear = robodyn.linearize(model, [-0.3, 0.5], [0.0])
    np.testing.assert_array_equal(linear.A, [[0.0, 1.0], [-2.0, 0.0]])  # d/dx (-x + |x|) = -1 - 1 at x < 0
    # moving fast in one direction the whole time: sign(v) = 1, radau with the exact Jacobian
    run = robodyn.simulate(model, 0.2, [0.0, 5.0], method="radau", rtol=1e-10, atol=1e-12)
    t = run.t[-1]  # x'' = -2 - x + |x| = -2 while x > 0: x = 5 t - t^2
    np.testing.assert_allclose(run.final, [5 * t - t**2, 5 - 2 * t], rtol=1e-8)


def test_manipulator_model_with_sign_linearizes_and_has_a_kernel_jacobian() -> None:
    model = robodyn.LagrangianSystem(["q"], ["u"], "m*q_dot**2/2", "0", {"q": "u - c*sign(q_dot)"},
                                     parameters={"m": 2.0, "c": 0.3})
    linear = robodyn.linearize(model, [0.1, 0.5])
    np.testing.assert_array_equal(linear.A, [[0.0, 1.0], [0.0, 0.0]])
    np.testing.assert_array_equal(linear.B, [[0.0], [0.5]])
    assert "DiracDelta" not in model.kernel_jacobian_source()
    run = robodyn.simulate(model, 0.5, [0.0, 1.0], method="bdf", rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(run.final[1], 1.0 - 0.15 * run.t[-1], rtol=1e-8)  # q'' = -c/m while q' > 0


def test_sign_of_an_argument_sympy_cannot_prove_real_has_the_derivative_off_its_jump() -> None:
    """sympy leaves d sign(sqrt(y) - 1)/dy unevaluated (sqrt(y) may be complex to it): 0 off the jump, in the
    model's Jacobian and in its kernel Jacobian, as the light reader's forward derivative has it."""
    model = robodyn.SymbolicSystem(["y"], [], {"y": "sign(sqrt(y) - 1)*y + sign(log(7/y))"})
    for y in (0.5, 4.0, 9.0):  # d/dy = sign(sqrt(y) - 1) off the jumps at y = 1 and y = 7
        A, _ = model.jacobians_raw(0.0, np.array([y]), np.zeros(0), np.zeros(0))
        np.testing.assert_array_equal(A, [[np.sign(np.sqrt(y) - 1)]])
    assert "Derivative" not in model.kernel_jacobian_source()
