"""What a control engineer reads off a linear system: step response, frequency response, margins, controllability.

Each function takes a :class:`~robodyn.LinearSystem` (continuous or discrete time; a model that is linear by
construction is taken by its ``linear_model()``) and returns a frozen result with ``to_dict()`` (strict JSON:
undefined or infinite values are null, with the reason beside them) and ``_repr_html_`` for notebooks.

- :func:`step_info`: python-control's ``step_info`` quantities (rise time 10-90 %, settling time to 2 %,
  settling min/max after the rise, overshoot and undershoot in %, peak and its time, steady-state value) for
  every (output, input) pair, by python-control's definitions, on the *exact* unit-step response: matrix
  exponentials (:func:`robodyn.linear.exact.exact_response`) or the discrete recursion. The default time
  grid is :func:`step_grid`'s rule; in continuous time the grid only brackets, and every time and extremum is
  found on the exact response between the samples (:mod:`robodyn.linear.step_metrics`). Only an
  asymptotically stable system has a steady state: for any other every field is null with the verdict of
  :func:`robodyn.modes` as the reason (a mode hidden from a pair, uncontrollable from its input or unobservable
  at its output, still counts: remove it first).
- :func:`frequency_response`: G(s) = C (s I - A)^-1 B + D at s = j w (z = exp(j w dt) in discrete time).
- the margins of one loop L are in :mod:`robodyn.linear.margins` (from the exact crossings of
  :mod:`robodyn.linear.crossings`).

Controllability and observability (the PBH verdict, the Kalman rank, Gramians) are in
:mod:`robodyn.linear.controllability`, controller design (LQR, pole placement) in :mod:`robodyn.control.design`.

References: python-control 0.10 (``step_info``, ``stability_margins``), whose definitions these follow;
docs/linear-systems.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn import display
from robodyn.base.errors import InputError, NumericalError, UnknownNameError
from robodyn.linear.margins import Margins, margins
from robodyn.linear.modes import modes
from robodyn.linear.step_metrics import StepResponse, exact_characteristics, peak
from robodyn.linear.systems import StateSpace, as_linear

__all__ = ["CONTROL_NAMES", "STEP_FIELDS", "Margins", "StepInfo", "as_linear", "check_frequencies",
           "default_frequencies", "frequency_response", "margins", "step_grid", "step_info"]  # Margins, margins and
# as_linear are robodyn.linear.margins' and robodyn.linear.systems', named here too

Array = NDArray[np.float64]

STEP_FIELDS: Final = ("rise_time", "settling_time", "settling_min", "settling_max", "overshoot", "undershoot",
                      "peak", "peak_time", "steady_state_value")
#: python-control's key of each step_info field.
CONTROL_NAMES: Final[Mapping[str, str]] = MappingProxyType(dict(zip(STEP_FIELDS, (
    "RiseTime", "SettlingTime", "SettlingMin", "SettlingMax", "Overshoot", "Undershoot", "Peak", "PeakTime",
    "SteadyStateValue"))))
SETTLE_TIME_CONSTANTS: Final = 10.0  # Default T: 10 slowest time constants (the slowest mode at e^-10 = 4.5e-5).
RESOLUTION: Final = 20.0  # Default T: a step of at most 1 / (20 |λ|max) (about 125 samples per fastest period).
MIN_POINTS: Final = 501  # Default T: at least this many points (continuous) ...
MIN_STEPS: Final = 20  # ... or steps (discrete).
MAX_POINTS: Final = 100_001  # Default T: at most this many points (the fastest mode is then sampled coarser).
MAX_VALUES: Final = 10_000_000  # Responses (max(n, p) m len(T)) or frequency responses (p m len(w)) at most.
ZERO_GAIN_RTOL: Final = 1e-10  # |G(0)| <= this times (|C| |A^-1 B| + |D|): a steady-state value of 0.
_CHUNK: Final = 1 << 22  # Complex entries of the (k, n, n + m) systems solved at once by frequency_response.


def _null(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _matrix_rows(values: Array) -> list[list[float | None]]:
    return [[_null(v) for v in row] for row in np.asarray(values, dtype=float).tolist()]


# --- step response characteristics ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True, eq=False)
class StepInfo:
    """Step-response characteristics of every (output, input) pair: python-control's ``step_info``.

    Attributes
    ----------
    rise_time, settling_time, settling_min, settling_max, overshoot, undershoot, peak, peak_time,
    steady_state_value : (p, m)
        Entry [i, j] is for a unit step of input j seen at output i (NaN where undefined; ``reasons`` says
        why). Times in s; overshoot and undershoot in % of the steady-state value; the others in the output's
        unit per unit of the input (``units``).
    outputs, inputs
        The names of the rows and columns.
    reasons
        ``(output, input, fields, reason)`` for every undefined value.
    times : (T,)
        The time grid the response was evaluated on; ``grid`` says how it was chosen.
    stability, explanation
        The verdict of :func:`robodyn.modes`.
    settling_threshold, rise_limits, units, dt
        The definitions used, units by signal name, the sample period (None: continuous time).
    """

    rise_time: Array
    settling_time: Array
    settling_min: Array
    settling_max: Array
    overshoot: Array
    undershoot: Array
    peak: Array
    peak_time: Array
    steady_state_value: Array
    outputs: tuple[str, ...]
    inputs: tuple[str, ...]
    reasons: tuple[tuple[str, str, tuple[str, ...], str], ...]
    times: Array
    grid: str
    stability: str
    explanation: str
    settling_threshold: float = 0.02
    rise_limits: tuple[float, float] = (0.1, 0.9)
    units: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    dt: float | None = None

    def _index(self, output: str, input: str) -> tuple[int, int]:
        for name, names, what in ((output, self.outputs, "output"), (input, self.inputs, "input")):
            if name not in names:
                raise UnknownNameError(f"unknown {what} {name!r} (the {what}s: {', '.join(names)})")
        return self.outputs.index(output), self.inputs.index(input)

    def pair(self, output: str, input: str) -> dict[str, float | None]:
        """The quantities of one pair by field name, None where undefined."""
        i, j = self._index(output, input)
        return {name: _null(float(getattr(self, name)[i, j])) for name in STEP_FIELDS}

    def as_control(self) -> list[list[dict[str, float]]]:
        """python-control's layout: ``S[i][j]`` a dict keyed ``RiseTime``, ... (NaN where undefined)."""
        return [[{CONTROL_NAMES[name]: float(getattr(self, name)[i, j]) for name in STEP_FIELDS}
                 for j in range(len(self.inputs))] for i in range(len(self.outputs))]

    def to_dict(self) -> dict[str, Any]:
        """Strict JSON: each field as p rows of m values (null where undefined), the reasons, grid and units."""
        return {
            "outputs": list(self.outputs), "inputs": list(self.inputs), "dt": self.dt,
            "stability": self.stability, "explanation": self.explanation,
            "grid": {"t0": _null(self.times[0]) if self.times.size else None,
                     "t_final": _null(self.times[-1]) if self.times.size else None,
                     "points": int(self.times.size), "rule": self.grid},
            "settling_threshold": self.settling_threshold, "rise_limits": list(self.rise_limits),
            **{name: _matrix_rows(getattr(self, name)) for name in STEP_FIELDS},
            "null_reasons": [{"output": o, "input": i, "fields": list(f), "reason": r} for o, i, f, r in self.reasons],
            "units": {"time": "s", "overshoot": "%", "undershoot": "%", "signals": dict(self.units),
                      "values": "output unit per unit of the input (a unit step)"},
        }

    def _repr_html_(self) -> str:
        """One row per (output, input) pair, undefined values as '-', then the reasons."""
        header = ("output", "input", *(CONTROL_NAMES[name] for name in STEP_FIELDS))
        rows = [(o, i, *(display.number(v) if v is not None else "-" for v in self.pair(o, i).values()))
                for o in self.outputs for i in self.inputs]
        time = "" if self.dt is None else f" (discrete-time, dt = {self.dt:g} s)"
        notes = [display.note(f"{o} / {i}: {', '.join(f)} undefined: {r}") for o, i, f, r in self.reasons[:20]]
        return display.block([display.heading(f"step response{time}: {self.stability}"),
                              display.html_table(rows, header=header), display.note(self.grid), *notes])


