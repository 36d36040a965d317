"""The analyze report (robodyn.report, ``robodyn analyze``): every section and figure, self-contained, and
rendered by headless Chromium (installed by the Makefile; the screenshot test is skipped without it)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

import robodyn
from robodyn.cli import main
from robodyn.report import analyze

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
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
