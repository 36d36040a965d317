"""The adaptive kernels run from their exported machine code: a first result without numba in the process.

:func:`native_kernels` gives an object that stands for the shared kernel module
(:func:`robodyn.integrate.kernels.module.kernel_module`) in :mod:`robodyn.integrate.kernels.run`. Its ``adaptive_run``
(the
template's arguments and results) and ``_adaptive_core`` (a batch's chunks) call the C entry of the kernel
variant (:mod:`robodyn.integrate.kernels.entry`), loaded from its object file (:mod:`robodyn.codegen.objects`), through
``ctypes``, which releases the GIL during the call, so batches run in threads as before. The first time on a
machine, numba compiles the entry (the kernel module with it, without numba's cache) and its object is kept;
when an object cannot be used, the numba kernel module runs instead. Everything else (the fixed-step
kernels) is the numba kernel module's.

``ROBODYN_NATIVE=0`` in the environment turns this off: every kernel is then numba's (benchmarks compare both).
"""

from __future__ import annotations

import array
import ctypes
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final

import numpy as np

from robodyn.integrate.kernels.entry import AddressBook, Blocks, Place, entry_name, pack

__all__ = ["NativeKernels", "native_kernels"]

_ENTRY_TYPE: Final = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
_lock = threading.Lock()
_instance: list[NativeKernels] = []


