"""The signal classes u(t): constant, step, ramp, sine, pulse, table, sums, scalings, Python functions.

Import them from :mod:`robodyn.signals`, which also resolves a model's inputs and compiles them.

Signals are frozen dataclasses checked on construction. They evaluate at a time or an array of times,
are right-continuous (at a step time the value is the "after" value), report the ``breakpoints`` where
their value or slope jumps (integrators stop there), and combine with ``+ - *`` and ``/`` by numbers.
For the exact linear path a signal splits into sine components (:meth:`Signal.sine_terms`) and a
piecewise-affine remainder (:meth:`Signal.affine_pieces`).

Each class implements ``_eval(t, tp)``: the value at ``t`` on the piece containing ``tp`` (which side
of an edge, which table interval) — the same convention as the compiled evaluator's ``t_piece``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.errors import InputError, ShapeError
from robodyn.base.numbers import finite_number, is_real_number

__all__ = [
    "NO_EXACT_FORM",
    "Constant",
    "FunctionSignal",
    "Pulse",
    "Ramp",
    "Scaled",
    "Signal",
    "Sine",
    "Step",
    "Sum",
    "Table",
    "sorted_unique",
]

Array: TypeAlias = NDArray[np.float64]

MAX_EDGES = 10_000_000  # Periodic-pulse edges one breakpoints() call may return.
NO_EXACT_FORM = "a Python function input has no exact form: use method='dopri5'"


def sorted_unique(values: ArrayLike) -> Array:
    """The distinct values of a float vector, sorted: ``np.unique`` for breakpoints without it (numpy's imports
    ``numpy.ma`` on first use, ~15 ms of a new process's start-up). NaN never occurs here."""
    ordered = np.sort(np.asarray(values, dtype=float).ravel())
    if ordered.size < 2:
        return ordered
    keep = np.empty(ordered.size, dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def time_array(t: ArrayLike) -> Array:
    try:
        times = np.asarray(t, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"signal time must be a number or an array of numbers, got {t!r}") from None
    if not np.isfinite(times).all():  # (the method: no dispatch, a sampled loop's every instant asks it)
        raise InputError("signal time must be finite: remove nan/inf times")
    return times


def check_interval(t0: float, t1: float) -> tuple[float, float]:
    a, b = finite_number(t0, "interval start t0"), finite_number(t1, "interval end t1")
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
        times = time_array(t)
        values = np.asarray(self._eval(times, times), dtype=float)
        return float(values) if values.ndim == 0 else values

    def breakpoints(self, t0: float, t1: float) -> Array:
        """Sorted unique times strictly inside ``(t0, t1)`` where the value or the slope jumps."""
        a, b = check_interval(t0, t1)
        candidates = sorted_unique(self._breaks(a, b))
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
        a, b = check_interval(t0, t1)
        if not b > a:
            raise InputError(f"affine_pieces needs t0 < t1, got t0={a}, t1={b}")
        breaks = np.concatenate(([a], self.breakpoints(a, b), [b]))
        left, right = breaks[:-1], breaks[1:]
        middles = 0.5 * (left + right)
        pieces = np.where(middles < right, middles, left)  # two breaks 1 ulp apart: the middle may round up
        values, slopes = self._affine(left, pieces)
        return breaks, np.asarray(values, dtype=float), np.asarray(slopes, dtype=float)

    # --- arithmetic -----------------------------------------------------------------------------
    def __add__(self, other: object) -> Signal:
        if not isinstance(other, Signal | numbers.Real) or isinstance(other, bool):
            return NotImplemented
        return Sum((self, as_signal(other, "added term")))

    def __radd__(self, other: object) -> Signal:
        if not is_real_number(other):
            return NotImplemented
        return Sum((as_signal(other, "added term"), self))

    def __sub__(self, other: object) -> Signal:
        if not isinstance(other, Signal | numbers.Real) or isinstance(other, bool):
            return NotImplemented
        return self + (-as_signal(other, "subtracted term"))

    def __rsub__(self, other: object) -> Signal:
        if not is_real_number(other):
            return NotImplemented
        return as_signal(other, "term") + (-self)

    def __neg__(self) -> Signal:
        return _scaled(-1.0, self)

    def __mul__(self, other: object) -> Signal:
        if not is_real_number(other):
            return NotImplemented
        return _scaled(finite_number(other, "signal gain"), self)

    __rmul__ = __mul__

    def __truediv__(self, other: object) -> Signal:
        if not is_real_number(other):
            return NotImplemented
        divisor = finite_number(other, "signal divisor")
        if divisor == 0.0:
            raise InputError("a signal divided by zero: divide by a non-zero number")
        return _scaled(1.0 / divisor, self)


def as_signal(value: object, what: str) -> Signal:
    if isinstance(value, Signal):
        return value
    if is_real_number(value):
        return Constant(finite_number(value, what))
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
        _set(self, "value", finite_number(self.value, "Constant value"))

    def _eval(self, t: Array, tp: Array) -> Array:
        return np.full_like(t, self.value)


def _switch_time(t0: object, at: object, what: str) -> object:
    """The switch time given as ``at=`` (the unmistakable form) or positionally as ``t0``, not both."""
    if at is not None and t0 is not None:
        raise InputError(f"{what}: give the switch time once, as at= (or as the first argument)")
    if at is None and t0 is None:
        raise InputError(f"{what}: give the switch time at= (for example {what}(at=1.0, ...))")
    return at if at is not None else t0


@dataclass(frozen=True, slots=True, init=False)
class Step(Signal):
    """u(t) = before for t < at, after for t >= at.

    Write it with keywords, ``Step(at=1.0, before=0.0, after=2.0)``; the positional form ``Step(t0, before,
    after)`` puts the switch time first. A step whose two levels are equal is constant: robodyn warns, since
    ``Step(0.0, 1.0, 1.0)`` is more often a mistaken order of arguments than a wish.
    """

    t0: float
    before: float
    after: float

    def __init__(self, t0: float | None = None, before: float | None = None, after: float | None = None, *,
                 at: float | None = None):
        _set(self, "t0", finite_number(_switch_time(t0, at, "Step"), "Step at (the switch time)"))
        for name, value in (("before", before), ("after", after)):
            if value is None:
                raise InputError(f"Step: give the value {name}= (Step(at=..., before=..., after=...))")
            _set(self, name, finite_number(value, f"Step {name}"))
        if self.before == self.after:
            import warnings

            from robodyn.base.errors import RobodynWarning

            warnings.warn(f"Step(at={self.t0:g}, before={self.before:g}, after={self.after:g}) is constant "
                          f"{self.before:g}: the switch time comes first; write Step(at=..., before=..., "
                          "after=...)", RobodynWarning, stacklevel=2)

    def _eval(self, t: Array, tp: Array) -> Array:
        return np.where(tp < self.t0, self.before, self.after)

    def _breaks(self, t0: float, t1: float) -> Array:
        return np.array([self.t0])


@dataclass(frozen=True, slots=True, init=False)
class Ramp(Signal):
    """u(t) = initial for t < at, initial + slope*(t - at) for t >= at: ``Ramp(at=1.0, slope=2.0)`` (or
    positionally ``Ramp(t0, slope, initial)``)."""

    t0: float
    slope: float
    initial: float = 0.0

    def __init__(self, t0: float | None = None, slope: float | None = None, initial: float = 0.0, *,
                 at: float | None = None):
        _set(self, "t0", finite_number(_switch_time(t0, at, "Ramp"), "Ramp at (the start time)"))
        if slope is None:
            raise InputError("Ramp: give the slope= (Ramp(at=..., slope=..., initial=...))")
        _set(self, "slope", finite_number(slope, "Ramp slope"))
        _set(self, "initial", finite_number(initial, "Ramp initial"))

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
            _set(self, name, finite_number(getattr(self, name), f"Sine {name}"))

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


@dataclass(frozen=True, slots=True, init=False)
class Pulse(Signal):
    """u(t) = base + amplitude on [at, at + width), base elsewhere: ``Pulse(at=1.0, width=0.5, amplitude=2.0)``
    (or positionally ``Pulse(t0, width, amplitude, base, period)``).

    With ``period`` the pulse repeats on [at + k*period, at + k*period + width) for k = 0, 1, 2, ...;
    before ``at`` the value is ``base``. The period must exceed the width.
    """

    t0: float
    width: float
    amplitude: float
    base: float = 0.0
    period: float | None = None

    def __init__(self, t0: float | None = None, width: float | None = None, amplitude: float | None = None,
                 base: float = 0.0, period: float | None = None, *, at: float | None = None):
        _set(self, "t0", finite_number(_switch_time(t0, at, "Pulse"), "Pulse at (the start time)"))
        for name, value in (("width", width), ("amplitude", amplitude)):
            if value is None:
                raise InputError(f"Pulse: give the {name}= (Pulse(at=..., width=..., amplitude=...))")
            _set(self, name, finite_number(value, f"Pulse {name}"))
        _set(self, "base", finite_number(base, "Pulse base"))
        _set(self, "period", period)
        self._check_period()

    def _check_period(self) -> None:
        if self.width <= 0.0:
            raise InputError(f"Pulse width must be > 0, got {self.width}: give a positive width")
        if self.period is not None:
            _set(self, "period", finite_number(self.period, "Pulse period"))
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
        from robodyn.signals.tables import read_table_csv

        times, values = read_table_csv(path, column)
        return cls(times, values, interpolation)

    @property
    def _linear(self) -> bool:
        return self.interpolation == "linear"

    def _interval(self, tp: Array) -> NDArray[np.intp]:
        """Index of the last table time <= ``tp`` (-1 before the first time)."""
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
        array = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"Table {what} must be numbers, got {value!r}") from None
    if array.ndim > 1:
        raise ShapeError(f"Table {what} must be one-dimensional, got shape {array.shape}")
    array = array.reshape(-1)
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
            signal = as_signal(term, "Sum term")
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
        _set(self, "gain", finite_number(self.gain, "Scaled gain"))
        _set(self, "signal", as_signal(self.signal, "Scaled signal"))

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
