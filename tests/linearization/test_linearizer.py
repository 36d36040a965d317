"""robodyn.Linearizer: the exact linearization of robodyn.linearize, bit for bit, into buffers held between calls."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError

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


SPINNER = """kind: chain
name: spinner
base: floating
joints:
  - {name: arm, type: revolute, parent: body, child: tip, axis: [0, 1, 0], xyz: [0.3, 0, 0], damping: 0.2}
links:
  - {name: body, mass: 2.0, com: [0, 0, 0.1], inertia: [[1, 0, 0], [0, 2, 0], [0, 0, 3]]}
  - {name: tip, mass: 0.5, com: [0.2, 0, 0], inertia: [[0.01, 0, 0], [0, 0.02, 0], [0, 0, 0.02]]}
"""


@pytest.mark.parametrize("robot", ["puma560 (fixed)", "spinner (floating)"])
def test_large_trees_solve_their_factor_by_a_compiled_sparse_solve_in_held_buffers(robot: str, tmp_path,
                                                                                    monkeypatch) -> None:
    """Above SOLVE_LIMIT coordinates the tape gives L and dr/dz and a compiled sparse solve writes A's and B's rows
    (robodyn.mechanisms.chain.linearization.FactoredSolve), in the Linearizer into held buffers and in linearize's lean
    path into the result's row: bit for bit the same, and equal to the solves on the tape to rounding (the same
    factor, the operations in another order: row operations of length 2n + m, the pivots' reciprocals)."""
    from robodyn.mechanisms.chain import linearization
    from robodyn.mechanisms.floating import chain as floating

    path = Path(__file__).resolve().parents[1] / "data" / "puma560.yaml"
    if not robot.startswith("puma"):
        path = tmp_path / "spinner.yaml"
        path.write_text(SPINNER)
    model = robodyn.load(str(path))
    x = np.r_[0.1, -0.2, 0.3, 0.6, 0.0, 0.0, 0.8, 0.4, 0.5, -0.3, 0.2, 1.0, -2.0, 0.7, 1.5][: model.n_states]
    u = np.full(model.n_inputs, 0.3)
    on_tape = robodyn.linearize(model, x, u)
    for module in (linearization, floating):
        monkeypatch.setattr(module, "SOLVE_LIMIT", 0)
    monkeypatch.setattr("robodyn.rigid.dynamics.SOLVE_LIMIT", 0)  # read by the chart when it binds
    calls, raw = [], []
    solve, bind = linearization.FactoredSolve.__call__, linearization.FactoredSolve.raw_call
    monkeypatch.setattr(linearization.FactoredSolve, "__call__", lambda self, *a: calls.append(1) or solve(self, *a))
    monkeypatch.setattr(linearization.FactoredSolve, "raw_call", lambda self, *a: raw.append(1) or bind(self, *a))
    model = robodyn.load(str(path))  # a new model: linearize's held buffer is bound anew
    factored = robodyn.Linearizer(model)
    for _ in range(2):
        A, B, C, D = factored(x, u)
    reference = robodyn.linearize(model, x, u)
    for ours, theirs, tape in zip((A, B, C, D), (reference.A, reference.B, reference.C, reference.D),
                                  (on_tape.A, on_tape.B, on_tape.C, on_tape.D)):
        np.testing.assert_array_equal(ours, theirs)
        assert np.max(np.abs(ours - tape)) <= 1e-12 * max(1.0, np.abs(tape).max())
    # the Linearizer's two calls; linearize's lean path bound the same solve on addresses (FactoredSolve.raw_call)
    assert len(calls) == 2 and len(raw) == 1
