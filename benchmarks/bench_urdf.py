"""URDF robots on the compiled tape against scipy's RK45 calling Pinocchio, side by side in one run.

Robots from example-robot-data: the Panda arm (its fingers made fixed joints, so that Pinocchio, whose
``aba`` refuses mimic joints, integrates the same 7-joint system) and the UR5, each with a viscous
damping of 0.5 N m s/rad on every joint (read from ``<dynamics damping>`` by robodyn, applied as
tau = -b q' around ``pinocchio.aba``, which ignores it: undamped arms falling under gravity are chaotic
over 5 s, and rounding alone would make the two runs part). For each, 5 s from a non-trivial state at
rtol 1e-8, atol 1e-10:

- robodyn ``simulate`` (dopri5, compiled from the tape) against scipy ``solve_ivp`` RK45 with
  ``pinocchio.aba`` as the right-hand side: time ratio (goal >= 10x) and accepted steps (goal: equal —
  both use the same step-size control);
- load + first simulate in a fresh process with an empty cache (goal <= 10 s);
- ``linearize`` per call (goal <= 30 us), and the in-place ``Linearizer`` per call, beside Pinocchio's
  ``computeABADerivatives`` alone and with A and B assembled into preallocated arrays (issue 25's yardsticks:
  linearize <= the assembled call, the Linearizer <= the bare one);
- 1,000 Panda trajectories in one batch (both cores) against 1,000 scipy runs (extrapolated from 20).

    python benchmarks/bench_urdf.py [--quick | --linearize]
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import os
import re
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from timing import best_of, run_cold  # benchmarks/timing.py

ROOT = Path(__file__).resolve().parents[1]
T_FINAL, RTOL, ATOL = 5.0, 1e-8, 1e-10
DAMPING = 0.5  # N m s/rad on every joint

COLD = textwrap.dedent("""
    import json, sys, time
    start = time.perf_counter()
    import numpy as np
    import robodyn
    model = robodyn.load(sys.argv[1])
    x0 = np.concatenate([np.linspace(0.4, -0.4, model.n_coordinates), np.full(model.n_coordinates, 0.3)])
    robodyn.simulate(model, 5.0, x0, rtol=1e-8, atol=1e-10)
    print(json.dumps({"first": time.perf_counter() - start}))
""")


def robots() -> dict[str, Path]:
    folder = Path(str(importlib.metadata.distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots")))
    panda = (folder / "panda_description/urdf/panda.urdf").read_text(encoding="utf-8")
    arm = re.sub(r'(<joint name="panda_finger_joint[12]" type=)"prismatic"', r'\1"fixed"', panda)
    ur5 = (folder / "ur_description/urdf/ur5_robot.urdf").read_text(encoding="utf-8")
    result = {}
    for label, text in (("panda (fingers fixed)", arm), ("ur5", ur5)):
        text = re.sub(r"<dynamics[^>]*/>", "", text)
        text = re.sub(r'(<joint name="[^"]*" type="(revolute|continuous)">)', rf'\1<dynamics damping="{DAMPING}"/>',
                      text)
        path = Path(tempfile.mkdtemp()) / f"{label.split()[0]}_damped.urdf"
        path.write_text(text, encoding="utf-8")
        result[label] = path
    return result


def compare_puma() -> None:
    """The Puma 560 chain (tests/data/puma560.yaml: DH, motor inertia, viscous friction): ``linearize`` and the
    ``Linearizer`` beside Pinocchio's ``computeABADerivatives`` on the same robot built joint by joint
    (tests/pinocchio_reference.py), alone and with A and B assembled (the friction enters dq''/dv as -M^-1 b)."""
    import warnings

    import pinocchio as pin

    import robodyn

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from pinocchio_reference import chain_to_pinocchio

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the file's own plausibility warning (a link's inertia)
        model = robodyn.load(str(Path(__file__).resolve().parents[1] / "tests" / "data" / "puma560.yaml"))
    reference, damping, order = chain_to_pinocchio(model)
    data = reference.createData()
    n = model.n_coordinates
    x0 = np.concatenate([np.linspace(0.4, -0.4, n), np.full(n, 0.3)])
    u = np.zeros(n)
    q, v = x0[:n][order], x0[n:][order]
    handle = robodyn.Linearizer(model)
    bare, assembled = _pinocchio_derivatives(pin, reference, data, q, v, damping)
    runs = {"linearize": lambda: robodyn.linearize(model, x0, u), "Linearizer": lambda: handle(x0, u),
            "computeABADerivatives": bare, "assembled": assembled}
    best = _interleaved_per_call(runs, 7, 2000)
    print(f"puma560 chain: {n} joints")
    print(f"  per call: linearize {best['linearize'] * 1e6:.1f} us, Linearizer {best['Linearizer'] * 1e6:.1f} us | "
          f"pinocchio computeABADerivatives {best['computeABADerivatives'] * 1e6:.1f} us, with A and B assembled "
          f"{best['assembled'] * 1e6:.1f} us | linearize / assembled {best['linearize'] / best['assembled']:.2f}, "
          f"Linearizer / bare {best['Linearizer'] / best['computeABADerivatives']:.2f}")


def _interleaved_per_call(runs: dict[str, Callable[[], Any]], rounds: int, number: int) -> dict[str, float]:
    """Best seconds per call of each of ``runs``, over ``rounds`` rounds of ``number`` calls that run them in turn."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(rounds):
        for name, run in runs.items():
            best[name] = min(best[name], best_of(run, 1, number))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100 trajectories in the batch comparison")
    parser.add_argument("--linearize", action="store_true", help="only linearize and the Linearizer beside Pinocchio")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# bench_urdf {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
          f"load {load:.2f}; 5 s at rtol 1e-8, atol 1e-10")
    for label, path in robots().items():
        if args.linearize:
            compare_linearize(label, path)
        else:
            compare(label, path, 100 if args.quick else 1000)
    compare_puma()


