"""Estimator blocks in diagram files (robodyn.files.diagram through robodyn.files.provided_blocks): ``model: ekf``
with its plant among the parameters — a catalog name, a file beside the diagram, a model written in — gives the
diagram built in Python, and its mistakes are one line naming the file and the block."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robodyn
from cli_run import one_line, run  # tests/cli_run.py
from robodyn.base.errors import ModelFileError
from robodyn.signals import WhiteNoise

DIAGRAM = """\
name: lqg
kind: diagram
blocks:
  plant: pendulum
  sensor: {{model: sum, parameters: {{signs: "++"}}}}
  estimator:
    model: {kind}
    sample: 0.01
    parameters: {{plant: {plant}, outputs: [theta], Qn: {{theta_dot: 1e-2}}, Rn: {{theta: 2.5e-3}},
                 x0: {{theta: 0.1}}, P0: [[1, 0], [0, 1]]}}
  lqr: {{model: lti, parameters: {{D: [[-0.5, -1.4]]}}}}
connect:
  - plant.theta -> sensor.u1
  - sensor.y -> estimator.theta
  - estimator.theta_hat -> lqr.u1
  - estimator.theta_dot_hat -> lqr.u2
  - lqr.y1 -> plant.tau
  - lqr.y1 -> estimator.tau
inputs: {{noise: sensor.u2}}
outputs: {{theta: plant.theta, theta_hat: estimator.theta_hat, P_theta: estimator.P_theta}}
"""


def _python(kind: str) -> robodyn.Diagram:
    pendulum = robodyn.load("pendulum")
    make = getattr(robodyn.blocks, kind)
    estimator = make(pendulum, 0.01, {"theta_dot": 1e-2}, {"theta": 2.5e-3}, outputs=["theta"], x0={"theta": 0.1},
                     P0=np.eye(2), name="estimator")
    blocks = {"plant": pendulum, "sensor": robodyn.blocks.sum("++"), "estimator": estimator,
              "lqr": robodyn.blocks.lti(D=[[-0.5, -1.4]])}
    wires = ["plant.theta -> sensor.u1", "sensor.y -> estimator.theta", "estimator.theta_hat -> lqr.u1",
             "estimator.theta_dot_hat -> lqr.u2", "lqr.y1 -> plant.tau", "lqr.y1 -> estimator.tau"]
    return robodyn.Diagram(blocks, wires, inputs={"noise": "sensor.u2"}, name="lqg",
                           outputs={"theta": "plant.theta", "theta_hat": "estimator.theta_hat",
                                    "P_theta": "estimator.P_theta"})


@pytest.mark.parametrize("kind", ["ekf", "ukf"])
def test_a_file_gives_the_diagram_built_in_python(kind, tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "swing.yaml").write_text(robodyn.files.model_text("pendulum")[0], encoding="utf-8")
    path = tmp_path / "models" / "lqg.yaml"
    path.write_text(DIAGRAM.format(kind=kind, plant="swing.yaml"), encoding="utf-8")  # beside the diagram
    from_file, ours = robodyn.load(str(path)), _python(kind)
    assert from_file.states == ours.states and from_file.outputs == ours.outputs
    assert from_file.blocks["estimator"].sample_period == 0.01
    x0 = np.zeros(ours.n_states)
    x0[0] = 0.5
    inputs = {"noise": WhiteNoise(0.05, 0.01, seed=3)}
    a, b = robodyn.simulate(from_file, 0.3, x0, inputs), robodyn.simulate(ours, 0.3, x0, inputs)
    np.testing.assert_array_equal(a.x, b.x)  # the same blocks and numbers: the same run
    np.testing.assert_array_equal(a.y, b.y)


def test_the_bundled_text_writes_the_plant_file_in(tmp_path: Path) -> None:
    """A sweep rebuilds a diagram from its text alone: the estimator's plant file is written into it."""
    from robodyn.files.diagram import bundled_text

    (tmp_path / "swing.yaml").write_text(robodyn.files.model_text("pendulum")[0], encoding="utf-8")
    path = tmp_path / "lqg.yaml"
    path.write_text(DIAGRAM.format(kind="ekf", plant="swing.yaml"), encoding="utf-8")
    text = bundled_text(path.read_text(encoding="utf-8"), str(path))
    assert "swing.yaml" not in text and "kind: lagrangian" in text
    alone = robodyn.read_model_text(text, "bundled.yaml")
    assert alone.states == robodyn.load(str(path)).states


