"""``model.f``'s lean path: what a loop of ``model.f(t, x, u)`` pays per call for a model with compiled dynamics.

A robot's forward dynamics is one compiled function (robodyn.codegen.llvm.native) that runs in a microsecond or a few;
validating its arguments as :meth:`robodyn.model.system.Model.arguments` does (mappings by name, copies, the
parameters' vector) costs several times that. A float time and float64 vectors of the right shapes at the default
parameters need no more than their types and shapes checked and one finite check, and :func:`lean_f` does that
much:

- the model's compiled f is bound once with its default parameters (:meth:`Model._rhs_call`), per model and per
  thread (a ``threading.local`` in the model's instance dictionary: threads never share buffers);
- each call copies (u, x) into the next row of an *arena* (:class:`Arena`), a block of rows ``[x' | u | x | 0]``
  (each on a cache line) whose addresses and views were made with it: the machine code reads the point there and
  writes x' at the row's start, and the result is that part of the row (no allocation, slicing or address look-up
  of its own); a block whose results nobody holds any more is used again (no allocation, no page faults);
- the checks, the copy, the code and the row's sum are one call of a builtin written in machine code
  (robodyn.codegen.llvm.rowbuiltin: ~0.05 us where numpy's copy and a ctypes call cost ~1.5), which reads t, x and
  u's types, dtypes, shapes and strides from their CPython and NumPy fields and checks the point and the result
  finite together; a model whose state holds a rotation of unit norm (a floating base's quaternion) has it checked
  unit to :data:`UNIT_TOLERANCE`, within which the general path leaves it as given. Where this interpreter's
  objects are laid out otherwise (``rowbuiltin.available()``), the point is copied in from Python and the code run
  and the row summed by one ctypes call (robodyn.codegen.llvm.rowcall).

Anything else — another type or shape, parameters, a non-finite time, point or result, a rotation the general path
would normalize or refuse — returns None, and the general path answers (and words the error). The numbers are
the general path's bit for bit: the same machine code on the same values.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from robodyn.codegen.llvm.native import RawCall
    from robodyn.model.system import Model

__all__ = ["ARENA_BYTES", "BLAS_SIZE", "LEAN_KEY", "UNIT_TOLERANCE", "Arena", "RhsCall", "lean_f"]

#: Results of a lean path share blocks of at most this many bytes (a few results' worth): one allocation and no
#: per-result views of a fresh buffer.
ARENA_BYTES: Final = 64 * 1024
#: Up to this many entries a finite check is one BLAS dot (~0.4 us against ~0.9 for sum); above it numpy's own
#: sum: a large dot wakes numpy's BLAS threads, which then contend with LAPACK's in the solves of large robots.
BLAS_SIZE: Final = 2048
#: |x_r . x_r - 1| of a rotation x_r (a quaternion) within which the general path leaves it as given (it
#: normalizes when | |x_r| - 1 | > 1e-12, and |x_r . x_r - 1| ~ 2 | |x_r| - 1 |).
UNIT_TOLERANCE: Final = 1e-12
_FLOAT: Final = np.dtype(np.float64)
_LINE: Final = 8  # float64 entries per 64-byte cache line
#: The instance dictionary's key of a model's threading.local of bindings (``f``, valid for the parameters'
#: mapping ``defaults``): Model.f reads it itself.
LEAN_KEY: Final = "_lean_f"


class RhsCall(NamedTuple):
    """A model's compiled f bound at its default parameters (what :meth:`Model._rhs_call` offers)."""

    call: RawCall  # function(t, at_x, at_u, at_p, at_a, at_out): x' (n,) at at_out from x at at_x, u at at_u
    padding: int  # zeros the function reads after x (a floating base's chart coordinates d at 0)
    unit: slice | None  # the entries of x that hold a rotation of unit norm, or None


