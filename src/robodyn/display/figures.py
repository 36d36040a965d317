"""Text on matplotlib figures: names from model files shown literally (:func:`literal`) and logarithmic axes
labelled in plain text (:func:`plain_log`). Every figure robodyn draws uses them."""

from __future__ import annotations

from typing import Any

__all__ = ["literal", "plain_log"]


def plain_log(*axes: Any) -> None:
    """Label the logarithmic axes of ``axes`` in plain text (``1e-03``) instead of matplotlib's math text
    (``10^{-3}``), which parses every tick label with pyparsing: a log-log figure's SVG took a second."""
    from matplotlib.ticker import LogFormatter, LogLocator, NullFormatter

    for ax in axes:
        for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
            if scale == "log":
                axis.set_major_formatter(LogFormatter(labelOnlyBase=True))
                axis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))  # 2 and 5 of each decade, not all 8
                axis.set_minor_formatter(NullFormatter())


def literal(text: object) -> str:
    """``text`` (a model's name, a unit, a frame: free text from a model file) as matplotlib shows it literally:
    every ``$`` escaped, so that no pair of them starts math text (``"$\\frac{$"`` would make matplotlib raise
    when the figure is drawn). Every text robodyn puts on a figure from a model goes through this."""
    return str(text).replace("$", r"\$")
