"""The lean ``f``'s whole call as one Python builtin: check the arguments, copy them into a row, run, sum the row.

:mod:`robodyn.codegen.llvm.rowcall` runs a tape function on a row and sums the row in one ctypes call; the
point still has to be copied into the row from Python (``np.concatenate``, ~0.8 us) and a ctypes call converts each
argument through its type's ``from_param`` (~0.6 us for four): together three times a small robot's forward
dynamics. :class:`RowBuiltin` is the same work and the checks before it in machine code called as a CPython builtin
(``METH_FASTCALL``: the arguments arrive as an array of object pointers, ~0.05 us a call):

    builtin(t, x, u) -> the row's result view | None | False

``t`` must be a ``float``, ``x`` and ``u`` one-dimensional ``numpy.ndarray`` s (exactly, not subclasses) of the
float64 dtype, of lengths n and m, with a stride of one entry where they have two or more (``u`` may be None:
zeros). They are copied into the next row (``[x' | u | x | 0]``: the offsets of :mod:`rowcall`), a rotation in x
(a quaternion) must be of unit norm to ``tolerance`` (``|x_r . x_r - 1|``), the function runs and the row plus
``0 * t`` must sum to a finite number. Then the row is used (the next call takes the next) and its result object (a
view the caller made, given with :meth:`RowBuiltin.point`) is returned. Anything else returns None (nothing is
used: the caller's general path answers), and False when every row of the block is used (:meth:`RowBuiltin.point`
a new block or :meth:`RowBuiltin.rewind` this one, then call again).

The builtin reads the argument objects' fields: CPython's ``PyObject`` head (its type at byte 8), a float's value
(byte 16) and NumPy's ``PyArrayObject_fields`` (data 16, nd 24, dimensions 32, strides 40, descr 56), the layout
compiled NumPy extensions rely on through its macros. :func:`available` checks each of these offsets on probe objects
once per process; where one differs (another interpreter, a free-threaded build) it is False and the caller keeps its
ctypes path. The builtin runs holding the GIL and calls no Python; the frame it works from (an int64 array, its
``self``) is its caller's, one per thread.
"""

from __future__ import annotations

import ctypes
import functools
import sys
import sysconfig
from typing import Any, Final

import numpy as np

from robodyn.base.digest import sha256

__all__ = ["RowBuiltin", "available"]

# The frame's slots (int64 entries; TOLERANCE holds a float64's bits), then one result object's address per row.
_FN, _X, _U, _OUT, _COUNT, _P, _A, _N, _M, _UNIT, _UNITS, _ROW, _ROWS, _BASE, _STRIDE = range(15)
_FLOAT, _ARRAY, _FLOAT64, _NONE, _FALSE, _INCREF, _ZEROS, _TOLERANCE = range(15, 23)
_RESULTS: Final = 23
_QUAD: Final = 4  # the row's length is a multiple of this (one vector of the sum)
_SLOTS: Final = {"fn": _FN, "xo": _X, "uo": _U, "oo": _OUT, "count": _COUNT, "p": _P, "a": _A, "n": _N, "m": _M,
                 "us": _UNIT, "uc": _UNITS, "row": _ROW, "rows": _ROWS, "base": _BASE, "stride": _STRIDE,
                 "floattype": _FLOAT, "arraytype": _ARRAY, "float64": _FLOAT64, "none": _NONE, "false": _FALSE,
                 "incref": _INCREF, "zeros": _ZEROS}


class _MethodDef(ctypes.Structure):
    """CPython's ``PyMethodDef``."""

    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p), ("ml_flags", ctypes.c_int),
                ("ml_doc", ctypes.c_char_p)]


_METH_FASTCALL: Final = 0x0080


