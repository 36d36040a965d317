"""The tape printed as C99 (robodyn.codegen.c_source) computes what the tape's LLVM code does, bit for bit, on the
operations whose meaning at the edges is the printer's choice — min, max, sign and step at NaN and signed zeros,
constants such as -0.0, inf and NaN — and on the arithmetic and math functions at ordinary values."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from robodyn.codegen.c_source import c_function, c_literal
from robodyn.codegen.llvm.native import native_function
from robodyn.codegen.llvm.tape import llvm_ir, tape_data
from robodyn.rigid.tape import Tape

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")


def test_literals_are_exact() -> None:
    assert c_literal(1.5) == "0x1.8000000000000p+0" and c_literal(-0.0) == "(-0x0.0p+0)"
    assert c_literal(float("inf")) == "INFINITY" and c_literal(float("-inf")) == "(-INFINITY)"
    assert c_literal(float("nan")) == "NAN" and float.fromhex(c_literal(0.1)) == 0.1


def test_the_c_function_equals_the_llvm_function_bit_for_bit(tmp_path: Path) -> None:
    tape = Tape()
    x, y = tape.leaves(1, 2)
    t = tape.leaf(0, 0)
    outputs = [tape.binary("min", x, y), tape.binary("max", x, y), tape.unary("sign", x), tape.unary("step", x),
               x * y - t, x / y, tape.binary("pow", tape.unary("abs", x), y), tape.binary("atan2", x, y),
               tape.unary("sin", x) + tape.unary("cos", y) * tape.unary("exp", x), -x, tape.const(-0.0) + x,
               tape.const(float("inf")) * x, tape.unary("sqrt", tape.unary("abs", y)), tape.unary("tanh", x)]
    nodes, positions = tape_data(tape, outputs)
    source = "\n".join(["#include <math.h>", c_function("tape", nodes, positions),
                        "void run(double t, const double *x, double *out) { tape(t, x, x, x, x, out); }"])
    (tmp_path / "tape.c").write_text(source)
    library = tmp_path / "libtape.so"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-fPIC", "-shared",
                    str(tmp_path / "tape.c"), "-o", str(library), "-lm"], check=True, capture_output=True)
    c_run = ctypes.CDLL(str(library)).run
    c_run.restype = None
    text, symbol = llvm_ir(nodes, positions, optimize=True)
    native = native_function(text, symbol)
    values = [0.0, -0.0, 1.5, -2.25, float("nan"), float("inf"), 3.0]
    pointer = ctypes.POINTER(ctypes.c_double)
    for a in values:
        for b in values:
            point = np.array([a, b])
            mine, theirs = np.empty(len(outputs)), np.empty(len(outputs))
            c_run(ctypes.c_double(0.25), point.ctypes.data_as(pointer), mine.ctypes.data_as(pointer))
            native(0.25, point, point, point, point, theirs)
            assert np.array_equal(mine, theirs, equal_nan=True), (a, b, mine, theirs)
            assert np.array_equal(np.signbit(mine), np.signbit(theirs)) or np.isnan(mine).any(), (a, b)


def test_replay_records_the_same_function_on_another_tape_with_its_leaves_moved() -> None:
    """Tape.replay (how a diagram puts its blocks on one tape): the copy of y = [sin(x0) x1 + max(x1, 2 p0),
    x0 / (1 + x1^2)] with x moved to another tape's u (reversed) and p to a constant gives the original's values at
    the moved point; leaves replaced by constants fold (max(5, 2 * 5) is the constant 10)."""
    from robodyn.rigid.tape import Tape

    source = Tape()
    x, p = source.leaves(1, 2), source.leaves(3, 1)
    y = [x[0].sin() * x[1] + source.binary("max", x[1], 2.0 * p[0]), x[0] / (1.0 + x[1] * x[1])]
    target = Tape()
    u = target.leaves(2, 2)
    moved = target.replay(source, y, lambda a, i: u[1 - i] if a == 1 else target.const(3.0))
    for point in ([0.3, -1.2], [2.0, 7.5]):
        assert target.evaluate(moved, [[0.0], [], point, []]) == source.evaluate(y, [[0.0], point[::-1], [], [3.0]])
    constant = target.replay(source, [source.binary("max", x[1], 2.0 * p[0])], lambda a, i: target.const(5.0))
    assert target.constant_of(constant[0]) == 10.0
