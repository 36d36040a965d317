"""What ``robodyn linearize`` prints: A, B, C, D labelled by the state, input and output names, round-off shown as 0
(robodyn.display.text), wide matrices in blocks of columns; ``--json`` unchanged and exact."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from cli_run import run
from robodyn.display.text import LINE_WIDTH, matrix_text

EXAMPLES = Path(__file__).parents[2] / "examples"


def printed_matrix(text: str, label: str) -> tuple[list[str], list[str], np.ndarray]:
    """(row names, column names, values) of the matrix ``label`` read back from the printed text."""
    lines = text.splitlines()
    start = lines.index(next(line for line in lines if line.startswith(f"{label} = d")))
    header = lines[start + 1].split()
    assert header[0] == label
    rows, values = [], []
    for line in lines[start + 2:]:
        if not line.strip():
            break
        name, *cells = line.split()
        rows.append(name)
        values.append([float(cell) for cell in cells])
    return rows, header[1:], np.array(values)


@pytest.mark.parametrize(("model", "at"), [("joint", "q=0"), ("pendulum", "theta=0.3"),
                                           (str(EXAMPLES / "motor_joint_pid.yaml"), "plant.q=0")])
def test_every_matrix_is_labelled_and_equals_the_json(capsys: pytest.CaptureFixture[str], model: str, at: str) -> None:
    code, out, _ = run(capsys, "linearize", model, "--at", at)
    assert code == 0 and "[[" not in out and "array" not in out
    code, raw, _ = run(capsys, "linearize", model, "--at", at, "--json")
    data = json.loads(raw)
    assert set(data) == {"states", "inputs", "outputs", "x", "u", "A", "B", "C", "D", "eigenvalues", "method",
                         "error_estimate"}  # the JSON contract, unchanged
    for label, rows, columns in (("A", "states", "states"), ("B", "states", "inputs"), ("C", "outputs", "states"),
                                 ("D", "outputs", "inputs")):
        names, header, values = printed_matrix(out, label)
        assert names == data[rows] and header == data[columns]
        # 10 significant digits printed: equal to the JSON's to 5e-10 of the matrix's largest entry
        exact = np.array(data[label])
        np.testing.assert_allclose(values, exact, rtol=6e-10, atol=1e-12 * max(1.0, np.abs(exact).max()))


def test_round_off_is_shown_as_zero_and_no_minus_zero(capsys: pytest.CaptureFixture[str]) -> None:
    # the arm held at rest: its base yaw's acceleration depends on no angle (gravity acts along its axis), a row
    # of A the JSON keeps as computed (round-off, ~1e-14) and the table shows as 0
    urdf = str(EXAMPLES / "three_dof_arm.urdf")
    at = "base_yaw=1,shoulder_pitch=0.3,elbow_pitch=-1"
    code, raw, _ = run(capsys, "linearize", urdf, "--at", at, "--json")
    A = np.array(json.loads(raw)["A"])
    row = A[3]
    assert np.any(row != 0.0) and np.all(np.abs(row) <= 1e-12 * np.abs(A).max())
    code, out, _ = run(capsys, "linearize", urdf, "--at", at)
    names, _, values = printed_matrix(out, "A")
    assert code == 0 and names[3] == "base_yaw_dot" and np.all(values[3] == 0.0)
    assert not re.search(r"(?<![\w.])-0(?![.\d])", out) and "-0." not in out.replace("-0.0000", "")


def test_a_wide_matrix_continues_in_blocks_of_columns(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "linearize", "mbk:n=12")
    assert code == 0 and max(len(line) for line in out.splitlines()[1:]) <= LINE_WIDTH
    code, raw, _ = run(capsys, "linearize", "mbk:n=12", "--json")
    states = json.loads(raw)["states"]
    block = out[out.index("A = df/dx"): out.index("B = df/du")]
    assert "(A: columns 1 to" in block and all(name in block.split() for name in states)


def test_matrix_text_cleans_against_the_matrix_scale_only() -> None:
    text = matrix_text("M", [[100.0, -0.0], [5e-10, 1e-11]], ["a", "b"], ["x", "y"])
    assert text.splitlines()[0].split() == ["M", "x", "y"]
    cells = [line.split()[1:] for line in text.splitlines()[1:]]
    assert cells == [["100", "0"], ["5e-10", "0"]]  # 1e-11 <= 1e-12 * 100: round-off; 5e-10 is kept
    assert matrix_text("E", np.zeros((0, 2)), [], ["x", "y"]) == "E is empty (0 x 2)"
    third = float(matrix_text("F", [[1 / 3]], ["r"], ["c"]).split()[-1])
    assert math.isclose(third, 1 / 3, rel_tol=5e-10)  # 10 significant digits


def test_an_infinite_gain_margin_is_printed_as_such(capsys: pytest.CaptureFixture[str]) -> None:
    # the pendulum's LQR loop broken at the error: its phase only approaches -180 deg (python-control's polynomials
    # give 7.2e15, 317 dB, at 3.8e8 rad/s)
    example = str(EXAMPLES / "pendulum_lqr_diagram.yaml")
    code, out, _ = run(capsys, "linearize", example, "--open", "error.y")
    line = next(line for line in out.splitlines() if line.startswith("loop transfer L"))
    assert code == 0 and "gain margin infinite (the phase crosses -180 deg nowhere)" in line
    assert "dB" not in line and "e+15" not in line and "nan" not in line and "phase margin 89.98" in line
    code, raw, _ = run(capsys, "linearize", example, "--open", "error.y", "--json")
    margins = json.loads(raw)["margins"]
    assert margins["gain_margin"] is None and "gain_margin" in margins["null_reasons"] and margins["text"] in line
