"""C entry points of the adaptive kernel: its arguments packed into two flat blocks, and the code unpacking them.

A numba ``cfunc`` takes scalars and pointers only, while ``_adaptive_core`` (integrate/kernels/kernel_template.py)
takes ~40 arrays, some in tuples. :data:`CORE_ARGUMENTS` lists them once, in order; from it
:func:`entry_source` writes the entry ``int64 name(int64 *ints, double *floats, int64 base)`` that rebuilds the arrays
with ``numba.carray`` and calls the core, and :func:`pack` fills the two blocks from the core's own Python
arguments. Each array takes four ints: its address and up to three dimensions. One entry is compiled per
kernel variant (``rk``, ``dop853``, ``implicit``): ``dop853`` and ``implicit`` are literal ``None`` in the
variants without them, so numba prunes their code as it does for the jitted kernels.

Why: such an entry has the plain C signature that llvmlite can call through ``ctypes`` in a process
without numba (:mod:`robodyn.codegen.objects`, docs/dev/simulation.md "Start-up").
"""

from __future__ import annotations

import functools
import math
import weakref
from typing import Any

import numpy as np

from robodyn.integrate.kernels.entry_arguments import CORE_ARGUMENTS, OPTIONAL, VARIANTS, WRITTEN, entry_name, leaves

__all__ = ["CORE_ARGUMENTS", "VARIANTS", "AddressBook", "Blocks", "Place", "entry_name", "entry_source", "pack"]

def entry_source(variant: str) -> str:
    """Source of ``adaptive_<variant>_c(ints, floats, base)``: numba code for a module that defines ``entry_cfunc``
    (the cfunc decorator), the pointer intrinsics (robodyn.codegen.indirect), ``_address`` and ``_adaptive_core``.
    An array's address field is its address, or ``-(b + 1)`` for the array ``b`` bytes into the block at
    ``base`` (a :class:`Place`): remembered layouts then hold no address of a call's own block."""
    lines, values = [], {}
    i = f = 0
    for path, kind in leaves(variant):
        local = path.replace(".", "_")
        if kind == "i":
            values[path] = f"ints[{i}]"
            i += 1
        elif kind == "f":
            values[path] = f"floats[{f}]"
            f += 1
        else:
            pointer = {"f": "double_pointer", "i": "int_pointer", "c": "complex_pointer"}[kind[0]]
            shape = ", ".join(f"ints[{i + 1 + k}]" for k in range(int(kind[1])))
            lines.append(f"    {local} = numba.carray({pointer}(_address(ints[{i}], base)), ({shape},))")
            values[path] = local
            i += 4
    arguments = []
    for name, kind in CORE_ARGUMENTS:
        if name in OPTIONAL and name not in VARIANTS[variant]:
            arguments.append("None")
        elif isinstance(kind, tuple):
            arguments.append("(" + ", ".join(values[f"{name}.{part}"] for part, _ in kind) + ")")
        else:
            arguments.append(values[name])
    call = ",\n        ".join(arguments)
    return "\n".join([
        "@entry_cfunc",
        f"def {entry_name(variant)}(ints, floats, base):",
        f'    """C entry of ``_adaptive_core`` for the {variant!r} methods (robodyn.integrate.kernels.entry)."""',
        *lines,
        f"    _adaptive_core(\n        {call})",
        "    return 0",
        "",
    ])


