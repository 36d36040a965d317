"""The lean ``f``'s call as one builtin (robodyn.codegen.llvm.rowbuiltin): its results against the same tape function
called through its own ctypes call, and every argument it must refuse (type, dtype, shape, stride, non-finite
numbers, a rotation off unit norm) refused with nothing used; its rows, its blocks, and no reference leaked."""

from __future__ import annotations

import ctypes
import math
import sys
from typing import Any

import numpy as np
import pytest

from robodyn.codegen.llvm.native import native_function
from robodyn.codegen.llvm.rowbuiltin import RowBuiltin, available
from robodyn.codegen.llvm.tape import llvm_ir, tape_data
from robodyn.rigid.tape import Tape

WIDTH, ROWS = 12, 3  # [out (3) | u (2) | x (4) | pad (3)]


def _function() -> Any:
    """out = (x0 * u0 + p0, sin(x1) - t * u1, x2 * x3): x holds a rotation (x2, x3) of unit norm."""
    tape = Tape()
    t, x, u, p = tape.leaf(0, 0), tape.leaves(1, 4), tape.leaves(2, 2), tape.leaves(3, 1)
    return native_function(*llvm_ir(*tape_data(tape, [x[0] * u[0] + p[0], x[1].sin() - t * u[1], x[2] * x[3]])))