def _fraction(value: Any, label: str, low: float = 0.0, high: float = 1.0) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"step_info: {label} must be a number, got {value!r}") from None
    if isinstance(value, bool) or not (low < number < high):
        raise InputError(f"step_info: {label} = {value!r} must be between {low:g} and {high:g} (exclusive)")
    return number


def _rise_limits(value: Any) -> tuple[float, float]:
    try:
        low, high = value
    except (TypeError, ValueError):
        raise InputError(f"step_info: rise_limits must be (low, high), got {value!r}") from None
    low = _fraction(low, "rise_limits[0]", -1e-300, 1.0)
    return low, _fraction(high, "rise_limits[1]", low, 1.0 + 1e-12)


def _given_grid(T: ArrayLike, dt: float | None) -> Array:
    try:
        times = np.array(T, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"step_info: T must be an array of times, got {T!r:.60}") from None
    if times.size < 2 or not np.all(np.isfinite(times)) or np.any(np.diff(times) <= 0.0):
        raise InputError("step_info: T must hold at least 2 finite times, strictly increasing, e.g. "
                         "np.linspace(0, 5, 1001)")
    if dt is not None and np.max(np.abs(np.diff(times) - dt)) > 1e-9 * dt:
        raise InputError(f"step_info: T must be spaced by the sample period dt = {dt:g} s (T = t0 + k dt): e.g. "
                         f"np.arange(0, 5, {dt:g})")
    return times


