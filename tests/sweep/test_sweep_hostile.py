"""Hostile sweep folders, servers and sizes (brief H1): a resumed folder is verified, never trusted blindly; every
wait is bounded; every allocation is bounded by the chunk; bad arguments are robodyn's InputError.

Each test names the defect it pins. CLI cases check the contract: one line on stderr, exit code 2, and
nothing simulated or written.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

import robodyn  # noqa: E402
from cli_run import one_line, run  # noqa: E402 - tests/cli_run.py
from robodyn.base.errors import InputError  # noqa: E402
from robodyn.sweep import Span, load_sweep, parse_range, sweep  # noqa: E402
from robodyn.sweep import store as sweep_store  # noqa: E402

M = [1.0, 1.2, 1.4, 1.6, 1.8, 2.0]  # 6 runs in 3 chunks of 2
SETTINGS: dict[str, Any] = {"chunk_size": 2, "progress": False}


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """``call()``'s result or exception, in a thread that must end within ``seconds`` (a hang fails the test
    instead of hanging the suite)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.fixture
def swept(tmp_path: Path) -> tuple[Path, Any]:
    """A finished 3-chunk sweep folder and its table."""
    out = tmp_path / "sweep"
    return out, sweep("pendulum", {"m": M}, 1.0, out=out, **SETTINGS)


def again(out: Path, values: list[float] = M) -> Any:
    return sweep("pendulum", {"m": values}, 1.0, out=out, **SETTINGS)


def broken(out: Path, name: str) -> list[Path]:
    return sorted(out.glob(f"{name}.broken-*"))


def mtimes(out: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in out.glob("part-*.parquet")}


# --- resumed work is verified ------------------------------------------------------------------------------
def test_a_copied_part_is_rebuilt_not_duplicated(swept: tuple[Path, Any], caplog: pytest.LogCaptureFixture) -> None:
    out, first = swept  # was: 8 rows for 6 runs, 2 of them twice
    shutil.copyfile(out / "part-000000.parquet", out / "part-000002.parquet")
    with caplog.at_level(logging.WARNING, logger="robodyn.sweep"):
        table = again(out)
    pd.testing.assert_frame_equal(table, first)
    assert len(broken(out, "part-000002.parquet")) == 1
    assert next(r.getMessage() for r in caplog.records if "moved aside" in r.getMessage()).count("part-000002") == 2
    pd.testing.assert_frame_equal(load_sweep(out), first)


def test_a_part_of_another_sweep_is_rebuilt(swept: tuple[Path, Any], tmp_path: Path) -> None:
    out, first = swept  # was: wrong m values, exit 0
    other = tmp_path / "other"
    sweep("pendulum", {"m": [5.0, 6.0, 7.0, 8.0, 9.0, 10.0]}, 1.0, out=other, **SETTINGS)
    shutil.copyfile(other / "part-000001.parquet", out / "part-000001.parquet")
    with pytest.raises(InputError, match=r"part-000001\.parquet is unusable \(its SHA-256"):
        load_sweep(out)  # a recorded part that is not what was recorded is refused, never read as data
    table = again(out)
    assert table["m"].tolist() == M
    pd.testing.assert_frame_equal(table, first)


def test_a_folder_named_as_a_part_is_moved_aside_and_rebuilt(swept: tuple[Path, Any]) -> None:
    out, first = swept  # was: 2 rows silently dropped
    (out / "part-000001.parquet").unlink()
    (out / "part-000001.parquet").mkdir()
    pd.testing.assert_frame_equal(again(out), first)
    assert [p.is_dir() for p in broken(out, "part-000001.parquet")] == [True]