class Bound:
    """A builtin on a block of ROWS rows, with the block and its result views."""

    def __init__(self) -> None:
        self.function = _function()
        call = self.function.bind_parameters(np.array([0.25]))
        target = ctypes.cast(call.function, ctypes.c_void_p).value or 0
        self.builtin = RowBuiltin(target, (5, 3, 0, WIDTH), (call.at_p, call.at_a), (4, 2), (2, 2), ROWS, 1e-12, call)
        self.block = np.full((ROWS, WIDTH), 0.0)
        self.results = list(self.block[:, :3])
        self.builtin.point(self.block.ctypes.data, 8 * WIDTH, self.results)

    def expected(self, t: float, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        out = np.zeros(3)
        self.function(t, x, u, np.array([0.25]), np.zeros(0), out)
        return out


def _point(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.uniform(-1, 1, 4)
    x[2:] /= np.linalg.norm(x[2:])
    return x, rng.uniform(-1, 1, 2)


def test_this_interpreter_has_the_fields_where_the_builtin_reads_them() -> None:
    assert available()  # CPython on 64 bits with NumPy: the lean path's builtin is the one tested here


def test_each_call_writes_the_next_row_and_returns_its_result_the_functions_own_numbers() -> None:
    bound, rng = Bound(), np.random.default_rng(0)
    for row in range(ROWS):
        x, u = _point(rng)
        result = bound.builtin.function(0.5 * row, x, u)
        assert result is bound.results[row]
        np.testing.assert_array_equal(result, bound.expected(0.5 * row, x, u))  # the same code: the same bits
        np.testing.assert_array_equal(bound.block[row, 3:9], [*u, *x])  # the point as the row holds it
    assert bound.builtin.function(0.0, *_point(rng)) is False  # every row used
    bound.builtin.rewind()
    x, u = _point(rng)
    assert bound.builtin.function(0.0, x, None) is bound.results[0]  # u None: zeros
    np.testing.assert_array_equal(bound.results[0], bound.expected(0.0, x, np.zeros(2)))


class Sub(np.ndarray):
    """An array subclass: the general path's to convert."""


def _refused(x: np.ndarray, u: np.ndarray) -> list[tuple[str, tuple[Any, ...]]]:
    wide = np.zeros((4, 2))
    wide[:, 0] = x
    nan_x, inf_u, twice = x.copy(), u.copy(), x.copy()
    nan_x[0], inf_u[1] = math.nan, math.inf
    twice[2:] *= 1.0 + 1e-11  # |x_r . x_r - 1| ~ 2e-11, above the tolerance
    return [("int t", (0, x, u)), ("float subclass t", (np.float64(0.0), x, u)), ("inf t", (math.inf, x, u)),
            ("nan t", (math.nan, x, u)), ("list x", (0.0, x.tolist(), u)), ("short x", (0.0, x[:3], u)),
            ("long u", (0.0, x, np.zeros(3))), ("2-d x", (0.0, x[None], u)),
            ("float32 x", (0.0, x.astype(np.float32), u)),
            ("big-endian x", (0.0, x.astype(">f8"), u)), ("subclass x", (0.0, x.view(Sub), u)),
            ("strided x", (0.0, wide[:, 0], u)), ("nan in x", (0.0, nan_x, u)), ("inf in u", (0.0, x, inf_u)),
            ("rotation off", (0.0, twice, u)), ("two arguments", (0.0, x)), ("four arguments", (0.0, x, u, u))]


def test_arguments_it_cannot_take_return_none_and_use_no_row() -> None:
    bound = Bound()
    x, u = _point(np.random.default_rng(1))
    for label, arguments in _refused(x, u):
        assert bound.builtin.function(*arguments) is None, label
    assert bound.builtin.function(0.0, x, u) is bound.results[0], "a refusal used a row"


def test_a_non_finite_result_returns_none() -> None:
    bound = Bound()
    x = np.array([1e308, 0.0, 0.6, 0.8])
    assert bound.builtin.function(0.0, x, np.array([1e308, 0.0])) is None  # x0 * u0 overflows


def test_an_empty_input_vector_is_taken_whatever_its_stride() -> None:
    """NumPy gives an empty array the stride 0 (a robot without actuators has u of no entries)."""
    function = _function()
    call = function.bind_parameters(np.array([0.25]))
    target = ctypes.cast(call.function, ctypes.c_void_p).value or 0
    # the same code with u's two entries read from x's row: a u of no entries, x of 4 (this test only needs shapes)
    builtin = RowBuiltin(target, (4, 4, 0, 8), (call.at_p, call.at_a), (4, 0), (0, 0), 1, 1e-12, call)
    block = np.zeros((1, 8))
    builtin.point(block.ctypes.data, 64, [block[0, :3]])
    assert builtin.function(0.0, np.array([1.0, 0.5, 0.6, 0.8]), np.zeros(0)[::-1]) is not None


def test_no_reference_is_leaked_or_lost() -> None:
    bound, rng = Bound(), np.random.default_rng(2)
    x, u = _point(rng)
    before = [sys.getrefcount(item) for item in (None, False, x, u, *bound.results)]
    for _ in range(50):
        bound.builtin.rewind()
        for _ in range(ROWS):
            bound.builtin.function(0.0, x, u)
        bound.builtin.function(0.0, x, u)  # False
        bound.builtin.function(0.0, x[:3], u)  # None
    assert [sys.getrefcount(item) for item in (None, False, x, u, *bound.results)] == before


def test_a_layout_that_does_not_add_up_is_refused() -> None:
    function = _function()
    call = function.bind_parameters(np.array([0.25]))
    with pytest.raises(ValueError, match="multiple"):
        RowBuiltin(1, (5, 3, 0, 10), (call.at_p, call.at_a), (4, 2), (0, 0), 1, 1e-12, call)
    builtin = RowBuiltin(1, (5, 3, 0, 12), (call.at_p, call.at_a), (4, 2), (0, 0), 2, 1e-12, call)
    with pytest.raises(ValueError, match="2 rows"):
        builtin.point(0, 96, [np.zeros(3)])


def test_read_only_and_unaligned_vectors_are_read_as_they_are() -> None:
    bound = Bound()
    x, u = _point(np.random.default_rng(3))
    raw = bytearray(8 * 4 + 4)
    unaligned = np.frombuffer(raw, dtype=np.float64, count=4, offset=4)  # data 4 bytes off an 8-byte boundary
    raw[4:] = x.tobytes()
    frozen = u.copy()
    frozen.setflags(write=False)
    assert not unaligned.flags.aligned and unaligned.dtype is x.dtype
    result = bound.builtin.function(0.25, unaligned, frozen)
    assert result is bound.results[0]
    np.testing.assert_array_equal(result, bound.expected(0.25, x, u))
