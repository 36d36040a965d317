"""Everyday commands on a warm machine, side by side in one run (issue 45, item 19), with ratios and the load.

Each row is the best wall time of a command in new processes, the rows measured in turn round after round (a shared
machine: neighbours in a round see the same load). Goals:

- ``robodyn simulate joint`` (a linear model: the exact path) within 3x the pendulum's repeated run (the quick path);
- a diagram's second ``robodyn linearize`` (``--open BLOCK.PORT``) <= 0.5 s;
- ``robodyn demo`` warm <= 3 s;
- ``robodyn analyze`` of the pendulum and the two-link arm no slower than before (2.0 s and 3.3 s when measured for
  issue 45).

The "computed" rows run the same commands with ``ROBODYN_KEPT=0`` (the reports' sections and the loops' margins
computed, not read back) and ``ROBODYN_QUICK=0`` (simulate's full path): what a first run on a warm machine pays.

    python benchmarks/bench_everyday.py [--rounds N] [--cache DIR] [--before OTHER/src [--before-cache DIR]]

``--cache`` names a robodyn cache folder to use (default: a new one, warmed first: the integrators' first
compilation takes a minute or two); ``--before`` measures another checkout's ``src`` in the same rounds, each command
in turn (a before/after table on the same load).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
COMMANDS = {
    "simulate pendulum (quick path)": ["simulate", "pendulum", "--t-final", "10", "--out", "p.csv"],
    "simulate joint (exact path)": ["simulate", "joint", "--t-final", "10", "--x0", "q=1", "--out", "j.csv"],
    "linearize motor_joint_pid --open pid.u": ["linearize", str(EXAMPLES / "motor_joint_pid.yaml"), "--open", "pid.u"],
    "linearize pendulum_lqr_diagram --at": ["linearize", str(EXAMPLES / "pendulum_lqr_diagram.yaml"), "--at",
                                            "plant.theta=3.14159265358979,r=3.14159265358979"],
    "demo": ["demo", "--out", "demo-out"],
    "analyze pendulum": ["analyze", "pendulum", "--out", "a-pendulum", "--quiet"],
    "analyze two_link_arm": ["analyze", "two_link_arm", "--out", "a-arm", "--quiet"],
}
#: rows run again with what a first run on the warm machine computes (no kept results, simulate's full path)
COMPUTED = ("simulate joint (exact path)", "linearize motor_joint_pid --open pid.u", "demo", "analyze pendulum",
            "analyze two_link_arm")


def _wall(python: str, argv: list[str], env: dict[str, str], cwd: str) -> float:
    """Wall time of ``robodyn ARGV`` in a new process (seconds); it must succeed."""
    start = time.perf_counter()
    done = subprocess.run([python, "-m", "robodyn.cli", *argv], env=env, cwd=cwd, capture_output=True, text=True,
                          check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"robodyn {' '.join(argv)} failed:\n{done.stderr}")
    return seconds


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def _sides(args: argparse.Namespace, caches: list[str]) -> dict[str, dict[str, str]]:
    """The environments measured: this robodyn ("after"; and "computed": nothing read back), and with ``--before``
    another checkout's ``src`` ("before", its own cache)."""
    base = {**os.environ, "ROBODYN_QUIET": "1"}
    sides = {"after": {**base, "ROBODYN_CACHE_DIR": args.cache or caches[0]}}
    sides["computed"] = {**sides["after"], "ROBODYN_KEPT": "0", "ROBODYN_QUICK": "0"}
    if args.before:
        sides["before"] = {**base, "ROBODYN_CACHE_DIR": args.before_cache or caches[1], "PYTHONPATH": args.before}
    return sides


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of every command (best of them; default 5)")
    parser.add_argument("--cache", help="the robodyn cache folder (default: a new one, warmed first)")
    parser.add_argument("--before", help="the src folder of another checkout, measured in the same rounds")
    parser.add_argument("--before-cache", help="its cache folder (default: a new one, warmed first)")
    parser.add_argument("--python", default=sys.executable, help="the Python that runs robodyn")
    args = parser.parse_args()
    print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d %H:%M')}, load {_load()}")
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second, \
            tempfile.TemporaryDirectory() as work:
        sides = _sides(args, [first, second])
        for side in ("after", "before"):  # warm: kernels compiled, records, images and kept results made
            for argv in (COMMANDS.values() if side in sides else ()):
                for _ in range(2):
                    _wall(args.python, argv, sides[side], work)
        best = {(name, side): math.inf for name in COMMANDS for side in sides
                if side != "computed" or name in COMPUTED}
        for _ in range(args.rounds):
            for name, argv in COMMANDS.items():
                for side, env in sides.items():
                    if (name, side) in best:
                        best[name, side] = min(best[name, side], _wall(args.python, argv, env, work))
    _print(args, best, list(sides))


def _print(args: argparse.Namespace, best: dict[tuple[str, str], float], sides: list[str]) -> None:
    print(f"best of {args.rounds} rounds (wall time of a new process, s), load after: {_load()}")
    print(f"  {'command':<44}" + "".join(f"{side:>10}" for side in sides))
    for name in COMMANDS:
        cells = [f"{best[name, side]:10.3f}" if (name, side) in best else f"{'-':>10}" for side in sides]
        print(f"  {name:<44}" + "".join(cells))
    after = {name: best[name, "after"] for name in COMMANDS}
    goals = [("simulate joint / simulate pendulum", after["simulate joint (exact path)"]
              / after["simulate pendulum (quick path)"], 3.0, ""),
             ("second linearize motor_joint_pid --open", after["linearize motor_joint_pid --open pid.u"], 0.5, " s"),
             ("second linearize pendulum_lqr_diagram", after["linearize pendulum_lqr_diagram --at"], 0.5, " s"),
             ("demo, warm", after["demo"], 3.0, " s"),
             ("analyze pendulum", after["analyze pendulum"], 2.0, " s"),
             ("analyze two_link_arm", after["analyze two_link_arm"], 3.3, " s")]
    for label, value, goal, unit in goals:
        print(f"  {label:<44} {value:7.3f}{unit}  goal <= {goal:g}{unit}: {'met' if value <= goal else 'NOT met'}")
    for name in COMPUTED:
        print(f"  {name}: read back / computed {best[name, 'after'] / best[name, 'computed']:.2f}"
              + (f", after / before {best[name, 'after'] / best[name, 'before']:.2f}" if "before" in sides else ""))


if __name__ == "__main__":
    main()
