"""Measured motion for identification: reading it, checking it, and the accelerations by a zero-phase filter.

:func:`measurements` takes what robodyn.identify_rigid is given — a mapping of arrays, a mapping or CSV of named
columns, or a simulated :class:`~robodyn.results.trajectory.Trajectory` — and returns one :class:`Measurements` with
every
row checked: finite (a NaN is refused with its row, or its line in a CSV file) and strictly increasing times.

:func:`filtered` computes q'' when it is not measured, the way M. Gautier's identification practice does (W. Khalil,
E. Dombre, *Modeling, Identification and Control of Robots*, Hermes Penton 2002, describe it): a Butterworth
low-pass filter of order :data:`FILTER_ORDER` run forward and backward
(scipy.signal.sosfiltfilt: zero phase, so the filtered signals keep their timing, and an effective order of twice
that) on q and q' (q' by central differences of the filtered q when it is not measured), q'' by central differences
of the filtered q'. The torques pass through the same filter (the regression's two sides then see the same
bandwidth), the first and last EDGE_PERIODS / cutoff seconds are dropped (the filter's start-up), and every k-th row
is kept, k = max(1, floor(fs / (DECIMATION_MARGIN * 2 cutoff))): above the cutoff nothing is left to sample, and
rows that close would carry correlated errors (Gautier's parallel decimation). The cutoff should sit above the
motion's bandwidth — five to ten times the highest frequency of an excitation — and well below the noise.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError, ShapeError
from robodyn.identification.measured import MAX_DATA_BYTES, check_increasing, read_csv_columns
from robodyn.model.kinds.mechanical import velocity_name
from robodyn.results.trajectory import Trajectory

__all__ = ["DECIMATION_MARGIN", "EDGE_PERIODS", "FILTER_ORDER", "MAX_DATA_BYTES", "UNIFORM_RTOL", "Measurements",
           "filtered", "measurements"]

Array = NDArray[np.float64]
Data = Trajectory | str | os.PathLike[str] | Mapping[str, Any]

FILTER_ORDER: Final = 4  # Butterworth order of the low-pass filter (8 after the forward and backward passes).
DECIMATION_MARGIN: Final = 1.25  # Rows kept every fs / (1.25 * 2 cutoff) samples: 0.8 of the filtered Nyquist rate.
EDGE_PERIODS: Final = 5  # Samples within this many periods of the cutoff from either end are dropped: the start-up
# of the forward-backward filter on the odd extension (the curvature flips there) decays from 1e-3 to 1e-8 of the
# motion's amplitude over them (measured on a UR5 excitation at 200 Hz, cutoff 10 Hz).
UNIFORM_RTOL: Final = 1e-6  # Sampling steps equal to this relative spread count as uniform (the filter needs it).


@dataclass(frozen=True, slots=True)
class Measurements:
    """Checked samples: t (N,), q, qd, tau (N, n); qdd (N, n) when measured or given, else None; qd None when the
    data had no velocities (then the filter derives them); ``source`` names the data in messages."""

    t: Array
    q: Array
    qd: Array | None
    tau: Array
    qdd: Array | None
    source: str


def _column(columns: Mapping[str, Any], name: str, rows: int, source: str) -> Array:
    try:
        values = np.asarray(columns[name], dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{source}: column {name!r} must hold numbers") from None
    if values.shape != (rows,):
        raise ShapeError(f"{source}: column {name!r} has shape {values.shape}, expected ({rows},) like t")
    return values


def _named(columns: Mapping[str, Any], coordinates: tuple[str, ...], source: str) -> dict[str, Array | None]:
    """t, q, qd, qdd, tau from named columns: ``t``, the coordinates, ``<c>_dot``, ``<c>_ddot``, ``<c>_tau``."""
    if "t" not in columns:
        raise InputError(f"{source}: no column t: give the times as t, then {', '.join(coordinates)}, their "
                         "velocities <joint>_dot and torques <joint>_tau")
    rows = np.shape(columns["t"])[0] if np.ndim(columns["t"]) == 1 else -1
    if rows < 1:
        raise ShapeError(f"{source}: t must be a non-empty vector")
    found: dict[str, Array | None] = {"t": _column(columns, "t", rows, source)}
    kinds = (("q", "{}", True), ("qd", velocity_name("{}"), False), ("qdd", "{}_ddot", False),
             ("tau", "{}_tau", True))
    for key, pattern, required in kinds:
        names = [pattern.format(c) for c in coordinates]
        present = [name for name in names if name in columns]
        if not present and not required:
            found[key] = None
            continue
        missing = [name for name in names if name not in columns]
        if missing:
            raise InputError(f"{source}: no column {missing[0]!r}: the data need {', '.join(names)} (one per "
                             "coordinate)")
        found[key] = np.column_stack([_column(columns, name, rows, source) for name in names])
    return found


def _arrays(data: Mapping[str, Any], coordinates: tuple[str, ...], source: str) -> dict[str, Array | None]:
    """t, q, qd, qdd, tau from a mapping of arrays ``{"t": (N,), "q": (N, n), "qd", "tau"[, "qdd"]}``."""
    unknown = sorted(set(data) - {"t", "q", "qd", "qdd", "tau"})
    if unknown:
        raise InputError(f"{source}: unknown key {unknown[0]!r}: give t, q, qd, tau and optionally qdd")
    n = len(coordinates)
    found: dict[str, Array | None] = {}
    for key in ("t", "q", "qd", "qdd", "tau"):
        if key not in data or data[key] is None:
            if key in ("t", "q", "tau"):
                raise InputError(f"{source}: no {key!r}: give t (N,), q, tau (N, {n}) and optionally qd, qdd")
            found[key] = None
            continue
        try:
            value = np.asarray(data[key], dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"{source}: {key} must hold numbers") from None
        t = found.get("t")
        rows = t.size if t is not None else value.shape[0] if value.ndim == 1 else -1
        expected = (rows,) if key == "t" else (rows, n)
        if rows < 1 or value.shape != expected:
            raise ShapeError(f"{source}: {key} has shape {value.shape}, expected {expected} ({n} coordinates: "
                             f"{', '.join(coordinates)})")
        found[key] = value
    return found


def _trajectory(run: Trajectory, coordinates: tuple[str, ...], source: str) -> dict[str, Array | None]:
    """q and qd from a trajectory's states, the torques from its inputs ``<joint>_tau``."""
    need = [*coordinates, *(velocity_name(c) for c in coordinates)]
    torques = [f"{c}_tau" for c in coordinates]
    missing = [name for name in need if name not in run.states] + [n for n in torques if n not in run.inputs]
    if missing:
        raise InputError(f"{source}: the trajectory has no {missing[0]!r}: identification reads q and q' from its "
                         "states and the torques from inputs named <joint>_tau; give a mapping {t, q, qd, tau} "
                         "otherwise")
    states = [run.states.index(name) for name in need]
    inputs = [run.inputs.index(name) for name in torques]
    n = len(coordinates)
    return {"t": np.array(run.t), "q": run.x[:, states[:n]], "qd": run.x[:, states[n:]],
            "tau": run.u[:, inputs], "qdd": None}