@pytest.mark.parametrize("damage", ["truncated", "empty", "garbage"])
def test_damaged_parts_are_rebuilt_once(swept: tuple[Path, Any], damage: str) -> None:
    out, first = swept  # was: every rerun failed (ArrowInvalid), and the part was never rebuilt
    part = out / "part-000001.parquet"
    data = part.read_bytes()
    part.write_bytes({"truncated": data[: len(data) // 2], "empty": b"", "garbage": os.urandom(len(data))}[damage])
    pd.testing.assert_frame_equal(again(out), first)
    assert len(broken(out, part.name)) == 1
    before = mtimes(out)
    pd.testing.assert_frame_equal(again(out), first)  # now nothing to do
    assert mtimes(out) == before


def test_special_files_at_part_names_are_never_read_or_followed(swept: tuple[Path, Any], tmp_path: Path) -> None:
    out, first = swept
    target = tmp_path / "precious.parquet"
    shutil.copyfile(out / "part-000000.parquet", target)  # a link to a valid part of this very sweep
    kept = target.read_bytes()
    (out / "part-000000.parquet").unlink()
    (out / "part-000000.parquet").symlink_to(target)
    (out / "part-000001.parquet").unlink()
    os.mkfifo(out / "part-000001.parquet")  # was: a read that never returns
    os.mkfifo(out / "part-000099.parquet")  # not a chunk of this sweep: never looked at
    table = within(60, lambda: again(out))
    pd.testing.assert_frame_equal(table, first)
    assert target.read_bytes() == kept and not (out / "part-000000.parquet").is_symlink()
    assert [p.is_symlink() for p in broken(out, "part-000000.parquet")] == [True]
    assert len(broken(out, "part-000001.parquet")) == 1
    assert (out / "part-000099.parquet").exists() and not broken(out, "part-000099.parquet")
    pd.testing.assert_frame_equal(within(30, lambda: load_sweep(out)), first)


def test_an_unrecorded_part_is_run_again(swept: tuple[Path, Any], tmp_path: Path) -> None:
    """A part renamed into place but never recorded (killed before the manifest update) is not trusted."""
    out, first = swept
    other = tmp_path / "other"
    sweep("pendulum", {"m": [5.0, 6.0, 7.0, 8.0, 9.0, 10.0]}, 1.0, out=other, **SETTINGS)
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["parts"]["2"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    shutil.copyfile(other / "part-000002.parquet", out / "part-000002.parquet")
    assert list(load_sweep(out)["sample"]) == [0, 1, 2, 3]  # only the recorded parts
    pd.testing.assert_frame_equal(again(out), first)
    assert "2" in json.loads((out / "manifest.json").read_text())["parts"]


def test_a_folder_of_an_older_robodyn_loads_resumes_and_is_verified_by_content(capsys: pytest.CaptureFixture[str],
                                                                               tmp_path: Path) -> None:
    out = tmp_path / "old"
    argv = ["sweep", "pendulum", "--param", "m=1:2:6", "--t-final", "1", "--chunk-size", "2", "--out", str(out)]
    assert run(capsys, *argv)[0] == 0
    first = load_sweep(out)
    manifest = json.loads((out / "manifest.json").read_text())
    for key in ("format", "parts", "columns"):  # as robodyn wrote it before parts were recorded
        del manifest[key]
    manifest["sweep"]["grid"] = [np.linspace(1, 2, 6).tolist()]  # and its grid as values
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    pd.testing.assert_frame_equal(load_sweep(out), first)
    before = mtimes(out)
    assert run(capsys, *argv)[0] == 0  # the same sweep: resumed, nothing to run again
    assert mtimes(out) == before and len(json.loads((out / "manifest.json").read_text())["parts"]) == 3
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))  # older again, now with a copied part
    shutil.copyfile(out / "part-000000.parquet", out / "part-000002.parquet")
    with pytest.raises(InputError, match=r"part-000002\.parquet is unusable \(its samples are not 4 to 5\)"):
        load_sweep(out)
    code, _, err = run(capsys, *argv)
    assert code == 0 and "Traceback" not in err
    pd.testing.assert_frame_equal(load_sweep(out), first)
    assert len(broken(out, "part-000002.parquet")) == 1


def test_a_stopped_sweep_records_the_parts_it_finished(tmp_path: Path) -> None:
    calls = {"n": 0, "fail": True}

    def flaky(batch: Any) -> Any:
        calls["n"] += 1
        if calls["fail"] and calls["n"] == 3:
            raise RuntimeError("stopped")
        return batch.x[:, -1, 0]

    out = tmp_path / "sweep"
    with pytest.raises(InputError, match="stopped"):
        sweep("pendulum", {"m": M}, 1.0, out=out, reduce=["final", flaky], **SETTINGS)
    assert sorted(json.loads((out / "manifest.json").read_text())["parts"]) == ["0", "1"]
    before = mtimes(out)
    calls["fail"] = False
    table = sweep("pendulum", {"m": M}, 1.0, out=out, reduce=["final", flaky], **SETTINGS)
    assert list(table["sample"]) == list(range(6)) and calls["n"] == 4  # only the third chunk ran again
    assert {k: v for k, v in mtimes(out).items() if k in before} == before


def test_parts_written_by_dask_workers_are_recorded_and_verified(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    import hashlib

    out = tmp_path / "cluster"
    first = sweep("pendulum", {"m": Span(1.0, 2.0, 6)}, 1.0, out=out, workers=2, **SETTINGS)
    pd.testing.assert_frame_equal(first, sweep("pendulum", {"m": Span(1.0, 2.0, 6)}, 1.0, **SETTINGS))
    parts = json.loads((out / "manifest.json").read_text())["parts"]  # sent back by the workers, kept here
    assert {k: r["sha256"] for k, r in parts.items()} == {
        str(k): hashlib.sha256((out / f"part-{k:06d}.parquet").read_bytes()).hexdigest() for k in range(3)}
    shutil.copyfile(out / "part-000000.parquet", out / "part-000002.parquet")
    pd.testing.assert_frame_equal(sweep("pendulum", {"m": Span(1.0, 2.0, 6)}, 1.0, out=out, workers=2, **SETTINGS),
                                  first)
    assert len(broken(out, "part-000002.parquet")) == 1


MANIFESTS: dict[str, Callable[[Path], None]] = {
    "a FIFO": lambda p: os.mkfifo(p),  # was: a hang
    "a link to /dev/zero": lambda p: p.symlink_to("/dev/zero"),  # was: 4.2 GB read, then MemoryError
    "[]": lambda p: p.write_text("[]"),  # was: AttributeError
    "null": lambda p: p.write_text("null"),
    "deeply nested": lambda p: p.write_text("[" * 100_000 + "]" * 100_000),  # was: RecursionError
    "a folder": lambda p: p.mkdir(),
    "no sweep": lambda p: p.write_text('{"model": "pendulum"}'),
}


@pytest.mark.parametrize("kind", list(MANIFESTS))
def test_a_hostile_manifest_is_refused_naming_it(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                  kind: str) -> None:
    out = tmp_path / "sweep"
    out.mkdir()
    MANIFESTS[kind](out / "manifest.json")
    with pytest.raises(InputError, match=r"manifest\.json is not a sweep manifest \(.*\): use another folder or "
                                         r"delete it"):
        within(30, lambda: again(out))
    with pytest.raises(InputError, match="is not a sweep manifest"):
        within(30, lambda: load_sweep(out))
    code, _, err = within(60, lambda: run(capsys, "sweep", "pendulum", "--param", "m=1:2:6", "--t-final", "1",
                                          "--out", str(out)))
    assert code == 2 and "manifest.json" in one_line(err)
    assert not list(out.glob("part-*"))


# --- every wait bounded ------------------------------------------------------------------------------------
@pytest.fixture(params=["silent", "http"])
def impostor(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """A TCP server that is no dask scheduler: one that accepts and says nothing, one that answers HTTP."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if request.param == "http":
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nhi")
            held.append(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield request.param, f"tcp://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(5)
    for connection in held:
        connection.close()
    server.close()


def test_a_server_that_is_no_scheduler_is_an_input_error_within_the_timeout(
        impostor: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed")
    from robodyn.sweep import cluster as sweep_dask

    monkeypatch.setattr(sweep_dask, "CONNECT_TIMEOUT", 2.0)
    kind, address = impostor  # was: a hang past 120 s (silent), MemoryError of 3.07 EiB (HTTP)
    out = tmp_path / "sweep"
    start = time.monotonic()
    why = "sent nothing in 2 s" if kind == "silent" else "HTTP/1.1"
    with pytest.raises(InputError, match=rf"no dask scheduler answered at '{address}': .*{why}"):
        within(30, lambda: sweep("pendulum", {"m": M}, 1.0, out=out, scheduler=address, **SETTINGS))
    assert time.monotonic() - start < 20
    assert not out.exists()


# --- every allocation bounded ------------------------------------------------------------------------------
def test_span_values_are_those_of_linspace_bit_for_bit() -> None:
    for start, stop, count in [(-3, 3, 7), (0.5, 1.5, 1001), (1.0, 1.0, 5), (2.0, -1.0, 4), (0.1, 0.1 + 1e-300, 9),
                               (7.0, 9.0, 1), (0.0, 1e-320, 3)]:
        span = Span(start, stop, count)
        np.testing.assert_array_equal(np.asarray(span), np.linspace(start, stop, count))
        index = np.array([0, count - 1, count // 2])
        assert span.take(index).tobytes() == np.linspace(start, stop, count)[index].tobytes()


def test_a_grid_of_1e8_points_is_three_numbers(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    tracemalloc.start()
    try:
        span = parse_range("0.5:1.5:100000000", "--param m")  # was: 4.6 GB, then MemoryError
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000 and len(span) == 10**8
    assert span.take(np.array([0, 10**8 - 1])).tolist() == [0.5, 1.5]
    for count in ("10000000000", "100000000000000000000", "1" + "0" * 5000):  # were: MemoryError, or worse
        with pytest.raises(InputError, match="more than the limit of 100000000 samples"):
            parse_range(f"0.5:1.5:{count}", "--param m")
    code, _, err = run(capsys, "sweep", "pendulum", "--param", "m=0.5:1.5:10000000000", "--t-final", "1", "--out",
                       str(tmp_path / "never"))
    assert code == 2 and "limit of 100000000" in one_line(err) and not (tmp_path / "never").exists()


@pytest.mark.parametrize("over", [{"m": Span(0.5, 1.5, 10**8)}, {"m": range(10**8)}, {"m": (0.5, 1.5)}])
def test_a_table_over_the_memory_budget_is_refused_before_any_work(tmp_path: Path, over: dict[str, Any]) -> None:
    out = tmp_path / "never"
    samples = 10**8 if isinstance(over["m"], tuple) else None
    start = time.monotonic()
    with pytest.raises(InputError, match=r"would take ~\d+\.\d GB in memory, more than the limit of 2 GB.*"
                                         r"table=False.*load_sweep\(DIR, columns="):
        sweep("pendulum", over, 1.0, out=out, samples=samples, progress=False)
    with pytest.raises(InputError, match="give out=DIR and table=False"):
        sweep("pendulum", over, 1.0, samples=samples, progress=False)
    assert time.monotonic() - start < 20 and not out.exists()
    for huge in (10**10, 10**20):
        with pytest.raises(InputError, match=r"samples must be a whole number in \[1, 100000000\]"):
            sweep("pendulum", {"m": (0.5, 1.5)}, 1.0, samples=huge, out=out, progress=False)
        with pytest.raises(InputError, match=r"give 1 to 100000000|limit of 100000000"):
            sweep("pendulum", {"m": range(huge)}, 1.0, out=out, progress=False)
    assert not out.exists()


def test_a_sweep_of_1e8_runs_into_a_folder_starts_in_bounded_memory(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import robodyn.sweep.run as module

    class Started(Exception):
        pass

    manifest: list[int] = []

    def first_chunk(plan: Any, k: int, model: Any = None) -> Any:
        values = plan.chunk_values(k)  # the chunk's values, computed from the Span
        assert values.shape == (10_000, 1) and values[0, 0] == 0.5
        manifest.append((out / "manifest.json").stat().st_size)
        raise Started

    monkeypatch.setattr(module, "run_chunk", first_chunk)
    out = tmp_path / "big"
    tracemalloc.start()
    try:
        with pytest.raises(Started):
            sweep("pendulum", {"m": Span(0.5, 1.5, 10**8)}, 1.0, out=out, table=False, progress=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200_000_000  # was: 4.6 GB (10^8 floats as a tuple, then as a list in the manifest)
    assert manifest and manifest[0] < 10_000  # the grid as three numbers
    assert not out.exists()  # nothing ran: the folder the sweep made is gone again


def test_the_command_line_does_not_load_the_table_and_plots_a_coarser_grid(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import robodyn.cli.sweep as cli_sweep
    import robodyn.sweep.run as module

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the whole table was loaded")

    monkeypatch.setattr(module, "load_sweep", never)  # was: the whole table loaded for the plot and the count
    monkeypatch.setattr(sweep_store, "load_sweep", never)
    monkeypatch.setattr(cli_sweep, "MAX_SUMMARY_ROWS", 30)
    seen: list[int] = []
    figure = cli_sweep.summary_figure
    monkeypatch.setattr(cli_sweep, "summary_figure", lambda table, *a: seen.append(len(table)) or figure(table, *a))
    out = tmp_path / "roa"
    code, printed, _ = run(capsys, "sweep", "joint", "--x0", "q=-1:1:10", "--x0", "q_dot=-1:1:10", "--t-final", "1",
                           "--chunk-size", "7", "--out", str(out))
    assert code == 0 and "100 trajectories over q, q_dot" in printed and "(25 of them)" in printed
    assert seen == [25]  # every other value of each axis: a 5 x 5 grid, still a heat map
    assert (out / "summary.png").read_bytes()[:4] == b"\x89PNG"


def test_load_sweep_refuses_a_table_over_the_budget_and_reads_it_in_parts(swept: tuple[Path, Any],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    out, first = swept
    monkeypatch.setattr(sweep_store, "MAX_TABLE_BYTES", 100)
    with pytest.raises(InputError, match=r"the 6 rows x 4 columns .* would take .*iter_parts"):
        load_sweep(out)
    pd.testing.assert_frame_equal(load_sweep(out, columns=["final_theta"]), first[["sample", "final_theta"]])
    part = load_sweep(out, columns=["m"], samples=range(1, 4))
    assert part["sample"].tolist() == [1, 2, 3] and part["m"].tolist() == M[1:4]
    from robodyn.sweep import iter_parts

    pieces = list(iter_parts(out))
    assert [len(p) for p in pieces] == [2, 2, 2]
    pd.testing.assert_frame_equal(pd.concat(pieces, ignore_index=True), first)
    with pytest.raises(InputError, match="has no column 'nope'"):
        load_sweep(out, columns=["nope"])
    with pytest.raises(InputError, match="samples must be a range"):
        load_sweep(out, samples=[1, 2])


# --- API validation ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("model", "over", "options", "message"), [
    ("pendulum", {"m": M}, {"t_span": (0, 1, 2)}, r"t_span must be T or \(t0, T\)"),  # was: (0, 1) silently
    ("pendulum", {"m": M}, {"reduce": [5]}, "reduce: 5 is neither a reducer name"),  # was: the 5 dropped
    (5, {"m": M}, {}, "model must be a catalog name or a YAML file path, got int"),  # was: TypeError
    ("pendulum", {"m": [1j]}, {}, r"over\['m'\] must be real numbers.*complex"),  # was: TypeError
    ("pendulum", {"m": (0, 1)}, {"samples": 3, "seed": -1}, "seed -1: the seed must be a whole number >= 0"),
    ("pendulum", {"m": (0, 1)}, {"samples": 3, "seed": 1.5}, "seed 1.5: the seed must be a whole number"),
    ("pendulum", {"m": (0, 1)}, {"samples": 3, "seed": "7"}, "the seed must be a whole number"),
    ("pendulum", {"m": M}, {"chunk_size": True}, "chunk_size must be a whole number"),  # was: accepted as 1
    ("pendulum", {"m": M}, {"chunk_size": 2.0}, "chunk_size must be a whole number"),
    ("pendulum", {"m": M}, {"points": "5"}, "points must be a whole number"),
    ("pendulum", {"m": M}, {"points": True}, "points must be a whole number"),
    ("pendulum", {"m": (0, 1)}, {"samples": 3.0}, "samples must be a whole number"),
    ("pendulum", {"m": (0, 1)}, {"samples": True}, "samples must be a whole number"),
    ("pendulum", {"m": M}, {"x0": {"theta": np.datetime64("2020-01-01")}}, "must be a real number.*a date"),
    ("pendulum", {"m": M}, {"x0": [0.1, 0.0]}, r"x0 must be \{state: value"),
    ("pendulum", {"m": M}, {"method": "nope"}, "unknown method 'nope': one of .*dopri5"),
    ("pendulum", {"m": M}, {"method": "euler"}, "takes a fixed step.*dopri5"),
    ("pendulum", {"m": M}, {"rtol": -1.0}, "rtol must be > 0"),
    ("pendulum", [1, 2], {}, "nothing to sweep"),  # was: AttributeError
    ("pendulum", {"m": np.zeros(1_000_001)}, {}, "more than the limit of 1000000: give evenly spaced values"),
    ("pendulum", {"m": Span(0.5, 1.5, 10**6)}, {"chunk_size": 10**6, "points": 1000}, "lower chunk_size"),
    ("pendulum", {"m": Span(0.5, 1.5, 10**6)}, {"chunk_size": 1}, "more than the limit of 100000"),
])
def test_bad_arguments_are_input_errors_before_anything_is_written(tmp_path: Path, model: Any, over: Any,
                                                                   options: dict[str, Any], message: str) -> None:
    out = tmp_path / "never"
    settings = {"t_span": 1.0, **options}
    with pytest.raises(InputError, match=message):
        sweep(model, over, settings.pop("t_span"), out=out, progress=False, **settings)
    assert not out.exists()


def test_out_that_is_a_file_is_an_input_error(tmp_path: Path) -> None:
    file = tmp_path / "table.parquet"
    file.write_text("mine")
    with pytest.raises(InputError, match="is a file, not a folder"):  # was: FileExistsError
        sweep("pendulum", {"m": M}, 1.0, out=file, progress=False)
    assert file.read_text() == "mine"


def test_the_command_line_refuses_bad_seeds_and_outputs_before_simulating(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import robodyn.sweep.run as module

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a chunk was simulated")

    monkeypatch.setattr(module, "run_chunk", never)
    base = ["sweep", "pendulum", "--param", "m=1:2:3", "--t-final", "1"]
    code, _, err = run(capsys, "sweep", "pendulum", "--param", "m=1:2", "--samples", "3", "--seed", "-1",
                       "--t-final", "1", "--out", str(tmp_path / "a"))
    assert code == 2 and "the seed must be a whole number >= 0" in one_line(err)  # was: ValueError
    file = tmp_path / "file"
    file.write_text("x")
    for out in ("/proc/robodyn-sweep/x", str(file / "sub")):
        code, _, err = run(capsys, *base, "--out", out)
        assert code == 2 and out in one_line(err)  # was: an internal error
    assert not (tmp_path / "a").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write in any folder")
def test_an_unwritable_folder_is_refused_before_simulating(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "locked"
    out.mkdir()
    out.chmod(0o500)
    try:
        code, _, err = run(capsys, "sweep", "pendulum", "--param", "m=1:2:3", "--t-final", "1", "--out", str(out))
    finally:
        out.chmod(0o700)
    assert code == 2 and "choose a writable location" in one_line(err)


def test_robodyn_load_sweep_is_the_verified_reader() -> None:
    assert robodyn.load_sweep is load_sweep is sweep_store.load_sweep
