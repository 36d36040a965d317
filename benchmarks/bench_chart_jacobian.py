"""The compile time of a floating robot's implicit-method Jacobian: forward mode over the whole chart rhs against
the analytical tangent-space linearization (robodyn.mechanisms.floating.chart.ChartModel.kernel_jacobian_source), each
compiled
by LLVM into a fresh cache, and one radau run of the standing quadruped with each (same steps).

Run: ``python benchmarks/bench_chart_jacobian.py`` (about two minutes: the forward-mode tape takes most of it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import math, sys, time
import numpy as np
import robodyn
from robodyn.mechanisms.floating import chart as chart_module
from robodyn.model.compiled import jacobian_module

if sys.argv[1] == "forward":  # the whole chart rhs by forward mode (the code before the analytical Jacobian)
    def forward(self):
        tape, _ = self.robot._tape
        rows = tape.derive(self.robot.tape_outputs("chart_rhs"),
                           [*tape.leaves(1, self.n_states), *tape.leaves(2, self.n_inputs)])
        return self._source("jac", "chart_jac", [e for row in rows for e in row])
    chart_module.ChartModel.kernel_jacobian_source = forward
model = robodyn.load(sys.argv[2])
chart = model.chart()
start = time.perf_counter()
module = jacobian_module(chart)
n = chart.n_states
out = np.empty(n * (n + chart.n_inputs))
x = chart.lift(model.state_vector({"base_qw": 1.0, "base_z": 0.25}, default=0.0))
module.jac(0.0, x, np.zeros(chart.n_inputs), model.parameter_vector(None), out)
compiled = time.perf_counter() - start
par = model.parameters
legs = ("lf", "rf", "lh", "rh")
x0 = {"base_z": 2 * par["l"] * math.cos(par["hip_rest"]) + 0.01, "base_qw": 1.0,
      **{f"{leg}_hip": par["hip_rest"] for leg in legs}, **{f"{leg}_knee": par["knee_rest"] for leg in legs}}
run = robodyn.simulate(model, 1.0, x0, method="radau", rtol=1e-6, atol=1e-8)
start = time.perf_counter()
run = robodyn.simulate(model, 1.0, x0, method="radau", rtol=1e-6, atol=1e-8)
print(f"{compiled:.1f} {time.perf_counter() - start:.4f} {run.stats.steps} {run.stats.rejected}")
"""


def main() -> None:
    model = str(ROOT / "examples" / "quadruped_standing.yaml")
    load = os.getloadavg()[0]
    print(f"quadruped_standing (nv 14, four compliant feet), load {load:.2f}")
    results = {}
    for which in ("forward", "analytical"):
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "ROBODYN_CACHE_DIR": cache, "PYTHONPATH": str(ROOT / "src")}
            done = subprocess.run([sys.executable, "-c", CHILD, which, model], capture_output=True, text=True,
                                  env=env, check=True)
            compiled, seconds, steps, rejected = done.stdout.split()
            results[which] = float(compiled)
            print(f"  {which:>10}: Jacobian compiled in {compiled} s; radau 1 s: {float(seconds) * 1e3:.1f} ms, "
                  f"{steps} steps, {rejected} rejected")
    print(f"  analytical / forward compile time: {results['analytical'] / results['forward']:.2f}")


if __name__ == "__main__":
    main()
