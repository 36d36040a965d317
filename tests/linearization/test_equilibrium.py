"""find_equilibrium(): closed-form equilibria and holding torques, linear solves, multi-start, errors.

Tolerances: the solvers end with Gauss-Newton polishing on the exact Jacobian, so a solution is within a
few ulp of the true root scaled by the Jacobian's conditioning (~1e-15 for these small, well-conditioned
problems); 1e-12 leaves three orders of margin. Holding torques are one linear least-squares solve with
dr/du = identity, i.e. the closed form up to a few ulp of g(q) (|g| < 50 here).
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn
from robodyn.base.errors import ConvergenceError, InputError, ShapeError, UnknownNameError
from robodyn.linearization.equilibrium import OperatingPoint, find_equilibrium

G = 9.81  # catalog pendulum: m = 1, l = 1, I = 1; double pendulum: m1 = m2 = l1 = l2 = 1


def wrapped(angle: float) -> float:
    """The angle modulo 2 pi, in [-pi, pi)."""
    return (angle + math.pi) % (2 * math.pi) - math.pi


def distance_mod_2pi(a: float, b: float) -> float:
    return abs(wrapped(a - b))


# --- pendulum ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("fix", "method"), [({"tau": 0.0}, "root-hybr"),
                                             ({"tau": 0.0, "theta_dot": 0.0}, "least-squares")])
def test_pendulum_finds_hanging_and_inverted(fix, method):
    points = find_equilibrium(robodyn.load("pendulum"), fix, starts=8)
    thetas = [p.x[0] for p in points]
    for target in (0.0, math.pi):  # sin(theta) = 0: theta = k pi
        assert any(distance_mod_2pi(theta, target) < 1e-12 for theta in thetas)
    for point in points:
        assert point.converged and point.residual < 1e-10 and point.method == method
        assert min(distance_mod_2pi(point.x[0], 0.0), distance_mod_2pi(point.x[0], math.pi)) < 1e-12
        assert point.x[1] == pytest.approx(0.0, abs=1e-12)
        np.testing.assert_array_equal(point.u, [0.0])
    residuals = [p.residual for p in points]
    assert residuals == sorted(residuals)


@pytest.mark.parametrize("fix", [{"theta": 0.3, "theta_dot": 0.0}, {"theta": 0.3}])
def test_pendulum_holding_torque_is_m_g_l_sin_theta(fix):
    params = {"m": 2.0, "l": 0.5}
    (point,) = find_equilibrium(robodyn.load("pendulum"), fix, params=params)
    assert point.method == "holding-torque" and point.converged
    assert abs(point.u[0] - 2.0 * G * 0.5 * math.sin(0.3)) <= 1e-12
    np.testing.assert_array_equal(point.x, [0.3, 0.0])  # a free velocity is forced to 0 by q' = q_dot


def test_guess_and_box_choose_the_branch():
    pendulum = robodyn.load("pendulum")
    (inverted,) = find_equilibrium(pendulum, {"tau": 0.0}, guess={"theta": 3.0})
    assert abs(inverted.x[0] - math.pi) < 1e-12
    points = find_equilibrium(pendulum, {"tau": 0.0, "theta_dot": 0.0}, guess=[6.0], starts=6, box=(5.0, 7.5))
    assert all(abs(p.x[0] - 2 * math.pi) < 1e-12 for p in points)  # sin has no other zero in the box


def test_under_determined_returns_one_of_many_per_start():
    points = find_equilibrium(robodyn.load("pendulum"), starts=4, seed=1)  # 3 unknowns, 2 equations
    assert points and all(p.method == "least-squares" for p in points)
    for point in points:
        theta, theta_dot = point.x
        assert point.residual < 1e-10 and abs(theta_dot) < 1e-12
        assert abs(point.u[0] - G * math.sin(theta)) < 1e-10  # tau = m g l sin(theta), I = 1


# --- double pendulum -----------------------------------------------------------------------------------------
def gravity_torques(t1, t2, m1=1.0, m2=1.0, l1=1.0, l2=1.0, g=G):
    """g(q) = dV/dq for V = -(m1 + m2) g l1 cos t1 - m2 g l2 cos(t1 + t2)."""
    g2 = m2 * g * l2 * math.sin(t1 + t2)
    return (m1 + m2) * g * l1 * math.sin(t1) + g2, g2


def test_double_pendulum_holding_torques():
    fix = {"theta1": 0.3, "theta2": -0.4, "theta1_dot": 0.0, "theta2_dot": 0.0}
    (point,) = find_equilibrium(robodyn.load("double_pendulum"), fix)
    assert point.method == "holding-torque"
    np.testing.assert_allclose(point.u, gravity_torques(0.3, -0.4), rtol=0, atol=1e-12)


positive = st.floats(0.2, 3.0)
angle = st.floats(-math.pi, math.pi)


@settings(max_examples=25, deadline=None)
@given(t1=angle, t2=angle, m1=positive, m2=positive, l1=positive, l2=positive)
def test_double_pendulum_holding_torques_over_parameters(t1, t2, m1, m2, l1, l2):
    params = {"m1": m1, "m2": m2, "l1": l1, "l2": l2}
    fix = {"theta1": t1, "theta2": t2, "theta1_dot": 0.0, "theta2_dot": 0.0}
    (point,) = find_equilibrium(robodyn.load("double_pendulum"), fix, params=params)
    expected = gravity_torques(t1, t2, m1, m2, l1, l2)
    # |g| <= 2 * 3 * 9.81 * 3 ~ 180: a few ulp of that is ~1e-13.
    np.testing.assert_allclose(point.u, expected, rtol=0, atol=1e-12 * (1 + max(map(abs, expected))))


def test_cart_pole_cannot_be_held_off_upright():
    fix = {"x": 0.0, "theta": 0.3, "x_dot": 0.0, "theta_dot": 0.0}  # F acts on the cart only
    with pytest.raises(ConvergenceError, match="best residual"):
        find_equilibrium(robodyn.load("cart_pole"), fix)
    (upright,) = find_equilibrium(robodyn.load("cart_pole"), {**fix, "theta": 0.0})
    assert upright.method == "holding-torque" and abs(upright.u[0]) < 1e-12


def test_holding_falls_back_to_the_solver_when_not_affine_in_u():
    model = robodyn.ManipulatorSystem(["q"], ["u"], [["1"]], ["u**3"], ["k*q"], parameters={"k": 2.0})
    (point,) = find_equilibrium(model, {"q": 0.5, "q_dot": 0.0}, guess=[1.0])
    assert point.method == "least-squares"  # u^3 = k q: not affine, so no holding-torque shortcut
    assert abs(point.u[0] - 1.0) < 1e-12


def test_nonzero_velocity_is_never_an_equilibrium():
    with pytest.raises(ConvergenceError, match="nonzero values"):
        find_equilibrium(robodyn.load("pendulum"), {"theta": 0.3, "theta_dot": 1.0})


# --- linear mechanical models --------------------------------------------------------------------------------
def test_joint_rests_at_u_over_k():
    (point,) = find_equilibrium(robodyn.load("joint"), {"u": 1.0}, starts=4)
    np.testing.assert_allclose(point.x, [1.0, 0.0], rtol=0, atol=1e-12)  # k = 1
    assert point.method == "root-hybr"


def test_mbk_chain_matches_linear_solve():
    model = robodyn.load("mbk", n=4)
    forces = np.array([1.0, -2.0, 0.5, 3.0])
    points = find_equilibrium(model, dict(zip(model.inputs, forces)), starts=5)
    assert len(points) == 1  # a linear system with K nonsingular has one equilibrium
    _, _, stiffness, input_matrix = model.numeric_matrices()
    expected = np.linalg.solve(stiffness, input_matrix @ forces)
    np.testing.assert_allclose(points[0].x[:4], expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(points[0].x[4:], 0.0, rtol=0, atol=1e-12)


def test_linear_system_uses_a_and_b():
    linear = robodyn.load("joint").to_linear()
    (point,) = find_equilibrium(linear, {"u": 2.0})
    np.testing.assert_allclose(point.x, [2.0, 0.0], rtol=0, atol=1e-12)


# --- first-order and callable models -------------------------------------------------------------------------
def test_cubic_has_three_equilibria():
    model = robodyn.SymbolicSystem(["x"], None, ["x - x**3"])
    points = find_equilibrium(model, starts=20)
    found = sorted(float(p.x[0]) for p in points)
    np.testing.assert_allclose(found, [-1.0, 0.0, 1.0], rtol=0, atol=1e-12)


def test_singular_jacobian_at_the_start_does_not_crash():
    model = robodyn.SymbolicSystem(["x"], None, ["x**2 - 1"])  # df/dx = 0 at the default guess 0
    found = sorted(float(p.x[0]) for p in find_equilibrium(model, starts=6))
    assert found and all(min(abs(v - 1), abs(v + 1)) < 1e-12 for v in found)


def test_over_determined_symbolic_by_least_squares():
    model = robodyn.SymbolicSystem(["x", "y"], None, ["y - x**2", "x - 1"])
    (point,) = find_equilibrium(model, {"y": 1.0}, guess=[3.0])  # 1 unknown, 2 consistent equations
    assert point.method == "least-squares"
    np.testing.assert_allclose(point.x, [1.0, 1.0], rtol=0, atol=1e-12)


def test_callable_system_uses_central_differences():
    pendulum = robodyn.load("pendulum")
    callable_model = robodyn.System(lambda t, x, u, p: pendulum.f(t, x, u), pendulum.states, pendulum.inputs)
    points = find_equilibrium(callable_model, {"tau": 1.0}, starts=8)
    # g sin(theta) = tau: theta = asin(1/g) or pi - asin(1/g), modulo 2 pi. The O(h^2) error of the
    # difference Jacobian slows the iteration but does not move the root: the residual decides.
    branches = (math.asin(1.0 / G), math.pi - math.asin(1.0 / G))
    for point in points:
        assert point.residual < 1e-10 and point.method == "root-hybr"
        assert min(distance_mod_2pi(point.x[0], b) for b in branches) < 1e-12
        assert abs(point.x[1]) < 1e-12
    for branch in branches:
        assert any(distance_mod_2pi(p.x[0], branch) < 1e-12 for p in points)


def test_time_and_params_reach_the_model():
    model = robodyn.SymbolicSystem(["x"], ["u"], ["a*(x - t) + u"], parameters={"a": 1.0})
    (point,) = find_equilibrium(model, {"u": 1.0}, t=2.0, params={"a": 4.0})
    assert abs(point.x[0] - 1.75) < 1e-12  # 4 (x - 2) + 1 = 0


# --- everything fixed ----------------------------------------------------------------------------------------
def test_all_fixed_checks_the_point():
    pendulum = robodyn.load("pendulum")
    (point,) = find_equilibrium(pendulum, {"theta": 0.0, "theta_dot": 0.0, "tau": 0.0})
    assert point.method == "fixed" and point.residual == 0.0
    with pytest.raises(ConvergenceError, match="leave some"):
        find_equilibrium(pendulum, {"theta": 0.3, "theta_dot": 0.0, "tau": 0.0})


# --- errors --------------------------------------------------------------------------------------------------
def test_unknown_name_suggests_the_close_one():
    with pytest.raises(UnknownNameError, match="did you mean 'theta'"):
        find_equilibrium(robodyn.load("pendulum"), {"thetaa": 0.3})
    with pytest.raises(UnknownNameError, match="did you mean 'tau'"):
        find_equilibrium(robodyn.load("pendulum"), {"theta": 0.3}, box={"tua": (0, 1)})


def test_bad_values_are_input_errors():
    pendulum = robodyn.load("pendulum")
    with pytest.raises(InputError, match="not finite"):
        find_equilibrium(pendulum, {"tau": 0.0}, guess=[math.nan, 0.0])
    with pytest.raises(InputError, match="finite"):
        find_equilibrium(pendulum, {"tau": math.inf})
    with pytest.raises(InputError, match="finite"):
        find_equilibrium(pendulum, {"tau": 0.0}, guess={"theta": math.inf})
    with pytest.raises(InputError, match="is fixed"):
        find_equilibrium(pendulum, {"tau": 0.0}, guess={"tau": 1.0})
    with pytest.raises(ShapeError, match="one per unknown"):
        find_equilibrium(pendulum, {"tau": 0.0}, guess=[1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="starts"):
        find_equilibrium(pendulum, {"tau": 0.0}, starts=0)
    with pytest.raises(InputError, match="empty"):
        find_equilibrium(pendulum, {"tau": 0.0}, starts=2, box=(1.0, 1.0))


def test_no_real_equilibrium_reports_best_residual():
    model = robodyn.SymbolicSystem(["x"], None, ["x**2 + 1"])  # x' >= 1 everywhere
    with pytest.raises(ConvergenceError) as info:
        find_equilibrium(model, starts=4)
    message = str(info.value)
    assert "best residual max|f| = 1 " in message  # min of x^2 + 1 is 1, at x = 0
    assert "more starts" in message
    assert info.value.exit_code == 1


# --- the result ----------------------------------------------------------------------------------------------
def test_operating_point_is_frozen_and_json_ready():
    (point,) = find_equilibrium(robodyn.load("pendulum"), {"theta": 0.3, "theta_dot": 0.0})
    data = json.loads(json.dumps(point.to_dict()))
    assert set(data) == {"x", "u", "residual", "converged", "method"}
    assert data["x"] == {"theta": 0.3, "theta_dot": 0.0}
    assert data["u"]["tau"] == pytest.approx(G * math.sin(0.3), abs=1e-12)
    assert data["converged"] is True and data["method"] == "holding-torque"
    with pytest.raises(ValueError, match="read-only"):
        point.x[0] = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.method = "other"  # type: ignore[misc]
    text = str(point)
    assert "theta = 0.3" in text and "tau = " in text and "holding-torque" in text


def test_operating_point_checks_shapes():
    with pytest.raises(ShapeError):
        OperatingPoint([0.0], [], ("a", "b"), (), 0.0, True, "fixed")


def test_result_feeds_linearize():
    pendulum = robodyn.load("pendulum")
    points = find_equilibrium(pendulum, {"tau": 0.0}, guess=[3.0, 0.0])
    linear = robodyn.linearize(pendulum, points[0].x, points[0].u)
    np.testing.assert_allclose(linear.A, [[0.0, 1.0], [G, 0.0]], rtol=0, atol=1e-12)  # inverted: unstable


# --- angles: one point per turn ----------------------------------------------------------------------------
def test_equilibria_a_turn_apart_are_one_point_when_f_is_periodic():
    points = find_equilibrium(robodyn.load("pendulum"), {"tau": 0.0}, starts=16)
    thetas = sorted(float(p.x[0]) for p in points)
    assert len(thetas) == 2 and thetas[0] == pytest.approx(0.0, abs=1e-12)
    assert thetas[1] == pytest.approx(math.pi, abs=1e-12)  # -pi and pi are one point, kept as pi


def test_equilibria_a_turn_apart_stay_two_points_when_f_is_not_periodic():
    """x' = sin(x) (1 + x^2/10) has the roots k pi too, but f(x + 2 pi) != f(x): -pi and pi are distinct."""
    model = robodyn.SymbolicSystem(["x"], [], {"x": "sin(x)*(1 + x**2/10)"})
    found = sorted(float(p.x[0]) for p in find_equilibrium(model, guess=[-3.0], starts=40, box=(-4.0, 4.0)))
    assert any(abs(x + math.pi) < 1e-12 for x in found) and any(abs(x - math.pi) < 1e-12 for x in found)


