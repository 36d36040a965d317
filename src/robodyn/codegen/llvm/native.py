"""Tape functions called from Python, compiled by LLVM directly: no numba on the path.

A model's numeric functions that Python calls one point at a time (a chain's Jacobians for
``linearize``, its mass matrix, inverse dynamics) need machine code but none of numba's machinery:
the same LLVM IR text that the kernels link through numba (:func:`robodyn.codegen.llvm.tape.llvm_ir`)
is compiled here by llvmlite's MCJIT and called through ``ctypes``. That saves what numba costs a
process before its first result — importing it (~0.25 s) and initializing its compiler (~0.45 s) — and
leaves the kernels, which numba compiles anyway, unchanged — but for the largest tapes, which the kernels call
by name at the address compiled here (:func:`tape_address`, robodyn.codegen.llvm.tape.straight_line).

The IR goes through LLVM's O3 pipeline and is compiled for this CPU (its name and features). Machine code is kept
in the private cache folder (:mod:`robodyn.codegen.cache`) as ``<symbol>.<host>.o``, named by the content hash of
the IR and of the machine it was made for, so a new process loads it instead of compiling again (the same
trust as numba's cached machine code beside it: the folder belongs to the user and is private). A
``<symbol>.<host>.o.sha256`` beside it holds the object's digest: a truncated or damaged object is moved aside
(:func:`robodyn.codegen.cache.quarantine`) and compiled again instead of loaded. Both files are read
only when the cache trusts them (:func:`robodyn.codegen.cache.read_private`: a regular file of the
user, not writable by others, not through a symbolic link, no larger than ``MAX_OBJECT_BYTES`` and
``MAX_DIGEST_BYTES``); the digest detects damage, not an attacker (docs/dev/security.md).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from typing import Any, Final

import numpy as np

from robodyn.base.digest import sha256
from robodyn.codegen.cache import (
    MAX_DIGEST_BYTES,
    MAX_OBJECT_BYTES,
    log,
    quarantine,
    read_trusted,
    write_private,
)
from robodyn.codegen.libraries import module_library_address, module_object_path

__all__ = [
    "NativeBatch",
    "NativeEntry",
    "NativeFunction",
    "RawCall",
    "batch_ir",
    "native_address",
    "native_batch",
    "native_entry",
    "native_function",
    "native_kernel",
    "shared_engine",
    "tape_address",
]

_POINTER = ctypes.c_void_p
_SIGNATURE = ctypes.CFUNCTYPE(None, ctypes.c_double, _POINTER, _POINTER, _POINTER, _POINTER, _POINTER)
_ENTRY_SIGNATURE = ctypes.CFUNCTYPE(None, ctypes.c_double, _POINTER, _POINTER, _POINTER, _POINTER)
_INDEX = ctypes.c_int64
_BATCH_SIGNATURE = ctypes.CFUNCTYPE(None, _INDEX, ctypes.c_double, *(_POINTER, _INDEX) * 5)
#: Above this many lines of IR (~50,000 tape nodes) the optimized IR is turned into machine code at -O1
#: (:data:`LARGE_LEVEL`): LLVM's code generation at -O2 grows with a function's size (the humanoid's 142,000-node
#: Jacobian, in 10,000-node pieces: 28-35 s at -O2, 18 s at -O1, 8 s at -O0, per call 65 us at -O1, 72 us at -O2,
#: 156 us at -O0; the same bits at every level: no level changes an operation's rounding).
LARGE_LINES: Final = 120_000
LARGE_LEVEL: Final = 1
_PREFIX = "robodyn_tape_"  # Names of the modules this cache keeps (llvm_ir's symbols).
_lock = threading.RLock()  # the engine's: every module or object added to it, by this module or robodyn.codegen.objects
_log = log  # robodyn.codegen.cache: logging imported when something is logged
_state: dict[str, Any] = {}  # the engine, its modules and the functions had so far


class NativeFunction:
    """``fn(t, x, u, p, a, out)`` on float64 vectors; ``out`` must be a writable C-contiguous array.

    The inputs are copied into one fresh array whose address ctypes takes once: ``ndarray.ctypes`` costs
    ~1 us per array, as much as a small model's whole Jacobian.
    """

    __slots__ = ("_function", "symbol")

    def __init__(self, function: Callable[..., None], symbol: str):
        self._function = function
        self.symbol = symbol

    def __call__(self, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray, a: np.ndarray,
                 out: np.ndarray) -> None:
        packed = np.concatenate((x, u, p, a)).astype(np.float64, copy=False)
        base = ctypes.addressof(ctypes.c_char.from_buffer(packed))  # type: ignore[arg-type]
        at_u = base + 8 * x.size
        at_p = at_u + 8 * u.size
        out_address = ctypes.addressof(ctypes.c_char.from_buffer(out))  # type: ignore[arg-type]
        self._function(t, base, at_u, at_p, at_p + 8 * p.size, out_address)

    def bind(self, sizes: tuple[int, int, int, int], out: np.ndarray) -> tuple[np.ndarray, Callable[[float], None]]:
        """A packed argument array ``[x | u | p | a]`` of ``sizes`` and ``call(t)`` running the function on it into
        ``out`` (writable, C-contiguous): for loops that write new arguments into the array and pay only the call.
        """
        packed = np.zeros(sum(sizes))
        base = ctypes.addressof(ctypes.c_char.from_buffer(packed))  # type: ignore[arg-type]
        at_u = base + 8 * sizes[0]
        at_p = at_u + 8 * sizes[1]
        at_a = at_p + 8 * sizes[2]
        out_address = ctypes.addressof(ctypes.c_char.from_buffer(out))  # type: ignore[arg-type]
        function = self._function

        def call(t: float, _arrays: tuple[np.ndarray, np.ndarray] = (packed, out)) -> None:  # keeps them alive
            function(t, base, at_u, at_p, at_a, out_address)

        return packed, call

    def bind_raw(self, sizes: tuple[int, int, int, int], out: np.ndarray
                 ) -> tuple[np.ndarray, Callable[..., None], tuple[int, int, int, int, int]]:
        """:meth:`bind`'s pieces for a caller that makes its own loop body: the packed argument array, the ctypes
        function and its pointer arguments ``(x, u, p, a, out)``, called ``function(t, *pointers)``. The caller
        keeps ``packed`` and ``out`` alive as long as it calls."""
        packed = np.zeros(sum(sizes))
        base = ctypes.addressof(ctypes.c_char.from_buffer(packed))  # type: ignore[arg-type]
        at_u = base + 8 * sizes[0]
        at_p = at_u + 8 * sizes[1]
        out_address = ctypes.addressof(ctypes.c_char.from_buffer(out))  # type: ignore[arg-type]
        return packed, self._function, (base, at_u, at_p, at_p + 8 * sizes[2], out_address)

    def bind_parameters(self, p: np.ndarray, extra: int = 0) -> RawCall:
        """The function with ``p`` (and ``extra`` zeros as its fourth argument ``a``) bound, for callers that write
        the other arguments and the result where they keep them and pass their addresses (:class:`RawCall`)."""
        kept = np.zeros(max(1, p.size + extra))  # an address even for no entries (never read then)
        kept[: p.size] = p
        at_p = ctypes.addressof(ctypes.c_char.from_buffer(kept))  # type: ignore[arg-type]
        return RawCall(self._function, at_p, at_p + 8 * p.size, kept)


class RawCall:
    """A compiled ``fn(t, x, u, p, a, out)`` with ``p`` and ``a`` bound: ``function(t, at_x, at_u, at_p, at_a,
    at_out)`` with the addresses of float64 blocks, ``at_p`` and ``at_a`` those of ``kept`` (which the caller keeps
    alive with the call). The caller owns the other blocks: it writes x and u where it passes their addresses and
    reads the result where it passed ``at_out`` (linearize's lean path writes both in a row of its results).
    ``sums``: the function returns the sum of the entries it wrote (a composite of machine code and a compiled
    solve), else None (machine code of one tape)."""

    __slots__ = ("at_a", "at_p", "function", "kept", "sums")

    def __init__(self, function: Callable[..., Any], at_p: int, at_a: int, kept: np.ndarray, sums: bool = False):
        self.function, self.at_p, self.at_a, self.kept, self.sums = function, at_p, at_a, kept, sums


class NativeBatch:
    """``fn(t, x, u, p, a, out)`` over rows: each of x, u, p, a is a vector (the same for every row) or a
    C-contiguous float64 ``(N, k)`` array, and ``out`` a writable C-contiguous ``(N, size)`` array: row i
    of ``out`` is the function at row i of the arguments (:func:`batch_ir`)."""

    __slots__ = ("_function", "symbol")

    def __init__(self, function: Callable[..., None], symbol: str):
        self._function = function
        self.symbol = symbol

    def __call__(self, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray, a: np.ndarray,
                 out: np.ndarray) -> None:
        count = out.shape[0]
        arguments: list[Any] = []
        keep = []  # the converted arrays stay alive until the call returns
        for array in (x, u, p, a):
            if type(array) is not np.ndarray or array.dtype != np.float64 or not array.flags.c_contiguous:
                array = np.ascontiguousarray(array, dtype=np.float64)
            if array.ndim == 2 and array.shape[0] != count:
                raise ValueError(f"{array.shape[0]} rows where {count} were expected")
            keep.append(array)
            stride = array.shape[1] if array.ndim == 2 else 0
            arguments += [array.__array_interface__["data"][0] if array.size else _EMPTY_ADDRESS, stride]
        if not (out.flags.c_contiguous and out.flags.writeable and out.dtype == np.float64):
            raise ValueError("out must be a writable C-contiguous float64 array")
        arguments += [out.__array_interface__["data"][0], out.shape[1] if out.ndim == 2 else 0]
        self._function(count, float(t), *arguments)


_EMPTY = ctypes.c_double(0.0)
_EMPTY_ADDRESS = ctypes.addressof(_EMPTY)  # given for an argument without entries (never read)


def _engine() -> Any:
    """The process's MCJIT engine, created on first use, with the object cache attached."""
    engine = _state.get("engine")
    if engine is None:
        import llvmlite.binding as llvm

        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _machine(2))
        engine.set_object_cache(_store, _fetch)
        _state["engine"] = engine
    return engine