class Arena:
    """``count`` rows of ``width`` float64 entries (whole cache lines) in one block, each row on a cache line, for a
    lean path's results: ``rows`` (writable: the binding's), ``frozen`` (read-only views of the same rows that
    cannot be made writable: the block is read-only once the writable view is made) and ``address``. ``hand(views)``
    names the views the binding gives out; :meth:`idle` says whether nothing but the binding refers to the block or
    to them any more (their reference counts are those taken then), so that its rows can be written again: a loop
    that drops its results allocates nothing. Reference counts are CPython's (sys.getrefcount), compared with their
    own values taken the same way."""

    __slots__ = ("address", "block", "counts", "frozen", "handed", "rows")

    def __init__(self, count: int, width: int):
        import ctypes  # here: the package's start-up does not need it

        self.block = block = np.empty(count * width + _LINE)
        skip = (-ctypes.addressof(ctypes.c_char.from_buffer(block)) % (8 * _LINE)) // 8  # type: ignore[arg-type]
        self.address: int = ctypes.addressof(ctypes.c_char.from_buffer(block)) + 8 * skip  # type: ignore[arg-type]
        self.rows = block[skip: skip + count * width].reshape(count, width)
        block.setflags(write=False)
        self.frozen = block[skip: skip + count * width].reshape(count, width)
        self.handed: list[Any] = []
        self.counts: tuple[int, ...] = ()

    def hand(self, views: list[Any]) -> None:
        """The views given out (each result's): their reference counts, and the block's, from now on are idle's."""
        self.handed = views
        self.counts = _counts(self.block, views)

    def idle(self) -> bool:
        """Whether nothing but the binding refers to the block or to the views it gives out."""
        return _counts(self.block, self.handed) == self.counts


def _counts(block: np.ndarray, views: list[Any]) -> tuple[int, ...]:
    return (sys.getrefcount(block), *map(sys.getrefcount, views))


