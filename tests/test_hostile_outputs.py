"""Outputs under hostile conditions (issue 45, items 4 and 5): a folder or a read-only file in a target's place, a
full disk, a file-size limit, a symbolic link, a private file.

The contract of every command that writes: one line on stderr naming the file and the cause, exit code 2, and
nothing half-written: every old target byte-identical afterwards, no temporary file left. A replaced file keeps
its permissions; a link stays a link and its target gets the new content.

A full disk is simulated two ways: in the test process, ``os.write`` fails with ENOSPC for files under the test's
folder (``full_disk``); in a child process, RLIMIT_FSIZE makes every write past a size fail with EFBIG (SIGXFSZ
ignored), as a full disk or a quota would, without root.
"""

from __future__ import annotations

import errno
import os
import resource
import signal
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import robodyn
from cli_run import one_line, run  # tests/cli_run.py
from robodyn.signals import Step

NO_SPACE = os.strerror(errno.ENOSPC)  # "No space left on device"


def fill(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on every os.write to a file under ``folder`` fails as on a full disk (the rest of the process,
    its caches included, writes as usual)."""
    real_write = os.write

    def write(fd: int, data: bytes) -> int:
        try:
            where = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            where = ""
        if where.startswith(str(folder)):
            raise OSError(errno.ENOSPC, NO_SPACE)
        return real_write(fd, data)

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd to tell the test's files apart")
    monkeypatch.setattr(os, "write", write)


@pytest.fixture
def full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's folder is on a full disk (:func:`fill`)."""
    fill(tmp_path, monkeypatch)


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry of ``folder`` (recursively): a file's bytes, a link's target, a folder as such."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        found[key] = (f"-> {os.readlink(path)}" if path.is_symlink() else "<folder>" if path.is_dir()
                      else path.read_bytes())
    return found


def old_files(folder: Path, *names: str) -> dict[str, bytes | str]:
    """``names`` in ``folder`` holding old content; the folder's snapshot."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_bytes(f"old {name}\n".encode())
    return snapshot(folder)


# --- export ----------------------------------------------------------------------------------------------------
def test_export_with_a_folder_in_the_sources_place_writes_nothing(capsys, tmp_path):
    """Defect: the header was written, then P.c (a folder) failed: a new header beside an old source."""
    out = tmp_path / "c"
    before = old_files(out, "joint.h", "Makefile")
    (out / "joint.c").mkdir()
    before = snapshot(out)
    code, stdout, err = run(capsys, "export", "joint", "--out", str(out))
    assert code == 2 and stdout == ""
    assert f"{out / 'joint.c'} is a folder" in one_line(err)
    assert snapshot(out) == before


def test_export_on_a_full_disk_is_one_line_and_keeps_the_old_files(capsys, tmp_path, full_disk):
    out = tmp_path / "c"
    before = old_files(out, "joint.h", "joint.c", "Makefile", "CMakeLists.txt")
    code, _, err = run(capsys, "export", "joint", "--out", str(out))
    assert code == 2
    line = one_line(err)
    assert str(out / "joint.h") in line and NO_SPACE in line
    assert snapshot(out) == before


# --- identify --write-model ------------------------------------------------------------------------------------
JOINT = """# the seed joint, with a guess of its parameters
name: joint_guess
kind: mechanical
coordinates: [q]
parameters: {J: 0.01, b: 0.1, k: 1.5}   # from the datasheet
inputs: [u]
mass: [[J]]
damping: [[b]]
stiffness: [[k]]
"""


@pytest.fixture(scope="module")
def step_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The joint's step response (J 0.01, b 0.1, k 1), exact: k is identified as 1."""
    times = np.linspace(0.0, 2.0, 101)
    response = robodyn.simulate(robodyn.load("joint"), 2.0, {"q": 0.0}, {"u": Step(at=0.1, before=0.0, after=1.0)},
                                rtol=1e-10, atol=1e-12, t_eval=times)
    u = np.where(times >= 0.1, 1.0, 0.0)
    path = tmp_path_factory.mktemp("data") / "step.csv"
    path.write_text("t,q,u\n" + "".join(f"{a!r},{b!r},{c!r}\n" for a, b, c in
                                        zip(times.tolist(), response.state("q").tolist(), u.tolist())))
    return path


