"""HTML and LaTeX pieces for Jupyter's rich display (``_repr_html_``, ``_repr_latex_``) of robodyn objects.

Pure string builders: escaping, compact numbers, tables, matrices as LaTeX ``bmatrix`` and as labelled HTML
tables, and a small inline SVG plot. Every piece of user text (names, reasons, equations) goes through
:func:`escape`. matplotlib is imported only when a plot is drawn, so ``import robodyn`` stays light.
"""

from __future__ import annotations

import dataclasses
import html
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "MAX_COLUMNS",
    "MAX_ROWS",
    "PLOT_CURVES",
    "PLOT_POINTS",
    "ROUND_OFF",
    "block",
    "cleaned",
    "escape",
    "figure_svg",
    "heading",
    "html_table",
    "latex_identifier",
    "latex_number",
    "math_block",
    "matrix_html",
    "matrix_latex",
    "model_html",
    "note",
    "number",
    "preformatted",
    "result_html",
    "svg_plot",
]

MAX_ROWS: Final = 12  # Matrix rows shown; the rest is cut, with a note.
MAX_COLUMNS: Final = 10  # Matrix columns shown: LaTeX's bmatrix takes at most 10 (amsmath's MaxMatrixCols).
PLOT_POINTS: Final = 400  # Points per curve of an inline plot at most (evenly spaced stored points).
PLOT_CURVES: Final = 8  # Curves of an inline plot at most (the first ones; the legend says how many).
#: Shown as 0: a value at most ROUND_OFF times the largest magnitude in its row (round-off of a computation whose
#: inputs are of that size: ~50 ulps of double precision's 2.2e-16, with room). Only what is shown is cleaned.
ROUND_OFF: Final = 1e-12


# --- text ---------------------------------------------------------------------------------------------
def escape(value: object) -> str:
    """``str(value)`` safe inside HTML text and attribute values (``<``, ``>``, ``&``, quotes escaped)."""
    return html.escape(str(value), quote=True)


def number(value: float | complex) -> str:
    """A number in at most 6 significant digits (``:.6g``); -0 as 0, complex as ``a ± bj``."""
    if isinstance(value, complex | np.complexfloating):
        z = complex(value)
        if z.imag == 0.0:
            return number(z.real)
        sign = "-" if z.imag < 0 else "+"
        return f"{number(z.real)} {sign} {number(abs(z.imag))}j"
    real = float(value)
    return "0" if real == 0.0 else f"{real:.6g}"


def cleaned(values: ArrayLike, scale: float | None = None) -> np.ndarray:
    """A copy of ``values`` for showing: entries at most :data:`ROUND_OFF` times the largest magnitude of their
    row (the last axis; a vector is one row) are 0, ``-0`` is 0. Complex entries: the real and the imaginary
    part each against the row's largest magnitude. ``scale`` replaces the rows' own scale.

    Only for what people read (``-9.46633e-30`` beside ``147.65`` is round-off, not information): the numbers
    robodyn returns are never cleaned.
    """
    array = np.array(values, dtype=complex if np.iscomplexobj(values) else float)
    if array.size == 0:
        return array
    magnitude = np.abs(array)
    finite = np.where(np.isfinite(magnitude), magnitude, 0.0)
    size = np.max(finite, axis=-1, keepdims=True) if array.ndim else finite
    threshold = ROUND_OFF * (size if scale is None else abs(float(scale)))
    if np.iscomplexobj(array):
        real = np.where(np.abs(array.real) <= threshold, 0.0, array.real)
        imag = np.where(np.abs(array.imag) <= threshold, 0.0, array.imag)
        return (real + 0.0) + 1j * (imag + 0.0)
    return np.where(np.abs(array) <= threshold, 0.0, array) + 0.0


def latex_number(value: float) -> str:
    """:func:`number` as LaTeX: ``1e-07`` becomes ``1 \\cdot 10^{-7}``, infinities ``\\infty``."""
    text = number(value)
    if text in ("inf", "-inf"):
        return text.replace("inf", r"\infty")
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    return f"{mantissa} \\cdot 10^{{{int(exponent)}}}"


def latex_identifier(name: str) -> str:
    """A name in upright LaTeX, its underscores escaped: ``q_dot`` -> ``\\mathrm{q\\_dot}``."""
    return r"\mathrm{" + re.sub(r"([_&%$#{}])", r"\\\1", name) + "}"


# --- HTML ---------------------------------------------------------------------------------------------
def _cell(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float | complex | np.number):
        return escape(number(value))  # type: ignore[arg-type]
    return escape(value)