class RowBuiltin:
    """A tape function (machine address ``target``, bound parameters at ``at_p``, ``at_a``) as a builtin on rows of
    the layout ``offsets`` (x, u, out, the row's length, in entries) for x of ``n`` entries and u of ``m``, with the
    entries ``unit`` (start, count) of x a rotation of unit norm to ``tolerance``; blocks of ``rows`` rows.
    ``function`` is the builtin (see the module docstring); ``keep`` is whatever keeps the target alive."""

    __slots__ = ("_keep", "_results", "_zeros", "frame", "function")

    def __init__(self, target: int, offsets: tuple[int, int, int, int], at: tuple[int, int], sizes: tuple[int, int],
                 unit: tuple[int, int], rows: int, tolerance: float, keep: Any):
        if offsets[3] <= 0 or offsets[3] % _QUAD:
            raise ValueError(f"row builtin: the row's length {offsets[3]} is not a positive multiple of {_QUAD}")
        self._zeros = np.zeros(max(sizes[1], 1))
        self._keep, self._results = keep, [None] * rows
        frame = np.zeros(_RESULTS + rows, dtype=np.int64)
        frame[:_ROW] = [target, *offsets, *at, *sizes, offsets[0] + unit[0], unit[1]]
        frame[_ROWS], frame[_ROW] = rows, rows  # no block yet: the first call asks for one
        frame[_FLOAT:_ZEROS + 1] = [id(float), id(np.ndarray), id(np.dtype(np.float64)), id(None), id(False),
                                    _address(ctypes.pythonapi.Py_IncRef), _data(self._zeros)]
        frame.view(np.float64)[_TOLERANCE] = tolerance
        self.frame = frame
        self.function = _builtin(frame)

    @staticmethod
    def of(call: Any, offsets: tuple[int, int, int, int], sizes: tuple[int, int], unit: tuple[int, int], rows: int,
           tolerance: float) -> RowBuiltin:
        """``call`` (a :class:`robodyn.codegen.llvm.native.RawCall` of one tape function) as a builtin (see the
        class)."""
        return RowBuiltin(_address(call.function), offsets, (call.at_p, call.at_a), sizes, unit, rows, tolerance, call)

    def point(self, address: int, stride: int, results: list[Any]) -> None:
        """Work on a new block: its first row at ``address``, one every ``stride`` bytes, the objects returned for
        its rows ``results`` (kept here: the frame holds their addresses)."""
        if len(results) != len(self._results):
            raise ValueError(f"row builtin: {len(results)} results for {len(self._results)} rows")
        self._results = list(results)
        self.frame[_BASE], self.frame[_STRIDE] = address, stride
        self.frame[_RESULTS:] = [id(result) for result in self._results]
        self.frame[_ROW] = 0

    def rewind(self) -> None:
        """Write the block's rows again from the first."""
        self.frame[_ROW] = 0


def _address(function: Any) -> int:
    value = ctypes.cast(function, ctypes.c_void_p).value
    if value is None:
        raise ValueError("row builtin: a function without a machine address")
    return value


def _data(array: np.ndarray) -> int:
    return ctypes.addressof(ctypes.c_char.from_buffer(array))  # type: ignore[arg-type]


@functools.cache
def available() -> bool:
    """Whether this interpreter's float and NumPy's arrays have the fields where the builtin reads them."""
    if (sys.implementation.name != "cpython" or ctypes.sizeof(ctypes.c_void_p) != 8
            or sysconfig.get_config_var("Py_GIL_DISABLED")):
        return False
    word, number = ctypes.c_void_p.from_address, ctypes.c_int64.from_address
    value = 1.25 + len(sys.argv)  # a float object made here
    if word(id(value) + 8).value != id(float) or ctypes.c_double.from_address(id(value) + 16).value != value:
        return False
    base = np.arange(12.0)
    for array, shape, step in ((base, 12, 8), (base[::3], 4, 24), (base.reshape(3, 4), 3, 32)):
        if (word(id(array) + 8).value != id(np.ndarray) or word(id(array) + 16).value != array.ctypes.data
                or ctypes.c_int.from_address(id(array) + 24).value != array.ndim
                or number(word(id(array) + 32).value or 0).value != shape
                or number(word(id(array) + 40).value or 0).value != step
                or word(id(array) + 56).value != id(array.dtype) or array.dtype is not np.dtype(np.float64)):
            return False
    return True


def _builtin(frame: np.ndarray) -> Any:
    """The compiled function as a builtin whose ``self`` is ``frame``."""
    definition = _definition()
    make = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.py_object, ctypes.py_object)(
        ("PyCFunction_NewEx", ctypes.pythonapi))
    return make(ctypes.addressof(definition), frame, None)


@functools.cache
def _definition() -> _MethodDef:
    """The builtin's ``PyMethodDef`` (kept for the process: builtins point at it)."""
    from robodyn.codegen.llvm.native import native_kernel

    symbol = f"robodyn_tape_row_builtin_{sha256(_body().encode()).hexdigest()[:16]}"
    text = f"define ptr @{symbol}(ptr %self, ptr %args, i64 %nargs) nounwind {{\n" + _body()
    signature = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ssize_t)
    function, _ = native_kernel(text, symbol, signature)
    return _MethodDef(b"row_builtin", _address(function), _METH_FASTCALL, None)


