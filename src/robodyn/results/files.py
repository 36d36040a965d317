"""Reading trajectories back: the CSV and ``.npz`` files :meth:`robodyn.Trajectory.to_csv` and ``to_npz`` write
(:meth:`robodyn.Trajectory.load`), with every array, name and size checked against what was written."""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import TypeVar

import numpy as np

from robodyn.base.errors import InputError
from robodyn.base.textfile import csv_numbers, parse_json_limited, read_text_limited
from robodyn.results.run import NPZ_KEYS, Array, EventRecord, Run, SimulationStats

R = TypeVar("R", bound=Run)  # the class a reader is asked to build

__all__ = ["load_csv", "load_npz"]


def load_csv(build: Callable[..., R], file: Path, states: Sequence[str] | None, limit: int) -> R:
    """A trajectory from the CSV :meth:`Trajectory.to_csv` writes (the choices are in :meth:`Trajectory.load`), made
    by ``build`` (the class: called as ``Trajectory`` is)."""
    text = read_text_limited(file, "trajectory CSV", limit=limit).removeprefix("\ufeff")
    lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise InputError(f"{file}: empty: expected the header t,<states>,<outputs> and one line per time")
    header = [name.strip() for name in lines[0][1].split(",")]
    if header[0] != "t":
        raise InputError(f"{file}:{lines[0][0]}: the first column is {header[0]!r}, expected t: a trajectory CSV "
                         "starts with the header t,<states>,<outputs>")
    if len(header) == 1 or not all(header):
        raise InputError(f"{file}:{lines[0][0]}: the header {lines[0][1]!r} needs t and one name per column")
    if len(lines) == 1:
        raise InputError(f"{file}: a header but no data: expected one line per time")
    table = csv_numbers(file, header, lines[1:])
    plain = [name for name in header[1:] if not _SENSITIVITY.match(name)]
    x_names, y_names = _state_columns(file, plain, states)
    n = len(x_names)
    x = table[:, 1:1 + n]
    y = x if y_names == x_names else table[:, 1 + n:1 + len(plain)]
    found = _csv_sensitivities(file, header, table, len(plain), x_names, y_names)
    return _built(build, file, table[:, 0], x, np.zeros((len(table), 0)), y, x_names, (), y_names, file.stem,
                  SimulationStats("loaded", "unknown"), sensitivities=found)


#: A sensitivity column of to_csv: d(<state or output>)/d(<parameter or state(0)>).
_SENSITIVITY = re.compile(r"^d\(([^()]+)\)/d\((.+)\)$")


def _csv_sensitivities(file: Path, header: list[str], table: Array, plain: int, x_names: tuple[str, ...],
                       y_names: tuple[str, ...]) -> tuple[Array, Array | None, tuple[str, ...]] | None:
    """The sensitivity columns after t, the states and outputs, as (T, k, n), (T, k, p) or None, and their names."""
    columns = header[1 + plain:]
    if not columns:
        return None
    matches = [_SENSITIVITY.match(name) for name in columns]
    if not all(matches):
        raise InputError(f"{file}: the columns d(<state>)/d(<name>) must come after the states and outputs")
    labels = tuple(dict.fromkeys(m.group(2) for m in matches if m is not None))
    index = {name: 1 + plain + k for k, name in enumerate(columns)}

    def block(names: tuple[str, ...]) -> Array:
        missing = [f"d({s})/d({d})" for d in labels for s in names if f"d({s})/d({d})" not in index]
        if missing:
            raise InputError(f"{file}: sensitivity columns {', '.join(missing[:3])} missing: a file with "
                             "sensitivities has d(<name>)/d(<sensitivity>) for every state (and output)")
        picks = [index[f"d({s})/d({d})"] for d in labels for s in names]
        return table[:, picks].reshape(len(table), len(labels), len(names))

    outputs = block(y_names) if y_names != x_names else None
    return block(x_names), outputs, labels


def _state_columns(file: Path, names: list[str], states: Sequence[str] | None
                   ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(states, outputs) of a CSV's columns after t: all states, or the named states first, then outputs."""
    if states is None:
        twice = next((name for k, name in enumerate(names) if name in names[:k]), None)
        if twice is not None:
            raise InputError(f"{file}: column {twice!r} appears twice: pass states=[...] to say which columns "
                             "are the states (the rest are outputs)")
        return tuple(names), tuple(names)
    chosen = tuple(states)
    if not chosen or tuple(names[:len(chosen)]) != chosen:
        raise InputError(f"{file}: the columns after t are {', '.join(names)}; the states "
                         f"{', '.join(chosen) or '(none)'} must be the first of them")
    return chosen, tuple(names[len(chosen):]) or chosen


def _built(build: Callable[..., R], file: Path, t: Array, x: Array, u: Array, y: Array, states: tuple[str, ...],
           inputs: tuple[str, ...], outputs: tuple[str, ...], model: str, stats: SimulationStats,
           events: tuple[EventRecord, ...] = (),
           params: Array | None = None, sensitivities: tuple[Array, Array | None, tuple[str, ...]] | None = None,
           method: str | None = None) -> R:
    """The Trajectory, its shape errors naming the file; t must be finite and non-decreasing."""
    if not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0):
        raise InputError(f"{file}: the times t must be finite and non-decreasing: is it a trajectory file?")
    found, outputs_found, names = sensitivities if sensitivities is not None else (None, None, ())
    try:
        return build(t, x, u, y, states, inputs, outputs, model, stats, events, params=params,
                     sensitivities=found, output_sensitivities=outputs_found, sensitivity_names=names,
                     sensitivity_method=method)
    except InputError as exc:
        raise type(exc)(f"{file}: {exc}") from None


