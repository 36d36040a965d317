"""Timing helper shared by the benchmark scripts (run as ``python benchmarks/bench_*.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_of(function: Callable[[], Any], repeat: int, number: int) -> float:
    """Best mean time per call over ``repeat`` rounds of ``number`` calls (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            function()
        best = min(best, (time.perf_counter() - start) / number)
    return best
