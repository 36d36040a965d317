"""The lean paths' compiled call (robodyn.codegen.llvm.rowcall): a tape function run on a row of memory, then the row's
sum, against calling the same function through its own six-argument ctypes call and numpy's sum."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from robodyn.codegen.llvm.native import native_function
from robodyn.codegen.llvm.rowcall import QUAD, RowCall
from robodyn.codegen.llvm.tape import llvm_ir, tape_data
from robodyn.rigid.tape import Tape


def _function() -> object:
    """A tape of two outputs: out[0] = x0 * u0 + p0, out[1] = sin(x1) - t."""
    tape = Tape()
    t, x, u, p = tape.leaf(0, 0), tape.leaves(1, 2), tape.leaves(2, 1), tape.leaves(3, 1)
    outputs = [x[0] * u[0] + p[0], x[1].sin() - t]
    return native_function(*llvm_ir(*tape_data(tape, outputs)))


def test_a_row_call_runs_the_code_where_its_frame_says_and_returns_the_rows_sum() -> None:
    function = _function()
    call = RowCall.of(function.bind_parameters(np.array([0.25])), (3, 2, 0, 8))  # [out | u | x | pad]
    row = np.zeros(8)
    row[2], row[3:5] = 1.5, [2.0, 0.5]
    total = call(0.75, ctypes.addressof(ctypes.c_char.from_buffer(row)))
    expected = np.zeros(2)
    function(0.75, np.array([2.0, 0.5]), np.array([1.5]), np.array([0.25]), np.zeros(0), expected)
    np.testing.assert_array_equal(row[:2], expected)
    assert total == pytest.approx(row.sum(), rel=1e-15)  # the sum's order is its own


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_entry_anywhere_in_the_row_makes_the_sum_non_finite(bad: float) -> None:
    call = RowCall.of(_function().bind_parameters(np.array([0.25])), (3, 2, 0, 8))
    for where in range(8):
        row = np.ones(8)
        row[where] = bad
        if where < 2:  # the code's outputs are written: make the input non-finite instead
            row[3 + where] = bad
        assert not np.isfinite(call(0.0, ctypes.addressof(ctypes.c_char.from_buffer(row))))


def test_a_row_length_not_a_multiple_of_quad_is_refused() -> None:
    with pytest.raises(ValueError, match="multiple"):
        RowCall.of(_function().bind_parameters(np.array([0.25])), (3, 2, 0, QUAD + 1))