def identify(capsys: pytest.CaptureFixture[str], model: Path, data: Path, *options: str) -> tuple[int, str, str]:
    return run(capsys, "identify", str(model), "--data", str(data), "--fit", "k", "--write-model", str(model),
               *options)


def test_write_model_refuses_a_read_only_model_file(capsys, tmp_path, step_csv):
    """Defect: a 0444 model file was replaced."""
    model = tmp_path / "joint.yaml"
    model.write_text(JOINT)
    model.chmod(0o444)
    code, _, err = identify(capsys, model, step_csv)
    assert code == 2
    assert f"--write-model {model} is read-only: make it writable (chmod u+w) or write elsewhere" in one_line(err)
    assert model.read_text() == JOINT and stat.S_IMODE(model.stat().st_mode) == 0o444


def test_write_model_keeps_a_private_files_permissions(capsys, tmp_path, step_csv):
    """Defect: a 0600 model file became 0644 (readable by everyone)."""
    model = tmp_path / "joint.yaml"
    model.write_text(JOINT)
    model.chmod(0o600)
    code, _, err = identify(capsys, model, step_csv)
    assert code == 0, err
    assert robodyn.read_model_text(model.read_text()).parameters["k"] == pytest.approx(1.0, rel=1e-4)
    assert stat.S_IMODE(model.stat().st_mode) == 0o600


def test_write_model_through_a_link_updates_the_linked_model(capsys, tmp_path, step_csv):
    """Defect: the link was replaced by a regular file and the linked model kept its old values."""
    shared = tmp_path / "shared"
    shared.mkdir()
    real = shared / "joint.yaml"
    real.write_text(JOINT)
    link = tmp_path / "joint.yaml"
    link.symlink_to(real)
    code, _, err = identify(capsys, link, step_csv)
    assert code == 0, err
    assert link.is_symlink() and link.resolve() == real
    assert robodyn.read_model_text(real.read_text()).parameters["k"] == pytest.approx(1.0, rel=1e-4)
    assert "# from the datasheet" in real.read_text()
    assert sorted(p.name for p in shared.iterdir()) == ["joint.yaml"]


def test_write_model_and_report_on_a_full_disk_write_neither(capsys, tmp_path, step_csv, full_disk):
    model = tmp_path / "joint.yaml"
    model.write_text(JOINT)
    report = tmp_path / "fit.html"
    report.write_text("old report")
    before = snapshot(tmp_path)
    code, _, err = identify(capsys, model, step_csv, "--report", str(report))
    assert code == 2
    line = one_line(err)
    assert NO_SPACE in line and (str(report) in line or str(model) in line)
    assert snapshot(tmp_path) == before


# --- simulate --out and --plot -----------------------------------------------------------------------------
def _limited(limit: int):
    """A child's start: files may grow to ``limit`` bytes; beyond it a write fails with EFBIG (no signal)."""
    def start() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return start


def _cli(argv: list[str], limit: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "robodyn.cli", *argv], capture_output=True, text=True, timeout=600,
                          preexec_fn=_limited(limit), check=False)


