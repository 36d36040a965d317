"""Step-response characteristics of a continuous-time pair, read off the exact response rather than its samples.

The unit-step response from rest y(t) = C x(t) + D, x' = A x + B, is known exactly between any two times:
x(t_k + h) = e^{A h} x(t_k) + (int_0^h e^{A s} ds) B, the upper blocks of expm([[A, B], [0, 0]] h) (C. F. Van Loan,
IEEE TAC 23(3), 1978), and so is its slope y'(t) = C (A x(t) + B). The grid (robodyn.linear.lti.step_grid: at
least 20 samples per 1 / |λ|max) only brackets; every time is then a root found by Brent's method on the exact
response, to about 4 eps:

- rise: the first times y reaches ``low`` and ``high`` of the steady state (sign-aware), their difference;
- settling: the last time |y / y_ss - 1| equals the threshold (after the last sample outside the band);
- peak, overshoot, undershoot, settling min and max: extrema of y over the interval, at its ends or where y' = 0
  (a change of sign of y' between samples, refined). Brackets are visited from the largest cubic (Hermite)
  estimate of their extremum down, until no estimate comes within :data:`HERMITE_MARGIN` of the best exact one.

For a second-order system these equal the closed forms (overshoot exp(-zeta pi / sqrt(1 - zeta^2)), peak time
pi / (omega_n sqrt(1 - zeta^2))) to rounding; python-control's ``step_info`` reads the same quantities off the
samples, within a grid step of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

__all__ = ["HERMITE_MARGIN", "StepResponse", "exact_characteristics", "peak"]

Array = NDArray[np.float64]

EPS: Final = float(np.finfo(float).eps)
HERMITE_MARGIN: Final = 1e-6  # Relative to max |y|: how far a bracket's cubic estimate may fall short of an extremum.
_FIELDS: Final = ("rise_time", "settling_time", "settling_min", "settling_max", "overshoot", "undershoot", "peak",
                  "peak_time", "steady_state_value")


@dataclass(frozen=True, slots=True)
class StepResponse:
    """The exact unit-step response of x' = A x + b u, y = c x + d from rest at ``times[0]``, sampled at
    ``times`` (T,) with states ``states`` (T, n), evaluable at any time in between."""

    A: Array
    b: Array
    c: Array
    d: float
    times: Array
    states: Array

    @property
    def values(self) -> Array:
        """y at the samples (T,)."""
        return self.states @ self.c + self.d

    @property
    def slopes(self) -> Array:
        """y' at the samples (T,)."""
        return (self.states @ self.A.T + self.b) @ self.c

    def state(self, t: float) -> Array:
        """x(t) (n,), from the sample before t by one matrix exponential."""
        k = int(np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, self.times.size - 1))
        h = t - float(self.times[k])
        if h == 0.0:
            return self.states[k]
        import scipy.linalg  # here: robodyn.linear.lti (this module's importer) stays light

        n = self.A.shape[0]
        generator = np.zeros((n + 1, n + 1))
        generator[:n, :n], generator[:n, n] = self.A, self.b
        flow = scipy.linalg.expm(generator * h)
        return flow[:n, :n] @ self.states[k] + flow[:n, n]

    def value(self, t: float) -> float:
        return float(self.c @ self.state(t)) + self.d

    def slope(self, t: float) -> float:
        return float(self.c @ (self.A @ self.state(t) + self.b))


def _root(f: Callable[[float], float], low: float, high: float) -> float:
    import scipy.optimize

    return float(scipy.optimize.brentq(f, low, high, xtol=1e-300, rtol=4 * EPS))


def _first_reach(response: StepResponse, level: float, sign: float) -> float | None:
    """The first time sign (y - level) >= 0, or None when the samples never reach it."""
    y = response.values
    reached = np.flatnonzero(sign * (y - level) >= 0.0)
    if not reached.size:
        return None
    k = int(reached[0])
    if k == 0:
        return float(response.times[0])
    return _root(lambda t: response.value(t) - level, float(response.times[k - 1]), float(response.times[k]))


def _hermite_peak(t0: float, t1: float, y0: float, y1: float, s0: float, s1: float) -> float:
    """The largest value of the cubic with these ends and slopes on [t0, t1] (an estimate of the extremum)."""
    h = t1 - t0
    # p(u) = y0 + s0 h u + (3 (y1 - y0) - (2 s0 + s1) h) u^2 + (2 (y0 - y1) + (s0 + s1) h) u^3, u in [0, 1]
    a2, a3 = 3 * (y1 - y0) - (2 * s0 + s1) * h, 2 * (y0 - y1) + (s0 + s1) * h
    roots = np.roots([3 * a3, 2 * a2, s0 * h]) if (a3 or a2) else np.zeros(0)
    inside = [float(u.real) for u in np.atleast_1d(roots) if abs(u.imag) < 1e-12 and 0.0 <= u.real <= 1.0]
    return max(y0 + s0 * h * u + a2 * u**2 + a3 * u**3 for u in [0.0, 1.0, *inside])