def step_grid(system: Any) -> tuple[Array, str]:
    """The default time grid of :func:`step_info` for an asymptotically stable system, and its rule in words.

    Continuous time: from 0 to 10 / sigma (sigma = min |Re λ|, the slowest decay rate: the slowest mode has
    decayed to e^-10), with a step of at most 1 / (20 |λ|max) to resolve the fastest mode and at least 501
    points; at most 100001 points (then the fastest mode is sampled coarser than the rule, and it says so).
    Discrete time: the samples k = 0 .. K, K = ceil(10 / min(-ln |z|)), at least 20, at most 100000.
    """
    linear = as_linear(system, "step_grid")
    values = np.linalg.eigvals(linear.A)
    if linear.dt is not None:
        rates = -np.log(np.maximum(np.abs(values), 1e-300))
        slowest = float(np.min(rates))
        if not slowest > 0.0:
            raise InputError("step_grid: the system is not asymptotically stable: there is no settling time")
        steps = min(max(MIN_STEPS, math.ceil(SETTLE_TIME_CONSTANTS / slowest)), MAX_POINTS - 1)
        rule = (f"the samples k = 0 .. {steps} (dt = {linear.dt:g} s): ceil(10 / min(-ln|z|)) = "
                f"{math.ceil(SETTLE_TIME_CONSTANTS / slowest)} steps, at least {MIN_STEPS}, at most {MAX_POINTS - 1}")
        return linear.dt * np.arange(steps + 1, dtype=float), rule
    sigma, fastest = float(np.min(-values.real)), float(np.max(np.abs(values)))
    if not sigma > 0.0:
        raise InputError("step_grid: the system is not asymptotically stable: there is no settling time")
    t_final = SETTLE_TIME_CONSTANTS / sigma
    wanted = max(MIN_POINTS, math.ceil(t_final * RESOLUTION * fastest) + 1)
    points = min(wanted, MAX_POINTS)
    rule = (f"T = 0 .. {t_final:.6g} s (10 / {sigma:.6g}, the slowest decay rate), {points} points: a step of "
            f"{t_final / (points - 1):.3g} s")
    rule += (f" (at most 1 / (20 |λ|max) = {1 / (RESOLUTION * fastest):.3g} s)" if wanted <= MAX_POINTS else
             f", capped at {MAX_POINTS} points: coarser than 1 / (20 |λ|max) = {1 / (RESOLUTION * fastest):.3g} s, "
             "the fastest mode is not resolved (give T)")
    return np.linspace(0.0, t_final, points), rule


