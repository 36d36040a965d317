"""robodyn.identification.measured: measured columns from CSV files, trajectories and mappings, checked row by row."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError, ShapeError
from robodyn.identification.measured import read_table


def test_a_csv_with_a_byte_order_mark_blank_lines_and_a_time_column(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text("\ufefftime, y ,u\n0,1,0\n\n0.5,2,1\n1.25,3,1\n", encoding="utf-8")
    table = read_table(str(path))
    np.testing.assert_array_equal(table.t, [0.0, 0.5, 1.25])
    assert list(table.columns) == ["y", "u"] and table.lines == (2, 4, 5)
    assert table.where(2) == f"{path}:5"
    assert not table.t.flags.writeable


@pytest.mark.parametrize(("text", "words"), [
    ("t,y\n0,1\n1,x\n", "run.csv:3: column 'y': 'x' is not a number"),
    ("t,y\n0,1\n1\n", "run.csv:3: 1 values for the 2 columns"),
    ("t,y,y\n0,1,2\n", "column 'y' appears twice"),
    ("y,t\n0,1\n", "name the sample times t"),
    ("t,y\n", "a header of column names"),
    ("t,y\n0,1\n0,2\n", "run.csv:3: the time t = 0 repeats"),
    ("t,y\n0,1\n1,inf\n", "run.csv:3: y not finite"),
])
def test_bad_csv_files_name_their_line(tmp_path, text, words):
    path = tmp_path / "run.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=words.replace("(", r"\(").replace(")", r"\)")):
        read_table(str(path))


def test_a_trajectory_gives_its_states_inputs_and_outputs():
    run = robodyn.simulate(robodyn.load("pendulum"), 1.0, {"theta": 0.3}, t_eval=np.linspace(0, 1, 11))
    table = read_table(run)
    assert set(table.columns) == {*run.states, *run.inputs, *run.outputs}
    np.testing.assert_array_equal(table.columns["theta"], run.state("theta"))


def test_mappings_are_checked():
    with pytest.raises(InputError, match="no column t"):
        read_table({"y": [1, 2]})
    with pytest.raises(ShapeError, match="has 3 samples, t has 2"):
        read_table({"t": [0, 1], "y": [1, 2, 3]})
    with pytest.raises(InputError, match="data row 1: y not finite"):
        read_table({"t": [0, 1], "y": [1, float("nan")]})
    with pytest.raises(InputError, match="no samples"):
        read_table({"t": []})
