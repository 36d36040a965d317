"""A sweep's definition (:class:`SweepPlan`), checked before any work: what varies and how, how runs are reduced,
how they are cut into chunks, and what each chunk may cost.

Evenly spaced grid axes are kept as :class:`Span` (start, stop, count), never as arrays: a grid of 10^8 points is
a few numbers in the plan and in the manifest, and each chunk computes its own values from them. Values the
user lists are kept as given, at most :data:`MAX_VALUES` per name. Every limit is checked before anything is
allocated or written; a plan that passes :func:`make_plan` runs with memory bounded by its chunk.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
from collections.abc import Callable, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError
from robodyn.base.numbers import finite_number
from robodyn.model.system import real_array

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["DEFAULT_CHUNK", "MAX_CHUNKS", "MAX_CHUNK_BYTES", "MAX_SAMPLES", "MAX_VALUES", "REDUCERS", "Span",
           "SweepPlan", "make_plan", "parse_range", "reduced_columns"]

REDUCERS: Final = ("final", "max_abs", "settling_time", "converged", "first_event", "energy_drift")
DEFAULT_CHUNK: Final = 10_000  # trajectories per compiled batch: ~10 MB of states at 101 points, 2 states
MAX_SAMPLES: Final = 100_000_000  # runs in one sweep
MAX_VALUES: Final = 1_000_000  # values listed for one name (evenly spaced ones are a Span: no limit but MAX_SAMPLES)
MAX_CHUNKS: Final = 100_000  # parts of one sweep (each is a file and a record in the manifest)
MAX_CHUNK_BYTES: Final = 2_000_000_000  # the stored states, inputs and outputs of one chunk
MAX_SEED: Final = 2**64 - 1


@dataclass(frozen=True)
class Span:
    """``count`` evenly spaced values from ``start`` to ``stop``, both included: ``np.linspace(start, stop,
    count)`` without the array (an axis of 10^8 values is three numbers); ``start:stop:count`` on the CLI.

    :meth:`take` gives the values at some indices, bit for bit those of ``np.linspace``.
    """

    start: float
    stop: float
    count: int

    def __post_init__(self) -> None:
        for name in ("start", "stop"):
            message = "Span: {what} must be a finite real number, got {value!r}"
            object.__setattr__(self, name, finite_number(getattr(self, name), name, not_real=message,
                                                         not_finite=message))
        object.__setattr__(self, "count", _whole(self.count, "Span: count", 1, MAX_SAMPLES))

    def __len__(self) -> int:
        return self.count

    def take(self, index: np.ndarray) -> np.ndarray:
        """The values at the integer positions ``index`` (any shape, each in ``[0, count)``), as float64."""
        position = np.asarray(index)
        div = self.count - 1
        if div == 0:
            return np.full(position.shape, self.start)
        delta = self.stop - self.start
        step = delta / div
        scaled = position.astype(float)
        values = (scaled / div) * delta if step == 0 else scaled * step  # np.linspace's two branches
        return np.where(position == div, self.stop, values + self.start)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        values = self.take(np.arange(self.count))
        return values if dtype is None else values.astype(dtype)

    def definition(self) -> dict[str, Any]:
        """The span as the manifest writes it: ``{"start", "stop", "count"}``."""
        return {"start": self.start, "stop": self.stop, "count": self.count}


Axis = Span | tuple[float, ...]


def parse_range(text: str, where: str) -> Span:
    """``start:stop:count`` (count evenly spaced values, both ends included), or one number, as a :class:`Span`.

    The count is checked against :data:`MAX_SAMPLES` before anything is allocated."""
    from robodyn.model.quantities import parse_number

    parts = text.split(":")
    if len(parts) == 1:
        value = parse_number(parts[0], where=where)
        return Span(value, value, 1)
    if len(parts) != 3:
        raise InputError(f"{where}: {text!r} is not a range: write start:stop:count (e.g. -3:3:101) or one value")
    start, stop = (parse_number(p, where=where) for p in parts[:2])
    digits = parts[2].strip()
    if not (digits.isascii() and digits.isdigit()) or not digits.lstrip("0"):
        raise InputError(f"{where}: the count in {text!r} must be a whole number >= 1")
    significant = digits.lstrip("0")
    if len(significant) > len(str(MAX_SAMPLES)) or int(significant) > MAX_SAMPLES:  # int() of few digits only
        raise InputError(f"{where}: the count in {text!r} is more than the limit of {MAX_SAMPLES} samples in a "
                         "sweep: coarsen the grid, or sample it with --samples")
    return Span(start, stop, int(significant))


@dataclass(frozen=True)
class SweepPlan:
    """A sweep, defined: what varies and how, how runs are reduced, and how they are cut into chunks.

    ``columns`` are the swept names (parameters and states), ``grid`` their axes (a :class:`Span` or a tuple of
    values; the sweep is their product) or, for a random sweep, ``ranges`` (low, high) with ``samples`` and
    ``seed``. :meth:`chunk_values` gives the swept values of chunk k, so any process (a Dask worker) can
    rebuild its chunk from the plan alone.
    """

    model_text: str
    model_name: str
    columns: tuple[str, ...]
    grid: tuple[Axis, ...] = ()
    ranges: tuple[tuple[float, float], ...] = ()
    samples: int = 0
    seed: int = 0
    t_span: tuple[float, float] = (0.0, 1.0)
    points: int = 101
    reducers: tuple[str, ...] = ("final",)
    method: str = "dopri5"
    rtol: float = 1e-6
    atol: float = 1e-9
    x0: tuple[float, ...] = ()
    band: float = 0.02
    target: tuple[float, ...] = ()
    tolerance: float = 1e-3
    chunk_size: int = DEFAULT_CHUNK
    events: tuple[str, ...] = ()
    u: tuple[float, ...] = ()
    gain: tuple[tuple[float, ...], ...] = ()
    x_ref: tuple[float, ...] = ()
    callables: tuple[Callable[..., Any], ...] = field(default=(), compare=False)

    @property
    def count(self) -> int:
        """Samples in the sweep."""
        return self.samples if self.ranges else math.prod(len(v) for v in self.grid)

    @property
    def chunks(self) -> int:
        return -(-self.count // self.chunk_size)

    def chunk_rows(self, k: int) -> int:
        """Rows of chunk ``k``."""
        return min(self.chunk_size, self.count - k * self.chunk_size)

    def chunk_values(self, k: int) -> np.ndarray:
        """The swept values of chunk ``k``: ``(rows, len(columns))``, rows in sample order."""
        first, stop = k * self.chunk_size, min((k + 1) * self.chunk_size, self.count)
        if self.ranges:  # one generator per chunk, seeded by (seed, k): any chunk alone, the same numbers
            rng = np.random.default_rng([self.seed, k])
            low, high = np.array(self.ranges).T
            return rng.uniform(low, high, (stop - first, len(self.columns)))
        index = np.arange(first, stop)
        if not self.grid:
            return np.zeros((len(index), 0))
        digits = np.unravel_index(index, [len(axis) for axis in self.grid])
        return np.column_stack([axis.take(d) if isinstance(axis, Span) else np.asarray(axis)[d]
                                for axis, d in zip(self.grid, digits)])

    def definition(self) -> dict[str, Any]:
        """The plan as JSON-ready data (the manifest's ``sweep``; callables by name, a Span as its three numbers)."""
        return {"columns": list(self.columns),
                "grid": [axis.definition() if isinstance(axis, Span) else list(axis) for axis in self.grid],
                "ranges": [list(r) for r in self.ranges], "samples": self.samples, "seed": self.seed,
                "t_span": list(self.t_span), "points": self.points, "reducers": list(self.reducers),
                "callables": [getattr(c, "__qualname__", repr(c)) for c in self.callables], "method": self.method,
                "rtol": self.rtol, "atol": self.atol, "x0": list(self.x0), "band": self.band,
                "target": list(self.target), "tolerance": self.tolerance, "chunk_size": self.chunk_size,
                "events": list(self.events), "u": list(self.u), "gain": [list(r) for r in self.gain],
                "x_ref": list(self.x_ref)}

    def matches(self, definition: Any) -> bool:
        """Whether ``definition`` (a manifest's ``sweep``) defines this sweep. An axis written out as values by
        an older robodyn matches the Span of the same values."""
        mine = json.loads(json.dumps(self.definition()))
        if not isinstance(definition, dict) or definition.keys() != mine.keys():
            return False
        if any(definition[key] != mine[key] for key in mine if key != "grid"):
            return False
        theirs = definition["grid"]
        return isinstance(theirs, list) and len(theirs) == len(self.grid) and all(
            _same_axis(old, new, axis) for old, new, axis in zip(theirs, mine["grid"], self.grid))


def _same_axis(old: Any, new: Any, axis: Axis) -> bool:
    if old == new:
        return True
    return (isinstance(axis, Span) and isinstance(old, list) and len(old) == axis.count
            and all(type(v) is float for v in old) and np.array_equal(np.array(old), np.asarray(axis)))


def _whole(value: Any, name: str, low: int, high: int) -> int:
    """``value`` as an int in [low, high] (numpy integers too; not bool, float or text)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral) or not low <= int(value) <= high:
        raise InputError(f"{name} must be a whole number in [{low}, {high}], got {value!r}")
    return int(value)


def _real(value: Any, name: str, *, positive: bool = False) -> float:
    """``value`` as a finite float (>= 0, or > 0 with ``positive``)."""
    number = real_array(value, name, one=True)
    if number.size != 1 or not math.isfinite(float(number.reshape(-1)[0])):
        raise InputError(f"{name} must be one finite number, got {value!r}")
    result = float(number.reshape(-1)[0])
    if result < 0 or (positive and result == 0):
        raise InputError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value!r}")
    return result


def _span(t_span: Any) -> tuple[float, float]:
    times = real_array(t_span, "sweep: t_span")
    if times.shape not in ((), (2,)):
        raise InputError(f"sweep: t_span must be T or (t0, T), got {t_span!r}")
    span = (0.0, float(times)) if times.shape == () else (float(times[0]), float(times[1]))
    if not (math.isfinite(span[0]) and math.isfinite(span[1]) and span[1] > span[0]):
        raise InputError(f"sweep: t_span must go forward in time, got {t_span!r}")
    return span


def _reducers(reduce: Any) -> tuple[tuple[str, ...], tuple[Callable[..., Any], ...]]:
    items = [reduce] if isinstance(reduce, str) or callable(reduce) else reduce
    if not isinstance(items, Sequence) or not items:
        raise InputError(f"sweep: reduce must be reducer names ({', '.join(REDUCERS)}) or callables, got {reduce!r}")
    for item in items:
        if isinstance(item, str) and item not in REDUCERS:
            raise InputError(f"sweep: unknown reducer {item!r}: use {', '.join(REDUCERS)} or a callable")
        if not isinstance(item, str) and not callable(item):
            raise InputError(f"sweep: reduce: {item!r} is neither a reducer name ({', '.join(REDUCERS)}) nor a "
                             "callable on a chunk's BatchTrajectory")
    return tuple(r for r in items if isinstance(r, str)), tuple(r for r in items if not isinstance(r, str))


def _method(method: Any) -> str:
    from robodyn.integrate.methods.registry import METHOD_NAMES, lookup

    found = lookup(method)  # InputError listing the names
    if found.family == "fixed":
        usable = ", ".join(m for m in METHOD_NAMES if lookup(m).family != "fixed")
        raise InputError(f"sweep: method {method!r} takes a fixed step (dt), which a sweep does not set: use one "
                         f"of {usable}")
    return str(method)


def make_plan(model: ModelContract, text: str, name: str, over: Any, t_span: Any, reduce: Any, samples: Any, seed: Any,
              x0: Any, chunk_size: Any, points: Any, method: Any, rtol: Any, atol: Any, band: Any, target: Any,
              tolerance: Any) -> SweepPlan:
    """The plan of ``robodyn.sweep``'s arguments, every one checked (InputError naming it) before any work."""
    if not isinstance(over, Mapping) or not over:
        raise InputError(f"sweep: nothing to sweep: give over={{name: values, ...}}, got {over!r}")
    known = (*model.states, *model.parameters, *model.inputs)
    for key in over:
        if not isinstance(key, str) or (key not in known and not key.startswith("K[")):
            from robodyn.base.names import did_you_mean

            raise InputError(f"sweep: {key!r} is not a parameter, state or input of {model.name!r} (parameters: "
                             f"{', '.join(model.parameters) or 'none'}; states: {', '.join(model.states)}; inputs: "
                             f"{', '.join(model.inputs) or 'none'}; gains: K[i,j])"
                             f"{did_you_mean(str(key), list(known))}")
    names, callables = _reducers(reduce)
    span = _span(t_span)
    chunk_size = _whole(chunk_size, "sweep: chunk_size", 1, MAX_SAMPLES)
    points = _whole(points, "sweep: points", 2, 1_000_000_000)
    if isinstance(seed, bool | np.bool_) or not isinstance(seed, numbers.Integral) or not 0 <= int(seed) <= MAX_SEED:
        raise InputError(f"sweep: seed {seed!r}: the seed must be a whole number >= 0 (and < 2**64)")
    for option, value in (("x0", x0), ("target", target)):
        if value is not None and not isinstance(value, Mapping):
            raise InputError(f"sweep: {option} must be {{state: value, ...}}, got {value!r}")
    grid: tuple[Axis, ...] = ()
    ranges: tuple[tuple[float, float], ...] = ()
    if samples is not None:
        samples = _whole(samples, "sweep: samples", 1, MAX_SAMPLES)
        ranges = tuple(_range(k, v) for k, v in over.items())
    else:
        grid = tuple(_values(k, v) for k, v in over.items())
        if math.prod(len(axis) for axis in grid) > MAX_SAMPLES:
            raise InputError(f"sweep: the grid has {math.prod(len(axis) for axis in grid)} points, more than the "
                             f"limit of {MAX_SAMPLES}: coarsen it or sample it")
    start = model.state_vector(x0 or {}, default=0.0)
    goal = model.state_vector(target, default=0.0) if target is not None else ()
    plan = SweepPlan(text, name, tuple(over), grid, ranges, samples or 0, int(seed), span, points, names,
                     _method(method), _real(rtol, "sweep: rtol", positive=True), _real(atol, "sweep: atol"),
                     tuple(start.tolist()), _real(band, "sweep: band"), tuple(np.asarray(goal).tolist()),
                     _real(tolerance, "sweep: tolerance"), chunk_size, callables=callables)
    _check_size(plan, model)
    _check_columns(plan, model)
    return plan


def reduced_columns(reducers: Sequence[str], states: Sequence[str]) -> list[str]:
    """The table columns of the named reducers (``final_<state>``, ``max_abs_<state>``, or the reducer's name)."""
    columns: list[str] = []
    for name in reducers:
        columns += [f"{name}_{s}" for s in states] if name in ("final", "max_abs") else [name]
    return columns


def _check_columns(plan: SweepPlan, model: ModelContract) -> None:
    """Each column of the table named once: a swept name is neither ``sample`` nor a reducer's column."""
    written = ["sample", *reduced_columns(plan.reducers, model.states)]
    clash = next((name for name in plan.columns if name in written), None)
    if clash is not None:
        raise InputError(f"sweep: the swept name {clash!r} is also a column the table gets from "
                         f"{'the sample numbers' if clash == 'sample' else 'a reducer'} (columns: sample, the swept "
                         f"names, {', '.join(written[1:])}): each column is named once; rename {clash!r} in the model "
                         "or reduce otherwise")


def _check_size(plan: SweepPlan, model: ModelContract) -> None:
    """The number of parts and the memory of one chunk, within their limits."""
    if plan.chunks > MAX_CHUNKS:
        raise InputError(f"sweep: {plan.count} samples in chunks of {plan.chunk_size} make {plan.chunks} chunks, "
                         f"more than the limit of {MAX_CHUNKS}: give chunk_size >= {-(-plan.count // MAX_CHUNKS)}")
    rows = min(plan.chunk_size, plan.count)
    stored = rows * plan.points * (2 * model.n_states + model.n_inputs + model.n_outputs) * 8
    if stored > MAX_CHUNK_BYTES:
        raise InputError(f"sweep: a chunk of {rows} trajectories at {plan.points} points holds ~{stored / 1e9:.1f} GB "
                         f"of states, inputs and outputs, more than the limit of {MAX_CHUNK_BYTES / 1e9:g} GB: lower "
                         "chunk_size (or points)")


def with_signals(plan: SweepPlan, model: ModelContract, u: Mapping[str, float] | None, feedback: Any) -> SweepPlan:
    """The plan with its constant inputs and feedback gains (checked against the swept names)."""
    if u is not None and not isinstance(u, Mapping):
        raise InputError(f"sweep: u must be {{input: value, ...}}, got {u!r}")
    base = model.input_vector(dict(u or {}))
    gain: tuple[tuple[float, ...], ...] = ()
    x_ref: tuple[float, ...] = ()
    if feedback is not None:
        K = real_array(getattr(feedback, "K", None), "sweep: feedback's K")
        if K.shape != (model.n_inputs, model.n_states) or not np.all(np.isfinite(K)):
            raise InputError(f"sweep: feedback must be a robodyn.StateFeedback with K of shape ({model.n_inputs}, "
                             f"{model.n_states}), got {feedback!r}")
        gain = tuple(tuple(row) for row in K.tolist())
        reference = getattr(feedback, "x_ref", None)
        x_ref = tuple(model.state_vector(reference).tolist()) if reference is not None else ()
    for name in plan.columns:
        if name.startswith("K["):
            try:
                r, c = (int(v) for v in name[2:-1].split(","))
            except ValueError:
                r = c = -1
            if not gain or not (0 <= r < model.n_inputs and 0 <= c < model.n_states) or not name.endswith("]"):
                raise InputError(f"sweep: {name!r} names no gain: give feedback=StateFeedback(K, ...) and sweep "
                                 f"K[i,j] with 0 <= i < {model.n_inputs}, 0 <= j < {model.n_states}")
    return dataclasses.replace(plan, u=tuple(base.tolist()), gain=gain, x_ref=x_ref)


def _values(name: str, values: Any) -> Axis:
    """A grid axis: a Span (given, or a ``range``) or the listed values (at most :data:`MAX_VALUES`)."""
    if isinstance(values, Span):
        return values
    if isinstance(values, range):  # len() of range(10**20) overflows: counted here
        count = max(0, (values.stop - values.start + values.step - (1 if values.step > 0 else -1)) // values.step)
        if not 1 <= count <= MAX_SAMPLES:
            raise InputError(f"sweep: over[{name!r}] = {values!r} has {count} values: give 1 to {MAX_SAMPLES}")
        return Span(values.start, values.start + values.step * (count - 1), count)
    size = values.size if isinstance(values, np.ndarray) else len(values) if isinstance(values, Sized) else 0
    if size > MAX_VALUES and not isinstance(values, str):
        raise InputError(f"sweep: over[{name!r}] lists {size} values, more than the limit of {MAX_VALUES}: give "
                         "evenly spaced values as Span(start, stop, count) (from robodyn.sweep.plan import Span)")
    array = real_array(values, f"sweep: over[{name!r}]").reshape(-1) if not isinstance(values, str) else None
    if array is None or array.size == 0 or array.size > MAX_VALUES or not np.all(np.isfinite(array)):
        raise InputError(f"sweep: over[{name!r}] must be finite numbers (a list, an array, a range or a Span), got "
                         f"{values!r}"[:300])
    return tuple(array.tolist())


def _range(name: str, value: Any) -> tuple[float, float]:
    given = value is not None and not isinstance(value, str)
    bounds = real_array(value, f"sweep: with samples, over[{name!r}]") if given else None
    if bounds is None or bounds.shape != (2,):
        raise InputError(f"sweep: with samples, over[{name!r}] must be (low, high), got {value!r}")
    low, high = float(bounds[0]), float(bounds[1])
    if not (math.isfinite(low) and math.isfinite(high) and high >= low):
        raise InputError(f"sweep: over[{name!r}] = ({low}, {high}) is not a range (low <= high, finite)")
    return low, high
