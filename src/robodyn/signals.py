"""Input signals u(t) of a simulation: Python objects, their exact pieces, and their compiled form.

Signals are frozen dataclasses checked on construction. They evaluate at a time or an array of times,
are right-continuous (at a step time the value is the "after" value), report the ``breakpoints`` where
their value or slope jumps (integrators stop there), and combine with ``+ - *`` and ``/`` by numbers.
For the exact linear path a signal splits into sine components (:meth:`Signal.sine_terms`) and a
piecewise-affine remainder (:meth:`Signal.affine_pieces`).

:func:`resolve_inputs` turns what the user gave for a model's inputs into :class:`Inputs`;
:meth:`Inputs.compiled` packs it into the arrays the numba kernels read,
``inp = (codes, coef, tdata, K, xref, flags)``:

- ``codes`` int64 ``(n_terms, 2)``: channel index, kind code;
- ``coef`` float64 ``(n_terms, 6)``: the gain, then the kind's numbers (unused slots are 0);
- ``tdata`` float64 ``(k,)``: table times then values, table after table;
- ``K`` float64 ``(m, n)`` and ``xref`` float64 ``(n,)``: state feedback (zeros without feedback);
- ``flags`` int64 ``(1,)``: ``flags[0]`` is 1 when state feedback is present.

=====  ==============  =====================================================
code   kind            ``coef[j, 1:]``
=====  ==============  =====================================================
0      constant        value
1      step            t0, before, after
2      ramp            t0, slope, initial
3      sine            amplitude, omega = 2*pi*frequency (rad/s), phase, offset
4      pulse           t0, width, amplitude, base, period (0: not periodic)
5      table, zoh      offset into ``tdata``, length n (n times, then n values)
6      table, linear   as code 5
=====  ==============  =====================================================

The evaluator is ``eval_inputs(t, t_piece, x, inp, out)`` in ``robodyn/signals_kernel.py``.
The text form used on the command line (``step(0, 0, 1) + 0.5*sine(1, 2)``) is parsed by
:mod:`robodyn.signals_parse`.
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.errors import InputError, ShapeError, UnknownNameError

__all__ = [
    "EVALUATOR_SOURCE_PATH",
    "KIND_CODES",
    "Constant",
    "FunctionSignal",
    "Inputs",
    "Pulse",
    "Ramp",
    "Scaled",
    "Signal",
    "Sine",
    "StateFeedback",
    "Step",
    "Sum",
    "Table",
    "compile_inputs",
    "load_evaluator",
    "resolve_inputs",
]

Array: TypeAlias = NDArray[np.float64]
#: The compiled inputs passed to ``eval_inputs``: ``(codes, coef, tdata, K, xref, flags)``.
CompiledInputs: TypeAlias = tuple[NDArray[np.int64], Array, Array, Array, Array, NDArray[np.int64]]

EVALUATOR_SOURCE_PATH = Path(__file__).with_name("signals_kernel.py")
KIND_CODES = {"constant": 0, "step": 1, "ramp": 2, "sine": 3, "pulse": 4, "table_zoh": 5, "table_linear": 6}
N_COEF = 6  # Columns of ``coef``: the gain and up to five numbers of the kind.
MAX_EDGES = 10_000_000  # Periodic-pulse edges one breakpoints() call may return.
NO_EXACT_FORM = "a Python function input has no exact form: use method='dopri5'"


def _number(value: object, what: str) -> float:
    """``value`` as a finite float, or InputError saying what to change."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{what} must be a real number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise InputError(f"{what} must be finite, got {number}: give a finite number")
    return number


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _times(t: ArrayLike) -> Array:
    try:
        times = np.asarray(t, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"signal time must be a number or an array of numbers, got {t!r}") from None
    if not np.all(np.isfinite(times)):
        raise InputError("signal time must be finite: remove nan/inf times")
    return times


def _interval(t0: float, t1: float) -> tuple[float, float]:
    a, b = _number(t0, "interval start t0"), _number(t1, "interval end t1")
    if b < a:
        raise InputError(f"interval end t1={b} is before its start t0={a}: give t0 <= t1")
    return a, b


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)  # frozen dataclasses normalise their fields in __post_init__


