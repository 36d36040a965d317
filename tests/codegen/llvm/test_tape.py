"""The straight-line tape compiled two ways — linked into numba code (the kernels) and by LLVM directly
(robodyn.codegen.llvm.native, for calls from Python) — against the tape evaluated in Python with ``math``.

Every operation of the tape is exercised at several points. The compiled code is IEEE double arithmetic
without fast-math flags and calls the same C math library as Python's ``math``, so the results are
compared exactly for arithmetic and to 2 ulp for the library functions (LLVM may pick a different but
correctly rounded variant of e.g. pow); outside a function's domain both give NaN.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import robodyn.codegen.llvm.native as native
from robodyn.codegen.llvm.tape import llvm_ir, tape_data, tape_module_text
from robodyn.codegen.loader import load_generated
from robodyn.rigid.tape import Tape, Value

UNARY = ("neg", "sin", "cos", "tan", "atan", "sinh", "cosh", "tanh", "exp", "sqrt", "abs", "sign", "step")
BINARY = ("add", "sub", "mul", "div", "pow", "atan2", "min", "max")


def _reference(op: str, *args: float) -> float:
    functions = {"neg": lambda a: -a, "abs": abs, "sign": lambda a: 0.0 if a == 0 else math.copysign(1.0, a),
                 "step": lambda a: 1.0 if a >= 0 else 0.0, "add": lambda a, b: a + b, "sub": lambda a, b: a - b,
                 "mul": lambda a, b: a * b, "div": lambda a, b: a / b, "min": min, "max": max,
                 "asin_of_tanh": lambda a: math.asin(math.tanh(a)), "log_of_exp": lambda a: math.log(math.exp(a))}
    try:
        if op in functions:
            return float(functions[op](*args))
        return float(getattr(math, op)(*args))
    except ValueError:  # outside the domain (sqrt of a negative number, pow of a negative base): IEEE NaN
        return math.nan


def _program() -> tuple[Tape, list[Value], list[tuple[str, tuple[int, ...]]]]:
    """Every operation on leaves of x (3,) and p (2,), so nothing folds."""
    tape = Tape()
    x, p = tape.leaves(1, 3), tape.leaves(3, 2)
    outputs, labels = [], []
    for op in UNARY:
        outputs.append(tape.unary(op, x[0]))
        labels.append((op, (0,)))
    for op in BINARY:
        outputs.append(tape.binary(op, x[1], x[2]))
        labels.append((op, (1, 2)))
    outputs.append(tape.unary("asin", tape.unary("tanh", x[0])))  # asin, acos, log inside their domains
    labels.append(("asin_of_tanh", (0,)))
    outputs.append(tape.unary("acos", tape.unary("tanh", p[0])))
    labels.append(("acos", ("tanh p0",)))
    outputs.append(tape.unary("log", tape.unary("exp", p[1])))
    labels.append(("log_of_exp", ("p1",)))
    outputs.append(x[0] * p[0] + tape.leaf(0, 0))  # the time leaf
    labels.append(("time", ()))
    return tape, outputs, labels


def _expected(labels: list[tuple[str, tuple]], t: float, x: np.ndarray, p: np.ndarray) -> np.ndarray:
    values = []
    for op, args in labels:
        if op == "time":
            values.append(x[0] * p[0] + t)
        elif op == "acos":
            values.append(math.acos(math.tanh(p[0])))
        elif op == "log_of_exp":
            values.append(_reference(op, p[1]))
        else:
            values.append(_reference(op, *(x[i] for i in args)))
    return np.array(values)


POINTS = [(0.5, np.array([0.3, 1.7, -0.4]), np.array([0.2, 1.1])),
          (-2.0, np.array([-1.2, -0.6, 2.5]), np.array([-0.9, -3.0])),
          (0.0, np.array([0.0, 2.0, 2.0]), np.array([0.0, 0.0]))]


def _compare(actual: np.ndarray, expected: np.ndarray, labels: list[tuple[str, tuple]]) -> None:
    for value, reference, (op, _) in zip(actual, expected, labels):
        if math.isnan(reference):
            assert math.isnan(value), (op, value)
            continue
        exact = op in ("neg", "abs", "sign", "step", "add", "sub", "mul", "div", "min", "max", "sqrt", "time")
        tolerance = 0.0 if exact else 2 * math.ulp(reference)
        assert abs(value - reference) <= tolerance, (op, value, reference)


def test_numba_linked_code_equals_python_math() -> None:
    tape, outputs, labels = _program()
    module = load_generated(tape_module_text(tape, {"fn": outputs}, "ops"), "robodyn_test_ops")
    for t, x, p in POINTS:
        out = np.full(len(outputs), np.nan)
        module.fn(t, x, np.zeros(0), p, x, out)
        _compare(out, _expected(labels, t, x, p), labels)


def test_native_code_equals_python_math() -> None:
    tape, outputs, labels = _program()
    function = native.native_function(*llvm_ir(*tape_data(tape, outputs)))
    for t, x, p in POINTS:
        out = np.full(len(outputs), np.nan)
        function(t, x, np.zeros(0), p, x, out)
        _compare(out, _expected(labels, t, x, p), labels)


def test_native_machine_code_is_cached_and_a_damaged_object_is_compiled_again(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(tmp_path))
    tape = Tape()
    x = tape.leaves(1, 2)
    outputs = [x[0] * x[1] + 0.25 * x[0]]  # a tape of its own: a name no earlier test compiled
    text, symbol = llvm_ir(*tape_data(tape, outputs))
    monkeypatch.setattr(native, "_state", {})  # a fresh engine, as in a new process
    native.native_function(text, symbol)
    objects = list(tmp_path.rglob(f"{symbol}.*.o"))  # named for this machine: <symbol>.<host>.o
    assert len(objects) == 1 and objects[0].with_suffix(".o.sha256").exists()
    module = type("Module", (), {"name": symbol})()
    assert native._fetch(module) == objects[0].read_bytes()  # a new process would load it
    objects[0].write_bytes(objects[0].read_bytes()[:100])  # truncated: the digest no longer matches
    assert native._fetch(module) is None
    monkeypatch.setattr(native, "_state", {})
    function = native.native_function(text, symbol)  # compiled again, and right
    out = np.empty(1)
    function(0.0, np.array([2.0, 3.0]), np.zeros(0), np.zeros(0), np.zeros(0), out)
    assert out[0] == 6.5


def test_arrays_that_are_not_contiguous_float64_are_refused_by_the_numba_path() -> None:
    from numba.core.errors import TypingError

    tape = Tape()
    outputs = [tape.leaf(1, 0) * 2.0]
    module = load_generated(tape_module_text(tape, {"fn": outputs}, "layout"), "robodyn_test_layout")
    with pytest.raises(TypingError, match="C-contiguous float64"):
        module.fn(0.0, np.arange(6.0)[::2], np.zeros(0), np.zeros(0), np.zeros(1), np.zeros(1))


@pytest.mark.parametrize("numba_path", [False, True])
def test_a_tape_in_pieces_computes_what_it_computes_whole(monkeypatch: pytest.MonkeyPatch, numba_path: bool) -> None:
    """Above CHUNK_NODES a tape is compiled as functions of that many nodes passing values through a scratch
    array: the results are the same operations, bit for bit (here pieces of 4 nodes, values crossing every piece,
    outputs of every kind: constants, the time, leaves, arithmetic)."""
    import robodyn.codegen.llvm.tape as tape_llvm

    tape, outputs, labels = _program()
    x = tape.leaves(1, 3)
    chained = x[0]
    for k in range(40):  # a long chain: each step reads the one before, so values cross from piece to piece
        chained = chained * x[1] + tape.unary("sin", chained + k)
    everything = [*outputs, chained, tape.const(2.5), x[2], tape.leaf(0, 0)]
    whole = native.native_function(*llvm_ir(*tape_data(tape, everything)))
    monkeypatch.setattr(tape_llvm, "CHUNK_NODES", 4)
    text, symbol = llvm_ir(*tape_data(tape, everything))
    assert text.count("define internal void") > 10
    if numba_path:
        module = load_generated(tape_module_text(tape, {"fn": everything}, "pieces"), "robodyn_test_pieces")
        pieces = module.fn
    else:
        pieces = native.native_function(text, symbol)
    for t, xv, p in POINTS:
        expected, actual = np.full(len(everything), np.nan), np.full(len(everything), np.nan)
        whole(t, xv, np.zeros(0), p, xv, expected)
        pieces(t, xv, np.zeros(0), p, xv, actual)
        np.testing.assert_array_equal(actual, expected)
        _compare(actual[: len(outputs)], _expected(labels, t, xv, p), labels)


_EXTERNAL_RUN = """
import sys
import numpy as np
import robodyn.codegen.llvm.tape as tape_llvm
from robodyn.codegen.loader import load_generated
from robodyn.rigid.tape import Tape

