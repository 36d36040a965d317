"""Plain text for terminals: labelled matrices and numbers as ``robodyn linearize`` prints them.

Round-off is shown as 0: an entry at most :data:`~robodyn.display.html.ROUND_OFF` (1e-12) times the largest finite
magnitude in its matrix is written ``0`` (the row's own scale would keep a row that is round-off throughout, such
as ``-1.4e-30`` beside ``0`` where gravity torques cancel), and ``-0`` is ``0``. Only what is printed is cleaned:
``--json`` and the Python results keep every digit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
from numpy.typing import ArrayLike

from robodyn.display.html import cleaned

__all__ = ["LINE_WIDTH", "complex_text", "matrix_text", "number_text", "packed"]

LINE_WIDTH: Final = 120  # characters per printed line: wider matrices are printed in blocks of columns


def number_text(value: float, digits: int = 10) -> str:
    """``value`` in ``digits`` significant digits; ``-0`` as ``0``; ``inf`` and ``nan`` as words."""
    value = float(value) + 0.0
    return "0" if value == 0.0 else f"{value:.{digits}g}"


def complex_text(value: complex, digits: int = 10) -> str:
    """``-5-8.660254038j``, or the real number alone when the imaginary part is 0."""
    z = complex(value)
    if z.imag == 0.0:
        return number_text(z.real, digits)
    sign = "-" if z.imag < 0 else "+"
    return f"{number_text(z.real, digits)}{sign}{number_text(abs(z.imag), digits)}j"


def matrix_text(name: str, values: ArrayLike, rows: Sequence[str], columns: Sequence[str], *, digits: int = 10,
                width: int = LINE_WIDTH) -> str:
    """A matrix ``(r, c)`` as a table: ``name`` in the corner, the column names on top, a row name on each line,
    round-off shown as 0 (module docstring); columns beyond ``width`` characters continue in further blocks.

    Parameters
    ----------
    name : the title in the corner (``"A"``)
    values : (r, c)
    rows, columns : r and c labels (state, input or output names)
    """
    matrix = np.atleast_2d(np.asarray(values, dtype=float))
    if matrix.size == 0:
        return f"{name} is empty ({matrix.shape[0]} x {matrix.shape[1]})"
    finite = np.abs(matrix[np.isfinite(matrix)])
    shown = cleaned(matrix, scale=float(finite.max()) if finite.size else 0.0)
    cells = [[number_text(v, digits) for v in row] for row in shown.tolist()]
    label = max(len(name), *(len(r) for r in rows))
    sizes = [max(len(c), *(len(cells[i][j]) for i in range(len(rows)))) for j, c in enumerate(columns)]
    blocks, start = [], 0
    while start < len(columns):  # as many columns as fit, at least one
        stop, used = start + 1, label + 2 + sizes[start]
        while stop < len(columns) and used + 2 + sizes[stop] <= width:
            used += 2 + sizes[stop]
            stop += 1
        blocks.append((start, stop))
        start = stop
    lines = []
    for k, (start, stop) in enumerate(blocks):
        if len(blocks) > 1:
            lines.append(f"{'' if k == 0 else chr(10)}({name}: columns {start + 1} to {stop} of {len(columns)})")
        lines.append(name.ljust(label) + "".join("  " + columns[j].rjust(sizes[j]) for j in range(start, stop)))
        lines += [rows[i].ljust(label) + "".join("  " + cells[i][j].rjust(sizes[j]) for j in range(start, stop))
                  for i in range(len(rows))]
    return "\n".join(lines)


def packed(head: str, items: Sequence[str], width: int = LINE_WIDTH) -> list[str]:
    """``head`` and the ``items`` joined by ``", "`` in lines of at most ``width`` characters, never breaking an item
    (``x11 = 0`` stays on one line); continuation lines are indented by two spaces."""
    lines, line = [], head
    for k, item in enumerate(items):
        text = item + ("," if k < len(items) - 1 else "")
        if line.strip() and len(line) + len(text) + (0 if line.endswith(" ") else 1) > width:
            lines.append(line.rstrip())
            line = "  "
        line += ("" if line.endswith(" ") else " ") + text
    lines.append(line.rstrip())
    return lines
