"""``robodyn sweep``'s integration options (issue 45, item 17): --method, --rtol, --atol and --points as
``robodyn.sweep`` takes them, with its defaults and simulate's checks, and the method and tolerances it used said on
stderr and kept in the manifest; swept angles may be given in degrees."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.cli_run import one_line, run

import robodyn
from robodyn.sweep import load_sweep, sweep

OVER = ["--x0", "theta=0.5:2.5:3", "--param", "l=0.5:1.5:2"]  # 6 pendulums, none of them near rest
GRID = {"l": np.linspace(0.5, 1.5, 2), "theta": np.linspace(0.5, 2.5, 3)}  # the command: --param first


def _cli(capsys: pytest.CaptureFixture[str], out: Path, *options: str) -> tuple[pd.DataFrame, str]:
    code, _, err = run(capsys, "sweep", "pendulum", *OVER, "--t-final", "3", "--reduce", "final,max_abs", "--out",
                       str(out), *options)
    assert code == 0, err
    return load_sweep(out), err


def _python(**options: object) -> pd.DataFrame:
    return sweep("pendulum", GRID, 3.0, reduce=["final", "max_abs"], **options)


def test_the_commands_tolerances_give_the_functions_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The same rtol, atol, method and points as robodyn.sweep: the same numbers to the bit; a looser rtol gives other
    numbers (the option reaches the integrator); without the options, robodyn.sweep's defaults."""
    loose, err = _cli(capsys, tmp_path / "loose", "--rtol", "1e-3", "--atol", "1e-5", "--method", "DOP853",
                      "--points", "11")
    pd.testing.assert_frame_equal(loose, _python(rtol=1e-3, atol=1e-5, method="dop853", points=11), check_exact=True)
    assert err.count("\n") == 1 and err.startswith("robodyn: each run by dop853 at rtol 0.001, atol 1e-05, 11 output")
    manifest = json.loads((tmp_path / "loose" / "manifest.json").read_text(encoding="utf-8"))
    assert {k: manifest["sweep"][k] for k in ("method", "rtol", "atol", "points")} == {
        "method": "dop853", "rtol": 1e-3, "atol": 1e-5, "points": 11}
    default, err = _cli(capsys, tmp_path / "default")
    pd.testing.assert_frame_equal(default, _python(), check_exact=True)
    assert "each run by dopri5 at rtol 1e-06, atol 1e-09, 101 output times" in err
    tight, _ = _cli(capsys, tmp_path / "tight", "--rtol", "1e-10", "--atol", "1e-12")
    pd.testing.assert_frame_equal(tight, _python(rtol=1e-10, atol=1e-12), check_exact=True)
    # the tolerance matters: the loose run is off the tight one by more than the tight one's own error
    assert np.abs(loose["final_theta"] - tight["final_theta"]).max() > 1e-4


@pytest.mark.parametrize("options, fragment", [
    (["--method", "rk4"], "method 'rk4' takes a fixed step (dt), which a sweep does not set"),
    (["--method", "nosuch"], "invalid choice: 'nosuch'"),
    (["--rtol", "0"], "rtol must be > 0"),
    (["--rtol", "abc"], "--rtol: unknown name"),
    (["--atol", "-1"], "atol must be >= 0"),
    (["--points", "1"], "--points must be at least 2, got 1"),
    (["--points", "many"], "--points: invalid int value"),
])
def test_bad_integration_options_are_refused_before_any_work(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                            options: list[str], fragment: str) -> None:
    out = tmp_path / "never"
    code, _, err = run(capsys, "sweep", "pendulum", *OVER, "--t-final", "3", "--out", str(out), *options)
    assert code == 2 and fragment in one_line(err)
    assert not out.exists()


def test_swept_angles_may_be_given_in_degrees(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "sweep", "pendulum", "--x0", "theta=0deg:180deg:5", "--t-final", "0.5", "--out",
                       str(tmp_path / "deg"))
    assert code == 0, err
    np.testing.assert_array_equal(load_sweep(tmp_path / "deg")["theta"], np.linspace(0.0, math.pi, 5))
    code, _, err = run(capsys, "sweep", "pendulum", "--param", "l=1deg:2deg:2", "--t-final", "0.5", "--out",
                       str(tmp_path / "bad"))
    assert code == 2 and "--param l=1deg: l is not an angle (its unit is 'm')" in one_line(err)
    code, _, err = run(capsys, "sweep", "pendulum", "--x0", "theta=0:180:2", "--t-final", "0.5", "--out",
                       str(tmp_path / "rad"))
    assert code == 0 and "robodyn: warning: --x0 theta=180: angles are in rad" in err
    assert robodyn.load_sweep(tmp_path / "rad")["theta"].max() == 180.0
