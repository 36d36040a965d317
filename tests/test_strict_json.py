"""Every JSON the CLI prints and the report writes is strict JSON (issue 23): report.json had
``"validity_radius": Infinity``, which every strict parser refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from robodyn.cli import main

ARM = Path(__file__).resolve().parents[1] / "examples" / "two_link_arm.urdf"


def strict(text: str) -> object:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("argv", [
    ["classify", "pendulum"],
    ["equilibrium", "pendulum", "--fix", "tau=0", "--starts", "4"],
    ["linearize", "pendulum", "--at", "theta=pi"],
    ["validity", "joint", "--at", "q=0"],  # linear: an unbounded radius
    ["validity", "pendulum", "--at", "theta=0"],
    ["modes", "pendulum", "--at", "theta=pi"],
    ["existence", "pendulum", "--x0", "theta=0.5", "--radius", "0.1"],
    ["fk", str(ARM), "--at", "shoulder=0.3", "--jacobian"],
    ["ik", str(ARM), "--target", "1,0,0.5", "--starts", "4"],
])
def test_cli_json_is_strict(capsys, argv):
    assert main([*argv, "--json"]) == 0
    data = strict(capsys.readouterr().out)
    assert isinstance(data, dict)


def test_validity_json_says_when_a_null_radius_is_unbounded(capsys):
    assert main(["validity", "joint", "--at", "q=0", "--json"]) == 0
    data = strict(capsys.readouterr().out)
    assert data["radius"] is None and data["radius_unbounded"] is True


def test_report_and_verify_json_are_strict(tmp_path, capsys):
    assert main(["analyze", "joint", "--out", str(tmp_path / "r"), "--quiet"]) == 0
    capsys.readouterr()  # the summary line
    report = strict((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    (point,) = report["points"]  # type: ignore[index]
    assert point["validity_radius"] is None and point["validity_radius_unbounded"] is True
    assert main(["verify", "joint", "--out", str(tmp_path / "v"), "--json"]) == 0
    strict(capsys.readouterr().out)
