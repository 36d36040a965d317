"""robodyn.Linearizer: the exact linearization of robodyn.linearize, bit for bit, into buffers held between calls."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.errors import InputError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

MODELS = {
    "pendulum": lambda: robodyn.load("pendulum"),  # symbolic, y = x
    "two_link_arm": lambda: robodyn.load("two_link_arm"),  # a chain on the tape
    "urdf tape": lambda: robodyn.load(str(EXAMPLES / "two_link_arm.urdf")),
    "urdf pinocchio": lambda: robodyn.load(str(EXAMPLES / "two_link_arm.urdf"), backend="pinocchio"),
    "linear": lambda: robodyn.LinearSystem(np.array([[0.0, 1.0], [-2.0, -0.5]]), np.array([[0.0], [1.0]]),
                                           np.array([[1.0, 0.0]]), np.zeros((1, 1))),
    "planar arm with a tool output": lambda: robodyn.load(str(EXAMPLES / "planar_arm.yaml")),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_matrices_equal_linearize_bit_for_bit_at_many_points(name: str) -> None:
    model = MODELS[name]()
    lin = robodyn.Linearizer(model)
    rng = np.random.default_rng(7)
    first = lin(np.zeros(model.n_states))
    for _ in range(5):
        x, u = rng.uniform(-1, 1, model.n_states), rng.uniform(-1, 1, model.n_inputs)
        A, B, C, D = lin(x, u)
        reference = robodyn.linearize(model, x, u)
        for ours, theirs in zip((A, B, C, D), (reference.A, reference.B, reference.C, reference.D)):
            np.testing.assert_array_equal(ours, theirs)
        assert all(a is b for a, b in zip(first, (A, B, C, D)))  # the same held arrays every call


def test_values_by_name_and_lists_take_the_validated_path() -> None:
    model = robodyn.load("pendulum")
    lin = robodyn.Linearizer(model, params={"m": 2.0})
    by_name = [m.copy() for m in lin({"theta": 0.4, "theta_dot": 0.0}, {"tau": 0.0})]
    as_list = [m.copy() for m in lin([0.4, 0.0], [0.0])]
    reference = robodyn.linearize(model, [0.4, 0.0], [0.0], params={"m": 2.0})
    for a, b, c in zip(by_name, as_list, (reference.A, reference.B, reference.C, reference.D)):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, c)


def test_bad_models_and_points_are_refused_with_what_to_do() -> None:
    callable_model = robodyn.System(lambda t, x, u, p: -x, ["x"])
    with pytest.raises(InputError, match=r"no exact Jacobian: use robodyn\.linearize"):
        robodyn.Linearizer(callable_model)
    with pytest.raises(InputError, match="expected a robodyn model"):
        robodyn.Linearizer("pendulum")  # type: ignore[arg-type]
    lin = robodyn.Linearizer(robodyn.load("two_link_arm"))
    with pytest.raises(InputError, match="non-finite"):
        lin(np.array([np.nan, 0.0, 0.0, 0.0]))
    with pytest.raises(robodyn.ShapeError):
        lin(np.zeros(3))
    with pytest.raises(InputError):
        robodyn.Linearizer(robodyn.load("pendulum"), params={"no_such": 1.0})



def test_it_shows_the_last_matrices_in_a_notebook() -> None:
    lin = robodyn.Linearizer(robodyn.load("pendulum"))
    lin([0.5, 0.0], [0.0])
    page = lin._repr_html_()
    assert page.startswith('<div class="robodyn">') and page.count("<table") == 5
    assert "theta_dot" in page and "-8.60908" in page  # -g cos(0.5), the last call's A[1, 0]
