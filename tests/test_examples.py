"""Every file in examples/ runs as shipped: each model file and URDF robot simulates from its defaults (no --x0, no
--param) with exit code 0 and finite numbers in a CSV whose columns are named once; each script runs to its end.

Problem files (``kind: optimal_control``) are not models: tests/control/test_control_examples.py solves each one
and tracks its solution; here they are only checked to be in its list.

A model whose default start is off its constraints (a linkage laid out straight) is assembled by ``simulate`` and
says so; a ball's default start lies on its floor, not below it; a sampled block without states gives its outputs.
"""

from __future__ import annotations

import csv
import math
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_run import run
from tests.example_files import MODEL_FILES, PROBLEM_FILES

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SLOW = {"box_on_incline.yaml", "quadruped_standing.yaml",  # stiff contacts: 10^5 steps of dopri5
        "region_of_attraction.py", "upright_pendulum_lqr.py",  # 80,000 runs; a bisection of 20 s runs
        "control_figures.py"}  # solves the four optimal control examples (the acrobot's takes minutes)


PROBLEMS, MODELS = PROBLEM_FILES, MODEL_FILES
SCRIPTS = sorted(EXAMPLES.glob("*.py"))
ARGUMENTS = {"control_figures.py": ["--out", "figures"],  # not over docs/figures
             "region_of_attraction.py": ["--figure", "roa.png"],  # not over docs/roa.png
             "falling_quadruped.py": ["--time", "0.1"]}


def _marked(paths: list[Path]) -> list[object]:
    return [pytest.param(p, id=p.name, marks=[pytest.mark.slow] if p.name in SLOW else []) for p in paths]


def test_every_example_is_run_here() -> None:
    """A new kind of file in examples/ gets a way to run it here."""
    assert {p.suffix for p in EXAMPLES.iterdir() if p.is_file()} <= {".yaml", ".urdf", ".xml", ".py"}
    assert len(MODELS) >= 25 and len(SCRIPTS) >= 3


def test_every_problem_file_is_solved_and_tracked() -> None:
    """The optimal control examples are run by tests/control/test_control_examples.py (solved, then tracked)."""
    from tests.control.test_control_examples import EXAMPLE_CASES

    assert PROBLEMS, "no problem file found"
    assert {p.name for p in PROBLEMS} == {case.file for case in EXAMPLE_CASES.values()}


@pytest.mark.parametrize("path", _marked(MODELS))
def test_each_model_simulates_from_its_defaults(path: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run.csv"
    code, printed, err = run(capsys, "simulate", str(path), "--t-final", "0.5", "--out", str(out))
    assert code == 0, err
    assert "error" not in err, err
    with out.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, values = rows[0], [[float(v) for v in row] for row in rows[1:]]
    assert header[0] == "t" and len(set(header)) == len(header), header  # each column named once
    assert len(values) >= 2 and all(math.isfinite(v) for row in values for v in row)
    assert values[-1][0] == pytest.approx(0.5, abs=1e-12)
    assert f"wrote {out}" in printed


@pytest.mark.parametrize("path", _marked(SCRIPTS))
def test_each_script_runs_to_its_end(path: Path, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-W", "error::robodyn.base.errors.RobodynWarning", str(path),
                           *ARGUMENTS.get(path.name, [])], capture_output=True, text=True, cwd=tmp_path, timeout=1800,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), "the script printed nothing"
