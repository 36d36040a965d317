"""robodyn.integrate.kernels.entry: the kernels' arguments packed for their C entries, and the entries' unpacking code.

References: the argument list itself (every leaf appears once in the generated unpacking, in order), the
arrays' own addresses and shapes, and numpy's rules for which arrays can be read in place.
"""

from __future__ import annotations

import ast
import gc

import numpy as np
import pytest

from robodyn.integrate.kernels.entry import (
    CORE_ARGUMENTS,
    VARIANTS,
    AddressBook,
    Blocks,
    entry_name,
    entry_source,
    pack,
)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_entry_unpacks_every_argument_once_and_calls_the_core_with_all_of_them(variant: str) -> None:
    tree = ast.parse(entry_source(variant))
    [function] = tree.body
    assert isinstance(function, ast.FunctionDef) and function.name == entry_name(variant)
    [call] = [node for node in ast.walk(function) if isinstance(node, ast.Call)
              and getattr(node.func, "id", "") == "_adaptive_core"]
    assert len(call.args) == len(CORE_ARGUMENTS)
    nones = [name for (name, _), arg in zip(CORE_ARGUMENTS, call.args) if isinstance(arg, ast.Constant)]
    assert sorted(nones) == sorted({"dop853", "implicit"} - set(VARIANTS[variant]))
    carrays = [node for node in ast.walk(function) if isinstance(node, ast.Attribute) and node.attr == "carray"]
    absent = {"dop853", "implicit"} - set(VARIANTS[variant])
    kinds = [kind for name, kind in CORE_ARGUMENTS if name not in absent]
    leaves = [k for kind in kinds for k in ([part for _, part in kind] if isinstance(kind, tuple) else [kind])]
    assert len(carrays) == sum(len(kind) == 2 for kind in leaves)  # "f1", "i2", ...: arrays; "i", "f": scalars


def _arguments(**changes: object) -> tuple[object, ...]:
    """Arguments of ``_adaptive_core`` for the ``rk`` variant: small arrays of the right kinds."""
    f = np.zeros
    values = {"first": 0, "stop": 1, "work": (f(3), f((2, 2)), f((0, 2), complex), f((0, 2), np.int64)),
              "fns": f(3, np.int64), "method": (f((2, 2)), f(2), f(2), f(2), f((1, 2)), 4), "dop853": None,
              "implicit": None, "t0": 0.0, "t1": 1.0, "x0s": f((1, 2)), "ps": f((1, 1)),
              "inp": (f((0, 2), np.int64), f((0, 6)), f(0), f((1, 2)), f(2), f(2, np.int64)), "stops": f(0),
              "t_eval": f(0), "rtol": 1e-6, "atol": f(2), "h0": 0.0, "h_max": np.inf, "max_steps": 10,
              "ev_direction": f(0, np.int64), "ev_terminal": f(0, np.int64), "out_ts": f((1, 4)),
              "out_xs": f((1, 4, 2)), "out_us": f((1, 4, 1)), "ev_ts": f((1, 0)), "ev_xs": f((1, 0, 2)),
              "ev_idxs": f((1, 0), np.int64), "counts": f((1, 7), np.int64), "statuses": f(1, np.int64),
              "t_fails": f(1), "i_fails": f(1, np.int64)}
    values.update(changes)
    return tuple(values[name] for name, _ in CORE_ARGUMENTS)


def test_arrays_are_packed_as_address_and_dimensions_and_scalars_in_order() -> None:
    arguments = _arguments()
    ints, floats, keep = pack("rk", arguments, AddressBook())
    assert floats == [0.0, 1.0, 1e-6, 0.0, np.inf] and keep == []
    x0s = arguments[[name for name, _ in CORE_ARGUMENTS].index("x0s")]
    at = ints.index(x0s.__array_interface__["data"][0])
    assert ints[at + 1:at + 4] == [1, 2, 0]
    assert ints[:2] == [0, 1] and 10 in ints and 4 in ints  # first, stop; max_steps; the error order


def test_arrays_read_by_the_kernel_are_made_contiguous_and_written_ones_must_be() -> None:
    fortran = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    _, _, keep = pack("rk", _arguments(ps=fortran), AddressBook())
    assert len(keep) == 1 and keep[0].flags.c_contiguous and np.array_equal(keep[0], fortran)
    with pytest.raises(ValueError, match="out_xs: the kernel writes it"):
        pack("rk", _arguments(out_xs=np.zeros((1, 2, 4)).transpose(0, 2, 1)), AddressBook())
    frozen = np.zeros((1, 4))
    frozen.setflags(write=False)
    with pytest.raises(ValueError, match="out_ts: a writable array"):
        pack("rk", _arguments(out_ts=frozen), AddressBook())
    with pytest.raises(ValueError, match="2 dimensions"):
        pack("rk", _arguments(x0s=np.zeros(2)), AddressBook())


def test_places_in_blocks_leave_their_base_to_be_added() -> None:
    floats = Blocks("f")
    first, second = floats.take((1, 2)), floats.take((1, 3), complex_=True)
    assert (first.offset, second.offset, second.size, floats.used) == (0, 2, 6, 8)
    slots: list[tuple[int, str]] = []
    ints, _, _ = pack("rk", _arguments(x0s=first), AddressBook(), slots)
    [(slot, block)] = slots
    assert block == "f" and ints[slot:slot + 4] == [-1, 1, 2, 0]  # 0 bytes into the block: -(0 + 1)
    ints, _, _ = pack("rk", _arguments(x0s=second), AddressBook(), slots)
    assert ints[slots[-1][0]] == -(8 * 2 + 1)


def test_the_address_book_forgets_arrays_that_are_gone() -> None:
    book = AddressBook()
    array = np.zeros(4)
    address = book.get(array)
    assert address == array.__array_interface__["data"][0] and book.get(array) == address
    book.put(array, 12345)
    assert book.get(array) == 12345  # a known address is not looked up again
    del array
    gc.collect()
    assert not book._known
