"""Each column of a written table is named once (issue 45, item 16): a trajectory's CSV (t, the states, then the
outputs not named like a state, then the sensitivities), its NPZ's name lists, and a sweep's Parquet table.

An output named like a state is written once, as the state, when it holds the state's values: a chain's outputs
begin with its coordinates and velocities, a diagram's default outputs with its blocks' states (model files and Python
systems refuse a name used twice). One that holds other values (a LinearSystem's) is written as ``y.<name>``.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from tests.cli_run import one_line, run

import robodyn
from robodyn import blocks
from robodyn.base.errors import InputError
from robodyn.identification.measured import read_table
from robodyn.results.trajectory import Trajectory

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


def test_an_output_named_like_a_state_with_other_values_keeps_its_column() -> None:
    """A LinearSystem's outputs may be named as its states and be other combinations (y = 2 x; the physical states
    after a foh or tustin discretization, whose own states are internal): written as y.<name>, not dropped (the old
    writer left y out whenever the names matched). A diagram's output may not take a state's name for another port."""
    doubled = robodyn.LinearSystem([[-1.0]], [[1.0]], [[2.0]], [[0.0]], states=["x"], inputs=["u"], outputs=["x"])
    run_ = robodyn.simulate(doubled, 1.0, {"x": 1.0}, t_eval=np.linspace(0.0, 1.0, 5))
    lines = run_.to_csv_text().splitlines()
    assert lines[0] == "t,x,y.x"
    numbers = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
    np.testing.assert_allclose(numbers[:, 1], np.exp(-numbers[:, 0]), rtol=1e-12)  # x' = -x: the closed form
    np.testing.assert_array_equal(numbers[:, 2], 2.0 * numbers[:, 1])
    joint = robodyn.linearize(robodyn.load("joint"), [0.0, 0.0], [0.0])
    sampled = joint.discretize(0.01, "tustin")  # y = C_d x_d + D_d u: the joint's q and q', x_d internal
    assert sampled.outputs == sampled.states and sampled.D.any()
    step = robodyn.simulate(sampled, 0.1, [0.0, 0.0], {"u": 1.0})
    assert step.to_csv_text().splitlines()[0] == "t,q,q_dot,y.q,y.q_dot"
    same = robodyn.simulate(joint, 0.1, [1.0, 0.0])  # C = I, D = 0: the outputs are the states, written once
    assert same.to_csv_text().splitlines()[0] == "t,q,q_dot"
    plant = robodyn.load("joint")
    with pytest.raises(InputError, match=r"the output 'plant\.q' is ctrl\.y, but a state has its name"):
        robodyn.Diagram({"plant": plant, "ctrl": blocks.gain(-2.0)}, ["ctrl.y -> plant.u", "plant.q -> ctrl.u"],
                        outputs={"plant.q": "ctrl.y"})
    named = robodyn.Diagram({"plant": plant, "ctrl": blocks.gain(-2.0)}, ["ctrl.y -> plant.u", "plant.q -> ctrl.u"],
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
