"""Machine code numba compiled, kept as object files and run later without numba in the process.

numba's own cache needs numba to load it, and importing and initializing numba costs a new process ~0.7 s
before its first result. So the C functions the simulations call — the kernels' C entry points
(:mod:`robodyn.integrate.kernels.entry`) and a model's ``rhs_c``, ``event_c``, ``jac_c`` — are exported right after
numba compiled them (the library's final LLVM module emitted as an ELF object by numba's own target
machine) and a later process loads them into llvmlite's MCJIT engine (:mod:`robodyn.codegen.llvm.native`)
and calls them through their addresses: llvmlite and ctypes only.

An object may only be loaded when every symbol it leaves undefined is resolved: MCJIT does not report a
missing one, the first call jumps to address 0. :func:`undefined_symbols` reads them from the ELF symbol
table and :func:`loadable` checks them against what this process provides:

- the C library and the math library (already in the process: ``memset``, ``sin``, ``pow``, ...) and the
  Python C API (``PyErr_*``, ``PyExc_*``, ``PyGILState_*``);
- ``numba_gil_ensure`` / ``numba_gil_release``, written here over ``PyGILState_Ensure`` / ``Release``;
- numba's exception and memory-release helpers, on paths the exported code never takes (nothing in it
  allocates, and failures are statuses, not exceptions): stubs that abort, so that a path thought dead is
  loud instead of a jump to 0.

Anything else (an allocation, another runtime helper) makes the object unusable: the caller keeps numba's
path, and the object's manifest says so, so later processes do not try again. Objects are keyed by the
content hash of the code's source, the host CPU's name and features (the code uses its vector
instructions) and the llvmlite version, and verified by their SHA-256 before loading (the trust rules of
the private cache: :func:`robodyn.codegen.cache.read_private`; docs/dev/security.md). They live in the cache's
``objects/`` folder, a private folder like the others (:func:`robodyn.codegen.cache.own_folder`); a manifest is
read with a size and nesting limit (:func:`robodyn.base.textfile.parse_json_limited`) and checked field by field, and
anything malformed, oversized or untrusted is moved aside.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import struct
from pathlib import Path
from typing import Any, Final

from robodyn.base.digest import sha256
from robodyn.base.errors import InputError
from robodyn.base.textfile import parse_json_limited
from robodyn.codegen.cache import (
    MAX_MANIFEST_BYTES,
    MAX_OBJECT_BYTES,
    cache_dir,
    log,
    object_code,
    own_folder,
    quarantine,
    read_trusted,
    write_private,
)
from robodyn.codegen.libraries import ORIGINS, host, library_address

__all__ = ["enabled", "export", "load", "loadable", "object_key", "save", "undefined_symbols", "unusable"]

#: The ELF object and the symbol of a numba CFunc compiled in this process (robodyn.codegen.cache.object_code).
export: Final = object_code

_PYTHON_FUNCTIONS: Final = ("PyErr_Clear", "PyErr_SetNone", "PyErr_SetString", "PyErr_WriteUnraisable",
                            "PyUnicode_FromString", "Py_DecRef", "PyBytes_FromStringAndSize", "PyGILState_Ensure",
                            "PyGILState_Release")
_PYTHON_DATA: Final = ("PyExc_RuntimeError", "PyExc_StopIteration", "PyExc_SystemError")
_DEAD: Final = {  # numba runtime helpers on exception and release paths the exported code never takes
    "numba_unpickle": "ptr @numba_unpickle(ptr %a, i32 %b, ptr %c)",
    "numba_runtime_build_excinfo_struct": "ptr @numba_runtime_build_excinfo_struct(ptr %a, ptr %b)",
    "numba_do_raise": "void @numba_do_raise(ptr %a)",
    "NRT_Free": "void @NRT_Free(ptr %a)",
    "NRT_MemInfo_call_dtor": "void @NRT_MemInfo_call_dtor(ptr %a)",
}
_GIL: Final = '''declare i32 @PyGILState_Ensure()
declare void @PyGILState_Release(i32)
define void @numba_gil_ensure(ptr %state) {
  %s = call i32 @PyGILState_Ensure()
  store i32 %s, ptr %state
  ret void
}
define void @numba_gil_release(ptr %state) {
  %s = load i32, ptr %state
  call void @PyGILState_Release(i32 %s)
  ret void
}
'''
#: The same helpers in C, linked into each shared library made of an exported object (robodyn.codegen.libraries):
#: hidden, so that no library's copy stands in for another's.
_RUNTIME_C: Final = r'''#include <stdlib.h>
#include <unistd.h>
#define HIDDEN __attribute__((visibility("hidden")))
extern int PyGILState_Ensure(void);
extern void PyGILState_Release(int);
HIDDEN void numba_gil_ensure(int *state) { *state = PyGILState_Ensure(); }
HIDDEN void numba_gil_release(int *state) { PyGILState_Release(*state); }
static void __attribute__((noreturn)) dead(const char *name) {
  const char *parts[] = {"robodyn: exported machine code reached numba's ", name, ", which it cannot run: aborting\n"};
  for (int k = 0; k < 3; k++) {
    size_t n = 0;
    while (parts[k][n]) n++;
    if (write(2, parts[k], n) < 0) break;
  }
  abort();
}
HIDDEN void *numba_unpickle(void *a, int b, void *c) { (void)a; (void)b; (void)c; dead("numba_unpickle"); }
HIDDEN void *numba_runtime_build_excinfo_struct(void *a, void *b) {
  (void)a; (void)b; dead("numba_runtime_build_excinfo_struct");
}
HIDDEN void numba_do_raise(void *a) { (void)a; dead("numba_do_raise"); }
HIDDEN void NRT_Free(void *a) { (void)a; dead("NRT_Free"); }
HIDDEN void NRT_MemInfo_call_dtor(void *a) { (void)a; dead("NRT_MemInfo_call_dtor"); }
'''
_state: dict[str, Any] = {}
_log = log  # robodyn.codegen.cache: logging imported when something is logged
_SHA256: Final = re.compile(r"[0-9a-f]{64}")
_SYMBOL_SIZE: Final = 24  # bytes of an ELF64 symbol table entry


def enabled() -> bool:
    """Whether exported machine code is used (``ROBODYN_NATIVE=0`` in the environment: numba runs everything, as
    before it existed; the benchmarks compare both)."""
    return os.environ.get("ROBODYN_NATIVE", "1") != "0"


def object_key(source: str, symbol: str) -> str:
    """The file name of the object of ``symbol`` compiled from ``source`` on this CPU with this llvmlite
    (robodyn.codegen.libraries.host)."""
    return sha256("\0".join((source, symbol, host())).encode()).hexdigest()[:32]


def undefined_symbols(data: bytes) -> list[str]:
    """The global symbols an ELF64 little-endian relocatable object uses but does not define.

    ValueError when ``data`` is not such an object or is damaged (an offset or index outside it); the work is
    bounded by its size.
    """
    if data[:4] != b"\x7fELF" or data[4:6] != b"\x02\x01":
        raise ValueError("not an ELF64 little-endian object")
    try:
        return _undefined(data)
    except (struct.error, IndexError, UnicodeDecodeError) as exc:  # an offset or index outside the object
        raise ValueError(f"a damaged ELF object ({exc})") from None


def _undefined(data: bytes) -> list[str]:
    (offset,) = struct.unpack_from("<Q", data, 0x28)
    entry_size, count = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, offset + k * entry_size) for k in range(count)]
    names: list[str] = []
    budget = len(data) // _SYMBOL_SIZE  # symbols read in all: no more than the object could hold
    for section in sections:
        if section[1] != 2:  # SHT_SYMTAB
            continue
        strings = sections[section[6]][4]
        start, size, item = section[4], section[5], section[9]
        if item != _SYMBOL_SIZE or start + size > len(data):
            raise ValueError("a damaged ELF object (its symbol table)")
        budget -= size // item
        if budget < 0:
            raise ValueError("a damaged ELF object (more symbols than it can hold)")
        for k in range(1, size // item):
            name, info, _, index = struct.unpack_from("<IBBH", data, start + k * item)
            if info >> 4 != 0 and index == 0:  # not local, undefined
                at = strings + name
                names.append(data[at:data.index(b"\0", at)].decode())
    return names


def loadable(data: bytes) -> list[str]:
    """The undefined symbols of ``data`` that this process cannot provide (empty: it can be loaded)."""
    import llvmlite.binding as llvm

    _runtime()
    provided = {*_DEAD, "numba_gil_ensure", "numba_gil_release"}
    # numba registers its runtime's symbols with LLVM when it is imported: they do not count, a process without
    # numba lacks them (an object that allocates needs NRT_MemInfo_alloc..., and is unusable)
    return [name for name in undefined_symbols(data) if name not in provided and (
        name.startswith(("NRT_", "numba_")) or not llvm.address_of_symbol(name))]


def _runtime() -> Any:
    """The process's MCJIT engine with the symbols above defined (once)."""
    engine = _state.get("engine")
    if engine is None:
        import llvmlite.binding as llvm

        from robodyn.codegen.llvm.native import shared_engine

        engine, lock = shared_engine()
        api = ctypes.pythonapi
        for name in _PYTHON_FUNCTIONS:
            llvm.add_symbol(name, ctypes.cast(getattr(api, name), ctypes.c_void_p).value)
        for name in _PYTHON_DATA:
            llvm.add_symbol(name, ctypes.addressof(ctypes.c_void_p.in_dll(api, name)))
        stubs = []
        for name, signature in _DEAD.items():  # says which helper was reached, on stderr, then aborts
            message = f"robodyn: exported machine code reached numba's {name}, which it cannot run: aborting\n"
            stubs.append(f'@message_{name} = private constant [{len(message)} x i8] c"{message[:-1]}\\0A"\n'
                         f"define {signature} {{\n  call i64 @write(i32 2, ptr @message_{name}, i64 {len(message)})\n"
                         "  call void @abort()\n  unreachable\n}")
        module = llvm.parse_assembly("declare void @abort() noreturn\ndeclare i64 @write(i32, ptr, i64)\n"
                                     f"{_GIL}\n" + "\n".join(stubs) + "\n")
        module.name = "robodyn_runtime_stubs"
        with lock:
            if "engine" in _state:  # another thread was first
                return _state["engine"]
            engine.add_module(module)
            engine.finalize_object()
            _state.update(engine=engine, lock=lock, modules=[module], loaded={})
    return engine


