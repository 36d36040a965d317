"""Cached machine code as shared libraries, opened by the system's dynamic linker: no LLVM in the process.

Machine code robodyn compiled once (a model's functions, the tapes, the kernels numba exported: the objects of
:mod:`robodyn.codegen.llvm.native` and :mod:`robodyn.codegen.objects`) is kept as ELF object files. Loading one into
llvmlite's MCJIT engine costs a new process ~45 ms before its first result: importing ``llvmlite.binding`` and
its 60 MB library, creating the engine, relocating. The system's dynamic linker does the same for a shared
library in well under a millisecond, so each object is also linked, once, into a shared library beside it
(``<name>.so``, and ``<name>.so.sha256`` holding its SHA-256 and the object's) by the system's C compiler
driver (``cc``, ``gcc`` or ``clang``), and a later process opens that with :mod:`ctypes`.

- The objects are the ones MCJIT loads, made for its large code model with absolute addresses (numba's and
  LLVM's JIT settings), not position-independent: the library carries text relocations (``-z notext``), which
  the dynamic linker applies to its private copy of the code pages when it opens it. The machine code is the
  same bits either way. (Emitting numba's kernels position-independent instead made one of them run wrong in
  both loaders; robodyn does not second-guess the code generators' JIT settings.)
- A library is made from an object whose SHA-256 its caller checked, is read back under the cache's trust rules
  (:func:`robodyn.codegen.cache.read_trusted`) and its digest compared before it is opened; the bytes checked
  are the bytes opened (copied into an anonymous memory file, ``memfd_create``, and opened from there where the
  system has it), so a file swapped in between cannot run.
- It is opened with ``RTLD_NOW | RTLD_LOCAL``: a symbol it needs and the process lacks fails the open, never a
  call (the library is moved aside and the caller loads the object into MCJIT as before); its symbols never
  replace another library's.
- Without a C compiler, with ``ROBODYN_LIBRARIES=0``, or where a link or an open fails, everything goes through
  MCJIT as before: only the start-up time differs, never a result (the same machine code runs).

What the machine code was made for is :func:`host`: the CPU as the kernel reports it (``/proc/cpuinfo``: vendor,
family, model, feature flags), the architecture and llvmlite's version, read without importing LLVM.
"""

from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path
from typing import Any, Final

from robodyn.base.digest import sha256
from robodyn.base.errors import InputError
from robodyn.codegen.cache import (
    MAX_DIGEST_BYTES,
    MAX_OBJECT_BYTES,
    cache_dir,
    log,
    own_folder,
    quarantine,
    read_trusted,
    write_private,
)

__all__ = ["ORIGINS", "c_compiler", "enabled", "host", "library_address", "module_library_address",
           "module_object_path"]

#: The lines of the first processor's block of ``/proc/cpuinfo`` that say what code runs on it (x86 and ARM).
_CPU_FIELDS: Final = ("vendor_id", "cpu family", "model", "model name", "flags", "CPU implementer",
                      "CPU architecture", "CPU variant", "CPU part", "Features", "isa")
#: Seconds a link may take (a huge tape's object links in about a second).
LINK_SECONDS: Final = 300
_REFUSED: Final = "unlinkable"  # in the digest file of an object that does not link, for its object's digest
_opened: dict[str, Any] = {}  # the libraries this process opened, by path: kept open for the process's life
_descriptors: list[int] = []  # their memory files
#: Where each function address a library gave came from, so that a later process can find it again without the code
#: it was made from (a warm run's image, robodyn.integrate.kernels.run_image): ``("object", key)`` for an
#: exported object (robodyn.codegen.objects.load), ``("module", name, symbol)`` for LLVM's
#: (robodyn.codegen.llvm.native).
ORIGINS: dict[int, tuple[str, ...]] = {}


def enabled() -> bool:
    """Whether cached machine code is opened as shared libraries (``ROBODYN_LIBRARIES=0``: through MCJIT only)."""
    return os.environ.get("ROBODYN_LIBRARIES", "1") != "0"


