"""Sweeps on a dask.distributed cluster: :func:`robodyn.sweep` with ``scheduler=`` or ``workers=``.

One task per chunk. A task carries the plan (the model's YAML text, not a compiled kernel) and the chunk's
index; the worker builds the model from the text once per process (``robodyn.sweep._MODELS``), runs the
chunk as a compiled batch and, with ``out``, writes ``part-NNNNNN.parquet`` itself and sends back only the
row count. A chunk whose worker dies is run again elsewhere (dask reschedules it); ``retries`` covers
exceptions that may pass (a full disk, a lost file system). Each part is written atomically under its
chunk's name, so a chunk run twice replaces its part: never duplicated rows, never a half-written file.

robodyn's own errors (a reducer that raises, a bad model) fail the same way every time: the task returns
them instead of raising, so they are not retried, and the caller gets the :class:`InputError` while the
other tasks are cancelled.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from robodyn.errors import InputError, RobodynError

__all__ = ["CONNECT_TIMEOUT", "run_on_cluster"]

CONNECT_TIMEOUT: Final = 10.0  # seconds to reach a scheduler (and to see a worker) before giving up
RETRIES: Final = 3  # extra attempts of a chunk whose task raised something other than a robodyn error
MAX_WORKERS: Final = 1024  # a LocalCluster of more worker processes than this is a typo


@dataclass(frozen=True, slots=True)
class _Failed:
    """A chunk's task stopped on a robodyn error (deterministic: retrying would fail again)."""

    error: RobodynError


def _chunk_task(plan: Any, k: int, out: str | None) -> Any:
    """On a worker: chunk ``k`` of ``plan``; with ``out`` its part is written there and the row count returned,
    else the DataFrame."""
    from robodyn.sweep import run_chunk, write_part

    try:
        frame = run_chunk(plan, k)
        if out is None:
            return frame
        write_part(Path(out), k, frame)
    except RobodynError as exc:
        return _Failed(exc)
    return len(frame)


def _robodyn_version() -> str:
    import robodyn

    return str(robodyn.__version__)


def _sweep_token(plan: Any, out: Path | None) -> str:
    """A short hash naming this sweep (model text, definition, output folder) in the task keys."""
    definition = json.dumps(plan.definition(), sort_keys=True, default=str)
    text = "\n".join((hashlib.sha256(plan.model_text.encode()).hexdigest(), definition, str(out)))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _rows(plan: Any, k: int) -> int:
    return int(min(plan.chunk_size, plan.count - k * plan.chunk_size))


def run_on_cluster(plan: Any, todo: list[int], out: Path | None, *, scheduler: Any = None, workers: int | None = None,
                   progress: bool = True) -> list[Any]:
    """Run the chunks ``todo`` of ``plan`` on a dask.distributed cluster.

    Parameters
    ----------
    plan
        A :class:`robodyn.sweep.SweepPlan`.
    todo
        Chunk indices to run.
    out
        The sweep folder (every worker must see it: a local or shared file system); each chunk's part is
        written there by the worker that ran it, and ``[]`` is returned. ``None``: the chunks' DataFrames are
        returned, in the order of ``todo``.
    scheduler
        A scheduler address (``"tcp://host:8786"``) or a ``dask.distributed.Client`` (left open).
    workers
        Without ``scheduler``: a LocalCluster of ``workers`` processes (one thread each), closed at the end.
    progress
        Show a progress bar (on a terminal) as chunks complete.

    Raises
    ------
    InputError
        The scheduler cannot be reached within :data:`CONNECT_TIMEOUT` seconds, has no workers or runs
        another robodyn version; a chunk raised a robodyn error (a reducer that raised); a part could not be
        written; a chunk killed its worker repeatedly.
    """
    if scheduler is not None and workers is not None:
        raise InputError("sweep: give scheduler= (an existing cluster) or workers= (a local one), not both")
    if scheduler is None and not (isinstance(workers, int) and not isinstance(workers, bool)
                                  and 1 <= workers <= MAX_WORKERS):
        raise InputError(f"sweep: workers must be a whole number of processes in [1, {MAX_WORKERS}], got {workers!r}")
    if not todo:
        return []
    with _client(scheduler, workers) as client:
        _check_workers(client)
        return _run(client, plan, todo, out, progress)


