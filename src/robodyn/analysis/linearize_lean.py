"""linearize's lean path: what a loop of ``linearize(model, x, u)`` calls pays per call.

A model with exact derivatives at its default parameters, called with float64 vectors, needs no validation
beyond their types and shapes and a finite check of the result. :func:`exact_at` does that much and no more:
the model's derivatives are bound once (per model, per thread and per time, in the model's memo) and each
result is written into the next row of an *arena*, one array of a few results' rows laid out
``[A | B | C | D | x | u]``, whose read-only views of every row were made with it, so that a result costs no
allocation, slicing or reshaping of its own.

Two bindings, asked of the model in this order:

- ``linearization_call(t, p)``: raw machine code (robodyn.codegen.native.RawCall) that reads x and u and writes A
  and B at addresses it is given. The point is copied into the row, the code reads it there and writes the
  matrices into the same row: nothing is copied after the call. The row's constant entries (C = I and D = 0 for a
  robot whose outputs are its states) come from the model's template, written into every row with the arena.
- ``bound_linearization(t, p, out)``: ``run(x, u)`` into a held buffer ``out``, then one copy of the buffer and
  the point into the row.

The numbers are the model's ``linearization_raw`` bit for bit (the same compiled code). Anything else — another
argument type, a non-finite point or result, a model with a manifold, constraints or sampled parts — returns None,
and linearize's general path answers (and explains a failure).
"""

from __future__ import annotations

import ctypes
import functools
import math
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.model.linear import LinearSystem
from robodyn.model.system import Values

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["ARENA_BYTES", "BLAS_SIZE", "Layout", "exact_at", "finite_total"]

#: Results of the lean path share one block of at most this many bytes (a few results' worth): one allocation and
#: no per-result views of a fresh buffer.
ARENA_BYTES: Final = 64 * 1024
#: Up to this size the finite check is one BLAS dot (~0.4 us against ~0.9 for sum); above it numpy's own sum: a
#: large dot wakes numpy's BLAS threads, which then contend with scipy's (LAPACK's solves of the large robots):
#: measured 5.5 ms for a 10,000-entry dot on 2 cores, and the next dpotrs 5 ms.
BLAS_SIZE: Final = 2048
_FLOAT: Final = np.dtype(np.float64)


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