def test_minus_zero_is_stored_as_zero():
    pendulum = robodyn.load("pendulum")
    for point in (*find_equilibrium(pendulum, {"tau": -0.0}, starts=4), *find_equilibrium(pendulum, {"theta": -0.0})):
        assert all(math.copysign(1.0, v) == 1.0 for v in (*point.x, *point.u) if v == 0.0)
        assert "-0" not in str(point) and "-0.0" not in json.dumps(point.to_dict())


def test_angles_found_from_the_default_starts_are_wrapped_into_one_turn():
    arm = robodyn.load("two_link_arm")
    points = find_equilibrium(arm, {"shoulder_tau": 0.0, "elbow_tau": 0.0}, starts=8)
    angles = np.array([p.x[:2] for p in points])
    assert np.all((angles > -math.pi) & (angles <= math.pi)), angles  # one turn: not -26.70 or 147.65
    assert {tuple(np.round(a / (math.pi / 2)).astype(int)) for a in angles} <= {(1, 0), (-1, 0), (1, 2), (-1, 2)}
    assert any(np.allclose(a, [-math.pi / 2, 0.0]) for a in angles)  # hanging straight down
    for point in points:
        assert np.max(np.abs(arm.f(0.0, point.x, point.u))) < 1e-10  # still equilibria after the wrap
    shown = str(points[0])
    assert "e-" not in shown.split("x:")[1], shown  # velocities of 1e-29 are shown as 0