def compare_linearize(label: str, path: Path) -> None:
    """``linearize`` and the ``Linearizer`` of one robot beside Pinocchio's derivatives, alone and assembled."""
    import pinocchio as pin

    import robodyn
    model = robodyn.load(str(path))
    reference = pin.buildModelFromUrdf(str(path))
    data = reference.createData()
    n = model.n_coordinates
    x0 = np.concatenate([np.linspace(0.4, -0.4, n), np.full(n, 0.3)])
    u = np.zeros(n)
    robodyn.linearize(model, x0, u)
    handle = robodyn.Linearizer(model)
    bare, assembled = _pinocchio_derivatives(pin, reference, data, x0[:n], x0[n:], DAMPING)
    best = _interleaved_per_call({"linearize": lambda: robodyn.linearize(model, x0, u), "Linearizer": lambda:
                                  handle(x0, u), "bare": bare, "assembled": assembled}, 7, 2000)
    per_linearize, per_handle, per_aba, per_assembled = best.values()
    print(f"{label}: {n} joints")
    print(f"  per call: linearize {per_linearize * 1e6:.1f} us, Linearizer {per_handle * 1e6:.1f} us | pinocchio "
          f"computeABADerivatives {per_aba * 1e6:.1f} us, with A and B assembled {per_assembled * 1e6:.1f} us | "
          f"linearize / assembled {per_linearize / per_assembled:.2f}, Linearizer / bare {per_handle / per_aba:.2f}")


def _pinocchio_derivatives(pin: object, reference: object, data: object, q: np.ndarray, v: np.ndarray,
                           damping: float | np.ndarray) -> tuple[Callable[[], None], Callable[[], None]]:
    """``computeABADerivatives`` alone, and with A = [[0, I], [dq''/dq, dq''/dv]] and B = [[0], [M^-1]] written
    into arrays made once (the damping -b q' enters dq''/dv as -M^-1 diag(b); ``damping`` b, one or per joint)."""
    n = q.size
    tau = -damping * v
    A, B = np.zeros((2 * n, 2 * n)), np.zeros((2 * n, n))
    A[:n, n:] = np.eye(n)

    def bare() -> None:
        pin.computeABADerivatives(reference, data, q, v, tau)  # type: ignore[attr-defined]

    def assembled() -> None:
        pin.computeABADerivatives(reference, data, q, v, tau)  # type: ignore[attr-defined]
        minv = data.Minv  # type: ignore[attr-defined]
        A[n:, :n] = data.ddq_dq  # type: ignore[attr-defined]
        np.subtract(data.ddq_dv, minv * damping, out=A[n:, n:])  # type: ignore[attr-defined]
        B[n:] = minv

    bare()
    return bare, assembled