def html_table(rows: Iterable[Sequence[object]], *, header: Sequence[object] | None = None,
               row_header: bool = False) -> str:
    """An HTML ``<table>``: numbers formatted by :func:`number`, everything else escaped.

    Parameters
    ----------
    rows
        One sequence of cells per row.
    header
        Column titles, or None for none.
    row_header
        Whether the first cell of each row is a label (``<th>``).
    """
    parts = ['<table style="border-collapse: collapse">']
    if header is not None:
        parts.append("<thead><tr>" + "".join(f"<th>{_cell(h)}</th>" for h in header) + "</tr></thead>")
    parts.append("<tbody>")
    for row in rows:
        cells = [f"<th style=\"text-align: left\">{_cell(c)}</th>" if row_header and k == 0 else
                 f"<td>{_cell(c)}</td>" for k, c in enumerate(row)]
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def heading(text: str) -> str:
    """A bold title line."""
    return f"<p><strong>{escape(text)}</strong></p>"


def note(text: str) -> str:
    """A small line of text (a truncation note, a verdict)."""
    return f"<p><small>{escape(text)}</small></p>"


def preformatted(text: str) -> str:
    """Plain text kept as written (equations when there is no LaTeX)."""
    return f"<pre>{escape(text)}</pre>"


def math_block(latex: str) -> str:
    """Display math for Jupyter's MathJax: ``$$latex$$``, escaped for HTML (MathJax reads the decoded text)."""
    return f"<div>$${escape(latex)}$$</div>"


def block(parts: Iterable[str]) -> str:
    """The pieces wrapped in one ``<div>``: a complete, self-contained HTML fragment."""
    return '<div class="robodyn">' + "".join(parts) + "</div>"


# --- matrices -----------------------------------------------------------------------------------------
def _shown(matrix: ArrayLike) -> tuple[np.ndarray, bool, bool]:
    """The part of a matrix that is shown, and whether rows and columns were cut."""
    values = np.atleast_2d(np.asarray(matrix))
    rows, columns = values.shape
    return values[:MAX_ROWS, :MAX_COLUMNS], rows > MAX_ROWS, columns > MAX_COLUMNS


def _cut_note(shape: tuple[int, ...]) -> str:
    rows, columns = shape
    shown = []
    if rows > MAX_ROWS:
        shown.append(f"the first {MAX_ROWS} of {rows} rows")
    if columns > MAX_COLUMNS:
        shown.append(f"the first {MAX_COLUMNS} of {columns} columns")
    return "showing " + " and ".join(shown) if shown else ""


def matrix_html(matrix: ArrayLike, rows: Sequence[str], columns: Sequence[str], *, title: str) -> str:
    """A matrix ``(r, c)`` as a table with row and column labels, cut to MAX_ROWS x MAX_COLUMNS with a note.

    Parameters
    ----------
    matrix : (r, c)
    rows, columns : r and c labels (the state, input or output names)
    title : shown in the table's top-left corner
    """
    values = np.atleast_2d(np.asarray(matrix))
    shown, _, _ = _shown(values)
    body = [[rows[i], *shown[i].tolist()] for i in range(shown.shape[0])]
    table = html_table(body, header=[title, *columns[:MAX_COLUMNS]], row_header=True)
    cut = _cut_note(values.shape)
    return table + (note(cut) if cut else "")


def matrix_latex(matrix: ArrayLike) -> str:
    """A matrix as a LaTeX ``bmatrix``; rows and columns beyond the limits become ``\\vdots`` / ``\\cdots``."""
    values = np.atleast_2d(np.asarray(matrix))
    shown, more_rows, more_columns = _shown(values)
    if more_columns:  # keep within bmatrix's 10 columns: the last shown column makes room for the dots
        shown = shown[:, : MAX_COLUMNS - 1]
    if more_rows:
        shown = shown[: MAX_ROWS - 1]
    lines = [[latex_number(v) for v in row] + ([r"\cdots"] if more_columns else []) for row in shown.tolist()]
    if more_rows:
        lines.append([r"\vdots"] * shown.shape[1] + ([r"\ddots"] if more_columns else []))
    body = " \\\\ ".join(" & ".join(row) for row in lines)
    return f"\\begin{{bmatrix}} {body} \\end{{bmatrix}}"


# --- plots --------------------------------------------------------------------------------------------
def svg_plot(t: ArrayLike, values: ArrayLike, names: Sequence[str], *, xlabel: str = "t") -> str:
    """A small line plot of the columns of ``values`` against ``t`` as an inline ``<svg>`` element.

    Drawn in memory on a matplotlib :class:`~matplotlib.figure.Figure` that no GUI backend or pyplot
    registry knows of (nothing to close, no file written), with at most PLOT_POINTS points per curve and
    PLOT_CURVES curves. The SVG's own ``<style>`` is left out: inside an HTML page it would apply to the
    whole page.

    Parameters
    ----------
    t : (T,)
    values : (T, k)
    names : k curve names, for the legend
    """
    import matplotlib
    from matplotlib.figure import Figure

    times = np.asarray(t, dtype=float)
    data = np.asarray(values, dtype=float).reshape(times.size, -1)
    keep = np.unique(np.linspace(0, times.size - 1, min(times.size, PLOT_POINTS)).round().astype(int))
    figure = Figure(figsize=(5.0, 2.2), layout="constrained")
    axes = figure.subplots()
    marker = "." if times.size == 1 else None
    for j, name in enumerate(names[:PLOT_CURVES]):
        axes.plot(times[keep], data[keep, j], marker=marker, linewidth=1.0, label=name)
    if len(names) > PLOT_CURVES:
        axes.set_title(f"the first {PLOT_CURVES} of {len(names)} curves", fontsize=8)
    axes.set_xlabel(xlabel, fontsize=8)
    axes.tick_params(labelsize=7)
    if names:
        axes.legend(loc="best", fontsize=7)
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text as <text>, not glyph outlines: smaller
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    figure.clear()
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg"):]  # drop the XML declaration and DOCTYPE
    return re.sub(r"<style[^>]*>.*?</style>", "", svg, flags=re.S)


