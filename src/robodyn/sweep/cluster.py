"""Sweeps on a dask.distributed cluster: :func:`robodyn.sweep` with ``scheduler=`` or ``workers=``.

One task per chunk. A task carries the plan (the model's YAML text, not a compiled kernel) and the chunk's
index; the worker builds the model from the text once per process (``robodyn.sweep._MODELS``), runs the
chunk as a compiled batch and, with ``out``, writes ``part-NNNNNN.parquet`` itself and sends back only the
part's record (rows, size, SHA-256), which this process alone writes into the manifest
(robodyn.sweep.store.SweepFolder.record). A chunk whose worker dies is run again elsewhere (dask reschedules
it); ``retries`` covers exceptions that may pass (a full disk, a lost file system). Each part is written
atomically under its chunk's name, so a chunk run twice replaces its part: never duplicated rows, never a
half-written file.

robodyn's own errors (a reducer that raises, a bad model) fail the same way every time: the task returns
them instead of raising, so they are not retried, and the caller gets the :class:`InputError` while the
other tasks are cancelled.

Every wait is bounded. Before dask connects to a ``tcp://`` address, :func:`_probe` reads the scheduler's
greeting itself within :data:`CONNECT_TIMEOUT` seconds (dask's own handshake waits without a limit, and takes
the first 8 bytes it gets as the length of a message: an HTTP server's "HTTP/1.1" asks for 3 EiB); a greeting
that is not dask's is an InputError naming the address. The connection, the workers and the version check
that follow each have the same limit.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import struct
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from robodyn.base.errors import InputError, RobodynError
from robodyn.base.version import __version__

__all__ = ["CONNECT_TIMEOUT", "run_on_cluster"]

CONNECT_TIMEOUT: Final = 10.0  # seconds to reach a scheduler (and to see a worker) before giving up
RETRIES: Final = 3  # extra attempts of a chunk whose task raised something other than a robodyn error
MAX_WORKERS: Final = 1024  # a LocalCluster of more worker processes than this is a typo
MAX_GREETING: Final = 65_536  # bytes of a scheduler's first message (dask's handshake: ~60 bytes)


@dataclass(frozen=True, slots=True)
class _Failed:
    """A chunk's task stopped on a robodyn error (deterministic: retrying would fail again)."""

    error: RobodynError


def _chunk_task(plan: Any, k: int, out: str | None, run_chunk: Callable[[Any, int], Any]) -> Any:
    """On a worker: chunk ``k`` of ``plan`` by ``run_chunk`` (robodyn.sweep.run.run_chunk, sent by reference); with
    ``out`` its part is written there and the part's record returned (robodyn.sweep.store.write_part), else the
    DataFrame."""
    from robodyn.sweep.store import write_part

    try:
        frame = run_chunk(plan, k)
        if out is None:
            return frame
    except RobodynError as exc:
        return _Failed(exc)
    try:
        return write_part(Path(out), k, frame)
    except RobodynError as exc:
        return _Failed(InputError(f"sweep: chunk {k}: {exc}; with out=, every worker must be able to write to {out} "
                                  "(a shared file system)"))


def _robodyn_version() -> str:
    return str(__version__)


def _sweep_token(plan: Any, out: Path | None) -> str:
    """A short hash naming this sweep (model text, definition, output folder) in the task keys."""
    definition = json.dumps(plan.definition(), sort_keys=True, default=str)
    text = "\n".join((hashlib.sha256(plan.model_text.encode()).hexdigest(), definition, str(out)))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _rows(plan: Any, k: int) -> int:
    return int(min(plan.chunk_size, plan.count - k * plan.chunk_size))


