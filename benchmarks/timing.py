"""Timing helper shared by the benchmark scripts (run as ``python benchmarks/bench_*.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def best_of(function: Callable[[], Any], repeat: int, number: int,
            clock: Callable[[], float] = time.perf_counter) -> float:
    """Best mean time per call over ``repeat`` rounds of ``number`` calls (seconds), by ``clock`` (wall time; or
    ``time.thread_time``, this thread's CPU time, which other processes on a shared machine do not stretch)."""
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        for _ in range(number):
            function()
        best = min(best, (clock() - start) / number)
    return best


def run_cold(script: str, *arguments: str) -> dict[str, Any]:
    """``script`` in a new process with a fresh, empty robodyn cache (and this folder importable, before the caller's
    PYTHONPATH: a worktree's sources stay the ones measured); the JSON object on its last line of output."""
    with tempfile.TemporaryDirectory() as cache:
        path = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "ROBODYN_CACHE_DIR": cache, "PYTHONPATH": path}  # the caller's robodyn, if it set one
        done = subprocess.run([sys.executable, "-c", script, *arguments], env=env, capture_output=True, text=True,
                              check=False)
    if done.returncode != 0:
        raise SystemExit(f"benchmark process failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