def _csv(path: Path, coordinates: tuple[str, ...]) -> tuple[dict[str, Array | None], list[int]]:
    """The named columns of a CSV file (robodyn.identification.measured.read_csv_columns) and each row's line number."""
    header, table, lines = read_csv_columns(path, "measurement CSV")
    columns = {name: table[:, k] for k, name in enumerate(header)}
    return _named(columns, coordinates, str(path)), lines


def _rows(found: dict[str, Array | None], lines: list[int] | None, source: str) -> None:
    """Refuse non-finite values (naming the first row, or its file line) and times that do not increase."""
    def where(row: int) -> str:
        return f"line {lines[row]}" if lines is not None else f"row {row}"

    t = found["t"]
    assert t is not None
    for key in ("t", "q", "qd", "qdd", "tau"):
        value = found[key]
        if value is None:
            continue
        bad = ~np.isfinite(value) if value.ndim == 1 else ~np.all(np.isfinite(value), axis=1)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(f"{source}: {where(row)} (t = {t[row]:.6g}): {key} is not finite "
                             f"({np.atleast_1d(value[row]).tolist()}): remove or repair that sample")
    check_increasing(t, lambda row: f"{source}: {where(row)}")


def measurements(data: Data, coordinates: tuple[str, ...], qdd: Any = None) -> Measurements:
    """The checked samples of ``data`` (see the module docstring) for a model with ``coordinates``; ``qdd``
    (N, n) given separately replaces the data's."""
    lines = None
    if isinstance(data, Trajectory):
        source = f"trajectory of {data.model!r}"
        found = _trajectory(data, coordinates, source)
    elif isinstance(data, str | os.PathLike):
        source = str(data)
        found, lines = _csv(Path(data), coordinates)
    elif isinstance(data, Mapping):
        source = "data"
        found = _arrays(data, coordinates, source) if "q" in data else _named(data, coordinates, source)
    else:
        raise InputError(f"identify_rigid: data of type {type(data).__name__}: give a Trajectory, a CSV path or a "
                         "mapping {t, q, qd, tau[, qdd]}")
    if qdd is not None:
        found["qdd"] = _arrays({"t": found["t"], "q": found["q"], "tau": found["tau"], "qdd": qdd},
                               coordinates, "qdd")["qdd"]
    _rows(found, lines, source)
    t, q, tau = found["t"], found["q"], found["tau"]
    assert t is not None and q is not None and tau is not None
    return Measurements(t, q, found["qd"], tau, found["qdd"], source)