class Signal:
    """Base class of the scalar input signals u(t)."""

    __slots__ = ()
    __array_ufunc__ = None  # numpy defers ``2.0 * signal`` to Signal.__rmul__

    # --- subclasses implement -------------------------------------------------------------------
    def _eval(self, t: Array, tp: Array) -> Array:
        """Value at ``t`` on the piece containing ``tp`` (same shapes)."""
        raise NotImplementedError

    def _breaks(self, t0: float, t1: float) -> Array:
        """Candidate breakpoints (may be unsorted, repeated, outside (t0, t1))."""
        return np.empty(0)

    def _affine(self, t: Array, tp: Array) -> tuple[Array, Array]:
        """Value and slope of the signal without its sine components, on the piece of ``tp``."""
        return self._eval(t, tp), np.zeros_like(t)

    # --- public ---------------------------------------------------------------------------------
    @property
    def is_compilable(self) -> bool:
        """Whether the signal has a compiled form (everything but Python functions)."""
        return True

    @overload
    def __call__(self, t: float) -> float: ...
    @overload
    def __call__(self, t: ArrayLike) -> float | Array: ...
    def __call__(self, t: ArrayLike) -> float | Array:
        """The value at time ``t`` (a float) or at every time of an array (same shape)."""
        times = _times(t)
        values = np.asarray(self._eval(times, times), dtype=float)
        return float(values) if values.ndim == 0 else values

    def breakpoints(self, t0: float, t1: float) -> Array:
        """Sorted unique times strictly inside ``(t0, t1)`` where the value or the slope jumps."""
        a, b = _interval(t0, t1)
        candidates = np.unique(np.asarray(self._breaks(a, b), dtype=float))
        return candidates[(candidates > a) & (candidates < b)]

    def sine_terms(self) -> list[tuple[float, float, float]]:
        """``(amplitude, omega in rad/s, phase)`` of every sine component, gains applied."""
        return []

    def affine_pieces(self, t0: float, t1: float) -> tuple[Array, Array, Array]:
        """The signal without its sine components as affine pieces on ``[t0, t1]``.

        Returns
        -------
        breaks : (K+1,)
            ``t0``, the :meth:`breakpoints`, ``t1``.
        values, slopes : (K,)
            On ``[breaks[k], breaks[k+1])`` the remainder is ``values[k] + slopes[k]*(t - breaks[k])``.
        """
        a, b = _interval(t0, t1)
        if not b > a:
            raise InputError(f"affine_pieces needs t0 < t1, got t0={a}, t1={b}")
        breaks = np.concatenate(([a], self.breakpoints(a, b), [b]))
        middles = 0.5 * (breaks[:-1] + breaks[1:])
        values, slopes = self._affine(breaks[:-1], middles)
        return breaks, np.asarray(values, dtype=float), np.asarray(slopes, dtype=float)

    # --- arithmetic -----------------------------------------------------------------------------
    def __add__(self, other: object) -> Signal:
        if not isinstance(other, Signal | numbers.Real) or isinstance(other, bool):
            return NotImplemented
        return Sum((self, _as_signal(other, "added term")))

    def __radd__(self, other: object) -> Signal:
        if not _is_number(other):
            return NotImplemented
        return Sum((_as_signal(other, "added term"), self))

    def __sub__(self, other: object) -> Signal:
        if not isinstance(other, Signal | numbers.Real) or isinstance(other, bool):
            return NotImplemented
        return self + (-_as_signal(other, "subtracted term"))

    def __rsub__(self, other: object) -> Signal:
        if not _is_number(other):
            return NotImplemented
        return _as_signal(other, "term") + (-self)

    def __neg__(self) -> Signal:
        return _scaled(-1.0, self)

    def __mul__(self, other: object) -> Signal:
        if not _is_number(other):
            return NotImplemented
        return _scaled(_number(other, "signal gain"), self)

    __rmul__ = __mul__

    def __truediv__(self, other: object) -> Signal:
        if not _is_number(other):
            return NotImplemented
        divisor = _number(other, "signal divisor")
        if divisor == 0.0:
            raise InputError("a signal divided by zero: divide by a non-zero number")
        return _scaled(1.0 / divisor, self)


def _as_signal(value: object, what: str) -> Signal:
    if isinstance(value, Signal):
        return value
    if _is_number(value):
        return Constant(_number(value, what))
    raise InputError(f"{what} must be a Signal or a number, got {value!r}")


def _scaled(gain: float, signal: Signal) -> Signal:
    if isinstance(signal, Scaled):
        return Scaled(gain * signal.gain, signal.signal)
    return Scaled(gain, signal)


@dataclass(frozen=True, slots=True)
class Constant(Signal):
    """u(t) = value."""

    value: float

    def __post_init__(self) -> None:
        _set(self, "value", _number(self.value, "Constant value"))

    def _eval(self, t: Array, tp: Array) -> Array:
        return np.full_like(t, self.value)


