"""robodyn.sweep on a dask.distributed cluster (robodyn.sweep.cluster): the same table as one process, resume,
a worker killed mid-sweep, an unreachable scheduler, a reducer that raises.

One 2-worker LocalCluster (1 thread each) is shared by the module; the test that kills a worker runs last.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
distributed = pytest.importorskip("distributed")

import pandas as pd  # noqa: E402
from pandas.testing import assert_frame_equal  # noqa: E402

from robodyn.base.errors import InputError  # noqa: E402
from robodyn.sweep import cluster as sweep_dask  # noqa: E402
from robodyn.sweep import load_sweep, sweep  # noqa: E402

GRID = {"theta": np.linspace(-2.5, 2.5, 7), "theta_dot": np.linspace(-1.0, 1.0, 5)}  # 35 samples
SETTINGS: dict[str, Any] = {"chunk_size": 8, "reduce": ["final", "max_abs"], "progress": False}  # 5 chunks


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    env = {"NUMBA_NUM_THREADS": "1"}
    if os.environ.get("ROBODYN_CACHE_DIR"):
        env["ROBODYN_CACHE_DIR"] = os.environ["ROBODYN_CACHE_DIR"]
    options = {"dashboard_address": None, "scheduler_kwargs": {"dashboard_address": ":0"},
               "silence_logs": logging.ERROR, "env": env}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, **options) as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def single() -> Any:
    """The reference: the sweep in this process."""
    return sweep("pendulum", GRID, 3.0, **SETTINGS)


def test_a_cluster_gives_the_table_of_one_process(client: Any, single: Any) -> None:
    table = sweep("pendulum", GRID, 3.0, scheduler=client, **SETTINGS)
    assert_frame_equal(table, single)
    assert list(table["sample"]) == list(range(35))


def test_random_samples_are_the_same_on_a_cluster(client: Any) -> None:
    over = {"theta": (-1.0, 1.0), "l": (0.5, 2.0)}
    here = sweep("pendulum", over, 2.0, samples=30, seed=4, **SETTINGS)
    assert_frame_equal(sweep("pendulum", over, 2.0, samples=30, seed=4, scheduler=client, **SETTINGS), here)


def test_parts_written_by_workers_and_a_rerun_computes_nothing(client: Any, single: Any, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    assert_frame_equal(sweep("pendulum", GRID, 3.0, out=out, scheduler=client, **SETTINGS), single)
    parts = sorted(out.glob("part-*.parquet"))
    assert [p.name for p in parts] == [f"part-{k:06d}.parquet" for k in range(5)]
    written = {p.name: p.stat().st_mtime_ns for p in parts}
    assert_frame_equal(sweep("pendulum", GRID, 3.0, out=out, scheduler=client, **SETTINGS), single)
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("part-*.parquet")} == written  # nothing rewritten
    (out / "part-000002.parquet").unlink()  # resume: only the missing chunk runs again
    assert_frame_equal(sweep("pendulum", GRID, 3.0, out=out, scheduler=client, **SETTINGS), single)
    again = {p.name: p.stat().st_mtime_ns for p in out.glob("part-*.parquet")}
    assert {k for k in again if again[k] != written[k]} == {"part-000002.parquet"}


def test_workers_n_runs_a_local_cluster_sharing_the_cache(single: Any, tmp_path: Path) -> None:
    expected = os.environ.get("ROBODYN_CACHE_DIR")

    def same_cache(batch: Any) -> Any:  # runs on the workers: 1.0 where the environment is as it should be
        ok = os.environ.get("ROBODYN_CACHE_DIR") == expected and os.environ.get("NUMBA_NUM_THREADS") == "1"
        return np.full(len(batch.x), float(ok))

    settings = {**SETTINGS, "reduce": [*SETTINGS["reduce"], same_cache]}
    table = sweep("pendulum", GRID, 3.0, workers=2, **settings)
    assert (table.pop("same_cache") == 1.0).all()
    assert_frame_equal(table, single)


def test_scheduler_and_workers_are_checked() -> None:
    with pytest.raises(InputError, match="not both"):
        sweep("pendulum", GRID, 1.0, scheduler="tcp://127.0.0.1:1", workers=2, progress=False)
    with pytest.raises(InputError, match="workers must be"):
        sweep("pendulum", GRID, 1.0, workers=0, progress=False)
    with pytest.raises(InputError, match="scheduler must be an address"):
        sweep("pendulum", GRID, 1.0, scheduler=8786, progress=False)


def test_an_unreachable_scheduler_fails_quickly_and_writes_no_part(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert sweep_dask.CONNECT_TIMEOUT <= 10
    monkeypatch.setattr(sweep_dask, "CONNECT_TIMEOUT", 2.0)
    out = tmp_path / "sweep"
    start = time.perf_counter()
    with pytest.raises(InputError, match=r"cannot reach the dask scheduler at 'tcp://127\.0\.0\.1:1'.*dask scheduler"):
        sweep("pendulum", GRID, 3.0, out=out, scheduler="tcp://127.0.0.1:1", **SETTINGS)
    assert time.perf_counter() - start < 8
    assert not out.exists()  # nothing ran: the folder the sweep made (with its manifest) is gone again


def test_a_scheduler_without_workers_is_an_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweep_dask, "CONNECT_TIMEOUT", 1.0)
    with distributed.LocalCluster(n_workers=0, dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"},
                                  silence_logs=logging.ERROR) as empty:
        with pytest.raises(InputError, match=r"has no workers after 1 s: start some with `dask worker tcp://"):
            sweep("pendulum", GRID, 3.0, scheduler=empty.scheduler_address, **SETTINGS)


def test_a_reducer_that_raises_on_a_worker_is_an_input_error(client: Any, tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    calls.mkdir()

    def broken(batch: Any) -> Any:
        (calls / f"{os.getpid()}-{time.perf_counter_ns()}").touch()
        raise ZeroDivisionError("no torque model here")

    settings = {**SETTINGS, "reduce": ["final", broken]}
    with pytest.raises(InputError, match=r"the reducer 'broken' raised ZeroDivisionError: no torque model here"):
        sweep("pendulum", GRID, 3.0, out=tmp_path / "sweep", scheduler=client, **settings)
    assert not list((tmp_path / "sweep").glob("part-*"))
    assert 1 <= len(list(calls.iterdir())) <= 5  # a robodyn error is not retried
    deadline = time.monotonic() + 10  # the other chunks are cancelled: the scheduler forgets them
    while _sweep_tasks(client) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _sweep_tasks(client) == []


def _sweep_tasks(client: Any) -> list[str]:
    return list(client.run_on_scheduler(
        lambda dask_scheduler: [str(k) for k in dask_scheduler.tasks if str(k).startswith("robodyn-sweep-")]))


def test_a_worker_killed_mid_sweep_loses_no_row(client: Any, tmp_path: Path) -> None:
    """Last in the module: a worker process is killed (SIGKILL) once the first part is written; its chunk runs
    again elsewhere, the nanny starts a new worker, and the table holds every sample exactly once."""
    thetas, speeds = np.linspace(-2.0, 2.0, 16), np.linspace(-1.0, 1.0, 1500)  # 16 chunks of 1500 trajectories
    over = {"theta": thetas, "theta_dot": speeds}
    settings: dict[str, Any] = {"chunk_size": 1500, "rtol": 1e-8, "progress": False}
    out = tmp_path / "sweep"
    failure: list[BaseException] = []

    def run() -> None:
        try:
            sweep("pendulum", over, 10.0, out=out, scheduler=client, **settings)
        except BaseException as exc:
            failure.append(exc)

    before = client.run(os.getpid)
    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 60
    while not list(out.glob("part-*.parquet")) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert worker.is_alive(), "the sweep ended before a worker could be killed: make it longer"
    busy = [address for address, keys in client.processing().items() if keys and address in before]
    assert busy, "no worker is running a chunk"
    victim = before[busy[0]]  # its chunk in flight is lost with it
    os.kill(victim, signal.SIGKILL)
    worker.join(120)
    assert not worker.is_alive() and not failure, failure
    table = load_sweep(out)
    assert list(table["sample"]) == list(range(16 * 1500))
    assert len(list(out.glob("part-*.parquet"))) == 16
    for k in (0, 15):  # two chunks against this process
        here = sweep("pendulum", {"theta": thetas[k:k + 1], "theta_dot": speeds}, 10.0, **settings)
        chunk = table[table["sample"] // 1500 == k].reset_index(drop=True)
        assert_frame_equal(chunk.drop(columns="sample"), here.drop(columns="sample"))
    client.wait_for_workers(2, timeout=30)
    assert victim not in client.run(os.getpid).values()
    assert isinstance(table, pd.DataFrame)
