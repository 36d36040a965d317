"""linearize's lean path: what a loop of ``linearize(model, x, u)`` pays per call.

A model with exact derivatives at its default parameters, called with float64 vectors, needs no validation
beyond their types and shapes and a finite check of the result. :func:`exact_at` does that much and no more:
the model's derivatives are bound once (per model, per thread and per time, in the model's memo) and each
result is written into the next row of an *arena*, one array of a few results' rows (each on a cache line), whose
views of every row were made with it, so that a result costs no allocation, slicing or reshaping of its own.

Two bindings, asked of the model in this order:

- ``linearization_call(t, p)`` (a robot on a moving base: its chart's, robodyn.mechanisms.floating.chart.ChartModel):
raw
  machine code (robodyn.codegen.llvm.native.RawCall) that reads x and u and writes A and B at addresses it is given.
  A row is ``[A | B | x | u]``: the point is copied into the row, the code reads it there and writes the matrices
  into the same row; nothing is copied after the call. C and D are the template's constants (C = I, D = 0 for
  outputs that are the states), shared read-only by every result; A's and B's constant entries (a large robot's
  [0, I] rows) come from the template, written into every row with the arena. On a moving base the row is
  ``[A | B | x_op | u | x | 0]``: x_op = (0, v) in the tangent space, then the stored state the code reads and
  the chart's coordinates d = 0 after it, and its base rotation must be of unit norm (to
  robodyn.model.lean.UNIT_TOLERANCE, within which the general path leaves it as given). One tape's machine code
  runs and the row is summed (the finite check) in one compiled call (robodyn.codegen.llvm.rowcall); a large robot's
  code (its solve compiled apart from its tape) returns the sum of what it wrote, and the point's is added.
- ``bound_linearization(t, p, out)``: ``run(x, u)`` into a held buffer ``out``, then one copy of the buffer and
  the point into a row ``[A | B | C | D | x | u]``.

The numbers are the general path's bit for bit (the same compiled code). Anything else — another argument type, a
non-finite point or result, a rotation the general path would normalize, a model with constraints or sampled
parts — returns None, and linearize's general path answers (and explains a failure). The bindings are closures:
a call reads their state from cells, cheaper than attributes.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.codegen.llvm.rowcall import RowCall
from robodyn.model.kinds.linear import LinearSystem
from robodyn.model.lean import ARENA_BYTES, BLAS_SIZE, UNIT_TOLERANCE, Arena
from robodyn.model.system import Values

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["ARENA_BYTES", "BLAS_SIZE", "MIN_ROWS", "Layout", "exact_at", "finite_total"]

_FLOAT: Final = np.dtype(np.float64)
_LINE: Final = 8  # float64 entries per 64-byte cache line
#: An arena holds at least this many rows: a large robot's result (a humanoid's is ~70 kB) pays an eighth of the
#: arena's fixed costs (its allocation, address and views: ~8 us for one row), and a result kept keeps at most
#: seven others' memory alive.
MIN_ROWS: Final = 8


def finite_total(buffer: np.ndarray, ones: np.ndarray) -> float:
    """The sum of ``buffer`` (finite exactly when every entry is, barring overflow), as ``buffer . ones`` up to
    :data:`BLAS_SIZE` entries and numpy's own sum above."""
    return float(buffer.dot(ones) if buffer.size <= BLAS_SIZE else buffer.sum())