class NativeKernels:
    """The kernel module's interface with the adaptive kernels' machine code loaded without numba."""

    __name__ = "robodyn_native_kernels"

    def __init__(self) -> None:
        from robodyn.integrate.kernels.module import driver_module

        self._book = AddressBook()
        self._driver: ModuleType = driver_module()  # the templates' Python helpers: work_shapes, work_arrays
        self._sizes = [64, 4]  # the most output rows (without t_eval) and events so far: the next run's room
        self._layouts: dict[tuple[Any, ...], _Layout] = {}
        self._entries: dict[str, Any] = {}
        self._compiled: list[Any] = []
        self.loaded = self.compiled = 0  # entries loaded from their objects, and compiled, in this process
        self.entry_keys: dict[str, str] = {}  # variant -> the key of its entry's object (robodyn.codegen.objects)
        self.last_run: tuple[str, tuple[Any, ...], tuple[int, ...]] | None = None  # variant, tables, sizes
        self.work_arrays = self._driver.work_arrays
        self.N_COUNTS = self._driver.N_COUNTS

    def __getattr__(self, name: str) -> Any:
        """Everything else is the numba kernel module's (imported on first use)."""
        from robodyn.integrate.kernels.module import kernel_module

        return getattr(kernel_module(), name)

    def cache_counts(self, numba_counts: Callable[[ModuleType], tuple[int, int]]) -> tuple[int, int]:
        """Entries loaded and compiled so far, with numba's cache hits and misses of the kernel module when it runs
        here too (the fixed-step kernels; ``numba_counts`` counts them, robodyn.integrate.kernels.run)."""
        from robodyn.integrate.kernels.module import loaded_kernel_module

        module = loaded_kernel_module()
        hits, misses = numba_counts(module) if module is not None else (0, 0)
        return self.loaded + hits, self.compiled + misses

    def _entry(self, variant: str) -> Any:
        """The ctypes function of ``variant``'s entry, or None when its object is unusable (numba's kernel runs)."""
        with _lock:
            if variant not in self._entries:
                self._entries[variant] = self._make(variant)
            return self._entries[variant]

    def _make(self, variant: str) -> Any:
        from robodyn.codegen import objects
        from robodyn.integrate.kernels.module import entry_module_text

        text = entry_module_text(variant)
        name = entry_name(variant)
        key = objects.object_key(text, name)
        address = objects.load(key)
        if address is not None:
            self.loaded += 1
            self.entry_keys[variant] = key
            return _ENTRY_TYPE(address)
        if objects.unusable(key):
            return None
        from robodyn.base.progress import announce
        from robodyn.codegen.loader import load_generated

        announce(f"compiling the integrator kernels ({variant}) for this machine: once, numba takes about 10-40 s; "
                 "later runs load them in milliseconds")
        function = getattr(load_generated(text, "robodyn_entry"), name)  # compiled by numba here
        self.compiled += 1
        data, symbol = objects.export(function)
        if not objects.save(key, data, symbol):
            return None
        self.entry_keys[variant] = key  # a later process loads it from there
        self._compiled.append(function)  # numba's code runs in this process: keep it alive
        return _ENTRY_TYPE(function.address)

    def adaptive_run(self, fns: np.ndarray, method: tuple[Any, ...], dop853: np.ndarray | None,
                     implicit: tuple[np.ndarray, ...] | None, t0: float, t1: float, x0: np.ndarray, p: np.ndarray,
                     inp: tuple[Any, ...], m: int, stops: np.ndarray, t_eval: np.ndarray, rtol: float,
                     atol: np.ndarray, h0: float, h_max: float, max_steps: int, ev_direction: np.ndarray,
                     ev_terminal: np.ndarray) -> tuple[Any, ...]:
        """The template's ``adaptive_run`` (same arguments and results) through the C entry.

        Every array of the run — x0, p, t_eval and atol copied in, the work arrays, the outputs — is carved
        from one data block; the entry's int block is a remembered layout plus the block's address, so a call
        costs about what numba's dispatcher does rather than a look-up per array.
        """
        variant = _variant(dop853, implicit)
        entry = self._entry(variant)
        if entry is None:
            from robodyn.integrate.kernels.module import kernel_module

            return kernel_module().adaptive_run(fns, method, dop853, implicit, t0, t1, x0, p, inp, m, stops, t_eval,
                                                rtol, atol, h0, h_max, max_steps, ev_direction, ev_terminal)
        n = x0.size
        rows = t_eval.size if t_eval.size > 0 else self._sizes[0]
        events = self._sizes[1] if ev_direction.size > 0 else 0
        inputs = np.concatenate((x0, p, t_eval, atol)).astype(np.float64, copy=False)
        scalars = array.array("d", (t0, t1, rtol, h0, h_max))  # the entry's float block, in CORE_ARGUMENTS order
        while True:
            layout = self._layout(variant, (fns, method, dop853, implicit, inp, stops, ev_direction, ev_terminal),
                                  (n, m, p.size, t_eval.size, rows, events, max_steps))
            data = np.empty(layout.size + 1)  # the floats, then the ints (a view of the tail)
            base = ctypes.addressof(ctypes.c_char.from_buffer(data))  # type: ignore[arg-type]
            if base % 16:  # the complex work arrays come first: 16-byte aligned
                data, base = data[1:], base + 8
            data[layout.inputs:layout.inputs + inputs.size] = inputs
            entry(layout.address, scalars.buffer_info()[0], base)
            ints = data[layout.floats:].view(np.int64)
            k, q = int(ints[layout.counts]), int(ints[layout.counts + 1])
            if k <= rows and q <= events:
                break
            rows, events = max(rows, k), max(events, q)
        self.last_run = (variant, layout.shared, (n, m, p.size, max_steps))  # what a run image is made of
        if t_eval.size == 0:
            self._sizes[0] = max(self._sizes[0], k)
        if ev_direction.size > 0:
            self._sizes[1] = max(self._sizes[1], q)
        out_t, out_x, out_u = (data[place.offset:place.offset + place.size].reshape(place.shape[1:])
                               for place in layout.outputs[:3])
        if k < rows:
            out_t, out_x, out_u = out_t[:k], out_x[:k], out_u[:k]
        if q > 0:
            ev_t, ev_x, ev_idx = ((ints if place.block == "i" else data)[place.offset:place.offset + place.size]
                                  .reshape(place.shape[1:])[:q] for place in layout.outputs[3:])
        else:
            ev_t, ev_x, ev_idx = layout.no_events
        at = layout.counts
        return (ints[at + 7], data[layout.t_fail], ints[at + 8], ints[at + 2:at + 7].copy(), out_t, out_x, out_u,
                ev_t, ev_x, ev_idx)

    def relocatable_layout(self, variant: str, shared: tuple[Any, ...], sizes: tuple[int, ...]) -> _Layout:
        """The layout of a run whose tables (``shared``) are copied into its data block too: its int block holds
        no address, only places in the block (robodyn.integrate.kernels.run_image). ``sizes`` as :class:`_Layout`'s."""
        return _Layout(self._driver, variant, shared, sizes, AddressBook(), relocatable=True)

    def _layout(self, variant: str, shared: tuple[Any, ...], sizes: tuple[int, ...]) -> _Layout:
        """The remembered layout of a run with these tables and signals (the same objects) and sizes."""
        key = (variant, *map(id, shared), *sizes)
        layout = self._layouts.get(key)
        if layout is not None and all(a is b for a, b in zip(layout.shared, shared)):
            return layout
        layout = _Layout(self._driver, variant, shared, sizes, self._book)
        if len(self._layouts) >= 32:
            self._layouts.clear()
        self._layouts[key] = layout
        return layout

    def _adaptive_core(self, first: int, stop: int, *arguments: Any) -> None:
        """``_adaptive_core`` of the kernel template, run by the entry of the arguments' variant."""
        variant = _variant(arguments[3], arguments[4])
        entry = self._entry(variant)
        if entry is None:
            from robodyn.integrate.kernels.module import kernel_module

            kernel_module()._adaptive_core(first, stop, *arguments)
            return
        ints, floats, keep = pack(variant, (first, stop, *arguments), self._book)
        int_block, float_block = array.array("q", ints), array.array("d", floats)
        entry(int_block.buffer_info()[0], float_block.buffer_info()[0], 0)
        del keep