def run_on_cluster(plan: Any, todo: list[int], out: Path | None, *, run_chunk: Callable[[Any, int], Any],
                   scheduler: Any = None, workers: int | None = None, progress: bool = True,
                   on_part: Callable[[int, dict[str, Any]], None] | None = None) -> list[Any]:
    """Run the chunks ``todo`` of ``plan`` on a dask.distributed cluster.

    Parameters
    ----------
    plan
        A :class:`robodyn.sweep.SweepPlan`.
    todo
        Chunk indices to run.
    run_chunk
        ``run_chunk(plan, k)``: chunk ``k``'s DataFrame (robodyn.sweep.run.run_chunk, which calls this function:
        passed in, it reaches the workers by reference).
    out
        The sweep folder (every worker must see it: a local or shared file system); each chunk's part is
        written there by the worker that ran it, its record handed to ``on_part(k, record)`` here as it
        completes, and ``[]`` is returned. ``None``: the chunks' DataFrames are returned, in the order of ``todo``.
    scheduler
        A scheduler address (``"tcp://host:8786"``) or a ``dask.distributed.Client`` (left open).
    workers
        Without ``scheduler``: a LocalCluster of ``workers`` processes (one thread each), closed at the end.
    progress
        Show a progress bar (on a terminal) as chunks complete.

    Raises
    ------
    InputError
        The scheduler cannot be reached within :data:`CONNECT_TIMEOUT` seconds (nothing that is not a dask
        scheduler answering there is waited on longer), has no workers or runs
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
        return _run(client, plan, todo, out, run_chunk, progress, on_part)


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
        _probe(scheduler)
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, ValueError, TypeError) as exc:
            raise _unreachable(scheduler, str(exc)) from None
        except Exception as exc:  # whatever dask raises on a peer that is not a scheduler after all
            raise InputError(f"sweep: no dask scheduler answered at {scheduler!r}: {type(exc).__name__}: {exc}: "
                             f"give the address `dask scheduler` printed ('Scheduler at: tcp://...')") from None
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


def _unreachable(address: str, why: str) -> InputError:
    return InputError(f"sweep: cannot reach the dask scheduler at {address!r} ({why}): check that `dask scheduler` "
                      f"runs there, that the address and port are the ones it printed ('Scheduler at: tcp://...') "
                      f"and that no firewall is in the way")


def _probe(address: str) -> None:
    """Within CONNECT_TIMEOUT seconds, read the greeting a dask scheduler sends at ``tcp://`` ``address`` as a
    connection opens (dask's handshake: an 8-byte length, then that many bytes of frames), and send it back
    (the same settings, so the scheduler completes the handshake and logs nothing); InputError when nothing
    answers there or something that is not dask does. Other schemes (tls://) are left to dask."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location) if scheme == "tcp" else ("", 0)
    except (ValueError, TypeError) as exc:
        raise InputError(f"sweep: {address!r} is not a scheduler address ({exc}): give tcp://host:port") from None
    if scheme != "tcp":
        return
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while True:  # a scheduler being started refuses connections for a moment: retried until the deadline
        try:
            connection = socket.create_connection((host, port), timeout=max(0.01, deadline - time.monotonic()))
            break
        except OSError as exc:
            if time.monotonic() + 0.1 >= deadline:
                raise _unreachable(address, f"{exc.strerror or exc} after {CONNECT_TIMEOUT:g} s") from None
            time.sleep(0.1)
    with connection:
        header = _receive(connection, 8, deadline, address)
        (size,) = struct.unpack("Q", header)
        if not 16 <= size <= MAX_GREETING:
            raise _not_dask(address, f"it sent {header!r}, which does not start a dask message")
        body = _receive(connection, size, deadline, address)
        (frames,) = struct.unpack_from("Q", body)
        if not 1 <= frames <= (size - 8) // 8:
            raise _not_dask(address, f"it sent {header + body[:8]!r}..., which is not a dask message")
        with contextlib.suppress(OSError):
            connection.sendall(header + body)


def _receive(connection: socket.socket, size: int, deadline: float, address: str) -> bytes:
    """``size`` bytes from ``connection`` before ``deadline``, or InputError saying what came instead."""
    data = b""
    while len(data) < size:
        left = deadline - time.monotonic()
        if left <= 0:
            sent = f"sent {len(data)} bytes" if data else "sent nothing"
            raise _not_dask(address, f"it accepted the connection but {sent} in {CONNECT_TIMEOUT:g} s")
        connection.settimeout(left)
        try:
            piece = connection.recv(size - len(data))
        except TimeoutError:
            continue
        except OSError as exc:
            raise _not_dask(address, f"the connection failed: {exc.strerror or exc}") from None
        if not piece:
            raise _not_dask(address, f"it closed the connection after {len(data)} bytes")
        data += piece
    return data


def _not_dask(address: str, why: str) -> InputError:
    return InputError(f"sweep: no dask scheduler answered at {address!r}: {why}: give the address and port `dask "
                      f"scheduler` printed ('Scheduler at: tcp://...'; 8786 by default, not the dashboard's)")


def _check_workers(client: Any) -> None:
    """At least one worker, each importing the same robodyn version as this process."""
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
                         f"{__version__} where the workers run") from None
    other = {address: version for address, version in versions.items() if version != __version__}
    if other:
        address, version = next(iter(other.items()))
        raise InputError(f"sweep: the dask worker {address} runs robodyn {version}, this process "
                         f"{__version__}: install the same version on every worker")


def _run(client: Any, plan: Any, todo: list[int], out: Path | None, run_chunk: Callable[[Any, int], Any],
         progress: bool, on_part: Callable[[int, dict[str, Any]], None] | None) -> list[Any]:
    """Submit one task per chunk, wait for them as they complete; the frames (without ``out``)."""
    from distributed import as_completed

    from robodyn.base.progress import progress as bar

    token = _sweep_token(plan, out)
    target = None if out is None else str(out)
    futures = {client.submit(_chunk_task, plan, k, target, run_chunk, key=f"robodyn-sweep-{token}-{k}",
                             retries=RETRIES, pure=False): k for k in todo}
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
                elif on_part is not None:
                    on_part(k, result)
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