def shared_engine() -> tuple[Any, Any]:
    """The process's MCJIT engine and the lock to hold while adding to it (robodyn.codegen.objects adds the
    exported kernels and model functions)."""
    with _lock:
        return _engine(), _lock


def _machine(opt: int) -> Any:
    """A target machine for this CPU, its name and features (AVX and wider where it has them): the tapes run
    15-22% faster than for a generic x86-64 (benchmarks/RESULTS.md) with the same results bit for bit — the IR
    has no fast-math or contraction flags, so no instruction set changes an operation's rounding."""
    import llvmlite.binding as llvm

    return llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=opt)


def _object_path(name: str) -> Any:
    return module_object_path(name)


def _store(module: Any, data: bytes) -> None:
    """MCJIT compiled ``module``: keep its machine code (and its digest) for later processes."""
    if not module.name.startswith(_PREFIX):  # the engine's empty backing module
        return
    path = _object_path(module.name)  # a read-only cache only costs a compilation next time
    if write_private(path, data):
        write_private(path.with_suffix(".o.sha256"), sha256(data).hexdigest().encode())


def _fetch(module: Any) -> bytes | None:
    """Machine code of ``module`` from an earlier process when it is trusted and its digest matches, else None
    (compile). A damaged or untrusted object is moved aside and compiled again."""
    if not module.name.startswith(_PREFIX):
        return None
    prefetched = _state.pop("prefetched", None)
    data = prefetched[1] if prefetched is not None and prefetched[0] == module.name else _trusted_object(module.name)
    if data is not None:
        _state["fetched"] = _state.get("fetched", 0) + 1
    return data


