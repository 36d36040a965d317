"""docs/identification.md's worked example (the Panda's base parameters from a simulated excitation), timed by stage,
with OpenBLAS's default threads and with one thread, side by side in one run.

Run: ``python benchmarks/bench_identify_example.py [--cold]`` (``--cold``: each side in a new ROBODYN_CACHE_DIR, so the
Panda's regressor is compiled first, as on a new machine). Each side runs in a process of its own (the thread count
is read when numpy loads); the ratio is the default's time over one thread's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

STAGES = r'''
import importlib.metadata, json, time
from pathlib import Path
start = time.perf_counter()
import numpy as np
import robodyn
times, last = {}, [start]
def lap(name):
    now = time.perf_counter(); times[name] = now - last[0]; last[0] = now
robots = Path(str(importlib.metadata.distribution("example-robot-data").locate_file(
    "cmeel.prefix/share/example-robot-data/robots")))
panda = robodyn.load(str(robots / "panda_description/urdf/panda.urdf"))
base = robodyn.base_parameters(panda); lap("load, base_parameters")
excitation = robodyn.design_excitation(panda, velocity_limits=1.0, period=8.0, harmonics=3, maxiter=15, base=base)
lap("design_excitation")
t = np.arange(0.0, 4 * excitation.period, 1 / 200.0)
q, qd, qdd = excitation.sample(t)
truth = robodyn.regressor(panda, q, qd, qdd).torques
sigma = 0.05 + 0.01 * np.abs(truth).max(axis=0)
tau = truth + sigma * np.random.default_rng(0).standard_normal(truth.shape)
lap("regressor")
found = robodyn.identify_rigid(panda, {"t": t, "q": q, "qd": qd, "qdd": qdd, "tau": tau}, base=base)
lap("identify_rigid")
robodyn.consistent_parameters(panda, base, found.estimate, standard_errors=found.standard_errors)
lap("consistent_parameters")
times["total"] = time.perf_counter() - start
print(json.dumps(times))
'''


def _side(threads: str | None, cold: bool) -> dict[str, float]:
    env = dict(os.environ)
    env.pop("OPENBLAS_NUM_THREADS", None)
    if threads is not None:
        env["OPENBLAS_NUM_THREADS"] = threads
    with tempfile.TemporaryDirectory() as cache:
        if cold:
            env["ROBODYN_CACHE_DIR"] = cache
        done = subprocess.run([sys.executable, "-c", STAGES], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true", help="a new robodyn cache for each side")
    args = parser.parse_args()
    default, single = _side(None, args.cold), _side("1", args.cold)
    print(f"{'stage':<24}{'default threads':>18}{'one thread':>14}{'ratio':>8}   (load {os.getloadavg()[0]:.1f})")
    for stage in default:
        print(f"{stage:<24}{default[stage]:>16.2f} s{single[stage]:>12.2f} s{default[stage] / single[stage]:>8.1f}")


if __name__ == "__main__":
    main()