class AddressBook:
    """Data addresses of arrays, remembered while the arrays live (``ndarray.__array_interface__`` costs ~1.5 us,
    a look-up here ~0.2 us): the kernels' tables and signals are passed again and again. Entries go with their
    arrays (weak references), so nothing is kept alive and an id reused by a new array is never mistaken for
    the old one."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[weakref.ref[np.ndarray], int]] = {}

    def put(self, array: np.ndarray, address: int) -> None:
        key = id(array)
        known = self._known

        def forget(_: object) -> None:
            known.pop(key, None)

        known[key] = (weakref.ref(array, forget), address)

    def get(self, array: np.ndarray) -> int:
        entry = self._known.get(id(array))
        if entry is not None and entry[0]() is array:
            return entry[1]
        address = int(array.__array_interface__["data"][0])
        self.put(array, address)
        return address


class Place:
    """Where an array goes in one of the blocks of a run (:class:`Blocks`): the block's kind ("f" float64, "i"
    int64), the offset and size in its elements, the array's shape (complex128 arrays take two elements per
    entry of a float64 block). :func:`pack` takes a place like an array: its address is the block's base plus
    ``8 * offset``, given to the entry with each call (see ``entry_source``)."""

    __slots__ = ("block", "offset", "shape", "size")

    def __init__(self, block: str, offset: int, shape: tuple[int, ...], size: int):
        self.block, self.offset, self.shape, self.size = block, offset, shape, size


class Blocks:
    """Places taken one after the other from one block of kind ``block`` ("f" or "i")."""

    def __init__(self, block: str) -> None:
        self.block = block
        self.used = 0

    def take(self, shape: tuple[int, ...], complex_: bool = False) -> Place:
        size = math.prod(shape) * (2 if complex_ else 1)
        place = Place(self.block, self.used, shape, size)
        self.used += size
        return place


@functools.cache
def _plan(variant: str) -> tuple[tuple[int, tuple[tuple[int, str, Any, int, bool], ...] | None, str, Any, int, bool],
                                 ...]:
    """Per argument of ``variant``: (index, the parts of a tuple or None, kind, dtype, ndim, written); a part is
    (part index, kind, dtype, ndim, written). Optional arguments the variant does not have are left out."""
    def leaf(kind: str, written: bool) -> tuple[str, Any, int, bool]:
        if len(kind) == 1:
            return kind, None, 0, written
        return "a", {"f": np.float64, "i": np.int64, "c": np.complex128}[kind[0]], int(kind[1]), written

    plan: list[Any] = []
    for k, (name, kind) in enumerate(CORE_ARGUMENTS):
        if name in OPTIONAL and name not in VARIANTS[variant]:
            continue
        if isinstance(kind, tuple):
            parts = tuple((j, *leaf(part_kind, name in WRITTEN)) for j, (_, part_kind) in enumerate(kind))
            plan.append((k, parts, "t", None, 0, name in WRITTEN))
        else:
            plan.append((k, None, *leaf(kind, name in WRITTEN)))
    return tuple(plan)


def _array(value: Any, name: str, dtype: Any, ndim: int, written: bool, book: AddressBook, ints: list[int],
           keep: list[Any], slots: list[tuple[int, str]]) -> None:
    """Append the address and dimensions of the array ``value`` to ``ints``; for a :class:`Place` at ``b`` bytes
    into its block, ``-(b + 1)`` (see entry_source), and (its position in ``ints``, its block) to ``slots``."""
    if type(value) is Place:
        if len(value.shape) != ndim:
            raise ValueError(f"{name}: a place of {ndim} dimensions was expected, got {value.shape}")
        slots.append((len(ints), value.block))
        ints += (-(8 * value.offset + 1), *value.shape, *(0,) * (3 - ndim))
        return
    if not (type(value) is np.ndarray and value.dtype == dtype and value.flags.c_contiguous):
        if written:
            raise ValueError(f"{name}: the kernel writes it, so it must be a C-contiguous {np.dtype(dtype).name} "
                             "array")
        value = np.ascontiguousarray(value, dtype=dtype)
        keep.append(value)
    shape = value.shape
    if len(shape) != ndim or (written and not value.flags.writeable):
        raise ValueError(f"{name}: a writable array of {ndim} dimensions was expected, got {shape}")
    ints += (book.get(value), *shape, *(0,) * (3 - ndim))


_segments: dict[int, tuple[Any, list[int], list[Any]]] = {}  # id(tuple) -> (tuple, its ints, its converted arrays)


def pack(variant: str, arguments: tuple[Any, ...], book: AddressBook, slots: list[tuple[int, str]] | None = None
         ) -> tuple[list[int], list[float], list[Any]]:
    """The int64 and float64 blocks (as lists) of ``_adaptive_core``'s Python ``arguments`` for the entry of
    ``variant``, and the arrays converted for the call (keep them alive until it returns). Arguments may be
    :class:`Place` s instead of arrays: ``slots`` then receives where their block's base is to be added.

    Arrays that are read are made C-contiguous of their dtype (a copy only when they are not); the arrays
    the kernel writes must be so already (a ValueError otherwise: a copy would lose the results). The
    tuples that are read (the method's tables, the signals) are usually the same objects call after call:
    their part of the block is remembered (and the tuple kept, so that its id stays its own; tuples are
    immutable, their arrays are only read by the kernels).
    """
    ints: list[int] = []
    floats: list[float] = []
    keep: list[Any] = []
    slots = [] if slots is None else slots
    for top, parts, kind, dtype, ndim, written in _plan(variant):
        value = arguments[top]
        name = CORE_ARGUMENTS[top][0]
        if kind == "i":
            ints.append(int(value))
        elif kind == "f":
            floats.append(float(value))
        elif kind == "a":
            _array(value, name, dtype, ndim, written, book, ints, keep, slots)
        else:
            assert parts is not None
            known = None if written else _segments.get(id(value))
            if known is not None and known[0] is value:  # a table's part remembered (it has no places)
                ints += known[1]
                continue
            if written or any(type(item) is Place for item in value):  # the work arrays, or a run image's tables
                for part, part_kind, part_dtype, part_ndim, part_written in parts:  # placed in its block: this
                    if part_kind == "i":  # call's own, never remembered
                        ints.append(int(value[part]))
                        continue
                    _array(value[part], f"{name}[{part}]", part_dtype, part_ndim, part_written, book, ints, keep,
                           slots)
                continue
            segment: list[int] = []
            converted: list[Any] = []
            for part, part_kind, part_dtype, part_ndim, part_written in parts:
                item = value[part]
                if part_kind == "i":
                    segment.append(int(item))
                else:
                    _array(item, f"{name}[{part}]", part_dtype, part_ndim, part_written, book, segment, converted,
                           [])
            ints += segment
            keep += converted
            if len(_segments) >= 64:
                _segments.clear()
            _segments[id(value)] = (value, segment, converted)
    return ints, floats, keep
