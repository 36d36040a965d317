"""The analyze report (robodyn.report, ``robodyn analyze``): every section and figure, self-contained, and
rendered by headless Chromium (installed by the Makefile; the screenshot test is skipped without it)."""

from __future__ import annotations

import base64
import html
import json
import re
import shutil
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

import robodyn
from robodyn.cli import main
from robodyn.report import analyze
from robodyn.viewer.browser import Chromium
from robodyn.viewer.browser import available as chromium_available

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Chromium's own background services (time sync, account and search prefetch): not the page's requests
CHROMIUM_SERVICES = ("google.com", "gvt1.com", "googleapis.com", "gstatic.com")


class _Checker(HTMLParser):
    """Well-formedness of the page's own markup (void elements aside) and every external reference."""

    VOID: ClassVar[set[str]] = {"meta", "br", "img", "hr", "input", "link", "path", "use", "rect", "circle", "line",
                                "polyline", "polygon", "ellipse", "stop", "image"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.references: list[str] = []
        self.errors: list[str] = []
        self.counts: dict[str, int] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.counts[tag] = self.counts.get(tag, 0) + 1
        self.references += [v for k, v in attrs if k in ("src", "href", "xlink:href") and v]
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.counts[tag] = self.counts.get(tag, 0) + 1
        self.references += [v for k, v in attrs if k in ("src", "href", "xlink:href") and v]

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()


def _check(page: str) -> _Checker:
    checker = _Checker()
    checker.feed(page)
    assert not checker.errors and not checker.stack, (checker.errors[:5], checker.stack[-5:])
    assert all(r.startswith(("#", "data:")) for r in checker.references), [
        r for r in checker.references if not r.startswith(("#", "data:"))][:5]
    return checker


@pytest.fixture(scope="module")
def pendulum_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pendulum")
    assert main(["analyze", "pendulum", "--out", str(out), "--quiet"]) == 0
    return out


def test_the_pendulum_report_has_every_section_and_figure(pendulum_report: Path) -> None:
    page = (pendulum_report / "report.html").read_text(encoding="utf-8")
    _check(page)
    for title in ("Equations", "Classification", "Operating points", "Linear model", "Modes", "Validity",
                  "Existence and uniqueness", "Figures"):
        assert f"<h2>{title}" in page or f"<h3>{title}" in page, title
    data = json.loads((pendulum_report / "report.json").read_text(encoding="utf-8"))
    points = data["points"]
    assert {p["stability"] for p in points} >= {"unstable"}
    hanging = next(p for p in points if abs(p["x"][0]) < 1e-9)
    assert hanging["A"] == [[0.0, 1.0], [-9.81, 0.0]]
    # per point: pole map, validity, free and step responses, phase portrait (two states), the pendulum drawn
    # through its named point (the bob)
    assert page.count('<div class="figure">') == 6 * len(points)
    assert page.count("nonlinear (solid), linear (dashed)") == 2 * len(points) and "phase portrait" in page
    rows = (pendulum_report / "points.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0].split(",")[:3] == ["point", "theta", "theta_dot"] and len(rows) == 1 + len(points)


def test_a_robot_report_shows_the_joint_table_and_the_arm(tmp_path: Path) -> None:
    arm = robodyn.load(str(EXAMPLES / "two_link_arm.urdf"))
    report = analyze(arm, at={"shoulder": 0.4, "elbow": -0.6})
    page = report.write(tmp_path).read_text(encoding="utf-8")
    _check(page)
    assert re.search(r"shoulder +revolute", page)  # the joint table, in the equations section
    assert "the mechanism at the operating point" in page
    (point,) = report.data["points"]
    np.testing.assert_allclose(point["x"], [0.4, -0.6, 0.0, 0.0])
    np.testing.assert_allclose(point["u"], arm.inverse_dynamics([0.4, -0.6], [0, 0], [0, 0]), rtol=1e-12)
    assert page.count('<div class="figure">') == 5  # pole map, validity, free and step responses, the arm
    # the catalog's chain twin, from the command line
    assert main(["analyze", "two_link_arm", "--out", str(tmp_path / "chain"), "--quiet"]) == 0
    chain_page = (tmp_path / "chain" / "report.html").read_text(encoding="utf-8")
    points = json.loads((tmp_path / "chain" / "report.json").read_text(encoding="utf-8"))["points"]
    assert len(points) == 4  # without --at, two coordinates: the equilibria (each link hanging or upright)
    _check(chain_page)
    assert chain_page.count('<div class="figure">') == 5 * len(points)
    assert "the mechanism at the operating point" in chain_page


def test_sections_that_do_not_apply_say_why(tmp_path: Path) -> None:
    model = robodyn.SymbolicSystem(["x"], [], {"x": "1 + x**2"}, name="no_rest")  # no equilibrium anywhere
    report = analyze(model)
    assert "error" in report.data["operating_points"] or report.data.get("points", []) == []
    page = report.write(tmp_path).read_text(encoding="utf-8")
    _check(page)
    with pytest.raises(robodyn.InputError, match="horizon"):
        analyze(model, horizon=-1.0)


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed (make test installs it)")
def test_chromium_renders_the_report_without_the_network(pendulum_report: Path, tmp_path: Path) -> None:
    from PIL import Image

    page = pendulum_report / "report.html"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
             "--disable-component-update", "--disable-sync", "--disable-default-apps"]
    shot, netlog = tmp_path / "shot.png", tmp_path / "net.json"
    subprocess.run(["chromium", *flags, f"--screenshot={shot}", "--window-size=1200,4000", f"--log-net-log={netlog}",
                    page.as_uri()], capture_output=True, timeout=120, check=True)
    dom = subprocess.run(["chromium", *flags, "--dump-dom", page.as_uri()], capture_output=True, timeout=120,
                         check=True, text=True).stdout
    image = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert image.shape == (4000, 1200) and image.std() > 10 and (image < 128).mean() > 0.01  # not blank
    expected = page.read_text(encoding="utf-8").count("<svg")
    assert dom.count("<svg") == expected > 0  # every figure is in the rendered document
    requested = set(re.findall(r'"url":"(https?://[^"]+)"', netlog.read_text(encoding="utf-8")))
    page_requests = [url for url in requested if not any(s in url.split("/")[2] for s in CHROMIUM_SERVICES)]
    assert page_requests == []


# --- what a person sees, checked in the page Chromium renders (issue 23) ----------------------------------------
def _ur5() -> Path | None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from pinocchio_reference import ROBOTS

    path = None if ROBOTS is None else ROBOTS / "ur_description" / "urdf" / "ur5_robot.urdf"
    return path if path is not None and path.is_file() else None


# (model, options, states, links of nonzero length from the base to the tool: the UR5's base_link, shoulder,
# upper arm, forearm, the three wrist links; the two-link arm's shoulder sits at its base)
CASES = [("joint", [], 2, 0), ("pendulum", [], 2, 1), ("two_link_arm", [], 4, 2),
         ("ur5", ["--at", "shoulder_lift_joint=-1.2,elbow_joint=1.0"], 12, 7)]


def _row_numbers(cells: list[str]) -> list[float]:
    numbers = []
    for cell in cells:
        try:
            value = float(cell.replace("−", "-"))
        except ValueError:
            continue
        if np.isfinite(value):  # nan and inf are words here (a metric that is not defined)
            numbers.append(value)
    return numbers


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed (make test installs it)")
@pytest.mark.parametrize(("name", "extra", "states", "links"), CASES, ids=[c[0] for c in CASES])
def test_what_the_rendered_report_shows(tmp_path: Path, name: str, extra: list[str], states: int, links: int) -> None:
    model = name if name != "ur5" else _ur5()
    if model is None:
        pytest.skip("example-robot-data is not installed")
    assert main(["analyze", str(model), "--out", str(tmp_path), "--quiet", *extra]) == 0
    page = tmp_path / "report.html"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
             "--disable-component-update", "--disable-sync", "--disable-default-apps"]
    netlog = tmp_path / "net.json"
    dom = subprocess.run(["chromium", *flags, f"--log-net-log={netlog}", "--dump-dom", page.as_uri()],
                         capture_output=True, timeout=120, check=True, text=True).stdout
    points = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["points"]
    # every pole drawn: a complex pair is two markers (the pole map's first <g id="poles"> per point)
    markers = [len(re.findall(r"<use ", group)) for group in re.findall(r'<g id="poles">(.*?)</g>', dom, flags=re.S)]
    assert markers == [states] * len(points) and all(len(p["eigenvalues"]) == states for p in points)
    # the mechanism: one segment per link
    if links:
        figure = r'<div class="figure">\s*(<svg(?:(?!<div class="figure">).)*?</svg>)\s*<div>the mechanism'
        drawings = re.findall(figure, dom, flags=re.S)
        assert len(drawings) == (0 if name == "ur5" else len(points))  # the UR5's meshes: a 3-D view instead
        assert dom.count("<iframe") == (name == "ur5")
        assert all(len(re.findall(r'<g id="link-\d+"', drawing)) == links for drawing in drawings)
    # every axis label names a unit
    labels = re.findall(r'<g id="axis-label-[^"]*">\s*<text[^>]*>([^<]*)</text>', dom)
    assert labels and all(re.search(r"\[[^\]]+\]", label) or "units in the legend" in label for label in labels), \
        [label for label in labels if "[" not in label]
    # no number shown below round-off relative to its row (tables and headings)
    for row in re.findall(r"<tr>(.*?)</tr>", dom, flags=re.S):
        values = [abs(v) for v in _row_numbers(re.findall(r"<t[dh][^>]*>([^<]*)</t[dh]>", row))]
        largest = max(values, default=0.0)
        assert all(v == 0 or v > 1e-12 * largest for v in values), row[:300]
    for heading in re.findall(r"<h2>Point \d+: ([^<]*)</h2>", dom):
        values = [abs(float(v)) for v in re.findall(r"= (-?[0-9.e+-]+)", heading)]
        assert all(v == 0 or v > 1e-12 * max(values) for v in values), heading
    # the equations typeset: SVG formulas, no LaTeX source shown outside the collapsed source block
    hidden = r"<details>.*?</details>|<title>.*?</title>|<!--.*?-->|<style>.*?</style>"  # not shown on the page
    visible = re.sub(r"<[^>]+>", " ", re.sub(hidden, "", dom, flags=re.S))  # the text a reader sees
    assert "\\frac" not in visible and "\\left(" not in visible
    assert ('<div class="formula">' in dom) == (name != "ur5")  # six joints: the joint table, no closed forms
    # nothing from the network
    requested = set(re.findall(r'"url":"(https?://[^"]+)"', netlog.read_text(encoding="utf-8")))
    assert [url for url in requested if not any(s in url.split("/")[2] for s in CHROMIUM_SERVICES)] == []


