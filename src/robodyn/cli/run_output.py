"""What ``robodyn simulate`` writes and prints of a run, for both its paths: the CSV and the summary lines.

The full path (:mod:`robodyn.cli.simulate`, a :class:`~robodyn.results.trajectory.Trajectory` in hand) and the quick
path (:mod:`robodyn.cli.quick`, lists of floats in a process without numpy) write their CSV and print their summary
through these functions, so the two outputs are the same bytes by construction (tests/cli/test_cli_quick.py compares
them). This module imports neither numpy nor the results' classes: a run's statistics reach it as any object with
the fields of :class:`~robodyn.results.trajectory.SimulationStats` that it reads (:class:`RunWork`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol

from robodyn.results.csv_text import csv_text

__all__ = ["RunWork", "Work", "print_run", "print_written", "run_summary", "values_text", "write_csv"]


class RunWork(Protocol):
    """What :func:`run_summary` reads of a run's statistics (the fields of ``SimulationStats``)."""

    @property
    def path(self) -> str: ...
    @property
    def method(self) -> str: ...
    @property
    def nfev(self) -> int: ...
    @property
    def steps(self) -> int: ...
    @property
    def rejected(self) -> int: ...
    @property
    def compile_seconds(self) -> float: ...
    @property
    def from_cache(self) -> bool: ...
    @property
    def njev(self) -> int: ...
    @property
    def nlu(self) -> int: ...


class Work(NamedTuple):
    """A run's statistics where ``SimulationStats`` is not imported (the quick path): the same fields, the same
    meanings and defaults (a named tuple: the quick path does not import ``dataclasses``)."""

    path: str
    method: str
    nfev: int = 0
    steps: int = 0
    rejected: int = 0
    compile_seconds: float = 0.0
    from_cache: bool = False
    njev: int = 0
    nlu: int = 0


def run_summary(work: RunWork, t0: float, t1: float, points: int) -> str:
    """What the run over [t0, t1] did: the exact path's matrix exponentials at ``points`` output times, or the
    steps, evaluations (Jacobians and LU factorizations when any) and how the machine code was had."""
    span = f"over [{t0:g}, {t1:g}]"
    if work.path == "exact":
        return f"exact (matrix exponential) {span} at {points} output times"
    done = f"{work.method} ({work.path}) {span}: {work.steps} steps, {work.rejected} rejected, " \
           f"{work.nfev} evaluations"
    if work.njev:
        done += f", {work.njev} Jacobians, {work.nlu} LU factorizations"
    if work.path != "compiled":
        return done
    if work.from_cache:
        return f"{done}, kernel loaded from cache in {work.compile_seconds:.2f} s"
    if work.compile_seconds == 0.0:
        return f"{done}, kernel already compiled"
    return f"{done}, compile {work.compile_seconds:.2f} s"


def values_text(names: Sequence[str], values: Iterable[float]) -> str:
    """``name = value, ...`` with 10 significant digits: a final state, a start, a sensitivity's last row."""
    return ", ".join(f"{n} = {v:.10g}" for n, v in zip(names, values))


def write_csv(out: str, columns: Sequence[str], rows: Iterable[Sequence[float]]) -> None:
    """The CSV of ``rows`` under ``columns`` (:func:`robodyn.results.csv_text.csv_text`) to stdout (``out`` is
    ``-``) or to the file ``out``, atomically."""
    text = csv_text(columns, rows)
    if out == "-":
        sys.stdout.write(text)
        return
    from robodyn.base.atomic import write_text_atomic

    write_text_atomic(out, text)


def print_run(name: str, summary: str, names: Sequence[str], final: Iterable[float],
              what: str = "final state") -> None:
    """The first two lines of a run's report: ``NAME: SUMMARY`` and ``final state: ...`` (``what``: a run
    without states reports its ``final outputs``)."""
    print(f"{name}: {summary}")
    print(f"{what}: {values_text(names, final)}")


def print_written(paths: Iterable[str | None]) -> None:
    """The last lines of a run's report: ``wrote PATH`` for each file written (None: none)."""
    for path in paths:
        if path:
            print(f"wrote {path}")
