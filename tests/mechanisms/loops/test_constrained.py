"""Closed chains from chain files (robodyn.mechanisms.loops.constrained): the four-bar against Freudenstein's equation,
energy and the constraint over a long run, the slider-crank against its closed form, and bad input."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sympy import sin as sympy_sin

import robodyn
import robodyn.model.expr
from robodyn.base.errors import InputError, ModelFileError
from robodyn.mechanisms.loops.constraints import CONSISTENCY_TOLERANCE

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
FOUR_BAR = str(EXAMPLES / "four_bar.yaml")
SLIDER_CRANK = str(EXAMPLES / "slider_crank.yaml")


def _four_bar_closed_form(a: float, b: float, c: float, d: float, crank: float, rocker: float) -> float:
    """Freudenstein's equation K1 cos(rocker) - K2 cos(crank) + K3 - cos(crank - rocker) (zero on the linkage)."""
    k1, k2, k3 = d / a, d / c, (a * a - b * b + c * c + d * d) / (2 * a * c)
    return k1 * math.cos(rocker) - k2 * math.cos(crank) + k3 - math.cos(crank - rocker)


def test_the_four_bar_follows_freudensteins_equation_over_a_crank_revolution() -> None:
    model = robodyn.load(FOUR_BAR)
    a, b, c, d = (model.parameters[k] for k in "abcd")
    state = robodyn.assemble(model, fix={"crank": 0.0})
    for crank in np.linspace(0.0, 2 * math.pi, 73):
        state = robodyn.assemble(model, state, fix={"crank": float(crank)})  # continuing: the same branch
        assert _four_bar_closed_form(a, b, c, d, crank, state["rocker"]) == pytest.approx(0.0, abs=1e-12)
        # the coupler closes the loop: B + b (cos, sin)(crank + coupler) = D + c (cos, sin)(rocker)
        angle = crank + state["coupler"]
        tip = np.array([a * math.cos(crank) + b * math.cos(angle), a * math.sin(crank) + b * math.sin(angle)])
        np.testing.assert_allclose(tip, [d + c * math.cos(state["rocker"]), c * math.sin(state["rocker"])],
                                   atol=1e-12)
    assert state["crank"] == pytest.approx(2 * math.pi)


def test_the_unforced_four_bar_keeps_its_energy_and_its_loop_for_ten_seconds() -> None:
    """rtol 1e-10 (atol 1e-12): the residual phi stays below 1e-10 m (Baumgarte's alpha = 10 1/s damps the
    integration error that leaves it) and the energy within 1e-9 of its ~5 J (the integration error)."""
    model = robodyn.load(FOUR_BAR).with_parameters(k_s=0.0)
    x0 = robodyn.assemble(model, fix={"crank": 1.0, "crank_dot": 8.0})
    run = robodyn.simulate(model, 10.0, x0, rtol=1e-10, atol=1e-12, t_eval=np.linspace(0, 10, 501))
    constraints, p = model.constraints(), model.parameter_vector()
    residuals = np.array([[constraints.residuals(t, x, p)[r] for r in constraints.rows] for t, x in zip(run.t, run.x)])
    assert np.max(np.abs(residuals)) <= 1e-10
    energy = np.array([sum(model.energy(x)) for x in run.x])
    assert np.max(np.abs(energy - energy[0])) <= 1e-9 * abs(energy[0])
    assert np.ptp(run.x[:, 0]) > 2 * math.pi  # the crank turns round: the test covers every configuration


def _slider_crank_positions(r: float, length: float, angle: float) -> np.ndarray:
    """The crank pin A, the piston B (closed form) and the rod's angle, [A, B, beta] (5,)."""
    a = r * np.array([math.cos(angle), math.sin(angle)])
    b = np.array([r * math.cos(angle) + math.sqrt(length**2 - (r * math.sin(angle)) ** 2), 0.0])
    return np.array([*a, *b, math.atan2(b[1] - a[1], b[0] - a[0])])


