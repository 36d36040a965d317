"""Sweeps in one process against a 2-worker dask LocalCluster, side by side in one run.

10^6 pendulum trajectories (a 1000 x 1000 grid of theta0, theta_dot0; t in [0, 10], dopri5 at rtol 1e-8,
reduce=["final"], chunks of 10,000 written as Parquet parts) run by ``robodyn.sweep`` in this process (a
compiled batch on every core) and on a LocalCluster of 2 worker processes of 1 thread each:

- throughput (trajectories/s) and the ratio cluster / one process (goal >= 0.8 on the same cores);
- peak memory (``ru_maxrss``) of this process and of each worker;
- the cluster's start-up (processes, imports, the model built from its text) — paid once, not counted above;
- the overhead per chunk, from 2,000 trajectories in chunks of 10 against chunks of 1,000.

    python benchmarks/bench_sweep.py [--quick]     # --quick: 10^5 trajectories
"""

from __future__ import annotations

import argparse
import datetime
import logging
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from robodyn.sweep import sweep

T_FINAL, RTOL, CHUNK = 10.0, 1e-8, 10_000
GOAL = 0.8  # cluster throughput / one process on the same machine


def grid(count: int) -> dict[str, np.ndarray]:
    """A grid of ``count`` initial states (a multiple of 1000): 1000 speeds per angle."""
    return {"theta": np.linspace(-3.0, 3.0, count // 1000), "theta_dot": np.linspace(-6.0, 6.0, 1000)}


def timed_sweep(count: int, chunk_size: int, **where: Any) -> float:
    """Seconds for a sweep of ``count`` trajectories into a new folder (the table read back included)."""
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        table = sweep("pendulum", grid(count), T_FINAL, reduce=["final"], rtol=RTOL, chunk_size=chunk_size,
                      out=Path(folder) / "sweep", progress=False, **where)
        seconds = time.perf_counter() - start
    assert len(table) == count, len(table)
    return seconds


def max_rss_mb() -> float:
    """Peak resident memory of the calling process (MB; Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10^5 trajectories instead of 10^6")
    args = parser.parse_args()
    count, repeat = (100_000, 3) if args.quick else (1_000_000, 1)
    print(f"# bench_sweep {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
          f"load {load():.2f}; {count:,} pendulum trajectories, t in [0, {T_FINAL:g}], rtol {RTOL:g}, "
          f"reduce final, chunks of {CHUNK:,}; best of {repeat}, one process and cluster alternating")
    from distributed import Client, LocalCluster

    env = {"NUMBA_NUM_THREADS": "1", **{k: v for k, v in os.environ.items() if k == "ROBODYN_CACHE_DIR"}}
    timed_sweep(1000, 500)  # compile (or load from the cache) before timing
    start = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      scheduler_kwargs={"dashboard_address": ":0"}, silence_logs=logging.ERROR,
                      env=env) as local, Client(local) as client:
        timed_sweep(1000, 500, scheduler=client)  # the workers import robodyn and build the model
        startup = time.perf_counter() - start
        single, spread = float("inf"), float("inf")
        for _ in range(repeat):
            single = min(single, timed_sweep(count, CHUNK))
            spread = min(spread, timed_sweep(count, CHUNK, scheduler=client))
        print(f"  one process ({os.cpu_count()} threads)   {single:8.2f} s  {count / single:10,.0f} traj/s  "
              f"peak RSS {max_rss_mb():6.0f} MB")
        peaks = ", ".join(f"{mb:.0f}" for mb in client.run(max_rss_mb).values())
        print(f"  2-worker LocalCluster          {spread:8.2f} s  {count / spread:10,.0f} traj/s  "
              f"peak RSS per worker {peaks} MB; start-up {startup:.1f} s (not counted)")
        ratio = single / spread
        print(f"  ratio cluster / one process: {ratio:.2f} (goal >= {GOAL}) -> {'met' if ratio >= GOAL else 'NOT met'}")
        for label, where in (("one process", {}), ("cluster", {"scheduler": client})):
            small = min(timed_sweep(2_000, 10, **where) for _ in range(2))
            large = min(timed_sweep(2_000, 1_000, **where) for _ in range(2))
            print(f"  {label}: 2,000 trajectories in chunks of 10 / 1,000 (best of 2): {small:.2f} s / {large:.2f} s "
                  f"-> {(small - large) / 198 * 1e3:.1f} ms of wall time per chunk")
    print(f"  load at the end {load():.2f}")


def load() -> float:
    """The 1-minute load average (nan where the system has none)."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


if __name__ == "__main__":
    main()