def test_states_that_are_not_angles_are_not_wrapped(tmp_path):
    path = tmp_path / "shifted.yaml"  # x' = x - 10 (not periodic), theta' = sin(theta)
    path.write_text("kind: first_order\nstates: [x, theta]\ndynamics: {x: x - 10, theta: sin(theta)}\n")
    (point,) = find_equilibrium(robodyn.load(str(path)), guess={"x": 9.0, "theta": 6.2})
    assert point.x[0] == pytest.approx(10.0) and point.x[1] == pytest.approx(2 * math.pi)  # a guess: kept
    points = find_equilibrium(robodyn.load(str(path)), starts=4, seed=1)
    assert all(p.x[0] == pytest.approx(10.0) for p in points)  # 10 > pi is not an angle: never wrapped
    assert all(-math.pi < p.x[1] <= math.pi for p in points)


# --- trim: outputs held at target values --------------------------------------------------------------------
_PENDULUM_TIP = """name: pendulum_tip
kind: lagrangian
coordinates: [theta]
parameters: {m: 1.0, g: 9.81, l: 2.0}
inputs: [tau]
kinetic: m*l**2*theta_dot**2/2
potential: -m*g*l*cos(theta)
forces: {theta: tau}
outputs: {height: -l*cos(theta), speed: l*theta_dot}
"""


