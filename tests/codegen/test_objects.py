"""robodyn.codegen.objects: machine code numba compiled, exported as an object and loaded without numba.

References: numba's own compiled function (the loaded copy must compute the same bits), an object built
here with a known undefined symbol, and a damaged file.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import math
from pathlib import Path

import llvmlite.binding as llvm
import numba
import numpy as np
import pytest

from robodyn.codegen import objects

_SIGNATURE = numba.types.void(numba.types.float64, *([numba.types.CPointer(numba.types.float64)] * 4))
_C = ctypes.CFUNCTYPE(None, ctypes.c_double, *([ctypes.c_void_p] * 4))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(tmp_path))
    return tmp_path


def _damped(t, x, u, p, out):  # a numba C callback
    out[0] = math.sin(x[0]) * math.exp(-p[0] * t) + u[0] ** 2.5


def _call(address: int, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> float:
    out = np.zeros(1)
    _C(address)(t, x.ctypes.data, u.ctypes.data, p.ctypes.data, out.ctypes.data)
    return float(out[0])


def _object_with(ir_body: str) -> bytes:
    """An ELF object compiled by LLVM from ``ir_body`` (for symbols numba would never leave undefined)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = llvm.parse_assembly(ir_body)
    machine = llvm.Target.from_default_triple().create_target_machine(jit=True)
    return bytes(machine.emit_object(module))


def test_an_exported_cfunc_loads_and_computes_the_same_bits(cache: Path) -> None:
    compiled = numba.cfunc(_SIGNATURE, error_model="numpy")(_damped)
    data, symbol = objects.export(compiled)
    assert set(objects.undefined_symbols(data)) >= {"sin", "exp", "pow"}  # the math library, from the process
    assert objects.loadable(data) == []
    key = objects.object_key("the source of _damped", symbol)
    assert objects.save(key, data, symbol) and not objects.unusable(key)
    address = objects.load(key)
    assert address is not None and address != compiled.address  # a second copy of the machine code
    assert objects.load(key) == address  # loaded once per process
    rng = np.random.default_rng(2)
    for _ in range(20):
        x, u, p, t = rng.uniform(-3, 3, 1), rng.uniform(0, 2, 1), rng.uniform(0, 1, 1), float(rng.uniform(0, 4))
        assert _call(address, t, x, u, p) == _call(compiled.address, t, x, u, p)


def test_keys_depend_on_the_source_and_the_symbol() -> None:
    assert objects.object_key("a", "f") == objects.object_key("a", "f")
    assert len({objects.object_key("a", "f"), objects.object_key("b", "f"), objects.object_key("a", "g")}) == 3


def test_an_object_needing_a_symbol_nobody_provides_is_recorded_unusable(cache: Path) -> None:
    data = _object_with("declare double @robodyn_no_such_symbol(double)\n"
                        "define double @f(double %x) {\n  %y = call double @robodyn_no_such_symbol(double %x)\n"
                        "  ret double %y\n}\n")
    assert objects.undefined_symbols(data) == ["robodyn_no_such_symbol"]
    assert objects.loadable(data) == ["robodyn_no_such_symbol"]
    key = objects.object_key("needs a missing symbol", "f")
    assert not objects.save(key, data, "f")
    assert objects.unusable(key)  # later processes go to numba at once
    assert objects.load(key) is None


def test_a_damaged_object_is_moved_aside_and_not_loaded(cache: Path) -> None:
    data = _object_with("define double @g(double %x) {\n  %y = fmul double %x, 2.0\n  ret double %y\n}\n")
    key = objects.object_key("a damaged object", "g")
    assert objects.save(key, data, "g")
    [path] = cache.rglob(f"{key}.o")
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
    assert objects.load(key) is None
    assert not path.exists()  # quarantined: the next compilation writes it again


def test_a_missing_object_is_none_and_not_elf_is_an_error(cache: Path) -> None:
    assert objects.load(objects.object_key("never saved", "h")) is None
    assert not objects.unusable(objects.object_key("never saved", "h"))
    with pytest.raises(ValueError, match="ELF64"):
        objects.undefined_symbols(b"MZ not an object")


@pytest.mark.parametrize("manifest", [b"not json", b"[1, 2]", b'{"symbol": 3, "sha256": "x", "unresolved": []}'])
def test_a_malformed_manifest_is_moved_aside(cache: Path, manifest: bytes) -> None:
    data = _object_with("define double @k(double %x) {\n  ret double %x\n}\n")
    key = objects.object_key(f"a manifest {manifest!r}", "k")
    assert objects.save(key, data, "k")
    [path] = cache.rglob(f"{key}.json")
    path.write_bytes(manifest)
    assert objects.load(key) is None and not objects.unusable(key)
    assert not path.exists()


def test_an_object_that_is_not_elf_but_matches_its_digest_is_not_loaded(cache: Path) -> None:
    data = _object_with("define double @z(double %x) {\n  ret double %x\n}\n")
    key = objects.object_key("a truncated object", "z")
    assert objects.save(key, data, "z")
    [obj] = cache.rglob(f"{key}.o")
    [info] = cache.rglob(f"{key}.json")
    broken = data[:80]
    obj.write_bytes(broken)
    manifest = json.loads(info.read_text())
    info.write_text(json.dumps({**manifest, "sha256": hashlib.sha256(broken).hexdigest()}))
    assert objects.load(key) is None and not obj.exists()
