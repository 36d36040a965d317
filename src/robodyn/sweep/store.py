"""A sweep's folder: ``manifest.json`` and one ``part-NNNNNN.parquet`` per chunk, written, verified and read back.

The manifest names the sweep (the model's SHA-256, the definition) and records each part it trusts (``parts``:
its first sample, rows, size in bytes and SHA-256) and the table's columns (``columns``). Only the process that
coordinates a sweep writes it (atomically, at most every :data:`RECORD_INTERVAL` seconds and when the sweep ends
or stops); a part is written by whatever runs its chunk (this process or a Dask worker), which hands the part's
record back (:func:`write_part`). A part is used only when it is a regular file (opened without following a
link and without waiting on a FIFO) whose size and digest are the recorded ones and whose columns, row count and
sample ids are its chunk's. Nothing else in the folder is read or followed:

- on resume (:func:`open_folder`) a folder, symbolic link, FIFO or device at a part's name, and a recorded part
  that fails a check, is moved aside as ``<name>.broken-<time>-<pid>`` (a line on stderr) and its chunk runs
  again (a link is renamed, its target never touched); a regular part without a record (written after the
  last manifest update by a run that was stopped) runs again and is replaced;
- a folder of an older robodyn (a manifest without ``parts``) is verified by content: columns, rows, sample
  ids and, on resume, the swept values; the parts that pass are recorded, the others moved aside;
- :func:`load_sweep` and :func:`iter_parts` read only the recorded parts (older folders: the parts of the
  manifest's chunks, verified by content) and refuse, naming it, a part that fails a check;
- a part of a chunk the manifest does not have (``part-000099`` of a 3-chunk sweep) is never looked at.

The manifest is opened the same way (a regular file of at most :data:`MAX_MANIFEST_BYTES`), parsed with
:func:`robodyn.base.textfile.parse_json_limited` and checked for its structure: anything else is an InputError
naming the file and why. A table read back whole may take at most :data:`MAX_TABLE_BYTES` (estimated before
reading); larger ones are read by columns, by samples or part by part.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from robodyn.base.atomic import rename_aside
from robodyn.base.errors import InputError
from robodyn.base.textfile import file_kind

__all__ = ["MANIFEST", "MAX_MANIFEST_BYTES", "MAX_TABLE_BYTES", "RECORD_INTERVAL", "Layout", "SweepFolder",
           "iter_parts", "load_sweep", "open_folder", "part_name", "read_manifest", "write_part"]

log = logging.getLogger("robodyn.sweep")

MANIFEST: Final = "manifest.json"
FORMAT: Final = 2  # manifests that record their parts; older ones have no "format"
MAX_MANIFEST_BYTES: Final = 64_000_000  # 10^6 listed values and 10^5 part records take ~35 MB
MAX_TABLE_BYTES: Final = 2_000_000_000  # a table returned whole (load_sweep, sweep without table=False)
RECORD_INTERVAL: Final = 1.0  # seconds between two manifest updates while parts complete
PART_SLACK: Final = 16_000_000  # bytes an unrecorded part may have beyond 16 per value (Parquet's metadata)
_WARNED: Final = 3  # parts moved aside with a line each on resume; further ones are logged at INFO, then counted
_HEX: Final = frozenset("0123456789abcdef")


class _Unusable(Exception):
    """A file of a sweep folder that must not be used; the message says why."""


def part_name(k: int) -> str:
    return f"part-{k:06d}.parquet"


@dataclass(frozen=True)
class Layout:
    """How a sweep's ``count`` samples are cut into chunks of ``chunk_size``, and its swept columns."""

    count: int
    chunk_size: int
    swept: tuple[str, ...]

    @property
    def chunks(self) -> int:
        return -(-self.count // self.chunk_size)

    def first(self, k: int) -> int:
        return k * self.chunk_size

    def rows(self, k: int) -> int:
        return min(self.chunk_size, self.count - k * self.chunk_size)


# --- reading files that may be anything ----------------------------------------------------------------------
def _read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path`` (FileNotFoundError if there is none); _Unusable when it is a link
    (not followed), a FIFO (not waited on), a folder or device, or larger than ``limit`` bytes."""
    from robodyn.base.textfile import UnusableFile, read_regular

    try:
        data = read_regular(path, limit)
    except UnusableFile as exc:
        raise _Unusable(str(exc)) from None
    if data is None:
        raise FileNotFoundError(path)
    return data


# --- the manifest ----------------------------------------------------------------------------------------------
def read_manifest(folder: Path, where: str = "sweep") -> dict[str, Any] | None:
    """The checked manifest of ``folder``, None when it has none; InputError naming the file and why otherwise."""
    from robodyn.base.textfile import JsonLimitError, parse_json_limited

    path = folder / MANIFEST
    try:
        manifest = parse_json_limited(_read_regular(path, MAX_MANIFEST_BYTES), limit=MAX_MANIFEST_BYTES)
        _check_manifest(manifest)
    except FileNotFoundError:
        return None
    except (_Unusable, JsonLimitError) as exc:
        raise InputError(f"{where}: {path} is not a sweep manifest ({exc}): use another folder or delete it") from None
    return manifest


def _whole(value: Any, low: int = 0) -> bool:
    return type(value) is int and value >= low


def _check_manifest(manifest: Any) -> None:
    """_Unusable unless ``manifest`` has the structure robodyn writes (older manifests included)."""
    from robodyn.sweep.plan import MAX_SAMPLES

    if not isinstance(manifest, dict):
        kind = {list: "a list", str: "text", type(None): "null", bool: "true or false"}.get(type(manifest), "a number")
        raise _Unusable(f"JSON {kind} instead of an object")
    for key, wanted in (("model", str), ("model_sha256", str), ("sweep", dict), ("chunks", int), ("samples", int)):
        if type(manifest.get(key)) is not wanted:
            raise _Unusable(f"{key!r} is missing or not {'text' if wanted is str else wanted.__name__}")
    sweep = manifest["sweep"]
    swept = sweep.get("columns")
    if not _whole(sweep.get("chunk_size"), 1) or not isinstance(swept, list) \
            or not all(isinstance(c, str) for c in swept):
        raise _Unusable("its sweep has no chunk_size or columns")
    layout = Layout(manifest["samples"], sweep["chunk_size"], tuple(swept))
    if not 1 <= layout.count <= MAX_SAMPLES or manifest["chunks"] != layout.chunks:
        raise _Unusable(f"{manifest['samples']} samples in {manifest['chunks']} chunks of {sweep['chunk_size']}")
    columns = manifest.get("columns")
    if columns is not None and not (isinstance(columns, list) and all(isinstance(c, str) for c in columns)
                                    and columns[:len(swept) + 1] == ["sample", *swept]):
        raise _Unusable("its columns are not the table's")
    parts = manifest.get("parts")
    if parts is None:
        return
    if not isinstance(parts, dict):
        raise _Unusable("its parts are not an object")
    for key, record in parts.items():
        k = int(key) if key.isascii() and key.isdigit() and len(key) <= 9 else -1
        if not 0 <= k < layout.chunks or not isinstance(record, dict) or record.get("first") != layout.first(k) \
                or record.get("rows") != layout.rows(k) or not _whole(record.get("bytes")) \
                or not _digest(record.get("sha256")):
            raise _Unusable(f"its record of part {key!r} is not one of its chunks")


def _digest(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def _layout(manifest: dict[str, Any]) -> Layout:
    return Layout(manifest["samples"], manifest["sweep"]["chunk_size"], tuple(manifest["sweep"]["columns"]))


def manifest_text(manifest: dict[str, Any]) -> str:
    """The manifest as JSON: one top-level key a line, each value on its line (a grid of 10^6 values is one)."""
    lines = [f" {json.dumps(key)}: {json.dumps(value, separators=(',', ':'), allow_nan=False)}"
             for key, value in manifest.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


# --- parts -----------------------------------------------------------------------------------------------------
def write_part(folder: Path, k: int, frame: Any) -> dict[str, Any]:
    """Chunk ``k``'s table as ``part-NNNNNN.parquet``, written atomically (a temporary file, then a rename).

    Returns the part's record for the manifest: ``first`` sample, ``rows``, ``bytes``, ``sha256`` and the table's
    ``columns`` (a Dask worker sends it back to the process that keeps the manifest)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from robodyn.base.atomic import write_bytes_atomic

    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), sink)
    data = sink.getvalue().to_pybytes()
    write_bytes_atomic(folder / part_name(k), data)
    return {"first": int(frame["sample"].iloc[0]), "rows": len(frame), "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(), "columns": [str(c) for c in frame.columns]}


def _verify(data: bytes, k: int, layout: Layout, record: dict[str, Any] | None, columns: list[str] | None,
            values: np.ndarray | None, read: Sequence[str] | None = None) -> tuple[list[str], Any]:
    """The column names and the (arrow) table of the part ``data`` of chunk ``k``, with every check done:
    size and digest against ``record``, the columns against ``columns``, rows and sample ids against the
    layout, the swept values against ``values``. ``read``: the columns to read (all by default).

    Bytes without a record are parsed only after their metadata promise the chunk's rows, at most 16 bytes a
    value: a Parquet file that claims more is refused before pyarrow allocates for it."""
    if record is not None and (len(data) != record["bytes"] or hashlib.sha256(data).hexdigest() != record["sha256"]):
        raise _Unusable("its SHA-256 is not the one the manifest records")
    prefix = ["sample", *layout.swept]
    rows, first = layout.rows(k), layout.first(k)
    file, names = _parquet(data)
    if names[:len(prefix)] != prefix or len(set(names)) != len(names):
        raise _Unusable(f"its columns begin {names[:len(prefix)]}, not {prefix}")
    if columns is not None and names != columns:
        raise _Unusable(f"its columns {names} are not the sweep's {columns}")
    metadata = file.metadata
    if metadata.num_rows != rows:
        raise _Unusable(f"{metadata.num_rows} rows, not the chunk's {rows}")
    promised = sum(metadata.row_group(g).total_byte_size for g in range(metadata.num_row_groups))
    if promised > PART_SLACK + 16 * rows * len(names):
        raise _Unusable(f"{promised} bytes of values for {rows} rows of {len(names)} columns")
    wanted = None if read is None else [c for c in dict.fromkeys([*prefix, *read]) if c in names]
    try:
        table = file.read(columns=wanted)
    except Exception as exc:  # whatever pyarrow raises on bytes that are not a Parquet table
        raise _Unusable(f"not a Parquet table: {type(exc).__name__}: {_first_line(exc)}") from None
    sample = table.column("sample").to_numpy()
    if table.num_rows != rows or sample.dtype.kind not in "iu" or not np.array_equal(
            sample, np.arange(first, first + rows)):
        raise _Unusable(f"its samples are not {first} to {first + rows - 1}")
    for j, name in enumerate(layout.swept if values is not None else ()):
        if not np.array_equal(table.column(name).to_numpy(), values[:, j]):  # type: ignore[index]
            raise _Unusable(f"its values of {name!r} are not this sweep's")
    return names, table


def _parquet(data: bytes) -> tuple[Any, list[str]]:
    """The Parquet file in ``data`` (its footer read, no values) and its column names."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        file = pq.ParquetFile(pa.BufferReader(data))
        return file, [str(name) for name in file.schema_arrow.names]
    except Exception as exc:  # whatever pyarrow raises on bytes that are not a Parquet table
        raise _Unusable(f"not a Parquet table: {type(exc).__name__}: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else ""


def _limit(layout: Layout, k: int, columns: list[str] | None) -> int:
    """The most bytes an unrecorded part of chunk ``k`` may have: 16 per value, and Parquet's metadata."""
    return PART_SLACK + layout.rows(k) * 16 * (len(columns) if columns else 256)


def move_aside(path: Path, reason: str) -> Path | None:
    """Rename the unusable part ``path`` to ``<name>.broken-<time>-<pid>`` (a link itself, never its target); the
    new path (None if ``path`` is gone already). InputError if it cannot be moved: its chunk cannot be rebuilt."""
    try:
        return rename_aside(path)
    except OSError as exc:
        raise InputError(f"sweep: {path} is unusable ({reason}) and cannot be moved aside ({exc.strerror or exc}): "
                         "delete it, or use another folder") from None


# --- the folder of a sweep being run -------------------------------------------------------------------------
class SweepFolder:
    """A sweep folder as the coordinating process keeps it: the manifest and the records of the parts done.

    :meth:`record` adds a part's record (from :func:`write_part`) and rewrites the manifest at most every
    :data:`RECORD_INTERVAL` seconds; :meth:`flush` rewrites it now (at the end, and when the sweep stops)."""

    def __init__(self, path: Path, manifest: dict[str, Any], columns: list[str] | None, written: str | None) -> None:
        self.path = path
        self.manifest = manifest
        self.layout = _layout(manifest)
        self.columns = columns
        self.parts: dict[int, dict[str, Any]] = {}
        self._written = written
        self._last = 0.0

    def record(self, k: int, record: dict[str, Any]) -> None:
        columns = list(record["columns"])
        if self.columns is None:
            self.columns = columns
        elif columns != self.columns:
            raise InputError(f"sweep: chunk {k} has the columns {columns}, the others {self.columns}: a reducer "
                             "must return the same columns for every chunk")
        self.parts[k] = {key: record[key] for key in ("first", "rows", "bytes", "sha256")}
        if time.monotonic() - self._last >= RECORD_INTERVAL:
            self.flush()

    def flush(self) -> None:
        from robodyn.base.atomic import write_text_atomic

        text = manifest_text({**self.manifest, "columns": self.columns,
                              "parts": {str(k): self.parts[k] for k in sorted(self.parts)}})
        if text == self._written:
            return
        try:
            write_text_atomic(self.path / MANIFEST, text)
        except OSError as exc:
            raise InputError(f"sweep: cannot write {self.path / MANIFEST}: {exc.strerror or exc}: choose a "
                             "writable location") from None
        self._written, self._last = text, time.monotonic()

    def settle(self, records: dict[int, dict[str, Any]] | None, values: Callable[[int], np.ndarray]) -> set[int]:
        """The chunks whose parts pass every check (recorded again); the others' parts moved aside or left to be
        replaced. ``records`` None: an older folder, whose parts are verified by content."""
        done: set[int] = set()
        moved = 0

        def aside(path: Path, reason: str) -> None:
            nonlocal moved
            new = move_aside(path, reason)
            if new is not None:
                moved += 1  # a folder damaged all over: a few lines, then a count
                log.log(logging.WARNING if moved <= _WARNED else logging.INFO,
                        "robodyn: %s is unusable (%s): moved aside as %s; its chunk runs again", path, reason, new.name)

        for k in range(self.layout.chunks):
            path = self.path / part_name(k)
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(mode):
                aside(path, file_kind(mode))
                continue
            record = None if records is None else records.get(k)
            if records is not None and record is None:
                continue  # written after the manifest's last update: runs again and is replaced
            try:
                limit = record["bytes"] if record is not None else _limit(self.layout, k, self.columns)
                data = _read_regular(path, limit)
                self.columns, _ = _verify(data, k, self.layout, record, self.columns, values(k), read=())
            except FileNotFoundError:
                continue
            except _Unusable as exc:
                aside(path, str(exc))
                continue
            self.parts[k] = {"first": self.layout.first(k), "rows": self.layout.rows(k), "bytes": len(data),
                             "sha256": hashlib.sha256(data).hexdigest()}
            done.add(k)
        if moved > _WARNED:
            log.warning("robodyn: %d parts of %s were unusable and moved aside (*.broken-*); their chunks run again",
                        moved, self.path)
        return done


def open_folder(out: str | os.PathLike[str], manifest: dict[str, Any], matches: Callable[[Any], bool],
                values: Callable[[int], np.ndarray]) -> tuple[SweepFolder, set[int]]:
    """The folder ``out`` for the sweep of ``manifest`` (created, or checked to hold the same sweep: ``matches``
    its definition), with its parts verified; and the chunks already done. Nothing is simulated before this,
    and a folder where nothing can be written is refused here (robodyn.base.atomic.check_output_folder)."""
    from robodyn.base.atomic import check_output_folder, check_output_path

    path = check_output_folder(out, "sweep: out")  # a file, a device, under a file, not writable: refused
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"sweep: cannot create the folder {path}: {exc.strerror or exc}: choose a writable "
                         "location") from None
    old = read_manifest(path)  # anything but a manifest in its place is refused, naming it
    check_output_path(path / MANIFEST, "sweep: out", probe=False)  # a read-only one: it is written as parts complete
    records: dict[int, dict[str, Any]] | None = {}
    written = None
    if old is not None:
        if old.get("model_sha256") != manifest["model_sha256"] or not matches(old.get("sweep")):
            raise InputError(f"sweep: {path} holds another sweep (its manifest differs): use another folder, or "
                             "delete it to start again")
        parts = old.get("parts")
        records = None if parts is None else {int(k): v for k, v in parts.items()}
        written = manifest_text(old)
    folder = SweepFolder(path, {"format": FORMAT, **manifest}, old.get("columns") if old is not None else None,
                         written)
    _remove_temporaries(path)
    done = folder.settle(records, values)
    folder.flush()
    return folder, done