def _paths(key: str) -> tuple[Path, Path] | None:
    """The object and the manifest of ``key`` in the cache's private ``objects/`` folder, or None when that folder
    cannot be had (a read-only cache without it; a file in its place that cannot be moved aside): no object then."""
    base = cache_dir(numba_code=False)
    try:
        folder = own_folder(base / "objects")
    except InputError as exc:
        _log.debug("robodyn: no exported objects: %s", exc)
        return None
    return folder / f"{key}.o", folder / f"{key}.json"


def save(key: str, data: bytes, symbol: str) -> bool:
    """Keep the object ``data`` defining ``symbol`` under ``key``; returns whether a later process can load it
    (the manifest records the answer either way). A read-only cache only costs a compilation next time."""
    missing = loadable(data)
    manifest = {"symbol": symbol, "sha256": sha256(data).hexdigest(), "unresolved": missing}
    paths = _paths(key)
    if paths is not None and (missing or write_private(paths[0], data)):
        write_private(paths[1], json.dumps(manifest).encode())
    return not missing


def _well_formed(manifest: Any) -> bool:
    return (isinstance(manifest, dict) and isinstance(manifest.get("symbol"), str) and manifest["symbol"] != ""
            and isinstance(manifest.get("sha256"), str) and _SHA256.fullmatch(manifest["sha256"]) is not None
            and isinstance(manifest.get("unresolved"), list)
            and all(isinstance(name, str) for name in manifest["unresolved"]))


