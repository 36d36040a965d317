"""Tests for robodyn.model.kinds.symbolic: SymbolicSystem expressions, exact Jacobians, printing."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn import InputError, ShapeError, SymbolicSystem, UnknownNameError
from robodyn.model.kinds.symbolic import latex_name


def nonlinear_model() -> SymbolicSystem:
    """x' = y, y' = -a sin(x) + u x, outputs z = x**2 + u, w = y exp(x) - a u**2."""
    return SymbolicSystem(
        ["x", "y"], ["u"], {"x": "y", "y": "-a*sin(x) + u*x"},
        parameters={"a": 1.0}, outputs={"z": "x**2 + u", "w": "y*exp(x) - a*u**2"}, name="nl",
    )


NONLINEAR = nonlinear_model()


def by_name(model: SymbolicSystem) -> dict[str, sympy.Symbol]:
    return {s.name: s for s in (*model.x_symbols, *model.u_symbols, *model.p_symbols)}


# --- construction -----------------------------------------------------------------------------------
def test_f_from_text():
    model = SymbolicSystem(["q", "qd"], ["u"], {"q": "qd", "qd": "(u - b*qd - k*q)/J"},
                           parameters={"J": 0.01, "b": 0.1, "k": 1.0})
    # Independent reference: the joint J q'' + b q' + k q = u written out by hand.
    np.testing.assert_allclose(model.f(0.0, [0.3, -0.2], [0.5]),
                               [-0.2, (0.5 - 0.1 * -0.2 - 1.0 * 0.3) / 0.01], rtol=1e-14)


def test_f_from_sympy_expressions_with_plain_symbols_matched_by_name():
    q, v, u, k, t = (sympy.Symbol(n) for n in ("q", "v", "u", "k", "t"))  # no assumptions
    model = SymbolicSystem(["q", "v"], ["u"], [v, -k * sympy.sin(q) + u * sympy.cos(t)],
                           parameters={"k": 2.0})
    names = by_name(model)
    # The model's symbols replace the plain ones: no foreign symbol survives.
    assert model.f_expr.free_symbols <= {*names.values(), model.t_symbol}
    assert model.f_expr[1].has(names["q"]) and not model.f_expr[1].has(q)
    expected = [0.4, -2.0 * math.sin(0.3) + 1.5 * math.cos(2.0)]
    np.testing.assert_allclose(model.f(2.0, [0.3, 0.4], [1.5]), expected, rtol=1e-14)
    # Jacobians are taken with respect to the model's symbols, so the plain symbols must be matched.
    np.testing.assert_allclose(model.dfdx(2.0, [0.3, 0.4], [1.5]), [[0.0, 1.0], [-2.0 * math.cos(0.3), 0.0]],
                               rtol=1e-14)


def test_f_from_sympy_symbols_with_other_assumptions():
    x = sympy.Symbol("x", positive=True)
    model = SymbolicSystem(["x"], None, {"x": -3 * x})
    assert model.dfdx_expr == sympy.Matrix([[-3]])


@pytest.mark.parametrize("rows", [[1, 2.5], [sympy.Integer(1), sympy.Rational(5, 2)], ["1", "2.5"]])
def test_f_from_numbers(rows):
    model = SymbolicSystem(["x", "y"], None, rows)
    np.testing.assert_array_equal(model.f(0.0, [7.0, -3.0]), [1.0, 2.5])
    assert model.dfdx_expr.is_zero_matrix


def test_sequence_of_the_wrong_length_raises():
    with pytest.raises(InputError, match=r"f has 1 rows for 2 states"):
        SymbolicSystem(["x", "y"], None, ["y"])


@pytest.mark.parametrize(
    ("f", "match"),
    [
        ({"x": "y"}, r"no dynamics for state\(s\) y: give x' for each"),
        ({}, r"no dynamics for state\(s\) x, y"),
        ({"x": "y", "y": "-x", "z": "1"}, r"dynamics given for \['z'\], which are not states"),
        ({"x": sympy.Symbol("y"), "y": sympy.Symbol("zeta") * 2}, r"dynamics\.y: unknown symbol 'zeta'"),
        ({"x": "y", "y": "-x + foo"}, r"foo"),
        ({"x": "y", "y": [1, 2]}, r"dynamics\.y: expected an expression"),
    ],
)
def test_bad_dynamics_raise(f, match):
    with pytest.raises(InputError, match=match):
        SymbolicSystem(["x", "y"], None, f)


def test_unknown_symbol_in_an_output_raises():
    with pytest.raises(InputError, match=r"outputs\.z: unknown symbol 'r'"):
        SymbolicSystem(["x"], None, {"x": "-x"}, outputs={"z": sympy.Symbol("r")})


def test_names_are_checked():
    with pytest.raises(InputError, match=r"name 'x' is used both in states and in outputs"):
        SymbolicSystem(["x"], None, {"x": "-x"}, outputs={"x": "x"})
    with pytest.raises(InputError, match=r"'e' shadows the built-in"):
        SymbolicSystem(["x"], None, {"x": "-x"}, parameters={"e": 1.0})


# --- exact Jacobians --------------------------------------------------------------------------------
def test_exact_jacobians_equal_hand_derived():
    s = by_name(NONLINEAR)
    x, y, u, a = s["x"], s["y"], s["u"], s["a"]
    expected = {
        "dfdx_expr": sympy.Matrix([[0, 1], [-a * sympy.cos(x) + u, 0]]),
        "dfdu_expr": sympy.Matrix([[0], [x]]),
        "dhdx_expr": sympy.Matrix([[2 * x, 0], [y * sympy.exp(x), sympy.exp(x)]]),
        "dhdu_expr": sympy.Matrix([[1], [-2 * a * u]]),
    }
    for attribute, reference in expected.items():
        got = getattr(NONLINEAR, attribute)
        assert got.shape == reference.shape, attribute
        assert sympy.simplify(got - reference).is_zero_matrix, (attribute, got)


def test_jacobians_without_inputs_are_empty():
    model = SymbolicSystem(["x", "y"], None, ["y", "-x"])
    assert model.dfdu_expr.shape == (2, 0)
    assert model.dhdu_expr.shape == (2, 0)
    assert model.dfdu(0.0, [1.0, 2.0]).shape == (2, 0)
    assert model.dhdu(0.0, [1.0, 2.0]).shape == (2, 0)
    np.testing.assert_array_equal(model.dhdx(0.0, [1.0, 2.0]), np.eye(2))


def central_difference(fun, point, step):
    """Jacobian of fun at point by central differences, one column per coordinate."""
    columns = []
    for i in range(point.size):
        e = np.zeros_like(point)
        e[i] = step
        columns.append((fun(point + e) - fun(point - e)) / (2 * step))
    return np.stack(columns, axis=1)


# Central differences with step 1e-6 on these O(1)-scale functions (|values| <= ~50 on the sampled
# box): truncation error h^2 |f'''| / 6 ~ 1e-11, rounding error ~ eps |f| / h ~ 1e-8 in the worst
# case. An absolute tolerance of 1e-6 (relative to the scale 1 + |J|) is therefore safe while still
# catching any wrong entry (a sign or factor error is O(1)).
FD_STEP = 1e-6
FD_TOL = 1e-6

coordinate = st.floats(-2.5, 2.5, allow_nan=False)


@settings(max_examples=40, deadline=None)
@given(x=coordinate, y=coordinate, u=coordinate, a=st.floats(0.1, 3.0), t=st.floats(0.0, 10.0))
def test_numeric_jacobians_match_central_differences(x, y, u, a, t):
    state, inputs, params = np.array([x, y]), np.array([u]), {"a": a}
    f, h = NONLINEAR.f, NONLINEAR.h
    def fd_x(fun):
        return central_difference(lambda z: fun(t, z, inputs, params), state, FD_STEP)

    def fd_u(fun):
        return central_difference(lambda w: fun(t, state, w, params), inputs, FD_STEP)

    checks = [
        (NONLINEAR.dfdx(t, state, inputs, params), fd_x(f)),
        (NONLINEAR.dfdu(t, state, inputs, params), fd_u(f)),
        (NONLINEAR.dhdx(t, state, inputs, params), fd_x(h)),
        (NONLINEAR.dhdu(t, state, inputs, params), fd_u(h)),
    ]
    for exact, approx in checks:
        assert exact.shape == approx.shape
        assert np.max(np.abs(exact - approx) / (1.0 + np.abs(exact))) < FD_TOL


def test_numeric_jacobian_at_a_known_point():
    # At x = 0, y = 2, u = 3, a = 1: d(-a sin x + u x)/dx = -cos 0 + 3 = 2.
    np.testing.assert_array_equal(NONLINEAR.dfdx(0.0, {"x": 0.0, "y": 2.0}, {"u": 3.0}), [[0.0, 1.0], [2.0, 0.0]])
    np.testing.assert_array_equal(NONLINEAR.dfdu(0.0, [1.5, 2.0], [3.0]), [[0.0], [1.5]])
    with pytest.raises(ShapeError):
        NONLINEAR.dfdx(0.0, [1.0, 2.0, 3.0])
    with pytest.raises(UnknownNameError, match=r"did you mean 'a'\?"):
        NONLINEAR.dfdx(0.0, [1.0, 2.0], params={"aa": 1.0})


# --- evaluation -------------------------------------------------------------------------------------
def test_outputs_evaluate():
    y = NONLINEAR.h(0.0, [0.5, 2.0], [3.0], {"a": 2.0})
    np.testing.assert_allclose(y, [0.25 + 3.0, 2.0 * math.exp(0.5) - 2.0 * 9.0], rtol=1e-14)
    assert NONLINEAR.outputs == ("z", "w")


def test_without_outputs_y_is_x():
    model = SymbolicSystem(["x", "y"], None, ["y", "-x"])
    assert model.outputs == model.states
    np.testing.assert_array_equal(model.h(0.0, [1.25, -2.5]), [1.25, -2.5])


def test_time_dependence():
    model = SymbolicSystem(["x"], ["u"], {"x": "-x + sin(t)*u + t**2"})
    for t in (0.5, 2.0):
        assert model.f(t, [1.5], [2.0])[0] == pytest.approx(-1.5 + math.sin(t) * 2.0 + t**2, rel=1e-14)
    assert model.f(0.5, [1.5], [2.0])[0] != model.f(2.0, [1.5], [2.0])[0]


def test_state_names_that_look_like_cse_temporaries():
    # lambdify's common-subexpression elimination names its temporaries x0, x1, ...
    model = SymbolicSystem(["x0", "x1"], None, {"x0": "sin(x1)**2 + sin(x1)", "x1": "cos(x0)*sin(x1) + cos(x0)"})
    a, b = 0.3, 0.7
    np.testing.assert_allclose(model.f(0.0, [a, b]),
                               [math.sin(b) ** 2 + math.sin(b), math.cos(a) * math.sin(b) + math.cos(a)], rtol=1e-14)


# --- printing ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "latex"),
    [("theta", r"\theta"), ("q_dot", r"\dot{q}"), ("q_dot_dot", r"\ddot{q}"), ("x1", "x_{1}"), ("m", "m")],
)
def test_latex_name(name, latex):
    assert latex_name(name) == latex


def test_latex_contains_dot_and_frac():
    model = SymbolicSystem(["q", "w"], ["u"], {"q": "w", "w": "(u - k*q)/J"}, parameters={"k": 1.0, "J": 2.0})
    text = model.latex()
    assert text.startswith("\\begin{aligned}") and text.endswith("\\end{aligned}")
    assert r"\dot{q} &= w" in text
    assert r"\dot{w} &=" in text
    assert r"\frac" in text


def test_latex_of_a_velocity_state_uses_ddot():
    model = SymbolicSystem(["q", "q_dot"], ["u"], {"q": "q_dot", "q_dot": "(u - b*q_dot)/J"},
                           parameters={"b": 0.1, "J": 0.01})
    text = model.latex()
    assert r"\ddot{q} &= \frac" in text
    assert r"\dot{q} &= \dot{q}" in text
    assert "q_dot" not in text


def test_latex_includes_outputs():
    assert r"z &= " in NONLINEAR.latex() and r"w &= " in NONLINEAR.latex()


def test_pretty_has_one_line_per_equation():
    lines = NONLINEAR.pretty().splitlines()
    assert lines == ["x' = y", "y' = -a*sin(x) + u*x", "z = u + x**2", "w = -a*u**2 + y*exp(x)"]
    plain = SymbolicSystem(["x", "y"], None, ["y", "-x"])
    assert plain.pretty().splitlines() == ["x' = y", "y' = -x"]
    assert str(plain).splitlines()[0] == "SymbolicSystem 'model'"


@pytest.mark.parametrize("literal", [3.1644019732011035, "3.1644019732011035"])
def test_float_literals_keep_full_double_precision(literal):
    model = SymbolicSystem(["x"], None, {"x": literal})
    assert model.f(0.0, [0.0])[0] == 3.1644019732011035


def test_min_and_max_evaluate_and_names_cannot_shadow_the_printed_functions():
    """lambdify prints min/max with reduce(minimum, ...); states named like printed names must not clash."""
    model = SymbolicSystem(["numpy", "reduce"], None,
                           {"numpy": "reduce", "reduce": "min(numpy, reduce) - max(0.5, numpy)"},
                           outputs={"y": "max(numpy, reduce, 3*numpy)"})
    np.testing.assert_array_equal(model.f(0.0, [1.0, 0.25]), [0.25, min(1.0, 0.25) - max(0.5, 1.0)])
    np.testing.assert_array_equal(model.h(0.0, [1.0, 0.25]), [3.0])
