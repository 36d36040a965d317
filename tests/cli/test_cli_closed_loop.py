"""``robodyn simulate`` and ``robodyn analyze`` of a closed loop with an estimator and a predictive controller
(examples/cart_pole_mpc_ekf.yaml): the run's columns are the diagram's declared outputs (the estimate, its variance,
the solver's status among them), and the report's JSON carries the closed loop's sections."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from robodyn.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LOOP = str(EXAMPLES / "cart_pole_mpc_ekf.yaml")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_simulate_writes_the_estimate_its_variance_and_the_status(capsys, tmp_path: Path) -> None:
    out = tmp_path / "run.csv"
    noise = ("--input", "noise_x=white_noise(0.01, 0.02, 1)", "--input", "noise_theta=white_noise(0.01, 0.02, 2)")
    code, _, err = run(capsys, "simulate", LOOP, "--t-final", "1", "--x0", "plant.theta=0.2", *noise,
                       "--out", str(out))
    assert code == 0, err
    header = out.read_text().splitlines()[0].split(",")
    for column in ("plant.theta", "x_hat", "theta_hat", "P_theta", "F", "status"):
        assert column in header
    assert "ekf.P_0_0" in header and "P_x" not in header  # the states, and the declared outputs only
    table = np.loadtxt(out, delimiter=",", skiprows=1)
    column = {name: table[:, k] for k, name in enumerate(header)}
    assert np.all(column["status"] == 0.0)  # every QP solved
    assert np.all(np.abs(column["F"]) <= 5.0 + 1e-6)  # the force's bound
    assert np.all(column["P_theta"] > 0.0) and column["P_theta"][-1] < 1e-3  # the variance settles near Rn
    # the estimate follows the truth within a few sensor standard deviations (0.01 rad) once settled
    late = column["t"] > 0.5
    assert np.max(np.abs(column["theta_hat"][late] - column["theta"][late])) < 0.05


@pytest.mark.slow
def test_analyze_writes_the_closed_loops_sections(capsys, tmp_path: Path) -> None:
    code, out, err = run(capsys, "analyze", LOOP, "--out", str(tmp_path), "--quiet")
    assert code == 0, err
    assert "1 operating point(s) analysed" in out
    data = json.loads((tmp_path / "report.json").read_text())
    point = data["points"][0]
    assert {"closed_loop", "estimate_against_truth", "constraint_activity"} <= set(point)
    assert point["stability"].startswith("asymptotically") and len(point["eigenvalues"]) == 18
    assert [role["block"] for role in data["roles"]] == ["ekf", "mpc"]
