"""Tests for robodyn.model.system: value conversion in Model and the callable-based System."""

from __future__ import annotations

import math

import numpy as np
import pytest

import robodyn
from robodyn import InputError, ShapeError, System, UnknownNameError


def oscillator_f(t, x, u, p):
    """q' = v, v' = -k q - c v + u  with p = (k, c)."""
    return np.array([x[1], -p[0] * x[0] - p[1] * x[1] + u[0]])


def make_oscillator(**kwargs):
    options = {"inputs": ["u"], "parameters": {"k": 4.0, "c": 0.5}, "name": "osc"}
    options.update(kwargs)
    return System(oscillator_f, ["q", "v"], **options)


# --- f and h accept arrays and mappings -------------------------------------------------------------
def test_f_accepts_array_and_mapping_with_the_same_result():
    model = make_oscillator()
    from_arrays = model.f(0.0, [1.5, -2.0], [0.25])
    from_mappings = model.f(0.0, {"v": -2.0, "q": 1.5}, {"u": 0.25})
    expected = np.array([-2.0, -4.0 * 1.5 - 0.5 * -2.0 + 0.25])
    np.testing.assert_array_equal(from_arrays, expected)
    np.testing.assert_array_equal(from_mappings, expected)
    assert from_arrays.dtype == np.float64


def test_h_accepts_array_and_mapping():
    model = System(
        oscillator_f, ["q", "v"], ["u"], h=lambda t, x, u, p: [x[0] + 2 * u[0]], outputs=["y"],
        parameters={"k": 4.0, "c": 0.5},
    )
    assert model.outputs == ("y",)
    np.testing.assert_array_equal(model.h(0.0, [3.0, 1.0], [0.5]), [4.0])
    np.testing.assert_array_equal(model.h(0.0, {"q": 3.0, "v": 1.0}, {"u": 0.5}), [4.0])


def test_scalar_state_for_a_one_state_model():
    model = System(lambda t, x, u, p: -2.0 * x, ["x"])
    np.testing.assert_array_equal(model.f(0.0, 3.0), [-6.0])


@pytest.mark.parametrize("u", [None, {}, {"u2": 0.0}])
def test_missing_inputs_default_to_zero(u):
    model = System(lambda t, x, u, p: np.array([u[0] + 10 * u[1]]), ["x"], ["u1", "u2"])
    assert model.f(0.0, [0.0], u)[0] == 0.0
    assert model.f(0.0, [0.0], {"u2": 1.5})[0] == 15.0


def test_time_is_passed_through():
    model = System(lambda t, x, u, p: np.array([math.sin(t) * x[0]]), ["x"])
    assert model.f(0.7, [2.0])[0] == pytest.approx(2.0 * math.sin(0.7), rel=1e-15)


# --- parameters -------------------------------------------------------------------------------------
def test_parameters_are_passed_to_f_in_declared_order():
    seen = []

    def f(t, x, u, p):
        seen.append(p.copy())
        return np.zeros(1)

    model = System(f, ["x"], parameters={"zeta": 3.0, "alpha": 1.0, "mid": 2.0})
    model.f(0.0, [0.0])
    np.testing.assert_array_equal(seen[-1], [3.0, 1.0, 2.0])
    model.f(0.0, [0.0], params={"alpha": -7.0})
    np.testing.assert_array_equal(seen[-1], [3.0, -7.0, 2.0])
    assert tuple(model.parameters) == ("zeta", "alpha", "mid")


def test_params_override_defaults_by_name_without_changing_the_model():
    model = make_oscillator()
    x = [1.0, 1.0]
    assert model.f(0.0, x)[1] == -4.0 - 0.5
    assert model.f(0.0, x, params={"k": 10.0})[1] == -10.0 - 0.5
    assert model.f(0.0, x, params=[1.0, 2.0])[1] == -1.0 - 2.0
    assert dict(model.parameters) == {"k": 4.0, "c": 0.5}
    assert model.f(0.0, x)[1] == -4.5


def test_parameter_vector_defaults_and_override():
    model = make_oscillator()
    np.testing.assert_array_equal(model.parameter_vector(), [4.0, 0.5])
    np.testing.assert_array_equal(model.parameter_vector({"c": 9.0}), [4.0, 9.0])


# --- unknown and missing names ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda m: m.f(0.0, {"q": 1.0, "vv": 0.0}), r"unknown state 'vv'.*did you mean 'v'\?"),
        (lambda m: m.f(0.0, [1.0, 0.0], {"uu": 1.0}), r"unknown input 'uu'.*did you mean 'u'\?"),
        (lambda m: m.f(0.0, [1.0, 0.0], params={"kk": 1.0}), r"unknown parameter 'kk'.*did you mean 'k'\?"),
        (lambda m: m.h(0.0, {"qq": 1.0, "v": 0.0}), r"unknown state 'qq'.*did you mean 'q'\?"),
    ],
)
def test_unknown_names_raise_with_a_suggestion(call, match):
    model = make_oscillator()
    with pytest.raises(UnknownNameError, match=match):
        call(model)


