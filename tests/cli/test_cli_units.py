"""Units of command-line values (issue 45, item 15): one grammar for every NAME=VALUE option, where a value of an
angle may end with ``deg``, and an angle in rad beyond a whole turn is taken as given with a warning.

The grammar is robodyn.model.quantities' (parse_quantities, in_units); the quick path of ``simulate`` takes only plain
numbers within a turn and leaves the rest to the full path (tests/cli/test_cli_quick.py compares the two).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.cli_run import one_line, run

import robodyn
from robodyn.base.errors import ExpressionError, InputError
from robodyn.base.names import TURN, split_degrees
from robodyn.cli import quick
from robodyn.model.quantities import Quantity, in_units, parse_assignments, parse_quantities

DEGREE = math.pi / 180.0
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


# --- the grammar ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ("90deg", ("90", True)), ("-45 deg", ("-45 ", True)), ("(pi/4)deg", ("(pi/4)", True)), ("1e2deg ", ("1e2", True)),
    ("90", ("90", False)), ("pideg", ("pideg", False)), ("x_deg", ("x_deg", False)), ("deg", ("", True)),
    ("degrees", ("degrees", False)), ("2*edeg", ("2*edeg", False)),
])
def test_a_trailing_deg_is_a_unit_not_the_end_of_a_name(text: str, expected: tuple[str, bool]) -> None:
    assert split_degrees(text) == expected


def test_values_are_read_as_written_with_their_unit() -> None:
    assert parse_quantities("theta=90deg, tau=-45 deg, q=pi/2, x=2") == {
        "theta": Quantity(90.0, True), "tau": Quantity(-45.0, True), "q": Quantity(math.pi / 2, False),
        "x": Quantity(2.0, False)}
    with pytest.raises(ExpressionError, match="has a unit but no number"):
        parse_quantities("theta=deg")
    with pytest.raises(ExpressionError, match="'theta' is given twice"):
        parse_quantities("theta=1deg, theta=2")
    with pytest.raises(ExpressionError, match=r"a value in degrees \(deg\) is read only for an angle"):
        parse_assignments("theta=90deg")  # no units known: a model file's values, catalog options


@settings(max_examples=200, deadline=None)
@given(st.floats(-1e6, 1e6, allow_nan=False))
def test_degrees_become_radians_exactly_as_value_times_pi_over_180(value: float) -> None:
    given_ = parse_quantities(f"a={value!r}deg, b={value!r}deg")
    values, _ = in_units(given_, {"a": "rad", "b": "deg"}, where="--at")
    assert values == {"a": value * DEGREE, "b": value}  # b's unit is degrees: kept


def test_an_angle_beyond_a_turn_is_kept_with_a_warning_and_others_are_not_warned_about() -> None:
    values, notes = in_units(parse_quantities("theta=180, omega=180, x=180, small=-6.28"),
                             {"theta": "rad", "omega": "rad/s", "x": "m", "small": "rad"}, where="--x0")
    assert values == {"theta": 180.0, "omega": 180.0, "x": 180.0, "small": -6.28}
    assert len(notes) == 1 and "theta=180" in notes[0] and "28.6 turns" in notes[0] and "theta=180deg" in notes[0]
    assert in_units(parse_quantities(f"theta={TURN!r}"), {"theta": "rad"}, where="--x0")[1] == []  # a turn: no note


@pytest.mark.parametrize("units, message", [({"x": "m"}, "its unit is 'm'"), ({}, "no unit is declared for it")])
def test_degrees_on_what_is_not_an_angle_are_refused_by_name(units: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=rf"--x0 x=3deg: x is not an angle \({message}\)"):
        in_units(parse_quantities("x=3deg"), units, where="--x0")


# --- every option that reads NAME=VALUE -------------------------------------------------------------------------
def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[dict, str]:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out), err


def test_linearize_at_180deg_is_the_upright_pendulum(capsys: pytest.CaptureFixture[str]) -> None:
    """A = [[0, 1], [-(g/l) cos(theta), 0]] for the pendulum: +g/l = 9.81 upright, 0 at 90 degrees."""
    upright, err = _json(capsys, "linearize", "pendulum", "--at", "theta=180deg")
    assert err == ""
    assert upright["x"][0] == pytest.approx(math.pi, rel=1e-15)
    assert upright["A"][1][0] == pytest.approx(9.81, rel=1e-12)
    level, _ = _json(capsys, "linearize", "pendulum", "--at", "theta=-90 deg")
    assert level["x"][0] == pytest.approx(-math.pi / 2, rel=1e-15) and abs(level["A"][1][0]) < 1e-12
    same, _ = _json(capsys, "linearize", "pendulum", "--at", "theta=pi/2")  # the constant grammar still works
    assert same["x"][0] == math.pi / 2


def test_an_angle_of_180_rad_is_linearized_as_given_and_warned_about(capsys: pytest.CaptureFixture[str]) -> None:
    data, err = _json(capsys, "linearize", "pendulum", "--at", "theta=180")
    assert data["x"][0] == 180.0 and data["A"][1][0] == pytest.approx(-9.81 * math.cos(180.0), rel=1e-12)
    assert err.count("\n") == 1 and err.startswith("robodyn: warning: --at theta=180: angles are in rad")
    assert "theta=180deg" in err


@pytest.mark.parametrize("argv, fragment", [
    (["linearize", "pendulum", "--at", "tau=2deg"], "--at tau=2deg: tau is not an angle (its unit is 'N m')"),
    (["simulate", "pendulum", "--t-final", "90deg"], "--t-final: '90deg': a value in degrees (deg)"),
    (["simulate", "pendulum", "--t-final", "1", "--param", "m=2deg"], "--param m=2deg: m is not an angle"),
    (["equilibrium", "mbk", "--fix", "x1=1deg"], "--fix x1=1deg: x1 is not an angle (its unit is 'm')"),
    (["ik", str(EXAMPLES / "two_link_arm.urdf"), "--target", "1deg,0,0.5"], "--target x=1deg: x is not an angle"),
    (["simulate", "pendulum", "--t-final", "1", "--x0", "theta=deg"], "has a unit but no number"),
])
def test_misplaced_degrees_are_one_line_naming_the_value(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                          fragment: str) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2 and fragment in one_line(err)


def test_each_option_reads_degrees(capsys: pytest.CaptureFixture[str]) -> None:
    """--fix (the holding torque m g l sin(theta)), --x0 (the first row of the run), --at of fk (the tool of the
    two-link arm straight up: l1 + l2 above the base), --fix of assemble, --target of ik (a pose's pitch)."""
    point, _ = _json(capsys, "equilibrium", "pendulum", "--fix", "theta=30deg,theta_dot=0")
    assert point["equilibria"][0]["u"]["tau"] == pytest.approx(9.81 * 0.5, rel=1e-12)
    code, out, err = run(capsys, "simulate", "pendulum", "--t-final", "0.1", "--x0", "theta=30deg", "--out", "-")
    assert code == 0 and err == "" and float(out.splitlines()[1].split(",")[1]) == 30 * DEGREE
    arm = str(EXAMPLES / "two_link_arm.urdf")
    pose, _ = _json(capsys, "fk", arm, "--at", "shoulder=90deg")
    reference = robodyn.Kinematics(robodyn.load(arm)).pose([math.pi / 2, 0.0]).position
    np.testing.assert_allclose(pose["position"], reference, rtol=0, atol=1e-15)
    closed, _ = _json(capsys, "assemble", str(EXAMPLES / "four_bar.yaml"), "--fix", "crank=60deg")
    assert closed["coordinates"]["crank"] == 60 * DEGREE
    target = robodyn.Kinematics(robodyn.load(arm)).pose([0.4, -0.9])
    roll, pitch, yaw = (math.degrees(angle) for angle in target.rpy.tolist())
    position = ",".join(map(repr, target.position.tolist()))
    found, _ = _json(capsys, "ik", arm, "--target", f"{position},{roll!r}deg,{pitch!r}deg,{yaw!r} deg")
    assert found["reachable"] and found["orientation_error"] < 1e-9


def test_the_quick_path_takes_only_plain_numbers_within_a_turn() -> None:
    """The full path warns about a state beyond a turn when it is an angle, and reads degrees: the quick path, which
    does not know the units, leaves both to it."""
    states = ["theta", "theta_dot"]
    assert quick._initial(["theta=6.28"], states) == [6.28, 0.0]
    assert quick._initial(["theta=7"], states) is None
    assert quick._initial(["theta_dot=-7"], states) is None
    assert quick._initial(["theta=30deg"], states) is None
