"""Measured data as named columns over time: read from a CSV file, a Trajectory or a mapping, and checked.

Identification reads what was measured as a :class:`Table`: strictly increasing times ``t`` and named columns of the
same length. :func:`read_table` accepts

- a CSV file: a header line of names (``t`` first), then one line of comma-separated numbers per sample, as
  ``Trajectory.to_csv`` writes and spreadsheets export (blank lines are skipped, a byte-order mark is ignored);
- a :class:`~robodyn.results.trajectory.Trajectory`: its states, inputs and outputs by name (an output that is a state
  is one column);
- a mapping of names to sequences (``{"t": ..., "q": ...}``).

Every value must be finite (a NaN is refused with its row, and for a file its line number) and the times must
increase strictly (a repeated or earlier time is refused with both times): sampling may be irregular.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError, ShapeError
from robodyn.base.textfile import csv_numbers, read_text_limited
from robodyn.results.trajectory import Trajectory

__all__ = ["MAX_DATA_BYTES", "Data", "Table", "check_increasing", "read_csv_columns", "read_table"]

Array = NDArray[np.float64]
Data = Trajectory | str | os.PathLike[str] | Mapping[str, Any]

MAX_DATA_BYTES: Final = 512_000_000  # A measurement CSV larger than this is refused before it is read.


@dataclass(frozen=True, slots=True)
class Table:
    """Samples by name: ``t`` (N,) strictly increasing, each of ``columns`` (N,); ``source`` names the data in
    messages and ``lines`` holds each row's line in the file (None for data given in memory)."""

    t: Array
    columns: Mapping[str, Array]
    source: str
    lines: tuple[int, ...] | None = None

    def where(self, row: int) -> str:
        """``"run.csv:12"`` for a row of a file, ``"data row 11"`` otherwise."""
        return f"{self.source}:{self.lines[row]}" if self.lines is not None else f"{self.source} row {row}"

    def __len__(self) -> int:
        return int(self.t.size)


def read_csv_columns(path: str | os.PathLike[str], what: str, *, limit: int = MAX_DATA_BYTES
                     ) -> tuple[list[str], Array, list[int]]:
    """The header, the numbers ``(rows, columns)`` and each row's line number of a CSV file of named columns (every
    row as many numbers as the header has names, no name twice); each problem names its line and column."""
    text = read_text_limited(path, what, limit=limit).removeprefix("\ufeff")
    lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    if len(lines) < 2:
        raise InputError(f"{path}: expected a header of column names (t first) and one line per sample")
    header = [name.strip() for name in lines[0][1].split(",")]
    if not all(header):
        raise InputError(f"{path}:{lines[0][0]}: the header {lines[0][1]!r} has an empty column name")
    twice = next((name for k, name in enumerate(header) if name in header[:k]), None)
    if twice is not None:
        raise InputError(f"{path}:{lines[0][0]}: column {twice!r} appears twice: name each column once")
    table = csv_numbers(path, header, lines[1:])
    return header, table, [number for number, _ in lines[1:]]


def _from_mapping(data: Mapping[str, Any], source: str) -> tuple[Array, dict[str, Array]]:
    if "t" not in data:
        raise InputError(f"{source}: no column t: give the sample times as t")
    columns: dict[str, Array] = {}
    for name, value in data.items():
        if not isinstance(name, str):
            raise InputError(f"{source}: column names must be text, got {name!r}")
        try:
            array = np.array(value, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"{source}: column {name!r} must hold numbers") from None
        if array.ndim != 1:
            raise ShapeError(f"{source}: column {name!r} has shape {array.shape}: give one number per sample")
        columns[name] = array
    t = columns.pop("t")
    for name, array in columns.items():
        if array.shape != t.shape:
            raise ShapeError(f"{source}: column {name!r} has {array.size} samples, t has {t.size}: give one value "
                             "per time")
    return t, columns


def _from_trajectory(run: Trajectory) -> tuple[Array, dict[str, Array]]:
    columns = {name: np.array(run.x[:, k]) for k, name in enumerate(run.states)}
    columns.update({name: np.array(run.u[:, k]) for k, name in enumerate(run.inputs)})
    columns.update({name: np.array(run.y[:, k]) for k, name in enumerate(run.outputs) if name not in columns})
    return np.array(run.t, dtype=float), columns


def read_table(data: Data, what: str = "data") -> Table:
    """The checked :class:`Table` of ``data`` (see the module docstring); ``what`` names it in messages when it is
    not a file."""
    lines: list[int] | None = None
    if isinstance(data, Trajectory):
        source = f"{what} (trajectory of {data.model!r})"
        t, columns = _from_trajectory(data)
    elif isinstance(data, Mapping):
        source = what
        t, columns = _from_mapping(data, source)
    elif isinstance(data, str | os.PathLike):
        source = str(data)
        header, numbers, lines = read_csv_columns(Path(data), f"{what} CSV")
        if header[0] not in ("t", "time"):
            raise InputError(f"{source}: the first column is {header[0]!r}: name the sample times t (first column)")
        t = numbers[:, 0]
        columns = {name: numbers[:, k] for k, name in enumerate(header) if k > 0}
    else:
        raise InputError(f"{what} must be a CSV file's path, a Trajectory or a mapping of columns, got "
                         f"{type(data).__name__}")
    table = Table(t, columns, source, None if lines is None else tuple(lines))
    _check_rows(table)
    for array in (table.t, *table.columns.values()):
        array.setflags(write=False)
    return table


def _check_rows(table: Table) -> None:
    """Refuse an empty table, non-finite values (the first bad row: its time, line and columns) and times that
    do not increase strictly."""
    t = table.t
    if t.size == 0:
        raise InputError(f"{table.source}: no samples: give at least one row of data")
    names = ["t", *table.columns]
    values = np.column_stack([t, *table.columns.values()])
    bad = ~np.all(np.isfinite(values), axis=1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        which = [name for name, value in zip(names, values[row]) if not np.isfinite(value)]
        raise InputError(f"{table.where(row)}: {', '.join(which)} not finite ({', '.join(str(v) for v in values[row])})"
                         ": remove or repair that sample")
    check_increasing(t, table.where)


def check_increasing(t: Array, where: Callable[[int], str]) -> None:
    """InputError at the first time that does not increase strictly (repeated or earlier), both times named;
    ``where(row)`` says where that row is (``"run.csv:12"``)."""
    steps = np.diff(t)
    if steps.size and not np.all(steps > 0):
        row = int(np.flatnonzero(steps <= 0)[0]) + 1
        kind = "repeats" if steps[row - 1] == 0 else "goes back from"
        raise InputError(f"{where(row)}: the time t = {t[row]:.9g} {kind} t = {t[row - 1]:.9g} of the sample "
                         "before: times must increase strictly (sort the samples, drop duplicates)")