def model_html(model: Any) -> str:
    """A model's summary: name, kind, states, inputs, outputs, the parameters with their units (a table) and the
    equations typeset as SVG (robodyn.display.formulas: no MathJax or network needed), or ``show_text()`` as plain text
    when the model has no symbolic equations."""
    summary = [("kind", model.kind), ("states", ", ".join(model.states) or "none"),
               ("inputs", ", ".join(model.inputs) or "none"), ("outputs", ", ".join(model.outputs) or "none")]
    parts = [heading(f"{type(model).__name__} {model.name!r}"), html_table(summary, row_header=True)]
    if model.parameters:
        units = model.units()
        parts.append(html_table([(name, value, units.get(name, "")) for name, value in model.parameters.items()],
                                header=("parameter", "default", "unit"), row_header=True))
    from robodyn.display.formulas import formulas_html  # typeset as SVG: readable where no MathJax runs

    parts.append(formulas_html(model))
    return block(parts)


# --- results ------------------------------------------------------------------------------------------
def figure_svg(figure: Any) -> str:
    """A matplotlib Figure as an inline ``<svg>`` element (no XML header, no external references), its own
    ``<style>`` left out (inside a page it would apply to the whole page). Text stays text (``<text>``, in the
    reader's sans-serif font: selectable, searchable, and a test can read the axis labels, each in a group with
    the id ``axis-label-<axes>-<x|y|z>``)."""
    import matplotlib

    for k, axes in enumerate(figure.axes):
        for name in ("x", "y", "z"):
            axis = getattr(axes, f"{name}axis", None)
            if axis is not None and axis.label.get_text():
                axis.label.set_gid(f"axis-label-{k}-{name}")
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # robodyn's figures lay themselves out
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg"):]
    return re.sub(r"<style[^>]*>.*?</style>", "", svg, flags=re.S)


def _field_value(value: Any, unit: str) -> str | None:
    """One field of a result as text, or None when it is not for a table (models, functions, large arrays)."""
    suffix = f" {unit}" if unit else ""
    if value is None or isinstance(value, str | bool | np.bool_):
        return None if value is None else str(value) + (suffix if isinstance(value, str) else "")
    if isinstance(value, int | float | complex | np.number):
        return number(value) + suffix  # type: ignore[arg-type]
    if isinstance(value, np.ndarray | list | tuple) and all(not isinstance(v, Sequence | np.ndarray) or
                                                          isinstance(v, str) for v in value):
        array = np.asarray(value)
        if array.dtype.kind in "biufc" and array.size <= MAX_COLUMNS:
            return "[" + ", ".join(number(v) for v in cleaned(array).ravel()) + "]" + suffix
        if array.dtype.kind in "biufc":
            low, high = float(np.min(array.real)), float(np.max(array.real))
            return f"{array.size} values from {number(low)} to {number(high)}"
        if array.size <= MAX_COLUMNS:
            return ", ".join(str(v) for v in array.ravel())
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufc":
        return f"array of shape {value.shape}"
    return None


def result_html(result: Any, title: str | None = None, *, units: Mapping[str, str] | None = None,
                plot: bool = True) -> str:
    """A frozen result (a dataclass) for Jupyter: its title, a table of its fields (numbers with their units,
    round-off shown as 0, small arrays in full, large ones summarized) and, when it has a ``plot()``, the figure.
    The one ``_repr_html_`` of robodyn's results that need nothing of their own."""
    label = title or type(result).__name__
    rows = []
    for item in dataclasses.fields(result):
        if item.name.startswith("_"):
            continue
        text = _field_value(getattr(result, item.name), (units or {}).get(item.name, ""))
        if text is not None:
            rows.append((item.name.replace("_", " "), text))
    parts = [heading(label), html_table(rows, row_header=True)]
    if plot and callable(getattr(result, "plot", None)):
        try:
            parts.append(figure_svg(result.plot()))
        except Exception as exc:  # a result that cannot be drawn still shows its table
            parts.append(note(f"(no figure: {exc})"))
    return block(parts)