def _read_bytes(file: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, with :func:`read_text_limited`'s checks and
    messages (latin-1 maps every byte to one character and back, so the text is the bytes)."""
    return read_text_limited(file, "trajectory .npz file", limit=limit, encoding="latin-1").encode("latin-1")


def _npz_arrays(file: Path, limit: int) -> dict[str, np.ndarray]:
    """Every array of a ``.npz`` (no pickles), refusing archives that unpack to more than ``limit`` bytes."""
    data = _read_bytes(file, limit)
    problem = None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
        if unpacked <= limit:
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                return {key: npz[key] for key in npz.files}
        problem = f"its arrays unpack to {unpacked} bytes, more than the limit of {limit} bytes"
    except (zipfile.BadZipFile, zlib.error, ValueError, OSError, EOFError) as exc:
        problem = f"not a readable .npz archive ({exc})"
    raise InputError(f"{file}: {problem}: give a file written by Trajectory.to_npz")


def load_npz(build: Callable[..., R], file: Path, states: Sequence[str] | None, limit: int) -> R:
    """A trajectory from the ``.npz`` :meth:`Trajectory.to_npz` writes: everything but the source (made by ``build``,
    as :func:`load_csv`)."""
    arrays = _npz_arrays(file, limit)
    missing = [key for key in NPZ_KEYS if key not in arrays]
    if missing:
        raise InputError(f"{file}: no {', '.join(missing)} in the archive: give a file written by "
                         "Trajectory.to_npz")
    if "x0" in arrays:
        raise InputError(f"{file}: holds a batch of trajectories (BatchTrajectory.to_npz): read it with np.load")
    numeric: tuple[str, ...] = ("t", "x", "u", "y", "event_t", "event_x", "params", "sensitivities",
                                "output_sensitivities")
    named: tuple[str, ...] = ("states", "inputs", "outputs", "event_names", "sensitivity_names")
    numbers = {key: _numeric(file, arrays, key) for key in numeric if key in arrays}
    names = {key: _names(file, arrays, key) for key in named if key in arrays}
    if states is not None and tuple(states) != names["states"]:
        raise InputError(f"{file}: the states are {', '.join(names['states'])}, not {', '.join(states)}")
    try:
        record = parse_json_limited(str(arrays["stats"]))
        known = {f.name for f in fields(SimulationStats)}
        stats = SimulationStats(**{k: v for k, v in record.items() if k in known})
    except (ValueError, TypeError, AttributeError) as exc:
        raise InputError(f"{file}: stats is not the JSON of SimulationStats ({exc})") from None
    found = None
    if "sensitivities" in numbers:
        found = (numbers["sensitivities"], numbers.get("output_sensitivities"), names.get("sensitivity_names", ()))
    method = str(arrays["sensitivity_method"]) if "sensitivity_method" in arrays else None
    return _built(build, file, numbers["t"], numbers["x"], numbers["u"], numbers["y"], names["states"], names["inputs"],
                  names["outputs"], str(arrays["model"]), stats, _events(file, arrays, numbers, names),
                  numbers.get("params"), found, method or None)


def _numeric(file: Path, arrays: Mapping[str, np.ndarray], key: str) -> Array:
    value = arrays[key]
    if value.dtype.kind not in "biuf":
        raise InputError(f"{file}: {key} holds {value.dtype} values, not numbers: give a file written by "
                         "Trajectory.to_npz")
    return np.asarray(value, dtype=float)


def _names(file: Path, arrays: Mapping[str, np.ndarray], key: str) -> tuple[str, ...]:
    value = arrays[key]
    if value.ndim != 1 or (value.size and value.dtype.kind != "U"):
        raise InputError(f"{file}: {key} must be a list of names, got {value.dtype} of shape {value.shape}")
    return tuple(str(name) for name in value)


def _events(file: Path, arrays: Mapping[str, np.ndarray], numbers: dict[str, Array],
            names: dict[str, tuple[str, ...]]) -> tuple[EventRecord, ...]:
    """The located events of an archive (none in files written before to_npz stored them)."""
    if "event_names" not in names:
        return ()
    labels, n = names["event_names"], len(names["states"])
    times, states = numbers.get("event_t"), numbers.get("event_x")
    terminal = arrays.get("event_terminal")
    count = len(labels)
    if (times is None or states is None or terminal is None or times.shape != (count,)
            or states.shape != (count, n) or terminal.shape != (count,)):
        raise InputError(f"{file}: the event arrays do not match: expected event_t ({count},), event_x "
                         f"({count}, {n}) and event_terminal ({count},)")
    return tuple(EventRecord(label, float(t), x, bool(flag)) for label, t, x, flag in zip(labels, times, states,
                                                                                          terminal.tolist()))
