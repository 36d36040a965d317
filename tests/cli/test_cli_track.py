"""``robodyn track``: the run it writes is robodyn.simulate's under robodyn.tvlqr's feedback (the same CSV
bytes); bad input is one line, exit 2, and nothing written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.cli_run import one_line, run

import robodyn
from robodyn.signals import Table

Q = {"theta": 10.0, "theta_dot": 1.0}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pendulum swing under a tabulated torque, as robodyn optimize writes one (t, states, inputs)."""
    model = robodyn.load("pendulum")
    times = np.linspace(0.0, 1.0, 51)
    run_ = robodyn.simulate(model, (0.0, 1.0), [0.5, 0.0], {"tau": Table(times, np.cos(times), "zoh")},
                            method="rk4", dt=0.02)
    path = tmp_path_factory.mktemp("track") / "traj.csv"
    rows = np.column_stack([run_.t, run_.x, run_.u])
    path.write_text("t,theta,theta_dot,tau\n" + "".join(",".join(repr(float(v)) for v in row) + "\n" for row in rows))
    return path


def test_track_writes_the_closed_loop_run(capsys: pytest.CaptureFixture[str], reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "run.csv"
    code, printed, _ = run(capsys, "track", "pendulum", "--trajectory", str(reference), "--Q", "theta=10,theta_dot=1",
                           "--R", "tau=0.1", "--x0", "theta=0.55", "--out", str(out))
    assert code == 0 and f"wrote {out}" in printed
    model = robodyn.load("pendulum")
    traj = robodyn.results.trajectory.Trajectory.load(reference, states=model.states)
    mine = robodyn.results.trajectory.Trajectory(traj.t, traj.x, traj.y, traj.x, model.states, model.inputs,
                                                 model.states, model.name, traj.stats)
    design = robodyn.tvlqr(model, mine, Q, {"tau": 0.1})
    expected = robodyn.simulate(model, (0.0, 1.0), [0.55, 0.0], design.feedback)
    assert out.read_text() == expected.to_csv_text()
    assert np.abs(expected.x[-1] - traj.x[-1]).max() < 0.05  # started 0.05 off: the feedback brought it closer


@pytest.mark.parametrize(("options", "words"), [
    (["--Q", "thet=1", "--R", "tau=1"], "unknown name 'thet'"),
    (["--Q", "theta=-1", "--R", "tau=1"], "positive semidefinite"),
    (["--Q", "theta=1", "--R", "tau=0"], "positive definite"),
    (["--Q", "theta=1", "--R", "tau=1", "--Qf", "theta=1", "--handover"], "not both"),
    (["--Q", "theta=1", "--R", "tau=1", "--x0", "theta=nan"], "nan"),
    (["--Q", "theta=1", "--R", "tau=1", "--interpolation", "cubic"], "invalid choice"),
])
def test_bad_input_exits_2_and_writes_nothing(capsys: pytest.CaptureFixture[str], reference: Path, tmp_path: Path,
                                              options: list[str], words: str) -> None:
    out = tmp_path / "run.csv"
    code, _, err = run(capsys, "track", "pendulum", "--trajectory", str(reference), *options, "--out", str(out))
    assert code == 2 and words in one_line(err) and not out.exists()


def test_a_trajectory_of_another_model_is_refused(capsys: pytest.CaptureFixture[str], reference: Path,
                                                  tmp_path: Path) -> None:
    out = tmp_path / "run.csv"
    code, _, err = run(capsys, "track", "cart_pole", "--trajectory", str(reference), "--Q", "x=1", "--R", "F=1",
                       "--out", str(out))
    assert code == 2 and "states" in one_line(err) and not out.exists()
    wrong = tmp_path / "wrong.csv"
    wrong.write_text(reference.read_text().replace("tau", "torque", 1))
    code, _, err = run(capsys, "track", "pendulum", "--trajectory", str(wrong), "--Q", "theta=1", "--R", "tau=1",
                       "--out", str(out))
    assert code == 2 and "expected the inputs" in one_line(err) and not out.exists()
