"""Tests for robodyn.analysis.classify: verdicts, reasons, methods and counterexamples."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn
from robodyn import Classification, LinearSystem, SymbolicSystem, System, classify

VERDICTS = ("order", "dimension", "linear", "time_invariant", "homogeneous", "autonomous")


def first_order(dynamics: str, states: str = "[x]", inputs: str = "[]", extra: str = "") -> robodyn.Model:
    return robodyn.read_model_text(
        f"name: test\nkind: first_order\nstates: {states}\ninputs: {inputs}\n{extra}dynamics: {dynamics}\n"
    )


def verdicts(c: Classification) -> tuple:
    return (c.order, c.dimension, c.linear, c.time_invariant, c.homogeneous, c.autonomous, c.method)


# --- catalog models ---------------------------------------------------------------------------------
def test_joint():
    c = classify(robodyn.load("joint"))
    assert verdicts(c) == (2, 1, True, True, False, False, "symbolic")
    assert c.scalar is True
    assert c.state_dimension == 2
    assert c.model == "joint"
    assert "u" in c.reasons["homogeneous"]
    assert c.counterexample is None


def test_pendulum_is_nonlinear_because_of_sin_theta():
    c = classify(robodyn.load("pendulum"))
    assert verdicts(c) == (2, 1, False, True, False, False, "symbolic")
    assert "sin(theta)" in c.reasons["linear"]


def test_double_pendulum_is_nonlinear_through_its_mass_matrix():
    c = classify(robodyn.load("double_pendulum"))
    assert (c.order, c.dimension, c.scalar, c.linear) == (2, 2, False, False)
    assert re.search(r"mass matrix entry M\[0\]\[0\] = .*cos\(theta2\).* depends on theta2", c.reasons["linear"])


def test_mbk_chain_is_linear():
    c = classify(robodyn.load("mbk", n=3))
    assert verdicts(c) == (2, 3, True, True, False, False, "symbolic")


# --- first-order files ------------------------------------------------------------------------------
def test_decay_without_inputs_is_linear_homogeneous_autonomous():
    c = classify(first_order("{x: -2*x}"))
    assert verdicts(c) == (1, 1, True, True, True, True, "symbolic")


def test_time_dependent_source_is_linear_time_varying_forced():
    c = classify(first_order("{x: -2*x + sin(t)}"))
    assert (c.linear, c.time_invariant, c.homogeneous, c.autonomous) == (True, False, False, False)
    assert "sin(t)" in c.reasons["time_invariant"]
    assert "sin(t)" in c.reasons["homogeneous"]
    assert "t appears explicitly" in c.reasons["autonomous"]


def test_time_varying_coefficient_is_linear_and_homogeneous():
    c = classify(first_order("{x: -sin(t)*x}"))
    assert (c.linear, c.time_invariant, c.homogeneous, c.autonomous) == (True, False, True, False)


@pytest.mark.parametrize(
    ("dynamics", "term"),
    [
        ("{x: x*y, y: -y}", "x*y"),
        ("{x: y, y: -x**3}", "x**3"),
        ("{x: y, y: -exp(x)}", "exp(x)"),
        ("{x: y, y: -abs(y)}", "Abs(y)"),
        ("{x: y, y: 1/x}", "1/x"),
    ],
)
def test_nonlinear_terms_are_named(dynamics, term):
    c = classify(first_order(dynamics, "[x, y]"))
    assert c.linear is False
    assert term in c.reasons["linear"]


def test_constant_source_is_linear_but_forced():
    c = classify(first_order("{x: -2*x + 3}"))
    assert (c.linear, c.time_invariant, c.homogeneous, c.autonomous) == (True, True, False, True)
    assert "source term 3" in c.reasons["homogeneous"]


def test_input_makes_it_forced_and_not_autonomous():
    c = classify(first_order("{x: -2*x + k*u}", inputs="[u]", extra="parameters: {k: 2.0}\n"))
    assert (c.linear, c.homogeneous, c.autonomous) == (True, False, False)
    assert "u" in c.reasons["autonomous"]


def test_input_times_state_is_nonlinear():
    c = classify(first_order("{x: -x*u}", inputs="[u]"))
    assert c.linear is False
    assert "u*x" in c.reasons["linear"] or "x*u" in c.reasons["linear"]


def test_parameters_do_not_break_linearity():
    c = classify(first_order("{x: -k**2*sin(a)*x}", extra="parameters: {k: 2.0, a: 1.0}\n"))
    assert c.linear is True


def test_time_only_in_an_output_is_time_varying_but_autonomous():
    model = SymbolicSystem(["x"], None, {"x": "-x"}, outputs={"y": "x*cos(t)"})
    c = classify(model)
    assert (c.time_invariant, c.autonomous) == (False, True)
    assert "output y" in c.reasons["time_invariant"]


# --- reasons, dict and text -------------------------------------------------------------------------
MODELS = {
    "joint": lambda: robodyn.load("joint"),
    "pendulum": lambda: robodyn.load("pendulum"),
    "source": lambda: first_order("{x: -2*x + sin(t)}"),
    "linear": lambda: LinearSystem([[0.0, 1.0], [-1.0, 0.0]], [[0.0], [1.0]]),
    "sampled": lambda: System(lambda t, x, u, p: [x[0] * x[1], -x[0] + u[0]], ["a", "b"], ["u"]),
}


@pytest.mark.parametrize("key", MODELS)
def test_to_dict_is_json_ready_and_has_the_contract_keys(key):
    c = classify(MODELS[key]())
    data = c.to_dict()
    assert {"order", "dimension", "linear", "time_invariant", "homogeneous", "autonomous", "method",
            "reasons"} <= set(data)
    assert json.loads(json.dumps(data)) == data
    assert data["linear"] is c.linear and data["method"] == c.method
    assert data["reasons"] == dict(c.reasons)


@pytest.mark.parametrize("key", MODELS)
def test_one_sentence_of_reason_per_verdict(key):
    c = classify(MODELS[key]())
    assert set(c.reasons) == set(VERDICTS)
    for verdict, sentence in c.reasons.items():
        assert isinstance(sentence, str) and sentence.strip(), verdict
        assert "\n" not in sentence
        assert ". " not in sentence.rstrip("."), (verdict, sentence)


@pytest.mark.parametrize("key", MODELS)
def test_str_lists_the_verdicts(key):
    c = classify(MODELS[key]())
    text = str(c)
    lines = text.splitlines()
    assert len(lines) == 1 + len(VERDICTS)
    assert lines[0].startswith(f"{c.model}: classified ")
    assert f"order {c.order}" in text
    assert f"dimension {c.dimension}" in text
    assert ("nonlinear" if not c.linear else " linear ") in text
    assert ("time-invariant" if c.time_invariant else "time-varying") in text
    assert ("homogeneous" if c.homogeneous else "forced") in text
    assert ("not autonomous" if not c.autonomous else "autonomous") in text
    for sentence in c.reasons.values():
        assert sentence in text


def test_reasons_are_read_only():
    c = classify(robodyn.load("joint"))
    with pytest.raises(TypeError):
        c.reasons["linear"] = "changed"  # type: ignore[index]


# --- linear models (structural) ---------------------------------------------------------------------
def test_linear_system_is_classified_structurally():
    c = classify(LinearSystem([[0.0, 1.0], [-1.0, 0.0]], [[0.0], [1.0]]))
    assert verdicts(c) == (1, 2, True, True, False, False, "structural")
    assert "u1" in c.reasons["homogeneous"]


def test_linear_system_with_zero_input_matrix_is_homogeneous():
    c = classify(LinearSystem([[-1.0]], [[0.0]]))
    assert (c.homogeneous, c.autonomous, c.method) == (True, True, "structural")


# --- plain callables (sampled) ----------------------------------------------------------------------
def test_linear_callable_is_linear_by_sampling():
    A = np.array([[0.0, 1.0], [-2.0, -0.5]])
    B = np.array([[0.0], [1.0]])
    c = classify(System(lambda t, x, u, p: A @ x + B @ u, ["q", "v"], ["u"]))
    assert verdicts(c) == (1, 2, True, True, False, False, "sampled")
    assert c.counterexample is None


def test_autonomous_linear_callable():
    c = classify(System(lambda t, x, u, p: -p[0] * x, ["x"], parameters={"k": 3.0}))
    assert (c.linear, c.time_invariant, c.homogeneous, c.autonomous) == (True, True, True, True)


def test_time_varying_callable():
    c = classify(System(lambda t, x, u, p: -x + math.sin(t), ["x"]))
    assert (c.linear, c.time_invariant, c.homogeneous, c.autonomous) == (True, False, False, False)
    assert c.method == "sampled"


def test_constant_source_callable_is_forced():
    c = classify(System(lambda t, x, u, p: -x + 3.0, ["x"]))
    assert (c.linear, c.homogeneous, c.autonomous) == (True, False, True)
    assert "source term" in c.reasons["homogeneous"]


def test_nonlinear_callable_has_a_real_counterexample():
    def f(t, x, u, p):
        return np.array([x[0] * x[1], -x[0] + u[0] ** 2])

    model = System(f, ["a", "b"], ["u"])
    c = classify(model)
    assert c.linear is False and c.method == "sampled"
    ce = c.counterexample
    assert ce is not None

    def split(point):
        return (np.array([point[s] for s in model.states]), np.array([point[s] for s in model.inputs]))

    (x1, u1), (x2, u2) = split(ce["x1"]), split(ce["x2"])
    a, b, t = ce["a"], ce["b"], ce["t"]
    F = model.f  # recompute through the public API, independently of the classifier
    f0 = F(t, np.zeros(2), np.zeros(1))
    combo = F(t, a * x1 + b * x2, a * u1 + b * u2) - f0
    superposed = a * (F(t, x1, u1) - f0) + b * (F(t, x2, u2) - f0)
    mismatch = np.max(np.abs(combo - superposed))
    # The violation is real (far above rounding) and is the one reported.
    assert mismatch > 1e-6 * (1.0 + np.max(np.abs(combo)))
    assert ce["mismatch"] == pytest.approx(mismatch, rel=1e-12)
    assert json.loads(json.dumps(c.to_dict()))["counterexample"]["a"] == a


def test_sampling_is_reproducible():
    model = System(lambda t, x, u, p: np.sin(x), ["x"])
    assert classify(model, seed=3).counterexample == classify(model, seed=3).counterexample


def test_callable_that_is_never_finite_cannot_be_classified():
    model = System(lambda t, x, u, p: np.array([math.nan]), ["x"])
    with pytest.raises(robodyn.InputError, match=r"not finite at any of 4 random points"):
        classify(model, samples=4)


# --- random linear systems (hypothesis) ---------------------------------------------------------------
def row_text(coefficients) -> str:
    terms = [f"{c}*x{j + 1}" for j, c in enumerate(coefficients) if c != 0]
    return " + ".join(terms) if terms else "0"


@st.composite
def integer_matrices(draw):
    n = draw(st.integers(1, 3))
    return draw(st.lists(st.lists(st.integers(-5, 5), min_size=n, max_size=n), min_size=n, max_size=n))


@settings(max_examples=30, deadline=None)
@given(A=integer_matrices())
def test_random_linear_systems_are_linear_and_adding_a_square_breaks_it(A):
    n = len(A)
    states = [f"x{i + 1}" for i in range(n)]
    rows = {s: row_text(row) for s, row in zip(states, A)}
    c = classify(SymbolicSystem(states, None, rows))
    assert (c.linear, c.time_invariant, c.homogeneous, c.autonomous) == (True, True, True, True)
    assert c.dimension == n

    rows[states[-1]] = rows[states[-1]] + " + x1**2"
    c = classify(SymbolicSystem(states, None, rows))
    assert c.linear is False
    assert "x1**2" in c.reasons["linear"]
    # The constant matrix agrees with the structural classifier of the same A.
    assert classify(LinearSystem(np.array(A, dtype=float))).linear is True


def test_expression_that_is_affine_after_expansion_is_linear():
    model = SymbolicSystem(["x"], None, {"x": "(x + 1)**3 - x**3 - 3*x**2 - 3*x - 1 - 2*x"})
    assert classify(model).linear is True


def test_a_linkage_is_sampled_around_an_assembled_state() -> None:
    """The four-bar at q = 0 is laid out straight (its loop's Jacobian loses rank: f is singular there): sampling
    starts from a state on the loop instead, and the verdicts are a pendulum-like linkage's."""
    from pathlib import Path

    model = robodyn.load(str(Path(__file__).resolve().parents[2] / "examples" / "four_bar.yaml"))
    result = robodyn.classify(model)
    assert result.order == 2 and not result.linear and result.time_invariant and not result.homogeneous
    assert "f(x0 + a d1 + b d2) - f(x0)" in result.reasons["linear"]
