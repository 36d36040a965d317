"""What the report says about a plant and a robot: no margins where there is no loop, step metrics from the exact
response, one representative per continuous family of equilibria, joint limits flagged, a free response that moves,
dependence decided numerically, terms too long to typeset said how to get."""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import pytest

import robodyn
from robodyn.report import analyze

EXAMPLES = Path(__file__).parents[2] / "examples"


def text_of(page: str) -> str:
    """The page's words: figures and tags dropped, entities decoded, spaces collapsed."""
    page = re.sub(r"<svg.*?</svg>", " ", page, flags=re.S)
    page = re.sub(r"<style.*?</style>", " ", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def test_a_plant_has_no_margins_and_exact_step_metrics(tmp_path: Path) -> None:
    report = analyze(robodyn.load("joint"))
    page = report.write(tmp_path).read_text(encoding="utf-8")
    words = text_of(page)
    assert "No gain or phase margins: the model has no loop" in words and "--open BLOCK.PORT" in words
    for artefact in ("closed by unity", "309", "gain margin", "effectively infinite"):
        assert artefact not in words, artefact
    (point,) = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["points"]
    assert point["margins"] is None and "no loop" in point["margins_reason"]
    # the step table: 100 exp(-pi / sqrt(3)) = 16.3034 % (zeta = 0.5), not the samples' 16.3021
    overshoot = point["step_info"]["overshoot"][0][0]
    assert overshoot == pytest.approx(100 * math.exp(-math.pi / math.sqrt(3)), rel=1e-12)
    assert " 16.3034 " in words and "16.3021" not in words


@pytest.fixture(scope="module")
def arm_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict, robodyn.Model]:
    arm = robodyn.load(EXAMPLES / "three_dof_arm.urdf")
    out = tmp_path_factory.mktemp("arm")
    page = analyze(arm).write(out).read_text(encoding="utf-8")
    return page, json.loads((out / "report.json").read_text(encoding="utf-8")), arm


def test_one_representative_per_family_of_equilibria(arm_report: tuple[str, dict, robodyn.Model]) -> None:
    page, data, _ = arm_report
    families, points = data["equilibrium_families"], data["points"]
    assert len(families) == len(points) >= 2 and families[0]["members"] > 1
    assert all(family["continuous_in"] == ["base_yaw"] for family in families)
    for point in points:  # each at base_yaw 0, and no two the same posture at another yaw
        assert point["x"][0] == 0.0
    postures = [point["x"][1:3] for point in points]
    assert all(max(abs(a - b) for a, b in zip(p, q)) > 1e-3 for i, p in enumerate(postures) for q in postures[i + 1:])
    words = text_of(page)
    assert "continuous in base_yaw" in words and "every value of it is an equilibrium alike" in words


def test_points_outside_the_joint_limits_are_flagged_and_last(arm_report: tuple[str, dict, robodyn.Model]) -> None:
    page, data, arm = arm_report
    limits = arm.position_limits()
    outside = [any(not (low - 1e-9 <= x <= high + 1e-9) for x, (low, high) in
                   zip(point["x"], (limits[name] for name in arm.states[:3]))) for point in data["points"]]
    assert outside == sorted(outside) and any(outside)  # inside first
    for flag, family in zip(outside, data["equilibrium_families"]):
        assert (family["outside_limits"] is not None) == flag
    words = text_of(page)
    assert "shoulder_pitch = 3.14159 is above its upper limit 2" in words
    assert "Outside the joints' position limits: shoulder_pitch" in words  # in the point's own section too


def test_the_free_response_offsets_a_state_that_moves(arm_report: tuple[str, dict, robodyn.Model]) -> None:
    page, data, _ = arm_report
    A = data["points"][0]["A"]
    assert max(abs(row[0]) for row in A) <= 1e-12  # the base yaw's column: an offset there is another equilibrium
    words = text_of(page)
    assert "free response from an offset of shoulder_pitch" in words and "offset of base_yaw" not in words
    assert "offset of the first state" not in words


def test_dependence_and_terms_too_long_to_typeset(arm_report: tuple[str, dict, robodyn.Model]) -> None:
    page, data, _ = arm_report
    assert "depends on elbow_pitch, shoulder_pitch" in data["classification"]["reasons"]["linear"]
    equations = page[page.index("<h2>Equations</h2>"): page.index("<h2>Classification</h2>")]
    widths = [float(w) for w in re.findall(r'<svg [^>]*width="([\d.]+)pt"', equations)]
    assert widths and max(widths) <= 1400.0  # every formula shown is readable: none shrunk to a hairline
    words = text_of(equations)
    assert "too long to show here" in words and "robodyn show MODEL" in words and "model.mass_matrix(q)" in words
    # the A tables show round-off as 0: the base yaw row of A at rest is 0 throughout
    row = re.search(r"<td class=\"text\">base_yaw_dot</td>((?:<td>[^<]*</td>)+)</tr>", page)
    assert row is not None and set(re.findall(r"<td>([^<]*)</td>", row.group(1))) <= {"0", "1"}
