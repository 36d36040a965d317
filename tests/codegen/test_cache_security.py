"""The private cache as a trust boundary (docs/dev/security.md), and a damaged cache healing itself.

Each case runs robodyn in a new process on a copy of a cache made once by a first process (one tiny
model's ``rhs`` compiled by numba and one tape compiled by LLVM), after damaging or planting a file:
the run must succeed with the right numbers, say in one line on stderr what it moved aside, and never
run planted code. The cross-user cases plant files as uid 65534 and run only as root.
"""

from __future__ import annotations

import logging
import os
import pickle
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from robodyn.base.errors import InputError
from robodyn.codegen import cache

CHILD = """
import numpy as np
import robodyn
from robodyn.codegen.llvm import native
from robodyn.model.compiled import compiled_module
from robodyn.codegen.llvm.tape import llvm_ir, tape_data
from robodyn.rigid.tape import Tape

module = compiled_module(robodyn.SymbolicSystem(["z"], [], {"z": "-3*z"}, name="cache_security_probe"))
out = np.empty(1)
module.rhs(0.0, np.array([2.0]), np.zeros(0), np.zeros(0), out)
tape = Tape()
x = tape.leaves(1, 2)
function = native.native_function(*llvm_ir(*tape_data(tape, [x[0] * x[1] + 0.5])))
y = np.empty(1)
function(0.0, np.array([2.0, 3.0]), np.zeros(0), np.zeros(0), np.zeros(0), y)
print(out[0], y[0], sum(module.rhs.stats.cache_hits.values()))
"""
VERSION = f"py{sys.version_info.major}{sys.version_info.minor}"
NOBODY = 65534


