"""Sweeps: thousands to millions of simulations over parameters and initial states, reduced to a table.

:func:`sweep` runs a model over a grid (the product of the values given) or over random samples (seeded,
uniform in the ranges given) of its parameters and initial states, in chunks of compiled batches (every
core), keeps only what the reducers compute per trajectory, and returns one row per sample: the swept
values, then the reduced values. Memory stays bounded by the chunk, not by the sweep.

With ``out=DIR`` each chunk is written as ``part-NNNNNN.parquet`` (atomically, pyarrow) beside a
``manifest.json`` naming the model (the SHA-256 of its text), the sweep definition and robodyn's version;
running the same sweep again into the same folder skips the chunks already there (resume), and
:func:`load_sweep` reads the table back. A sweep defined differently from the folder's manifest is refused.

Reducers (names, or callables on a chunk's BatchTrajectory returning ``{column: (N,)}`` or an ``(N,)`` array):

- ``final``: the state at the end (columns ``final_<state>``);
- ``max_abs``: max |x| over the run (``max_abs_<state>``);
- ``settling_time``: the last time the state is outside the band around its final value
  (``|x - x(T)|_inf > band * max |x(0) - x(T)|_inf``, ``band`` default 0.02): ``settling_time``;
- ``converged``: whether the run ends within ``tolerance`` of ``target`` (an equilibrium; default the origin)
  in the infinity norm — a region of attraction: ``converged``;
- ``energy_drift``: |E(T) - E(0)| with E = T + V, for models with energies (Lagrangian, chain): an
  unforced, undamped run should keep it at the integration error: ``energy_drift``;
- ``first_event``: the time of the first event (``events=``, expressions such as ``"theta - 3"`` that cross
  zero), NaN when none happened: ``first_event``.

Controller gains are swept as parameters of a closed-loop model file (``forces: {theta: -k1*(theta - pi) -
k2*theta_dot}``: docs/scaling.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from robodyn.errors import InputError
from robodyn.model.system import Model

__all__ = ["REDUCERS", "SweepPlan", "load_sweep", "parse_range", "sweep"]

REDUCERS: Final = ("final", "max_abs", "settling_time", "converged", "first_event", "energy_drift")
DEFAULT_CHUNK: Final = 10_000  # trajectories per compiled batch: ~10 MB of states at 101 points, 2 states
MAX_SAMPLES: Final = 100_000_000


def parse_range(text: str, where: str) -> np.ndarray:
    """``start:stop:count`` (count evenly spaced values, both ends included), or one number."""
    from robodyn.model.expr import parse_number

    parts = text.split(":")
    if len(parts) == 1:
        return np.array([parse_number(parts[0], where=where)])
    if len(parts) != 3:
        raise InputError(f"{where}: {text!r} is not a range: write start:stop:count (e.g. -3:3:101) or one value")
    start, stop = (parse_number(p, where=where) for p in parts[:2])
    try:
        count = int(parts[2])
    except ValueError:
        count = -1
    if count < 1 or str(count) != parts[2].strip():
        raise InputError(f"{where}: the count in {text!r} must be a whole number >= 1")
    return np.linspace(start, stop, count)


@dataclass(frozen=True)
class SweepPlan:
    """A sweep, defined: what varies and how, how runs are reduced, and how they are cut into chunks.

    ``columns`` are the swept names (parameters and states), ``grid`` their value lists (product) or, for a
    random sweep, ``ranges`` (low, high) with ``samples`` and ``seed``. :meth:`chunk_values` gives the swept
    values of chunk k, so any process (a Dask worker) can rebuild its chunk from the plan alone.
    """

    model_text: str
    model_name: str
    columns: tuple[str, ...]
    grid: tuple[tuple[float, ...], ...] = ()
    ranges: tuple[tuple[float, float], ...] = ()
    samples: int = 0
    seed: int = 0
    t_span: tuple[float, float] = (0.0, 1.0)
    points: int = 101
    reducers: tuple[str, ...] = ("final",)
    method: str = "dopri5"
    rtol: float = 1e-6
    atol: float = 1e-9
    x0: tuple[float, ...] = ()
    band: float = 0.02
    target: tuple[float, ...] = ()
    tolerance: float = 1e-3
    chunk_size: int = DEFAULT_CHUNK
    events: tuple[str, ...] = ()
    u: tuple[float, ...] = ()
    gain: tuple[tuple[float, ...], ...] = ()
    x_ref: tuple[float, ...] = ()
    callables: tuple[Callable[..., Any], ...] = field(default=(), compare=False)

    @property
    def count(self) -> int:
        """Samples in the sweep."""
        return self.samples if self.ranges else math.prod(len(v) for v in self.grid)

    @property
    def chunks(self) -> int:
        return -(-self.count // self.chunk_size)

    def chunk_values(self, k: int) -> np.ndarray:
        """The swept values of chunk ``k``: ``(rows, len(columns))``, rows in sample order."""
        first, stop = k * self.chunk_size, min((k + 1) * self.chunk_size, self.count)
        if self.ranges:  # one generator per chunk, seeded by (seed, k): any chunk alone, the same numbers
            rng = np.random.default_rng([self.seed, k])
            low, high = np.array(self.ranges).T
            return rng.uniform(low, high, (stop - first, len(self.columns)))
        sizes = [len(v) for v in self.grid]
        index = np.arange(first, stop)
        digits = np.stack(np.unravel_index(index, sizes), axis=1) if sizes else np.zeros((len(index), 0), int)
        return np.column_stack([np.asarray(values)[digits[:, j]] for j, values in enumerate(self.grid)]) \
            if self.grid else np.zeros((len(index), 0))

    def definition(self) -> dict[str, Any]:
        """The plan as JSON-ready data (the manifest's ``sweep``; callables by name)."""
        return {"columns": list(self.columns), "grid": [list(v) for v in self.grid],
                "ranges": [list(r) for r in self.ranges], "samples": self.samples, "seed": self.seed,
                "t_span": list(self.t_span), "points": self.points, "reducers": list(self.reducers),
                "callables": [getattr(c, "__qualname__", repr(c)) for c in self.callables], "method": self.method,
                "rtol": self.rtol, "atol": self.atol, "x0": list(self.x0), "band": self.band,
                "target": list(self.target), "tolerance": self.tolerance, "chunk_size": self.chunk_size,
                "events": list(self.events), "u": list(self.u), "gain": [list(r) for r in self.gain],
                "x_ref": list(self.x_ref)}


_MODELS: dict[str, Model] = {}  # model text hash -> the model built from it (once per process, e.g. a worker)


def _model(plan: SweepPlan) -> Model:
    from robodyn.model.files import read_model_text

    key = hashlib.sha256(plan.model_text.encode()).hexdigest()
    if key not in _MODELS:
        _MODELS[key] = read_model_text(plan.model_text, f"{plan.model_name}.yaml")
    return _MODELS[key]


def run_chunk(plan: SweepPlan, k: int, model: Model | None = None) -> Any:
    """Chunk ``k`` of ``plan`` as a pandas DataFrame: ``sample``, the swept values, the reduced values.

    ``model`` defaults to the one built from ``plan.model_text`` (kept per process)."""
    import pandas as pd

    model = model if model is not None else _model(plan)
    values = plan.chunk_values(k)
    rows = values.shape[0]
    n = model.n_states
    x0 = np.tile(np.array(plan.x0, dtype=float) if plan.x0 else np.zeros(n), (rows, 1))
    params: dict[str, np.ndarray] = {}
    for j, name in enumerate(plan.columns):
        if name in model.states:
            x0[:, model.states.index(name)] = values[:, j]
        elif name in model.parameters:
            params[name] = values[:, j]
    t_eval = np.linspace(*plan.t_span, plan.points)
    batch = _runs(plan, model, values, x0, params, t_eval)
    xs = batch.x[:rows]
    table: dict[str, Any] = {"sample": np.arange(k * plan.chunk_size, k * plan.chunk_size + rows)}
    table.update({name: values[:, j] for j, name in enumerate(plan.columns)})
    table.update(_reduce(plan, model, batch.t, xs))
    if "energy_drift" in plan.reducers:
        def total(x: np.ndarray, p: np.ndarray) -> float:
            kinetic, potential = model.energy(x, p)  # type: ignore[misc]
            return kinetic + potential

        table["energy_drift"] = np.array([abs(total(xs[i, -1], batch.params[i]) - total(xs[i, 0], batch.params[i]))
                                          for i in range(rows)])
    if "first_event" in plan.reducers:
        table["first_event"] = np.array([records[0].t if records else np.nan for records in batch.events[:rows]]
                                        if batch.events else np.full(rows, np.nan))
    for reducer in plan.callables:
        try:
            result = reducer(batch)  # exactly the chunk's rows (robodyn.sweep._runs)
        except Exception as exc:
            raise InputError(f"sweep: the reducer {getattr(reducer, '__name__', reducer)!r} raised "
                             f"{type(exc).__name__}: {exc}") from exc
        name = getattr(reducer, "__name__", "reducer")
        items = result.items() if isinstance(result, Mapping) else [(name, result)]
        for column, data in items:
            array = np.asarray(data, dtype=float).reshape(-1)
            if array.size != rows:
                raise InputError(f"sweep: the reducer {name!r} gave {array.size} values for column {column!r}; "
                                 f"the chunk has {rows} trajectories: return one value per trajectory")
            table[column] = array
    return pd.DataFrame(table)


def _signal_columns(plan: SweepPlan, model: Model) -> list[int]:
    """Indices of the swept columns that are inputs or gains (``K[i,j]``): constant per trajectory."""
    return [j for j, name in enumerate(plan.columns) if name in model.inputs or name.startswith("K[")]


def _runs(plan: SweepPlan, model: Model, values: np.ndarray, x0: np.ndarray, params: dict[str, np.ndarray],
          t_eval: np.ndarray) -> Any:
    """The chunk's runs as one BatchTrajectory: one compiled batch per distinct combination of swept inputs and
    gains (inputs are shared by a batch), stitched back in sample order."""
    import robodyn
    from robodyn.signals import StateFeedback
    from robodyn.trajectory import BatchTrajectory

    rows = values.shape[0]
    signal = _signal_columns(plan, model)
    keys = [tuple(row) for row in values[:, signal]] if signal else [()] * rows
    groups: dict[tuple[float, ...], list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    pieces: list[tuple[list[int], Any]] = []
    for key, members in groups.items():
        u = np.array(plan.u, dtype=float) if plan.u else np.zeros(model.n_inputs)
        gain = np.array(plan.gain, dtype=float) if plan.gain else None
        for j, value in zip(signal, key):
            name = plan.columns[j]
            if name in model.inputs:
                u[model.inputs.index(name)] = value
            else:
                r, c = (int(v) for v in name[2:-1].split(","))
                assert gain is not None
                gain[r, c] = value
        inputs: Any = StateFeedback(gain, x_ref=np.array(plan.x_ref) if plan.x_ref else None,
                                    u_ref=tuple(u.tolist())) if gain is not None else (
            dict(zip(model.inputs, u.tolist())) or None)
        index = members if len(members) > 1 else [members[0], members[0]]  # a batch has 2 or more runs
        batch = robodyn.simulate(model, plan.t_span, x0[index], inputs,
                                 params={k: v[index] for k, v in params.items()} or None, method=plan.method,
                                 rtol=plan.rtol, atol=plan.atol, t_eval=t_eval, events=list(plan.events) or None)
        assert isinstance(batch, BatchTrajectory)
        pieces.append((members, batch))
    if len(pieces) == 1 and len(pieces[0][0]) == rows and rows > 1:
        return pieces[0][1]
    first = pieces[0][1]
    xs = np.empty((rows, first.t.size, model.n_states))
    us = np.empty((rows, first.t.size, model.n_inputs))
    ys = np.empty((rows, first.t.size, first.y.shape[2]))
    parameters = np.empty((rows, first.params.shape[1]))
    events: list[Any] = [()] * rows
    for members, batch in pieces:
        size = len(members)
        xs[members], us[members], ys[members] = batch.x[:size], batch.u[:size], batch.y[:size]
        parameters[members] = batch.params[:size]
        for slot, i in enumerate(members):
            events[i] = batch.events[slot] if batch.events else ()
    return BatchTrajectory(first.t, xs, us, ys, x0, parameters, first.states, first.inputs, first.outputs,
                           first.parameters, first.model, first.stats, tuple(events), source=model)


def _reduce(plan: SweepPlan, model: Model, t: np.ndarray, xs: np.ndarray) -> dict[str, np.ndarray]:
    result: dict[str, np.ndarray] = {}
    final = xs[:, -1, :]
    for name in plan.reducers:
        if name == "final":
            result.update({f"final_{s}": final[:, j] for j, s in enumerate(model.states)})
        elif name == "max_abs":
            peak = np.nanmax(np.abs(xs), axis=1)
            result.update({f"max_abs_{s}": peak[:, j] for j, s in enumerate(model.states)})
        elif name == "settling_time":
            deviation = np.max(np.abs(xs - final[:, None, :]), axis=2)  # (N, T)
            band = plan.band * np.max(deviation, axis=1, keepdims=True)
            outside = deviation > band
            last = np.where(outside.any(axis=1), t.size - 1 - np.argmax(outside[:, ::-1], axis=1), 0)
            result["settling_time"] = np.where(outside.any(axis=1), t[np.minimum(last + 1, t.size - 1)], t[0])
        elif name == "converged":
            target = np.array(plan.target, dtype=float) if plan.target else np.zeros(model.n_states)
            result["converged"] = (np.max(np.abs(final - target), axis=1) <= plan.tolerance).astype(float)
    return result


def _source(model: str | os.PathLike[str] | Model) -> tuple[str, str]:
    """(YAML text, name) of a model given by catalog name or file path; a Model object has no text."""
    if isinstance(model, Model):
        raise InputError("sweep: give the model as a catalog name or a YAML file path: every process that runs "
                         "a chunk builds the model from its text (and the manifest names it by its hash)")
    from robodyn.model import catalog
    from robodyn.model.files import MAX_FILE_BYTES
    from robodyn.textfile import read_text_limited

    text = os.fspath(model)
    if text in catalog.CATALOG and text != "mbk":
        return catalog.catalog_text(text), text
    path = Path(text)
    from robodyn.errors import ModelFileError

    return read_text_limited(path, "model file", limit=MAX_FILE_BYTES, error=ModelFileError), path.stem


def sweep(model: str | os.PathLike[str], over: Mapping[str, Any], t_span: float | tuple[float, float], *,
          reduce: Sequence[str | Callable[..., Any]] = ("final",), samples: int | None = None, seed: int = 0,
          x0: Mapping[str, float] | None = None, out: str | os.PathLike[str] | None = None,
          chunk_size: int = DEFAULT_CHUNK, points: int = 101, method: str = "dopri5", rtol: float = 1e-6,
          atol: float = 1e-9, band: float = 0.02, target: Mapping[str, float] | None = None,
          tolerance: float = 1e-3, events: Sequence[str] = (), u: Mapping[str, float] | None = None,
          feedback: Any = None, scheduler: Any = None, workers: int | None = None, progress: bool = True) -> Any:
    """Run ``model`` over the values of ``over`` and return the table (a pandas DataFrame).

    Parameters
    ----------
    model
        A catalog name or a YAML model file path (workers build the model from its text).
    over
        ``{name: values}`` for parameters, initial states, inputs (constant per run) and gains ``K[i,j]``: a
        sequence of values (a grid: the product
        over names), or with ``samples`` a ``(low, high)`` range per name (uniform random samples from ``seed``).
    t_span
        ``T`` or ``(t0, T)``.
    reduce
        Reducer names (:data:`REDUCERS`) or callables on a chunk's BatchTrajectory.
    x0
        Initial state values not swept (others 0).
    out
        A folder for the Parquet parts and the manifest; a rerun resumes.
    chunk_size
        Trajectories per compiled batch (memory ~ chunk_size * points * states * 8 bytes * 2).
    points
        Stored times per trajectory (evenly spaced), for the reducers that look at the whole run.
    band, target, tolerance
        Of ``settling_time`` and ``converged``.
    events
        Event expressions (robodyn.simulate's ``events``) for ``first_event``.
    u, feedback
        Constant inputs (not swept; inputs named in ``over`` are swept as constants per trajectory), or a
        :class:`robodyn.StateFeedback` u = u_ref - K (x - x_ref) whose gains ``over`` may sweep as ``"K[i,j]"``
        (``u`` is then its u_ref).
    scheduler, workers
        Run the chunks on a dask.distributed cluster: an address (``"tcp://host:8786"``), a Client, or
        ``workers=N`` for a LocalCluster of N worker processes (robodyn.sweep_dask).
    """
    if scheduler is not None and workers is not None:
        raise InputError("sweep: give scheduler= (an existing cluster) or workers= (a local one), not both")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise InputError(f"sweep: workers must be a whole number >= 1, got {workers!r}")
    text, name = _source(model)
    from robodyn.model.files import read_model_text

    built = read_model_text(text, f"{name}.yaml")
    plan = _plan(built, text, name, over, t_span, reduce, samples, seed, x0, chunk_size, points, method, rtol,
                 atol, band, target, tolerance)
    plan = _signals(plan, built, u, feedback)
    if events:
        if not all(isinstance(e, str) for e in events):
            raise InputError("sweep: events must be expressions (text such as 'theta - 3'): every process that runs "
                             "a chunk rebuilds them")
        plan = dataclasses.replace(plan, events=tuple(events))
    elif "first_event" in plan.reducers:
        raise InputError("sweep: the first_event reducer needs events=[...] (expressions that cross zero)")
    if "energy_drift" in plan.reducers and built.energy(np.zeros(built.n_states)) is None:
        raise InputError(f"sweep: the energy_drift reducer needs a model with energies (lagrangian or chain); "
                         f"{name!r} is a {built.kind} model")
    created = out is not None and not Path(out).exists()
    done = _prepare(plan, out)
    try:
        return _run(plan, built, name, out, done, scheduler, workers, progress)
    except BaseException:
        if created and out is not None and not any(Path(out).glob("part-*.parquet")):
            (Path(out) / "manifest.json").unlink(missing_ok=True)  # nothing ran: leave no folder behind
            with contextlib.suppress(OSError):
                Path(out).rmdir()
        raise


def _run(plan: SweepPlan, built: Model, name: str, out: str | os.PathLike[str] | None, done: set[int],
         scheduler: Any, workers: int | None, progress: bool) -> Any:
    """The chunks not ``done``: on a cluster, or here, chunk after chunk (each a compiled batch on every core)."""
    todo = [k for k in range(plan.chunks) if k not in done]
    if scheduler is not None or workers is not None:
        import pandas as pd

        from robodyn.sweep_dask import run_on_cluster

        frames = run_on_cluster(plan, todo, None if out is None else Path(out), scheduler=scheduler,
                                workers=workers, progress=progress)
        if out is not None:
            return load_sweep(out)
        return pd.concat(frames, ignore_index=True).sort_values("sample", kind="stable").reset_index(drop=True)
    from robodyn.progress import progress as bar

    frames = []
    with bar(plan.count if plan.chunks > 1 and progress else 0, f"sweep {name}") as advance:
        for k in range(plan.chunks):
            if k in done:
                continue
            frame = run_chunk(plan, k, built)
            if out is not None:
                write_part(Path(out), k, frame)
            else:
                frames.append(frame)
            advance(len(frame))
    if out is not None:
        return load_sweep(out)
    import pandas as pd

    return pd.concat(frames, ignore_index=True)


def _plan(model: Model, text: str, name: str, over: Mapping[str, Any], t_span: Any, reduce: Sequence[Any],
          samples: int | None, seed: int, x0: Mapping[str, float] | None, chunk_size: int, points: int, method: str,
          rtol: float, atol: float, band: float, target: Mapping[str, float] | None, tolerance: float) -> SweepPlan:
    if not over:
        raise InputError("sweep: nothing to sweep: give over={name: values, ...}")
    known = (*model.states, *model.parameters, *model.inputs)
    for key in over:
        if key not in known and not key.startswith("K["):
            from robodyn.model.files import _suggest

            raise InputError(f"sweep: {key!r} is not a parameter, state or input of {model.name!r} (parameters: "
                             f"{', '.join(model.parameters) or 'none'}; states: {', '.join(model.states)}; inputs: "
                             f"{', '.join(model.inputs) or 'none'}; gains: K[i,j]){_suggest(key, list(known))}")
    names = [r for r in reduce if isinstance(r, str)]
    unknown = [r for r in names if r not in REDUCERS]
    if unknown:
        raise InputError(f"sweep: unknown reducer {unknown[0]!r}: use {', '.join(REDUCERS)} or a callable")
    span = (0.0, float(t_span)) if np.ndim(t_span) == 0 else (float(t_span[0]), float(t_span[1]))
    if not (math.isfinite(span[0]) and math.isfinite(span[1]) and span[1] > span[0]):
        raise InputError(f"sweep: t_span must go forward in time, got {t_span!r}")
    if not (isinstance(chunk_size, int) and chunk_size >= 1 and isinstance(points, int) and points >= 2):
        raise InputError("sweep: chunk_size must be a whole number >= 1 and points >= 2")
    grid: tuple[tuple[float, ...], ...] = ()
    ranges: tuple[tuple[float, float], ...] = ()
    if samples is not None:
        if not (isinstance(samples, int) and 1 <= samples <= MAX_SAMPLES):
            raise InputError(f"sweep: samples must be a whole number in [1, {MAX_SAMPLES}], got {samples!r}")
        ranges = tuple(_range(k, v) for k, v in over.items())
    else:
        grid = tuple(_values(k, v) for k, v in over.items())
        if math.prod(len(values) for values in grid) > MAX_SAMPLES:
            raise InputError(f"sweep: the grid has more than {MAX_SAMPLES} points: coarsen it or sample it")
    start = model.state_vector(x0 or {}, default=0.0)
    goal = model.state_vector(target, default=0.0) if target is not None else ()
    return SweepPlan(text, name, tuple(over), grid, ranges, samples or 0, int(seed), span, points,
                     tuple(names), method, float(rtol), float(atol), tuple(start.tolist()), float(band),
                     tuple(np.asarray(goal).tolist()), float(tolerance), chunk_size,
                     callables=tuple(r for r in reduce if callable(r)))


def _signals(plan: SweepPlan, model: Model, u: Mapping[str, float] | None, feedback: Any) -> SweepPlan:
    """The plan with its constant inputs and feedback gains (checked against the swept names)."""
    base = model.input_vector(dict(u or {}))
    gain: tuple[tuple[float, ...], ...] = ()
    x_ref: tuple[float, ...] = ()
    if feedback is not None:
        K = np.asarray(getattr(feedback, "K", None), dtype=float)
        if K.shape != (model.n_inputs, model.n_states):
            raise InputError(f"sweep: feedback must be a robodyn.StateFeedback with K of shape ({model.n_inputs}, "
                             f"{model.n_states}), got {feedback!r}")
        gain = tuple(tuple(row) for row in K.tolist())
        reference = getattr(feedback, "x_ref", None)
        x_ref = tuple(np.asarray(reference, dtype=float).tolist()) if reference is not None else ()
    for name in plan.columns:
        if name.startswith("K["):
            try:
                r, c = (int(v) for v in name[2:-1].split(","))
            except ValueError:
                r = c = -1
            if not gain or not (0 <= r < model.n_inputs and 0 <= c < model.n_states) or not name.endswith("]"):
                raise InputError(f"sweep: {name!r} names no gain: give feedback=StateFeedback(K, ...) and sweep "
                                 f"K[i,j] with 0 <= i < {model.n_inputs}, 0 <= j < {model.n_states}")
    return dataclasses.replace(plan, u=tuple(base.tolist()), gain=gain, x_ref=x_ref)


def _values(name: str, values: Any) -> tuple[float, ...]:
    array = np.atleast_1d(np.asarray(values, dtype=float)).reshape(-1) if not isinstance(values, str) else None
    if array is None or array.size == 0 or not np.all(np.isfinite(array)):
        raise InputError(f"sweep: over[{name!r}] must be finite numbers (a list, an array or a range), got "
                         f"{values!r}")
    return tuple(array.tolist())


def _range(name: str, value: Any) -> tuple[float, float]:
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise InputError(f"sweep: with samples, over[{name!r}] must be (low, high), got {value!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and high >= low):
        raise InputError(f"sweep: over[{name!r}] = ({low}, {high}) is not a range (low <= high, finite)")
    return low, high


def _manifest(plan: SweepPlan) -> dict[str, Any]:
    import robodyn

    return {"model": plan.model_name, "model_sha256": hashlib.sha256(plan.model_text.encode()).hexdigest(),
            "sweep": plan.definition(), "robodyn": robodyn.__version__, "chunks": plan.chunks,
            "samples": plan.count}


def _prepare(plan: SweepPlan, out: str | os.PathLike[str] | None) -> set[int]:
    """Check or write the manifest; the chunks already written (resume)."""
    if out is None:
        return set()
    from robodyn.atomic import write_text_atomic

    folder = Path(out)
    manifest = _manifest(plan)
    path = folder / "manifest.json"
    if path.exists():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"sweep: {path} is not a sweep manifest ({exc}): use another folder") from None
        if {k: old.get(k) for k in ("model_sha256", "sweep")} != {k: manifest[k] for k in ("model_sha256", "sweep")}:
            raise InputError(f"sweep: {folder} holds another sweep (its manifest differs): use another folder, or "
                             "delete it to start again")
    else:
        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(manifest, indent=1) + "\n")
    for stale in folder.glob(".part-*.tmp"):  # a part whose writer was killed: never renamed, never read
        stale.unlink(missing_ok=True)
    return {k for k in range(plan.chunks) if (folder / _part(k)).exists()}


def _part(k: int) -> str:
    return f"part-{k:06d}.parquet"


def write_part(folder: Path, k: int, frame: Any) -> None:
    """Chunk ``k``'s table as ``part-NNNNNN.parquet``, written atomically (a temporary file, then a rename)."""
    import tempfile

    import pyarrow as pa
    import pyarrow.parquet as pq

    target = folder / _part(k)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    os.close(handle)
    try:
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), temporary)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load_sweep(folder: str | os.PathLike[str]) -> Any:
    """The table of a sweep folder (every part written so far, in sample order) as a pandas DataFrame."""
    import pandas as pd
    import pyarrow.parquet as pq

    path = Path(folder)
    if not (path / "manifest.json").is_file():
        raise InputError(f"load_sweep: {path} has no manifest.json: not a sweep folder")
    parts = sorted(path.glob("part-*.parquet"))
    if not parts:
        return pd.DataFrame()
    table = pd.concat([pq.read_table(p).to_pandas() for p in parts], ignore_index=True)
    return table.sort_values("sample", kind="stable").reset_index(drop=True)