def test_the_slider_crank_follows_its_closed_form_at_a_constant_crank_speed() -> None:
    """Piston s = r cos(theta) + sqrt(l^2 - r^2 sin^2 theta), theta = omega t; the force of the rod on the crank pin
    from Newton-Euler on the rod and the piston with the closed form's accelerations (second differences, h = 1e-4:
    error ~h^2 |x^(4)| / 12, 1e-7 of the accelerations' scale omega^2 r: the 1e-6 tolerance on the force)."""
    model = robodyn.load(SLIDER_CRANK)
    par = model.parameters
    r, length, m2, m3, omega, g = (par[k] for k in ("r", "l", "m2", "m3", "omega", "g"))
    x0 = robodyn.assemble(model, {"piston": r + length, "rod": math.pi})
    times = np.linspace(0.0, 1.3, 27)
    run = robodyn.simulate(model, 1.3, x0, rtol=1e-11, atol=1e-12, t_eval=times)
    theta = omega * times
    np.testing.assert_allclose(run.x[:, 1], r * np.cos(theta) + np.sqrt(length**2 - (r * np.sin(theta)) ** 2),
                               atol=1e-9)
    np.testing.assert_allclose(run.x[:, 0], theta, atol=1e-9)
    h, inertia, force = 1e-4, m2 * length**2 / 12, []
    for t in times:
        before, now, after = (_slider_crank_positions(r, length, omega * (t + e)) for e in (-h, 0.0, h))
        accel = (after - 2 * now + before) / h**2
        a, b = now[:2], now[2:4]
        accel_g = (accel[:2] + accel[2:4]) / 2  # the rod's centre of mass is its midpoint
        # unknowns: F_a (on the rod at A), F_b (on the rod at B), N (on the piston); the piston gets -F_b
        arm_a, arm_b = a - (a + b) / 2, b - (a + b) / 2
        rows = np.array([[1, 0, 1, 0, 0], [0, 1, 0, 1, 0],
                         [-arm_a[1], arm_a[0], -arm_b[1], arm_b[0], 0],
                         [0, 0, -1, 0, 0], [0, 0, 0, -1, 1]], dtype=float)
        rhs = np.array([m2 * accel_g[0], m2 * accel_g[1] + m2 * g, inertia * accel[4], m3 * accel[2], m3 * g])
        force.append(-np.linalg.solve(rows, rhs)[:2])  # the rod's force on the crank pin
    ours = run.y[:, [model.outputs.index("pin_force_x"), model.outputs.index("pin_force_y")]]
    np.testing.assert_allclose(ours, np.array(force), atol=1e-6 * np.max(np.abs(force)))


def test_the_initial_state_must_lie_on_the_constraints_or_be_assembled() -> None:
    model = robodyn.load(FOUR_BAR)
    with pytest.raises(InputError, match=r"close\.[xy] = .* m .*robodyn\.assemble"):
        robodyn.simulate(model, 0.1, {"crank": 1.0})
    run = robodyn.simulate(model, 0.1, {"crank": 1.0, "coupler": -0.5, "rocker": 1.3, "crank_dot": 0.5},
                           assemble=True)
    assert run.x[0, 0] == 1.0 and run.x[0, 3] == 0.5  # the independent coordinate and velocity kept
    residuals = model.constraints().residuals(0.0, run.x[0], model.parameter_vector())
    assert max(map(abs, residuals.values())) <= 1e-12
    velocity_off = robodyn.assemble(model, fix={"crank": 1.0})
    velocity_off["coupler_dot"] = 1.0
    with pytest.raises(InputError, match=r"close\.[xy]' = .* m/s"):
        robodyn.simulate(model, 0.1, velocity_off)
    assert CONSISTENCY_TOLERANCE <= 1e-8


def test_assemble_keeps_what_is_fixed_and_names_what_is_wrong() -> None:
    model = robodyn.load(FOUR_BAR)
    state = robodyn.assemble(model, fix={"crank": 0.5, "crank_dot": 1.0})
    assert list(state) == list(model.states) and state["crank"] == 0.5 and state["crank_dot"] == 1.0
    with pytest.raises(InputError, match="not a coordinate or a velocity"):
        robodyn.assemble(model, fix={"crankk": 1.0})
    with pytest.raises(InputError, match="no loops or constraints"):
        robodyn.assemble(robodyn.load("pendulum"))
    with pytest.raises(InputError, match="cannot be closed with crank, rocker fixed"):
        robodyn.assemble(model, fix={"crank": 0.5, "rocker": 0.0})


