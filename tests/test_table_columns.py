"""Each column of a written table is named once (issue 45, item 16): a trajectory's CSV (t, the states, then the
outputs not named like a state, then the sensitivities), its NPZ's name lists, and a sweep's Parquet table.

The rule holds because an output named like a state *is* that state, which every model kind keeps: a chain's outputs
begin with its coordinates and velocities, model files and Python systems refuse a name used twice, a LinearSystem
whose outputs are named as its states has C = I and D = 0, and a diagram's output may take a state's name only when
it is that block's output of the same name.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from tests.cli_run import one_line, run

import robodyn
from robodyn import blocks
from robodyn.analysis.measured import read_table
from robodyn.errors import InputError
from robodyn.trajectory import Trajectory

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _header(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8") as handle:
        return next(csv.reader(handle))


def test_the_bouncing_balls_csv_names_each_column_once_and_reads_back(capsys: pytest.CaptureFixture[str],
                                                                      tmp_path: Path) -> None:
    """The ball's outputs are its states and the gap to the floor, which is z itself (z is the height of its lowest
    point): t, x, z, x_dot, z_dot, floor_gap. Identification's reader and Trajectory.load read the file."""
    out = tmp_path / "ball.csv"
    code, _, err = run(capsys, "simulate", str(EXAMPLES / "bouncing_ball.yaml"), "--t-final", "1", "--x0", "z=1",
                       "--out", str(out))
    assert code == 0, err
    assert _header(out) == ["t", "x", "z", "x_dot", "z_dot", "floor_gap"]
    table = read_table(out)  # robodyn identify's measured columns: refused a name given twice
    np.testing.assert_allclose(table.columns["floor_gap"], table.columns["z"], rtol=0, atol=1e-12)
    back = Trajectory.load(out, states=["x", "z", "x_dot", "z_dot"])
    assert back.outputs == ("floor_gap",) and back.x.shape[1] == 4


def test_a_diagrams_outputs_that_are_its_states_are_written_once_with_their_sensitivities(tmp_path: Path) -> None:
    """The joint's outputs are its states, so the diagram's default outputs plant.q, plant.q_dot are its states: the
    CSV holds them once, then ctrl.y = -2 plant.q, and the sensitivities' columns once each."""
    loop = robodyn.Diagram({"plant": robodyn.load("joint"), "ctrl": blocks.gain(-2.0)},
                           ["ctrl.y -> plant.u", "plant.q -> ctrl.u"])
    assert loop.outputs == ("plant.q", "plant.q_dot", "ctrl.y")
    run = robodyn.simulate(loop, 0.5, {"plant.q": 1.0}, sensitivities=["plant.k"], rtol=1e-9, atol=1e-12)
    path = tmp_path / "loop.csv"
    run.to_csv(path)
    header = _header(path)
    assert header == ["t", "plant.q", "plant.q_dot", "ctrl.y", "d(plant.q)/d(plant.k)", "d(plant.q_dot)/d(plant.k)",
                      "d(ctrl.y)/d(plant.k)"]
    numbers = np.loadtxt(path, delimiter=",", skiprows=1)
    np.testing.assert_array_equal(numbers[:, 3], -2.0 * numbers[:, 1])  # the gain, exactly
    np.testing.assert_array_equal(numbers[:, 6], -2.0 * numbers[:, 4])
    back = Trajectory.load(path, states=list(loop.states))
    assert back.outputs == ("ctrl.y",)
    np.testing.assert_array_equal(back.output_sensitivity("plant.k")[:, 0], numbers[:, 6])
    assert list(run.to_dataframe().columns[:3]) == ["plant.q", "plant.q_dot", "ctrl.y"]


def test_an_output_named_like_a_state_must_be_that_state() -> None:
    """Else a table would write the state for it: a LinearSystem with y = 2 x named x lost its y."""
    with pytest.raises(InputError, match=r"the outputs are named as the states, so they must be the states"):
        robodyn.LinearSystem([[-1.0]], [[1.0]], [[2.0]], [[0.0]], states=["x"], inputs=["u"], outputs=["x"])
    with pytest.raises(InputError, match="so they must be the states"):
        robodyn.LinearSystem([[-1.0]], [[1.0]], [[1.0]], [[0.5]], states=["x"], inputs=["u"], outputs=["x"])
    same = robodyn.LinearSystem([[-1.0]], [[1.0]], [[1.0]], [[0.0]], states=["x"], inputs=["u"], outputs=["x"])
    assert same.outputs == same.states
    joint = robodyn.load("joint")
    with pytest.raises(InputError, match=r"the output 'plant\.q' is ctrl\.y, but a state has its name"):
        robodyn.Diagram({"plant": joint, "ctrl": blocks.gain(-2.0)}, ["ctrl.y -> plant.u", "plant.q -> ctrl.u"],
                        outputs={"plant.q": "ctrl.y"})
    named = robodyn.Diagram({"plant": joint, "ctrl": blocks.gain(-2.0)}, ["ctrl.y -> plant.u", "plant.q -> ctrl.u"],
                            outputs={"plant.q": "plant.q", "u": "ctrl.y"})
    assert named.outputs == ("plant.q", "u")


def test_a_trajectory_names_each_state_input_and_output_once(capsys: pytest.CaptureFixture[str]) -> None:
    t, x = np.array([0.0, 1.0]), np.zeros((2, 1))
    with pytest.raises(InputError, match="the output 'y' is named twice"):
        Trajectory(t, x, np.zeros((2, 0)), np.zeros((2, 2)), ("x",), (), ("y", "y"), "m", robodyn.SimulationStats(
            "dopri5", "compiled"))
    code, _, err = run(capsys, "simulate", str(EXAMPLES / "two_link_arm.urdf"), "--t-final", "0.1", "--output",
                       "shoulder,elbow,shoulder")
    assert code == 2 and "--output: 'shoulder' is named twice" in one_line(err)


@pytest.mark.parametrize("name", ["sample", "final_theta", "converged"])
def test_a_swept_name_that_is_a_column_of_the_table_is_refused(name: str, tmp_path: Path) -> None:
    """A parameter named like the sample number or a reducer's column overwrote that column of the table."""
    text = (EXAMPLES / "pendulum.yaml").read_text(encoding="utf-8").replace(
        "parameters: {m: 1.0,", f"parameters: {{{name}: 0.0, m: 1.0,")
    model = tmp_path / "pendulum.yaml"
    model.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=rf"the swept name '{name}' is also a column"):
        robodyn.sweep(str(model), {name: [0.0, 1.0]}, 0.1, reduce=["final", "converged"])


def test_a_reducers_column_that_the_table_has_is_refused() -> None:
    with pytest.raises(InputError, match="gives the column 'sample', which the table already has"):
        robodyn.sweep("pendulum", {"theta": [0.1, 0.2]}, 0.1,
                      reduce=["final", lambda batch: {"sample": batch.x[:, -1, 0]}])
