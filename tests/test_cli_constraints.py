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

FOUR_BAR = str(Path(__file__).resolve().parents[1] / "examples" / "four_bar.yaml")


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
