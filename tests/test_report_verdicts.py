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

EXAMPLES = Path(__file__).parents[1] / "examples"


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
