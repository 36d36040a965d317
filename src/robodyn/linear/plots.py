"""The Bode diagram of a linear system: magnitude in dB and phase in degrees against frequency in rad/s.

:func:`bode` returns a matplotlib Figure (drawn off-screen) with one curve per (output, input) pair on a log
frequency axis, labelled with the signals' units; for one input and one output the margins of
:func:`robodyn.linear.lti.margins` are marked (the gain crossover, where |L| = 0 dB, with the phase margin,
and the phase crossover, where the phase is -180 deg, with the gain margin). In discrete time the response is
G(exp(j w dt)) and the Nyquist frequency pi / dt is drawn. The frequencies default to
:func:`robodyn.linear.lti.default_frequencies`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from robodyn.base.errors import InputError, RobodynError
from robodyn.display.figures import literal, plain_log

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["bode"]


def _label(name: str, units: dict[str, str]) -> str:
    return literal(f"{name} [{units[name]}]" if name in units else name)


def _mark_margins(system: Any, magnitude_axis: Axes, phase_axis: Axes, omega: np.ndarray, phase: np.ndarray) -> str:
    """Draw the crossovers of a SISO loop on the curves (phase (K,) as drawn, unwrapped); the title's margin text
    (or why there is none)."""
    from robodyn.linear.margins import margins

    try:
        result = margins(system)
    except RobodynError as exc:  # a discrete-time pole at z = -1: the figure without its margins
        return f"margins not marked: {exc}"
    texts = []
    shown = (float(omega[0]), float(omega[-1]))
    if math.isfinite(result.gain_crossover) and shown[0] <= result.gain_crossover <= shown[1]:
        for axis in (magnitude_axis, phase_axis):
            axis.axvline(result.gain_crossover, color="tab:green", linestyle=":", linewidth=1)
        phase_axis.plot([result.gain_crossover], [np.interp(result.gain_crossover, omega, phase)], "o",
                        color="tab:green")
        texts.append(f"PM = {result.phase_margin:.3g} deg at {result.gain_crossover:.3g} rad/s")
    if not math.isfinite(result.gain_margin):
        texts.append("GM infinite")
    elif math.isfinite(result.phase_crossover) and shown[0] <= result.phase_crossover <= shown[1]:
        for axis in (magnitude_axis, phase_axis):
            axis.axvline(result.phase_crossover, color="tab:red", linestyle=":", linewidth=1)
        magnitude_axis.plot([result.phase_crossover], [-result.gain_margin_db], "o", color="tab:red")
        texts.append(f"GM = {result.gain_margin_db:.3g} dB at {result.phase_crossover:.3g} rad/s")
    return ", ".join(texts) if texts else "no crossover in the plotted range"


def bode(system: Any, w: ArrayLike | None = None, *, margins: bool = True) -> Figure:
    """The Bode diagram of ``system``: |G| in dB and arg G in degrees (unwrapped) against w in rad/s.

    Parameters
    ----------
    system
        A LinearSystem (continuous or discrete time).
    w : (K,), optional
        Frequencies in rad/s, > 0 (the axis is logarithmic); default
        :func:`~robodyn.linear.lti.default_frequencies`.
    margins
        Mark the gain and phase crossovers and the margins when the system has one input and one output
        (robodyn.linear.margins: this system taken as the loop transfer L; the title says when they cannot be).

    Returns
    -------
    Figure
        Two axes (magnitude, phase) sharing the frequency axis; one curve per pair, labelled "input -> output".
    """
    from matplotlib.figure import Figure

    from robodyn.linear.lti import as_linear, check_frequencies, default_frequencies, frequency_response

    linear = as_linear(system, "bode")
    omega = default_frequencies(linear) if w is None else check_frequencies(w)
    if np.any(omega <= 0.0):
        raise InputError("bode: the frequencies must be > 0 (the frequency axis is logarithmic)")
    if not linear.inputs:
        raise InputError(f"bode: {linear.name!r} has no inputs: there is no transfer function to draw")
    response = frequency_response(linear, omega)
    units = linear.units()
    figure = Figure(figsize=(8, 6), layout="constrained")
    magnitude_axis, phase_axis = figure.subplots(2, 1, sharex=True)
    with np.errstate(divide="ignore"):
        magnitude = 20.0 * np.log10(np.abs(response))
    phase = np.degrees(np.unwrap(np.angle(response), axis=0))
    for i, output in enumerate(linear.outputs):
        for j, input in enumerate(linear.inputs):
            label = f"{_label(input, units)} -> {_label(output, units)}"
            magnitude_axis.semilogx(omega, magnitude[:, i, j], label=label)
            phase_axis.semilogx(omega, phase[:, i, j], label=label)
    magnitude_axis.set_ylabel("magnitude [dB]")
    phase_axis.set_ylabel("phase [deg]")
    phase_axis.set_xlabel("frequency [rad/s]")
    for axis in (magnitude_axis, phase_axis):
        axis.grid(alpha=0.3, which="both")
    if linear.dt is not None:
        for axis in (magnitude_axis, phase_axis):
            axis.axvline(math.pi / linear.dt, color="0.5", linewidth=1, label="Nyquist pi/dt")
    title = f"{literal(linear.name)}: Bode diagram"
    if linear.dt is not None:
        title += f" (discrete-time, dt = {linear.dt:g} s)"
    if margins and len(linear.inputs) == len(linear.outputs) == 1:
        magnitude_axis.axhline(0.0, color="0.6", linewidth=0.8)
        phase_axis.axhline(-180.0, color="0.6", linewidth=0.8)
        title += "\n" + literal(_mark_margins(linear, magnitude_axis, phase_axis, omega, phase[:, 0, 0]))
    magnitude_axis.set_title(title, fontsize=10)
    magnitude_axis.legend(loc="best", fontsize=8)
    plain_log(magnitude_axis, phase_axis)
    return figure
