"""Time-varying state feedback about a reference trajectory: u = u*(t) - K(t) (x - x*(t)).

:class:`TrackingFeedback` is what :func:`robodyn.tvlqr` gives ``robodyn.simulate`` (``u=result.feedback``). It
tabulates at the knots t_k (T,) the gain K_k (m, n), the reference state x_k (n,) and input u_k (m,), and per
interval the slopes d0_k, d1_k (n,) of x* at its two ends. Between knots:

- x*(t): the cubic Hermite interpolant of (x_k, d0_k) and (x_{k+1}, d1_k) (:func:`hermite`);
- u*(t): held at u_k (``"hold"``) or linear to u_{k+1} (``"linear"``): a :class:`~robodyn.signals.Table` per input;
- K(t): linear between K_k and K_{k+1} (``"linear"``: the continuous-time design) or held at K_k (``"hold"``: the
  discrete-time design's gain for the interval).

Before the first knot everything is the first knot's, after the last the last knot's (the feedback goes on about
the final point with the final gain: with TVLQR's ``handover`` the infinite-horizon LQR's).

The compiled form (``inp`` of :mod:`robodyn.signals.inputs`, ``flags[0] == 2``): u* are the channels' table rows,
``xref`` holds the knot times (T,) and ``K`` one row per knot, ``[K_k (row-major m n) | x_k | d0_k | d1_{k-1}]``
(width m n + 3 n; d0 of the last knot and d1 of the first are zero), ``flags[2]`` is 1 when K is held; the
evaluator's ``_sig_tracking`` (robodyn/signals/kernel.py) repeats the formulas above.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.errors import InputError, ShapeError
from robodyn.base.numbers import finite_number, float_array
from robodyn.signals.core import Signal, Table

__all__ = ["GAIN_INTERPOLATIONS", "TrackingFeedback", "hermite"]

Array = NDArray[np.float64]

GAIN_INTERPOLATIONS: Final = ("linear", "hold")  # How K(t) goes from one knot to the next (module docstring).


def hermite(s: float, h: float, x0: Array, x1: Array, d0: Array, d1: Array) -> Array:
    """The cubic Hermite interpolant at the fraction ``s`` in [0, 1] of an interval of length ``h`` whose ends
    have the values ``x0``, ``x1`` (n,) and the slopes ``d0``, ``d1`` (n,) (de Boor, *A Practical Guide to
    Splines*, ch. IV)."""
    s2, s3 = s * s, s * s * s
    return ((2 * s3 - 3 * s2 + 1) * x0 + (s3 - 2 * s2 + s) * h * d0 + (-2 * s3 + 3 * s2) * x1
            + (s3 - s2) * h * d1)


@dataclass(frozen=True, slots=True, eq=False)
class TrackingFeedback:
    """u = u*(t) - K(t) (x - x*(t)) (module docstring).

    Parameters
    ----------
    t : (T,)
        Knots, strictly increasing, T >= 2.
    K : (T, m, n)
    x : (T, n)
    u : (T, m)
    d0, d1 : (T - 1, n)
        The slopes of x* leaving knot k and arriving at knot k + 1.
    input_interpolation : ``"hold"`` or ``"linear"``
    gain_interpolation : ``"linear"`` or ``"hold"``
    """

    t: Array
    K: Array
    x: Array
    u: Array
    d0: Array
    d1: Array
    input_interpolation: str = "hold"
    gain_interpolation: str = "linear"

    def __post_init__(self) -> None:
        t = np.array(self.t, dtype=float).reshape(-1)
        T = t.size
        if T < 2 or not np.all(np.isfinite(t)) or not np.all(np.diff(t) > 0):
            raise InputError("TrackingFeedback t must be at least 2 finite, strictly increasing times")
        K = np.asarray(self.K)
        if K.ndim != 3 or K.shape[0] != T:
            raise ShapeError(f"TrackingFeedback K has shape {K.shape}, expected ({T}, m, n)")
        m, n = K.shape[1:]
        if self.input_interpolation not in ("hold", "linear"):
            raise InputError(f"TrackingFeedback input_interpolation must be 'hold' or 'linear', got "
                             f"{self.input_interpolation!r}")
        if self.gain_interpolation not in GAIN_INTERPOLATIONS:
            raise InputError(f"TrackingFeedback gain_interpolation must be 'linear' or 'hold', got "
                             f"{self.gain_interpolation!r}")
        t.setflags(write=False)
        object.__setattr__(self, "t", t)
        for name, shape in (("K", (T, m, n)), ("x", (T, n)), ("u", (T, m)), ("d0", (T - 1, n)), ("d1", (T - 1, n))):
            object.__setattr__(self, name, float_array(getattr(self, name), f"TrackingFeedback {name}", shape=shape))

    @property
    def n_states(self) -> int:
        return int(self.K.shape[2])

    @property
    def references(self) -> tuple[Signal, ...]:
        """u*(t), one Table per input."""
        kind = "zoh" if self.input_interpolation == "hold" else "linear"
        return tuple(Table(self.t, self.u[:, i], kind) for i in range(self.u.shape[1]))

    def _interval(self, t: float) -> tuple[int, float]:
        k = int(np.clip(np.searchsorted(self.t, t, side="right") - 1, 0, self.t.size - 2))
        return k, float(np.clip((t - self.t[k]) / (self.t[k + 1] - self.t[k]), 0.0, 1.0))

    def reference_state(self, t: float) -> Array:
        """x*(t) (n,)."""
        if t >= self.t[-1]:
            return self.x[-1].copy()
        k, s = self._interval(t)
        return hermite(s, self.t[k + 1] - self.t[k], self.x[k], self.x[k + 1], self.d0[k], self.d1[k])

    def gain(self, t: float) -> Array:
        """K(t) (m, n)."""
        if t >= self.t[-1]:
            return self.K[-1].copy()
        k, s = self._interval(t)
        if self.gain_interpolation == "hold":
            return self.K[k].copy()
        return (1.0 - s) * self.K[k] + s * self.K[k + 1]

    def __call__(self, t: float, x: ArrayLike) -> Array:
        """u (m,) at time ``t`` and state ``x`` (n,)."""
        time = finite_number(t, "time t")
        state = np.asarray(x, dtype=float)
        if state.shape != (self.n_states,):
            raise ShapeError(f"state has shape {state.shape}, expected ({self.n_states},) for the tracking feedback")
        reference = np.array([s(time) for s in self.references], dtype=float)
        return reference - self.gain(time) @ (state - self.reference_state(time))

    def _repr_html_(self) -> str:
        from robodyn.display import block, heading, html_table, matrix_html

        T, m, n = self.K.shape
        rows = [("span [s]", f"{self.t[0]:g} to {self.t[-1]:g}"), ("knots", T),
                ("gain between knots", self.gain_interpolation)]
        return block([heading("Tracking feedback u = u*(t) - K(t) (x - x*(t))"), html_table(rows, row_header=True),
                      matrix_html(self.K[0], [f"u{i + 1}" for i in range(m)], [f"x{j + 1}" for j in range(n)],
                                  title=f"K({self.t[0]:g})")])

    def breakpoints(self, t0: float, t1: float) -> Array:
        """The knots inside (t0, t1): x*, K and (held) u* change their formula there."""
        return self.t[(self.t > t0) & (self.t < t1)].copy()

    def packed(self) -> tuple[Array, Array, int]:
        """``(xref, K, hold)`` of the compiled form (module docstring): the knot times (T,), the rows
        (T, m n + 3 n) and 1 when the gain is held."""
        T, m, n = self.K.shape
        rows = np.zeros((T, m * n + 3 * n))
        rows[:, :m * n] = self.K.reshape(T, m * n)
        rows[:, m * n:m * n + n] = self.x
        rows[:-1, m * n + n:m * n + 2 * n] = self.d0
        rows[1:, m * n + 2 * n:] = self.d1
        return np.array(self.t, dtype=np.float64, order="C"), rows, int(self.gain_interpolation == "hold")
