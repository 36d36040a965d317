"""Chains compiled from their straight-line tape: cold start, per-call speed and growth with the size.

Side by side in one run (each cold measurement in a fresh process with an empty robodyn cache):

- Puma 560 (tests/data/puma560.yaml: standard DH, Corke's dynamic parameters, motor inertia and viscous
  friction): load + first ``linearize`` on a cold cache (goal <= 2 s), then per call (goal <= 50 us),
  and ``linearize`` against ``model.jacobians`` (goal: equal to 1e-12);
- Panda as a chain with float rpy from its URDF (tests/data/panda_chain.yaml): load + first
  ``simulate`` on a cold cache (goal <= 10 s), a 5 s run at rtol 1e-8 (goal <= 15 ms), its accepted steps
  against scipy's RK45 on the same f (the kernels use scipy's step control: the same steps), and
  scipy's time for reference;
- planar chains of n = 5, 10, 20, 30 links: build + compile + first linearize on a cold cache (goal:
  n = 30 ready in <= 60 s), the tape's size, and the cost of one f evaluation inside the compiled
  kernels (fixed-step RK4: run time / evaluations) — the table shows the growth with n (goal: O(n^2) or
  better per evaluation).

    python benchmarks/bench_chain.py [--quick]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import textwrap
from pathlib import Path

from timing import run_cold  # benchmarks/timing.py (the script's folder is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
PUMA = ROOT / "tests" / "data" / "puma560.yaml"
PANDA = ROOT / "tests" / "data" / "panda_chain.yaml"

COLD_LINEARIZE = textwrap.dedent("""
    import json, sys, time
    start = time.perf_counter()
    import numpy as np
    import robodyn
    from timing import best_of
    model = robodyn.load(sys.argv[1])
    x = np.linspace(-1.0, 1.0, model.n_states); u = np.linspace(0.5, -0.5, model.n_inputs)
    linear = robodyn.linearize(model, x, u)
    first = time.perf_counter() - start
    A, B = model.jacobians(0.0, x, u)
    agree = max(float(np.abs(linear.A - A).max()), float(np.abs(linear.B - B).max()))
    per_call = best_of(lambda: robodyn.linearize(model, x, u), 5, 2000)
    print(json.dumps({"first": first, "per_call": per_call, "agree": agree, "method": linear.method}))
""")

COLD_SIMULATE = textwrap.dedent("""
    import json, sys, time
    start = time.perf_counter()
    import numpy as np
    import robodyn
    from timing import best_of
    model = robodyn.load(sys.argv[1])
    x0 = np.zeros(model.n_states); x0[:7] = [0.3, -0.5, 0.4, -1.8, 0.2, 1.2, 0.6]; x0[7:] = 0.5
    run = robodyn.simulate(model, 5.0, x0, rtol=1e-8, atol=1e-10)
    first = time.perf_counter() - start
    per_run = best_of(lambda: robodyn.simulate(model, 5.0, x0, rtol=1e-8, atol=1e-10), 5, 3)
    from scipy.integrate import solve_ivp
    p, u = model.parameter_vector(), np.zeros(model.n_inputs)
    t = time.perf_counter()
    reference = solve_ivp(lambda t, x: model.f_raw(t, x, u, p), (0.0, 5.0), x0, rtol=1e-8, atol=1e-10)
    scipy_time = time.perf_counter() - t
    print(json.dumps({"first": first, "per_run": per_run, "steps": run.stats.steps, "rejected": run.stats.rejected,
                      "scipy_steps": len(reference.t) - 1, "scipy_time": scipy_time,
                      "difference": float(np.abs(reference.y[:, -1] - run.x[-1]).max())}))