def _cpu() -> str | None:
    """The first processor's identifying lines of ``/proc/cpuinfo``, or None where there is none to read."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            lines = []
            for line in handle:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                if key.strip() in _CPU_FIELDS:
                    lines.append(f"{key.strip()}={' '.join(value.split())}")
    except OSError:
        return None
    return "\n".join(lines) if lines else None


@functools.cache
def host() -> str:
    """What machine code made here is made for: this CPU (vendor, family, model and feature flags as the kernel
    reports them), the architecture and llvmlite's version — part of every cached object's name, so that a cache
    folder shared by different machines never runs code made for another. Read without importing LLVM; where
    ``/proc/cpuinfo`` is missing, LLVM's own name and features of the host CPU."""
    import llvmlite  # the package only (its version): not llvmlite.binding

    cpu = _cpu()
    if cpu is None:
        import llvmlite.binding as llvm

        cpu = f"{llvm.get_host_cpu_name()} {llvm.get_host_cpu_features().flatten()}"
    return f"{os.uname().machine}\n{cpu}\nllvmlite {llvmlite.__version__}"


@functools.cache
def c_compiler() -> str | None:
    """The system's C compiler driver (``cc``, ``gcc`` or ``clang`` on the PATH), or None when there is none."""
    import shutil

    for name in ("cc", "gcc", "clang"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _library_paths(obj: Path) -> tuple[Path, Path]:
    library = obj.with_suffix(".so")
    return library, library.with_name(library.name + ".sha256")


def _cached_library(obj: Path, digest: str) -> bytes | bool:
    """The bytes of ``obj``'s library when it is there, trusted, its digest matches and it was made from the object
    whose SHA-256 is ``digest``; False when an earlier process could not link that object; else True (link it
    now). A damaged library is moved aside."""
    library, digest_path = _library_paths(obj)
    record = read_trusted(digest_path, MAX_DIGEST_BYTES)
    words = [] if record is None else record.decode("ascii", "replace").split()
    if len(words) != 2 or words[1] != digest:  # none yet, a link killed between the files, another object's
        return True
    if words[0] == _REFUSED:
        return False
    data = read_trusted(library, MAX_OBJECT_BYTES)
    if data is None:
        return True
    if sha256(data).hexdigest() != words[0]:
        quarantine(library, "its SHA-256 digest does not match")
        return True
    return data


def _link(obj: Path, digest: str, runtime: str) -> bytes | None:
    """Link the object ``obj`` (its SHA-256 ``digest``) and the C source ``runtime`` (may be empty) into a shared
    library, kept beside the object; its bytes, or None when there is no compiler, the object does not match or
    the link fails (logged: the caller loads the object into MCJIT instead)."""
    import subprocess

    compiler = c_compiler()
    data = read_trusted(obj, MAX_OBJECT_BYTES)
    if compiler is None or data is None or sha256(data).hexdigest() != digest:
        return None
    try:
        folder = own_folder(cache_dir(numba_code=False) / "link")
    except InputError as exc:
        log.debug("robodyn: no shared libraries: %s", exc)
        return None
    stem = folder / f"{obj.stem}.{os.getpid()}"
    sources = [stem.with_suffix(".o")]
    made = [sources[0], stem.with_suffix(".so")]
    try:
        sources[0].write_bytes(data)
        if runtime:
            sources.append(stem.with_suffix(".c"))
            made.append(sources[1])
            sources[1].write_text(runtime, encoding="utf-8")
        done = subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-Wl,-z,notext", "-o", str(made[1]),
                               *map(str, sources), "-lm"],
                              capture_output=True, text=True, timeout=LINK_SECONDS, check=False)
        if done.returncode != 0:  # recorded: later processes do not try again (MCJIT loads the object)
            log.debug("robodyn: linking %s failed: %s", obj.name, done.stderr.strip()[-500:])
            write_private(_library_paths(obj)[1], f"{_REFUSED} {digest}\n".encode())
            return None
        library = made[1].read_bytes()
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("robodyn: linking %s failed: %s", obj.name, exc)
        return None
    finally:
        for path in made:
            path.unlink(missing_ok=True)
    path, digest_path = _library_paths(obj)
    if write_private(path, library):  # a read-only cache only costs a link next time
        write_private(digest_path, f"{sha256(library).hexdigest()} {digest}\n".encode())
    return library


