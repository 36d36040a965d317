"""Independent pieces of compiled work on the process's CPUs: threads around kernels that release the GIL.

numba kernels compiled with ``nogil=True`` run in parallel from plain Python threads; for a loop over independent
points (Jacobians at many points, exponentials of many intervals) splitting the range into one contiguous piece
per CPU is all the scheduling needed. Thread start-up costs ~50 us, so small ranges stay on the calling thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

__all__ = ["in_pieces", "usable_cpus"]


def usable_cpus() -> int:
    """The CPUs this process may run on, at most ``NUMBA_NUM_THREADS`` when it is set (at least 1)."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    limit = os.environ.get("NUMBA_NUM_THREADS", "")
    return max(1, min(usable, int(limit) if limit.strip().isdigit() else usable))


def in_pieces(piece: Callable[[int, int], object], count: int, minimum: int = 256) -> None:
    """``piece(first, stop)`` over ``range(count)`` in contiguous pieces of at least ``minimum`` items, one per CPU
    (:func:`usable_cpus`), the calling thread taking the first; ``piece`` must release the GIL to gain anything.
    An exception in any piece is raised here after all have ended."""
    workers = max(1, min(usable_cpus(), count // max(minimum, 1)))
    if workers <= 1:
        piece(0, count)
        return
    edges = [count * k // workers for k in range(workers + 1)]
    errors: list[BaseException] = []

    def run(first: int, stop: int) -> None:
        try:
            piece(first, stop)
        except BaseException as exc:
            errors.append(exc)

    others = [threading.Thread(target=run, args=(edges[k], edges[k + 1])) for k in range(1, workers)]
    for thread in others:
        thread.start()
    run(edges[0], edges[1])
    for thread in others:
        thread.join()
    if errors:
        raise errors[0]