tape_llvm.EXTERNAL_NODES = 10  # this small tape is then compiled natively and called by name
tape = Tape()
x = tape.leaves(1, 3)
chained = x[0]
for k in range(30):
    chained = chained * x[1] + tape.unary("sin", chained + k)
module = load_generated(tape_llvm.tape_module_text(tape, {"fn": [chained, x[2] * 2.0]}, "external"),
                        "robodyn_test_external")
out = np.empty(2)
module.fn(0.0, np.array([0.3, 0.9, -1.5]), np.zeros(0), np.zeros(0), np.zeros(3), out)
print(float(out[0]).hex(), float(out[1]).hex())
"""


def test_a_large_tape_called_by_name_from_numba_code_computes_the_same_in_a_new_process(tmp_path) -> None:
    """Above EXTERNAL_NODES the kernels call the tape compiled natively, by the name registered when the generated
    module is imported: a first process compiles and caches both; a second loads numba's cached code, which finds
    the tape by that name again. Both give the native function's numbers, bit for bit."""
    import os
    import subprocess
    import sys

    tape = Tape()
    x = tape.leaves(1, 3)
    chained = x[0]
    for k in range(30):
        chained = chained * x[1] + tape.unary("sin", chained + k)
    expected = np.empty(2)
    native.native_function(*llvm_ir(*tape_data(tape, [chained, x[2] * 2.0])))(
        0.0, np.array([0.3, 0.9, -1.5]), np.zeros(0), np.zeros(0), np.zeros(3), expected)
    environment = {**os.environ, "ROBODYN_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", _EXTERNAL_RUN], capture_output=True, text=True, env=environment,
                           timeout=300) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
        assert [float.fromhex(v) for v in run.stdout.split()] == expected.tolist()
    assert list(tmp_path.rglob("*.nbi")), "numba cached the kernel that calls the tape by name"