def _responses(linear: StateSpace, times: Array) -> tuple[Array, list[Array]]:
    """Unit-step responses from rest at times[0], (p, m, T), exact (matrix exponentials or the recursion), and in
    continuous time the states of each input's response (T, n) (none in discrete time)."""
    A, B, C, D = linear.A, linear.B, linear.C, linear.D
    n, m = B.shape
    out = np.empty((C.shape[0], m, times.size))
    if linear.dt is not None:
        X = np.zeros((n, m))
        for k in range(times.size):
            out[:, :, k] = C @ X + D
            X = A @ X + B
        return out, []
    from robodyn.linear.exact import exact_response
    from robodyn.signals import Constant

    runs = []
    for j in range(m):
        states = exact_response(A, B[:, j:j + 1], np.zeros(n), times, [Constant(1.0)], t0=float(times[0]))
        out[:, j, :] = (states @ C.T + D[:, j]).T
        runs.append(states)
    return out, runs


def _steady_state(linear: StateSpace) -> tuple[Array, Array]:
    """G(0) (or G(z = 1)) (p, m) and its rounding scale |C| max|X| + |D|, X = -A^-1 B (or (I - A)^-1 B) by column."""
    n = linear.A.shape[0]
    X = np.linalg.solve(np.eye(n) - linear.A, linear.B) if linear.dt is not None else \
        -np.linalg.solve(linear.A, linear.B)
    return linear.C @ X + linear.D, np.abs(linear.C).sum(1, keepdims=True) * np.abs(X).max(0, initial=0) + abs(linear.D)


def _characteristics(t: Array, y: Array, final: float, zero: bool, threshold: float, low: float, high: float
                     ) -> tuple[dict[str, float], list[tuple[tuple[str, ...], str]]]:
    """python-control's step_info of one response y (T,) with steady-state value ``final``; undefined: NaN."""
    values = dict.fromkeys(STEP_FIELDS, math.nan)
    peak = int(np.argmax(np.abs(y)))
    values.update(peak=float(abs(y[peak])), peak_time=float(t[peak]), steady_state_value=0.0 if zero else final)
    if zero:
        return values, [(STEP_FIELDS[:6], "the steady-state value is 0 (to 1e-10 of the gain's rounding scale): "
                                          "rise, settling, overshoot and undershoot are relative to it")]
    reasons: list[tuple[tuple[str, ...], str]] = []
    sign = math.copysign(1.0, final)
    reached = np.flatnonzero(sign * (y - high * final) >= 0)
    if reached.size:
        upper, lower = int(reached[0]), int(np.flatnonzero(sign * (y - low * final) >= 0)[0])
        values.update(rise_time=float(t[upper] - t[lower]), settling_min=float(min(y[upper:].min(), final)),
                      settling_max=float(max(y[upper:].max(), final)))
    else:
        reasons.append((("rise_time", "settling_min", "settling_max"),
                        f"the response does not reach {high:.0%} of the steady state by T[-1] = {t[-1]:.6g} s: "
                        "give a longer T"))
    outside = np.flatnonzero(np.abs(y / final - 1.0) >= threshold)
    settled = 0 if outside.size == 0 else int(outside[-1]) + 1
    if settled < t.size:
        values["settling_time"] = float(t[settled])
    else:
        reasons.append((("settling_time",), f"the response is not within {threshold:.0%} of the steady state at "
                                            f"T[-1] = {t[-1]:.6g} s: give a longer T"))
    excess = abs(float((sign * y).max())) - abs(final)
    values["overshoot"] = abs(100.0 * excess / final) if excess > 0 else 0.0
    lowest = float(y[int(np.argmin(sign * y))])
    values["undershoot"] = -100.0 * lowest / final if sign * lowest < 0 else 0.0
    return values, reasons


