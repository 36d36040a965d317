"""``robodyn analyze`` wall time, a new process on a warm machine, and where the time goes.

Goals (issue 23): ``robodyn analyze pendulum`` <= 3 s and ``robodyn analyze two_link_arm`` <= 5 s on a warm
machine (the compiled kernels, the parsed models and the typeset formulas in the cache; Python's bytecode
written). Each model's report is made ``--rounds`` times after one warm-up; the medians are printed.

With ``--before SRC`` (a ``src`` folder of an older checkout, e.g. ``git worktree add /tmp/before <commit>``)
the same command runs from those sources in turn with the current ones (A B A B ...), and the ratios are printed.

``--where`` also prints, for one run of each model in this process, the time of each stage of the report.

    python benchmarks/bench_report.py [--rounds 5] [--before /tmp/before/src] [--where]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODELS = ("pendulum", "two_link_arm")
GOALS = {"pendulum": 3.0, "two_link_arm": 5.0}
SOURCES = Path(__file__).resolve().parents[1] / "src"


def _once(model: str, sources: Path, out: Path) -> float:
    """Seconds for one ``robodyn analyze MODEL`` in a new process, importing robodyn from ``sources``."""
    env = {**os.environ, "PYTHONPATH": str(sources)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "robodyn.cli", "analyze", model, "--out", str(out), "--quiet"], env=env,
                   check=True, capture_output=True)
    return time.perf_counter() - start


def _compile(sources: Path) -> None:
    """Write the bytecode of ``sources`` (a warm machine has it; PYTHONDONTWRITEBYTECODE may be set)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(sources)], check=True, capture_output=True)


def where_the_time_goes(model_name: str) -> list[tuple[str, float]]:
    """Seconds of each stage of one report made here, in one process (workers=1, so the stages add up)."""
    import robodyn
    from robodyn.analysis.classify import classify
    from robodyn.report import analyze as report_analyze  # noqa: F401 - the report's modules imported
    from robodyn.report.analyze import ROBOT_COORDINATES, _equations  # type: ignore[attr-defined]
    from robodyn.report.point import existence_section, point_section
    from robodyn.report.points import operating_points

    stages: list[tuple[str, float]] = []

    def timed(label: str, work: object) -> object:
        start = time.perf_counter()
        value = work()  # type: ignore[operator]
        stages.append((label, time.perf_counter() - start))
        return value

    model = timed("load the model", lambda: robodyn.load(model_name))
    timed("equations (simplified, typeset)", lambda: _equations(model))
    timed("classification", lambda: classify(model))
    robot = model.kinematics() is not None and model.n_states // 2 > ROBOT_COORDINATES
    points = timed("operating points", lambda: operating_points(model, {}, robot)[1].points)
    timed("existence at point 0", lambda: existence_section(model, points[0], 0))
    for k, point in enumerate(points[:4]):
        timed(f"point {k} (linear model, modes, validity, responses, figures)",
              lambda point=point, k=k: point_section(model, point, k, 5.0))
    return stages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", type=Path, help="the src folder of an older checkout, run in turn")
    parser.add_argument("--where", action="store_true", help="also time each stage of one report")
    args = parser.parse_args()
    sources = [("now", SOURCES)] + ([("before", args.before)] if args.before else [])
    load = os.getloadavg()[0]
    print(f"# bench_report {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
          f"load {load:.2f}, Python {platform.python_version()}; {args.rounds} rounds after a warm-up, medians")
    with tempfile.TemporaryDirectory() as folder:
        for _, path in sources:
            _compile(path)
        for model in MODELS:
            times: dict[str, list[float]] = {label: [] for label, _ in sources}
            for label, path in sources:
                _once(model, path, Path(folder) / label)  # the warm-up: caches filled
            for _ in range(args.rounds):
                for label, path in sources:
                    times[label].append(_once(model, path, Path(folder) / label))
            now = statistics.median(times["now"])
            line = f"  analyze {model:13s} {now:6.2f} s (min {min(times['now']):.2f}, max {max(times['now']):.2f})"
            if args.before:
                before = statistics.median(times["before"])
                ratios = [a / b for a, b in zip(times["now"], times["before"])]
                line += f" | before {before:6.2f} s | now/before {statistics.median(ratios):.2f}"
            goal = GOALS[model]
            print(f"{line} | goal <= {goal:g} s -> {'met' if now <= goal else 'NOT met'}")
    if args.where:
        for model in MODELS:
            print(f"  where the time goes, {model} (one process, one worker):")
            for label, seconds in where_the_time_goes(model):
                print(f"    {label:62s} {seconds:6.2f} s")
    print(f"  load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
