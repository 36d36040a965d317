"""What robodyn simulate writes and prints of a run (robodyn.cli.run_output), shared by its full and quick paths."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from robodyn.cli.run_output import Work, print_run, print_written, run_summary, values_text, write_csv
from robodyn.results.csv_text import csv_text
from robodyn.results.trajectory import SimulationStats


def test_work_has_the_fields_of_simulation_stats_in_their_order():
    """The quick path's statistics are the full path's (the hint aside: a run that may earn it goes the full way)."""
    names = [f.name for f in dataclasses.fields(SimulationStats) if f.name != "hint"]
    assert list(Work._fields) == names
    assert Work("compiled", "dopri5")._asdict() == {k: v for k, v in SimulationStats("compiled", "dopri5").to_dict()
                                                    .items() if k != "hint"}


@pytest.mark.parametrize("work, expected", [
    (Work("exact", "exact"), "exact (matrix exponential) over [0, 2.5] at 11 output times"),
    (Work("compiled", "dopri5", 236, 31, 8, 0.0123, from_cache=True),
     "dopri5 (compiled) over [0, 2.5]: 31 steps, 8 rejected, 236 evaluations, kernel loaded from cache in 0.01 s"),
    (Work("compiled", "dopri5", 10, 2, 0), "dopri5 (compiled) over [0, 2.5]: 2 steps, 0 rejected, 10 evaluations, "
                                          "kernel already compiled"),
    (Work("compiled", "radau", 50, 9, 1, 1.5, njev=3, nlu=4), "radau (compiled) over [0, 2.5]: 9 steps, 1 rejected, "
                                                             "50 evaluations, 3 Jacobians, 4 LU factorizations, "
                                                             "compile 1.50 s"),
    (Work("interpreted", "rk4", 40, 10), "rk4 (interpreted) over [0, 2.5]: 10 steps, 0 rejected, 40 evaluations"),
])
def test_the_summary_line_of_each_path(work, expected):
    assert run_summary(work, 0.0, 2.5, 11) == expected
    stats = SimulationStats(**work._asdict())  # the full path's statistics give the same line
    assert run_summary(stats, np.float64(0.0), np.float64(2.5), 11) == expected


def test_the_csv_is_the_trajectorys_and_goes_to_a_file_or_stdout(tmp_path, capsys):
    rows = [[0.0, 1.0, -0.5], [0.1, 0.04, 1e-300]]
    text = csv_text(["t", "q", "q_dot"], rows)
    assert text == "t,q,q_dot\n0.0,1.0,-0.5\n0.1,0.04,1e-300\n"
    write_csv(str(tmp_path / "a.csv"), ["t", "q", "q_dot"], iter(rows))
    assert (tmp_path / "a.csv").read_text(encoding="utf-8") == text
    write_csv("-", ["t", "q", "q_dot"], rows)
    assert capsys.readouterr().out == text


def test_the_report_lines(capsys):
    print_run("joint", "the summary", ["q", "q_dot"], [1 / 3, np.float64(-2e-12)])
    print_run("block", "the summary", ["y"], [7.0], what="final outputs")
    print_written(["a.csv", None, "b.png"])
    assert capsys.readouterr().out == ("joint: the summary\nfinal state: q = 0.3333333333, q_dot = -2e-12\n"
                                       "block: the summary\nfinal outputs: y = 7\nwrote a.csv\nwrote b.png\n")
    assert values_text(["a", "b"], [1.0, 2.5]) == "a = 1, b = 2.5"