def filtered(data: Measurements, cutoff: float | None) -> tuple[Array, Array, Array, Array, Array, str]:
    """t, q, q', q'', tau after the zero-phase filter (module docstring) and a sentence saying what was done."""
    import scipy.signal

    t = data.t
    steps = np.diff(t)
    if steps.size < 2:
        raise InputError(f"{data.source}: {t.size} samples are too few to differentiate: record more")
    dt = float(np.median(steps))
    if np.max(np.abs(steps - dt)) > UNIFORM_RTOL * dt:
        raise InputError(f"{data.source}: the sampling is not uniform (steps from {steps.min():.6g} to "
                         f"{steps.max():.6g} s) and q'' is not given: resample to a uniform grid or give qdd")
    rate = 1.0 / dt
    if cutoff is None or not 0.0 < float(cutoff) < rate / 2:
        raise InputError(f"identify_rigid: q'' is computed by a low-pass filter whose cutoff= (Hz) must lie in (0, "
                         f"{rate / 2:.6g}) (the Nyquist frequency here), got {cutoff!r}: take five to ten times the "
                         "highest frequency of the motion (an Excitation's frequencies[-1]), or give qdd")
    cutoff = float(cutoff)
    sos = scipy.signal.butter(FILTER_ORDER, cutoff, fs=rate, output="sos")
    edge = math.ceil(EDGE_PERIODS * rate / cutoff - 1e-9)  # 1e-9: 100.00000000001 samples are 100
    if t.size <= 2 * edge + 3 * (2 * len(sos) + 1):
        raise InputError(f"{data.source}: {t.size} samples are too few for a filter at {cutoff:g} Hz (its start-up "
                         f"takes {edge} samples at each end): record longer or raise the cutoff")
    q = scipy.signal.sosfiltfilt(sos, data.q, axis=0)
    qd = (np.gradient(q, dt, axis=0, edge_order=2) if data.qd is None
          else scipy.signal.sosfiltfilt(sos, data.qd, axis=0))
    qdd = np.gradient(qd, dt, axis=0, edge_order=2)
    tau = scipy.signal.sosfiltfilt(sos, data.tau, axis=0)
    step = max(1, math.floor(rate / (DECIMATION_MARGIN * 2 * cutoff) + 1e-9))  # 1e-9: 19.9999... is 20
    keep = slice(edge, t.size - edge, step)
    how = (f"q'' from a zero-phase Butterworth filter (order {FILTER_ORDER}, cutoff {cutoff:g} Hz) and central "
           f"differences; torques filtered alike; {edge} samples dropped at each end; 1 row in {step} kept")
    return t[keep], q[keep], qd[keep], qdd[keep], tau[keep], how
