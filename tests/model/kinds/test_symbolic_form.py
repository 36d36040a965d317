"""robodyn.model.kinds.symbolic_form: labelled equations, and the exact decisions read from them.

The decisions are checked on expressions whose answer is known by hand, then on every catalog model against
classify's verdicts and the model's own affine_form (the two consumers of the same decision).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy

import robodyn
from robodyn.files.catalog import CATALOG
from robodyn.model.expr import TIME, symbol
from robodyn.model.kinds.symbolic_form import (
    Equation,
    SymbolicForm,
    expanded,
    linearity,
    nonlinear_term,
    time_dependence,
)

x, v, u, k = (symbol(n) for n in ("x", "v", "u", "k"))


def _form(*equations: Equation, outputs: tuple[tuple[str, sympy.Expr], ...] = ()) -> SymbolicForm:
    return SymbolicForm(TIME, (x, v), (u,), equations, outputs)


def test_an_affine_system_is_linear_and_a_product_of_states_is_not() -> None:
    affine = _form(Equation("the equation for x'", v), Equation("the equation for v'", -k * x + u + sympy.sin(TIME)))
    assert linearity(affine) == (True, "every term is a constant times a state or input, or a forcing term")
    product = _form(Equation("the equation for x'", v), Equation("the equation for v'", -x * v))
    linear, reason = linearity(product)
    assert not linear and reason == "-v*x in the equation for v' makes it nonlinear in v, x"
    assert nonlinear_term(sympy.sin(x) + v, {x, v}) == sympy.sin(x)


def test_a_mass_entry_may_not_depend_on_the_state_but_may_on_parameters() -> None:
    constant = _form(Equation("the mass matrix entry M[0][0]", k + 1, "mass"), Equation("the equation for x''", u))
    assert linearity(constant)[0]
    varying = _form(Equation("the mass matrix entry M[0][0]", 1 + x**2, "mass"), Equation("the equation for x''", u))
    linear, reason = linearity(varying)
    assert not linear and reason == "the mass matrix entry M[0][0] = x**2 + 1 depends on x"


def test_cancelling_terms_count_only_after_expansion() -> None:
    cancelling = _form(Equation("the equation for x'", (x + v) ** 2 - x**2 - v**2 - 2 * x * v + v))
    assert linearity(cancelling.expanded())[0]
    assert cancelling.expanded().equations[0].expr == v
    assert expanded((x + 1) ** 2) == x**2 + 2 * x + 1


def test_time_is_found_in_the_dynamics_and_in_the_outputs() -> None:
    form = _form(Equation("the equation for x'", v), Equation("the equation for v'", u),
                 outputs=(("y", x * sympy.cos(TIME)),))
    assert time_dependence(form, outputs=False) == []
    assert time_dependence(form) == [("the output y", x * sympy.cos(TIME))]
    assert _form(Equation("the equation for x'", TIME * v)).linear_reason is None
    assert time_dependence(_form(Equation("the equation for x'", TIME * v)))[0][0] == "the equation for x'"


def test_a_reason_of_construction_decides_at_once() -> None:
    form = SymbolicForm(TIME, (x,), (u,), (Equation("the equation for x'", x**3),), (), "M, B, K are constant")
    assert linearity(form) == (True, "M, B, K are constant")


@pytest.mark.parametrize("name", list(CATALOG))
def test_classify_and_affine_form_agree_on_every_catalog_model(name: str) -> None:
    model = robodyn.load(name)
    form = model.symbolic_form()
    assert form is not None and len(form.equations) >= model.n_states // 2
    verdict = robodyn.classify(model)
    assert verdict.method == "symbolic"
    affine = model.affine_form(model.parameter_vector())
    assert (affine is not None) == (verdict.linear and verdict.time_invariant)
    if affine is not None:
        rng = np.random.default_rng(3)
        xs, us = rng.normal(size=model.n_states), rng.normal(size=model.n_inputs)
        A, B, c = affine
        np.testing.assert_allclose(A @ xs + B @ us + c, model.f(0.0, xs, us), rtol=1e-12, atol=1e-12)