@pytest.fixture(scope="module")
def tip(tmp_path_factory):
    path = tmp_path_factory.mktemp("trim") / "pendulum_tip.yaml"
    path.write_text(_PENDULUM_TIP)
    return robodyn.load(str(path))


def test_a_target_height_gives_the_angle_and_the_holding_torque(tip):
    """f = 0 and -l cos(theta) = -1 with theta, theta_dot and tau free (3 unknowns, 3 equations): theta = acos(1/2)
    = pi/3 (or -pi/3) and tau = m g l sin(theta), the closed form."""
    points = find_equilibrium(tip, targets={"height": -1.0}, guess={"theta": 1.0}, starts=1)
    point = points[0]
    assert point.x[0] == pytest.approx(math.pi / 3, abs=1e-12)
    assert point.x[1] == pytest.approx(0.0, abs=1e-12)
    assert point.u[0] == pytest.approx(9.81 * 2.0 * math.sin(math.pi / 3), rel=1e-12)
    assert point.method == "root-hybr" and point.residual <= 1e-10
    y = tip.h(0.0, point.x, point.u)
    assert y[0] == pytest.approx(-1.0, abs=1e-12)
    mirrored = find_equilibrium(tip, targets={"height": -1.0}, guess={"theta": -1.0})[0]
    assert mirrored.x[0] == pytest.approx(-math.pi / 3, abs=1e-12)


