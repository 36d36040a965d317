"""Hostile and careless input to ``analyze`` and the display of equations (issue 22): nothing written outside the
named folder, options checked before any work, display work bounded."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import robodyn
from cli_run import one_line, run  # tests/cli_run.py
from robodyn.base.errors import InputError, UnknownNameError
from robodyn.report import analyze

DECAY = "kind: first_order\nstates: [x]\ndynamics: {x: -x}\n"


@pytest.mark.parametrize("name", ["..", "../../x", "/tmp/robodyn-escape", "a/../../b"])
def test_a_model_name_never_leads_analyze_out_of_its_folder(capsys, tmp_path, monkeypatch, name):
    work = tmp_path / "deep" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    (work / "report.html").write_text("the user's own page")
    (work / "m.yaml").write_text(f"name: {name!r}\n{DECAY}")
    code, _out, _ = run(capsys, "analyze", "m.yaml", "--quiet")
    assert code == 0
    assert (work / "report.html").read_text() == "the user's own page"
    written = [p for p in tmp_path.rglob("report.html") if p != work / "report.html"]
    assert len(written) == 1 and (work / "robodyn-out") in written[0].parents, written
    assert not Path("/tmp/robodyn-escape").exists()


@pytest.mark.parametrize(("out", "reason"), [
    ("file.txt", "is a file"), ("file.txt/sub", "is not a folder"), ("/dev/null", "device"),
    ("/proc/robodyn-x", "cannot write in /proc"), ("dangling", "link to nothing"),
])
def test_analyze_refuses_a_bad_out_before_any_work(capsys, tmp_path, monkeypatch, out, reason):
    monkeypatch.chdir(tmp_path)
    Path("file.txt").write_text("x")
    Path("dangling").symlink_to(tmp_path / "nowhere")
    calls = []
    monkeypatch.setattr("robodyn.report.analyze", lambda *a, **k: calls.append(1))  # no analysis may run
    code, _, err = run(capsys, "analyze", "pendulum", "--out", out)
    assert code == 2 and reason in one_line(err) and not calls


@pytest.mark.parametrize(("argv", "reason"), [
    (["--at", "zz=1"], "'zz' in at is not a state or input"),
    (["--at", "theta=nan"], "unknown name"),  # not a number: only finite values can be written
    (["--horizon", "abc"], "--horizon"),
    (["--horizon", "-1"], "positive"),
])
def test_analyze_options_are_checked(capsys, tmp_path, argv, reason):
    code, _, err = run(capsys, "analyze", "pendulum", "--out", str(tmp_path / "r"), *argv)
    assert code == 2 and reason in one_line(err)
    assert not (tmp_path / "r").exists()


def test_analyze_api_refuses_what_it_would_ignore():
    pendulum = robodyn.load("pendulum")
    with pytest.raises(UnknownNameError, match="did you mean 'tau'"):
        analyze(pendulum, at={"tua": 1.0})
    for kwargs, reason in [({"at": {"tau": float("nan")}}, "finite"), ({"at": {"tau": 1j}}, "real number"),
                           ({"max_points": -1}, "max_points"), ({"max_points": 0}, "max_points"),
                           ({"max_points": 2.5}, "max_points"), ({"horizon": "5"}, "horizon"),
                           ({"at": [0.0, 0.0]}, "mapping")]:
        with pytest.raises(InputError, match=reason):
            analyze(pendulum, **kwargs)


def test_report_write_refuses_special_paths(tmp_path):
    report = analyze(robodyn.load(str(_write(tmp_path / "d.yaml", DECAY))), horizon=0.5)
    for folder in ("/dev/null", "/proc/robodyn-x"):
        with pytest.raises(InputError, match="analyze --out"):
            report.write(folder)
    assert report.write(tmp_path / "ok").name == "report.html"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# --- display of large equations: bounded -------------------------------------------------------------------
def test_a_long_sum_parses_and_shows_in_seconds(tmp_path):
    terms = "+".join(f"sin({k}*x)" for k in range(1, 1751))  # 36 s to show before (a quadratic parse)
    model_file = _write(tmp_path / "sines.yaml", f"kind: first_order\nstates: [x]\ndynamics: {{x: {terms}}}\n")
    start = time.perf_counter()
    model = robodyn.load(str(model_file))
    text = model.show_text()
    assert time.perf_counter() - start < 20
    assert text.count("sin(") == 1750 and "sin(1750*x)" in text
    assert model.f(0.0, [0.3])[0] == pytest.approx(sum(np.sin(k * 0.3) for k in range(1, 1751)), rel=1e-12)


def test_an_expression_beyond_the_display_budget_is_not_printed():
    from robodyn.base import budget

    rhs = robodyn.load("pendulum").rhs_expr[0]  # -g*l*m*sin(theta) + tau: 9 nodes
    assert budget.within(rhs, 9) and not budget.within(rhs, 8)
    assert budget.shown(rhs, str, limit=9) == str(rhs)
    assert budget.shown(rhs, str, limit=8).startswith("(too large to show: more than 8 operations")
    assert budget.shown(rhs, str, limit=8, latex=True).startswith(r"\text{(too large")


def test_the_latex_of_a_large_robot_is_not_built():
    arm = robodyn.load(str(Path(__file__).parents[1] / "examples" / "nine_dof_arm.urdf"))
    start = time.perf_counter()
    assert arm.latex_text() is None  # closed forms of 9 joints swell for minutes (sympy.latex of M(q))
    assert "9 joints" in arm.show_text() or arm.show_text()
    assert time.perf_counter() - start < 10


@pytest.mark.slow
def test_analyze_of_a_nine_joint_arm_is_bounded(tmp_path):
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "robodyn.cli", "analyze", "examples/nine_dof_arm.urdf", "--out",
                           str(tmp_path / "r"), "--quiet"], cwd=Path(__file__).parents[1], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert time.perf_counter() - start < 60


def test_a_large_power_of_a_sum_is_refused_quickly(tmp_path):
    path = _write(tmp_path / "power.yaml", "kind: lagrangian\ncoordinates: [th]\nkinetic: th_dot**2*(1+th)**10000\n")
    start = time.perf_counter()
    with pytest.raises(InputError, match="would expand to more than"):  # hung in is_zero_matrix, then crashed
        robodyn.load(str(path))
    assert time.perf_counter() - start < 10


def test_show_of_a_200_joint_robot_is_bounded(tmp_path, capsys):
    """It took more than 200 s (loading compiled a 200 x 200 mass matrix; closed forms are for <= 3 joints)."""
    import importlib.util

    source = Path(__file__).parent / "model" / "test_plausibility.py"  # its robot generator
    spec = importlib.util.spec_from_file_location("plausibility", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = module.long_robot(tmp_path / "long.urdf", 200)
    start = time.perf_counter()
    code, out, _ = run(capsys, "show", str(path))
    assert code == 0 and time.perf_counter() - start < 30
    assert "j199'' : Q = j199_tau" in out and "200 joints" in out