def test_unknown_name_error_is_an_input_error_and_a_key_error():
    model = make_oscillator()
    with pytest.raises(KeyError):
        model.f(0.0, {"zzz": 1.0, "q": 0.0, "v": 0.0})
    with pytest.raises(InputError, match=r"unknown state 'zzz' \(the model's states: q, v\)$"):
        model.f(0.0, {"zzz": 1.0, "q": 0.0, "v": 0.0})


def test_missing_state_names_in_a_mapping_raise():
    model = make_oscillator()
    with pytest.raises(InputError, match=r"missing state value\(s\) for v"):
        model.f(0.0, {"q": 1.0})
    with pytest.raises(InputError, match=r"no state values given: the model needs q, v"):
        model.f(0.0, None)


# --- shapes -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("x", [[1.0], [1.0, 2.0, 3.0], [[1.0, 2.0]], np.zeros((2, 1))])
def test_state_of_wrong_shape_raises(x):
    with pytest.raises(ShapeError, match=r"state vector has shape .*expected \(2,\) for q, v"):
        make_oscillator().f(0.0, x)


def test_input_of_wrong_shape_raises():
    with pytest.raises(ShapeError, match=r"input vector has shape \(2,\), expected \(1,\)"):
        make_oscillator().f(0.0, [0.0, 0.0], [1.0, 2.0])


@pytest.mark.parametrize("value", [[1.0], [1.0, 2.0, 3.0], [[1.0], [2.0]]])
def test_f_returning_wrong_shape_raises(value):
    model = System(lambda t, x, u, p: value, ["q", "v"], name="bad")
    with pytest.raises(ShapeError, match=r"model 'bad': f returned shape .*expected \(2,\)"):
        model.f(0.0, [0.0, 0.0])


def test_h_returning_wrong_shape_raises():
    model = System(oscillator_f, ["q", "v"], ["u"], h=lambda t, x, u, p: [x[0], x[1]], outputs=["y"],
                   parameters={"k": 1.0, "c": 0.0}, name="bad")
    with pytest.raises(ShapeError, match=r"model 'bad': h returned shape \(2,\), expected \(1,\)"):
        model.h(0.0, [0.0, 0.0])


def test_non_numeric_state_raises_input_error():
    with pytest.raises(InputError, match="state values must be real numbers"):
        make_oscillator().f(0.0, ["a", "b"])
    with pytest.raises(InputError, match=r"state 'q' must be a number"):
        make_oscillator().f(0.0, {"q": [1.0, 2.0], "v": 0.0})


# --- non-finite values ------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda m, b: m.f(0.0, [b, 0.0]), r"state value\(s\) for q are not finite"),
        (lambda m, b: m.f(0.0, {"q": 0.0, "v": b}), r"state 'v' must be finite"),
        (lambda m, b: m.f(0.0, [0.0, 0.0], [b]), r"input value\(s\) for u are not finite"),
        (lambda m, b: m.f(0.0, [0.0, 0.0], {"u": b}), r"input 'u' must be finite"),
        (lambda m, b: m.f(0.0, [0.0, 0.0], params={"k": b}), r"parameter 'k' must be finite"),
        (lambda m, b: m.f(0.0, [0.0, 0.0], params=[1.0, b]), r"parameter value\(s\) for c are not finite"),
        (lambda m, b: m.f(b, [0.0, 0.0]), r"time t must be finite"),
        (lambda m, b: m.h(b, [0.0, 0.0]), r"time t must be finite"),
    ],
)
def test_non_finite_values_raise(call, match, bad):
    with pytest.raises(InputError, match=match):
        call(make_oscillator(), bad)


def test_non_finite_parameter_default_raises():
    with pytest.raises(InputError, match=r"parameter 'k' must be finite"):
        System(oscillator_f, ["q", "v"], ["u"], parameters={"k": math.nan, "c": 0.0})


# --- outputs ----------------------------------------------------------------------------------------
def test_without_h_the_outputs_are_the_states():
    model = make_oscillator()
    assert model.outputs == model.states == ("q", "v")
    assert model.n_outputs == 2
    x = np.array([0.3, -1.2])
    y = model.h(0.0, x, [5.0])
    np.testing.assert_array_equal(y, x)
    y[0] = 99.0  # h returns a copy, not a view of the caller's array or the internal vector
    assert x[0] == 0.3


def test_h_without_outputs_is_an_error():
    with pytest.raises(InputError, match=r"h is given but outputs are not named: pass outputs="):
        System(oscillator_f, ["q", "v"], ["u"], h=lambda t, x, u, p: [x[0]])