def _binding(model: Model, rhs: RhsCall) -> Callable[[float, Any, Any], np.ndarray | None]:
    """``f(t, x, u)`` through ``rhs`` for one thread: x' in the next row of its arena (see the module docstring), or
    None for the general path; the row builtin's where this interpreter has it, else the ctypes row call's."""
    from robodyn.codegen.llvm.rowbuiltin import available

    n, m = model.n_states, model.n_inputs
    # a row: [x' | u | x | 0], whole cache lines (a multiple of the row call's QUAD)
    width = -(-(2 * n + m + rhs.padding) // _LINE) * _LINE
    rows = max(1, ARENA_BYTES // (8 * width))
    return (_builtin_binding if available() else _ctypes_binding)(rhs, n, m, width, rows)


def _builtin_binding(rhs: RhsCall, n: int, m: int, width: int, rows: int) -> Callable[[float, Any, Any], Any]:
    """The binding as one call of a row builtin (robodyn.codegen.llvm.rowbuiltin): the checks of the types, shapes,
    rotation and finite numbers, the copy into the row, the code and the row's sum in machine code."""
    from robodyn.codegen.llvm.rowbuiltin import RowBuiltin

    unit = (0, 0) if rhs.unit is None else (rhs.unit.start, rhs.unit.stop - rhs.unit.start)
    builtin = RowBuiltin.of(rhs.call, (n + m, n, 0, width), (n, m), unit, rows, UNIT_TOLERANCE)

    def arena() -> Arena:
        """A new block of ``rows`` rows, the builtin pointed at it."""
        block = Arena(rows, width)
        block.rows[:, 2 * n + m:] = 0.0  # the chart's d, the padding
        results = list(block.rows[:, :n])  # writable, as the general path's
        builtin.point(block.address, 8 * width, results)
        block.hand(results)  # every reference made before: the block's baseline
        return block

    current = arena()
    kernel = builtin.function

    def f(t: float, x: Any, u: Any) -> np.ndarray | None:
        nonlocal current
        result = kernel(t, x, u)
        if result is False:  # every row of the block is used
            if current.idle():
                builtin.rewind()
            else:
                current = arena()
            result = kernel(t, x, u)
        return result

    return f


def _ctypes_binding(rhs: RhsCall, n: int, m: int, width: int, rows: int) -> Callable[[float, Any, Any], Any]:
    """The binding through the ctypes row call (robodyn.codegen.llvm.rowcall), the point copied in from Python. A
    closure: its state is in cells, which it reads faster than attributes."""
    from robodyn.codegen.llvm.rowcall import RowCall

    x_shape, u_shape, zeros, stride = (n,), (m,), np.zeros(m), 8 * width
    call = RowCall.of(rhs.call, (n + m, n, 0, width))  # runs the code on a row and sums the row
    function, target, frame, unit = call.function, call.target, call.frame, rhs.unit

    def arena() -> tuple[Arena, int, list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
        """A new block of ``rows`` rows: the arena, its address and, per row, its point (u, x), its result x' and its
        rotation."""
        block = Arena(rows, width)
        block.rows[:, 2 * n + m:] = 0.0  # the chart's d, the padding
        rotations = [] if unit is None else list(block.rows[:, n + m + unit.start: n + m + unit.stop])
        points, results = list(block.rows[:, n: 2 * n + m]), list(block.rows[:, :n])  # results: writable, as the
        block.hand(results)  # general path's; every view made before: their references are the block's baseline
        return block, block.address, points, results, rotations

    current, address, points, results, rotations = arena()
    row = 0

    def f(t: float, x: Any, u: Any, _call: Any = call) -> np.ndarray | None:
        nonlocal current, address, points, results, rotations, row
        if not (type(x) is np.ndarray and x.dtype is _FLOAT and x.shape == x_shape and _isfinite(t)):
            return None
        if u is None:
            u = zeros
        elif not (type(u) is np.ndarray and u.dtype is _FLOAT and u.shape == u_shape):
            return None
        if row == rows:
            if not current.idle():
                current, address, points, results, rotations = arena()
            row = 0
        k = row
        row += 1
        np.concatenate((u, x), out=points[k])
        if unit is not None:
            rotation = rotations[k]
            if abs(_dot(rotation, rotation) - 1.0) > UNIT_TOLERANCE:
                return None  # the general path normalizes it (with a warning) or refuses it
        result: np.ndarray = results[k]
        if not _isfinite(function(target, t, address + stride * k, frame)):
            return None  # a non-finite point or result: the general path finds the cause and says it
        return result

    return f


def _none(t: float, x: Any, u: Any) -> None:
    """The binding of a model without compiled dynamics: always the general path."""
    return None


_dot: Any = np.ndarray.dot  # looked up once: the lean path counts its attribute look-ups
_isfinite = math.isfinite


def lean_f(model: Model, t: float, x: Any, u: Any) -> np.ndarray | None:
    """``model.f(t, x, u)`` at its default parameters for a float ``t`` and float64 vectors ``x`` (n,) and ``u``
    (m,) or None, through the model's compiled f (see the module docstring); None for the general path."""
    try:
        local = model.__dict__[LEAN_KEY]
        if local.defaults is model.parameters:  # AttributeError: none yet in this thread
            result: np.ndarray | None = local.f(t, x, u)
            return result
    except (KeyError, AttributeError):  # no binding yet, or a model without an instance dictionary
        pass
    attributes = getattr(model, "__dict__", None)
    if attributes is None:
        return None
    local = attributes.get(LEAN_KEY)
    if local is None:
        local = attributes.setdefault(LEAN_KEY, threading.local())
    rhs = model._rhs_call(model.default_parameters()[1])
    local.f = _none if rhs is None else _binding(model, rhs)
    local.defaults = model.parameters  # parameter copies share the dictionary: a copy binds its own
    first: np.ndarray | None = local.f(t, x, u)
    return first
