"""``robodyn optimize``: the CSV, the JSON and the report of a solved problem file, one line and exit 2 for bad
input (output paths refused before the solve), exit 1 for a solve that does not converge, nothing written on failure
(a real solver registered: the exact LQ solution)."""

from __future__ import annotations

import html
import json

import numpy as np
import pytest

import robodyn
from cli_run import one_line, run
from optimal_reference import riccati_solver
from robodyn.control.optimal import solvers
from robodyn.display.page import number

PROBLEM = """\
kind: optimal_control
model: scalar.yaml
horizon: 2
knots: 40
x0: {x: 1.5}
method: riccati
costs:
  state: {weights: {x: 3}}
  input: {weights: {u: 0.5}}
  terminal: {weights: {x: 10}}
"""

MODEL = "kind: first_order\nstates: [x]\ninputs: [u]\nparameters: {a: 0.5, b: 2.0}\ndynamics: {x: a*x + b*u}\n"


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    monkeypatch.setitem(solvers.SOLVERS, "riccati", riccati_solver)
    monkeypatch.setitem(solvers.SOLVERS, "stuck", lambda problem, **o: riccati_solver(problem, converge=False, **o))
    (tmp_path / "scalar.yaml").write_text(MODEL)
    (tmp_path / "problem.yaml").write_text(PROBLEM)
    return tmp_path


def test_optimize_writes_the_csv_and_prints_json(folder, capsys) -> None:
    out = folder / "traj.csv"
    code, stdout, err = run(capsys, "optimize", str(folder / "problem.yaml"), "--out", str(out), "--json")
    assert code == 0, err
    summary = json.loads(stdout)
    assert set(summary) == {"cost", "violation", "iterations", "status", "converged", "seconds", "method"}
    expected = robodyn.load_problem(folder / "problem.yaml").solve()
    assert summary["cost"] == expected.cost and summary["converged"] and summary["method"] == "riccati"
    assert out.read_text() == expected.to_csv_text()
    assert out.read_text().splitlines()[0] == "t,x,u"
    table = np.loadtxt(out, delimiter=",", skiprows=1)
    assert table.shape == (41, 3) and table[-1, 2] == table[-2, 2]


@pytest.mark.parametrize(("change", "words"), [
    (("horizon: 2", "horizon: 0"), ":3: horizon: must be > 0"),
    (("knots: 40", "knots: 1"), ":4: knots: must be an integer"),
    (("{x: 3}", "{y: 3}"), ":8: costs.state.weights: unknown state 'y'"),
    (("{u: 0.5}", "{u: -0.5}"), "positive definite"),
    (("x0: {x: 1.5}", "x0: {x: .nan}"), "x0.x"),
])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(folder, capsys, change, words) -> None:
    (folder / "problem.yaml").write_text(PROBLEM.replace(*change))
    out = folder / "traj.csv"
    code, _, err = run(capsys, "optimize", str(folder / "problem.yaml"), "--out", str(out))
    assert code == 2 and words in one_line(err) and not out.exists()


def test_a_solve_that_does_not_converge_exits_1_and_writes_nothing(folder, capsys) -> None:
    out = folder / "traj.csv"
    code, _, err = run(capsys, "optimize", str(folder / "problem.yaml"), "--out", str(out), "--method", "stuck")
    assert code == 1 and "did not converge: iteration limit; last cost" in one_line(err) and "violation" in err
    assert not out.exists()


def test_a_wrong_output_suffix_is_refused_before_solving(folder, capsys) -> None:
    code, _, err = run(capsys, "optimize", str(folder / "problem.yaml"), "--out", str(folder / "traj.txt"))
    assert code == 2 and "name a .csv file" in one_line(err)


def test_report_is_written_with_the_csv_and_holds_the_history(folder, capsys) -> None:
    out, page = folder / "traj.csv", folder / "page.html"
    code, stdout, err = run(capsys, "optimize", str(folder / "problem.yaml"), "--out", str(out), "--report",
                            str(page), "--json")
    assert code == 0, err
    summary = json.loads(stdout)
    text = page.read_text(encoding="utf-8")
    assert f"<td>{number(summary['cost'])}</td>" in text and out.exists()
    # the one row riccati_solver reports to progress: (1, the cost, 0)
    assert f'<tr><td class="text">1</td><td>{number(summary["cost"])}</td><td>0</td></tr>' in text
    assert html.escape(PROBLEM) in text  # the problem file as given


def test_a_failed_solve_writes_neither_the_csv_nor_the_report(folder, capsys) -> None:
    out, page = folder / "traj.csv", folder / "page.html"
    code, _, err = run(capsys, "optimize", str(folder / "problem.yaml"), "--out", str(out), "--report", str(page),
                       "--method", "stuck")
    assert code == 1 and "did not converge" in one_line(err)
    assert not out.exists() and not page.exists()


@pytest.mark.parametrize(("name", "words"), [("page.txt", "name a .html file"), ("taken.html", "folder"),
                                             ("missing/sub/page.html", None)])
def test_a_bad_report_path_is_refused_before_the_solve(folder, capsys, monkeypatch, name, words) -> None:
    calls: list[object] = []
    monkeypatch.setitem(solvers.SOLVERS, "counted", lambda problem, **o: calls.append(problem) or
                        riccati_solver(problem, **o))
    (folder / "taken.html").mkdir()
    (folder / "missing").write_text("a file where a folder should be", encoding="utf-8")
    out = folder / "traj.csv"
    code, _, err = run(capsys, "optimize", str(folder / "problem.yaml"), "--out", str(out), "--report",
                       str(folder / name), "--method", "counted")
    assert code == 2 and "--report" in one_line(err) and (words is None or words in err)
    assert calls == [] and not out.exists()