class _Layout:
    """Where the arrays of one adaptive run go in its data block (the float64 places, then the int64 ones), and the
    entry's int block, whose places are relative to the data block the entry gets with each call. Holds the
    shared tables and signals it was made for (they are read, never written, by the kernels).

    ``relocatable``: the shared tables get places in the block too (after the work arrays, before everything whose
    size depends on the output rows), listed in :attr:`constants` as (place, the array); ``fns`` is one of them."""

    def __init__(self, driver: ModuleType, variant: str, shared: tuple[Any, ...], sizes: tuple[int, ...],
                 book: AddressBook, relocatable: bool = False):
        fns, method, dop853, implicit, inp, stops, ev_direction, ev_terminal = shared
        n, m, n_p, n_eval, rows, events, max_steps = sizes
        work = driver.work_shapes(n, m, method, dop853, implicit, ev_direction.size)
        floats, ints = Blocks("f"), Blocks("i")
        wc = floats.take(work[2][0], complex_=True)  # complex first: 16-byte aligned
        placed = (floats.take(work[0][0]), floats.take(work[1][0]), wc, ints.take(work[3][0]))
        self.constants: list[tuple[Place, np.ndarray]] = []
        if relocatable:
            fns, method, dop853, implicit, inp, stops, ev_direction, ev_terminal = _placed(
                shared, {"f": floats, "i": ints}, self.constants)
        x0s, ps, t_eval, atol = floats.take((1, n)), floats.take((1, n_p)), floats.take((n_eval,)), floats.take((n,))
        self.outputs = (floats.take((1, rows)), floats.take((1, rows, n)), floats.take((1, rows, m)),
                        floats.take((1, events)), floats.take((1, events, n)), ints.take((1, events)))
        counts, status, i_fail, t_fail = ints.take((1, 7)), ints.take((1,)), ints.take((1,)), floats.take((1,))
        assert (status.offset, i_fail.offset) == (counts.offset + 7, counts.offset + 8)
        arguments = (0, 1, placed, fns, method, dop853, implicit, 0.0, 0.0, x0s, ps, inp, stops, t_eval, 0.0, atol,
                     0.0, 0.0, max_steps, ev_direction, ev_terminal, *self.outputs, counts, status, t_fail, i_fail)
        slots: list[tuple[int, str]] = []
        int_list, _, self.keep = pack(variant, arguments, book, slots)
        for slot, block in slots:
            if block == "i":  # the ints follow the floats in the one data block
                int_list[slot] -= 8 * floats.used
        self.ints_block = np.array(int_list, dtype=np.int64)  # read by the entry, never written
        self.address = int(self.ints_block.__array_interface__["data"][0])
        self.floats, self.size, self.inputs = floats.used, floats.used + ints.used, x0s.offset
        self.counts, self.t_fail, self.shared = counts.offset, t_fail.offset, shared
        self.no_events = (np.empty(0), np.empty((0, n)), np.empty(0, np.int64))


def _placed(value: Any, blocks: dict[str, Blocks], constants: list[tuple[Place, np.ndarray]]) -> Any:
    """``value`` (an array, a tuple of them, a scalar, None) with each float64 or int64 array replaced by a place
    taken from ``blocks`` (appended with the array to ``constants``); ValueError for another array type."""
    if type(value) is tuple:
        return tuple(_placed(item, blocks, constants) for item in value)
    if not isinstance(value, np.ndarray):
        return value
    kind = {np.dtype(np.float64): "f", np.dtype(np.int64): "i"}.get(value.dtype)
    if kind is None:
        raise ValueError(f"a table of {value.dtype} has no place in a run image")
    place = blocks[kind].take(value.shape)
    constants.append((place, value))
    return place


def _variant(dop853: Any, implicit: Any) -> str:
    return "implicit" if implicit is not None else "dop853" if dop853 is not None else "rk"


def native_kernels() -> NativeKernels | ModuleType:
    """The kernels the compiled path runs: :class:`NativeKernels`, or numba's module with ``ROBODYN_NATIVE=0``."""
    from robodyn.codegen.objects import enabled

    if not enabled():
        from robodyn.integrate.kernels.module import kernel_module

        return kernel_module()
    with _lock:
        if not _instance:
            _instance.append(NativeKernels())
        return _instance[0]
