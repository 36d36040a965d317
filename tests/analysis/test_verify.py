"""verify (robodyn.analysis.verify): the table shows the step sizes behind each error, and the convergence
plot draws each reference slope beside its data (not under it)."""

from __future__ import annotations

import numpy as np

import robodyn


def test_the_table_prints_the_step_sizes_and_the_plot_separates_the_slopes() -> None:
    result = robodyn.verify(robodyn.load("joint"), methods=("euler", "rk4"))
    lines = result.table().splitlines()
    for check in result.checks:
        row = lines.index(next(line for line in lines if line.startswith(check.method)))
        steps = [float(v) for v in lines[row + 1].split("=")[1].split()]
        np.testing.assert_allclose(steps, check.steps, rtol=5e-3)  # printed to 3 digits
    axes = result.plot().axes[0]
    data, reference = axes.get_lines()[0::2], axes.get_lines()[1::2]
    for measured, slope in zip(data, reference):
        ratio = np.asarray(measured.get_ydata()) / np.asarray(slope.get_ydata())
        assert np.all(ratio > 2.0)  # the dashed slope runs below the data: both visible

