"""robodyn.codegen.libraries: cached objects linked into shared libraries and opened without LLVM.

References: the same object loaded into MCJIT (the library must compute the same bits), a process that must
not import llvmlite.binding, and damaged, foreign and unlinkable files.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest

from robodyn.codegen import libraries

_C = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double)
_IR = """declare double @llvm.sin.f64(double)
declare double @atan2(double, double)
@scale = private unnamed_addr constant [2 x double] [double 0.5, double 3.0]
define double @{name}(double %x, double %y) {{
  %s = call double @llvm.sin.f64(double %x)
  %p = getelementptr [2 x double], ptr @scale, i64 0, i64 1
  %k = load double, ptr %p
  %a = call double @atan2(double %s, double %y)
  %r = fmul double %a, %k
  ret double %r
}}
"""

needs_compiler = pytest.mark.skipif(libraries.c_compiler() is None, reason="no C compiler on this machine")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(libraries, "_opened", {})  # as in a new process
    return tmp_path


def _object(folder: Path, name: str, ir: str | None = None) -> tuple[Path, str, int]:
    """An object as robodyn's caches keep it (made for MCJIT, as the engine makes them), its digest, and the
    address of its function in an MCJIT engine of its own (the reference)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    machine = llvm.Target.from_default_triple().create_target_machine(cpu=llvm.get_host_cpu_name(), opt=2)
    stored: dict[str, bytes] = {}
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
    engine.set_object_cache(lambda module, data: stored.update({module.name: bytes(data)}), lambda module: None)
    module = llvm.parse_assembly(ir or _IR.format(name=name))
    module.name = name
    engine.add_module(module)
    engine.finalize_object()
    _engines.append((engine, module))
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / f"{name}.o"
    path.write_bytes(stored[name])
    os.chmod(path, 0o600)
    return path, hashlib.sha256(stored[name]).hexdigest(), engine.get_function_address(name)


_engines: list[object] = []  # the reference engines stay alive while their functions are called


@needs_compiler
def test_an_object_links_into_a_library_that_computes_the_same_bits(cache: Path) -> None:
    obj, digest, reference = _object(cache / "objects", "robodyn_probe_same")
    address = libraries.library_address(obj, digest, "robodyn_probe_same")
    assert address is not None and address != reference
    assert libraries.library_address(obj, digest, "robodyn_probe_same") == address  # opened once per process
    library = obj.with_suffix(".so")
    record = library.with_name(library.name + ".sha256").read_text().split()
    assert record == [hashlib.sha256(library.read_bytes()).hexdigest(), digest]  # its digest, and its object's
    rng = np.random.default_rng(4)
    for x, y in rng.uniform(-4.0, 4.0, (50, 2)):
        assert _C(address)(x, y) == _C(reference)(x, y)
    assert libraries.library_address(obj, digest, "no_such_symbol") is None


@needs_compiler
def test_a_later_process_opens_the_library_without_linking(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    obj, digest, reference = _object(cache / "objects", "robodyn_probe_later")
    assert libraries.library_address(obj, digest, "robodyn_probe_later") is not None
    monkeypatch.setattr(libraries, "_opened", {})
    monkeypatch.setattr(libraries, "_link", lambda *args: pytest.fail("linked again"))
    address = libraries.library_address(obj, digest, "robodyn_probe_later")
    assert address is not None and _C(address)(0.3, 2.0) == _C(reference)(0.3, 2.0)


@needs_compiler
def test_a_damaged_library_is_moved_aside_and_linked_again(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    obj, digest, reference = _object(cache / "objects", "robodyn_probe_damaged")
    assert libraries.library_address(obj, digest, "robodyn_probe_damaged") is not None
    library = obj.with_suffix(".so")
    data = bytearray(library.read_bytes())
    data[len(data) // 2] ^= 0xFF
    library.write_bytes(bytes(data))
    monkeypatch.setattr(libraries, "_opened", {})
    address = libraries.library_address(obj, digest, "robodyn_probe_damaged")
    assert address is not None and _C(address)(1.0, 1.0) == _C(reference)(1.0, 1.0)
    assert list(library.parent.glob(f"{library.name}.broken-*"))  # the damaged one, kept aside


@needs_compiler
def test_a_library_of_another_object_is_not_opened(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The object under a name was made again (another digest): its old library is not used for it."""
    obj, digest, _ = _object(cache / "objects", "robodyn_probe_other")
    assert libraries.library_address(obj, digest, "robodyn_probe_other") is not None
    monkeypatch.setattr(libraries, "_opened", {})
    linked: list[str] = []
    real_link = libraries._link
    monkeypatch.setattr(libraries, "_link", lambda o, d, r: linked.append(d) or real_link(o, d, r))
    assert libraries.library_address(obj, "0" * 64, "robodyn_probe_other") is None  # the object does not match
    assert linked == ["0" * 64]


@needs_compiler
def test_an_object_that_does_not_link_is_recorded_and_not_linked_again(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = cache / "objects"
    folder.mkdir(mode=0o700)
    obj = folder / "not_an_object.o"
    obj.write_bytes(b"not an ELF object at all")
    os.chmod(obj, 0o600)
    digest = hashlib.sha256(obj.read_bytes()).hexdigest()
    assert libraries.library_address(obj, digest, "f") is None
    monkeypatch.setattr(libraries, "_link", lambda *args: pytest.fail("linked again"))
    assert libraries.library_address(obj, digest, "f") is None


@needs_compiler
def test_a_library_needing_a_symbol_the_process_lacks_is_not_opened(cache: Path) -> None:
    ir = ("declare double @robodyn_no_such_symbol(double)\n"
          "define double @robodyn_probe_missing(double %x, double %y) {\n"
          "  %r = call double @robodyn_no_such_symbol(double %x)\n  ret double %r\n}\n")
    obj = cache / "objects" / "robodyn_probe_missing.o"
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = llvm.parse_assembly(ir)
    data = bytes(llvm.Target.from_default_triple().create_target_machine(jit=True).emit_object(module))
    obj.parent.mkdir(mode=0o700)
    obj.write_bytes(data)
    os.chmod(obj, 0o600)
    assert libraries.library_address(obj, hashlib.sha256(data).hexdigest(), "robodyn_probe_missing") is None


def test_no_library_without_a_compiler_or_when_switched_off(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    obj, digest, _ = _object(cache / "objects", "robodyn_probe_off")
    monkeypatch.setenv("ROBODYN_LIBRARIES", "0")
    assert libraries.library_address(obj, digest, "robodyn_probe_off") is None
    monkeypatch.delenv("ROBODYN_LIBRARIES")
    monkeypatch.setattr(libraries, "c_compiler", lambda: None)
    assert libraries.library_address(obj, digest, "robodyn_probe_off") is None
    assert not obj.with_suffix(".so").exists()


def test_the_host_is_read_without_llvm() -> None:
    script = ("import json, sys\nfrom robodyn.codegen.libraries import host\nh = host()\n"
              "print(json.dumps([h, 'llvmlite.binding' in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    host, imported = json.loads(done.stdout.splitlines()[-1])
    import llvmlite

    assert not imported
    assert host == libraries.host() and host.startswith(os.uname().machine)
    assert host.endswith(f"llvmlite {llvmlite.__version__}")
    if Path("/proc/cpuinfo").exists():
        assert "flags=" in host or "Features=" in host  # the CPU's features: code for AVX never runs without it
