"""Input tables from CSV files: ``(times, values)`` read with every check (:func:`read_table_csv`), for
:meth:`robodyn.signals.core.Table.from_csv` and the text form ``table(path.csv)`` (robodyn.files.signal_text)."""

from __future__ import annotations

import csv
import difflib
import io
import math
import os
from pathlib import Path
from typing import Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError, UnknownNameError
from robodyn.base.textfile import read_text_limited

__all__ = ["MAX_TABLE_BYTES", "read_table_csv"]

Array = NDArray[np.float64]
MAX_TABLE_BYTES: Final = 50_000_000  # An input table: up to ~10^6 rows of text.


def read_table_csv(path: str | os.PathLike[str], column: str | None = None) -> tuple[Array, Array]:
    """Read ``(times, values)`` from a CSV file with a header row.

    The first column is the time, named ``t`` or ``time``; ``column`` names the value column (it may be
    left out when there is exactly one other column). Blank lines and lines starting with ``#`` are
    skipped. Times must be strictly increasing; every used value must be a finite number.
    """
    file = Path(path)
    text = read_text_limited(file, "table", limit=MAX_TABLE_BYTES, encoding="utf-8-sig")
    rows = [
        (number, [cell.strip() for cell in row])
        for number, row in enumerate(csv.reader(io.StringIO(text, newline="")), start=1)
        if any(cell.strip() for cell in row) and not row[0].lstrip().startswith("#")
    ]
    if not rows:
        raise InputError(f"{file}: empty table: write a header row (t,u) and data rows")
    (header_line, header), data = rows[0], rows[1:]
    if header[0].lower() not in ("t", "time"):
        raise InputError(
            f"{file}:{header_line}: the first column must be the time, named 't' or 'time', got {header[0]!r}: "
            "add a header row such as 't,u'"
        )
    index = _value_column(file, header_line, header, column)
    if not data:
        raise InputError(f"{file}: no data rows after the header")
    times, values = np.empty(len(data)), np.empty(len(data))
    for k, (line, row) in enumerate(data):
        if len(row) != len(header):
            raise InputError(f"{file}:{line}: expected {len(header)} comma-separated values, got {len(row)}")
        times[k] = _cell(row[0], file, line, header[0])
        values[k] = _cell(row[index], file, line, header[index])
        if k and times[k] <= times[k - 1]:
            raise InputError(
                f"{file}:{line}: time {row[0]} is not after the previous time {times[k - 1]:g} "
                f"(line {data[k - 1][0]}): times must be strictly increasing"
            )
    return times, values


def _value_column(file: Path, line: int, header: list[str], column: str | None) -> int:
    others = header[1:]
    if column is None:
        if len(others) != 1:
            listed = ", ".join(others) or "none"
            raise InputError(f"{file}:{line}: value columns {listed}: choose one (column=NAME), or keep exactly one")
        return 1
    if column not in others:
        close = difflib.get_close_matches(column, others, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownNameError(f"{file}: no column {column!r} (columns: {', '.join(others) or 'none'}){hint}")
    return 1 + others.index(column)


def _cell(cell: str, file: Path, line: int, name: str) -> float:
    try:
        value = float(cell)
    except ValueError:
        raise InputError(f"{file}:{line}: column {name!r}: {cell!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(f"{file}:{line}: column {name!r}: {cell!r} is not finite: give a finite number")
    return value
