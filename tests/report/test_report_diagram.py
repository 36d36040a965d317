"""The report of a diagram (robodyn.report.diagram): the drawing and the loops opened at each point."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

import robodyn
from robodyn.report import analyze
from robodyn.report.diagram import diagram_svg

EXAMPLES = Path(__file__).parents[2] / "examples"


def test_the_report_draws_the_diagram_and_opens_its_loop(tmp_path: Path) -> None:
    model = robodyn.load(EXAMPLES / "motor_joint_pid.yaml")
    report = analyze(model)
    page = report.write(tmp_path)
    text = page.read_text()
    assert text.index("<h2>Block diagram</h2>") < text.index("<h2>Equations</h2>")
    svg = re.search(r'<svg xmlns="http://www.w3.org/2000/svg" class="block-diagram".*?</svg>', text, re.S)
    assert svg is not None
    for name in ("pid", "motor", "plant", "omega", "q_dot", "current"):
        assert f">{name}<" in svg.group(0)
    assert svg.group(0).count("<path") == 4 + 1 + 2 + 1  # wires, the input, the outputs, the arrow head
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["block_diagram"]["loops"] == ["pid.u"]
    margins = data["points"][0]["loops"]["pid.u"]
    expected = robodyn.linearize(model, np.zeros(5), [0.0], open="pid.u").margins()
    assert margins["phase_margin"] == expected.phase_margin
    assert "Bode diagram of the loop opened at pid.u" in text
    assert f"phase margin {expected.phase_margin:.6g} deg" in text and "gain margin 639.464" in text
    # the closed loop r -> q is no loop to take margins of: only pid.u's are reported
    point = data["points"][0]
    assert point["margins"] is None and "pid.u" in point["margins_reason"] and "closed by unity" not in text
    # one verdict each, from the PBH test (the Kalman matrix's rank, 2 of 5, is a detail lost to rounding)
    assert point["controllability"]["full"] and point["observability"]["full"]
    assert point["controllability"]["rank"] < 5 and "lost to rounding" in text
    assert "not controllable" not in text and "not observable" not in text and "trust the PBH" not in text


def test_a_sampled_block_is_drawn_dashed_with_its_period() -> None:
    structure = robodyn.load(EXAMPLES / "arm_motors_pd.yaml").block_diagram()
    assert structure["loops"] == ["ctrl.v1", "ctrl.v2"]  # not the motors' back-EMF loops
    svg = diagram_svg(structure)
    assert "stroke-dasharray" in svg and "T = 0.001 s" in svg
    assert svg.count('class="block-diagram"') == 1