def test_simulate_beyond_the_file_size_limit_is_one_line_and_nothing_half_written(capsys, tmp_path):
    """A small CSV (written first, to its temporary file) and a plot beyond the limit: neither is replaced."""
    argv = ["simulate", "pendulum", "--x0", "theta=1", "--t-final", "2", "--points", "3", "--out",
            str(tmp_path / "run.csv"), "--plot", str(tmp_path / "run.png")]
    code, _, err = run(capsys, *argv)  # warms the caches: the child writes nothing but its outputs
    assert code == 0, err
    png = (tmp_path / "run.png").stat().st_size
    before = old_files(tmp_path, "run.csv", "run.png")
    done = _cli(argv, limit=png // 2)
    assert done.returncode == 2, done.stderr
    line = one_line(done.stderr)
    assert f"cannot write {tmp_path / 'run.png'}: {os.strerror(errno.EFBIG)}" in line
    assert snapshot(tmp_path) == before


def test_simulate_on_a_full_disk_after_a_warm_run_is_one_line(capsys, tmp_path, monkeypatch):
    """The second run may be repeated from its image (robodyn.cli.quick), which writes its CSV itself: the same
    one line, the old file kept."""
    out = tmp_path / "run.csv"
    argv = ["simulate", "pendulum", "--x0", "theta=0.3", "--t-final", "1", "--out", str(out)]
    assert run(capsys, *argv)[0] == 0  # remembers the run's image
    out.write_text("old")
    fill(tmp_path, monkeypatch)
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert f"cannot write {out}: {NO_SPACE}" in one_line(err)
    assert snapshot(tmp_path) == {"run.csv": b"old"}


def test_simulate_out_keeps_a_private_files_permissions_and_writes_through_a_link(capsys, tmp_path):
    real = tmp_path / "kept" / "run.csv"
    real.parent.mkdir()
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "run.csv"
    link.symlink_to(real)
    code, _, err = run(capsys, "simulate", "pendulum", "--x0", "theta=0.2", "--t-final", "1", "--out", str(link))
    assert code == 0, err
    assert link.is_symlink() and real.read_text().startswith("t,theta,theta_dot\n")
    assert stat.S_IMODE(real.stat().st_mode) == 0o600


# --- analyze, convert, sweep -----------------------------------------------------------------------------------
def test_analyze_refuses_a_folder_in_a_report_files_place_before_the_analysis(capsys, tmp_path, monkeypatch):
    import robodyn.report

    def analyze(*args: object, **kwargs: object) -> None:
        raise AssertionError("analysed before the outputs were checked")

    monkeypatch.setattr(robodyn.report, "analyze", analyze)
    out = tmp_path / "report"
    old_files(out, "report.html")
    (out / "report.json").mkdir()
    before = snapshot(out)
    code, _, err = run(capsys, "analyze", "joint", "--out", str(out))
    assert code == 2 and f"{out / 'report.json'} is a folder" in one_line(err)
    assert snapshot(out) == before


def test_analyze_on_a_full_disk_keeps_the_old_report(capsys, tmp_path, full_disk):
    out = tmp_path / "report"
    before = old_files(out, "report.html", "report.json", "points.csv")
    code, _, err = run(capsys, "analyze", "joint", "--out", str(out), "--quiet")
    assert code == 2 and NO_SPACE in one_line(err)
    assert snapshot(out) == before


def test_convert_refuses_a_read_only_chain_file(capsys, tmp_path):
    target = tmp_path / "arm.yaml"
    target.write_text("old")
    target.chmod(0o400)
    code, _, err = run(capsys, "convert", "examples/two_link_arm.urdf", "--to", str(target))
    assert code == 2 and "is read-only: make it writable (chmod u+w)" in one_line(err)
    assert target.read_text() == "old"


def test_sweep_on_a_full_disk_is_one_line_naming_the_file(capsys, tmp_path, full_disk):
    out = tmp_path / "sweep"
    code, _, err = run(capsys, "sweep", "joint", "--x0", "q=-1:1:3", "--t-final", "1", "--out", str(out))
    assert code == 2
    line = one_line(err)
    assert str(out) in line and NO_SPACE in line
    assert not [p for p in out.rglob("*") if p.name.endswith((".tmp", ".old"))]


def test_sweep_refuses_a_read_only_manifest_before_any_run(capsys, tmp_path, monkeypatch):
    import robodyn.sweep.run

    out = tmp_path / "sweep"
    argv = ["sweep", "joint", "--x0", "q=-1:1:3", "--t-final", "1", "--out", str(out)]
    assert run(capsys, *argv)[0] == 0
    (out / "manifest.json").chmod(0o444)
    before = snapshot(out)

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("a chunk ran before the folder was checked")

    monkeypatch.setattr(robodyn.sweep.run, "run_chunk", never)
    code, _, err = run(capsys, *argv)
    assert code == 2 and f"{out / 'manifest.json'} is read-only: make it writable" in one_line(err)
    assert snapshot(out) == before
