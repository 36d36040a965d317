"""The problem file (kind: optimal_control): the same problem as the constructor, and its errors with file:line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import ModelFileError

ISSUE_EXAMPLE = """\
kind: optimal_control
model: pendulum                 # a catalog name or a model file, relative to this file
parameters: {m: 1.5}
horizon: 3.0
knots: 60
x0: {theta: 0, theta_dot: 0}
method: fddp
integrator: rk4
transcription: hermite_simpson
costs:
  state:    {weights: {theta: 1.0, theta_dot: 0.1}, reference: {theta: pi}}
  input:    {weights: {tau: 0.01}, reference: {tau: 0}}
  terminal: {weights: {theta: 100, theta_dot: 10}, reference: {theta: pi}}
  running:  "0.5*tau**2"
bounds: {inputs: {tau: [-2, 2]}, states: {theta_dot: [-10, 10]}}
constraints: {path: ["theta_dot**2 - 64"], terminal: {theta: pi, theta_dot: 0}}
"""


def _write(folder: Path, text: str, name: str = "problem.yaml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_the_file_and_the_constructor_give_the_same_problem(tmp_path) -> None:
    from_file = robodyn.load_problem(_write(tmp_path, ISSUE_EXAMPLE))
    model = robodyn.load("pendulum")
    direct = robodyn.OptimalControlProblem(
        model, 3.0, 60, {"theta": 0.0, "theta_dot": 0.0},
        {"state": {"weights": np.diag([1.0, 0.1]), "reference": {"theta": np.pi}},
         "input": {"weights": [[0.01]], "reference": {"tau": 0.0}},
         "terminal": {"weights": {"theta": 100.0, "theta_dot": 10.0}, "reference": {"theta": np.pi}},
         "running": "0.5*tau**2"},
        {"inputs": {"tau": [-2.0, 2.0]}, "states": {"theta_dot": [-10.0, 10.0]}},
        {"path": ["theta_dot**2 - 64"], "terminal": {"theta": np.pi, "theta_dot": 0.0}}, {"m": 1.5})
    for name in ("horizon", "knots", "mechanical", "linear", "n_path", "n_terminal", "method", "integrator",
                 "transcription"):
        assert getattr(from_file, name) == getattr(direct, name), name
    for name in ("x0", "input_bounds", "state_bounds", "p"):
        np.testing.assert_array_equal(getattr(from_file, name), getattr(direct, name))
    rng = np.random.default_rng(2)
    for _ in range(3):
        t, x, u = rng.uniform(0, 3), rng.normal(size=2), rng.normal(size=1)
        np.testing.assert_array_equal(from_file.f(t, x, u), direct.f(t, x, u))
        a, b = from_file.running_derivatives(t, x, u), direct.running_derivatives(t, x, u)
        for field in ("l", "lx", "lu", "lxx", "luu", "lux"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
        np.testing.assert_array_equal(from_file.terminal_derivatives(x).lx, direct.terminal_derivatives(x).lx)
        np.testing.assert_array_equal(from_file.path(t, x, u), direct.path(t, x, u))
        np.testing.assert_array_equal(from_file.terminal_constraint(x), direct.terminal_constraint(x))
    for a, b in zip(from_file.initial_guess(), direct.initial_guess(), strict=True):
        np.testing.assert_array_equal(a, b)
    assert robodyn.load_problem(tmp_path / "problem.yaml", method="collocation").method == "collocation"


def test_model_files_are_read_relative_to_the_problem_file(tmp_path) -> None:
    (tmp_path / "models").mkdir()
    _write(tmp_path / "models", "kind: first_order\nstates: [x]\ninputs: [u]\ndynamics: {x: -x + u}\n", "lag.yaml")
    text = ("kind: optimal_control\nmodel: models/lag.yaml\nhorizon: 1\nknots: 10\nx0: {x: 1}\n"
            "costs: {input: {weights: {u: 1}}}\n")
    problem = robodyn.load_problem(_write(tmp_path, text))
    assert problem.states == ("x",) and problem.linear


@pytest.mark.parametrize(("change", "line", "words"), [
    (("horizon: 3.0", "horizon: 0"), 4, "must be > 0"),
    (("knots: 60", "knots: 1"), 5, "must be an integer from 2"),
    (("method: fddp", "method: sqp"), 7, "unknown method 'sqp'"),
    (("theta_dot: 0.1}", "omega: 0.1}"), 11, "unknown state 'omega'"),
    (("tau: 0.01}", "tau: -1}"), 12, "positive definite"),
    (("tau: [-2, 2]", "tau: [2, -2]"), 15, "lower bound 2 is above"),
    (("theta_dot**2 - 64", "theta_dot**2 - speed"), 16, "speed"),
    (("x0: {theta: 0, theta_dot: 0}", "x0: {theta: 0, theta_dot: 11}"), 6, "outside its bounds"),
    (("running:  \"0.5*tau**2\"", "running:  \"import os\""), 14, "costs.running"),
    (("parameters: {m: 1.5}", "parameters: {mass: 1.5}"), 3, "unknown parameter 'mass'"),
    (("integrator: rk4", "integrator: rk4\nsolver: x"), 9, "unknown key 'solver'"),
    (("model: pendulum ", "model: nowhere.yaml "), 2, "nowhere.yaml"),
])
def test_errors_name_the_file_line_and_key(tmp_path, change, line, words) -> None:
    path = _write(tmp_path, ISSUE_EXAMPLE.replace(*change))
    with pytest.raises(ModelFileError) as caught:
        robodyn.load_problem(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: ") and words in message and "\n" not in message


def test_load_refuses_a_problem_file_naming_load_problem(tmp_path) -> None:
    with pytest.raises(ModelFileError, match=r"not a model: read it with robodyn\.load_problem"):
        robodyn.load(_write(tmp_path, ISSUE_EXAMPLE))


ARM_PROBLEM = """\
kind: optimal_control
model: ARM
horizon: 1.0
knots: 20
x0: {shoulder: -1.2, elbow: 0.4, shoulder_dot: 0, elbow_dot: 0}
method: fddp
integrator: rk4
costs:
  state:    {weights: {shoulder: 1, elbow: 1, shoulder_dot: 0.1, elbow_dot: 0.1}}
  input:    {weights: {shoulder_tau: 0.01, elbow_tau: 0.01}}
  terminal: {weights: {shoulder: 100, elbow: 100, shoulder_dot: 10, elbow_dot: 10}}
"""


def test_a_problem_file_takes_an_mjcf_robot_as_it_takes_a_urdf_one(tmp_path) -> None:
    examples = Path(__file__).resolve().parents[3] / "examples"
    solutions = {}
    for suffix in ("urdf", "xml"):
        (tmp_path / f"arm.{suffix}").write_text((examples / f"two_link_arm.{suffix}").read_text(encoding="utf-8"),
                                                encoding="utf-8")
        problem = robodyn.load_problem(_write(tmp_path, ARM_PROBLEM.replace("ARM", f"arm.{suffix}"), f"{suffix}.yaml"))
        assert problem.inputs == ("shoulder_tau", "elbow_tau")
        solutions[suffix] = problem.solve()
    urdf, mjcf = solutions["urdf"], solutions["xml"]
    # one arm in two formats (f equal to round-off), one solver: the optima agree to the solver's tolerance
    assert mjcf.cost == pytest.approx(urdf.cost, rel=1e-8)
    np.testing.assert_allclose(mjcf.u, urdf.u, atol=1e-6)