def test_the_plant_may_be_a_catalog_name(tmp_path: Path) -> None:
    path = tmp_path / "lqg.yaml"
    path.write_text(DIAGRAM.format(kind="ekf", plant="pendulum"), encoding="utf-8")
    assert robodyn.load(str(path)).blocks["estimator"].inputs == ("theta", "tau")


@pytest.mark.parametrize(("change", "message"), [
    (("Qn: {theta_dot: 1e-2}", "Qn: {theta_dot: 1e-2}, Qd: 1"), "block 'ekf' has no parameter 'Qd'"),
    (("plant: pendulum, ", ""), "needs the plant it estimates or controls: give parameters: {plant: pendulum}"),
    (("plant: pendulum", "plant: pendulumm"), "unknown model 'pendulumm'"),
    (("Rn: {theta: 2.5e-3}", "Rn: {theta: -1}"), "Rn .*positive semidefinite"),
    (("Rn: {theta: 2.5e-3}", "Rn: {theta: nope}"), "give a number"),
    (("sample: 0.01", "sample: -1"), "sample must be > 0"),
])
def test_mistakes_name_the_file_and_the_block(change, message, tmp_path: Path) -> None:
    path = tmp_path / "lqg.yaml"
    path.write_text(DIAGRAM.format(kind="ekf", plant="pendulum").replace(*change), encoding="utf-8")
    with pytest.raises(ModelFileError, match=message) as caught:
        robodyn.load(str(path))
    assert str(caught.value).startswith(str(path)) and "\n" not in str(caught.value)


def test_the_plant_may_be_written_in(tmp_path: Path) -> None:
    path = tmp_path / "lag.yaml"
    path.write_text("""\
name: lag_estimate
kind: diagram
blocks:
  estimator:
    model: ukf
    sample: 0.1
    parameters:
      plant: {name: lag, kind: first_order, states: [y], inputs: [v], parameters: {a: 2.0}, dynamics: {y: -a*y + v}}
      Qn: {y: 1e-2}
      Rn: {y: 2.5e-3}
inputs: {y: estimator.y, v: estimator.v}
outputs: {y_hat: estimator.y_hat}
""", encoding="utf-8")
    estimator = robodyn.load(str(path)).blocks["estimator"]
    assert estimator.inputs == ("y", "v") and estimator.outputs == ("y_hat", "P_y")
    assert estimator.sample_period == 0.1


def test_simulate_writes_the_estimate_and_its_variance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, out = tmp_path / "lqg.yaml", tmp_path / "run.csv"
    path.write_text(DIAGRAM.format(kind="ekf", plant="pendulum"), encoding="utf-8")
    code, _, err = run(capsys, "simulate", str(path), "--t-final", "0.1", "--x0", "plant.theta=0.5", "--input",
                       "noise=white_noise(0.05, 0.01, 7)", "--out", str(out))
    assert code == 0, err
    header = out.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header == ["t", "plant.theta", "plant.theta_dot", "estimator.theta_prior", "estimator.theta_dot_prior",
                      "estimator.P_0_0", "estimator.P_0_1", "estimator.P_1_1", "theta", "theta_hat", "P_theta"]
    rows = np.loadtxt(out, delimiter=",", skiprows=1)
    assert rows.shape[0] == 11 and np.all(rows[:, -1] > 0)  # one row per instant; a variance is positive
    code, _, err = run(capsys, "simulate", str(path), "--t-final", "0.1", "--input",
                       "noise=white_noise(0.05, 0.01, 1.5)")
    assert code == 2 and "seed must be an integer" in one_line(err)
