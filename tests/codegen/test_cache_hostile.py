"""The compile cache against hostile files (docs/dev/security.md): links, other users' folders, files in place
of folders, huge (sparse) files, deeply nested or wrongly shaped JSON, and things planted where a file is written.

Each case plants the thing in a fresh cache of its own (``ROBODYN_CACHE_DIR`` under ``tmp_path``) and checks that
robodyn moves it aside with a reason, never follows or writes into it, keeps working, and is warm again after.
The cross-user cases make "another user" with ``os.chown(path, 65534, 65534)`` and run only as root.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import struct
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import llvmlite.binding as llvm
import pytest

from robodyn.base import atomic
from robodyn.base.errors import InputError
from robodyn.codegen import cache, loader, objects
from robodyn.codegen.llvm import native
from robodyn.files import cached

VERSION = f"py{sys.version_info.major}{sys.version_info.minor}"
NOBODY = 65534
HUGE = 40 * 2**30  # a damaged 40 GB file: sparse, so it costs no disk
DEEP = b"[" * 100_000 + b"]" * 100_000  # RecursionError in json.loads


@pytest.fixture
def base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> Path:
    """A fresh cache; every line robodyn.cache logs is captured (INFO: an earlier test may have warned first)."""
    caplog.set_level(logging.INFO, logger="robodyn.cache")
    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _version(base: Path) -> Path:
    folder = cache.cache_dir(numba_code=False)
    assert folder == base / VERSION
    return folder


def _object(name: str) -> bytes:
    """An ELF object defining ``double name(double)`` (compiled by LLVM here: no numba needed)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = llvm.parse_assembly(f"define double @{name}(double %x) {{\n  %y = fmul double %x, 2.0\n"
                                 "  ret double %y\n}\n")
    machine = llvm.Target.from_default_triple().create_target_machine(jit=True)
    return bytes(machine.emit_object(module))


def _unique(tmp_path: Path) -> str:
    """A symbol of this test's own: objects are loaded into one engine per process, where names must differ."""
    return f"hostile_{hashlib.sha256(str(tmp_path).encode()).hexdigest()[:16]}"


def _saved(tmp_path: Path) -> tuple[str, bytes, str]:
    """A key with an object saved under it (and its manifest), the object and its symbol."""
    name = _unique(tmp_path)
    data = _object(name)
    key = objects.object_key(f"source of {name}", name)
    assert objects.save(key, data, name)
    return key, data, name


