"""Two checkouts side by side: the same commands, alternating, whole processes, so that a re-layout of the package
(modules moved between folders) is shown to cost nothing: start-up, a simulation, a linearization and a batch.

    python benchmarks/bench_layout.py --before /path/to/other/checkout [--runs 7]

Each command runs with ``PYTHONPATH`` set to the checkout's ``src`` (the other checkout's code, this virtual
environment's packages), after one warm-up run of each (the parsed-model records and compiled kernels then exist
for both: a warm machine). Pairs alternate (before, after, before, ...), and the ratio after/before is taken pair by
pair: the median ratio is the figure (1.0: no change), robust to a machine whose speed drifts.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

CLI = ["-c", "import sys; from robodyn.cli.main import main; sys.exit(main(sys.argv[1:]))"]
COMMANDS: dict[str, list[str]] = {
    "start-up (import robodyn)": ["-c", "import robodyn"],
    "simulate pendulum (CLI)": [*CLI, "simulate", "pendulum", "--t-final", "5", "--x0",
                                "theta=0.5"],
    "simulate joint, exact (CLI)": [*CLI, "simulate", "joint", "--t-final", "5"],
    "linearize two_link_arm (CLI)": [*CLI, "linearize", "two_link_arm", "--at", "shoulder=0.3"],
    "batch of 200 pendulum runs (API)": ["-c", "import numpy as np, robodyn; m = robodyn.load('pendulum'); "
                                          "x0 = np.column_stack([np.linspace(0.1, 1.0, 200), np.zeros(200)]); "
                                          "robodyn.simulate(m, (0, 5), x0)"],
    "linearize in a loop, 1000 points (API)": ["-c", "import numpy as np, robodyn; m = robodyn.load('two_link_arm');"
                                                " [robodyn.linearize(m, np.array([0.1 * k, 0.2, 0, 0])) "
                                                "for k in range(1000)]"],
}


def _run(source: Path, arguments: list[str]) -> float:
    environment = {**os.environ, "PYTHONPATH": str(source / "src")}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *arguments], env=environment, capture_output=True, text=True,
                          check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(arguments)} failed in {source}:\n{done.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="the other checkout (its src/ is run)")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    print(f"before: {args.before}\nafter:  {HERE}\nload: {os.getloadavg()[0]:.2f} (1 min)\n")
    print(f"{'command':42s} {'before s':>9s} {'after s':>9s} {'after/before':>13s}")
    for label, arguments in COMMANDS.items():
        for source in (args.before, HERE):
            _run(source, arguments)  # warm-up: records, kernels and byte code made for both
        ratios, before, after = [], [], []
        for _ in range(args.runs):
            b, a = _run(args.before, arguments), _run(HERE, arguments)
            before.append(b)
            after.append(a)
            ratios.append(a / b)
        print(f"{label:42s} {statistics.median(before):9.3f} {statistics.median(after):9.3f} "
              f"{statistics.median(ratios):13.3f}")


if __name__ == "__main__":
    main()