def _exact(response: StepResponse, final: float, zero: bool, values: dict[str, float],
           reasons: list[tuple[tuple[str, ...], str]], limits: tuple[float, float, float]
           ) -> tuple[dict[str, float], list[tuple[tuple[str, ...], str]]]:
    """A continuous-time pair's quantities from its exact response (robodyn.linear.step_metrics); a pair whose
    steady state is 0 keeps its reasons and gets its exact peak."""
    if zero:
        values["peak"], values["peak_time"] = peak(response)
        return values, reasons
    return exact_characteristics(response, final, *limits)


def step_info(system: Any, T: ArrayLike | None = None, *, settling_threshold: float = 0.02,
              rise_limits: tuple[float, float] = (0.1, 0.9)) -> StepInfo:
    """Step-response characteristics of every (output, input) pair, python-control's ``step_info``.

    Parameters
    ----------
    system
        A LinearSystem, continuous or discrete time.
    T : (T,), optional
        The time grid (strictly increasing; discrete time: spaced by dt); the step starts at T[0] from rest.
        Default: :func:`step_grid`'s rule.
    settling_threshold
        The band around the steady state for the settling time (0.02: 2 %).
    rise_limits
        (low, high) fractions of the steady state between which the rise time is measured.

    Returns
    -------
    StepInfo
        python-control's ``step_info`` quantities of the exact response: in continuous time the times are
        roots and the extrema stationary points of the response between the samples of T (``control.step_info``
        reads them off the samples, within a step of them); in discrete time they equal
        ``control.step_info(sys, T=T)`` where both are defined. The steady-state value is G(0)
        (G(1) in discrete time). Undefined values are NaN with a reason: every value of a system that is not
        asymptotically stable; rise, settling, overshoot and undershoot of a pair whose steady state is 0;
        a rise or settling the grid ends before.
    """
    linear = as_linear(system, "step_info")
    threshold = _fraction(settling_threshold, "settling_threshold")
    low, high = _rise_limits(rise_limits)
    p, m = linear.D.shape
    given = None if T is None else _given_grid(T, linear.dt)
    if given is not None and max(linear.A.shape[0], p) * max(m, 1) * given.size > MAX_VALUES:
        raise InputError(f"step_info: {given.size} times for {p} x {m} pairs exceed {MAX_VALUES} values: give fewer")
    verdict = modes(linear)
    fields = {name: np.full((p, m), math.nan) for name in STEP_FIELDS}
    if verdict.stability != "asymptotically stable":
        reason = f"{verdict.stability}: {verdict.explanation}; there is no steady state to settle to"
        return StepInfo(**fields, outputs=linear.outputs, inputs=linear.inputs,
                        reasons=tuple((o, i, STEP_FIELDS, reason) for o in linear.outputs for i in linear.inputs),
                        times=np.empty(0) if given is None else given, grid="not simulated",
                        stability=verdict.stability, explanation=verdict.explanation, settling_threshold=threshold,
                        rise_limits=(low, high), units=MappingProxyType(linear.units()), dt=linear.dt)
    times, rule = (given, "given (T)") if given is not None else step_grid(linear)
    with np.errstate(all="ignore"):
        (responses, runs), (final, scale) = _responses(linear, times), _steady_state(linear)
    reasons = []
    for i, output in enumerate(linear.outputs):
        for j, input in enumerate(linear.inputs):
            zero = abs(final[i, j]) <= ZERO_GAIN_RTOL * scale[i, j]
            values, why = _characteristics(times, responses[i, j], float(final[i, j]), zero, threshold, low, high)
            if runs:  # continuous time: every time and extremum from the exact response between the samples
                response = StepResponse(linear.A, linear.B[:, j], linear.C[i], float(linear.D[i, j]), times, runs[j])
                values, why = _exact(response, float(final[i, j]), zero, values, why, (threshold, low, high))
            for name, value in values.items():
                fields[name][i, j] = value
            reasons += [(output, input, names, text) for names, text in why]
    return StepInfo(**fields, outputs=linear.outputs, inputs=linear.inputs, reasons=tuple(reasons), times=times,
                    grid=rule, stability=verdict.stability, explanation=verdict.explanation,
                    settling_threshold=threshold, rise_limits=(low, high), units=MappingProxyType(linear.units()),
                    dt=linear.dt)