@dataclass(frozen=True, slots=True)
class Step(Signal):
    """u(t) = before for t < t0, after for t >= t0."""

    t0: float
    before: float
    after: float

    def __post_init__(self) -> None:
        for name in ("t0", "before", "after"):
            _set(self, name, _number(getattr(self, name), f"Step {name}"))

    def _eval(self, t: Array, tp: Array) -> Array:
        return np.where(tp < self.t0, self.before, self.after)

    def _breaks(self, t0: float, t1: float) -> Array:
        return np.array([self.t0])


@dataclass(frozen=True, slots=True)
class Ramp(Signal):
    """u(t) = initial for t < t0, initial + slope*(t - t0) for t >= t0."""

    t0: float
    slope: float
    initial: float = 0.0

    def __post_init__(self) -> None:
        for name in ("t0", "slope", "initial"):
            _set(self, name, _number(getattr(self, name), f"Ramp {name}"))

    def _eval(self, t: Array, tp: Array) -> Array:
        return np.where(tp < self.t0, self.initial, self.initial + self.slope * (t - self.t0))

    def _affine(self, t: Array, tp: Array) -> tuple[Array, Array]:
        return self._eval(t, tp), np.where(tp < self.t0, 0.0, self.slope)

    def _breaks(self, t0: float, t1: float) -> Array:
        return np.array([self.t0])


@dataclass(frozen=True, slots=True)
class Sine(Signal):
    """u(t) = amplitude*sin(2*pi*frequency*t + phase) + offset; ``frequency`` in Hz, ``phase`` in rad."""

    amplitude: float
    frequency: float
    phase: float = 0.0
    offset: float = 0.0

    def __post_init__(self) -> None:
        for name in ("amplitude", "frequency", "phase", "offset"):
            _set(self, name, _number(getattr(self, name), f"Sine {name}"))

    @property
    def omega(self) -> float:
        """Angular frequency 2*pi*frequency in rad/s."""
        return 2.0 * math.pi * self.frequency

    def _eval(self, t: Array, tp: Array) -> Array:
        return self.amplitude * np.sin(self.omega * t + self.phase) + self.offset

    def _affine(self, t: Array, tp: Array) -> tuple[Array, Array]:
        return np.full_like(t, self.offset), np.zeros_like(t)

    def sine_terms(self) -> list[tuple[float, float, float]]:
        return [(self.amplitude, self.omega, self.phase)]


@dataclass(frozen=True, slots=True)
class Pulse(Signal):
    """u(t) = base + amplitude on [t0, t0 + width), base elsewhere.

    With ``period`` the pulse repeats on [t0 + k*period, t0 + k*period + width) for k = 0, 1, 2, ...;
    before t0 the value is ``base``. The period must exceed the width.
    """

    t0: float
    width: float
    amplitude: float
    base: float = 0.0
    period: float | None = None

    def __post_init__(self) -> None:
        for name in ("t0", "width", "amplitude", "base"):
            _set(self, name, _number(getattr(self, name), f"Pulse {name}"))
        if self.width <= 0.0:
            raise InputError(f"Pulse width must be > 0, got {self.width}: give a positive width")
        if self.period is not None:
            _set(self, "period", _number(self.period, "Pulse period"))
            if not self.period > self.width:
                raise InputError(
                    f"Pulse period {self.period} must be greater than its width {self.width}: "
                    "lengthen the period or shorten the pulse"
                )

    def _index(self, tp: Array) -> Array:
        """Index k of the period containing ``tp`` (consistent with the edges t0 + k*period)."""
        period = self.period or 1.0
        k = np.floor((tp - self.t0) / period)
        k = np.where(tp < self.t0 + k * period, k - 1, k)
        return np.where(tp >= self.t0 + (k + 1) * period, k + 1, k)

    def _eval(self, t: Array, tp: Array) -> Array:
        if self.period is None:
            on = (tp >= self.t0) & (tp < self.t0 + self.width)
        else:
            on = (tp >= self.t0) & (tp < self.t0 + self._index(tp) * self.period + self.width)
        return np.where(on, self.base + self.amplitude, self.base)

    def _breaks(self, t0: float, t1: float) -> Array:
        if self.period is None:
            return np.array([self.t0, self.t0 + self.width])
        first = max(0.0, math.floor((t0 - self.t0) / self.period) - 1.0)
        last = math.floor((t1 - self.t0) / self.period) + 1.0
        if last - first > MAX_EDGES:
            raise InputError(
                f"Pulse with period {self.period} has more than {MAX_EDGES} edges in ({t0}, {t1}): "
                "shorten the interval or lengthen the period"
            )
        starts = self.t0 + np.arange(first, last + 1.0) * self.period
        return np.concatenate((starts, starts + self.width))