""")

COLD_PLANAR = textwrap.dedent("""
    import json, sys, time
    start = time.perf_counter()
    import numpy as np
    import robodyn
    from robodyn.mechanisms.chain.system import ChainSystem
    n = int(sys.argv[1])
    joints = [{"name": f"q{i}", "parent": f"l{i - 1}" if i else "base", "child": f"l{i}", "axis": [0, 0, 1],
               "xyz": [1.0 / n if i else 0.0, 0, 0], "damping": 0.01 / n**2} for i in range(n)]
    links = [{"name": "base"}] + [{"name": f"l{i}", "mass": 1.0 / n, "com": [0.5 / n, 0, 0],
                                   "inertia": {"ixx": 1e-4, "iyy": 1e-3 / n, "izz": 1e-3 / n}} for i in range(n)]
    model = ChainSystem(joints, links, gravity=[0, -9.81, 0], name=f"planar{n}")
    x = np.concatenate([np.linspace(-0.5, 0.5, n), np.zeros(n)]); u = np.zeros(model.n_inputs)
    linear = robodyn.linearize(model, x, u)
    ready = time.perf_counter() - start
    nodes = {name: len(model._program.tape.cone(model._program.outputs(name))) for name in ("rhs", "jacobians")}
    t = time.perf_counter()
    run = robodyn.simulate(model, 0.01, x, method="rk4", dt=1e-4)
    kernel_compile = time.perf_counter() - t
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        run = robodyn.simulate(model, 0.2, x, method="rk4", dt=1e-4)
        best = min(best, time.perf_counter() - t)
    print(json.dumps({"ready": ready, "nodes": nodes, "kernel_compile": kernel_compile,
                      "per_f": best / run.stats.nfev, "nfev": run.stats.nfev}))
""")


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="planar chains up to n = 10 only")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# bench_chain {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {platform.processor() or 'cpu'}, "
          f"{os.cpu_count()} cores, load {load:.2f}")

    puma = run_cold(COLD_LINEARIZE, str(PUMA))
    print("Puma 560 (6 joints, DH, motor inertia and friction), cold cache")
    print(f"  load + first linearize: {puma['first']:.2f} s   (goal <= 2 s: {verdict(puma['first'] <= 2.0)})")
    print(f"  linearize per call:     {puma['per_call'] * 1e6:.1f} us  (goal <= 50 us: "
          f"{verdict(puma['per_call'] <= 50e-6)})")
    print(f"  |linearize - jacobians| = {puma['agree']:.1e} (method {puma['method']}; goal <= 1e-12: "
          f"{verdict(puma['agree'] <= 1e-12)})")

    panda = run_cold(COLD_SIMULATE, str(PANDA))
    print("Panda chain (7 joints, float rpy from the URDF), 5 s at rtol 1e-8, cold cache")
    first, run, scipy_time = panda["first"], panda["per_run"], panda["scipy_time"]
    print(f"  load + first simulate (compile): {first:.2f} s (goal <= 10 s: {verdict(first <= 10.0)})")
    print(f"  5 s run: {run * 1e3:.1f} ms (goal <= 15 ms: {verdict(run <= 15e-3)}); "
          f"scipy RK45 on the same f: {scipy_time * 1e3:.0f} ms, ratio {scipy_time / run:.0f}x")
    same = panda["steps"] == panda["scipy_steps"]
    print(f"  accepted steps: robodyn {panda['steps']} ({panda['rejected']} rejected), scipy RK45 "
          f"{panda['scipy_steps']} ({verdict(same)}); final states differ by {panda['difference']:.1e}")

    sizes = (5, 10) if args.quick else (5, 10, 20, 30)
    print("planar chains, cold cache: build + compile + first linearize, and one f evaluation in the kernels")
    print(f"  {'n':>3} {'ready s':>8} {'rhs nodes':>10} {'jac nodes':>10} {'kernel s':>9} {'f us':>8} "
          f"{'f / n^2 ns':>11}")
    rows = []
    for n in sizes:
        row = run_cold(COLD_PLANAR, str(n))
        rows.append((n, row))
        print(f"  {n:>3} {row['ready']:>8.2f} {row['nodes']['rhs']:>10} {row['nodes']['jacobians']:>10} "
              f"{row['kernel_compile']:>9.2f} {row['per_f'] * 1e6:>8.2f} {row['per_f'] / n**2 * 1e9:>11.1f}")
    (n_small, small), (n_big, big) = rows[0], rows[-1]
    growth = (big["per_f"] / small["per_f"]) / (n_big / n_small) ** 2
    print(f"  f cost grew {big['per_f'] / small['per_f']:.1f}x for {n_big / n_small:.0f}x the links: "
          f"{growth:.2f} of quadratic growth (goal O(n^2) or better: {verdict(growth <= 1.25)})")
    if not args.quick:
        print(f"  n = 30 ready in {big['ready']:.1f} s (goal <= 60 s: {verdict(big['ready'] <= 60.0)})")


if __name__ == "__main__":
    main()