@dataclass(frozen=True, slots=True)
class Layout:
    """A, B, C, D of one linearization as consecutive row-major blocks of a flat buffer."""

    bounds: tuple[int, ...]  # block k is buffer[bounds[k]:bounds[k + 1]]
    shapes: tuple[tuple[int, int], ...]

    @staticmethod
    def of(model: ModelContract) -> Layout:
        return _layout(model.n_states, model.n_inputs, model.n_outputs)

    def views(self, buffer: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        b, s = self.bounds, self.shapes
        return (buffer[b[0]:b[1]].reshape(s[0]), buffer[b[1]:b[2]].reshape(s[1]),
                buffer[b[2]:b[3]].reshape(s[2]), buffer[b[3]:b[4]].reshape(s[3]))


@functools.lru_cache(maxsize=64)
def _layout(n: int, m: int, p: int) -> Layout:
    sizes = (n * n, n * m, p * n, p * m)
    return Layout((0, sizes[0], sum(sizes[:2]), sum(sizes[:3]), sum(sizes)), ((n, n), (n, m), (p, n), (p, m)))


class _Binding:
    """One thread's binding of a model at one time with its default parameters: ``linearize(x, u)`` (a closure
    over the arena and the compiled code; :func:`_raw` or :func:`_run`), what it is valid for (``t``, the
    parameters' mapping ``defaults``), the argument shapes and ``call`` (the raw code, or None)."""

    __slots__ = ("call", "defaults", "linearize", "rows", "t", "u_shape", "x_shape", "zeros")

    def __init__(self, model: ModelContract, t: float, call: Any, rows: int,
                 linearize: Callable[[np.ndarray, np.ndarray], LinearSystem | None]):
        self.t, self.defaults, self.call, self.rows, self.linearize = t, model.parameters, call, rows, linearize
        self.x_shape, self.u_shape, self.zeros = (model.n_states,), (model.n_inputs,), np.zeros(model.n_inputs)

    @staticmethod
    def of(model: ModelContract, t: float) -> _Binding | None:
        """The binding of ``model`` at ``t`` (its own linearization_call or its chart's, else its
        bound_linearization), or None when a moving base's chart has no raw code with constant C and D."""
        chart = model.chart()
        p = model.default_parameters()[1]
        native = model.linearization_call(t, p) if chart is None else chart.linearization_call(t, p)
        n, m = model.n_states, model.n_inputs
        if native is not None and np.isnan(native[1][_layout(n, m, model.n_outputs).bounds[2]:]).any():
            native = None  # C or D written by the call: not constants to share (bound_linearization instead)
        if native is None:
            return None if chart is not None else _run(model, t, p)
        return _raw(model, t, native, chart)


def _lines(size: int) -> int:
    """``size`` entries rounded up to whole cache lines."""
    return -(-size // _LINE) * _LINE


def _raw(model: ModelContract, t: float, native: tuple[Any, np.ndarray], chart: Any) -> _Binding:
    """The binding over raw machine code (see the module docstring): rows ``[A | B | x | u]``, or ``[A | B | x_op |
    u | x | 0]`` on a moving base."""
    raw, template = native
    fields = _fields(model, chart)
    n, m = len(fields[0]), model.n_inputs
    layout = _layout(n, m, len(fields[2]))
    size, bounds, shapes = layout.bounds[2], layout.bounds, layout.shapes
    constant = np.concatenate([np.zeros(size), template[size:]])
    constant.setflags(write=False)  # C and D shared by every result: views that cannot be made writable
    C, D = layout.views(constant)[2:]
    runs = _runs(~np.isnan(template[:size]))  # A's and B's constant entries
    nq, nv = (0, 0) if chart is None else (len(chart.coordinates), n // 2)
    x_at = size + (0 if chart is None else n + m)  # where the code reads x, then u
    start = size + nv  # the point each call copies: [x | u], or [v | u | x] after x_op's zeros
    stop = size + n + m if chart is None else x_at + model.n_states
    width = _lines(stop + (0 if chart is None else len(chart.tangent)))
    rows = max(MIN_ROWS, ARENA_BYTES // (8 * width))
    rotation = None if chart is None else chart.rotation
    stride, function, at_p, at_a = 8 * width, raw.function, raw.at_p, raw.at_a
    x_offset, u_offset = 8 * x_at, 8 * (size + n)
    row_call = None if raw.sums else RowCall.of(raw, (x_at, size + n, 0, width))  # one tape: run and sum at once
    summed, target, frame = (None, 0, 0) if row_call is None else (row_call.function, row_call.target,
                                                                    row_call.frame)
    ones = np.ones(stop - start if stop - start <= BLAS_SIZE else 0)
    t_ = t

    def arena() -> tuple[Arena, int, list[Any], list[Any], list[Any]]:
        block = Arena(rows, width)
        writable, frozen = block.rows, block.frozen
        for a, b in runs:
            writable[:, a:b] = template[a:b]
        writable[:, size:start] = 0.0  # x_op's zeros on a moving base
        writable[:, stop:] = 0.0  # the chart's d, the padding
        views = [frozen[:, bounds[k]:bounds[k + 1]].reshape(rows, *shapes[k]) for k in range(2)]
        results = list(zip(*views, frozen[:, size:size + n], frozen[:, size + n:size + n + m]))
        rotations = [] if rotation is None else list(writable[:, x_at + rotation.start: x_at + rotation.stop])
        points = list(writable[:, start:stop])
        del views
        block.hand([view for result in results for view in result])  # every view made: the baseline
        return block, block.address, points, results, rotations

    current, address, points, results, rotations = arena()
    row = 0

    def linearize(x: np.ndarray, u: np.ndarray, _keep: Any = row_call) -> LinearSystem | None:  # keeps its frame
        nonlocal current, address, points, results, rotations, row
        if row == rows:
            if not current.idle():  # a result still held: a new block (else this one's rows again)
                current, address, points, results, rotations = arena()
            row = 0
        k = row
        row += 1
        point = points[k]
        if rotation is None:
            np.concatenate((x, u), out=point)
        else:
            np.concatenate((x[nq:], u, x), out=point)
            turn = rotations[k]
            if abs(_dot(turn, turn) - 1.0) > UNIT_TOLERANCE:
                return None  # the general path normalizes it (with a warning) or refuses it
        # the result (its arrays: views of the row the call fills) and the point's check before the call: after a
        # large robot's machine code, Python's and numpy's run from cold caches
        A, B, x_op, u_op = results[k]
        system = _from_fields(A, B, C, D, x_op, u_op, *fields)
        at = address + stride * k
        if summed is not None:
            total = summed(target, t_, at, frame)
        else:
            total = _dot(point, ones) if ones.size else point.sum()
            total += function(t_, at + x_offset, at + u_offset, at_p, at_a, at)
        return system if _isfinite(total) else None  # not finite: the general path finds the cause and says it

    return _Binding(model, t, raw, rows, linearize)


def _run(model: ModelContract, t: float, p: np.ndarray) -> _Binding:
    """The binding over ``bound_linearization``: rows ``[A | B | C | D | x | u]``, the buffer and the point copied
    into the row after each run."""
    n, m = model.n_states, model.n_inputs
    layout = Layout.of(model)
    size, bounds, shapes = layout.bounds[-1], layout.bounds, layout.shapes
    out = np.zeros(size)
    run = model.bound_linearization(t, p, out)
    used = size + n + m
    width = _lines(used)
    rows = max(1, ARENA_BYTES // (8 * width))
    ones = np.ones(used if used <= BLAS_SIZE else 0)
    fields = _fields(model, None)

    def arena() -> tuple[Arena, list[Any], list[Any]]:
        block = Arena(rows, width)
        views = [block.frozen[:, bounds[k]:bounds[k + 1]].reshape(rows, *shapes[k]) for k in range(4)]
        results = list(zip(*views, block.frozen[:, size:size + n], block.frozen[:, size + n:used]))
        whole = list(block.rows[:, :used])
        del views
        block.hand([view for result in results for view in result])
        return block, whole, results

    current, whole, results = arena()
    row = 0

    def linearize(x: np.ndarray, u: np.ndarray) -> LinearSystem | None:
        nonlocal current, whole, results, row
        if row == rows:
            if not current.idle():
                current, whole, results = arena()
            row = 0
        k = row
        row += 1
        run(x, u)
        line = whole[k]
        np.concatenate((out, x, u), out=line)  # the matrices and the point: one copy
        if not _isfinite(_dot(line, ones) if ones.size else line.sum()):
            return None
        return _from_fields(*results[k], *fields)

    return _Binding(model, t, None, rows, linearize)


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """The (start, stop) of each run of True in ``mask``."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]


def _fields(model: ModelContract, chart: Any) -> tuple[Any, ...]:
    """LinearSystem.from_fields's fields after the arrays: the names, the method, the error estimate, dt and the
    units as linearize's general path gives them (in the tangent space on a moving base)."""
    if chart is None:
        n, m, p = model.n_states, model.n_inputs, model.n_outputs
        probe = LinearSystem.from_checked(np.zeros((n, n)), np.zeros((n, m)), np.zeros((p, n)), np.zeros((p, m)),
                                          states=model.states, inputs=model.inputs, outputs=model.outputs,
                                          name=model.name, source=model)
        return (model.states, model.inputs, model.outputs, model.name, model.jacobian_method, 0.0, probe.dt,
                probe.declared_units)
    names = chart.tangent_states
    named = {*names, *model.inputs}
    units = MappingProxyType({k: v for k, v in model.units().items() if k in named})
    return names, model.inputs, names, model.name, "manipulator", 0.0, None, units


_LOCAL: Final = "linearize bindings"  # the model's memo key of its threading.local() of bindings
_dot: Any = np.ndarray.dot  # looked up once: the lean path's call counts its attribute look-ups
_isfinite = math.isfinite
_from_fields: Any = LinearSystem.from_fields


def _bound(model: ModelContract, t: float) -> _Binding | None:
    """This thread's binding of ``model`` at ``t`` (made on first use), or None for a model the lean path does not
    serve (no exact derivatives with exact output Jacobians, constraints, sampled parts). Each thread keeps its own
    (a threading.local in the model's memo): threads never share buffers, and a finished thread's binding goes
    with it."""
    memo = model.memo()
    local = memo.get(_LOCAL)
    bound: _Binding | None = getattr(local, "bound", None)
    if bound is not None and bound.t == t and bound.defaults is model.parameters:
        return bound
    if not math.isfinite(t) or not _served(model):
        return None
    if local is None:
        local = memo.setdefault(_LOCAL, threading.local())
    bound = local.bound = _Binding.of(model, t)
    return bound


def exact_at(model: ModelContract, t: float, x: Values, u: Values | None) -> LinearSystem | None:
    """linearize(model, x, u, t=t) for float64 vectors x (n,) and u (m,) or None, at a finite point of a model with
    exact derivatives and output Jacobians at its default parameters; None for the general path (any other
    argument, a non-finite point or result)."""
    bound: _Binding | None = getattr(model.memo().get(_LOCAL), "bound", None)
    if bound is None or bound.t != t or bound.defaults is not model.parameters:
        bound = _bound(model, t)
        if bound is None:
            return None
    if not (type(x) is np.ndarray and x.dtype is _FLOAT and x.shape == bound.x_shape):
        return None
    if u is None:
        u = bound.zeros
    elif not (type(u) is np.ndarray and u.dtype is _FLOAT and u.shape == bound.u_shape):
        return None
    return bound.linearize(x, u)


def _served(model: ModelContract) -> bool:
    """Whether linearize's general path would reach the exact linearization the lean path binds: the model's own
    (exact derivatives and output Jacobians; no constraints, not sampled), or its chart's on a moving base (a
    robot's tangent space, always exact)."""
    if model.constraints() is not None or model.sampling() is not None:
        return False
    if model.chart() is not None:
        return True
    if model.jacobian_method is None:
        return False
    memo = model.memo()
    if "linearize exact outputs" not in memo:
        n, m = model.n_states, model.n_inputs
        memo["linearize exact outputs"] = model.output_jacobians_raw(0.0, np.zeros(n), np.zeros(m),
                                                                     model.default_parameters()[1]) is not None
    exact: bool = memo["linearize exact outputs"]
    return exact
