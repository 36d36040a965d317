"""A model's resolved inputs and their compiled form: :class:`Inputs`, :class:`StateFeedback`, the packer.

:func:`resolve_inputs` turns what the user gave for a model's inputs into :class:`Inputs`;
:meth:`Inputs.compiled` packs it into the arrays the kernels read,
``inp = (codes, coef, tdata, K, xref, flags)``:

- ``codes`` int64 ``(n_terms, 2)``: channel index, kind code;
- ``coef`` float64 ``(n_terms, N_COEF)``: the gain, then the kind's numbers (unused slots are 0);
- ``tdata`` float64 ``(k,)``: for each table its n times then its n values, table after table;
- ``K`` float64 ``(m, n)`` and ``xref`` float64 ``(n,)``: state feedback (zeros without feedback); for a
  :class:`~robodyn.signals.tracking.TrackingFeedback`, its table ``(T, m n + 3 n)`` and its knots ``(T,)``;
- ``flags`` int64 ``(2,)``: ``flags[0]`` is 1 when state feedback is present, 2 for a tracking feedback (then
  ``flags`` has a third entry, 1 when its gain is held between knots), else 0; ``flags[1]`` is 1 when
  the inputs are held between breakpoints (only constants, steps, pulses and zero-order-hold tables, no
  feedback), so integrators evaluate them once per segment between stop points.

Row ``j`` adds ``coef[j, 0] * f_j(t)`` to channel ``codes[j, 0]``; the kind codes and the numbers each
kind keeps in ``coef[j, 1:]`` are the table in :mod:`robodyn.signals.kinds`.

The evaluator ``eval_inputs(t, t_piece, x, inp, out)`` is the numba-compatible source
``robodyn/signals/kernel.py`` (:data:`EVALUATOR_SOURCE_PATH`); :func:`load_evaluator` loads it.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.errors import InputError, ShapeError, UnknownNameError
from robodyn.base.numbers import finite_number
from robodyn.signals.core import (
    Array,
    Constant,
    FunctionSignal,
    Pulse,
    Ramp,
    Scaled,
    Signal,
    Sine,
    Step,
    Sum,
    Table,
    as_signal,
    check_interval,
    sorted_unique,
    time_array,
)
from robodyn.signals.kinds import CONSTANT, HELD_KINDS, KIND_CODES, N_COEF, PULSE, RAMP, SINE, STEP, WHITE_NOISE
from robodyn.signals.noise import WhiteNoise
from robodyn.signals.tracking import TrackingFeedback

__all__ = [
    "EVALUATOR_SOURCE_PATH",
    "CompiledInputs",
    "Inputs",
    "StateFeedback",
    "compile_inputs",
    "load_evaluator",
    "resolve_inputs",
]

#: The compiled inputs passed to ``eval_inputs``: ``(codes, coef, tdata, K, xref, flags)``.
CompiledInputs: TypeAlias = tuple[NDArray[np.int64], Array, Array, Array, Array, NDArray[np.int64]]

#: The evaluator template ``eval_inputs`` (numba-compatible source, read as text or loaded by load_evaluator).
EVALUATOR_SOURCE_PATH: Final = Path(__file__).with_name("kernel.py")


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)  # frozen dataclasses normalise their fields in __post_init__


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
        _set(self, "u_ref", tuple(as_signal(s, f"StateFeedback u_ref[{i}]") for i, s in enumerate(u_ref)))

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
        state = _state(x, self.K.shape[1], ndim=1)
        reference = np.array([s(finite_number(t, "time t")) for s in self.references], dtype=float)
        return reference - self.K @ (state - self.reference_state)

    def breakpoints(self, t0: float, t1: float) -> Array:
        return _union([s.breakpoints(t0, t1) for s in self.references])

    def _repr_html_(self) -> str:
        from robodyn.display import block, heading, html_table, matrix_html

        K = self.K
        parts = [heading("State feedback u = u_ref - K (x - x_ref)"),
                 matrix_html(K, [f"u{i + 1}" for i in range(K.shape[0])], [f"x{j + 1}" for j in range(K.shape[1])],
                             title="K")]
        if self.x_ref is not None:
            parts.append(html_table([("x_ref", ", ".join(f"{v:.6g}" for v in self.x_ref))], row_header=True))
        return block(parts)

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


def _state(x: object, n: int | None, ndim: int) -> Array:
    """The state ``x`` (n,) (``ndim`` 1) or states (T, n) (``ndim`` 2) as float64; ``n`` None: any n."""
    if x is None:
        raise InputError("these inputs depend on the state: pass the state x")
    try:
        state = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"state must be numbers, got {x!r}") from None
    if state.ndim != ndim or (n is not None and state.shape[-1] != n):
        expected = ("T, " if ndim == 2 else "") + (str(n) if n is not None else "n")
        raise ShapeError(f"state has shape {state.shape}, expected ({expected}) for the state-dependent inputs")
    return state


def _union(arrays: Sequence[Array]) -> Array:
    return sorted_unique(np.concatenate([np.empty(0), *arrays]))


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
        return CONSTANT, [leaf.value]
    if isinstance(leaf, Step):
        return STEP, [leaf.t0, leaf.before, leaf.after]
    if isinstance(leaf, Ramp):
        return RAMP, [leaf.t0, leaf.slope, leaf.initial]
    if isinstance(leaf, Sine):
        return SINE, [leaf.amplitude, leaf.omega, leaf.phase, leaf.offset]
    if isinstance(leaf, Pulse):
        return PULSE, [leaf.t0, leaf.width, leaf.amplitude, leaf.base, leaf.period or 0.0]
    if isinstance(leaf, Table):
        offset = sum(a.size for a in tdata)
        tdata.extend((leaf.times, leaf.values))
        return KIND_CODES["table_" + leaf.interpolation], [float(offset), float(leaf.times.size)]
    if isinstance(leaf, WhiteNoise):
        return WHITE_NOISE, [leaf.start, leaf.sample, leaf.std, leaf.mean, float(leaf.seed)]
    raise InputError(f"{type(leaf).__name__} has no compiled form: use an interpreted method")


@dataclass(frozen=True, slots=True, eq=False)
class Inputs:
    """The resolved inputs of a model (see :func:`resolve_inputs`).

    Exactly one of four forms: per-channel ``signals`` (the others None), a ``feedback`` law, a ``tracking``
    feedback u*(t) - K(t) (x - x*(t)) or a Python ``function`` u(t, x) (signals all None for the last three).
    """

    names: tuple[str, ...]
    signals: tuple[Signal | None, ...]
    feedback: StateFeedback | None = None
    function: Callable[[float, Array], ArrayLike] | None = None
    tracking: TrackingFeedback | None = None

    def __post_init__(self) -> None:
        if len(self.signals) != len(self.names):
            raise ShapeError(f"Inputs has {len(self.signals)} signals for {len(self.names)} names")

    @property
    def depends_on_state(self) -> bool:
        return self.feedback is not None or self.function is not None or self.tracking is not None

    @property
    def is_compilable(self) -> bool:
        if self.function is not None:
            return False
        if self.feedback is not None:
            return self.feedback.is_compilable
        if self.tracking is not None:
            return True
        return all(s is not None and s.is_compilable for s in self.signals)

    def _channels(self) -> tuple[Signal, ...]:
        if self.feedback is not None:
            return self.feedback.references
        if self.tracking is not None:
            return self.tracking.references
        return tuple(s if s is not None else Constant(0.0) for s in self.signals)

    def evaluate(self, t: float, x: ArrayLike | None = None) -> Array:
        """u (m,) at time ``t``; the state ``x`` (n,) is needed only for feedback or a function u(t, x)."""
        time = finite_number(t, "time t")
        if self.function is not None:
            return self._call_function(time, _state(x, None, ndim=1))
        if self.feedback is not None:
            return self.feedback(time, _state(x, self.feedback.K.shape[1], ndim=1))
        if self.tracking is not None:
            return self.tracking(time, _state(x, self.tracking.n_states, ndim=1))
        return np.array([s(time) for s in self._channels()], dtype=float).reshape(len(self.names))

    def evaluate_many(self, ts: ArrayLike, xs: ArrayLike | None = None) -> Array:
        """u (T, m) at the times ``ts`` (T,); the states ``xs`` (T, n) only for state-dependent inputs."""
        times = time_array(ts).reshape(-1)
        if not self.depends_on_state:
            return self._columns(times)
        n = self.feedback.K.shape[1] if self.feedback is not None else None
        if self.tracking is not None:
            n = self.tracking.n_states
        states = _state(xs, n, ndim=2)
        if states.shape[0] != times.size:
            raise ShapeError(f"{times.size} times but {states.shape[0]} states: give one state row per time")
        if self.function is not None:
            return np.array([self._call_function(t, x) for t, x in zip(times, states)]).reshape(times.size, -1)
        if self.tracking is not None:
            law = self.tracking
            return np.array([law(t, x) for t, x in zip(times, states)]).reshape(times.size, -1)
        assert self.feedback is not None
        return self._columns(times) - (states - self.feedback.reference_state) @ self.feedback.K.T

    def _columns(self, times: Array) -> Array:
        """The channel signals at ``times`` (T,) as (T, m)."""
        columns = [np.asarray(s(times), dtype=float) for s in self._channels()]
        return np.stack(columns, axis=1) if columns else np.zeros((times.size, 0))

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
        check_interval(t0, t1)
        if self.function is not None:
            return np.empty(0)
        knots = [self.tracking.breakpoints(t0, t1)] if self.tracking is not None else []
        return _union([*knots, *(s.breakpoints(t0, t1) for s in self._channels())])

    def state_gain(self, t: float) -> Array | None:
        """du/dx ``(m, n)`` at time ``t``: -K under state feedback, -K(t) under a tracking feedback, None for a
        Python function u(t, x), zeros (``(m, 0)``) for time signals."""
        if self.function is not None:
            return None
        if self.feedback is not None:
            return -np.asarray(self.feedback.K, dtype=float)
        if self.tracking is not None:
            return -self.tracking.gain(t)
        return np.zeros((len(self.names), 0))

    def left_limits(self, ts: Array, xs: Array, us: Array) -> Array | None:
        """The inputs just before each time of ``ts`` (T,), ``(T, m)``: ``us`` (the inputs at ``ts``) with the
        rows at a breakpoint (where a signal may jump: a step's edge) evaluated an instant before it; None when no
        time of ``ts`` is a breakpoint. What a curve drawn through a run needs on the left of a jump."""
        if ts.size < 2:
            return None
        stops = self.breakpoints(float(ts[0]), float(ts[-1]))
        at = np.flatnonzero(np.isin(ts, stops))
        if at.size == 0:
            return None
        left = np.array(us, dtype=float, copy=True)
        left[at] = self.evaluate_many(np.nextafter(ts[at], -np.inf), xs[at])
        return left

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
        held = True
        for channel, signal in enumerate(self._channels()):
            for gain, leaf in _terms(signal):
                if isinstance(leaf, FunctionSignal):
                    python.append((channel, gain, leaf))
                elif not (isinstance(leaf, Constant) and leaf.value == 0.0):
                    kind, fields = _leaf_row(leaf, tdata)
                    held = held and kind in HELD_KINDS
                    codes.append((channel, kind))
                    rows.append([gain, *fields, *[0.0] * (N_COEF - 1 - len(fields))])
        m = len(self.names)
        if self.feedback is not None:
            n = self.feedback.K.shape[1]
            if n_states is not None and n_states != n:
                raise ShapeError(f"StateFeedback K has {n} columns but the model has {n_states} states")
            K, xref = self.feedback.K, self.feedback.reference_state
        elif self.tracking is not None:
            n = self.tracking.n_states
            if n_states is not None and n_states != n:
                raise ShapeError(f"TrackingFeedback K has {n} columns but the model has {n_states} states")
            xref, K, hold = self.tracking.packed()
        else:
            K, xref = np.zeros((m, n_states or 0)), np.zeros(n_states or 0)
        # fresh, writable, C-contiguous arrays: numba types read-only arrays differently (a new compilation)
        inp = (
            np.array(codes, dtype=np.int64, order="C").reshape(-1, 2),
            np.array(rows, dtype=np.float64, order="C").reshape(-1, N_COEF),
            np.concatenate([np.empty(0), *tdata]),
            np.array(K, dtype=np.float64, order="C"),
            np.array(xref, dtype=np.float64, order="C"),
            np.array([int(self.feedback is not None), int(self.feedback is None and held)], dtype=np.int64),
        )
        if self.tracking is not None:
            inp = (*inp[:5], np.array([2, 0, hold], dtype=np.int64))
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
        (inputs left out are 0); a :class:`Signal` when m == 1; a trajectory (a :class:`robodyn.Trajectory`,
        an optimal control solution): each input from its column of the same name, as a :class:`Table` (held
        between rows, linear where the trajectory's ``input_interpolation`` says so), also as a mapping value
        ``{name: trajectory}``; a :class:`StateFeedback`; or a Python
        callable ``u(t, x) -> (m,)`` (interpreted path only); a :class:`TrackingFeedback` (``robodyn.tvlqr``'s
        ``feedback``: compiled like StateFeedback).

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
    if isinstance(u, TrackingFeedback):
        if u.K.shape[1] != m:
            raise ShapeError(f"TrackingFeedback K has {u.K.shape[1]} rows but the model has {m} inputs "
                             f"({_list(names)})")
        return Inputs(names, (None,) * m, tracking=u)
    if isinstance(u, Signal):
        if m != 1:
            raise ShapeError(f"one signal given for {m} inputs ({_list(names)}): give a mapping {{name: signal}}")
        return Inputs(names, (u,))
    if isinstance(u, Mapping):
        channels: list[Signal] = [Constant(0.0)] * m
        for key, value in u.items():
            if key not in names:
                raise _unknown_input(str(key), names)
            channels[names.index(key)] = _run_tables(value, (key,))[0] if _is_run(value) else \
                _channel(value, f"input {key!r}")
        return Inputs(names, tuple(channels))
    if _is_run(u):
        return Inputs(names, _run_tables(u, names))
    if callable(u):
        return Inputs(names, (None,) * m, function=u)
    if isinstance(u, list | tuple) and any(isinstance(v, Signal) or callable(v) for v in u):
        if len(u) != m:
            raise ShapeError(f"{len(u)} input signals given, expected {m} ({_list(names)})")
        return Inputs(names, tuple(_channel(v, f"input {name!r}") for name, v in zip(names, u)))
    return Inputs(names, tuple(Constant(v) for v in _constants(u, names)))


def _is_run(value: object) -> bool:
    """Whether ``value`` is a stored run (a Trajectory: times, inputs and their names), read as input tables."""
    return not callable(value) and all(hasattr(value, name) for name in ("t", "u", "inputs"))


def _run_tables(run: Any, names: tuple[str, ...]) -> tuple[Signal, ...]:
    """The input columns ``names`` of ``run`` as tables: held between rows (``"zoh"``), or linear when the run's
    ``input_interpolation`` is ``"linear"`` (collocation's inputs); at a repeated time (an event) the later row."""
    inputs = tuple(run.inputs)
    for name in names:
        if name not in inputs:
            raise UnknownNameError(f"the trajectory {getattr(run, 'model', '')!r} given as inputs has no input "
                                   f"{name!r} (its inputs: {_list(inputs)}): give that input by name, e.g. "
                                   f"{{{name!r}: signal}}")
    t = np.asarray(run.t, dtype=float)
    U = np.asarray(run.u, dtype=float).reshape(len(t), len(inputs))
    keep = np.append(np.diff(t) > 0, True)
    kind = "linear" if getattr(run, "input_interpolation", None) == "linear" else "zoh"
    return tuple(Table(t[keep], U[keep, inputs.index(name)], kind) for name in names)


def _channel(value: object, what: str) -> Signal:
    if isinstance(value, Signal):
        return value
    if callable(value):
        return FunctionSignal(value)
    if isinstance(value, np.ndarray) and value.size == 1:
        value = float(value.reshape(()))
    return Constant(finite_number(value, what))


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
    import difflib  # for messages only

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
    """``eval_inputs`` from ``signals/kernel.py``, loaded as a fresh module (jitted with numba or not)."""
    name = "robodyn.signals._kernel_" + ("jit" if compiled else "py")
    spec = importlib.util.spec_from_file_location(name, EVALUATOR_SOURCE_PATH)
    if spec is None or spec.loader is None:  # pragma: no cover - the file ships with the package
        raise InputError(f"cannot load the input evaluator from {EVALUATOR_SOURCE_PATH}")
    module = importlib.util.module_from_spec(spec)
    if compiled:
        import numba

        module.__dict__["hjit"] = numba.njit(cache=False)  # with a Python wrapper: eval_inputs is called from Python
    else:
        module.__dict__["hjit"] = _identity
    spec.loader.exec_module(module)
    return module.eval_inputs