@dataclass(frozen=True, slots=True, eq=False)
class Table(Signal):
    """Tabulated u(t): zero-order hold (``"zoh"``) or ``"linear"`` interpolation between ``times``.

    Before the first time the value is the first value, after the last time the last value.
    ``times`` must be strictly increasing. The arrays are stored as read-only float64 copies.
    """

    times: Array
    values: Array
    interpolation: str = "zoh"

    def __post_init__(self) -> None:
        times = _table_array(self.times, "times")
        values = _table_array(self.values, "values")
        if times.shape != values.shape:
            raise ShapeError(f"Table has {times.size} times but {values.size} values: give one value per time")
        steps = np.diff(times)
        if np.any(steps <= 0):
            i = int(np.flatnonzero(steps <= 0)[0]) + 1
            raise InputError(
                f"Table times must be strictly increasing: times[{i}]={times[i]} follows "
                f"times[{i - 1}]={times[i - 1]}: sort the rows and remove duplicate times"
            )
        if self.interpolation not in ("zoh", "linear"):
            raise InputError(f"Table interpolation must be 'zoh' or 'linear', got {self.interpolation!r}")
        _set(self, "times", times)
        _set(self, "values", values)

    @classmethod
    def from_csv(cls, path: str | Path, column: str | None = None, interpolation: str = "zoh") -> Table:
        """Read a table from a CSV file with a header row.

        The first column is the time, named ``t`` or ``time``; ``column`` names the value column
        (it may be left out when there is exactly one other column).
        """
        from robodyn.signals_parse import read_table_csv

        times, values = read_table_csv(path, column)
        return cls(times, values, interpolation)

    @property
    def _linear(self) -> bool:
        return self.interpolation == "linear"

    def _interval(self, tp: Array) -> Array:
        return np.searchsorted(self.times, tp, side="right") - 1

    def _eval(self, t: Array, tp: Array) -> Array:
        i = self._interval(tp)
        n = self.times.size
        held = self.values[np.clip(i, 0, n - 1)]
        if not self._linear or n == 1:
            return held
        j = np.clip(i, 0, n - 2)
        left, right, v_left = self.times[j], self.times[j + 1], self.values[j]
        ramp = v_left + (self.values[j + 1] - v_left) * ((t - left) / (right - left))
        return np.where((i >= 0) & (i < n - 1), ramp, held)

    def _affine(self, t: Array, tp: Array) -> tuple[Array, Array]:
        if not self._linear or self.times.size == 1:
            return self._eval(t, tp), np.zeros_like(t)
        i = self._interval(tp)
        j = np.clip(i, 0, self.times.size - 2)
        slope = np.diff(self.values)[j] / np.diff(self.times)[j]
        return self._eval(t, tp), np.where((i >= 0) & (i < self.times.size - 1), slope, 0.0)

    def _breaks(self, t0: float, t1: float) -> Array:
        return self.times


def _table_array(value: object, what: str) -> Array:
    try:
        array = np.array(value, dtype=float).reshape(-1) if np.ndim(value) <= 1 else None  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"Table {what} must be numbers, got {value!r}") from None
    if array is None:
        raise ShapeError(f"Table {what} must be one-dimensional, got shape {np.shape(value)}")  # type: ignore[arg-type]
    if array.size == 0:
        raise InputError(f"Table {what} is empty: give at least one row")
    if not np.all(np.isfinite(array)):
        raise InputError(f"Table {what}[{int(np.flatnonzero(~np.isfinite(array))[0])}] is not finite")
    array.setflags(write=False)
    return array


@dataclass(frozen=True, slots=True)
class Sum(Signal):
    """u(t) = the sum of ``terms`` (nested sums are flattened, numbers become constants)."""

    terms: tuple[Signal, ...]

    def __post_init__(self) -> None:
        flat: list[Signal] = []
        for term in self.terms:
            signal = _as_signal(term, "Sum term")
            flat.extend(signal.terms if isinstance(signal, Sum) else (signal,))
        if not flat:
            raise InputError("Sum needs at least one term")
        _set(self, "terms", tuple(flat))

    @property
    def is_compilable(self) -> bool:
        return all(term.is_compilable for term in self.terms)

    def _eval(self, t: Array, tp: Array) -> Array:
        total = np.zeros_like(t)
        for term in self.terms:
            total = total + term._eval(t, tp)
        return total

    def _affine(self, t: Array, tp: Array) -> tuple[Array, Array]:
        value, slope = np.zeros_like(t), np.zeros_like(t)
        for term in self.terms:
            v, s = term._affine(t, tp)
            value, slope = value + v, slope + s
        return value, slope

    def _breaks(self, t0: float, t1: float) -> Array:
        return np.concatenate([np.asarray(term._breaks(t0, t1), dtype=float) for term in self.terms])

    def sine_terms(self) -> list[tuple[float, float, float]]:
        return [sine for term in self.terms for sine in term.sine_terms()]


