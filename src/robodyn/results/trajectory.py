"""Simulation results: :class:`Trajectory` (one run) and :class:`BatchTrajectory` (N runs on one grid)."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.atomic import write_bytes_atomic, write_text_atomic
from robodyn.base.errors import InputError, ShapeError, UnknownNameError
from robodyn.base.numbers import float_array
from robodyn.results.csv_text import csv_text
from robodyn.results.run import EventRecord, SimulationStats
from robodyn.results.sensitivities import (
    direction_index,
    freeze_sensitivities,
    output_columns,
    output_sensitivities_of,
    sensitivity_columns,
    sensitivity_npz,
)

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from robodyn.kinematics.paths import FramePath

__all__ = ["MAX_TRAJECTORY_BYTES", "BatchTrajectory", "EventRecord", "SimulationStats", "Trajectory"]

Array = NDArray[np.float64]

MAX_TRAJECTORY_BYTES: Final = 200_000_000  # Largest trajectory file Trajectory.load reads (unpacked, for .npz).


def _frozen(value: ArrayLike, shape: tuple[int, ...], label: str) -> Array:
    """A read-only float64 copy of a result's array of ``shape`` (NaN allowed: a failed run's rows)."""
    return float_array(value, label, shape=shape, finite=False,
                       not_array="trajectory: {what} must be an array of numbers",
                       wrong_shape="trajectory: {what} has shape {shape}, expected {expected}")


def _adopted(value: Array, shape: tuple[int, ...], label: str) -> Array:
    """``value`` made read-only in place when it is a writable float64 array owning its memory, else as
    :func:`_frozen` makes it (a read-only copy).

    For results made for the trajectory being built (:meth:`Trajectory._adopt`): taking them over saves
    a copy, and a view of some other buffer is still copied.
    """
    if (type(value) is np.ndarray and value.base is None and value.dtype == np.float64 and value.shape == shape
            and value.flags.writeable):
        value.setflags(write=False)
        return value
    return _frozen(value, shape, label)


def _column(names: Sequence[str], name: str, what: str) -> int:
    try:
        return list(names).index(name)
    except ValueError:
        raise UnknownNameError(f"unknown {what} {name!r} (the trajectory has {', '.join(names)})") from None


def _distinct(groups: dict[str, Sequence[str]]) -> None:
    """Each state, input and output of a trajectory named once (a table's column, ``state(name)``)."""
    for group, names in groups.items():
        if len(set(names)) != len(names):
            twice = next(name for k, name in enumerate(names) if name in names[:k])
            raise InputError(f"trajectory: the {group} {twice!r} is named twice: name each {group} once")


@dataclass(frozen=True, slots=True, eq=False)
class Trajectory:
    """One simulated trajectory.

    Attributes
    ----------
    t : (T,) times
    x : (T, n) states
    u : (T, m) inputs (as applied: for fixed-step methods, the values held over each step)
    y : (T, p) outputs
    states, inputs, outputs : names
    model : the model's name
    stats : :class:`SimulationStats`
    events : located events, in time order
    source : the model object simulated (None when the trajectory was built by hand); :meth:`frame` needs it
    params : (n_p,) the parameter values of the run, or None (the source's defaults)
    left_inputs : (T, m) the inputs an instant before each time (``u`` but at an input's jump, where ``u`` holds
        the value after it), or None when no input jumps at a stored time: for drawing curves through a run
    sensitivities : (T, k, n) dx/dtheta_j for the k :attr:`sensitivity_names`, or None (robodyn.simulate's
        ``sensitivities``; read one with :meth:`sensitivity`)
    output_sensitivities : (T, k, p) dy/dtheta_j, or None (also when y = x: then they are ``sensitivities``)
    sensitivity_names : what the sensitivities are taken with respect to: parameter names, and initial states as
        ``<state>(0)``
    sensitivity_method : how df/dx and df/dp were evaluated (``exact (symbolic)``, ``central differences``, ...)
    """

    t: Array
    x: Array
    u: Array
    y: Array
    states: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    model: str
    stats: SimulationStats
    events: tuple[EventRecord, ...] = field(default=())
    source: Any = field(default=None, repr=False, compare=False)
    params: Array | None = field(default=None, repr=False, compare=False)
    left_inputs: Array | None = field(default=None, repr=False, compare=False)
    sensitivities: Array | None = field(default=None, repr=False, compare=False)
    output_sensitivities: Array | None = field(default=None, repr=False, compare=False)
    sensitivity_names: tuple[str, ...] = field(default=(), repr=False, compare=False)
    sensitivity_method: str | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._freeze(self.t, self.x, self.u, self.y, adopt=False)

    @classmethod
    def _adopt(cls, t: Array, x: Array, u: Array, y: Array, states: tuple[str, ...], inputs: tuple[str, ...],
               outputs: tuple[str, ...], model: str, stats: SimulationStats,
               events: tuple[EventRecord, ...], *, source: Any = None, params: Array | None = None,
               left_inputs: Array | None = None, sensitivities: Array | None = None,
               output_sensitivities: Array | None = None, sensitivity_names: tuple[str, ...] = (),
               sensitivity_method: str | None = None) -> Trajectory:
        """The constructor for :func:`robodyn.simulate`: the same checks and result, but ``x``, ``u`` and ``y``
        are taken over (made read-only in place) when they own their memory, so the caller must not keep them.

        ``t`` and ``params`` are copied, since ``t`` may be the caller's ``t_eval``.
        """
        self = object.__new__(cls)
        for name, value in (("states", states), ("inputs", inputs), ("outputs", outputs), ("model", model),
                            ("stats", stats), ("events", events), ("source", source), ("params", params),
                            ("left_inputs", left_inputs), ("sensitivities", sensitivities),
                            ("output_sensitivities", output_sensitivities), ("sensitivity_names", sensitivity_names),
                            ("sensitivity_method", sensitivity_method)):
            object.__setattr__(self, name, value)
        self._freeze(t, x, u, y, adopt=True)
        return self

    def _freeze(self, t: Any, x: Any, u: Any, y: Any, adopt: bool) -> None:
        """Check the shapes and set t, x, u, y read-only: copies, or (``adopt``) fresh x, u, y themselves."""
        shape = np.shape(t)
        T = shape[0] if len(shape) == 1 else -1
        if T < 1:
            raise ShapeError("trajectory: t must be a non-empty vector")
        take = _adopted if adopt else _frozen
        set_ = object.__setattr__
        set_(self, "states", tuple(self.states))
        set_(self, "inputs", tuple(self.inputs))
        set_(self, "outputs", tuple(self.outputs))
        _distinct({"state": self.states, "input": self.inputs, "output": self.outputs})
        set_(self, "events", tuple(self.events))
        if self.params is not None:
            set_(self, "params", _frozen(self.params, (np.size(self.params),), "params"))
        set_(self, "t", _frozen(t, (T,), "t"))
        set_(self, "x", take(x, (T, len(self.states)), "x"))
        set_(self, "u", take(u, (T, len(self.inputs)), "u"))
        set_(self, "y", self.x if adopt and y is x else take(y, (T, len(self.outputs)), "y"))  # y = x: one array
        if self.left_inputs is not None:
            set_(self, "left_inputs", take(self.left_inputs, (T, len(self.inputs)), "left_inputs"))
        freeze_sensitivities(self, (T,), take)

    def __len__(self) -> int:
        return self.t.shape[0]

    def sensitivity(self, name: str) -> Array:
        """dx/d(name) along the run, ``(T, n)``: ``name`` a parameter, or an initial state (``theta`` or ``theta(0)``)
        among :attr:`sensitivity_names`."""
        index = direction_index(self.sensitivity_names, name)
        assert self.sensitivities is not None  # names come with their arrays (freeze_sensitivities)
        return self.sensitivities[:, index, :]

    def output_sensitivity(self, name: str) -> Array:
        """dy/d(name) = h_x dx/d(name) + dh/d(name) along the run, ``(T, n_outputs)`` (y = x: :meth:`sensitivity`)."""
        index = direction_index(self.sensitivity_names, name)
        return output_sensitivities_of(self)[:, index, :]

    @property
    def final(self) -> Array:
        """The last state, ``(n,)``."""
        return self.x[-1]

    def state(self, name: str) -> Array:
        """The time series of one state, ``(T,)``."""
        return self.x[:, _column(self.states, name, "state")]

    def output(self, name: str) -> Array:
        """The time series of one output, ``(T,)``."""
        return self.y[:, _column(self.outputs, name, "output")]

    def at(self, t: ArrayLike) -> Array:
        """States at times inside ``[t[0], t[-1]]`` by a cubic spline through the stored points.

        Accurate to the spline's order between stored points (and exact at them); for values at chosen
        times with the integrator's own accuracy, pass ``t_eval`` to :func:`robodyn.simulate`.

        Returns ``(n,)`` for a scalar time, ``(len(t), n)`` for a vector.
        """
        from robodyn.model.system import real_array

        times = real_array(t, "at(): times")
        if not np.all(np.isfinite(times)) or np.any(times < self.t[0]) or np.any(times > self.t[-1]):
            raise InputError(f"at(): times must lie in [{self.t[0]:g}, {self.t[-1]:g}], the simulated span")
        if len(self) == 1:
            return np.broadcast_to(self.x[0], (*times.shape, self.x.shape[1])).copy()
        from scipy.interpolate import make_interp_spline

        degree = min(3, len(self) - 1)
        return np.asarray(make_interp_spline(self.t, self.x, k=degree, axis=0)(times))

    def frame(self, name: str | None = None) -> FramePath:
        """The motion of the frame ``name`` (default: the tool frame) over the run, from the states' q and q'.

        Needs the model simulated (:attr:`source`, set by :func:`robodyn.simulate`) to have frames: a chain
        or a URDF robot. Poses and velocities are evaluated for all T states in one batch call with the
        run's parameters.

        Returns
        -------
        :class:`robodyn.kinematics.paths.FramePath` with ``position`` (T, 3), ``rotation`` (T, 3, 3),
        ``quaternion`` (T, 4), ``rpy`` (T, 3) and ``velocity`` (T, 6) = [v; w] in world axes.
        """
        from robodyn.kinematics.paths import frame_path

        return frame_path(self, name)

    # --- export -----------------------------------------------------------------------------------
    def _table(self) -> tuple[list[str], Array]:
        """CSV columns, each name once: t, the states, then the outputs but those that repeat a state
        (:func:`robodyn.results.sensitivities.output_columns`), then the sensitivities if any."""
        kept = output_columns(self)
        columns = ["t", *self.states, *(label for _, label in kept)]
        blocks = [self.t[:, None], self.x, self.y[:, [k for k, _ in kept]]]
        names, sensitivities = sensitivity_columns(self)
        return columns + names, np.hstack(blocks + sensitivities)

    def to_csv_text(self) -> str:
        """The CSV :meth:`to_csv` writes: the header ``t,<states>[,<outputs>]``, then one line per time; a run with
        sensitivities adds the columns ``d(<state>)/d(<name>)`` (and ``d(<output>)/d(<name>)`` when y is not x).
        Each name is one column: an output named like a state and holding its values (a chain's outputs begin with its
        states) is written once, as the state; one holding other values is written as ``y.<name>``.

        Each value is the shortest text that reads back to the same float (Python's ``repr``: ``0.04``, not
        ``0.040000000000000001``), so ``float()`` of every field gives the stored value exactly. The inputs
        are not written (:meth:`to_npz` keeps everything).
        """
        columns, table = self._table()
        return csv_text(columns, table.tolist())

    def to_csv(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_csv_text` (``t``, the states and the outputs, exact shortest floats) atomically."""
        write_text_atomic(path, self.to_csv_text())

    def to_npz(self, path: str | os.PathLike[str]) -> None:
        """Write every array, the names, the statistics, the events and the run's parameters (when known) as a
        compressed ``.npz``, atomically: :meth:`load` reads it all back (all but :attr:`source`)."""
        write_bytes_atomic(path, self.to_npz_bytes())

    def to_npz_bytes(self) -> bytes:
        """The bytes of the ``.npz`` file :meth:`to_npz` writes."""
        buffer = io.BytesIO()
        events: dict[str, Any] = {"event_names": np.array([e.name for e in self.events], dtype=str),
                  "event_t": np.array([e.t for e in self.events], dtype=float),
                  "event_x": np.array([e.x for e in self.events], dtype=float).reshape(len(self.events),
                                                                                      len(self.states)),
                  "event_terminal": np.array([e.terminal for e in self.events], dtype=bool)}
        extra: dict[str, Any] = {} if self.params is None else {"params": self.params}
        extra.update(sensitivity_npz(self))
        np.savez_compressed(
            buffer, t=self.t, x=self.x, u=self.u, y=self.y, states=np.array(self.states, dtype=str),
            inputs=np.array(self.inputs, dtype=str), outputs=np.array(self.outputs, dtype=str),
            model=np.array(self.model), stats=np.array(json.dumps(self.stats.to_dict())), **events, **extra,
        )
        return buffer.getvalue()

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, states: Sequence[str] | None = None,
             limit: int = MAX_TRAJECTORY_BYTES) -> Trajectory:
        """Read back a trajectory :meth:`to_npz` or :meth:`to_csv` wrote (chosen by the suffix, .npz or .csv).

        A ``.npz`` gives everything back: t, x, u, y, the names, the model's name, the statistics, the events
        and the run's parameters (:attr:`source` is None: :meth:`frame` needs a simulated trajectory).

        A CSV holds only the columns ``t``, the states and the outputs, so the rest is chosen:

        - the columns after ``t`` are all states (and the outputs are the states) unless ``states`` names
          the state columns, which must come first; the columns after them are then the outputs;
        - no inputs: ``inputs`` is ``()`` and ``u`` has shape ``(T, 0)`` (a CSV does not carry them);
        - the model's name is the file's stem, the statistics are ``SimulationStats("loaded", "unknown")``,
          there are no events and no parameters.

        Parameters
        ----------
        path
            A ``.csv`` or ``.npz`` file.
        states
            The state names: for a CSV, the columns that are states; for a ``.npz``, a check of its states.
        limit
            The largest file read, in bytes (for a ``.npz``, also the largest size its arrays unpack to).

        Raises
        ------
        InputError
            Naming the file and the problem: another suffix, no column ``t``, a value that is not a number,
            rows of different lengths, arrays missing or of the wrong shape, a file larger than ``limit``.
        """
        from robodyn.results.files import load_csv, load_npz

        file = Path(path)
        suffix = file.suffix.lower()
        if suffix == ".csv":
            return load_csv(cls, file, states, limit)
        if suffix == ".npz":
            return load_npz(cls, file, states, limit)
        raise InputError(f"{file}: unknown trajectory file type {suffix or '(no suffix)'!r}: give a .csv or .npz "
                         "file (as to_csv and to_npz write)")

    def to_dataframe(self) -> Any:
        """A pandas DataFrame indexed by t with the states, inputs and outputs as columns (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise InputError("to_dataframe() needs pandas: pip install pandas") from None
        columns, table = self._table()
        frame = pd.DataFrame(table[:, 1:], index=pd.Index(self.t, name="t"), columns=columns[1:])
        for j, name in enumerate(self.inputs):
            if name not in frame:
                frame[name] = self.u[:, j]
        return frame

    def plot(self, names: Sequence[str] | None = None, *, ax: Any = None, into: Any = None, style: str = "-",
             label_suffix: str = "") -> Figure:
        """A matplotlib Figure of the chosen states (default all) and the varying inputs against t: one axis per
        physical quantity, labelled with units when the model knows them (robodyn.results.plots.time_response, whose
        ``ax=``, ``into=`` and ``style`` overlay one run on another)."""
        from robodyn.results.plots import time_response

        return time_response(self, names, ax=ax, into=into, style=style, label_suffix=label_suffix)

    def _repr_html_(self) -> str:
        """A summary table (model, method and path, span, points, steps, final state) and a small SVG plot
        of the states, for Jupyter."""
        stats = self.stats
        from robodyn import display  # for notebooks only

        final = ", ".join(f"{n} = {display.number(v)}" for n, v in zip(self.states, self.final.tolist()))
        rows: list[tuple[str, object]] = [
            ("model", self.model), ("method", f"{stats.method} ({stats.path})"),
            ("span", f"[{display.number(self.t[0])}, {display.number(self.t[-1])}]"), ("points", len(self)),
            ("steps", f"{stats.steps} accepted, {stats.rejected} rejected, {stats.nfev} evaluations"),
            ("final state", final or "none"),
        ]
        if self.events:
            rows.append(("events", ", ".join(f"{e.name} at t = {display.number(e.t)}" for e in self.events)))
        parts = [display.heading(f"Trajectory of {self.model!r}"), display.html_table(rows, row_header=True)]
        if self.states:
            units = self.source.units() if self.source is not None else {}
            names = [f"{n} [{units[n]}]" if n in units else n for n in self.states]
            parts.append(display.svg_plot(self.t, self.x, names, xlabel="t [s]"))
        return display.block(parts)


@dataclass(frozen=True, slots=True, eq=False)
class BatchTrajectory:
    """N trajectories on one time grid.

    Attributes
    ----------
    t : (T,)
    x : (N, T, n)
    u : (N, T, m)
    y : (N, T, p)
    x0 : (N, n) initial states
    params : (N, n_p) parameter values of each run
    states, inputs, outputs, parameters : names
    model : the model's name
    stats : totals over the batch
    events : per trajectory, its located events (after a terminal event its later rows are NaN)
    source : the model object simulated (None when the batch was built by hand)
    sensitivities : (N, T, k, n) or None; output_sensitivities : (N, T, k, p) or None; sensitivity_names,
        sensitivity_method : as for :class:`Trajectory` (:meth:`sensitivity` reads one, ``(N, T, n)``)
    """

    t: Array
    x: Array
    u: Array
    y: Array
    x0: Array
    params: Array
    states: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    parameters: tuple[str, ...]
    model: str
    stats: SimulationStats
    events: tuple[tuple[EventRecord, ...], ...] = field(default=())
    source: Any = field(default=None, repr=False, compare=False)
    sensitivities: Array | None = field(default=None, repr=False, compare=False)
    output_sensitivities: Array | None = field(default=None, repr=False, compare=False)
    sensitivity_names: tuple[str, ...] = field(default=(), repr=False, compare=False)
    sensitivity_method: str | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._freeze(self.t, self.x, self.u, self.y, adopt=False)

    @classmethod
    def _adopt(cls, t: Array, x: Array, u: Array, y: Array, x0: Array, params: Array, states: tuple[str, ...],
               inputs: tuple[str, ...], outputs: tuple[str, ...], parameters: tuple[str, ...], model: str,
               stats: SimulationStats, events: tuple[tuple[EventRecord, ...], ...], *,
               source: Any = None, sensitivities: Array | None = None, output_sensitivities: Array | None = None,
               sensitivity_names: tuple[str, ...] = (), sensitivity_method: str | None = None) -> BatchTrajectory:
        """The constructor for :func:`robodyn.simulate`, as :meth:`Trajectory._adopt`: ``x``, ``u`` and ``y``
        are taken over when they own their memory; ``t``, ``x0`` and ``params`` are copied."""
        self = object.__new__(cls)
        for name, value in (("x0", x0), ("params", params), ("states", states), ("inputs", inputs),
                            ("outputs", outputs), ("parameters", parameters), ("model", model), ("stats", stats),
                            ("events", events), ("source", source), ("sensitivities", sensitivities),
                            ("output_sensitivities", output_sensitivities), ("sensitivity_names", sensitivity_names),
                            ("sensitivity_method", sensitivity_method)):
            object.__setattr__(self, name, value)
        self._freeze(t, x, u, y, adopt=True)
        return self

    def _freeze(self, t: Any, x: Any, u: Any, y: Any, adopt: bool) -> None:
        """As :meth:`Trajectory._freeze`, for N runs; x0 and params are copied."""
        N, T = np.shape(x)[:2]
        if self.events and len(self.events) != N:
            raise ShapeError(f"batch: {len(self.events)} event lists for {N} trajectories")
        _distinct({"state": tuple(self.states), "input": tuple(self.inputs), "output": tuple(self.outputs)})
        take = _adopted if adopt else _frozen
        set_ = object.__setattr__
        set_(self, "t", _frozen(t, (T,), "t"))
        set_(self, "x", take(x, (N, T, len(self.states)), "x"))
        set_(self, "u", take(u, (N, T, len(self.inputs)), "u"))
        set_(self, "y", self.x if adopt and y is x else take(y, (N, T, len(self.outputs)), "y"))
        set_(self, "x0", _frozen(self.x0, (N, len(self.states)), "x0"))
        set_(self, "params", _frozen(self.params, (N, len(self.parameters)), "params"))
        freeze_sensitivities(self, (N, T), take)

    def __len__(self) -> int:
        return self.x.shape[0]

    def sensitivity(self, name: str) -> Array:
        """dx/d(name) of every run, ``(N, T, n)`` (see :meth:`Trajectory.sensitivity`)."""
        index = direction_index(self.sensitivity_names, name)
        assert self.sensitivities is not None  # names come with their arrays (freeze_sensitivities)
        return self.sensitivities[:, :, index, :]

    def output_sensitivity(self, name: str) -> Array:
        """dy/d(name) of every run, ``(N, T, n_outputs)`` (y = x: :meth:`sensitivity`)."""
        index = direction_index(self.sensitivity_names, name)
        return output_sensitivities_of(self)[:, :, index, :]

    def __getitem__(self, index: int) -> Trajectory:
        """Trajectory number ``index`` (its stats are the batch's totals; it keeps the source and its
        parameters)."""
        if not -len(self) <= index < len(self):
            raise IndexError(f"batch has {len(self)} trajectories, index {index} is out of range")
        return Trajectory(self.t, self.x[index], self.u[index], self.y[index], self.states, self.inputs,
                          self.outputs, self.model, self.stats, self.events[index] if self.events else (),
                          source=self.source, params=self.params[index],
                          sensitivities=None if self.sensitivities is None else self.sensitivities[index],
                          output_sensitivities=None if self.output_sensitivities is None else
                          self.output_sensitivities[index], sensitivity_names=self.sensitivity_names,
                          sensitivity_method=self.sensitivity_method)

    def state(self, name: str) -> Array:
        """One state across the batch, ``(N, T)``."""
        return self.x[:, :, _column(self.states, name, "state")]

    def to_npz(self, path: str | os.PathLike[str]) -> None:
        """Write every array, the names and the statistics as a compressed ``.npz``, atomically."""
        buffer = io.BytesIO()
        names: Mapping[str, Sequence[str]] = {"states": self.states, "inputs": self.inputs,
                                              "outputs": self.outputs, "parameters": self.parameters}
        arrays: dict[str, Any] = {k: np.array(v, dtype=str) for k, v in names.items()}
        arrays.update(sensitivity_npz(self))
        np.savez_compressed(buffer, t=self.t, x=self.x, u=self.u, y=self.y, x0=self.x0, params=self.params,
                            model=np.array(self.model), stats=np.array(json.dumps(self.stats.to_dict())), **arrays)
        write_bytes_atomic(path, buffer.getvalue())


# --- reading back (Trajectory.load) -----------------------------------------------------------------------

    def _repr_html_(self) -> str:
        """A summary (model, runs, span, steps) and the first state of the first runs against t, for Jupyter."""
        from robodyn import display  # for notebooks only

        stats = self.stats
        rows: list[tuple[str, object]] = [
            ("model", self.model), ("runs", self.x.shape[0]), ("method", f"{stats.method} ({stats.path})"),
            ("span", f"[{display.number(self.t[0])}, {display.number(self.t[-1])}] s"), ("points", self.t.size),
            ("steps", f"{stats.steps} accepted, {stats.rejected} rejected (all runs)")]
        parts = [display.heading(f"Batch of {self.x.shape[0]} trajectories of {self.model!r}"),
                 display.html_table(rows, row_header=True)]
        if self.states:
            shown = min(self.x.shape[0], display.PLOT_CURVES)
            units = self.source.units() if self.source is not None else {}
            unit = f" [{units[self.states[0]]}]" if self.states[0] in units else ""
            names = [f"{self.states[0]}{unit} (run {i})" for i in range(shown)]
            parts.append(display.svg_plot(self.t, self.x[:shown, :, 0].T, names, xlabel="t [s]"))
        return display.block(parts)

