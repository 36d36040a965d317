"""``robodyn assemble`` and ``simulate --assemble`` (robodyn.cli.constraints): the JSON keys promised, the state
on the loop, and one line with exit code 2 for what cannot close."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from tests.cli_run import one_line, run

import robodyn

FOUR_BAR = str(Path(__file__).resolve().parents[2] / "examples" / "four_bar.yaml")


def test_assemble_prints_the_closed_state_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "assemble", FOUR_BAR, "--fix", "crank=1.0,crank_dot=2", "--json")
    assert code == 0
    result = json.loads(out)
    assert set(result) == {"coordinates", "velocities", "residual", "independent", "dimension"}
    assert result["coordinates"]["crank"] == 1.0 and result["velocities"]["crank_dot"] == 2.0
    assert result["dimension"] == 1 and result["independent"] == ["crank"] and result["residual"] <= 1e-12
    model = robodyn.load(FOUR_BAR)
    state = {**result["coordinates"], **result["velocities"]}
    expected = robodyn.assemble(model, fix={"crank": 1.0, "crank_dot": 2.0})
    np.testing.assert_allclose(list(state.values()), list(expected.values()), atol=1e-14)
    code, out, _ = run(capsys, "assemble", FOUR_BAR, "--fix", "crank=pi/3")
    assert code == 0 and "1 degree of freedom: crank" in out and f"crank = {math.pi / 3:.12g}" in out


def test_simulate_refuses_an_open_loop_and_assembles_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "simulate", FOUR_BAR, "--t-final", "0.2", "--x0", "crank=1")
    assert code == 2 and "off its constraints" in one_line(err) and "--assemble" in err
    code, out, _ = run(capsys, "simulate", FOUR_BAR, "--t-final", "0.2", "--x0", "crank=1,coupler=-0.5,rocker=1.3",
                       "--assemble")
    assert code == 0 and "final state: crank = " in out


@pytest.mark.parametrize(("argv", "message"), [
    (("--fix", "crank=1,rocker=0"), "cannot be closed with crank, rocker fixed"),
    (("--fix", "crank=1", "--guess", "crankk=0"), "'crankk' is not a state"),
    (("--fix", "crank=1", "--fix", "crank=2"), "given twice"),
])
def test_what_cannot_be_assembled_is_one_line(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...],
                                              message: str) -> None:
    code, _, err = run(capsys, "assemble", FOUR_BAR, *argv)
    assert code == 2 and message in one_line(err)


def test_a_model_without_loops_has_nothing_to_assemble(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "assemble", "pendulum")
    assert code == 2 and "no loops or constraints" in one_line(err)


def test_a_loop_that_cannot_close_is_one_line_with_exit_code_2(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    broken = tmp_path / "four_bar.yaml"
    broken.write_text(Path(FOUR_BAR).read_text().replace("b: 0.5, c: 0.4, d: 0.45", "b: 0.05, c: 0.1, d: 0.9"))
    for argv in (("assemble", str(broken), "--fix", "crank=1"), ("simulate", str(broken), "--t-final", "1")):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "cannot be closed" in one_line(err)


def _loop_gap(model: robodyn.ConstrainedChain, state: np.ndarray) -> float:
    """The four-bar's loop closure from its geometry (not its constraint code): the coupler's tip B + b (cos, sin)
    (crank + coupler) against the rocker's D + c (cos, sin)(rocker)."""
    a, b, c, d = (model.parameters[k] for k in "abcd")
    crank, coupler, rocker = state[:3]
    angle = crank + coupler
    tip = np.array([a * math.cos(crank) + b * math.cos(angle), a * math.sin(crank) + b * math.sin(angle)])
    return float(np.abs(tip - [d + c * math.cos(rocker), c * math.sin(rocker)]).max())


def test_simulate_without_x0_assembles_a_linkages_default_start_and_says_so(capsys: pytest.CaptureFixture[str],
                                                                             tmp_path: Path) -> None:
    """The zero state lays the four-bar out straight, off its loop (and singular there): without --x0, simulate
    closes it keeping the crank at 0, prints the start, and runs on the loop. An --x0 off the loop is still refused."""
    out = tmp_path / "run.csv"
    code, printed, err = run(capsys, "simulate", FOUR_BAR, "--t-final", "0.5", "--rtol", "1e-10", "--atol", "1e-12",
                             "--out", str(out))
    assert code == 0, err
    first = printed.splitlines()[0]
    assert first.startswith("start: no --x0 given and the zero state is off the constraints: assembled")
    model = robodyn.load(FOUR_BAR)
    numbers = np.loadtxt(out, delimiter=",", skiprows=1)
    assert numbers[0, 1] == 0.0 and np.all(numbers[0, 4:7] == 0.0)  # the crank and every velocity: the defaults
    # closed at the start to the assembly's round-off; kept along the run to the integration's tolerance
    assert _loop_gap(model, numbers[0, 1:]) < 1e-12 and _loop_gap(model, numbers[-1, 1:]) < 1e-9
    assert f"coupler = {numbers[0, 2]:.10g}" in first
    code, _, err = run(capsys, "simulate", FOUR_BAR, "--t-final", "0.5", "--x0", "crank=1")
    assert code == 2 and "off its constraints" in one_line(err)
    code, printed, err = run(capsys, "simulate", FOUR_BAR, "--t-final", "0.5", "--out", "-")  # the CSV stays clean
    assert code == 0 and printed.startswith("t,") and err.startswith("robodyn: start: no --x0 given")


def test_assembly_from_a_singular_start_stays_within_a_turn_of_it() -> None:
    """From the five-bar laid out straight the descent wandered to q2 = 765 rad (the same assembly 121 turns away):
    each angle is brought back by whole turns where the loop still closes."""
    model = robodyn.load(str(Path(FOUR_BAR).parent / "five_bar.yaml"))
    state = robodyn.assemble(model, fix={"q1": 0.0, "q3": 0.0})
    assert all(abs(state[q]) <= math.pi for q in ("q2", "q4"))
    run_ = robodyn.simulate(model, 0.2, np.zeros(model.n_states), assemble=True)  # singular there: closed anyway
    assert np.abs(run_.x[0, :4]).max() <= math.pi
