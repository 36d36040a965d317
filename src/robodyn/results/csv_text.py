"""The text of a trajectory's CSV file, in plain Python: one function for every writer of it.

:meth:`robodyn.results.trajectory.Trajectory.to_csv_text` writes a run's table with it, and the quick path of
``robodyn simulate`` (:mod:`robodyn.cli.quick`, a process without numpy) writes its rows of floats with it: the
two files are the same bytes because they are made by the same lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["csv_text"]


def csv_text(columns: Sequence[str], rows: Iterable[Sequence[float]]) -> str:
    """The CSV of a table: the header ``columns`` joined by commas, then one line per row of floats, each value
    the shortest text that reads back to the same float (Python's ``repr``), every line ending in ``\\n``.

    ``rows``: (T, len(columns)) floats, e.g. ``[t, *x]`` per output time.
    """
    lines = [",".join(columns), *(",".join(map(repr, row)) for row in rows)]
    return "\n".join(lines) + "\n"
