"""The report of an optimal control solve (robodyn.report.optimize): the page holds the result's numbers, the
history the solver reported, the inputs against their bounds, a frame target's path (against the closed-form
kinematics of the two-link arm), escapes what the problem and its model say, and renders in headless Chromium
without console errors or requests (skipped without Chromium, as tests/report/test_report.py)."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

import robodyn
from optimal_reference import riccati_solver
from robodyn.control.optimal import solvers
from robodyn.display.page import number
from robodyn.report.optimize import BOUND_RTOL, checked_history, optimization_page, write_optimization_report

MODEL = "kind: first_order\nstates: [x]\ninputs: [u]\nparameters: {a: 0.5, b: 2.0}\ndynamics: {x: a*x + b*u}\n"
HOSTILE_NAME = '<script>document.title="pwned"</script> & $x$'
PROBLEM = """\
kind: optimal_control
description: "</pre><script>document.title='pwned'</script><img src=x onerror=alert(1)>"
model: scalar.yaml   # </pre><b>bold</b>
horizon: 2
knots: 40
x0: {x: 1.5}
method: fddp
costs:
  state: {weights: {x: 3}}
  input: {weights: {u: 0.5}}
  terminal: {weights: {x: 10}}
bounds: {inputs: {u: [-0.8, 1]}, states: {x: [-1, 2]}}
constraints: {path: ["x - 1.8"]}
"""
# the page's markup may hold only these tags: no tag of the problem file or of the model's name survives
TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "h4", "p", "table", "tr", "th", "td",
        "div", "details", "summary", "pre", "code"}


class _Tags(HTMLParser):
    """The tags outside the inline SVG figures, and whether every element opened is closed."""

    VOID = frozenset({"meta", "br", "img", "path", "use", "rect", "circle", "line", "polyline", "polygon", "stop"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.outside_svg: set[str] = set()
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if "svg" not in self.stack and tag != "svg":
            self.outside_svg.add(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(tag)
        else:
            self.stack.pop()


def _tags(page: str) -> set[str]:
    parser = _Tags()
    parser.feed(page)
    assert not parser.errors and not parser.stack, (parser.errors[:5], parser.stack[-5:])
    return parser.outside_svg


class Solved(NamedTuple):
    folder: Path
    page: str
    problem: Any
    result: Any
    history: list[tuple[int, float, float]]


@pytest.fixture(scope="module")
def solved(tmp_path_factory: pytest.TempPathFactory) -> Solved:
    """The scalar problem solved by FDDP (a real solve: input bound active, 40-odd iterations), its history and
    page."""
    folder = tmp_path_factory.mktemp("problem")
    (folder / "scalar.yaml").write_text(f"name: '{HOSTILE_NAME}'\n" + MODEL, encoding="utf-8")
    (folder / "problem.yaml").write_text(PROBLEM, encoding="utf-8")
    problem = robodyn.load_problem(folder / "problem.yaml")
    history: list[tuple[int, float, float]] = []
    result = problem.solve(progress=lambda *row: history.append(row))
    page = optimization_page(result, problem, history=history, text=PROBLEM)
    return Solved(folder, page, problem, result, history)


def test_the_page_holds_the_numbers_of_the_result(solved: Solved) -> None:
    page, result, history = solved.page, solved.result, solved.history
    assert _tags(page) <= TAGS
    assert result.converged and result.iterations == len(history) > 1
    cell = r"<td[^>]*>{}</td>"
    for label, value in (("cost", number(result.cost)), ("violation", number(result.violation)),
                         ("iterations", str(result.iterations)), ("status", html.escape(result.status)),
                         ("method", "fddp"), ("knots (intervals N)", "40"), ("horizon [s]", "2")):
        assert re.search(cell.format(re.escape(label)) + cell.format(re.escape(value)), page), label
    # the history: one row per iteration, the first and the last shown with their numbers
    rows = re.findall(r"<tr><td class=\"text\">(\d+)</td><td>([^<]*)</td><td>([^<]*)</td></tr>", page)
    assert rows[0] == ("1", number(history[0][1]), number(history[0][2]))
    assert rows[-1] == (str(history[-1][0]), number(history[-1][1]), number(history[-1][2]))
    assert number(history[-1][1]) == number(result.cost)  # the solver's last report is the result's cost
    assert page.count("<svg") == 3  # states, inputs, convergence


def test_the_inputs_are_shown_against_their_bounds(solved: Solved) -> None:
    page, result = solved.page, solved.result
    u = result.u[:-1, 0]  # the held inputs of the 40 intervals
    at_lower = int(np.sum(np.abs(u + 0.8) <= BOUND_RTOL))  # |bound| < 1: the tolerance is BOUND_RTOL itself
    at_upper = int(np.sum(np.abs(u - 1.0) <= BOUND_RTOL))
    assert at_lower > 0  # the solve leans on its lower bound: the table must count those knots
    row = re.search(r"<tr><td class=\"text\">u</td>((?:<td>[^<]*</td>){6})</tr>", page)
    assert row is not None
    cells = re.findall(r"<td>([^<]*)</td>", row.group(1))
    assert cells == [number(u.min()), number(result.u[:, 0].max()), "-0.8", "1", str(at_lower), str(at_upper)]
    # the path constraint's largest value on the knots and the state's row (x0, final, bounds)
    g = np.max(result.x[:, 0] - 1.8)
    assert f"<td class=\"text\">x - 1.8</td><td class=\"text\">{number(g)}</td>" in page
    state = re.search(r"<tr><td class=\"text\">x</td>((?:<td>[^<]*</td>){6})</tr>", page)
    assert state is not None and re.findall(r"<td>([^<]*)</td>", state.group(1))[-2:] == ["-1", "2"]


def test_what_the_problem_and_its_model_say_is_escaped(solved: Solved) -> None:
    page, text = solved.page, PROBLEM
    assert "pwned" in page and "<script" not in page and "<img" not in page and "<b>" not in page
    assert html.escape(text) in page  # the problem file as given, every character kept
    assert f"<title>Optimal trajectory of {html.escape(HOSTILE_NAME)}</title>" in page


def test_a_frame_target_is_drawn_against_the_closed_form_kinematics(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(solvers.SOLVERS, "riccati", riccati_solver)  # a trajectory of the arm, quickly
    target = [0.9, 0.0, 0.6]
    problem = robodyn.OptimalControlProblem(
        robodyn.load("two_link_arm"), 0.5, 10, {"shoulder": 0.3, "elbow": 0.5, "shoulder_dot": 0, "elbow_dot": 0},
        {"input": {"weights": {"shoulder_tau": 1, "elbow_tau": 1}},
         "frame": {"name": "tool", "position": target, "weight": 10, "terminal": True}}, method="riccati")
    result = problem.solve()
    page = optimization_page(result, problem)
    q1, q2 = result.x[-1, 0], result.x[-1, 1]
    # the arm in the x-z plane, joints about -y: links l1 = 1 and 0.8 (the tool) along their +x
    tool = np.array([np.cos(q1) + 0.8 * np.cos(q1 + q2), 0.0, np.sin(q1) + 0.8 * np.sin(q1 + q2)])
    row = re.search(r"<tr><td class=\"text\">tool</td><td class=\"text\">at the final knot</td>((?:<td>[^<]*</td>)"
                    r"{8})</tr>", page)
    assert row is not None
    shown = [float(v) for v in re.findall(r"<td>([^<]*)</td>", row.group(1))]
    # 6 significant digits shown; y is round-off against the row (shown as 0)
    np.testing.assert_allclose(shown[4:7], tool, rtol=1e-5, atol=1e-12)
    assert shown[7] == pytest.approx(np.linalg.norm(tool - target), rel=1e-5)
    assert "<h2>Frame targets</h2>" in page and page.count("<svg") == 3  # states, inputs, the frame
    assert "<iframe" not in page  # a catalog arm has no meshes: no 3-D view
    assert "No history was recorded" in page


@pytest.mark.parametrize(("history", "words"), [
    ("rows", "expected a list"), ([(1, 2.0)], r"history\[0\]"), ([(1.5, 2.0, 0.0)], "an integer"),
    ([(1, "2", 0.0)], "two numbers"), ([(True, 2.0, 0.0)], "an integer")])
def test_a_malformed_history_is_refused(history, words) -> None:
    with pytest.raises(robodyn.InputError, match=words):
        checked_history(history)


def test_the_report_is_written_atomically_and_refuses_a_folder(solved: Solved, tmp_path: Path) -> None:
    page, problem, result, history = solved.page, solved.problem, solved.result, solved.history
    out = tmp_path / "page.html"
    write_optimization_report(result, problem, out, history=history, text=PROBLEM)
    written = out.read_text(encoding="utf-8")
    assert re.sub(r"<svg.*?</svg>", "", written, flags=re.S) == re.sub(r"<svg.*?</svg>", "", page, flags=re.S)
    (tmp_path / "folder.html").mkdir()
    with pytest.raises(robodyn.InputError, match="folder"):
        write_optimization_report(result, problem, tmp_path / "folder.html", history=history)


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed (make test installs it)")
def test_chromium_renders_the_page_without_console_errors_or_requests(solved: Solved) -> None:
    folder, page = solved.folder, solved.page
    path = folder / "page.html"
    path.write_text(page, encoding="utf-8")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
             "--disable-component-update", "--disable-sync", "--disable-default-apps", "--enable-logging=stderr",
             "--v=0"]
    netlog = folder / "net.json"
    run = subprocess.run(["chromium", *flags, f"--log-net-log={netlog}", "--dump-dom", path.as_uri()],
                         capture_output=True, timeout=120, check=True, text=True)
    assert "CONSOLE" not in run.stderr and "Uncaught" not in run.stderr, run.stderr[-2000:]
    assert run.stdout.count("<svg") == page.count("<svg") == 3  # every figure in the rendered document
    title = re.search(r"<title>(.*?)</title>", run.stdout, flags=re.S)
    assert title is not None and title.group(1).startswith("Optimal trajectory of &lt;script&gt;")  # no script ran
    requested = set(re.findall(r'"url":"(https?://[^"]+)"', netlog.read_text(encoding="utf-8")))
    services = ("google.com", "gvt1.com", "googleapis.com", "gstatic.com")  # Chromium's own, not the page's
    assert [url for url in requested if not any(s in url.split("/")[2] for s in services)] == []


def test_a_robot_with_meshes_plays_its_optimal_trajectory_with_the_target_in_3d(monkeypatch) -> None:
    pytest.importorskip("trimesh")
    monkeypatch.setitem(solvers.SOLVERS, "riccati", riccati_solver)  # a trajectory of the Panda, quickly
    model = robodyn.load(str(Path(__file__).resolve().parents[2] / "examples" / "panda.urdf"))
    x0 = dict.fromkeys(model.states, 0.0) | {"panda_joint2": -0.5, "panda_joint4": -2.0}
    target = [0.4, 0.1, 0.4]
    problem = robodyn.OptimalControlProblem(
        model, 0.5, 10, x0, {"input": {"weights": dict.fromkeys(model.inputs, 1.0)},
                             "frame": {"name": "panda_hand_tcp", "position": target, "weight": 10, "terminal": True}},
        method="riccati")
    result = problem.solve()
    page = optimization_page(result, problem)
    assert "<h2>The robot in 3-D</h2>" in page and page.count("<iframe") == 1 and page.count("<svg") == 3
    (srcdoc,) = re.findall(r'<iframe srcdoc="([^"]*)"', page)
    block = re.search(r'<script id="robodyn-scene" type="application/json">(.*?)</script>', html.unescape(srcdoc),
                      flags=re.S)
    assert block is not None
    scene = json.loads(block.group(1))
    assert scene["target"] == target and len(scene["meshes"]) >= 10  # the Panda's links, drawn with their meshes
    assert scene["times"][0] == 0.0 and scene["times"][-1] == pytest.approx(0.5)
    assert len(scene["times"]) == 31  # played at real time: 60 instants a second
    assert [s["group"] for s in scene["series"]] == ["coordinates", "inputs"]
    assert 'id="robodyn-play">' in html.unescape(srcdoc) and 'id="robodyn-target" checked' in html.unescape(srcdoc)
