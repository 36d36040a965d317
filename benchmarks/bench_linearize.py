"""Linearization speed and accuracy, side by side in one run: robodyn vs python-control.

The catalog pendulum I theta'' + m g l sin(theta) = tau (m = l = I = 1, g = 9.81) at theta = pi/4, where
the exact A = [[0, 1], [-9.81 cos(pi/4), 0]] and B = [[0], [1]].

- robodyn ``linearize`` on the catalog model (auto = manipulator: exact);
- python-control ``linearize`` on a ``NonlinearIOSystem`` of the same pendulum (its default forward
  difference, eps = 1e-6);
- robodyn ``complex`` and ``central`` on plain-callable pendulums: numpy (accepts complex numbers and
  batches: one call per Jacobian) and ``math`` (neither: one call per perturbed point).

Goal (issue): <= 20 us per call for the catalog pendulum, max error <= 1e-13.
Times vary on a shared machine; the ratios are what to compare.

    python benchmarks/bench_linearize.py [--quick]
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import time
from pathlib import Path

import numpy as np
from timing import best_of  # benchmarks/timing.py (the script's folder is on sys.path)

import robodyn

THETA = math.pi / 4
EXACT_A = np.array([[0.0, 1.0], [-9.81 * math.cos(THETA), 0.0]])
EXACT_B = np.array([[0.0], [1.0]])
GOAL_US, GOAL_ERROR = 20.0, 1e-13



def error(A, B) -> float:
    return float(max(np.abs(np.asarray(A) - EXACT_A).max(), np.abs(np.asarray(B) - EXACT_B).max()))


def pendulum_numpy(t, x, u, p):
    return np.array([x[1], u[0] - 9.81 * np.sin(x[0])])


def pendulum_math(t, x, u, p):
    return [x[1], u[0] - 9.81 * math.sin(x[0])]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            cpu = next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{os.cpu_count()} cores, {platform.machine()}, {cpu!r}, Python {platform.python_version()}, "
            f"numpy {np.__version__}; load average {load:.2f}")


def row(label: str, seconds: float, err: float, extra: str = "") -> None:
    print(f"  {label:<44} {seconds * 1e6:9.2f} us per call   max error {err:.2e}{extra}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    args = parser.parse_args()
    repeat, number = (3, 300) if args.quick else (7, 2000)
    print(f"Date: {datetime.datetime.now(datetime.UTC):%a %b %d %H:%M UTC %Y}. Machine: {machine()}")
    print(f"pendulum at theta = pi/4, theta_dot = 0, tau = 0 (best of {repeat} rounds of {number} calls)")

    pendulum = robodyn.load("pendulum")
    point = {"theta": THETA, "theta_dot": 0.0}
    start = time.perf_counter()
    ours = robodyn.linearize(pendulum, point)
    first = time.perf_counter() - start
    ours_time = best_of(lambda: robodyn.linearize(pendulum, point), repeat, number)
    ours_error = error(ours.A, ours.B)
    row(f"robodyn linearize (auto = {ours.method})", ours_time, ours_error, f"   (first call {first * 1e3:.0f} ms)")

    try:
        import control
    except ImportError:
        control = None
        print("  python-control not installed: comparison skipped (pip install 'robodyn[control]')")
    if control is not None:
        system = control.nlsys(lambda t, x, u, params: pendulum_numpy(t, x, u, params), None,
                               states=2, inputs=1, outputs=2, name="pendulum")
        theirs = control.linearize(system, [THETA, 0.0], [0.0])
        theirs_time = best_of(lambda: control.linearize(system, [THETA, 0.0], [0.0]), repeat, max(number // 4, 50))
        theirs_error = error(theirs.A, theirs.B)
        row(f"python-control {control.__version__} linearize (eps=1e-6)", theirs_time, theirs_error)
        print(f"  ratio python-control / robodyn time: {theirs_time / ours_time:.1f}x "
              f"(robodyn error {ours_error:.1e} vs python-control {theirs_error:.1e})")

    for label, f, method in (("complex, numpy callable (batch)", pendulum_numpy, "auto"),
                             ("central, numpy callable (batch)", pendulum_numpy, "central"),
                             ("central, math callable (12 calls)", pendulum_math, "auto")):
        model = robodyn.System(f, ["theta", "theta_dot"], ["tau"], name="pendulum_py")
        linear = robodyn.linearize(model, [THETA, 0.0], [0.0], method=method)
        seconds = best_of(lambda model=model, method=method: robodyn.linearize(model, [THETA, 0.0], [0.0],
                                                                                method=method), repeat, number)
        row(f"robodyn {label}", seconds, error(linear.A, linear.B),
            f"   (method {linear.method}, estimate {linear.error_estimate:.1e})")

    verdict = "met" if ours_time * 1e6 <= GOAL_US and ours_error <= GOAL_ERROR else "MISSED"
    print(f"goal <= {GOAL_US:.0f} us and error <= {GOAL_ERROR:.0e}: {ours_time * 1e6:.2f} us, "
          f"{ours_error:.1e} -> {verdict}")
    bench_urdf(repeat, number)


URDF_GOAL_US = 50.0  # issue 5: a 9-dof URDF arm linearized in <= 50 us per call


def bench_urdf(repeat: int, number: int) -> None:
    """The 9-dof URDF arm: robodyn.linearize (Pinocchio's analytic ABA derivatives) vs the bare
    computeABADerivatives call it wraps, at a random general point."""
    try:
        import pinocchio
    except ImportError:
        print("9-dof URDF arm: Pinocchio not installed, skipped (pip install 'robodyn[urdf]')")
        return
    arm = robodyn.load(str(Path(__file__).resolve().parents[1] / "examples" / "nine_dof_arm.urdf"))
    rng = np.random.default_rng(0)
    x, u = rng.uniform(-1, 1, arm.n_states), rng.uniform(-1, 1, arm.n_inputs)
    n = arm.n_states // 2
    model = pinocchio.buildModelFromUrdf(str(Path(__file__).resolve().parents[1] / "examples" / "nine_dof_arm.urdf"))
    data = model.createData()
    bare = best_of(lambda: pinocchio.computeABADerivatives(model, data, x[:n], x[n:], u), repeat, number)
    ours = best_of(lambda: robodyn.linearize(arm, x, u), repeat, number)
    print(f"9-dof URDF arm at a random point (method {robodyn.linearize(arm, x, u).method})")
    print(f"  robodyn linearize                    {ours * 1e6:8.2f} us per call")
    print(f"  pinocchio computeABADerivatives only {bare * 1e6:8.2f} us per call")
    verdict = "met" if ours * 1e6 <= URDF_GOAL_US else "MISSED"
    print(f"goal <= {URDF_GOAL_US:.0f} us: {ours * 1e6:.2f} us -> {verdict}")


if __name__ == "__main__":
    main()
