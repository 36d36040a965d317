"""Sweeps on one machine (robodyn.sweep): grids and seeded samples, reducers against single runs, Parquet parts
with a manifest, resume, and bad input refused before anything is written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import robodyn
from robodyn.cli import main
from robodyn.sweep import load_sweep, parse_range, sweep

THETA = np.linspace(-2.5, 2.5, 7)


def test_a_grid_sweep_equals_single_runs_reduced_here() -> None:
    table = sweep("pendulum", {"theta": THETA, "l": [0.5, 2.0]}, 3.0, reduce=["final", "max_abs", "settling_time"],
                  chunk_size=5, rtol=1e-9, atol=1e-12)
    assert len(table) == 14 and list(table["sample"]) == list(range(14))
    assert list(table.columns[:3]) == ["sample", "theta", "l"]
    pendulum = robodyn.load("pendulum")
    t = np.linspace(0.0, 3.0, 101)
    for row in table.itertuples():
        run = robodyn.simulate(pendulum, 3.0, {"theta": row.theta}, params={"l": row.l}, rtol=1e-9, atol=1e-12,
                               t_eval=t)
        np.testing.assert_allclose([row.final_theta, row.final_theta_dot], run.final, rtol=0, atol=1e-9)
        assert row.max_abs_theta == pytest.approx(np.max(np.abs(run.x[:, 0])), abs=1e-9)
        deviation = np.max(np.abs(run.x - run.final), axis=1)
        outside = np.flatnonzero(deviation > 0.02 * deviation.max())
        settled = t[min(outside[-1] + 1, t.size - 1)] if outside.size else t[0]
        assert row.settling_time == pytest.approx(settled)
    # the grid is the product: theta varies slowest, l fastest
    np.testing.assert_array_equal(table["theta"].to_numpy(), np.repeat(THETA, 2))
    np.testing.assert_array_equal(table["l"].to_numpy(), np.tile([0.5, 2.0], 7))


def test_samples_are_seeded_and_independent_of_the_chunking() -> None:
    over = {"theta": (-1.0, 1.0), "theta_dot": (0.0, 2.0)}
    a = sweep("pendulum", over, 1.0, samples=50, seed=7, chunk_size=50)
    b = sweep("pendulum", over, 1.0, samples=50, seed=7, chunk_size=50)
    pd.testing.assert_frame_equal(a, b)
    assert a["theta"].between(-1, 1).all() and a["theta_dot"].between(0, 2).all()
    assert not a.equals(sweep("pendulum", over, 1.0, samples=50, seed=8, chunk_size=50))


def test_converged_maps_a_region_of_attraction() -> None:
    table = sweep("joint", {"q": [-1.0, 1.0], "q_dot": [0.0]}, 10.0, reduce=["converged"], tolerance=1e-3)
    assert table["converged"].tolist() == [1.0, 1.0]  # the damped joint comes to rest at 0
    table = sweep("pendulum", {"theta": [0.5]}, 5.0, reduce=["converged"])
    assert table["converged"].tolist() == [0.0]  # the undamped pendulum keeps swinging


def test_parts_manifest_resume_and_load(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    first = sweep("pendulum", {"theta": THETA}, 1.0, out=out, chunk_size=3)
    parts = sorted(p.name for p in out.glob("part-*.parquet"))
    assert parts == ["part-000000.parquet", "part-000001.parquet", "part-000002.parquet"]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["model"] == "pendulum" and manifest["samples"] == 7 and len(manifest["model_sha256"]) == 64
    assert manifest["robodyn"] == robodyn.__version__
    times = {p: p.stat().st_mtime_ns for p in out.glob("part-*.parquet")}
    (out / "part-000001.parquet").unlink()  # as if the run had stopped there
    again = sweep("pendulum", {"theta": THETA}, 1.0, out=out, chunk_size=3)
    pd.testing.assert_frame_equal(first, again)
    assert all(p.stat().st_mtime_ns == t for p, t in times.items() if p.name != "part-000001.parquet")  # only
    assert (out / "part-000001.parquet").exists()  # the missing chunk ran again
    pd.testing.assert_frame_equal(load_sweep(out), first)
    with pytest.raises(robodyn.InputError, match="holds another sweep"):
        sweep("pendulum", {"theta": THETA[:3]}, 1.0, out=out, chunk_size=3)
    assert not list(out.glob(".*.tmp"))


def test_callable_reducers_and_their_errors(tmp_path: Path) -> None:
    def energy_proxy(batch: robodyn.BatchTrajectory) -> np.ndarray:
        return np.max(batch.x[:, :, 1] ** 2, axis=1)

    table = sweep("pendulum", {"theta": [0.1, 0.2, 0.3]}, 1.0, reduce=["final", energy_proxy])
    assert "energy_proxy" in table.columns and (table["energy_proxy"] > 0).all()

    def broken(batch: robodyn.BatchTrajectory) -> np.ndarray:
        raise ZeroDivisionError("no")

    with pytest.raises(robodyn.InputError, match=r"reducer 'broken' raised ZeroDivisionError: no"):
        sweep("pendulum", {"theta": [0.1, 0.2]}, 1.0, reduce=[broken])
    with pytest.raises(robodyn.InputError, match="reducer 'broken'"):
        sweep("pendulum", {"theta": [0.1, 0.2]}, 1.0, reduce=[broken], out=tmp_path / "failed")
    assert not (tmp_path / "failed").exists()  # nothing was written: no folder left behind


@pytest.mark.parametrize(("over", "options", "message"), [
    ({"thetta": [0.1]}, {}, r"'thetta' is not a parameter, state or input.*did you mean 'theta'"),
    ({"theta": []}, {}, "must be finite numbers"),
    ({"theta": [np.nan]}, {}, "must be finite numbers"),
    ({"theta": (1.0, 0.0)}, {"samples": 10}, r"is not a range"),
    ({"theta": [0.1]}, {"reduce": ["best"]}, "unknown reducer 'best'"),
    ({}, {}, "nothing to sweep"),
    ({"theta": [0.1]}, {"samples": 0}, "samples must be a whole number"),
    ({"I": [1.0]}, {}, "'I' is not a parameter, state or input"),  # derived: follows m and l
])
def test_bad_sweeps_are_refused(tmp_path: Path, over: dict, options: dict, message: str) -> None:
    out = tmp_path / "never"
    with pytest.raises(robodyn.InputError, match=message):
        sweep("pendulum", over, 1.0, out=out, **options)
    assert not out.exists()  # refused before anything was written


def test_ranges_parse_as_promised() -> None:
    np.testing.assert_array_equal(parse_range("-3:3:7", "--x0"), np.linspace(-3, 3, 7))
    np.testing.assert_array_equal(parse_range("pi", "--x0"), [np.pi])
    for text in ("1:2", "1:2:0", "1:2:x", "1:2:3.5"):
        with pytest.raises(robodyn.InputError):
            parse_range(text, "--x0")


def test_the_command_line_writes_the_table_and_a_heat_map(capsys: pytest.CaptureFixture[str], tmp_path: Path
                                                          ) -> None:
    out = tmp_path / "roa"
    assert main(["sweep", "joint", "--x0", "q=-1:1:4", "--x0", "q_dot=-1:1:3", "--t-final", "5", "--reduce",
                 "final,converged", "--out", str(out)]) == 0
    assert "12 trajectories over q, q_dot" in capsys.readouterr().out
    assert (out / "summary.png").read_bytes()[:4] == b"\x89PNG"
    assert len(robodyn.load_sweep(out)) == 12
    with pytest.raises(SystemExit) as failed:
        main(["sweep", "joint", "--x0", "q=1:2", "--t-final", "5", "--out", str(tmp_path / "bad")])
    assert failed.value.code == 2 and "start:stop:count" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()
    assert os.path.isdir(out)


def test_first_event_times() -> None:
    table = sweep("pendulum", {"theta": [0.5, 2.0]}, 3.0, reduce=["first_event"], events=["theta_dot - 2"])
    pendulum = robodyn.load("pendulum")
    for row in table.itertuples():
        run = robodyn.simulate(pendulum, 3.0, {"theta": row.theta}, events=["theta_dot - 2"])
        expected = run.events[0].t if run.events else np.nan
        np.testing.assert_allclose(row.first_event, expected, rtol=1e-9, equal_nan=True)
    # a 0.5 rad swing peaks at sqrt(2 g (1 - cos 0.5)) = 1.55 rad/s: no event; a 2 rad one at 5.27 rad/s
    assert np.isnan(table["first_event"][0]) and np.isfinite(table["first_event"][1])
    with pytest.raises(robodyn.InputError, match="needs events"):
        sweep("pendulum", {"theta": [0.5]}, 1.0, reduce=["first_event"])


def test_inputs_and_feedback_gains_are_swept_per_trajectory() -> None:
    pendulum = robodyn.load("pendulum")
    table = sweep("pendulum", {"tau": [0.0, 2.0], "theta": [0.1, 0.3]}, 1.0, reduce=["final"], rtol=1e-9,
                  atol=1e-12)
    for row in table.itertuples():
        run = robodyn.simulate(pendulum, 1.0, {"theta": row.theta}, {"tau": row.tau}, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose([row.final_theta, row.final_theta_dot], run.final, rtol=0, atol=1e-9)
    upright = np.array([np.pi, 0.0])
    K = np.array([[20.0, 5.0]])
    feedback = robodyn.StateFeedback(K, x_ref=upright)
    gains = sweep("pendulum", {"K[0,0]": [5.0, 20.0]}, 10.0, x0={"theta": np.pi + 0.3}, feedback=feedback,
                  reduce=["converged"], target={"theta": np.pi}, rtol=1e-9, atol=1e-12)
    # k1 = 5 < m g l = 9.81 cannot hold the pendulum up; k1 = 20 can
    assert gains["converged"].tolist() == [0.0, 1.0]
    with pytest.raises(robodyn.InputError, match="names no gain"):
        sweep("pendulum", {"K[0,5]": [1.0]}, 1.0, feedback=feedback)


def test_energy_drift_of_an_undamped_pendulum_is_the_integration_error() -> None:
    table = sweep("pendulum", {"theta": [0.5, 2.5]}, 5.0, reduce=["energy_drift"], rtol=1e-10, atol=1e-12)
    pendulum = robodyn.load("pendulum")
    energy = sum(pendulum.energy([2.5, 0.0]))  # potential at the start: the scale of the energy exchanged
    assert (table["energy_drift"] < 1e-8 * abs(energy)).all() and (table["energy_drift"] > 0).any()
    with pytest.raises(robodyn.InputError, match="needs a model with energies"):
        sweep("joint", {"q": [0.5]}, 1.0, reduce=["energy_drift"])


def test_a_one_trajectory_chunk_is_still_a_batch() -> None:
    seen = []

    def rows(batch: robodyn.BatchTrajectory) -> np.ndarray:
        seen.append(batch.x.shape[0])
        return batch.x[:, -1, 0]

    table = sweep("pendulum", {"theta": [0.1, 0.2, 0.3]}, 1.0, reduce=["final", rows], chunk_size=2)
    assert seen == [2, 1]  # the last chunk holds one trajectory
    np.testing.assert_array_equal(table["rows"], table["final_theta"])


def test_robodyn_sweep_is_callable_whatever_was_imported_first():
    """Importing the module robodyn.sweep binds its name in the package over the function (issue 22's probe):
    robodyn.sweep(...) must work after robodyn.load_sweep, `import robodyn.sweep` or `from robodyn.sweep import`."""
    import subprocess
    import sys

    script = ("import robodyn, robodyn.sweep\nfrom robodyn.sweep import parse_range\nrobodyn.load_sweep\n"
              "import robodyn.sweep as module\nassert callable(module.load_sweep)\n"
              "print(len(robodyn.sweep('pendulum', {'theta': [0.5, 1.0]}, 0.5, progress=False)))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "2", done.stderr