def compare(label: str, path: Path, count: int) -> None:
    """One robot: single runs, cold start, linearize and (for the Panda) a batch of ``count`` runs."""
    import pinocchio as pin
    from scipy.integrate import solve_ivp

    import robodyn
    model = robodyn.load(str(path))  # the default URDF backend: robodyn's compiled tape
    reference = pin.buildModelFromUrdf(str(path))
    data = reference.createData()
    n = model.n_coordinates
    assert reference.nq == n and list(reference.names)[1:] == list(model.coordinates)
    x0 = np.concatenate([np.linspace(0.4, -0.4, n), np.full(n, 0.3)])
    tau = np.zeros(n)
    run = robodyn.simulate(model, T_FINAL, x0, rtol=RTOL, atol=ATOL)
    ours = best_of(lambda: robodyn.simulate(model, T_FINAL, x0, rtol=RTOL, atol=ATOL), 5, 3)

    def rhs(t: float, x: np.ndarray) -> np.ndarray:
        return np.concatenate([x[n:], pin.aba(reference, data, x[:n], x[n:], tau - DAMPING * x[n:])])

    start = time.perf_counter()
    solution = solve_ivp(rhs, (0.0, T_FINAL), x0, rtol=RTOL, atol=ATOL)
    scipy_time = time.perf_counter() - start
    steps = len(solution.t) - 1
    u = np.zeros(n)
    robodyn.linearize(model, x0, u)
    handle = robodyn.Linearizer(model)
    bare, assembled = _pinocchio_derivatives(pin, reference, data, x0[:n], x0[n:], DAMPING)
    best = _interleaved_per_call({"linearize": lambda: robodyn.linearize(model, x0, u), "Linearizer": lambda:
                                  handle(x0, u), "bare": bare, "assembled": assembled}, 7, 2000)
    per_linearize, per_handle, per_aba, per_assembled = best.values()
    first = float(run_cold(COLD, str(path))["first"])
    print(f"{label}: {n} joints")
    print(f"  robodyn dopri5 {ours * 1e3:8.2f} ms, {run.stats.steps} steps | scipy RK45 + pinocchio.aba "
          f"{scipy_time * 1e3:8.1f} ms, {steps} steps | ratio {scipy_time / ours:.1f}x (goal >= 10x: "
          f"{'met' if scipy_time / ours >= 10 else 'MISSED'}); same steps: {run.stats.steps == steps}; "
          f"final states differ by {np.abs(solution.y[:, -1] - run.x[-1]).max():.1e}")
    print(f"  cold load + first simulate {first:.2f} s (goal <= 10 s: {'met' if first <= 10 else 'MISSED'}); "
          f"linearize {per_linearize * 1e6:.1f} us per call (goal <= 30 us: "
          f"{'met' if per_linearize <= 30e-6 else 'MISSED'})")
    print(f"  per call: linearize {per_linearize * 1e6:.1f} us, Linearizer {per_handle * 1e6:.1f} us | pinocchio "
          f"computeABADerivatives {per_aba * 1e6:.1f} us, with A and B assembled {per_assembled * 1e6:.1f} us | "
          f"linearize / assembled {per_linearize / per_assembled:.2f}, Linearizer / bare {per_handle / per_aba:.2f}")
    if label.startswith("panda"):
        rng = np.random.default_rng(0)
        starts = np.tile(x0, (count, 1))
        starts[:, :n] += rng.uniform(-0.3, 0.3, (count, n))
        grid = np.linspace(0.0, T_FINAL, 101)
        robodyn.simulate(model, T_FINAL, starts[:2], rtol=RTOL, atol=ATOL, t_eval=grid)
        start = time.perf_counter()
        robodyn.simulate(model, T_FINAL, starts, rtol=RTOL, atol=ATOL, t_eval=grid)
        batch = time.perf_counter() - start
        sample = 20
        start = time.perf_counter()
        for row in starts[:sample]:
            solve_ivp(rhs, (0.0, T_FINAL), row, rtol=RTOL, atol=ATOL, t_eval=grid)
        loop = (time.perf_counter() - start) * count / sample
        print(f"  {count} trajectories: robodyn batch {batch:.2f} s ({count / batch:.0f} per s); scipy loop "
              f"{loop:.1f} s (extrapolated from {sample}); ratio {loop / batch:.0f}x")


if __name__ == "__main__":
    main()