# --- the robot in 3-D (issue 49): a model with meshes is drawn by the viewer, one without keeps the sticks -------
def embedded_scene(page: str) -> dict:
    """The scene of the 3-D view written into ``page`` (its ``<iframe srcdoc>``, unescaped, then its JSON block)."""
    (srcdoc,) = re.findall(r'<iframe srcdoc="([^"]*)"', page)
    block = re.search(r'<script id="robodyn-scene" type="application/json">(.*?)</script>', html.unescape(srcdoc),
                      flags=re.S)
    assert block is not None
    return json.loads(block.group(1))


UR5_AT = {"shoulder_lift_joint": -1.2, "elbow_joint": 1.0}


@pytest.fixture(scope="module")
def ur5_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[robodyn.Model, Path]:
    pytest.importorskip("trimesh")
    path = _ur5()
    if path is None:
        pytest.skip("example-robot-data is not installed")
    model = robodyn.load(str(path))
    return model, analyze(model, at=UR5_AT).write(tmp_path_factory.mktemp("ur5"))


def test_a_robot_with_meshes_is_shown_in_3d_at_its_point_and_a_pendulum_as_sticks(
        ur5_report: tuple[robodyn.Model, Path], pendulum_report: Path) -> None:
    from robodyn.kinematics import kinematics

    model, written = ur5_report
    page = written.read_text(encoding="utf-8")
    _check(page)
    assert "<h2>The robot in 3-D</h2>" in page and 'sandbox="allow-scripts"' in page
    assert "the mechanism at the operating point" not in page  # the meshes replace the stick picture
    scene = embedded_scene(page)
    assert len(scene["meshes"]) >= 7 and scene["labels"][0].startswith("point 0: shoulder_pan_joint = 0, "
                                                                       "shoulder_lift_joint = -1.2")
    kin = kinematics(model)
    (point,) = json.loads((written.parent / "report.json").read_text(encoding="utf-8"))["points"]
    q = np.array(point["x"][: len(kin.coordinates)])
    assert q[kin.coordinates.index("elbow_joint")] == 1.0
    raw = zlib.decompress(base64.b64decode(scene["poses"]["data"]))
    poses = np.frombuffer(raw, dtype="<f4").reshape(scene["poses"]["shape"])
    tool = poses[0, scene["tool"], 9:]
    np.testing.assert_allclose(tool, kin.position(q, kin.default_frame), atol=1e-6)  # float32 of ~1 m: 6e-8
    pendulum = (pendulum_report / "report.html").read_text(encoding="utf-8")
    assert "<iframe" not in pendulum and "the mechanism at the operating point" in pendulum


@pytest.mark.skipif(not chromium_available(), reason="chromium is not installed (make test installs it)")
def test_the_report_with_the_3d_view_opens_in_chromium_without_errors_or_requests(
        ur5_report: tuple[robodyn.Model, Path]) -> None:
    _, written = ur5_report
    with Chromium(width=1100, height=900) as browser:
        browser.open(written)
        (frame,) = browser.frames  # the view runs in its own sandboxed frame
        browser.evaluate("document.querySelector('iframe').scrollIntoView()")  # a frame out of sight does not draw
        browser.wait_for("window.robodynView && (window.robodynView.rendered >= 1 || window.robodynView.error)",
                         frame)
        assert browser.evaluate("window.robodynView.error", frame) is None
        assert browser.evaluate("document.getElementById('robodyn-clock').textContent", frame).startswith("point 0")
        assert browser.evaluate("window.robodynView.links.length", frame) == 8
        assert browser.errors() == []
        assert browser.requests() == [written.as_uri()]  # the report itself, nothing else
