"""``model: mpc`` in a diagram file (robodyn.control.mpc.from_file): the linear MPC (``method: linear``, the default;
tests/control/mpc/test_mpc_block.py runs it) and nonlinear MPC by real-time iterations (``method: fddp``, ``ddp``,
``collocation``) made from the same parameters.

Checked on the catalog cart-pole (theta = 0 upright): the FDDP block balances it from theta = 0.3 rad within its
force bound; near upright, with no bound active and a long horizon, its first input equals the linear MPC's of the
same file to the linearization error; the problem it builds has the linear MPC's weights scaled as the module
docstring derives (its cost of a plan is the linear MPC's sum); bad parameters are one line naming the fix.
"""

from __future__ import annotations

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError, ModelFileError
from robodyn.control.mpc.from_file import mpc_from_plant, receding_problem

LOOP = """name: cart_pole_nmpc
kind: diagram
blocks:
  plant: cart_pole
  mpc:
    model: mpc
    sample: 0.02
    parameters:
      plant: cart_pole
      method: fddp
      horizon: 30
      Q: {x: 1.0, theta: 10.0, x_dot: 0.1, theta_dot: 0.1}
      R: {F: 0.1}
      bounds: {inputs: {F: [-5, 5]}}
connect: [plant.x -> mpc.x, plant.theta -> mpc.theta, plant.x_dot -> mpc.x_dot, plant.theta_dot -> mpc.theta_dot,
          mpc.F -> plant.F]
outputs: {F: mpc.F}
"""


def diagram(tmp_path, text: str, file: str = "loop.yaml") -> robodyn.Diagram:
    (tmp_path / file).write_text(text)
    return robodyn.load(tmp_path / file)


def test_fddp_balances_the_cart_pole_within_its_force_bound(tmp_path) -> None:
    loop = diagram(tmp_path, LOOP)
    assert "nonlinear MPC (fddp, 1 iteration(s) per sample" in str(loop.blocks["mpc"])
    run = robodyn.simulate(loop, 5.0, [0.0, 0.3, 0.0, 0.0])
    force = run.y[:, run.outputs.index("F")]
    assert np.all(np.abs(force) <= 5.0 + 1e-12)  # the solver's box on the inputs: exactly kept
    assert np.abs(force).max() == pytest.approx(5.0)  # ... and used: 0.3 rad needs more than 5 N at first
    assert abs(run.x[-1, 1]) < 5e-3 and abs(run.x[-1, 3]) < 5e-2  # upright after 5 s


def test_near_upright_its_first_input_is_the_linear_mpcs(tmp_path) -> None:
    """Without the bound and over 2 s (100 samples), from x0 = e (0.5, 1, -1, 0.5): the two plans differ by the
    nonlinear terms of the dynamics. The cart-pole's are odd (f(-x, -u) = -f(x, u)), so the difference is of third
    order in e: doubling e multiplies it by 8; relative to the input it is below the Taylor remainder of sin and cos
    at theta = e, e^2 (the rk4 steps and the solvers' tolerances add ~1e-6 N, below it)."""
    long = LOOP.replace("horizon: 30", "horizon: 100").replace("      bounds: {inputs: {F: [-5, 5]}}\n", "")
    nonlinear = diagram(tmp_path, long, "fddp.yaml")
    linear = diagram(tmp_path, long.replace("method: fddp", "method: linear"), "linear.yaml")
    gaps = []
    for e in (0.02, 0.04):
        x0 = e * np.array([0.5, 1.0, -1.0, 0.5])
        u = robodyn.simulate(nonlinear, 0.02, x0).y[0, 0]
        u_linear = robodyn.simulate(linear, 0.02, x0).y[0, 0]
        assert abs(u - u_linear) <= e**2 * abs(u_linear)
        gaps.append(abs(u - u_linear))
    assert 6.0 < gaps[1] / gaps[0] < 10.0  # third order: 8


def test_the_problem_has_the_linear_mpcs_costs_and_bounds() -> None:
    cart = robodyn.load("cart_pole")
    Q, R = {"x": 1.0, "theta": 10.0}, {"F": 0.1}
    bounds = {"inputs": {"F": [-5, 5]}, "states": {"x": [None, 1.0]}}
    problem = receding_problem(cart, 0.02, 30, Q, R, None, bounds, method="ddp")
    linear = robodyn.mpc(cart, 30, Q, R, dt=0.02, bounds=bounds)
    assert problem.knots == 30 and problem.horizon == pytest.approx(0.6) and problem.method == "ddp"
    x, u = np.array([0.1, -0.2, 0.3, 0.4]), np.array([1.5])
    # l = 1/2 x' (2 Q / T) x + 1/2 u' (2 R / T) u: T l is the linear MPC's stage x' Q x + u' R u
    stage = x @ linear.Q @ x + u @ linear.R @ u
    assert 0.02 * problem.running(0.0, x, u) == pytest.approx(stage, rel=1e-14)
    assert problem.terminal(x) == pytest.approx(x @ linear.Qf @ x, rel=1e-14)  # the DARE's cost-to-go
    np.testing.assert_array_equal(problem.input_bounds, linear.input_bounds)
    np.testing.assert_array_equal(problem.state_bounds, linear.state_bounds)


@pytest.mark.parametrize(("change", "words"), [
    ({"method": "fdpp"}, "unknown method 'fdpp'.*did you mean 'fddp'"),
    ({"method": "fddp", "solver": "osqp"}, "solver names the linear MPC's QP solver"),
    ({"method": "fddp", "references": True}, "references are the linear MPC's reference ports"),
    ({"integrator": "rk4"}, "integrator is for the nonlinear methods"),
    ({"method": "fddp", "integrator": "rk5"}, "unknown integrator 'rk5'"),
    ({"method": "fddp", "iterations": 0}, "iterations must be an integer >= 1"),
    ({"method": "ddp", "plant": "discrete"}, "discrete or has sampled blocks"),
])
def test_bad_parameters_name_the_fix(change: dict, words: str) -> None:
    given = {"plant": robodyn.load("cart_pole"), "horizon": 10, "Q": np.eye(4), "R": {"F": 1.0},
             **change}
    if given["plant"] == "discrete":  # a plant the optimal control solvers cannot plan on: discrete time
        given["plant"] = robodyn.LinearSystem([[1.0, 0.02], [0.0, 1.0]], [[0.0], [0.02]], dt=0.02)
        given["Q"], given["R"] = np.eye(2), np.eye(1)
    plant = given.pop("plant")
    with pytest.raises(InputError, match=words):
        mpc_from_plant(plant, 0.02, **given)


def test_a_file_names_the_method_as_a_word(tmp_path) -> None:
    for old, new, words in (("method: fddp", "method: newton", "unknown method 'newton'"),
                            ("      plant: cart_pole\n      method", "      method", "needs the plant it .* controls")):
        with pytest.raises(ModelFileError, match=words) as raised:
            diagram(tmp_path, LOOP.replace(old, new), "bad.yaml")
        assert "\n" not in str(raised.value)  # one line
    linear = diagram(tmp_path, LOOP.replace("method: fddp", "method: linear\n      solver: osqp"), "osqp.yaml")
    assert "linear MPC (osqp" in str(linear.blocks["mpc"])