class _Bound:
    """A model's exact linearization bound at one time with its default parameters, for one thread, and the arena
    its results are written into (see the module docstring): ``call`` (raw machine code) or ``run`` (into ``out``)
    is set, the other None. :meth:`linearize` is the call: everything it reads was made here or with the arena."""

    __slots__ = ("address", "arena", "at_a", "at_p", "call", "defaults", "fields", "function", "layout", "next",
                 "ones", "out", "points", "results", "rows", "run", "size", "stride", "t", "template", "u_offset",
                 "u_shape", "whole", "width", "x_offset", "x_shape", "zeros")

    def __init__(self, model: ModelContract, t: float):
        n, m = model.n_states, model.n_inputs
        self.t, _, _, p = model.arguments(t, np.zeros(n), None, None)
        self.defaults = model.parameters  # parameter copies share the memo: this mapping's, by identity
        self.x_shape, self.u_shape = (n,), (m,)
        self.layout = layout = Layout.of(model)
        self.size = size = layout.bounds[-1]
        self.width = width = size + n + m  # a row: [A | B | C | D | x | u]
        # row . ones: a finite check in one BLAS call; a large robot's row is summed by numpy (see finite_total)
        self.ones = np.ones(width if width <= BLAS_SIZE else 0)
        self.zeros = np.zeros(m)  # u = None
        self.stride = 8 * width  # bytes per row
        self.x_offset, self.u_offset = 8 * size, 8 * (size + n)
        native = model.linearization_call(self.t, p)
        self.call: Any = None if native is None else native[0]  # kept: it keeps the bound parameters alive
        self.function: Any = None if native is None else native[0].function
        self.at_p: int = 0 if native is None else native[0].at_p
        self.at_a: int = 0 if native is None else native[0].at_a
        self.template: np.ndarray | None = None if native is None else native[1]
        self.out = np.zeros(size)
        self.run: Any = model.bound_linearization(self.t, p, self.out) if native is None else None
        self.rows = max(1, ARENA_BYTES // self.stride)
        probe = LinearSystem.from_checked(*layout.views(np.zeros(size)), states=model.states, inputs=model.inputs,
                                          outputs=model.outputs, name=model.name, source=model)
        # LinearSystem.from_fields's fields after the arrays; dt and the units as from_checked derives them, once
        self.fields = (model.states, model.inputs, model.outputs, model.name, model.jacobian_method, 0.0, probe.dt,
                       probe.declared_units)
        self.new_arena()

    def new_arena(self) -> None:
        """A new arena of ``rows`` rows (the template's constants in each) and, per row, its writable view
        (``whole``), that of its point (``points``) and its result's read-only views A, B, C, D, x, u
        (``results``)."""
        rows, size, bounds, shapes = self.rows, self.size, self.layout.bounds, self.layout.shapes
        self.arena = arena = np.zeros((rows, self.width))
        if self.template is not None:
            arena[:, :size] = self.template
        self.address = ctypes.addressof(ctypes.c_char.from_buffer(arena))  # type: ignore[arg-type]
        frozen = arena.view()
        frozen.setflags(write=False)
        n = shapes[0][0]
        parts = (*(frozen[:, bounds[k]:bounds[k + 1]].reshape(rows, *shapes[k]) for k in range(4)),
                 frozen[:, size:size + n], frozen[:, size + n:])
        self.results = list(zip(*parts))
        self.whole = list(arena)
        self.points = [row[size:] for row in self.whole]
        self.next = 0

    def linearize(self, x: np.ndarray, u: np.ndarray) -> LinearSystem | None:
        """The result at the checked vectors ``x``, ``u`` in the next row, or None when it is not finite."""
        row = self.next
        if row == self.rows:
            self.new_arena()
            row = 0
        self.next = row + 1
        if self.function is not None:
            np.concatenate((x, u), out=self.points[row])
            at = self.address + self.stride * row
            self.function(self.t, at + self.x_offset, at + self.u_offset, self.at_p, self.at_a, at)
        else:
            self.run(x, u)
            np.concatenate((self.out, x, u), out=self.whole[row])  # the matrices and the point: one copy
        whole = self.whole[row]
        if not _isfinite(_dot(whole, self.ones) if self.ones.size else whole.sum()):  # finite_total, inlined
            return None  # a non-finite point or result: the general path finds the cause and says it
        return _from_fields(*self.results[row], *self.fields)


_LOCAL: Final = "linearize bindings"  # the model's memo key of its threading.local() of bindings
_dot: Any = np.ndarray.dot  # looked up once: the lean path's call counts its attribute look-ups
_isfinite = math.isfinite
_from_fields: Any = LinearSystem.from_fields


def _bound(model: ModelContract, t: float) -> _Bound | None:
    """This thread's binding of ``model`` at ``t`` (made on first use), or None for a model the lean path does not
    serve (no exact derivatives with exact output Jacobians, a manifold, constraints, sampled parts). Each thread
    keeps its own (a threading.local in the model's memo): threads never share buffers, and a finished thread's
    binding goes with it."""
    memo = model.memo()
    local = memo.get(_LOCAL)
    bound: _Bound | None = getattr(local, "bound", None)
    if bound is not None and bound.t == t and bound.defaults is model.parameters:
        return bound
    if model.jacobian_method is None or not math.isfinite(t) or not _plain(model):
        return None
    n, m = model.n_states, model.n_inputs
    if "linearize exact outputs" not in memo:
        memo["linearize exact outputs"] = model.output_jacobians_raw(t, np.zeros(n), np.zeros(m),
                                                                     model.default_parameters()[1]) is not None
    if not memo["linearize exact outputs"]:
        return None
    if local is None:
        local = memo.setdefault(_LOCAL, threading.local())
    bound = local.bound = _Bound(model, t)
    return bound


def exact_at(model: ModelContract, t: float, x: Values, u: Values | None) -> LinearSystem | None:
    """linearize(model, x, u, t=t) for float64 vectors x (n,) and u (m,) or None, at a finite point of a model with
    exact derivatives and output Jacobians at its default parameters; None for the general path (any other
    argument, a non-finite point or result)."""
    local = model.memo().get(_LOCAL)
    bound: _Bound | None = getattr(local, "bound", None)
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


def _plain(model: ModelContract) -> bool:
    """Whether linearize's general path would reach the model's own exact linearization (no manifold, no
    constraints, not sampled): the lean path, which linearize tries first, is only for such models."""
    return model.chart() is None and model.constraints() is None and model.sampling() is None