def _aside(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.broken-*"))


def _moved(caplog: pytest.LogCaptureFixture, path: Path, why: str) -> None:
    """``path`` was moved aside, and the log says so with ``why``."""
    assert _aside(path), f"{path} was not moved aside"
    lines = [r.getMessage() for r in caplog.records if "moved the unusable cache file" in r.getMessage()]
    assert any(str(path) in line and why in line for line in lines), lines


def _sparse(path: Path, size: int = HUGE) -> None:
    path.unlink(missing_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(size)
    path.chmod(0o600)


def _warm_again(key: str) -> None:
    """The object of ``key`` loads from the cache (in a process that has not loaded it yet)."""
    objects._state.get("loaded", {}).pop(key, None)
    assert objects.load(key) is not None


# --- 1, 2: the folders robodyn makes in the cache ----------------------------------------------------------
def _elsewhere(tmp_path: Path) -> Path:
    target = tmp_path / "elsewhere"
    target.mkdir()
    target.chmod(0o755)
    (target / "keep.txt").write_text("theirs")
    return target


def _use_folder(which: str, base: Path) -> Path:
    """Make robodyn use the cache subfolder ``which`` (as a run does); returns the folder it used."""
    if which == "objects":
        key, _, _ = _saved(base)
        _warm_again(key)
        paths = objects._paths(key)
        assert paths is not None and paths[0].is_file()
        return paths[0].parent
    if which == "models":
        return cached.record_path("0" * 64).parent
    folder = cache.cache_dir()  # numba's folder for the generated modules (imports numba)
    found = cache._numba_folder(str(folder / "robodyn_gen_x.py"))
    assert found is not None
    return found


def _planted_path(which: str) -> Path:
    """Where the cache subfolder ``which`` goes (its version folder made)."""
    return cache.cache_dir(numba_code=which == "__pycache__") / which


@pytest.mark.parametrize("which", ["objects", "models", "__pycache__"])
def test_a_linked_cache_folder_is_moved_aside_never_followed(base: Path, tmp_path: Path, which: str,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    planted = _planted_path(which)
    target = _elsewhere(tmp_path)
    planted.symlink_to(target, target_is_directory=True)
    used = _use_folder(which, base)
    assert used == planted and not used.is_symlink() and used.is_dir()
    assert stat.S_IMODE(used.stat().st_mode) == 0o700
    assert sorted(p.name for p in target.iterdir()) == ["keep.txt"]  # never written into
    assert stat.S_IMODE(target.stat().st_mode) == 0o755  # nor changed
    [aside] = _aside(planted)
    assert aside.is_symlink()  # the link itself was moved
    _moved(caplog, planted, "a symbolic link")


@pytest.mark.parametrize("which", ["objects", "models", "__pycache__"])
def test_another_users_world_writable_cache_folder_is_moved_aside_not_written(
        base: Path, which: str, caplog: pytest.LogCaptureFixture) -> None:
    if not hasattr(os, "getuid") or os.getuid() != 0:
        pytest.skip("needs root: the folder is made another user's")
    planted = _planted_path(which)
    planted.mkdir()
    os.chown(planted, NOBODY, NOBODY)
    planted.chmod(0o777)
    used = _use_folder(which, base)  # no error: robodyn makes its own folder
    assert used == planted and used.stat().st_uid == os.getuid() and stat.S_IMODE(used.stat().st_mode) == 0o700
    [aside] = _aside(planted)
    assert aside.stat().st_uid == NOBODY and list(aside.iterdir()) == []  # nothing written into theirs
    _moved(caplog, planted, "belongs to another user")


def test_a_file_in_place_of_the_objects_folder_is_moved_aside_and_the_cache_is_warm_again(
        base: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    planted = _version(base) / "objects"
    planted.write_text("not a folder")
    key, _, _ = _saved(tmp_path)
    [aside] = _aside(planted)
    assert planted.is_dir() and aside.read_text() == "not a folder"
    _moved(caplog, planted, "not a folder")
    _warm_again(key)  # the next run loads the object instead of compiling again


def test_a_folder_that_cannot_be_moved_aside_is_one_line_not_a_loop(
        base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    version = _version(base)
    (version / "models").write_text("x")
    (version / "objects").write_text("x")
    real_rename = os.rename

    def refuse(source: os.PathLike[str] | str, target: os.PathLike[str] | str) -> None:
        if Path(source).name in ("models", "objects"):
            raise PermissionError(1, "Operation not permitted")
        real_rename(source, target)

    monkeypatch.setattr(os, "rename", refuse)
    with pytest.raises(InputError, match=r"models is unusable \(not a folder\) and cannot be moved aside"):
        cached.record_path("0" * 64)
    assert len([r for r in caplog.records if "models" in r.getMessage()]) == 1  # tried once, not three times
    name = _unique(tmp_path)
    key = objects.object_key("not kept", name)
    assert objects.save(key, _object(name), name)  # no objects folder: the run goes on without
    assert objects.load(key) is None and not objects.unusable(key)


# --- 3: JSON records and manifests -------------------------------------------------------------------------
@pytest.mark.parametrize("manifest", [
    DEEP, b"[]", b"null", b'"a string"', b"\xff\xfe not UTF-8",
    b'{"symbol": "twice", "sha256": NaN, "unresolved": []}',
    b'{"symbol": "twice", "sha256": "not hex", "unresolved": []}',
    b'{"symbol": "twice", "sha256": "' + b"0" * 64 + b'", "unresolved": [1]}',
], ids=["deep", "list", "null", "string", "binary", "nan", "bad digest", "bad unresolved"])
def test_a_deep_or_wrongly_shaped_manifest_is_moved_aside_and_rebuilt(
        base: Path, tmp_path: Path, manifest: bytes, caplog: pytest.LogCaptureFixture) -> None:
    key, data, name = _saved(tmp_path)
    paths = objects._paths(key)
    assert paths is not None
    paths[1].write_bytes(manifest)
    assert objects.load(key) is None  # no exception: numba compiles instead
    assert not objects.unusable(key)
    _moved(caplog, paths[1], "deep" if manifest is DEEP else "")
    assert objects.save(key, data, name)
    _warm_again(key)


def _record_file(tmp_path: Path) -> tuple[Path, Path]:
    """A tiny model file (text of this test's own) loaded once: its record exists. Its parameter is a constant
    expression, which the light reader (robodyn.files.light.record) leaves to sympy: a rebuilt record shows
    as a parsed full model."""
    file = tmp_path / "decay.yaml"
    file.write_text(f"# {tmp_path}\nkind: first_order\nstates: [x]\nparameters: {{k: 4/2}}\ndynamics: {{x: -k*x}}\n")
    cached._models.clear()
    assert isinstance(cached.load_cached(str(file)), cached.CachedModel)
    [record] = (cache.cache_dir(numba_code=False) / "models").glob("*.json")
    return file, record


def _reload(file: Path) -> cached.CachedModel:
    cached._models.clear()
    model = cached.load_cached(str(file))
    assert isinstance(model, cached.CachedModel)
    return model


def test_a_deeply_nested_record_is_moved_aside_and_rebuilt(base: Path, tmp_path: Path,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    file, record = _record_file(tmp_path)
    good = json.loads(record.read_bytes())
    record.write_bytes(DEEP)
    model = _reload(file)
    assert model._source._full is not None and model.f(0.0, [1.0])[0] == -2.0  # parsed again, not trusted
    _moved(caplog, record, "nested more than 32 levels deep")
    assert json.loads(record.read_bytes()) == good  # written anew: the next run is warm
    assert _reload(file)._source._full is None


@pytest.mark.parametrize(("field", "value"), [
    ("position_limits", {"x": 5}), ("position_limits", {"x": [0.0]}), ("units", {"x": 3}),
    ("declared_units", {"not a name": "m"}), ("derived_parameters", {"k2": ["k", "*", "2"]}),
])
def test_a_record_with_wrong_types_but_a_valid_digest_is_moved_aside(base: Path, tmp_path: Path, field: str,
                                                                      value: object) -> None:
    file, record = _record_file(tmp_path)
    wrapper = json.loads(record.read_bytes())
    wrapper["record"][field] = value
    wrapper["sha256"] = cached._digest(wrapper["record"])
    record.write_text(json.dumps(wrapper))
    model = _reload(file)
    assert model._source._full is not None  # not trusted: parsed again
    assert model.position_limits() == {} and model.units() == {}  # and answers from the file, not the record
    assert _aside(record)


# --- 4: sizes ----------------------------------------------------------------------------------------------
def _limited(caplog: pytest.LogCaptureFixture, path: Path, limit: int) -> None:
    _moved(caplog, path, f"larger than the limit of {limit} bytes")
    [aside] = _aside(path)
    assert aside.stat().st_size == HUGE  # moved, not rewritten or read


@pytest.mark.parametrize("which", ["object", "manifest"])
def test_a_huge_sparse_object_or_manifest_is_moved_aside_unread(base: Path, tmp_path: Path, which: str,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    key, data, name = _saved(tmp_path)
    paths = objects._paths(key)
    assert paths is not None
    path = paths[0] if which == "object" else paths[1]
    _sparse(path)
    start = time.monotonic()
    assert objects.load(key) is None
    assert time.monotonic() - start < 20
    _limited(caplog, path, cache.MAX_OBJECT_BYTES if which == "object" else cache.MAX_MANIFEST_BYTES)
    assert objects.save(key, data, name)
    _warm_again(key)


@pytest.mark.parametrize("which", [".o", ".o.sha256"])
def test_a_huge_sparse_tape_object_or_digest_is_moved_aside_unread(base: Path, which: str,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    module = SimpleNamespace(name="robodyn_tape_hostile")
    data = _object("tape")
    native._store(module, data)
    assert native._fetch(module) == data
    path = native._object_path(module.name).with_suffix(which)
    _sparse(path)
    assert native._fetch(module) is None
    _limited(caplog, path, cache.MAX_OBJECT_BYTES if which == ".o" else cache.MAX_DIGEST_BYTES)
    native._store(module, data)
    assert native._fetch(module) == data


def test_a_huge_sparse_record_is_moved_aside_unread(base: Path, tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    file, record = _record_file(tmp_path)
    _sparse(record)
    assert _reload(file)._source._full is not None
    _limited(caplog, record, cache.MAX_RECORD_BYTES)
    assert _reload(file)._source._full is None  # rebuilt: warm again


def test_a_huge_sparse_generated_module_is_moved_aside_unread(base: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    text = f"# {tmp_path}\nVALUE = 42\n"
    first = loader.load_generated(text, "robodyn_hostile", numba_code=False)
    path = Path(first.__file__ or "")
    monkeypatch.setattr(loader, "_loaded", {})  # a new process
    _sparse(path)
    again = loader.load_generated(text, "robodyn_hostile", numba_code=False)
    assert again.VALUE == 42 and path.read_text() == text
    _limited(caplog, path, len(text.encode()))


NUMBA_TEXT = "import numba\n\n\n@numba.njit(cache=True)\ndef twice(x):\n    return 2.0 * x\n"


def _numba_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setattr(loader, "_loaded", {})  # a new process: numba reads its cache again
    module = loader.load_generated(f"# {tmp_path}\n{NUMBA_TEXT}", "robodyn_hostile")
    assert module.twice(1.5) == 3.0
    return module


@pytest.mark.parametrize("suffix", ["nbi", "nbc"])
def test_a_huge_sparse_numba_file_is_moved_aside_unread(base: Path, tmp_path: Path, suffix: str,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    _numba_module(tmp_path, monkeypatch)
    [path] = (cache.cache_dir() / "__pycache__").glob(f"robodyn_hostile_*.twice-*.{suffix}")
    _sparse(path)
    module = _numba_module(tmp_path, monkeypatch)
    limit = cache.MAX_NUMBA_INDEX_BYTES if suffix == "nbi" else cache.MAX_NUMBA_DATA_BYTES
    _limited(caplog, path, limit)
    assert path.stat().st_size < limit  # compiled and written again
    assert module.twice.stats.cache_misses  # type: ignore[attr-defined]
    assert _numba_module(tmp_path, monkeypatch).twice.stats.cache_hits  # type: ignore[attr-defined]


def test_read_private_checks_the_size_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "entry"
    path.write_bytes(b"abcd")
    path.chmod(0o600)
    assert cache.read_private(path, 4) == b"abcd"
    with pytest.raises(cache.UntrustedFile, match="4 bytes, larger than the limit of 3 bytes"):
        cache.read_private(path, 3)


# --- 5: the rest of the audit ------------------------------------------------------------------------------
@pytest.mark.parametrize("planted", ["folder", "fifo", "dangling link"])
def test_a_non_file_where_an_object_is_written_is_moved_aside(base: Path, tmp_path: Path, planted: str,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    name = _unique(tmp_path)
    data = _object(name)
    key = objects.object_key("planted", name)
    paths = objects._paths(key)
    assert paths is not None
    obj = paths[0]
    if planted == "folder":
        obj.mkdir()
    elif planted == "fifo":
        os.mkfifo(obj)
    else:
        obj.symlink_to(tmp_path / "nowhere")
    assert objects.load(key) is None  # no manifest: the object is not looked at ...
    assert objects.save(key, data, name)  # ... and writing it must not fail (nor block)
    assert obj.is_file() and not obj.is_symlink() and obj.read_bytes() == data
    _moved(caplog, obj, "")
    _warm_again(key)


def test_a_folder_where_numbas_machine_code_is_written_is_moved_aside(base: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    pycache = cache._numba_folder(str(cache.cache_dir() / "robodyn_hostile_x.py"))
    assert pycache is not None
    _numba_module(tmp_path, monkeypatch)  # learn the file names, then start again with a folder in the way
    [data] = pycache.glob("robodyn_hostile_*.twice-*.nbc")
    for path in pycache.iterdir():
        path.unlink()
    data.mkdir()
    _numba_module(tmp_path, monkeypatch)
    assert data.is_file() and _aside(data)  # written: the next run is warm, not compiled again
    assert _numba_module(tmp_path, monkeypatch).twice.stats.cache_hits  # type: ignore[attr-defined]


def test_a_read_only_cache_only_costs_a_compilation(base: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    name = _unique(tmp_path)
    data = _object(name)
    key = objects.object_key("read-only", name)
    assert objects._paths(key) is not None  # the folders exist; no file can be created in them

    def read_only(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(atomic, "_new_file", read_only)  # robodyn.base.atomic's exclusive temporary file
    assert objects.save(key, data, name)  # no InputError: the object is just not kept
    assert objects.load(key) is None
    native._store(SimpleNamespace(name="robodyn_tape_read_only"), data)  # called by LLVM: must not raise
    assert native._fetch(SimpleNamespace(name="robodyn_tape_read_only")) is None


def _symtab_header(data: bytes) -> int:
    """The file offset of the ELF object's symbol table section header."""
    (offset,) = struct.unpack_from("<Q", data, 0x28)
    entry_size, count = struct.unpack_from("<HH", data, 0x3A)
    for k in range(count):
        if struct.unpack_from("<I", data, offset + k * entry_size + 4)[0] == 2:  # SHT_SYMTAB
            return offset + k * entry_size
    raise AssertionError("no symbol table")


@pytest.mark.parametrize(("field", "value"), [(40, 0xFFFF), (56, 0), (32, 2**40)],
                         ids=["string table index", "entry size 0", "table size"])
def test_a_damaged_object_with_a_matching_digest_is_moved_aside(base: Path, tmp_path: Path, field: int, value: int,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    key, data, _ = _saved(tmp_path)
    paths = objects._paths(key)
    assert paths is not None
    at = _symtab_header(data) + field
    damaged = bytearray(data)
    struct.pack_into("<I" if field == 40 else "<Q", damaged, at, value)
    paths[0].write_bytes(bytes(damaged))
    manifest = json.loads(paths[1].read_bytes())
    paths[1].write_text(json.dumps({**manifest, "sha256": hashlib.sha256(damaged).hexdigest()}))
    assert objects.load(key) is None  # not an IndexError or ZeroDivisionError
    _moved(caplog, paths[0], "it cannot be read")


def test_undefined_symbols_of_a_truncated_object_is_a_value_error() -> None:
    data = _object("twice")
    for broken in (data[:6], data[:0x40], data[:len(data) // 2]):
        with pytest.raises(ValueError, match="ELF"):
            objects.undefined_symbols(broken)


def test_a_manifest_naming_a_symbol_the_object_lacks_is_moved_aside(base: Path, tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    key, data, name = _saved(tmp_path)
    paths = objects._paths(key)
    assert paths is not None
    manifest = json.loads(paths[1].read_bytes())
    paths[1].write_text(json.dumps({**manifest, "symbol": "robodyn_not_there"}))
    assert objects.load(key) is None
    _moved(caplog, paths[1], "its symbol is not in the object")
    assert objects.save(key, data, name)  # what the next compilation does: the manifest is right again
    assert json.loads(paths[1].read_bytes())["symbol"] == name  # (not loaded here: the engine has it already)
