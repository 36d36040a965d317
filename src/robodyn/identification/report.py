"""The fit report of robodyn.identify: one HTML page, like ``robodyn analyze``'s.

It shows the estimates with their standard errors, their correlations, each measured output against the model's at
the estimates and the residuals over time (one figure per data set), and the fit's statistics. The figures are
inline SVG with their text kept as text (robodyn.display.html.figure_svg): the page is one self-contained file.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from robodyn.base.atomic import check_output_path, write_text_atomic
from robodyn.base.errors import InputError
from robodyn.display.page import figure, matrix, page, table

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["EmbeddedView", "FittedRun", "IdentificationResult", "MeasuredTable", "identification_page", "view_section",
           "write_identification_report"]

MAX_DRAWN: int = 20_000  # Samples drawn per curve: more are drawn every k-th (a figure of a million points is slow).
VIEW_HEIGHT: int = 540  # CSS pixels of the embedded 3-D view, as in robodyn's other reports


class EmbeddedView(Protocol):
    """What the report reads of a 3-D view (robodyn.view's View, made above this layer): the page as an
    ``<iframe srcdoc>`` sandboxed to its own scripts, ``height`` CSS pixels tall."""

    def embedded(self, height: int = ...) -> str: ...


class MeasuredTable(Protocol):
    """What the report reads of a measured data set (robodyn.identification.measured.Table): ``t`` (N,), each of
    ``columns`` (N,) by name, and ``source``, the name of the data."""

    @property
    def t(self) -> NDArray[np.float64]: ...
    @property
    def columns(self) -> Mapping[str, NDArray[np.float64]]: ...
    @property
    def source(self) -> str: ...


class FittedRun(Protocol):
    """What the report reads of the model simulated at the estimates (a Trajectory): ``y`` (N, p), its columns
    named by ``outputs``."""

    @property
    def y(self) -> NDArray[np.float64]: ...
    @property
    def outputs(self) -> tuple[str, ...]: ...


class IdentificationResult(Protocol):
    """What the report reads of robodyn.identify's result (robodyn.identification.result.Identification): read
    through this protocol, so the report layer imports nothing of robodyn.identification."""

    @property
    def values(self) -> Mapping[str, float]: ...
    @property
    def standard_errors(self) -> Mapping[str, float]: ...
    @property
    def correlation(self) -> NDArray[np.float64]: ...
    @property
    def cost(self) -> float: ...
    @property
    def model(self) -> Any: ...
    @property
    def noise(self) -> Mapping[str, float]: ...
    @property
    def rms(self) -> Mapping[str, float]: ...
    @property
    def fit(self) -> Mapping[str, float]: ...
    @property
    def fitted(self) -> Sequence[FittedRun]: ...
    @property
    def measured(self) -> Sequence[MeasuredTable]: ...
    @property
    def samples(self) -> int: ...
    @property
    def degrees_of_freedom(self) -> int: ...
    @property
    def evaluations(self) -> int: ...
    @property
    def message(self) -> str: ...


def _measured_and_fitted(result: IdentificationResult, k: int) -> Any:
    """Measured (dots) against fitted (line) of each output of data set ``k``, and the residuals below."""
    import matplotlib.pyplot as plt

    table_ = result.measured[k]
    run = result.fitted[k]
    outputs = [name for name in table_.columns if name in run.outputs]
    step = max(1, table_.t.size // MAX_DRAWN)
    picture, axes = plt.subplots(2, len(outputs), figsize=(5.2 * len(outputs), 5.0), squeeze=False, sharex=True)
    for j, name in enumerate(outputs):
        fitted = run.y[:, run.outputs.index(name)]
        measured = table_.columns[name]
        top, bottom = axes[0, j], axes[1, j]
        top.plot(table_.t[::step], measured[::step], ".", markersize=2, color="#888888", label="measured")
        top.plot(table_.t[::step], fitted[::step], "-", color="#1f77b4", label="fitted")
        top.set_ylabel(name)
        top.legend(loc="best", fontsize=8)
        bottom.plot(table_.t[::step], (measured - fitted)[::step], ".", markersize=2, color="#c0392b")
        bottom.axhline(0.0, color="#444444", linewidth=0.8)
        bottom.set_ylabel(f"{name}: measured - fitted")
        bottom.set_xlabel("t [s]")
    picture.tight_layout()
    return picture


def identification_page(result: IdentificationResult, title: str, views: Sequence[str] = ()) -> str:
    """The report's HTML (see the module docstring); ``views``: sections made above this layer, inserted after the
    fit as they are (robodyn's own HTML: the robot in 3-D playing a fitted run, robodyn.report.views.run_view)."""
    import matplotlib.pyplot as plt

    names = tuple(result.values)
    rows = [[name, value, result.standard_errors[name],
             f"{100 * result.standard_errors[name] / abs(value):.3g} %" if value else "-"]
            for name, value in result.values.items()]
    sections = [f"<h2>Estimates</h2>{table(['fitted', 'estimate', 'standard error', 'relative'], rows)}",
                f"<h2>Correlations</h2>{matrix('correlation', result.correlation, names, names)}"]
    fit_rows = [[name, result.rms[name], result.fit[name], result.noise[name]] for name in result.rms]
    sections.append("<h2>Fit</h2>" + table(["output", "rms error", "fit %", "noise level"], fit_rows)
                    + f"<p>{result.samples} residuals, {result.degrees_of_freedom} degrees of freedom, cost "
                      f"{result.cost:.6g}, {result.evaluations} simulations; the optimizer: "
                      f"{html.escape(result.message)}</p>")
    sections += list(views)
    for k in range(len(result.measured)):
        picture = _measured_and_fitted(result, k)
        try:
            caption = f"data set {k + 1} ({result.measured[k].source}): measured and fitted, and the residuals"
            sections.append(figure(picture, caption))
        finally:
            plt.close(picture)
    intro = (f"<p>Output-error fit of {html.escape(', '.join(names))} to {len(result.measured)} data set(s), "
             "by Levenberg–Marquardt on the exact sensitivities; standard errors and correlations from the "
             "Jacobian at the optimum.</p>")
    return page(title, intro, sections)


def view_section(view: EmbeddedView, what: str = "The run") -> str:
    """The report's section showing ``view`` (a page of robodyn.view: the robot playing a fitted run); ``what``
    (plain text, escaped) starts its sentence."""
    embedded = getattr(view, "embedded", None)
    if not callable(embedded):
        raise InputError(f"report: view must be a page made by robodyn.view (got {type(view).__name__}): pass "
                         "view=robodyn.view(result.model, result.fitted[0]), or leave it out", key="view")
    return (f"<h2>The robot in 3-D</h2><p>{html.escape(what)}: press play (real time), or move the slider; drag to "
            "turn, shift-drag to pan, the wheel to zoom.</p>" + str(embedded(height=VIEW_HEIGHT)))


def write_identification_report(result: IdentificationResult, path: str | os.PathLike[str],
                                views: Sequence[str] = ()) -> None:
    """Write the report to ``path`` (an ``.html`` file), atomically, after every check (``views``: as
    :func:`identification_page`)."""
    check_output_path(path, "report")
    text = identification_page(result, f"Identification of {result.model.name}", views)
    write_text_atomic(path, text)