def _vector(tag: str, argument: int, length: str, done: str) -> str:
    """IR: argument ``argument`` checked a float64 vector of ``length`` entries, stride 8 (any when it has fewer than
    two: NumPy gives an empty array's the stride 0); ``%{tag}.data``."""
    return f"""{tag}.0:
  %{tag}.ap = getelementptr inbounds ptr, ptr %args, i64 {argument}
  %{tag}.o = load ptr, ptr %{tag}.ap, align 8
  %{tag}.tp = getelementptr inbounds i8, ptr %{tag}.o, i64 8
  %{tag}.type = load ptr, ptr %{tag}.tp, align 8
  %{tag}.isarray = icmp eq ptr %{tag}.type, %arraytype
  br i1 %{tag}.isarray, label %{tag}.1, label %general
{tag}.1:
  %{tag}.dp = getelementptr inbounds i8, ptr %{tag}.o, i64 56
  %{tag}.descr = load ptr, ptr %{tag}.dp, align 8
  %{tag}.isfloat = icmp eq ptr %{tag}.descr, %float64
  %{tag}.ndp = getelementptr inbounds i8, ptr %{tag}.o, i64 24
  %{tag}.nd = load i32, ptr %{tag}.ndp, align 4
  %{tag}.isone = icmp eq i32 %{tag}.nd, 1
  %{tag}.ok1 = and i1 %{tag}.isfloat, %{tag}.isone
  br i1 %{tag}.ok1, label %{tag}.2, label %general
{tag}.2:
  %{tag}.shp = getelementptr inbounds i8, ptr %{tag}.o, i64 32
  %{tag}.shape = load ptr, ptr %{tag}.shp, align 8
  %{tag}.len = load i64, ptr %{tag}.shape, align 8
  %{tag}.islen = icmp eq i64 %{tag}.len, %{length}
  %{tag}.stp = getelementptr inbounds i8, ptr %{tag}.o, i64 40
  %{tag}.strides = load ptr, ptr %{tag}.stp, align 8
  %{tag}.step = load i64, ptr %{tag}.strides, align 8
  %{tag}.iseight = icmp eq i64 %{tag}.step, 8
  %{tag}.isshort = icmp ule i64 %{tag}.len, 1
  %{tag}.isstep = or i1 %{tag}.iseight, %{tag}.isshort
  %{tag}.ok2 = and i1 %{tag}.islen, %{tag}.isstep
  br i1 %{tag}.ok2, label %{tag}.3, label %general
{tag}.3:
  %{tag}.dap = getelementptr inbounds i8, ptr %{tag}.o, i64 16
  %{tag}.data = load ptr, ptr %{tag}.dap, align 8
  br label %{done}
"""


def _copy(tag: str, source: str, offset: str, length: str, done: str) -> str:
    """IR: ``length`` doubles from ``source`` (any alignment) to the row at entry ``offset``."""
    return f"""{tag}.copy:
  %{tag}.dst = getelementptr inbounds double, ptr %rowp, i64 %{offset}
  %{tag}.any = icmp sgt i64 %{length}, 0
  br i1 %{tag}.any, label %{tag}.loop, label %{done}
{tag}.loop:
  %{tag}.i = phi i64 [0, %{tag}.copy], [%{tag}.j, %{tag}.loop]
  %{tag}.s = getelementptr inbounds double, ptr {source}, i64 %{tag}.i
  %{tag}.v = load double, ptr %{tag}.s, align 1
  %{tag}.d = getelementptr inbounds double, ptr %{tag}.dst, i64 %{tag}.i
  store double %{tag}.v, ptr %{tag}.d, align 8
  %{tag}.j = add i64 %{tag}.i, 1
  %{tag}.more = icmp ult i64 %{tag}.j, %{length}
  br i1 %{tag}.more, label %{tag}.loop, label %{done}
"""