def _open(path: Path, data: bytes) -> Any:
    """Open the library whose checked bytes are ``data`` (kept at ``path``): from an anonymous memory file holding
    exactly those bytes where the system has one, else from ``path``. OSError when the dynamic linker refuses.

    The memory file stays open for the process's life: the dynamic linker knows a library by its name, and a
    descriptor's number used again would name a library it has open already."""
    memfd = getattr(os, "memfd_create", None)
    mode = os.RTLD_NOW | os.RTLD_LOCAL
    if memfd is None:
        return ctypes.CDLL(str(path), mode=mode)
    fd = memfd(path.name, getattr(os, "MFD_CLOEXEC", 0))
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        handle = ctypes.CDLL(f"/proc/self/fd/{fd}", mode=mode)
    except BaseException:
        os.close(fd)
        raise
    _descriptors.append(fd)
    return handle


def library_address(obj: Path, digest: str, symbol: str, runtime: str = "") -> int | None:
    """The address of ``symbol`` in the shared library of the cached object ``obj`` (whose SHA-256 is ``digest``,
    checked by the caller's rules), opened in this process once; the library is linked first when there is none
    yet (with the C source ``runtime``, the helpers the object needs that no library provides). None when shared
    libraries are off or cannot be had here: the caller loads the object into MCJIT."""
    if not enabled():
        return None
    key = str(obj)
    handle = _opened.get(key)
    if handle is None:
        found = _cached_library(obj, digest)
        data = _link(obj, digest, runtime) if found is True else None if found is False else found
        if data is None:
            return None
        library = _library_paths(obj)[0]
        try:
            handle = _open(library, data)
        except OSError as exc:  # a symbol this process lacks, a system that refuses it: MCJIT instead (the
            log.debug("robodyn: the library %s is not opened: %s", library, exc)  # library checked: left)
            return None
        _opened[key] = handle
    try:
        return int(ctypes.cast(handle[symbol], ctypes.c_void_p).value or 0) or None
    except AttributeError:  # a library without the symbol: MCJIT instead
        return None


@functools.cache
def _host_tag() -> str:
    """What the machine code is made for (:func:`host`: the CPU, llvmlite's version), hashed: part of an object's
    file name, so that a cache folder shared by different machines never runs code made for another."""
    return sha256(host().encode()).hexdigest()[:12]


def module_object_path(name: str) -> Path:
    """Where the machine code of the LLVM module ``name`` (robodyn.codegen.llvm.native) is kept: ``<name>.<host>.o``."""
    return cache_dir(numba_code=False) / f"{name}.{_host_tag()}.o"


def module_library_address(name: str, symbol: str) -> int | None:
    """The address of ``symbol`` from the shared library of the cached object of the LLVM module ``name`` (linked
    from it the first time), or None: no object yet, not trusted, or no library to be had (MCJIT loads it then)."""
    try:
        path = module_object_path(name)
        digest = read_trusted(path.with_suffix(".o.sha256"), MAX_DIGEST_BYTES)
    except (OSError, InputError) as exc:  # a cache that cannot be had: MCJIT's path says why
        log.debug("robodyn: no shared library of %s: %s", name, exc)
        return None
    if digest is None:
        return None
    address = library_address(path, digest.decode("ascii", "replace").strip(), symbol)
    if address is not None:
        ORIGINS[address] = ("module", name, symbol)
    return address
