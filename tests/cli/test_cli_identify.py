"""``robodyn identify``: the fit from a CSV, its report and model file, JSON, and bad input as one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tests.cli_run import one_line, run

import robodyn
from robodyn.signals import Step
from swing_files import write_swing  # tests/swing_files.py

JOINT = """# the seed joint, with a guess of its parameters
name: joint_guess
kind: mechanical
coordinates: [q]
parameters: {J: 0.02, b: 0.05, k: 1.5}   # from the datasheet
inputs: [u]
mass: [[J]]
damping: [[b]]
stiffness: [[k]]
"""


@pytest.fixture(scope="module")
def step_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A measured step response of the joint (J 0.01, b 0.1, k 1) with 1% noise on the angle."""
    times = np.linspace(0.0, 2.0, 201)
    run_ = robodyn.simulate(robodyn.load("joint"), 2.0, {"q": 0.0}, {"u": Step(at=0.1, before=0.0, after=1.0)},
                            rtol=1e-10, atol=1e-12, t_eval=times)
    q = run_.state("q") + 0.01 * 0.5 * np.random.default_rng(7).standard_normal(times.size)
    u = np.where(times >= 0.1, 1.0, 0.0)
    path = tmp_path_factory.mktemp("data") / "step.csv"
    path.write_text("t,q,u\n" + "".join(f"{a!r},{b!r},{c!r}\n" for a, b, c in zip(times.tolist(), q.tolist(),
                                                                                u.tolist())), encoding="utf-8")
    return path


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "joint.yaml"
    path.write_text(JOINT, encoding="utf-8")
    return path


def test_identify_prints_estimates_and_writes_the_report_and_the_model(capsys, tmp_path, step_csv, model_file):
    report, written = tmp_path / "fit.html", tmp_path / "joint_identified.yaml"
    code, out, err = run(capsys, "identify", str(model_file), "--data", str(step_csv), "--fit", "J,b,k", "--report",
                         str(report), "--write-model", str(written))
    assert code == 0, err
    assert "J " in out and "+/-" in out and f"wrote {report}" in out and f"wrote {written}" in out
    assert report.read_text(encoding="utf-8").count("<svg") == 1
    assert "<iframe" not in report.read_text(encoding="utf-8")  # no robot file: no 3-D view
    text = written.read_text(encoding="utf-8")
    assert "# the seed joint, with a guess" in text and "# from the datasheet" in text  # the file's own words kept
    identified = robodyn.read_model_text(text)
    for name, truth in (("J", 0.01), ("b", 0.1), ("k", 1.0)):
        assert identified.parameters[name] == pytest.approx(truth, rel=0.05)


def test_identify_json(capsys, step_csv, model_file):
    code, out, _ = run(capsys, "identify", str(model_file), "--data", str(step_csv), "--fit", "k", "--fit", "b",
                       "--json")
    assert code == 0
    data = json.loads(out)
    assert list(data["values"]) == ["k", "b"] and set(data["standard_errors"]) == {"k", "b"}
    assert np.array(data["correlation"]).shape == (2, 2)
    for key in ("cost", "noise", "rms", "fit_percent", "samples", "degrees_of_freedom", "message"):
        assert key in data


@pytest.mark.parametrize(("argv", "words"), [
    (["--fit", "mass"], "'mass' is not a parameter"),
    (["--fit", "k", "--x0", "theta"], "not a state"),
    (["--fit", "k", "--bounds", "k=2"], "NAME=LOW:HIGH"),
    (["--fit", "k", "--report", "fit.txt"], "HTML"),
    (["--fit", "k", "--write-model", "out.json"], "YAML"),
])
def test_bad_requests_are_one_line_and_exit_2(capsys, step_csv, model_file, argv, words):
    code, _, err = run(capsys, "identify", str(model_file), "--data", str(step_csv), *argv)
    assert code == 2
    assert words in one_line(err)


def test_a_bad_column_and_a_missing_file_are_one_line(capsys, tmp_path, model_file):
    bad = tmp_path / "bad.csv"
    bad.write_text("t,angle\n0,0\n1,0.1\n2,0.2\n", encoding="utf-8")
    code, _, err = run(capsys, "identify", str(model_file), "--data", str(bad), "--fit", "k")
    assert code == 2 and "'angle' is neither an output nor an input" in one_line(err)
    code, _, err = run(capsys, "identify", str(model_file), "--data", str(tmp_path / "none.csv"), "--fit", "k")
    assert code == 2 and one_line(err)


def test_a_fit_that_does_not_converge_exits_1(capsys, step_csv, model_file):
    code, _, err = run(capsys, "identify", str(model_file), "--data", str(step_csv), "--fit", "J,b,k",
                       "--max-evaluations", "2")
    assert code == 1 and "did not converge" in one_line(err)


def test_nothing_is_written_when_the_fit_fails(capsys, tmp_path, step_csv, model_file):
    report, written = tmp_path / "fit.html", tmp_path / "out.yaml"
    code, _, _ = run(capsys, "identify", str(model_file), "--data", str(step_csv), "--fit", "J,b,k",
                     "--max-evaluations", "2", "--report", str(report), "--write-model", str(written))
    assert code == 1 and not report.exists() and not written.exists()


def test_the_report_of_a_robot_with_shapes_plays_the_fitted_run_in_3d(capsys, tmp_path):
    import html
    import re

    pytest.importorskip("trimesh")
    write_swing(tmp_path)
    truth = robodyn.load(str(tmp_path / "swing_driven.yaml")).with_parameters({"drive.k": 0.5})
    times = np.linspace(0.0, 1.0, 51)
    measured = robodyn.simulate(truth, 1.0, None, {"u": Step(at=0.1, before=0.0, after=1.0)}, t_eval=times,
                                rtol=1e-10, atol=1e-12)
    u = np.where(times >= 0.1, 1.0, 0.0)
    data = tmp_path / "swing.csv"
    data.write_text("t,q,u\n" + "".join(f"{a!r},{b!r},{c!r}\n" for a, b, c in zip(times.tolist(),
                                                                              measured.y[:, 0].tolist(), u.tolist())))
    report = tmp_path / "fit.html"
    code, _, err = run(capsys, "identify", str(tmp_path / "swing_driven.yaml"), "--data", str(data), "--fit",
                         "drive.k", "--report", str(report))
    assert code == 0, err
    page = report.read_text(encoding="utf-8")
    assert page.count("<iframe") == 1 and "<h2>The robot in 3-D</h2>" in page and page.count("<svg") == 1
    (srcdoc,) = re.findall(r'<iframe srcdoc="([^"]*)"', page)
    scene = json.loads(re.search(r'<script id="robodyn-scene" type="application/json">(.*?)</script>',
                                 html.unescape(srcdoc), flags=re.S).group(1))
    assert scene["links"][-1] == "arm.rod" and scene["shapes"][0]["shape"] == "cylinder"
    assert scene["times"][0] == 0.0 and scene["times"][-1] == 1.0 and len(scene["times"]) == 61  # 60 a second
