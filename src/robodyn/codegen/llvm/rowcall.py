"""One compiled function for the lean paths: run a tape function on a row of memory, then sum the row.

``model.f`` and ``linearize`` on float64 vectors (robodyn.model.lean, robodyn.linearization.lean) copy the
point into a row of an arena and have the model's machine code write its result into the same row; then every
entry of the row must be finite. From Python that is a ctypes call with six arguments and a BLAS dot (~0.9 us
together, as much as a small robot's forward dynamics). :func:`row_call` does both in one call of four arguments:

    double row_call(fn, t, row, frame)

calls ``fn(t, row + x, row + u, p, a, row + out)`` (a tape function's signature, robodyn.codegen.llvm.tape) with
``frame`` an int64 block ``[x, u, out, count, p, a]`` (offsets in entries of the row, the row's length, then the
addresses of the bound parameters and accelerations), and returns the sum of the row's ``count`` entries (a
positive multiple of :data:`QUAD`): finite exactly when they all are, barring overflow. The sum is taken in four
lanes of a vector (its order does not matter: it is a check). The function is model-independent: compiled once
per machine and kept in the cache like the models' functions (robodyn.codegen.llvm.native).
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any, Final

import numpy as np

from robodyn.base.digest import sha256

__all__ = ["QUAD", "RowCall", "row_call"]

QUAD: Final = 4  # a row's length is a multiple of this many entries (one vector of the sum)
_SIGNATURE: Final = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p, ctypes.c_double, ctypes.c_void_p,
                                     ctypes.c_void_p)

_BODY: Final = """entry:
  %f0 = load i64, ptr %frame, align 8
  %g1 = getelementptr inbounds i64, ptr %frame, i64 1
  %f1 = load i64, ptr %g1, align 8
  %g2 = getelementptr inbounds i64, ptr %frame, i64 2
  %f2 = load i64, ptr %g2, align 8
  %g3 = getelementptr inbounds i64, ptr %frame, i64 3
  %f3 = load i64, ptr %g3, align 8
  %g4 = getelementptr inbounds i64, ptr %frame, i64 4
  %f4 = load i64, ptr %g4, align 8
  %g5 = getelementptr inbounds i64, ptr %frame, i64 5
  %f5 = load i64, ptr %g5, align 8
  %x = getelementptr inbounds double, ptr %row, i64 %f0
  %u = getelementptr inbounds double, ptr %row, i64 %f1
  %out = getelementptr inbounds double, ptr %row, i64 %f2
  %p = inttoptr i64 %f4 to ptr
  %a = inttoptr i64 %f5 to ptr
  call void %fn(double %t, ptr %x, ptr %u, ptr %p, ptr %a, ptr %out)
  %quads = lshr i64 %f3, 2
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %s = phi <4 x double> [zeroinitializer, %entry], [%s2, %loop]
  %e = getelementptr inbounds <4 x double>, ptr %row, i64 %i
  %v = load <4 x double>, ptr %e, align 8
  %s2 = fadd <4 x double> %s, %v
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, %quads
  br i1 %more, label %loop, label %done
done:
  %l0 = extractelement <4 x double> %s2, i64 0
  %l1 = extractelement <4 x double> %s2, i64 1
  %l2 = extractelement <4 x double> %s2, i64 2
  %l3 = extractelement <4 x double> %s2, i64 3
  %h0 = fadd double %l0, %l1
  %h1 = fadd double %l2, %l3
  %total = fadd double %h0, %h1
  ret double %total
}
"""


class RowCall:
    """A tape function bound for :func:`row_call` at one row layout: ``call(t, row_address)`` runs it on the row and
    returns the row's sum. Holds the frame (and whatever keeps the function's parameters alive)."""

    __slots__ = ("_frame", "_keep", "frame", "function", "target")

    def __init__(self, target: int, offsets: tuple[int, int, int, int], at_p: int, at_a: int, keep: Any):
        if offsets[3] <= 0 or offsets[3] % QUAD:
            raise ValueError(f"row_call: the row's length {offsets[3]} is not a positive multiple of {QUAD}")
        self._frame = np.array([*offsets, at_p, at_a], dtype=np.int64)
        self.frame = ctypes.addressof(ctypes.c_char.from_buffer(self._frame))  # type: ignore[arg-type]
        self.target, self._keep, self.function = target, keep, row_call()

    @staticmethod
    def of(call: Any, offsets: tuple[int, int, int, int]) -> RowCall:
        """``call`` (a :class:`robodyn.codegen.llvm.native.RawCall` of one tape function: ``call.function`` its ctypes
        function) at the row layout ``offsets`` (x, u, out, the row's length, in entries)."""
        target = ctypes.cast(call.function, ctypes.c_void_p).value
        if target is None:
            raise ValueError("row_call: the call has no machine address")
        return RowCall(target, offsets, call.at_p, call.at_a, call)

    def __call__(self, t: float, row: int) -> float:
        total: float = self.function(self.target, t, row, self.frame)
        return total


@functools.cache
def row_call() -> Any:
    """The compiled ``row_call`` (ctypes: ``(fn, t, row, frame) -> float``), once per process."""
    from robodyn.codegen.llvm.native import native_kernel

    symbol = f"robodyn_tape_row_call_{sha256(_BODY.encode()).hexdigest()[:16]}"
    text = (f"define double @{symbol}(ptr %fn, double %t, ptr %row, ptr %frame) nounwind {{\n" + _BODY)
    function, _ = native_kernel(text, symbol, _SIGNATURE)
    return function