def test_outputs_without_h_is_an_error():
    with pytest.raises(InputError, match=r"outputs are named but no h is given: pass h="):
        System(oscillator_f, ["q", "v"], ["u"], outputs=["y"])


@pytest.mark.parametrize(("f", "h"), [(3.0, None), (oscillator_f, "x")])
def test_non_callables_are_rejected(f, h):
    with pytest.raises(InputError, match=r"must be callable"):
        System(f, ["q", "v"], ["u"], h=h, outputs=None if h is None else ["y"])


# --- names ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"states": ["1x"]}, r"'1x' is not a valid name"),
        ({"states": ["x-y"]}, r"'x-y' is not a valid name"),
        ({"states": ["lambda"]}, r"'lambda' is not a valid name.*keyword"),
        ({"states": [""]}, r"'' is not a valid name"),
        ({"states": ["t"]}, r"'t' shadows the built-in"),
        ({"states": ["x"], "inputs": ["pi"]}, r"'pi' shadows the built-in"),
        ({"states": ["x"], "parameters": {"sin": 1.0}}, r"'sin' shadows the built-in"),
        ({"states": ["x", "x"]}, r"name 'x' is used twice"),
        ({"states": ["x"], "inputs": ["x"]}, r"name 'x' is used both in states and in inputs"),
        ({"states": ["x"], "parameters": {"x": 1.0}}, r"name 'x' is used both in states and in parameters"),
        ({"states": ["x"], "h": lambda *a: [0.0, 0.0], "outputs": ["y", "y"]}, r"name 'y' is used twice"),
        ({"states": ["x"], "h": lambda *a: [0.0], "outputs": ["x"]}, r"name 'x' is used both"),
        ({"states": []}, r"needs at least one state"),
        ({"states": "x"}, r"must be a list of names.*\['x'\]"),
    ],
)
def test_invalid_reserved_and_duplicate_names_raise(kwargs, match):
    with pytest.raises(InputError, match=match):
        System(lambda t, x, u, p: x, **kwargs)


def test_sizes_and_repr():
    model = make_oscillator()
    assert (model.n_states, model.n_inputs, model.n_outputs, model.order) == (2, 1, 2, 1)
    text = repr(model)
    assert "System(name='osc'" in text
    assert "states=['q', 'v']" in text
    assert "parameters={'k': 4.0, 'c': 0.5}" in text


def test_errors_are_robodyn_errors_with_exit_code_2():
    with pytest.raises(robodyn.RobodynError) as info:
        make_oscillator().f(0.0, [1.0])
    assert info.value.exit_code == 2
    assert isinstance(info.value, ValueError)


# --- values that only look numeric to numpy are refused (issue 22) -----------------------------------------
@pytest.mark.parametrize(("value", "reason"), [
    (np.array([np.datetime64("2020-01-01")] * 2), "a date"), ([1j, 0.0], "complex"), (["1", "2"], "text"),
    ("1,0", "text"), ([True, False], "a boolean"), ([1, None], "not all numbers"), ([[1], [2, 3]], "numbers"),
    (np.array([np.timedelta64(1, "s")] * 2), "a duration"),
])
def test_state_values_must_be_real_numbers(value, reason):
    from robodyn.base.errors import InputError

    model = robodyn.load("pendulum")
    with pytest.raises(InputError, match=reason):
        model.state_vector(value)


def test_a_named_value_must_be_a_real_number():
    from robodyn.base.errors import InputError

    model = robodyn.load("pendulum")
    for value in (1j, np.datetime64("2020"), "1", True, [1.0, 2.0]):
        with pytest.raises(InputError, match="theta"):
            model.state_vector({"theta": value}, default=0.0)
    assert model.state_vector([1, np.float32(2)]).tolist() == [1.0, 2.0]
    assert model.state_vector(np.array([1, 2], dtype=object)).tolist() == [1.0, 2.0]
    assert model.state_vector({"theta": np.int64(3)}, default=0.0).tolist() == [3.0, 0.0]


@pytest.mark.parametrize("name", ["joint", "pendulum", "double_pendulum", "cart_pole", "two_link_arm", "mbk"])
def test_f_many_equals_f_raw_row_by_row(name):
    """The batched f (one vectorized call for symbolic models) against the one-point f_raw."""
    model = robodyn.load(name)
    rng = np.random.default_rng(3)
    x, u = rng.normal(size=(9, model.n_states)), rng.normal(size=(9, model.n_inputs))
    t, p = rng.uniform(0, 1, 9), model.parameter_vector()
    expected = np.array([model.f_raw(float(ti), xi, ui, p) for ti, xi, ui in zip(t, x, u)])
    np.testing.assert_allclose(model.f_many(t, x, u, p), expected, rtol=1e-13, atol=1e-13 * np.max(np.abs(expected)))