def _largest(response: StepResponse, sign: float, start: float) -> tuple[float, float]:
    """(max of sign * y over [start, T], the first time it is reached): the ends, and every stationary point whose
    bracket's cubic estimate can beat the best exact value found (module docstring)."""
    times, y, s = response.times, sign * response.values, sign * response.slopes
    first = int(np.searchsorted(times, start, side="right"))
    at_start = sign * response.value(start)
    best, where = (at_start, start) if at_start >= y[-1] else (float(y[-1]), float(times[-1]))
    if first < times.size and float(np.max(y[first:])) > best:
        k = first + int(np.argmax(y[first:]))
        best, where = float(y[k]), float(times[k])
    scale = max(float(np.max(np.abs(y))), abs(at_start), 1e-300)
    brackets = [k for k in range(max(first - 1, 0), times.size - 1) if s[k] > 0.0 >= s[k + 1]]
    estimates = sorted(((_hermite_peak(times[k], times[k + 1], y[k], y[k + 1], s[k], s[k + 1]), k) for k in brackets),
                       reverse=True)
    for estimate, k in estimates:
        if estimate < best - HERMITE_MARGIN * scale:
            break
        low, high = max(float(times[k]), start), float(times[k + 1])
        if not (sign * response.slope(low) > 0.0 >= sign * response.slope(high)):
            continue
        t = _root(lambda x: sign * response.slope(x), low, high)
        value = sign * response.value(t)
        if value > best or (value == best and t < where):
            best, where = value, t
    return best, where


def peak(response: StepResponse) -> tuple[float, float]:
    """max |y| over the interval and the first time it is reached."""
    t0 = float(response.times[0])
    above, below = _largest(response, 1.0, t0), _largest(response, -1.0, t0)
    return max((above, below), key=lambda pair: (pair[0], -pair[1]))


def exact_characteristics(response: StepResponse, final: float, threshold: float, low: float,
                          high: float) -> tuple[dict[str, float], list[tuple[tuple[str, ...], str]]]:
    """python-control's step_info quantities of the exact response (module docstring) with steady-state value
    ``final`` (not 0); undefined ones NaN, with (fields, reason)."""
    t, y = response.times, response.values
    values = dict.fromkeys(_FIELDS, math.nan)
    values["steady_state_value"] = final
    above, below = _largest(response, 1.0, float(t[0])), _largest(response, -1.0, float(t[0]))
    values["peak"], values["peak_time"] = max((above, below), key=lambda pair: (pair[0], -pair[1]))  # as peak()
    reasons: list[tuple[tuple[str, ...], str]] = []
    sign = math.copysign(1.0, final)
    start, end = _first_reach(response, low * final, sign), _first_reach(response, high * final, sign)
    if start is not None and end is not None:
        values["rise_time"] = end - start
        top, bottom = _largest(response, 1.0, end)[0], -_largest(response, -1.0, end)[0]
        values.update(settling_min=min(bottom, final), settling_max=max(top, final))
    else:
        reasons.append((("rise_time", "settling_min", "settling_max"),
                        f"the response does not reach {high:.0%} of the steady state by T[-1] = {t[-1]:.6g} s: "
                        "give a longer T"))
    outside = np.flatnonzero(np.abs(y / final - 1.0) >= threshold)
    if outside.size and outside[-1] == t.size - 1:
        reasons.append((("settling_time",), f"the response is not within {threshold:.0%} of the steady state at "
                                            f"T[-1] = {t[-1]:.6g} s: give a longer T"))
    elif outside.size:
        k = int(outside[-1])
        values["settling_time"] = _root(lambda x: abs(response.value(x) / final - 1.0) - threshold,
                                        float(t[k]), float(t[k + 1]))
    else:
        values["settling_time"] = float(t[0])
    most = (above if sign > 0 else below)[0]
    values["overshoot"] = max(0.0, 100.0 * (most - abs(final)) / abs(final))
    least = -(below if sign > 0 else above)[0]  # min of sign * y
    values["undershoot"] = -100.0 * least / abs(final) if least < 0.0 else 0.0
    return values, reasons
