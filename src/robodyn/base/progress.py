"""Progress bars for long work (batches, verify, analyze), and notes on one-time pauses: on a terminal only.

:func:`progress` returns a callable that advances a rich progress bar on stderr when stderr is a terminal,
and does nothing otherwise — when output goes to a file or a pipe, under the test suite, or when the user
asked for quiet (``robodyn --quiet ...``, :func:`set_quiet`, or ``ROBODYN_QUIET=1``). :func:`announce` writes
one line under the same rule, before work that pauses the process once per machine (compiling the integrator
kernels), so that no pause goes unexplained.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator

__all__ = ["announce", "progress", "quiet", "set_quiet"]

_state = {"quiet": False}


def set_quiet(quiet: bool = True) -> None:
    """Turn progress bars off (or on again) for this process."""
    _state["quiet"] = bool(quiet)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No progress bars inside the block (nested work included)."""
    before = _state["quiet"]
    set_quiet(True)
    try:
        yield
    finally:
        set_quiet(before)


def _shown() -> bool:
    if _state["quiet"] or os.environ.get("ROBODYN_QUIET"):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def progress(total: int, description: str) -> Iterator[Callable[..., None]]:
    """``with progress(n, "batch") as advance: ... advance() ...`` (``advance(k)`` for k steps,
    ``advance(description=...)`` to relabel); silent off a terminal."""
    if not _shown() or total <= 0:
        yield lambda steps=1, description=None: None
        return
    from rich.console import Console
    from rich.progress import Progress

    bar = Progress(console=Console(stderr=True), transient=True)
    task = bar.add_task(description, total=total)
    bar.start()

    def advance(steps: int = 1, description: str | None = None) -> None:
        if description:
            bar.update(task, advance=steps, description=description)
        else:
            bar.update(task, advance=steps)

    try:
        yield advance
    finally:
        bar.stop()


def announce(message: str) -> None:
    """``message`` as one line on stderr (``robodyn: ...``) when progress is shown (a terminal, not quiet)."""
    if _shown():
        sys.stderr.write(f"robodyn: {message}\n")
        sys.stderr.flush()