def _run(base: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE")}
    environment.update(ROBODYN_CACHE_DIR=str(base), **env)
    return subprocess.run([sys.executable, "-c", CHILD], env=environment, capture_output=True, text=True,
                          timeout=300, check=False)


def _ok(result: subprocess.CompletedProcess[str], *, hits: int | None = None) -> None:
    assert result.returncode == 0, result.stderr
    values = result.stdout.split()
    assert values[:2] == ["-6.0", "6.5"], result.stdout
    if hits is not None:
        assert int(values[2]) == hits


def _numba_folder(base: Path) -> Path:
    import numba

    return base / f"{VERSION}-numba{numba.__version__}"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("pristine") / "cache"
    _ok(_run(base))
    return base


@pytest.fixture
def copy(pristine: Path, tmp_path: Path) -> Path:
    """A cache of this test's own, as the first process left it."""
    base = tmp_path / "cache"
    shutil.copytree(pristine, base, symlinks=True)
    return base


def _files(base: Path) -> dict[str, Path]:
    pycache = _numba_folder(base) / "__pycache__"
    found = {"nbi": sorted(pycache.glob("robodyn_gen_*.rhs-*.nbi")),
             "nbc": sorted(pycache.glob("robodyn_gen_*.rhs-*.nbc")),
             "py": sorted(_numba_folder(base).glob("robodyn_gen_*.py")), "o": sorted((base / VERSION).glob("*.o"))}
    assert all(len(paths) == 1 for paths in found.values()), found
    return {kind: paths[0] for kind, paths in found.items()}


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "wrong pickle":  # unpickles, but not into what numba expects (an index starts with numba's version)
        import numba

        prefix = pickle.dumps(numba.__version__) if path.suffix == ".nbi" else b""
        path.write_bytes(cache._seal(prefix + pickle.dumps(("not", "numba's", "data"))))  # sealed: it is unpickled
        return
    if how == "flipped":  # a valid pickle around damaged machine code made LLVM abort the process
        middle = len(data) // 5
        path.write_bytes(data[:middle] + bytes(b ^ 0xFF for b in data[middle:middle + 64]) + data[middle + 64:])
        return
    path.write_bytes({"garbage": os.urandom(max(len(data), 64)), "truncated": data[: len(data) // 2],
                      "empty": b""}[how])


def _one_line_about(result: subprocess.CompletedProcess[str], path: Path, why: str = "") -> None:
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "moved the unusable cache file" in lines[0] and path.name in lines[0], result.stderr
    assert why in lines[0]
    assert list(path.parent.glob(f"{path.name}.broken-*"))


# --- self-healing -------------------------------------------------------------------------------------
def _same_path(kind: str, how: str) -> object:
    """A damage whose check another default case already makes on the same file kind (two processes: ~3 s each),
    with ``-m slow``: an empty index or data file is not sealed, like garbage; a garbage or truncated object's digest
    fails, like a flipped one's. (Garbage and truncation of the module, index and data file are issue 11's cases.)"""
    return pytest.param(kind, how, marks=pytest.mark.slow)


@pytest.mark.parametrize(("kind", "how"), [
    ("nbi", "garbage"), ("nbi", "truncated"), _same_path("nbi", "empty"), ("nbc", "garbage"), ("nbc", "truncated"),
    _same_path("nbc", "empty"), ("nbi", "wrong pickle"), ("nbc", "wrong pickle"), ("py", "garbage"),
    ("py", "truncated"), ("nbc", "flipped"), _same_path("o", "garbage"), _same_path("o", "truncated"),
    ("o", "flipped"),
])
def test_damaged_entry_is_moved_aside_and_rebuilt(copy: Path, kind: str, how: str) -> None:
    path = _files(copy)[kind]
    _damage(path, how)
    result = _run(copy)
    _ok(result)
    why = {("nbi", "wrong pickle"): "ValueError: too many values",  # unpickled: not numba's (stamp, overloads)
           ("nbc", "wrong pickle"): "TypeError",  # unpickled, but numba cannot rebuild a compile result from it
           ("nbc", "flipped"): "digest does not match"}.get((kind, how), "")
    _one_line_about(result, path, why)
    if kind == "o":
        assert path.exists() and path.with_suffix(".o.sha256").exists()  # compiled and stored again
    _ok(again := _run(copy), hits=1)  # healed: loaded from the cache, nothing to say
    assert again.stderr == ""


@pytest.mark.parametrize("planted", ["valid header, planted code", "valid header, garbage"])
def test_pyc_beside_a_generated_module_is_never_read(copy: Path, planted: str) -> None:
    import importlib.util
    import marshal
    import struct

    source = _files(copy)["py"]
    marker = copy / "planted-code-ran"
    info = source.stat()
    header = importlib.util.MAGIC_NUMBER + struct.pack("<III", 0, int(info.st_mtime) & 0xFFFFFFFF, info.st_size)
    body = (marshal.dumps(compile(f"open({str(marker)!r}, 'w').close()", str(source), "exec"))
            if "code" in planted else os.urandom(200))
    pyc = Path(importlib.util.cache_from_source(str(source)))
    pyc.write_bytes(header + body)
    result = _run(copy)
    _ok(result, hits=1)
    assert result.stderr == "" and not marker.exists()


def test_loose_numba_file_is_moved_aside(copy: Path) -> None:
    path = _files(copy)["nbi"]
    path.chmod(0o666)
    result = _run(copy)
    _ok(result)
    _one_line_about(result, path)
    assert "group or others may write it" in result.stderr


# --- where numba's files go ---------------------------------------------------------------------------
@pytest.mark.parametrize("locators", [None, "UserProvidedCacheLocator,InTreeCacheLocator"])
def test_numba_cache_dir_is_not_used_for_robodyn_code(tmp_path: Path, locators: str | None) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    env = {"NUMBA_CACHE_DIR": str(shared)} | ({"NUMBA_CACHE_LOCATOR_CLASSES": locators} if locators else {})
    _ok(_run(tmp_path / "cache", **env))
    # numba reads or writes nothing there (with its locator list named it still probes by creating empty folders)
    assert [p for p in shared.rglob("*") if not p.is_dir()] == []
    if locators is None:
        assert list(shared.iterdir()) == []
    assert _files(tmp_path / "cache")  # numba's files are in the private folder instead
    _ok(_run(tmp_path / "cache", **env), hits=1)


# --- symbolic links -----------------------------------------------------------------------------------
def _elsewhere(tmp_path: Path) -> Path:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o755)
    target.chmod(0o755)
    (target / "keep.txt").write_text("theirs")
    return target


def _untouched(target: Path) -> None:
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert sorted(p.name for p in target.iterdir()) == ["keep.txt"]


def test_symlinked_version_folder_is_replaced_never_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="robodyn.cache")  # INFO: an earlier test of this process may have warned
    base = tmp_path / "cache"
    base.mkdir(mode=0o700)
    target = _elsewhere(tmp_path)
    (base / VERSION).symlink_to(target, target_is_directory=True)
    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(base))
    folder = cache.cache_dir(numba_code=False)
    assert not folder.is_symlink() and folder.is_dir() and stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert "a symbolic link" in caplog.text
    _untouched(target)


def test_symlinked_numba_folder_is_replaced_in_a_run(copy: Path, tmp_path: Path) -> None:
    target = _elsewhere(tmp_path)
    pycache = _numba_folder(copy) / "__pycache__"
    shutil.rmtree(pycache)
    pycache.symlink_to(target, target_is_directory=True)
    result = _run(copy)
    _ok(result)
    assert "a symbolic link" in result.stderr and len(result.stderr.splitlines()) == 1
    assert not pycache.is_symlink() and list(pycache.glob("*.nbi"))
    _untouched(target)


def test_symlinked_cache_files_are_moved_aside(copy: Path, tmp_path: Path) -> None:
    files = _files(copy)
    elsewhere = tmp_path / "their.bin"
    elsewhere.write_bytes(b"theirs")
    for kind in ("py", "nbi", "o"):
        files[kind].unlink()
        files[kind].symlink_to(elsewhere)
    result = _run(copy)
    _ok(result)
    assert "a symbolic link" in result.stderr and len(result.stderr.splitlines()) == 1  # one line per run
    assert elsewhere.read_bytes() == b"theirs"
    assert not any(files[kind].is_symlink() for kind in ("py", "nbi", "o"))