@dataclass(frozen=True, slots=True)
class Scaled(Signal):
    """u(t) = gain * signal(t)."""

    gain: float
    signal: Signal

    def __post_init__(self) -> None:
        _set(self, "gain", _number(self.gain, "Scaled gain"))
        _set(self, "signal", _as_signal(self.signal, "Scaled signal"))

    @property
    def is_compilable(self) -> bool:
        return self.signal.is_compilable

    def _eval(self, t: Array, tp: Array) -> Array:
        return self.gain * self.signal._eval(t, tp)

    def _affine(self, t: Array, tp: Array) -> tuple[Array, Array]:
        value, slope = self.signal._affine(t, tp)
        return self.gain * value, self.gain * slope

    def _breaks(self, t0: float, t1: float) -> Array:
        return self.signal._breaks(t0, t1)

    def sine_terms(self) -> list[tuple[float, float, float]]:
        return [(self.gain * a, omega, phase) for a, omega, phase in self.signal.sine_terms()]


@dataclass(frozen=True, slots=True)
class FunctionSignal(Signal):
    """u(t) = fn(t) for a Python callable; evaluated on the interpreted path only (no compiled form)."""

    fn: Callable[[float], float]

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise InputError(f"FunctionSignal needs a callable u(t), got {self.fn!r}")

    @property
    def is_compilable(self) -> bool:
        return False

    def _eval(self, t: Array, tp: Array) -> Array:
        flat = [_function_value(self.fn(float(time)), float(time)) for time in np.ravel(t)]
        return np.array(flat, dtype=float).reshape(np.shape(t))

    def _affine(self, t: Array, tp: Array) -> tuple[Array, Array]:
        raise InputError(NO_EXACT_FORM)

    def sine_terms(self) -> list[tuple[float, float, float]]:
        raise InputError(NO_EXACT_FORM)


def _function_value(value: object, t: float) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"input function returned {value!r} at t={t}: return a real number") from None
    if not math.isfinite(number):
        raise InputError(f"input function returned {number} at t={t}: return finite values")
    return number


@dataclass(frozen=True, slots=True, eq=False)
class StateFeedback:
    """u = u_ref(t) - K (x - x_ref) for the whole input vector.

    Parameters
    ----------
    K : (m, n)
        Feedback gain.
    x_ref : (n,), optional
        Reference state (zeros if left out).
    u_ref : sequence of m Signals or numbers, optional
        Feed-forward input per channel (zeros if left out).
    """

    K: Array
    x_ref: Array | None = None
    u_ref: tuple[Signal, ...] | None = None

    def __post_init__(self) -> None:
        gain = _matrix(self.K, "StateFeedback K", ndim=2)
        m, n = gain.shape
        x_ref = np.zeros(n) if self.x_ref is None else _matrix(self.x_ref, "StateFeedback x_ref", ndim=1)
        if x_ref.shape != (n,):
            raise ShapeError(f"StateFeedback x_ref has shape {x_ref.shape}, expected ({n},) to match K {gain.shape}")
        u_ref = (0.0,) * m if self.u_ref is None else tuple(self.u_ref)
        if len(u_ref) != m:
            raise ShapeError(f"StateFeedback u_ref has {len(u_ref)} signals, expected {m} (rows of K)")
        x_ref.setflags(write=False)
        _set(self, "K", gain)
        _set(self, "x_ref", x_ref)
        _set(self, "u_ref", tuple(_as_signal(s, f"StateFeedback u_ref[{i}]") for i, s in enumerate(u_ref)))

    @property
    def references(self) -> tuple[Signal, ...]:
        """The feed-forward signals u_ref, one per input."""
        assert self.u_ref is not None  # set in __post_init__
        return self.u_ref

    @property
    def reference_state(self) -> Array:
        """x_ref (n,)."""
        assert self.x_ref is not None  # set in __post_init__
        return self.x_ref

    @property
    def is_compilable(self) -> bool:
        return all(s.is_compilable for s in self.references)

    def __call__(self, t: float, x: ArrayLike) -> Array:
        """u (m,) at time ``t`` and state ``x`` (n,)."""
        state = _state(x, self.K.shape[1])
        reference = np.array([s(float(t)) for s in self.references], dtype=float)
        return reference - self.K @ (state - self.reference_state)

    def breakpoints(self, t0: float, t1: float) -> Array:
        return _union([s.breakpoints(t0, t1) for s in self.references])