# --- frequency response ---------------------------------------------------------------------------------
def check_frequencies(w: ArrayLike, label: str = "w") -> Array:
    """``w`` as a non-empty 1-D array of finite real frequencies in rad/s, or InputError."""
    try:
        omega = np.array(w, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"{label} must be frequencies in rad/s (real numbers), got {w!r:.60}") from None
    if np.iscomplexobj(np.asarray(w)) or omega.size == 0 or not np.all(np.isfinite(omega)):
        raise InputError(f"{label} must be a non-empty list of finite real frequencies in rad/s")
    return omega


def frequency_response(system: Any, w: ArrayLike) -> NDArray[np.complex128]:
    """G = C (s I - A)^-1 B + D at s = j w (discrete time: z = exp(j w dt)), shape ``(len(w), p, m)``.

    Parameters
    ----------
    system
        A LinearSystem.
    w : (K,)
        Frequencies in rad/s (finite, real).

    Raises
    ------
    NumericalError
        s I - A is singular at some w (a pole on the imaginary axis, e.g. w = 0 for an integrator): leave it out.
    """
    linear = as_linear(system, "frequency_response")
    omega = check_frequencies(w)
    A, B, C, D = linear.A, linear.B, linear.C, linear.D
    n, (p, m) = A.shape[0], D.shape
    if max(p * m, 1) * omega.size > MAX_VALUES:
        raise InputError(f"frequency_response: {omega.size} frequencies for {p} x {m} pairs exceed {MAX_VALUES} "
                         "values: give fewer")
    points = np.exp(1j * omega * linear.dt) if linear.dt is not None else 1j * omega
    result = np.empty((omega.size, p, m), dtype=np.complex128)
    step = max(1, _CHUNK // (n * (n + m) + 1))
    identity = np.eye(n)
    for start in range(0, omega.size, step):
        s = points[start:start + step]
        try:
            X = np.linalg.solve(s[:, None, None] * identity - A, np.broadcast_to(B, (s.size, n, m)))
        except np.linalg.LinAlgError:
            bad = next(k for k in range(s.size) if np.linalg.matrix_rank(s[k] * identity - A) < n)
            where = "z" if linear.dt is not None else "s"
            raise NumericalError(f"frequency_response: w = {omega[start + bad]:g} rad/s is a pole of "
                                 f"{linear.name!r} ({where} I - A is singular there): leave it out of w") from None
        result[start:start + step] = C @ X + D
    return result


def default_frequencies(system: Any, points: int = 1000) -> Array:
    """Log-spaced frequencies a decade beyond the system's features: |λ| of the poles (|ln z| / dt in discrete
    time) from the smallest non-zero one / 10 to the largest * 10 (0.01 .. 100 rad/s without features); in
    discrete time at most the Nyquist frequency pi / dt."""
    linear = as_linear(system, "default_frequencies")
    values = np.linalg.eigvals(linear.A)
    if linear.dt is not None:
        values = np.log(values[np.abs(values) > 1e-300].astype(complex)) / linear.dt
    features = np.abs(values[np.abs(values) > 1e-12])
    low, high = (float(features.min()) / 10, float(features.max()) * 10) if features.size else (0.01, 100.0)
    low, high = 10.0 ** math.floor(math.log10(low)), 10.0 ** math.ceil(math.log10(high))
    if linear.dt is not None:
        high = min(high, math.pi / linear.dt)
        low = min(low, high / 1e3)
    return np.logspace(math.log10(low), math.log10(high), points)