@functools.cache
def _body() -> str:
    """The builtin's IR after its ``define`` line (see the module docstring)."""
    loads = "".join(f"  %{name}.g = getelementptr inbounds i64, ptr %frame, i64 {slot}\n"
                    f"  %{name} = load {'ptr' if name in _POINTERS else 'i64'}, ptr %{name}.g, align 8\n"
                    for name, slot in _SLOTS.items())
    return (f"""entry:
  %fp = getelementptr inbounds i8, ptr %self, i64 16
  %frame = load ptr, ptr %fp, align 8
{loads}  %tol.g = getelementptr inbounds i64, ptr %frame, i64 {_TOLERANCE}
  %tol = load double, ptr %tol.g, align 8
  %three = icmp eq i64 %nargs, 3
  br i1 %three, label %time, label %general
general:
  call void %incref(ptr %none)
  ret ptr %none
full:
  call void %incref(ptr %false)
  ret ptr %false
time:
  %t.o = load ptr, ptr %args, align 8
  %t.tp = getelementptr inbounds i8, ptr %t.o, i64 8
  %t.type = load ptr, ptr %t.tp, align 8
  %t.isfloat = icmp eq ptr %t.type, %floattype
  br i1 %t.isfloat, label %room, label %general
room:
  %t.vp = getelementptr inbounds i8, ptr %t.o, i64 16
  %t = load double, ptr %t.vp, align 8
  %free = icmp ult i64 %row, %rows
  br i1 %free, label %x.0, label %full
""" + _vector("x", 1, "n", "u.start") + """u.start:
  %u.argp = getelementptr inbounds ptr, ptr %args, i64 2
  %u.arg = load ptr, ptr %u.argp, align 8
  %u.isnone = icmp eq ptr %u.arg, %none
  br i1 %u.isnone, label %u.zero, label %u.0
u.zero:
  br label %place
""" + _vector("u", 2, "m", "place") + """place:
  %u.from = phi ptr [%zeros, %u.zero], [%u.data, %u.3]
  %skip = mul i64 %row, %stride
  %rowp = getelementptr inbounds i8, ptr %base, i64 %skip
  br label %u.copy
""" + _copy("u", "%u.from", "uo", "m", "x.copy") + _copy("x", "%x.data", "xo", "n", "unit") + """unit:
  %rotation = getelementptr inbounds double, ptr %rowp, i64 %us
  %has.unit = icmp sgt i64 %uc, 0
  br i1 %has.unit, label %unit.loop, label %run
unit.loop:
  %r.i = phi i64 [0, %unit], [%r.j, %unit.loop]
  %r.acc = phi double [0.0, %unit], [%r.next, %unit.loop]
  %r.e = getelementptr inbounds double, ptr %rotation, i64 %r.i
  %r.v = load double, ptr %r.e, align 8
  %r.sq = fmul double %r.v, %r.v
  %r.next = fadd double %r.acc, %r.sq
  %r.j = add i64 %r.i, 1
  %r.more = icmp ult i64 %r.j, %uc
  br i1 %r.more, label %unit.loop, label %unit.done
unit.done:
  %r.off = fsub double %r.next, 1.0
  %r.abs = call double @llvm.fabs.f64(double %r.off)
  %r.near = fcmp ole double %r.abs, %tol
  br i1 %r.near, label %run, label %general
run:
  %xp = getelementptr inbounds double, ptr %rowp, i64 %xo
  %up = getelementptr inbounds double, ptr %rowp, i64 %uo
  %outp = getelementptr inbounds double, ptr %rowp, i64 %oo
  call void %fn(double %t, ptr %xp, ptr %up, ptr %p, ptr %a, ptr %outp)
  %quads = lshr i64 %count, 2
  br label %sum
sum:
  %i = phi i64 [0, %run], [%next, %sum]
  %s = phi <4 x double> [zeroinitializer, %run], [%s2, %sum]
  %e = getelementptr inbounds <4 x double>, ptr %rowp, i64 %i
  %v = load <4 x double>, ptr %e, align 8
  %s2 = fadd <4 x double> %s, %v
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, %quads
  br i1 %more, label %sum, label %summed
summed:
  %l0 = extractelement <4 x double> %s2, i64 0
  %l1 = extractelement <4 x double> %s2, i64 1
  %l2 = extractelement <4 x double> %s2, i64 2
  %l3 = extractelement <4 x double> %s2, i64 3
  %h0 = fadd double %l0, %l1
  %h1 = fadd double %l2, %l3
  %h = fadd double %h0, %h1
  %tz = fmul double %t, 0.0
  %total = fadd double %h, %tz
  %gap = fsub double %total, %total
  %finite = fcmp oeq double %gap, 0.0
  br i1 %finite, label %used, label %general
used:
  %row1 = add i64 %row, 1
  store i64 %row1, ptr %row.g, align 8
  %slot = add i64 %row, """ + str(_RESULTS) + """
  %rg = getelementptr inbounds i64, ptr %frame, i64 %slot
  %result = load ptr, ptr %rg, align 8
  call void %incref(ptr %result)
  ret ptr %result
}

declare double @llvm.fabs.f64(double)
""")


_POINTERS: Final = frozenset({"fn", "p", "a", "base", "floattype", "arraytype", "float64", "none", "false", "incref",
                              "zeros"})