def _matrix(value: object, what: str, ndim: int) -> Array:
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be numbers, got {value!r}") from None
    if array.ndim != ndim:
        raise ShapeError(f"{what} must be {ndim}-dimensional, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise InputError(f"{what} has non-finite entries: give finite numbers")
    array.setflags(write=False)
    return array


def _state(x: object, n: int) -> Array:
    if x is None:
        raise InputError("these inputs depend on the state: pass x")
    state = np.asarray(x, dtype=float)
    if state.shape[-1:] != (n,):
        raise ShapeError(f"state has shape {state.shape}, the input feedback expects {n} states")
    return state


def _union(arrays: Sequence[Array]) -> Array:
    return np.unique(np.concatenate([np.empty(0), *arrays]))


def _terms(signal: Signal, gain: float = 1.0) -> list[tuple[float, Signal]]:
    """``signal`` as a flat list of (gain, leaf signal)."""
    if isinstance(signal, Sum):
        return [term for s in signal.terms for term in _terms(s, gain)]
    if isinstance(signal, Scaled):
        return _terms(signal.signal, gain * signal.gain)
    return [(gain, signal)]


def _leaf_row(leaf: Signal, tdata: list[Array]) -> tuple[int, list[float]]:
    """Kind code and numbers of one leaf; tables append their data to ``tdata``."""
    if isinstance(leaf, Constant):
        return 0, [leaf.value]
    if isinstance(leaf, Step):
        return 1, [leaf.t0, leaf.before, leaf.after]
    if isinstance(leaf, Ramp):
        return 2, [leaf.t0, leaf.slope, leaf.initial]
    if isinstance(leaf, Sine):
        return 3, [leaf.amplitude, leaf.omega, leaf.phase, leaf.offset]
    if isinstance(leaf, Pulse):
        return 4, [leaf.t0, leaf.width, leaf.amplitude, leaf.base, leaf.period or 0.0]
    if isinstance(leaf, Table):
        offset = sum(a.size for a in tdata)
        tdata.extend((leaf.times, leaf.values))
        return (6 if leaf._linear else 5), [float(offset), float(leaf.times.size)]
    raise InputError(f"{type(leaf).__name__} has no compiled form: use an interpreted method")


@dataclass(frozen=True, slots=True, eq=False)
class Inputs:
    """The resolved inputs of a model (see :func:`resolve_inputs`).

    Exactly one of three forms: per-channel ``signals`` (feedback and function None), a
    ``feedback`` law (signals all None), or a Python ``function`` u(t, x) (signals all None).
    """

    names: tuple[str, ...]
    signals: tuple[Signal | None, ...]
    feedback: StateFeedback | None = None
    function: Callable[[float, Array], ArrayLike] | None = None

    def __post_init__(self) -> None:
        if len(self.signals) != len(self.names):
            raise ShapeError(f"Inputs has {len(self.signals)} signals for {len(self.names)} names")

    @property
    def depends_on_state(self) -> bool:
        return self.feedback is not None or self.function is not None

    @property
    def is_compilable(self) -> bool:
        if self.function is not None:
            return False
        if self.feedback is not None:
            return self.feedback.is_compilable
        return all(s is not None and s.is_compilable for s in self.signals)

    def _channels(self) -> tuple[Signal, ...]:
        if self.feedback is not None:
            return self.feedback.references
        return tuple(s if s is not None else Constant(0.0) for s in self.signals)

    def evaluate(self, t: float, x: ArrayLike | None = None) -> Array:
        """u (m,) at time ``t``; ``x`` (n,) is needed only for feedback or a function u(t, x)."""
        if self.function is not None:
            return self._call_function(float(t), _state(x, np.size(x)))
        if self.feedback is not None:
            return self.feedback(float(t), _state(x, self.feedback.K.shape[1]))
        return np.array([s(float(t)) for s in self._channels()], dtype=float).reshape(len(self.names))

    def evaluate_many(self, ts: ArrayLike, xs: ArrayLike | None = None) -> Array:
        """u (T, m) at the times ``ts`` (T,) and states ``xs`` (T, n)."""
        times = _times(ts).reshape(-1)
        if self.function is not None:
            states = _state(xs, np.shape(xs)[-1]).reshape(times.size, -1)
            return np.array([self._call_function(t, x) for t, x in zip(times, states)]).reshape(times.size, -1)
        columns = [np.asarray(s(times), dtype=float) for s in self._channels()]
        u = np.stack(columns, axis=1) if columns else np.zeros((times.size, 0))
        if self.feedback is not None:
            states = _state(xs, self.feedback.K.shape[1]).reshape(times.size, -1)
            u = u - (states - self.feedback.reference_state) @ self.feedback.K.T
        return u

    def _call_function(self, t: float, x: Array) -> Array:
        assert self.function is not None
        value = np.asarray(self.function(t, x), dtype=float)
        m = len(self.names)
        if value.ndim == 0 and m == 1:
            value = value.reshape(1)
        if value.shape != (m,):
            raise ShapeError(f"input function u(t, x) returned shape {value.shape}, expected ({m},)")
        if not np.all(np.isfinite(value)):
            raise InputError(f"input function u(t, x) returned non-finite values at t={t}: check u")
        return value

    def breakpoints(self, t0: float, t1: float) -> Array:
        """Sorted unique times in (t0, t1) where any input jumps in value or slope."""
        _interval(t0, t1)
        if self.function is not None:
            return np.empty(0)
        return _union([s.breakpoints(t0, t1) for s in self._channels()])

    def compiled(self, n_states: int | None = None) -> CompiledInputs:
        """The arrays ``(codes, coef, tdata, K, xref, flags)`` read by ``eval_inputs``.

        ``n_states`` sizes ``K`` (m, n) and ``xref`` (n,) when there is no feedback (0 if left out)
        and is checked against K when there is.
        """
        if not self.is_compilable:
            raise InputError("these inputs include Python functions: they run on the interpreted path only")
        return self._pack(n_states)[0]

    def _pack(self, n_states: int | None) -> tuple[CompiledInputs, list[tuple[int, float, Signal]]]:
        """Compiled arrays of the compilable terms and the (channel, gain, FunctionSignal) left over."""
        codes: list[tuple[int, int]] = []
        rows: list[list[float]] = []
        tdata: list[Array] = []
        python: list[tuple[int, float, Signal]] = []
        for channel, signal in enumerate(self._channels()):
            for gain, leaf in _terms(signal):
                if isinstance(leaf, FunctionSignal):
                    python.append((channel, gain, leaf))
                elif not (isinstance(leaf, Constant) and leaf.value == 0.0):
                    kind, numbers_ = _leaf_row(leaf, tdata)
                    codes.append((channel, kind))
                    rows.append([gain, *numbers_, *[0.0] * (N_COEF - 1 - len(numbers_))])
        m = len(self.names)
        if self.feedback is not None:
            n = self.feedback.K.shape[1]
            if n_states is not None and n_states != n:
                raise ShapeError(f"StateFeedback K has {n} columns but the model has {n_states} states")
            K, xref = self.feedback.K, self.feedback.reference_state
        else:
            K, xref = np.zeros((m, n_states or 0)), np.zeros(n_states or 0)
        inp = (
            np.ascontiguousarray(np.array(codes, dtype=np.int64).reshape(-1, 2)),
            np.ascontiguousarray(np.array(rows, dtype=np.float64).reshape(-1, N_COEF)),
            np.ascontiguousarray(np.concatenate([np.empty(0), *tdata])),
            np.ascontiguousarray(K, dtype=np.float64),
            np.ascontiguousarray(xref, dtype=np.float64),
            np.array([int(self.feedback is not None)], dtype=np.int64),
        )
        return inp, python

    def python_evaluator(self) -> Callable[[float, float, Array, Any, Array], None]:
        """``eval_inputs(t, t_piece, x, inp, out)`` for the interpreted path.

        It carries its own data: the ``inp`` argument is accepted for the shared signature and ignored
        (pass ``compiled()`` when the inputs are compilable, anything, e.g. ``None``, otherwise).
        Python functions u(t) and u(t, x) are called with ``t``.
        """
        if self.function is not None:
            call = self._call_function

            def eval_function(t: float, t_piece: float, x: Array, inp: Any, out: Array) -> None:
                out[:] = call(t, x)

            return eval_function
        kernel = load_evaluator(compiled=False)
        data, python = self._pack(None)

        def eval_signals(t: float, t_piece: float, x: Array, inp: Any, out: Array) -> None:
            kernel(t, t_piece, x, data, out)
            for channel, gain, leaf in python:
                out[channel] += gain * leaf(t)

        return eval_signals


def resolve_inputs(input_names: Sequence[str], u: object = None) -> Inputs:
    """Resolve what the user gave for a model's inputs.

    Parameters
    ----------
    input_names
        The model's input names, in order (m of them).
    u
        ``None`` (all zero); a number or array of m numbers (constants); a sequence of m entries, each a
        Signal, a number or a callable u(t); a mapping ``{name: Signal | number | callable u(t)}``
        (inputs left out are 0); a :class:`Signal` when m == 1; a :class:`StateFeedback`; or a Python
        callable ``u(t, x) -> (m,)`` (interpreted path only).

    Raises
    ------
    UnknownNameError
        A mapping names an input the model does not have.
    ShapeError, InputError
        Wrong number of values, non-finite numbers, unsupported objects.
    """
    names = tuple(input_names)
    m = len(names)
    if u is None:
        return Inputs(names, (Constant(0.0),) * m)
    if isinstance(u, StateFeedback):
        if u.K.shape[0] != m:
            raise ShapeError(f"StateFeedback K has {u.K.shape[0]} rows but the model has {m} inputs ({_list(names)})")
        return Inputs(names, (None,) * m, feedback=u)
    if isinstance(u, Signal):
        if m != 1:
            raise ShapeError(f"one signal given for {m} inputs ({_list(names)}): give a mapping {{name: signal}}")
        return Inputs(names, (u,))
    if isinstance(u, Mapping):
        channels: list[Signal] = [Constant(0.0)] * m
        for key, value in u.items():
            if key not in names:
                raise _unknown_input(str(key), names)
            channels[names.index(key)] = _channel(value, f"input {key!r}")
        return Inputs(names, tuple(channels))
    if callable(u):
        return Inputs(names, (None,) * m, function=u)
    if isinstance(u, list | tuple) and any(isinstance(v, Signal) or callable(v) for v in u):
        if len(u) != m:
            raise ShapeError(f"{len(u)} input signals given, expected {m} ({_list(names)})")
        return Inputs(names, tuple(_channel(v, f"input {name!r}") for name, v in zip(names, u)))
    return Inputs(names, tuple(Constant(v) for v in _constants(u, names)))


def _channel(value: object, what: str) -> Signal:
    if isinstance(value, Signal):
        return value
    if callable(value):
        return FunctionSignal(value)
    if isinstance(value, np.ndarray) and value.size == 1:
        value = float(value.reshape(()))
    return Constant(_number(value, what))


def _constants(u: object, names: tuple[str, ...]) -> list[float]:
    try:
        values = np.asarray(u, dtype=float)
    except (TypeError, ValueError):
        raise InputError(
            f"inputs must be None, numbers, signals, a mapping, StateFeedback or u(t, x); got {u!r}"
        ) from None
    if values.ndim == 0 and len(names) == 1:
        values = values.reshape(1)
    if values.shape != (len(names),):
        raise ShapeError(f"input vector has shape {values.shape}, expected ({len(names)},) for {_list(names)}")
    if not np.all(np.isfinite(values)):
        raise InputError("input values must be finite: give finite numbers")
    return [float(v) for v in values]


def _list(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"


def _unknown_input(name: str, names: Sequence[str]) -> UnknownNameError:
    close = difflib.get_close_matches(name, list(names), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return UnknownNameError(f"unknown input {name!r} (the model's inputs: {_list(names)}){hint}")


def compile_inputs(input_names: Sequence[str], u: object = None, n_states: int | None = None) -> CompiledInputs:
    """``resolve_inputs(input_names, u).compiled(n_states)``."""
    return resolve_inputs(input_names, u).compiled(n_states)


def _identity(function: Any) -> Any:
    return function


@functools.lru_cache(maxsize=2)
def load_evaluator(compiled: bool) -> Callable[..., None]:
    """``eval_inputs`` from ``signals_kernel.py``, loaded as a fresh module (jitted with numba or not)."""
    name = "robodyn._signals_kernel_" + ("jit" if compiled else "py")
    spec = importlib.util.spec_from_file_location(name, EVALUATOR_SOURCE_PATH)
    if spec is None or spec.loader is None:  # pragma: no cover - the file ships with the package
        raise InputError(f"cannot load the input evaluator from {EVALUATOR_SOURCE_PATH}")
    module = importlib.util.module_from_spec(spec)
    if compiled:
        import numba

        module.__dict__["jit"] = numba.njit(cache=False)
    else:
        module.__dict__["jit"] = _identity
    spec.loader.exec_module(module)
    return module.eval_inputs  # type: ignore[no-any-return]


def __getattr__(name: str) -> Any:
    """``parse_signal`` and ``parse_input_assignments`` live in :mod:`robodyn.signals_parse`."""
    if name in ("parse_signal", "parse_input_assignments"):
        from robodyn import signals_parse

        return getattr(signals_parse, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