def test_read_private_refuses_what_others_could_have_written(tmp_path: Path) -> None:
    good = tmp_path / "good"
    good.write_bytes(b"ok")
    good.chmod(0o644)
    assert cache.read_private(good) == b"ok"
    assert cache.read_private(tmp_path / "missing") is None
    link = tmp_path / "link"
    link.symlink_to(good)
    loose = tmp_path / "loose"
    loose.write_bytes(b"x")
    loose.chmod(0o620)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, reason in [(link, "symbolic link"), (loose, "group or others"), (fifo, "not a regular file"),
                         (tmp_path, "not a regular file")]:
        with pytest.raises(cache.UntrustedFile, match=reason):
            cache.read_private(path)


def test_another_users_version_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "cache"
    base.mkdir(mode=0o700)
    (base / VERSION).mkdir(mode=0o700)
    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(base))
    monkeypatch.setattr(cache, "_check_base", lambda path: None)  # the base is ours ...
    monkeypatch.setattr(cache, "_uid", lambda: os.getuid() + 1)  # ... and the version folder another user's
    with pytest.raises(InputError, match="belongs to another user"):
        cache.cache_dir(numba_code=False)


# --- another user planting pickles (root only) -----------------------------------------------------------
@pytest.fixture
def world(tmp_path: Path) -> Iterator[Path]:
    """A folder that uid 65534 can reach (the test's tmp_path is private to root)."""
    if not hasattr(os, "getuid") or os.getuid() != 0:
        pytest.skip("needs root: another user plants the files")
    folder = Path(tempfile.mkdtemp(prefix="robodyn-cross-user-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _plant_as_nobody(marker: Path, paths: list[Path]) -> None:
    """As uid 65534 (a forked child: no interpreter to exec), put a pickle that runs code at each path."""

    class Payload:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.mkdir, (str(marker),))

    evil = pickle.dumps(Payload())
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            for path in paths:
                path.parent.mkdir(parents=True, exist_ok=True)
                temporary = path.with_name(path.name + ".planting")
                temporary.write_bytes(evil + evil)
                temporary.chmod(0o644)
                os.replace(temporary, path)  # over the victim's file too, where the folder lets the attacker
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _numba_names(base: Path) -> list[str]:
    pycache = _numba_folder(base) / "__pycache__"
    return sorted(p.name for p in pycache.iterdir() if p.suffix in (".nbi", ".nbc"))


def test_planted_pickle_in_a_shared_numba_cache_dir_does_not_run(pristine: Path, world: Path) -> None:
    from numba.core.caching import UserProvidedCacheLocator

    base = world / "cache"
    shutil.copytree(pristine, base, symlinks=True)
    names = _numba_names(base)
    shutil.rmtree(_numba_folder(base) / "__pycache__")  # the victim's own machine code is gone: numba looks
    shared = world / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # a cluster's shared NUMBA_CACHE_DIR
    source = _files_py(base)
    subpath = UserProvidedCacheLocator.get_suitable_cache_subpath(str(source))  # where numba would look
    marker = world / "planted-code-ran"
    _plant_as_nobody(marker, [shared / subpath / name for name in names])
    result = _run(base, NUMBA_CACHE_DIR=str(shared))
    _ok(result)
    assert not marker.exists()
    assert result.stderr == ""


def test_planted_pickle_in_a_loosened_private_folder_does_not_run(pristine: Path, world: Path) -> None:
    base = world / "cache"
    shutil.copytree(pristine, base, symlinks=True)
    base.chmod(0o755)
    pycache = _numba_folder(base) / "__pycache__"
    for folder in (_numba_folder(base), pycache):
        folder.chmod(0o777)  # the user loosened robodyn's folders by hand
    names = _numba_names(base)
    marker = world / "planted-code-ran"
    _plant_as_nobody(marker, [pycache / name for name in names])
    assert all((pycache / name).stat().st_uid == NOBODY for name in names)
    result = _run(base)
    _ok(result)
    assert not marker.exists()
    assert "belongs to another user" in result.stderr
    assert stat.S_IMODE(pycache.stat().st_mode) == 0o700 and stat.S_IMODE(_numba_folder(base).stat().st_mode) == 0o700
    _ok(_run(base), hits=1)


def _files_py(base: Path) -> Path:
    (source,) = _numba_folder(base).glob("robodyn_gen_*.py")
    return source


def test_other_numba_code_keeps_numbas_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """robodyn's locator in numba's list only claims robodyn's code: a user's cached function stays beside its file."""
    from robodyn.codegen.loader import load_module

    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    cache.prepare_numba()
    source = tmp_path / "users_code.py"
    source.write_text("import numba\n\n@numba.njit(cache=True)\ndef plus_one(x):\n    return x + 1\n")
    module = load_module(source, "users_code_for_cache_test")
    assert module.plus_one(1) == 2
    assert list((tmp_path / "__pycache__").glob("users_code.plus_one-*.nbi"))
    assert not (tmp_path / "cache").exists()