def _remove_temporaries(path: Path) -> None:
    """Remove the temporary files of writers that were killed (never renamed, never read); folders stay."""
    for stale in path.glob(".part-*.tmp"):
        try:
            if not stat.S_ISDIR(os.lstat(stale).st_mode):
                stale.unlink()
        except OSError:
            pass


# --- reading a sweep back ------------------------------------------------------------------------------------
class _Reader:
    """A sweep folder read back: its checked manifest, and its parts one at a time, each verified."""

    def __init__(self, folder: Any, where: str) -> None:
        if not isinstance(folder, str | os.PathLike):
            raise InputError(f"{where}: give the sweep's folder (a path), got {type(folder).__name__}")
        self.path, self.where = Path(folder), where
        if not self.path.is_dir():
            raise InputError(f"{where}: {self.path} is not a folder: give a sweep's folder (out= of robodyn.sweep)")
        manifest = read_manifest(self.path, where)
        if manifest is None:
            raise InputError(f"{where}: {self.path} has no manifest.json: not a sweep folder")
        self.layout = _layout(manifest)
        parts = manifest.get("parts")
        self.records = None if parts is None else {int(k): v for k, v in parts.items()}
        self.columns: list[str] | None = manifest.get("columns")

    def chunks(self, samples: range | None) -> list[int]:
        """The chunks to read (recorded ones; older folders: those whose part is there), within ``samples``."""
        if self.records is not None:
            chunks = sorted(self.records)
        else:
            chunks = [k for k in range(self.layout.chunks) if os.path.lexists(self.path / part_name(k))]
        return [k for k in chunks if samples is None or self.rows(k, samples)]

    def rows(self, k: int, samples: range | None) -> int:
        """Rows of chunk ``k`` whose sample is in ``samples`` (a range of positive step)."""
        first, stop = self.layout.first(k), self.layout.first(k) + self.layout.rows(k)
        if samples is None:
            return stop - first
        lo, hi = (min(len(samples), max(0, -(-(edge - samples.start) // samples.step))) for edge in (first, stop))
        return hi - lo

    def wanted(self, columns: Any) -> list[str] | None:
        if columns is None:
            return None
        if isinstance(columns, str) or not isinstance(columns, Sequence) \
                or not all(isinstance(c, str) for c in columns):
            raise InputError(f"{self.where}: columns must be a list of column names, got {columns!r}")
        unknown = [c for c in columns if self.columns is not None and c not in self.columns]
        if unknown:
            raise InputError(f"{self.where}: {self.path} has no column {unknown[0]!r}: its columns are "
                             f"{', '.join(self.columns or ())}")
        return list(dict.fromkeys(columns))

    def frame(self, k: int, wanted: list[str] | None, samples: range | None) -> Any:
        """Chunk ``k``'s rows (``sample`` and the ``wanted`` columns, all by default) as a DataFrame, verified."""
        path = self.path / part_name(k)
        record = None if self.records is None else self.records[k]
        limit = record["bytes"] if record is not None else _limit(self.layout, k, self.columns)
        try:
            names, table = _verify(_read_regular(path, limit), k, self.layout, record, self.columns, None, wanted)
        except (FileNotFoundError, _Unusable) as exc:
            reason = "missing" if isinstance(exc, FileNotFoundError) else str(exc)
            raise InputError(f"{self.where}: {path} is unusable ({reason}): run the same sweep into {self.path} again "
                             "to rebuild it") from None
        self.columns = names
        missing = [c for c in wanted or () if c not in names]
        if missing:
            raise InputError(f"{self.where}: {self.path} has no column {missing[0]!r}: its columns are "
                             f"{', '.join(names)}")
        frame = table.select(["sample", *(c for c in wanted if c != "sample")]) if wanted is not None else table
        frame = frame.to_pandas()
        if samples is not None:
            sample = frame["sample"].to_numpy()
            keep = (sample >= samples.start) & (sample < samples.stop) & ((sample - samples.start) % samples.step == 0)
            frame = frame[keep].reset_index(drop=True)
        return frame


def _samples(samples: Any, where: str) -> range | None:
    if samples is None:
        return None
    if not isinstance(samples, range):
        raise InputError(f"{where}: samples must be a range of sample ids, e.g. range(0, 1_000_000), got {samples!r}")
    return samples[::-1] if samples.step < 0 else samples


def iter_parts(folder: str | os.PathLike[str], *, columns: Sequence[str] | None = None,
               samples: range | None = None) -> Iterator[Any]:
    """A sweep folder's table part by part, in sample order: one pandas DataFrame (``sample``, then ``columns``,
    all by default) per part written so far, each verified; memory is bounded by a part.

    ``samples``: a range of sample ids to keep (e.g. ``range(0, 10**6)``); parts without any are not read."""
    reader = _Reader(folder, "iter_parts")
    wanted, selected = reader.wanted(columns), _samples(samples, "iter_parts")
    chunks = reader.chunks(selected)
    return (reader.frame(k, wanted, selected) for k in chunks)


def load_sweep(folder: str | os.PathLike[str], *, columns: Sequence[str] | None = None,
               samples: range | None = None) -> Any:
    """The table of a sweep folder (every part written so far, in sample order) as a pandas DataFrame.

    Parameters
    ----------
    folder
        The sweep's folder (``out=`` of :func:`robodyn.sweep`).
    columns
        The columns to read besides ``sample`` (all by default).
    samples
        A range of sample ids to read (e.g. ``range(0, 10**6)``; all by default).

    Every part is verified (the manifest's record of it, its columns, rows and sample ids): InputError naming
    a part that fails. A table larger than :data:`MAX_TABLE_BYTES` is refused before it is read: read fewer
    columns or samples, or the parts one at a time (:func:`iter_parts`).
    """
    import pandas as pd

    reader = _Reader(folder, "load_sweep")
    wanted, selected = reader.wanted(columns), _samples(samples, "load_sweep")
    chunks = reader.chunks(selected)
    rows = sum(reader.rows(k, selected) for k in chunks)
    frames = []
    for k in chunks:
        width = 1 + len(wanted) if wanted is not None else len(reader.columns) if reader.columns else None
        if width is not None and rows * width * 8 > MAX_TABLE_BYTES:
            raise InputError(f"load_sweep: the {rows} rows x {width} columns of {reader.path} would take "
                             f"~{rows * width * 8 / 1e9:.1f} GB in memory, more than the limit of "
                             f"{MAX_TABLE_BYTES / 1e9:g} GB: read some columns (columns=[...]) or samples "
                             f"(samples=range(start, stop)), or the parts one by one (from robodyn.sweep.store "
                             f"import iter_parts; iter_parts({str(reader.path)!r}))")
        frames.append(reader.frame(k, wanted, selected))
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)