def test_targets_with_fixed_inputs_and_the_over_determined_case(tip):
    """tau fixed at 0: hanging (height -l) is consistent, height -1 is not: the error says over-determined."""
    hanging = find_equilibrium(tip, fix={"tau": 0.0}, targets={"height": -2.0}, guess={"theta": 0.1})[0]
    assert hanging.x[0] == pytest.approx(0.0, abs=1e-7)  # a double root of cos(theta) = 1: sqrt(tol) accuracy
    with pytest.raises(ConvergenceError, match=r"2 unknowns for 3 equations \(f = 0 and 1 output target\), "
                                               r"least squares: over-determined"):
        find_equilibrium(tip, fix={"tau": 0.0}, targets={"height": -1.0}, guess={"theta": 1.0})


def test_an_under_determined_trim_returns_one_of_many(tip):
    """A two-link arm holding its elbow angle at 0.5 with both torques and the shoulder free: a curve of
    solutions; each is an equilibrium with the target met."""
    arm = robodyn.load("two_link_arm")
    points = find_equilibrium(arm, fix={"shoulder_dot": 0.0, "elbow_dot": 0.0}, targets={"elbow": 0.5}, starts=3)
    for point in points:
        assert point.method == "least-squares"
        assert np.max(np.abs(arm.f(0.0, point.x, point.u))) <= 1e-10
        assert point.x[1] == pytest.approx(0.5, abs=1e-10)


def test_bad_targets(tip):
    with pytest.raises(UnknownNameError, match=r"unknown output 'heigth'.*did you mean 'height'"):
        find_equilibrium(tip, targets={"heigth": 1.0})
    with pytest.raises(InputError, match="finite"):
        find_equilibrium(tip, targets={"height": math.nan})
    with pytest.raises(InputError, match="map output names"):
        find_equilibrium(tip, targets=[1.0])  # type: ignore[arg-type]