@contextlib.contextmanager
def _client(scheduler: Any, workers: int | None) -> Iterator[Any]:
    """A connected Client: the one given, one on ``scheduler``'s address, or one on a new LocalCluster."""
    from distributed import Client, LocalCluster

    if isinstance(scheduler, Client):
        yield scheduler
        return
    if scheduler is not None:
        if not isinstance(scheduler, str):
            raise InputError(f"sweep: scheduler must be an address such as 'tcp://host:8786' or a "
                             f"dask.distributed.Client, got {type(scheduler).__name__}")
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, ValueError, TypeError) as exc:
            raise InputError(f"sweep: cannot reach the dask scheduler at {scheduler!r} ({exc}): check that "
                             f"`dask scheduler` runs there, that the address and port are the ones it printed "
                             f"('Scheduler at: tcp://...') and that no firewall is in the way") from None
        with client:
            yield client
        return
    # One core per worker process: robodyn's batch would otherwise start a thread per core in every worker.
    env = {"NUMBA_NUM_THREADS": "1"}
    if os.environ.get("ROBODYN_CACHE_DIR"):  # compiled kernels shared with this process
        env["ROBODYN_CACHE_DIR"] = os.environ["ROBODYN_CACHE_DIR"]
    # No dashboard; the scheduler's HTTP server (health checks) on a free port, not 8787 (maybe in use).
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      scheduler_kwargs={"dashboard_address": ":0"}, silence_logs=logging.ERROR,
                      env=env) as cluster, Client(cluster) as client:
        yield client


def _check_workers(client: Any) -> None:
    """At least one worker, each importing the same robodyn version as this process."""
    import robodyn

    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
    except TimeoutError:
        address = client.scheduler.address
        raise InputError(f"sweep: the dask scheduler at {address!r} has no workers after {CONNECT_TIMEOUT:g} s: "
                         f"start some with `dask worker {address}`") from None
    try:
        versions = client.run(_robodyn_version)
    except ImportError as exc:
        raise InputError(f"sweep: a dask worker cannot import robodyn ({exc}): install robodyn "
                         f"{robodyn.__version__} where the workers run") from None
    other = {address: version for address, version in versions.items() if version != robodyn.__version__}
    if other:
        address, version = next(iter(other.items()))
        raise InputError(f"sweep: the dask worker {address} runs robodyn {version}, this process "
                         f"{robodyn.__version__}: install the same version on every worker")


def _run(client: Any, plan: Any, todo: list[int], out: Path | None, progress: bool) -> list[Any]:
    """Submit one task per chunk, wait for them as they complete; the frames (without ``out``)."""
    from distributed import as_completed

    from robodyn.progress import progress as bar

    token = _sweep_token(plan, out)
    target = None if out is None else str(out)
    futures = {client.submit(_chunk_task, plan, k, target, key=f"robodyn-sweep-{token}-{k}", retries=RETRIES,
                             pure=False): k for k in todo}
    frames: dict[int, Any] = {}
    total = sum(_rows(plan, k) for k in todo)
    label = f"sweep {plan.model_name} on {len(client.scheduler_info().get('workers', {}))} workers"
    try:
        with bar(total if progress and len(todo) > 1 else 0, label) as advance:
            for future in as_completed(futures):
                k = futures[future]
                result = _result(future, k, out)
                if out is None:
                    frames[k] = result
                advance(_rows(plan, k))
    finally:  # an error (or Ctrl-C) stops the other chunks; no-op for the finished ones
        client.cancel(list(futures))
    return [frames[k] for k in todo] if out is None else []


def _result(future: Any, k: int, out: Path | None) -> Any:
    """The value of chunk ``k``'s task, with robodyn's error when it failed."""
    from distributed import KilledWorker

    try:
        result = future.result()
    except KilledWorker:
        raise InputError(f"sweep: chunk {k} killed its dask worker several times (out of memory?): lower "
                         f"chunk_size, or give the workers more memory") from None
    except OSError as exc:
        where = f": with out=, every worker must be able to write to {out} (a shared file system)" if out else ""
        raise InputError(f"sweep: chunk {k} failed on a dask worker after {RETRIES} retries: "
                         f"{type(exc).__name__}: {exc}{where}") from None
    if isinstance(result, _Failed):
        raise result.error
    return result
