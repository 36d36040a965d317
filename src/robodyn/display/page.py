"""The pieces of robodyn's HTML pages (the analyze report, the fit report of an identification): numbers as people read
them, tables, matrices, figures, strict JSON.

Numbers are shown with 6 significant digits after :func:`robodyn.display.html.cleaned` (round-off against the
scale of its row, or of its whole matrix for a matrix, is shown as 0); the JSON keeps every number as computed,
with non-finite ones as ``null`` (strict JSON: ``Infinity`` and ``NaN`` are not JSON, and every strict parser
refuses them).
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from robodyn.base.errors import RobodynError
from robodyn.display import cleaned, figure_svg

__all__ = ["STYLE", "figure", "guarded", "json_data", "matrix", "number", "page", "strict_json", "table"]

STYLE: Final = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}
h1{border-bottom:2px solid #1f77b4;padding-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}td,th{border:1px solid #ccc;padding:.2em .5em;
text-align:right}th{background:#f2f5f9}td.text,th.text{text-align:left}pre{background:#f7f7f7;padding:.6em;
overflow-x:auto}.figure{display:inline-block;margin:.3em;vertical-align:top}.figure svg{max-width:100%;height:auto}
.formula{margin:.25em 0;overflow-x:auto}.formula svg{max-width:100%;height:auto}
.note{color:#8a5a00;background:#fff8e6;padding:.4em .6em;border-left:3px solid #f0ad4e}
.verdict{font-weight:bold}.stable{color:#1a7f37}.unstable{color:#c0392b}
"""


def number(value: float | np.floating[Any] | int) -> str:
    """One number in 6 significant digits (no ``-0``); ``inf`` and ``nan`` as words."""
    value = 0.0 if value == 0 else float(value)
    return f"{value:.6g}" if math.isfinite(value) else str(value)


def figure(picture: Any, caption: str) -> str:
    """A figure with its caption (the caption is text, escaped)."""
    return f'<div class="figure">{figure_svg(picture)}<div>{html.escape(caption)}</div></div>'


def table(header: Sequence[Any], rows: Sequence[Sequence[Any]], text_columns: int = 1) -> str:
    """A table: the first ``text_columns`` cells of each row are text, numbers are cleaned per row and shown by
    :func:`number`, everything else escaped."""
    def cell(value: Any, k: int, tag: str) -> str:
        text = number(value) if isinstance(value, float | np.floating | int) and not isinstance(value, bool) \
            else str(value)
        kind = ' class="text"' if k < text_columns else ""
        return f"<{tag}{kind}>{html.escape(text)}</{tag}>"

    head = "".join(cell(h, k, "th") for k, h in enumerate(header))
    body = "".join("<tr>" + "".join(cell(v, k, "td") for k, v in enumerate(_cleaned_row(row, text_columns)))
                   + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _cleaned_row(row: Sequence[Any], text_columns: int) -> list[Any]:
    """The row with its numbers (after the text columns) cleaned of round-off against each other."""
    cells = list(row)
    numeric = [k for k in range(text_columns, len(cells)) if isinstance(cells[k], float | np.floating | int)
               and not isinstance(cells[k], bool)]
    if numeric:
        for k, value in zip(numeric, cleaned([float(cells[k]) for k in numeric]).tolist()):
            cells[k] = value
    return cells


def matrix(name: str, values: np.ndarray, rows: tuple[str, ...], columns: tuple[str, ...], limit: int = 14) -> str:
    """A labelled matrix table, cut to ``limit`` rows and columns with a note; round-off against the matrix's largest
    entry shown as 0 (a row can be round-off throughout: an arm's base yaw row where gravity torques cancel)."""
    if values.size == 0:
        return f"<p>{html.escape(name)} is empty.</p>"
    finite = np.abs(values[np.isfinite(values)])
    shown = cleaned(values, scale=float(finite.max()) if finite.size else 0.0)[:limit, :limit]  # a row of round-off
    note = f" (first {limit} rows and columns of {values.shape[0]} x {values.shape[1]})" \
        if max(values.shape) > limit else ""
    body = table([name, *columns[:limit]], [[r, *row] for r, row in zip(rows[:limit], shown.tolist())])
    return f"<h4>{html.escape(name)}{html.escape(note)}</h4>{body}"


def guarded(sections: list[str], data: dict[str, Any], key: str, title: str,
            build: Callable[[], tuple[str, Any]]) -> Any:
    """Append section ``title`` built by ``build`` (html, data); on a robodyn error, the reason instead."""
    try:
        body, value = build()
    except RobodynError as exc:
        sections.append(f"<h2>{html.escape(title)}</h2><p class=\"note\">Not available: {html.escape(str(exc))}</p>")
        data[key] = {"error": str(exc)}
        return None
    sections.append(f"<h2>{html.escape(title)}</h2>{body}")
    data[key] = value
    return value


def _plain(value: Any) -> Any:
    """``value`` as JSON data: arrays as lists, complex numbers as [re, im], non-finite floats as None."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, complex | np.complexfloating):
        return [_plain(float(value.real)), _plain(float(value.imag))]
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, int | np.integer):
        return int(value)
    if value is None or isinstance(value, str):
        return value
    return str(value)


def json_data(value: Any) -> Any:
    """``value`` as JSON data: arrays as lists, complex numbers as [re, im], non-finite floats as None (what
    :func:`strict_json` writes)."""
    return _plain(value)


def strict_json(data: Any) -> str:
    """``data`` as strict JSON text (no NaN or Infinity: they become null), indented by one space."""
    return json.dumps(_plain(data), indent=1, allow_nan=False) + "\n"


def page(title: str, intro: str, sections: list[str]) -> str:
    """The whole page: head with the style, the title, the introduction and the sections."""
    head = (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>")
    return head + f"<h1>{html.escape(title)}</h1>{intro}" + "".join(sections) + "</body></html>\n"