def test_the_cli_takes_targets(tip, tmp_path, capsys):
    from robodyn.cli import main

    path = tmp_path / "pendulum_tip.yaml"
    path.write_text(_PENDULUM_TIP)
    code = main(["equilibrium", str(path), "--target", "height=-1", "--fix", "theta_dot=0", "--starts", "4",
                 "--json"])
    assert code == 0
    points = json.loads(capsys.readouterr().out)["equilibria"]
    assert {round(abs(point["x"]["theta"]), 9) for point in points} == {round(math.pi / 3, 9)}
    with pytest.raises(SystemExit) as exit_code:
        main(["equilibrium", str(path), "--target", "hieght=-1"])
    assert exit_code.value.code == 2 and "did you mean 'height'" in capsys.readouterr().err


# --- a start that is a solution -------------------------------------------------------------------------
@settings(max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), square=st.booleans())
def test_a_start_that_is_a_solution_is_what_the_solvers_return_from_it(seed, square):
    """The answer without the solver equals MINPACK's hybrid method (square) or least squares (not square) run from
    the same start, to the bit: both return such a start unchanged."""
    import scipy.optimize

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4))
    A, B, c = rng.normal(size=(n, n)), rng.normal(size=(n, 1)), rng.normal(size=n)
    x0, u0 = rng.normal(size=n), rng.normal(size=1)
    # x' = A (x - x0) + B (u - u0) + c sin(x - x0)_0: an equilibrium at (x0, u0), exactly
    model = robodyn.System(lambda t, x, u, p: A @ (x - x0) + B @ (u - u0) + c * math.sin(x[0] - x0[0]),
                           [f"x{i + 1}" for i in range(n)], ["u1"], name="probe")
    fix = {"u1": float(u0[0])} if square else {**{f"x{i + 2}": float(v) for i, v in enumerate(x0[1:])},
                                               "u1": float(u0[0])}
    unknown = x0 if square else x0[:1]
    (point,) = find_equilibrium(model, fix, guess=unknown)
    assert point.residual == 0.0 and np.array_equal(point.x, x0 + 0.0)

    def residual(z):
        x = x0.copy()
        x[: z.size] = z
        return model.f(0.0, x, u0)

    if square:
        reference = scipy.optimize.root(residual, unknown, method="hybr").x
    else:
        reference = scipy.optimize.least_squares(residual, unknown, method="trf", xtol=1e-15, ftol=1e-15,
                                                 gtol=1e-15).x
    assert np.array_equal(point.x[: unknown.size], reference + 0.0)


def test_an_equilibrium_at_its_start_needs_no_scipy_optimize():
    import subprocess
    import sys

    code = ("import sys, numpy as np, robodyn\n"
            "m = robodyn.LinearSystem([[0.0, 1.0], [-4.0, -0.4]], [[0.0], [1.0]])\n"
            "p, = robodyn.find_equilibrium(m, {'x1': 0.25, 'x2': 0.0}, guess={'u1': 1.0})\n"
            "print(p.u.tolist(), 'scipy.optimize' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[1.0]", "False"]  # u = 4 x1 holds x1 = 0.25: the guess itself


# --- the model's rest state as the default start -------------------------------------------------------------
def _far_root(rest: float | None) -> robodyn.System:
    """x' = tanh(x - 10): one root, at 10, which Newton's method from 0 does not reach (tanh is flat there)."""
    return robodyn.System(lambda t, x, u, p: np.tanh(x - 10.0), ["x"], name="far",
                          rest=None if rest is None else (lambda t, x, u, p: np.array([rest])))


def test_the_default_start_is_the_models_rest_state() -> None:
    point = find_equilibrium(_far_root(10.0))[0]
    assert point.x.tolist() == [10.0] and point.residual == 0.0
    with pytest.raises(ConvergenceError):  # the same model from 0, as a guess or without a rest state
        find_equilibrium(_far_root(10.0), guess=[0.0])
    with pytest.raises(ConvergenceError):
        find_equilibrium(_far_root(None))


def test_a_rest_state_within_tol_is_the_answer_as_it_is() -> None:
    point = find_equilibrium(_far_root(10.0 + 1e-12))[0]
    assert point.x.tolist() == [10.0 + 1e-12]  # no solver moved it: |f| = 1e-12 <= tol = 1e-10
    assert point.residual == pytest.approx(1e-12, rel=1e-3) and point.converged
    point = find_equilibrium(_far_root(10.0 + 1e-6))[0]  # outside tol: solved from there
    assert abs(point.x[0] - 10.0) < 1e-10