def _trusted_object(name: str) -> bytes | None:
    """The cached machine code of the module ``name`` if it is trusted and its digest matches, else None."""
    try:
        path = _object_path(name)
        digest_path = path.with_suffix(".o.sha256")
        data, digest = read_trusted(path, MAX_OBJECT_BYTES), read_trusted(digest_path, MAX_DIGEST_BYTES)
        if data is None or digest is None:  # not compiled yet (or a write killed between the two files)
            return None
        if sha256(data).hexdigest() != digest.decode("ascii", "replace").strip():
            quarantine(path, "its SHA-256 digest does not match")
            return None
        return data
    except Exception as exc:  # called by LLVM: an error here would only lose the cache
        _log.warning("robodyn: the cached machine code of %s is not used (%s)", name, exc)
        return None


def native_batch(text: str, symbol: str) -> NativeBatch:
    """The row-wise version of ``symbol`` from the LLVM IR ``text`` (from ``llvm_ir``), compiled once per
    process and kept in the cache like :func:`native_function`."""
    module_text, name = batch_ir(text, symbol)
    return _compiled(module_text, name, lambda address: NativeBatch(_BATCH_SIGNATURE(address), name))


class NativeEntry:
    """``fn(t, x, u, p, out)`` of a C entry ``void(double, double *x, double *u, double *p, double *out)`` (the
    straight-line functions of robodyn.codegen.llvm.pyir), called from Python; ``address`` is for the kernels."""

    __slots__ = ("_function", "address", "symbol")

    def __init__(self, address: int, symbol: str):
        self._function = _ENTRY_SIGNATURE(address)
        self.address, self.symbol = address, symbol

    def __call__(self, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
        if not (out.dtype == np.float64 and out.flags.c_contiguous and out.flags.writeable):
            raise ValueError("out must be a writable C-contiguous float64 array")
        packed = np.concatenate((x, u, p)).astype(np.float64, copy=False)
        base = ctypes.addressof(ctypes.c_char.from_buffer(packed)) if packed.size else _EMPTY_ADDRESS  # type: ignore[arg-type]
        at_u = base + 8 * x.size
        self._function(float(t), base, at_u, at_u + 8 * u.size,
                       ctypes.addressof(ctypes.c_char.from_buffer(out)))  # type: ignore[arg-type]


def native_entry(text: str, symbol: str) -> tuple[NativeEntry, bool]:
    """The C entry ``symbol`` of the LLVM IR ``text`` (a module named ``symbol``), compiled once per process, and
    whether its machine code came from the cache."""
    known = symbol in _state.get("functions", {})
    before = _state.get("fetched", 0)
    entry = _compiled(text, symbol, lambda address: NativeEntry(address, symbol))
    return entry, known or _state.get("fetched", 0) > before


def native_address(text: str, symbol: str) -> tuple[int, bool]:
    """The address of :func:`native_entry`'s function, and whether it came from the cache."""
    entry, cached = native_entry(text, symbol)
    return int(entry.address), cached


def tape_address(text: str, symbol: str) -> int:
    """The machine address of the tape function ``symbol`` of the LLVM IR ``text`` (from ``llvm_ir``), compiled (or
    loaded from the cache) once per process, as :func:`native_function`'s."""
    native_function(text, symbol)
    address: int = _state["addresses"][symbol]
    return address


def native_function(text: str, symbol: str) -> NativeFunction:
    """The function ``symbol`` defined by the LLVM IR ``text`` (from ``llvm_ir``), compiled once per process."""
    return _compiled(text, symbol, lambda address: NativeFunction(_SIGNATURE(address), symbol))


def native_kernel(text: str, symbol: str, signature: Any) -> tuple[Any, bool]:
    """The function ``symbol`` of the LLVM IR ``text`` as a ctypes function of ``signature`` (a ``CFUNCTYPE``),
    and whether it came from the cache (IR written with ``alloca`` s and loops, such as
    robodyn.integrate.kernels.fused_ir's, which the O3 pipeline turns into registers). Compiled once per process and
    kept
    in the cache folder like the others."""
    with _lock:
        known = symbol in _state.get("functions", {})
        before = _state.get("fetched", 0)
        function = _compiled(text, symbol, signature)
        return function, known or _state.get("fetched", 0) > before


def _optimize(module: Any) -> None:
    """LLVM's O3 module pipeline on ``module``, for the native target."""
    import llvmlite.binding as llvm

    builder = llvm.create_pass_builder(_machine(3), llvm.create_pipeline_tuning_options(speed_level=3))
    builder.getModulePassManager().run(module, builder)


def _compiled(text: str, symbol: str, wrap: Callable[[int], Any]) -> Any:
    """``wrap(address)`` of the function ``symbol`` of module ``text`` (named ``symbol``), compiled or loaded
    from the cache once per process (LLVM's O3 pipeline runs on the IR only when it is compiled)."""
    with _lock:
        functions = _state.setdefault("functions", {})
        function = functions.get(symbol)
        if function is not None:
            return function
        large = text.count("\n") > LARGE_LINES  # a huge straight-line function: its machine code at -O1
        name = f"{symbol}_l{LARGE_LEVEL}" if large else symbol  # the cached object says its level
        address = module_library_address(name, symbol)
        if address is not None:  # its shared library: no LLVM in the process
            _state["fetched"] = _state.get("fetched", 0) + 1
        else:
            import llvmlite.binding as llvm

            engine = _engine()
            module = llvm.parse_assembly(text)
            module.name = name
            found = _trusted_object(module.name)
            if found is None:  # compiled now, not loaded: optimize the IR first
                _optimize(module)
                if large:
                    found = _machine(LARGE_LEVEL).emit_object(module)
                    _store(module, found)
            if found is not None:
                _state["prefetched"] = (module.name, found)  # handed to MCJIT's fetch below: read and checked once
            engine.add_module(module)
            engine.finalize_object()
            _state.setdefault("modules", []).append(module)  # the engine owns it; keep the Python object alive
            address = engine.get_function_address(symbol)
        _state.setdefault("addresses", {})[symbol] = address
        function = functions[symbol] = wrap(address)
        return function


def batch_ir(text: str, symbol: str) -> tuple[str, str]:
    """LLVM IR of ``void @<symbol>_many(i64 count, double t, ptr x, i64 sx, ptr u, i64 su, ptr p, i64 sp,
    ptr a, i64 sa, ptr out, i64 so)``: the function ``symbol`` of ``text`` (from :func:`llvm_ir`) applied to
    ``count`` rows, row i of each argument at ``base + i * stride`` doubles (stride 0: the same vector for
    every row). The row function becomes internal to the module, so a process can hold this module and
    the single-row one side by side."""
    row = f"{symbol}_row"
    body = text.replace(f"define void @{symbol}(", f"define internal void @{row}(")
    pointers = ("x", "u", "p", "a", "out")
    lines = [f"define void @{symbol}_many(i64 %count, double %t, "
             + ", ".join(f"ptr %{name}, i64 %s{name}" for name in pointers) + ") nounwind {",
             "entry:", "  %empty = icmp sle i64 %count, 0", "  br i1 %empty, label %done, label %loop", "loop:",
             "  %i = phi i64 [0, %entry], [%next, %loop]"]
    for name in pointers:
        lines += [f"  %o{name} = mul i64 %i, %s{name}",
                  f"  %r{name} = getelementptr inbounds double, ptr %{name}, i64 %o{name}"]
    lines += [f"  call void @{row}(double %t, " + ", ".join(f"ptr %r{name}" for name in pointers) + ")",
              "  %next = add i64 %i, 1", "  %more = icmp slt i64 %next, %count",
              "  br i1 %more, label %loop, label %done", "done:", "  ret void", "}", ""]
    return body + "\n" + "\n".join(lines), f"{symbol}_many"
