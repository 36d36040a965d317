"""robodyn.files.parameter_values: new parameter values written into a model file's own text."""

from __future__ import annotations

import pytest

import robodyn
from robodyn.base.errors import InputError
from robodyn.files.catalog import catalog_text
from robodyn.files.parameter_values import with_parameter_values

BLOCK = """# a pendulum
name: swing
kind: lagrangian
coordinates: [theta]
parameters:
  m: 1.0      # kg
  g: 9.81
  l: 2*0.5    # a constant expression
  I: m*l**2   # derived: follows m and l
inputs: [tau]
kinetic: I*theta_dot**2/2
potential: -m*g*l*cos(theta)
forces: {theta: tau}
"""


def test_block_style_values_are_replaced_and_everything_else_kept():
    text = with_parameter_values(BLOCK, {"m": 1.2345678901234567, "l": 0.75}, "swing.yaml")
    assert "# a pendulum" in text and "# kg" in text and "I: m*l**2   # derived" in text
    model = robodyn.read_model_text(text)
    assert model.parameters["m"] == 1.2345678901234567 and model.parameters["l"] == 0.75  # exact: repr round-trips
    assert model.parameters["g"] == 9.81
    assert text.replace("1.2345678901234567", "1.0").replace("0.75", "2*0.5") == BLOCK


def test_flow_style_values_are_replaced():
    text = with_parameter_values(catalog_text("joint"), {"k": 2.5, "J": 0.0125}, "catalog:joint")
    assert "parameters: {J: 0.0125, b: 0.1, k: 2.5}" in text
    assert robodyn.read_model_text(text).parameters["k"] == 2.5


@pytest.mark.parametrize(("values", "words"), [({"I": 2.0}, "no value of its own"), ({"mass": 1.0}, "no value"),
                                               ({"m": float("nan")}, "not finite")])
def test_refusals(values, words):
    with pytest.raises(InputError, match=words):
        with_parameter_values(BLOCK, values, "swing.yaml")