BAD = {
    "lengths": ("parameters: {a: 0.2, b: 0.5, c: 0.4, d: 0.45",
                "parameters: {a: 0.2, b: 0.05, c: 0.1, d: 0.9",
                r"cannot be closed: the closest assembly leaves close\.[xy] = "),
    "redundant": ("axes: [x, y]}", "axes: [x, y, z]}", r"rows close\.z are redundant \(the constraint Jacobian has "
                                                      r"rank 2 of 3\)"),
    "unknown frame": ("frames: [coupler_tip, rocker_tip]", "frames: [coupler_tip, rocker_top]",
                      "no frame 'rocker_top'"),
    "bad axis": ("axes: [x, y]}", "axes: [x, w]}", "axes must be distinct entries of x, y, z"),
    "bad type": ("type: point, axes", "type: hinge, axes", "type must be point or pose"),
    "alpha": ("independent: [crank]", "baumgarte: -1", "baumgarte must be a rate in 1/s"),
    "independent": ("independent: [crank]", "independent: [crank, rocker]", "'independent' names 2"),
    "extra key": ("type: point, axes", "type: point, stiff: 3, axes", r"a loop is \{name: <name>, frames"),
    "frame numbers": ("frames: [coupler_tip, rocker_tip]", "frames: [1, 2]", "must be a list of two frame names"),
    "alpha nan": ("independent: [crank]", "baumgarte: .nan", "0 < alpha < 1e6, got nan"),
    "code in a path": ("independent: [crank]", "constraints:\n  - {frame: rocker_tip, axes: [x], position: "
                       "['__import__(\"os\")', 0, 0]}", "unknown function"),
    "a state in a path": ("independent: [crank]", "constraints:\n  - {joint: crank, position: crank_dot}",
                          "unknown name"),
    "too many rows": ("independent: [crank]", "constraints:\n  - {joint: crank, position: 1}\n  - {joint: coupler, "
                      "position: 1}", "4 constraint rows on 3 coordinates"),
    "floating base": ("kind: chain", "kind: chain\nbase: floating", "need a fixed base"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_loops_are_refused_with_the_cause(case: str) -> None:
    old, new, message = BAD[case]
    text = Path(FOUR_BAR).read_text()
    assert old in text
    with pytest.raises(ModelFileError, match=message):
        robodyn.read_model_text(text.replace(old, new), "four_bar.yaml")


def test_the_five_bar_robots_tool_is_where_the_circles_meet() -> None:
    """The tool of the planar five-bar: the intersection of the circles of radius l2 about the two elbows (the
    branch above the elbows' line), for motor angles over the workspace."""
    model = robodyn.load(str(EXAMPLES / "five_bar.yaml"))
    s, l1, l2 = (model.parameters[k] for k in ("s", "l1", "l2"))
    frames = robodyn.Kinematics(model)
    guess = {"q1": 2.0, "q2": -1.0, "q3": 1.0, "q4": 1.0}
    for q1, q3 in [(2.0, 1.0), (2.3, 0.9), (1.8, 0.4), (2.6, 1.3)]:
        state = robodyn.assemble(model, guess, fix={"q1": q1, "q3": q3})
        left = np.array([-s / 2 + l1 * math.cos(q1), l1 * math.sin(q1)])
        right = np.array([s / 2 + l1 * math.cos(q3), l1 * math.sin(q3)])
        half = (right - left) / 2
        normal = np.array([-half[1], half[0]]) / np.linalg.norm(half)
        tool = left + half + math.sqrt(l2**2 - half @ half) * normal
        q = {k: state[k] for k in model.coordinates}
        np.testing.assert_allclose(frames.pose(q, "tool").position[:2], tool, atol=1e-12)
        np.testing.assert_allclose(frames.pose(q, "right_tip").position, frames.pose(q, "tool").position, atol=1e-12)
        guess = {k: state[k] for k in guess}
    linear = robodyn.linearize(model, state, "hold")
    assert linear.states == ("q1", "q3", "q1_dot", "q3_dot")


def test_a_urdf_robots_tool_held_on_a_path_from_python() -> None:
    """Constraints added to a URDF robot from Python: the two-link arm's tool follows z = 0.3 + 0.1 sin(2 t) (a
    moving constraint: c' and c'' enter the velocity and acceleration rows), its height equal to the path."""
    arm = robodyn.load(str(EXAMPLES / "two_link_arm.urdf"))
    t = robodyn.model.expr.TIME
    path = (0, 0, 0.3 + 0.1 * sympy_sin(2 * t))
    model = robodyn.ConstrainedChain(arm, constraints=[{"frame": "tool", "position": path, "axes": ("z",),
                                                        "name": "hold"}])
    assert model.outputs[-1] == "hold_force_z" and model.units()["hold_force_z"] == "N"
    x0 = robodyn.assemble(model, {"shoulder": 0.3}, fix={"shoulder_dot": 0.5})
    times = np.linspace(0.0, 2.0, 41)
    run = robodyn.simulate(model, 2.0, x0, rtol=1e-10, atol=1e-12, t_eval=times, limits="ignore")
    frames = robodyn.Kinematics(arm)
    heights = [frames.pose(dict(zip(arm.coordinates, x[:2])), "tool").position[2] for x in run.x]
    np.testing.assert_allclose(heights, 0.3 + 0.1 * np.sin(2 * times), atol=1e-9)
    assert np.all(np.isfinite(run.y[:, -1])) and np.ptp(run.y[:, -1]) > 0


def test_bad_python_arguments_are_refused_with_the_cause() -> None:
    chain = robodyn.load(FOUR_BAR).chain
    with pytest.raises(InputError, match="loop must be a Loop or a mapping of name, frames, type, axes"):
        robodyn.ConstrainedChain(chain, loops=[{"bogus": 1}])
    with pytest.raises(InputError, match="constraint must be a Constraint or a mapping"):
        robodyn.ConstrainedChain(chain, constraints=[3])
    with pytest.raises(InputError, match="is not a chain"):
        robodyn.ConstrainedChain(robodyn.load("pendulum"), loops=[{"name": "x", "frames": ("a", "b")}])
    with pytest.raises(InputError, match="needs loops, constraints or contacts"):
        robodyn.ConstrainedChain(chain)