def _manifest(path: Path) -> dict[str, Any] | None:
    """The manifest at ``path`` when it exists and is well formed; a malformed, oversized, too deeply nested or
    untrusted one is moved aside."""
    data = read_trusted(path, MAX_MANIFEST_BYTES)
    if data is None:
        return None
    try:
        manifest = parse_json_limited(data, limit=MAX_MANIFEST_BYTES)  # JsonLimitError is a ValueError
        if not _well_formed(manifest):
            raise ValueError("it is not a manifest of robodyn's")
        return dict(manifest)
    except ValueError as exc:
        quarantine(path, str(exc))
        return None


def unusable(key: str) -> bool:
    """Whether an earlier process found the object of ``key`` unusable (it needs symbols no process provides)."""
    paths = _paths(key)
    manifest = None if paths is None else _manifest(paths[1])
    return manifest is not None and bool(manifest["unresolved"])


def load(key: str) -> int | None:
    """The address of the function kept under ``key``, loaded into this process (once), or None when there is no
    usable object (never saved, unusable, damaged or untrusted: the caller compiles instead)."""
    loaded = _state.get("loaded", {}).get(key) or _state.get("libraries", {}).get(key)
    if loaded is not None:
        return int(loaded)
    paths = _paths(key)
    if paths is None:
        return None
    obj, info = paths
    manifest = _manifest(info)
    if manifest is None or manifest["unresolved"]:
        return None
    address = library_address(obj, manifest["sha256"], manifest["symbol"], _RUNTIME_C)
    if address is not None:  # its shared library: no LLVM in the process
        _state.setdefault("libraries", {})[key] = address
        ORIGINS[address] = ("object", key)
        return address
    data = read_trusted(obj, MAX_OBJECT_BYTES)
    if data is None:
        return None
    try:
        problem = "its SHA-256 digest does not match" if sha256(data).hexdigest() != manifest["sha256"] \
            else "it needs symbols this process lacks" if loadable(data) else None
    except (ValueError, struct.error) as exc:  # not a well-formed ELF object
        problem = f"it cannot be read ({exc})"
    if problem is not None:
        quarantine(obj, problem)
        return None
    import llvmlite.binding as llvm

    engine = _runtime()
    with _state["lock"]:
        if key in _state["loaded"]:  # another thread loaded it meanwhile
            return int(_state["loaded"][key])
        engine.add_object_file(llvm.ObjectFileRef.from_data(data))
        engine.finalize_object()
        address = int(engine.get_function_address(manifest["symbol"]))
        if not address:  # the manifest names a symbol the object lacks: compiled (and recorded) again
            quarantine(info, "its symbol is not in the object")
            return None
        _state["loaded"][key] = address
    return address
