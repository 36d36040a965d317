"""Sweeps: thousands to millions of simulations over parameters and initial states, reduced to a table.

:func:`sweep` runs a model over a grid (the product of the values given) or over random samples (seeded,
uniform in the ranges given) of its parameters and initial states, in chunks of compiled batches (every
core), keeps only what the reducers compute per trajectory, and returns one row per sample: the swept
values, then the reduced values. Memory stays bounded by the chunk, not by the sweep: evenly spaced values are
a ``robodyn.sweep.plan.Span`` (start, stop, count), never an array, and every argument is checked before any work
(robodyn.sweep.plan).

With ``out=DIR`` each chunk is written as ``part-NNNNNN.parquet`` (atomically, pyarrow) beside a
``manifest.json`` naming the model (the SHA-256 of its text), the sweep definition, robodyn's version and the
size and SHA-256 of every part; running the same sweep again into the same folder verifies the parts there and
runs only the chunks missing or unusable (resume), and :func:`load_sweep` reads the table back
(robodyn.sweep.store). A sweep defined differently from the folder's manifest is refused. With
``table=False`` the table stays in the folder (a sweep of 10^8 rows), to be read with :func:`load_sweep` by
columns or samples, or part by part with ``robodyn.sweep.store.iter_parts``.

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
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.base.errors import InputError
from robodyn.base.version import __version__
from robodyn.model.system import Model
from robodyn.sweep.plan import (
    DEFAULT_CHUNK,
    MAX_SAMPLES,
    REDUCERS,
    Span,
    SweepPlan,
    make_plan,
    parse_range,
    with_signals,
)
from robodyn.sweep.store import MAX_TABLE_BYTES, SweepFolder, iter_parts, load_sweep, open_folder, write_part

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["DEFAULT_CHUNK", "MAX_SAMPLES", "REDUCERS", "Span", "SweepPlan", "iter_parts", "load_sweep", "parse_range",
           "run_chunk", "sweep", "write_part"]

_MODELS: dict[str, ModelContract] = {}  # model text hash -> the model built from it (once per process, e.g. a worker)


def _model(plan: SweepPlan) -> ModelContract:
    from robodyn.files.loading import read_model_text

    key = hashlib.sha256(plan.model_text.encode()).hexdigest()
    if key not in _MODELS:
        _MODELS[key] = read_model_text(plan.model_text, f"{plan.model_name}.yaml")
    return _MODELS[key]


def run_chunk(plan: SweepPlan, k: int, model: ModelContract | None = None) -> Any:
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
            if column in table:
                raise InputError(f"sweep: the reducer {name!r} gives the column {column!r}, which the table already "
                                 f"has ({', '.join(table)}): name its columns otherwise (return {{name: values}})")
            array = np.asarray(data, dtype=float).reshape(-1)
            if array.size != rows:
                raise InputError(f"sweep: the reducer {name!r} gave {array.size} values for column {column!r}; "
                                 f"the chunk has {rows} trajectories: return one value per trajectory")
            table[column] = array
    return pd.DataFrame(table)


def _signal_columns(plan: SweepPlan, model: ModelContract) -> list[int]:
    """Indices of the swept columns that are inputs or gains (``K[i,j]``): constant per trajectory."""
    return [j for j, name in enumerate(plan.columns) if name in model.inputs or name.startswith("K[")]


def _runs(plan: SweepPlan, model: ModelContract, values: np.ndarray, x0: np.ndarray, params: dict[str, np.ndarray],
          t_eval: np.ndarray) -> Any:
    """The chunk's runs as one BatchTrajectory: one compiled batch per distinct combination of swept inputs and
    gains (inputs are shared by a batch), stitched back in sample order."""
    from robodyn.integrate.simulate import simulate
    from robodyn.results.trajectory import BatchTrajectory
    from robodyn.signals import StateFeedback

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
        batch = simulate(model, plan.t_span, x0[index], inputs,
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


def _reduce(plan: SweepPlan, model: ModelContract, t: np.ndarray, xs: np.ndarray) -> dict[str, np.ndarray]:
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


def _source(model: Any) -> tuple[str, str]:
    """(YAML text, name) of a model given by catalog name or file path; a Model object has no text."""
    if isinstance(model, Model):
        raise InputError("sweep: give the model as a catalog name or a YAML file path: every process that runs "
                         "a chunk builds the model from its text (and the manifest names it by its hash)")
    text = os.fspath(model) if isinstance(model, str | os.PathLike) else None
    if not isinstance(text, str):
        raise InputError(f"sweep: model must be a catalog name or a YAML file path, got {type(model).__name__} "
                         f"{model!r}"[:200])
    from robodyn.base.errors import ModelFileError
    from robodyn.base.textfile import read_text_limited
    from robodyn.files import catalog
    from robodyn.files.loading import MAX_FILE_BYTES

    if text in catalog.CATALOG and text != "mbk":
        return catalog.catalog_text(text), text
    from robodyn.files.diagram import bundled_text

    path = Path(text)
    content = read_text_limited(path, "model file", limit=MAX_FILE_BYTES, error=ModelFileError)
    return bundled_text(content, str(path)), path.stem  # a diagram's block files written in: the text is the model


def sweep(model: str | os.PathLike[str], over: Mapping[str, Any], t_span: float | tuple[float, float], *,
          reduce: Sequence[str | Callable[..., Any]] = ("final",), samples: int | None = None, seed: int = 0,
          x0: Mapping[str, float] | None = None, out: str | os.PathLike[str] | None = None,
          chunk_size: int = DEFAULT_CHUNK, points: int = 101, method: str = "dopri5", rtol: float = 1e-6,
          atol: float = 1e-9, band: float = 0.02, target: Mapping[str, float] | None = None,
          tolerance: float = 1e-3, events: Sequence[str] = (), u: Mapping[str, float] | None = None,
          feedback: Any = None, scheduler: Any = None, workers: int | None = None, progress: bool = True,
          table: bool = True) -> Any:
    """Run ``model`` over the values of ``over`` and return the table (a pandas DataFrame).

    Parameters
    ----------
    model
        A catalog name or a YAML model file path (workers build the model from its text).
    over
        ``{name: values}`` for parameters, initial states, inputs (constant per run) and gains ``K[i,j]``: a
        sequence of values (at most 10^6), a ``range`` or a ``robodyn.sweep.plan.Span(start, stop, count)``
        of evenly spaced values (a grid: the product over names, at most 10^8 points), or with ``samples`` a
        ``(low, high)`` range per name (uniform random samples from ``seed``, a whole number >= 0).
    t_span
        ``T`` or ``(t0, T)``.
    reduce
        Reducer names (:data:`REDUCERS`) or callables on a chunk's BatchTrajectory.
    x0
        Initial state values not swept (others 0).
    out
        A folder for the Parquet parts and the manifest; a rerun verifies what is there and resumes.
    chunk_size
        Trajectories per compiled batch (memory ~ chunk_size * points * states * 8 bytes * 2, at most 2 GB).
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
        ``workers=N`` for a LocalCluster of N worker processes (robodyn.sweep.cluster).
    table
        Return the table (at most 2 GB of it: a larger one is refused before any work). ``False`` (with
        ``out``): return the folder, and read the table from it by columns, samples or parts.
    """
    _check_where(scheduler, workers, out, table)
    text, name = _source(model)
    from robodyn.files.loading import read_model_text

    built = read_model_text(text, f"{name}.yaml")
    plan = make_plan(built, text, name, over, t_span, reduce, samples, seed, x0, chunk_size, points, method, rtol,
                     atol, band, target, tolerance)
    plan = _events(with_signals(plan, built, u, feedback), built, name, events)
    if table:
        _check_table(plan, built, out)
    created = out is not None and not os.path.lexists(out)
    try:
        folder, done = _prepare(plan, out)
        return _run(plan, built, name, folder, done, scheduler, workers, progress, table)
    except BaseException:
        if created and out is not None and not any(Path(out).glob("part-*.parquet")):
            (Path(out) / "manifest.json").unlink(missing_ok=True)  # nothing ran: leave no folder behind
            with contextlib.suppress(OSError):
                Path(out).rmdir()
        raise


def _check_where(scheduler: Any, workers: Any, out: Any, table: Any) -> None:
    if scheduler is not None and workers is not None:
        raise InputError("sweep: give scheduler= (an existing cluster) or workers= (a local one), not both")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise InputError(f"sweep: workers must be a whole number >= 1, got {workers!r}")
    if out is not None and not isinstance(out, str | os.PathLike):
        raise InputError(f"sweep: out must be a folder's path, got {type(out).__name__} {out!r}"[:200])
    if not isinstance(table, bool) or (not table and out is None):
        raise InputError("sweep: table=False keeps the table in the folder out=DIR: give out= too")


def _events(plan: SweepPlan, built: ModelContract, name: str, events: Any) -> SweepPlan:
    """The plan with its events; the reducers that need events or energies checked."""
    if isinstance(events, str) or not isinstance(events, Sequence) or not all(isinstance(e, str) for e in events):
        raise InputError("sweep: events must be a list of expressions (text such as 'theta - 3'): every process "
                         "that runs a chunk rebuilds them")
    if events:
        plan = dataclasses.replace(plan, events=tuple(events))
    elif "first_event" in plan.reducers:
        raise InputError("sweep: the first_event reducer needs events=[...] (expressions that cross zero)")
    if "energy_drift" in plan.reducers and built.energy(np.zeros(built.n_states)) is None:
        raise InputError(f"sweep: the energy_drift reducer needs a model with energies (lagrangian or chain); "
                         f"{name!r} is a {built.kind} model")
    return plan


def _check_table(plan: SweepPlan, model: ModelContract, out: Any) -> None:
    """Refuse, before any work, a table to return that would take more than MAX_TABLE_BYTES."""
    per_state = sum(model.n_states for r in plan.reducers if r in ("final", "max_abs"))
    width = 1 + len(plan.columns) + per_state + sum(r not in ("final", "max_abs") for r in plan.reducers) \
        + len(plan.callables)  # a callable gives one column or more
    size = plan.count * width * 8
    if size > MAX_TABLE_BYTES:
        fix = "give table=False" if out is not None else "give out=DIR and table=False (the parts are written as " \
            "they are done)"
        raise InputError(f"sweep: the table of {plan.count} rows x {width} columns would take ~{size / 1e9:.1f} GB "
                         f"in memory, more than the limit of {MAX_TABLE_BYTES / 1e9:g} GB for a table returned "
                         f"whole: {fix}, then read it in parts with robodyn.load_sweep(DIR, columns=[...], "
                         "samples=range(...)) or iter_parts(DIR) (from robodyn.sweep.store import iter_parts)")


def _prepare(plan: SweepPlan, out: str | os.PathLike[str] | None) -> tuple[SweepFolder | None, set[int]]:
    """The sweep folder (created, or its manifest checked and its parts verified) and the chunks done (resume)."""
    if out is None:
        return None, set()
    manifest = {"model": plan.model_name, "model_sha256": hashlib.sha256(plan.model_text.encode()).hexdigest(),
                "sweep": plan.definition(), "robodyn": __version__, "chunks": plan.chunks,
                "samples": plan.count}
    return open_folder(out, manifest, plan.matches, plan.chunk_values)


def _run(plan: SweepPlan, built: ModelContract, name: str, folder: SweepFolder | None, done: set[int], scheduler: Any,
         workers: int | None, progress: bool, table: bool) -> Any:
    """The chunks not ``done``: on a cluster, or here, chunk after chunk (each a compiled batch on every core)."""
    import pandas as pd

    todo = [k for k in range(plan.chunks) if k not in done]
    frames: list[Any] = []
    try:
        if scheduler is not None or workers is not None:
            from robodyn.sweep.cluster import run_on_cluster

            frames = run_on_cluster(plan, todo, None if folder is None else folder.path, run_chunk=run_chunk,
                                    scheduler=scheduler, workers=workers, progress=progress,
                                    on_part=None if folder is None else folder.record)
        else:
            from robodyn.base.progress import progress as bar

            with bar(plan.count if plan.chunks > 1 and progress else 0, f"sweep {name}") as advance:
                for k in todo:
                    frame = run_chunk(plan, k, built)
                    if folder is not None:
                        folder.record(k, write_part(folder.path, k, frame))
                    else:
                        frames.append(frame)
                    advance(len(frame))
    except BaseException:
        if folder is not None:  # the parts done so far are recorded, also when the sweep stops
            with contextlib.suppress(Exception):
                folder.flush()
        raise
    if folder is not None:
        folder.flush()
    if folder is None:
        return pd.concat(frames, ignore_index=True)
    return load_sweep(folder.path) if table else folder.path
