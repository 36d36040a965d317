"""Exact simulation of linear time-invariant systems x' = A x + B u with augmented matrix exponentials.

The response of x' = A x + B u over an interval [a, b] with h = b - a is

    x(b) = e^{A h} x(a) + integral_0^h e^{A (h - s)} B u(a + s) ds.

For an input that is affine on the interval, u(a + s) = u0 + s * slope, the integral is G0 u0 + G1 slope
with ``[Phi, G0, G1]`` the top block row of ``expm(h * [[A, B, 0], [0, 0, I], [0, 0, 0]])``
(Van Loan, "Computing integrals involving the matrix exponential", IEEE Trans. Automatic Control 23(3),
1978, pp. 395-404). Sine components of the input are generated exactly by an oscillator state
z = (sin(omega t), cos(omega t)) with z' = [[0, omega], [-omega, 0]] z appended to x, so a single matrix
exponential per step length covers the state, the affine part and every sine. No step-size error is made:
the results are exact up to rounding for piecewise-affine plus sinusoidal inputs, on any output grid.

``scipy.linalg.expm`` uses scaling and squaring with Pade approximants, so large ``||A h||`` (stiff
systems, long output intervals) is handled without loss of accuracy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.errors import InputError, ShapeError
from robodyn.linear.exact_steps import SHARE_TOLERANCE, SharedExponentials, plain_sized, plain_steps
from robodyn.signals.core import sorted_unique

__all__ = ["SHARE_TOLERANCE", "InputChannel", "exact_discretization", "exact_first_order_hold", "exact_response",
           "exact_transitions", "generator_quantum", "with_constant"]

Array = NDArray[np.float64]


class InputChannel(Protocol):
    """What :func:`exact_response` needs from an input channel (a ``robodyn.signals`` signal)."""

    def sine_terms(self) -> list[tuple[float, float, float]]:
        """``(amplitude, omega [rad/s], phase)`` of each component ``amplitude * sin(omega t + phase)``."""
        ...

    def affine_pieces(self, t0: float, t1: float) -> tuple[ArrayLike, ArrayLike, ArrayLike]:
        """``(breaks (K+1,), values (K,), slopes (K,))`` of the channel minus its sine terms on [t0, t1]."""
        ...


# --- validation -----------------------------------------------------------------------------------------
def _system_matrices(A: ArrayLike, B: ArrayLike) -> tuple[Array, Array]:
    try:
        A_ = np.array(A, dtype=float)
        B_ = np.array(B, dtype=float)
    except (TypeError, ValueError):
        raise InputError("A and B must be numeric matrices") from None
    if A_.ndim != 2 or A_.shape[0] != A_.shape[1] or A_.shape[0] == 0:
        raise ShapeError(f"A must be a non-empty square (n, n) matrix, got shape {A_.shape}")
    n = A_.shape[0]
    if B_.ndim != 2 or B_.shape[0] != n:
        hint = ": pass a single input column as B.reshape(-1, 1)" if B_.ndim == 1 else ""
        raise ShapeError(f"B has shape {B_.shape}, expected ({n}, m) to match A of shape {A_.shape}{hint}")
    for label, matrix in (("A", A_), ("B", B_)):
        if not np.all(np.isfinite(matrix)):
            raise InputError(f"{label} contains non-finite entries: give finite numbers")
    return A_, B_


def _step_length(h: float) -> float:
    try:
        h_ = float(h)
    except (TypeError, ValueError):
        raise InputError(f"step h must be a number, got {h!r}") from None
    if not np.isfinite(h_) or h_ < 0.0:
        raise InputError(f"step h must be finite and >= 0, got {h_}")
    return h_


def _initial_state(x0: ArrayLike, n: int) -> Array:
    try:
        x = np.array(x0, dtype=float)
    except (TypeError, ValueError):
        raise InputError("x0 must be a numeric vector") from None
    if x.shape != (n,):
        raise ShapeError(f"x0 has shape {x.shape}, expected ({n},): one entry per state of A")
    if not np.all(np.isfinite(x)):
        raise InputError(f"x0 contains non-finite entries {x.tolist()}: give finite initial states")
    return x


def _output_times(t_eval: ArrayLike, t0: float | None) -> tuple[Array, float]:
    try:
        t = np.array(t_eval, dtype=float)
    except (TypeError, ValueError):
        raise InputError("t_eval must be a numeric vector of times") from None
    if t.ndim != 1 or t.size == 0:
        raise ShapeError(f"t_eval must be a non-empty 1-D array of times, got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise InputError("t_eval contains non-finite times: give finite times")
    if np.any(np.diff(t) < 0.0):
        k = int(np.argmax(np.diff(t) < 0.0))
        raise InputError(f"t_eval must be sorted ascending, but t_eval[{k + 1}] = {t[k + 1]} < {t[k]}: sort it")
    start = float(t[0]) if t0 is None else float(t0)
    if not np.isfinite(start):
        raise InputError(f"t0 must be finite, got {start}")
    if t[0] < start:
        raise InputError(f"t_eval starts at {t[0]}, before t0 = {start}: give output times >= t0")
    return t, start


def _channels(inputs: Sequence[InputChannel | None] | None, m: int) -> list[InputChannel | None]:
    channels: list[InputChannel | None] = [None] * m if inputs is None else list(inputs)
    if len(channels) != m:
        raise ShapeError(f"{len(channels)} input channels given for B with {m} columns: give one per column")
    return channels


def _affine_pieces(channel: InputChannel, j: int, t0: float, t1: float) -> tuple[Array, Array, Array]:
    """The validated ``affine_pieces`` of channel ``j`` on [t0, t1]."""
    breaks, values, slopes = (np.asarray(a, dtype=float).reshape(-1) for a in channel.affine_pieces(t0, t1))
    k = values.size
    if k == 0 or breaks.size != k + 1 or slopes.size != k:
        raise ShapeError(
            f"input {j}: affine_pieces returned {breaks.size} breaks, {values.size} values, {slopes.size} slopes;"
            " expected K+1, K, K with K >= 1"
        )
    if not (np.all(np.isfinite(breaks)) and np.all(np.isfinite(values)) and np.all(np.isfinite(slopes))):
        raise InputError(f"input {j}: affine_pieces returned non-finite numbers: check the signal's parameters")
    if np.any(np.diff(breaks) < 0.0) or breaks[0] > t0 or breaks[-1] < t1:
        raise InputError(
            f"input {j}: affine_pieces breaks {breaks.tolist()} must be sorted and cover [{t0}, {t1}]"
        )
    return breaks, values, slopes


# --- the augmented generator ----------------------------------------------------------------------------
def _sine_block(channels: Sequence[InputChannel | None], B: Array) -> tuple[Array, Array]:
    """Distinct frequencies ``(p,)`` and the coupling ``(n, 2p)`` of (sin, cos)(omega t) into x'.

    amplitude * sin(omega t + phase) = amplitude cos(phase) sin(omega t) + amplitude sin(phase) cos(omega t),
    so one oscillator per distinct omega carries every channel's terms at that frequency.
    """
    coupling: dict[float, Array] = {}
    for j, channel in enumerate(channels):
        if channel is None:
            continue
        for term in channel.sine_terms():
            try:
                amplitude, omega, phase = (float(v) for v in term)
            except (TypeError, ValueError):
                raise InputError(f"input {j}: sine term {term!r} must be (amplitude, omega, phase)") from None
            if not (np.isfinite(amplitude) and np.isfinite(omega) and np.isfinite(phase)):
                raise InputError(f"input {j}: sine term {term} is not finite: check the signal's parameters")
            columns = coupling.setdefault(omega, np.zeros((B.shape[0], 2)))
            columns[:, 0] += amplitude * np.cos(phase) * B[:, j]
            columns[:, 1] += amplitude * np.sin(phase) * B[:, j]
    omegas = np.array(list(coupling), dtype=float)
    block = np.hstack(list(coupling.values())) if coupling else np.zeros((B.shape[0], 0))
    return omegas, block


def _generator(A: Array, B: Array, omegas: Array, coupling: Array) -> Array:
    """M (N, N), N = n + 2p + 2m, acting on (x, z, u0, slope): x' = A x + coupling z + B u, u' = slope."""
    n, m, p = A.shape[0], B.shape[1], omegas.size
    size = n + 2 * p + 2 * m
    M = np.zeros((size, size))
    M[:n, :n] = A
    M[:n, n:n + 2 * p] = coupling
    for i, omega in enumerate(omegas):
        k = n + 2 * i
        M[k, k + 1], M[k + 1, k] = omega, -omega
    u = n + 2 * p
    M[:n, u:u + m] = B
    M[u:u + m, u + m:] = np.eye(m)
    return M


def _van_loan_blocks(A: Array, B: Array, h: float, order: int) -> tuple[Array, ...]:
    """Top block row [Phi, G0, ..., G_order] of expm(h M) for the hold of the given order (0 or 1).

    M = [[A, B], [0, 0]] for order 0, [[A, B, 0], [0, 0, I], [0, 0, 0]] for order 1.
    """
    n, m = A.shape[0], B.shape[1]
    M = _generator(A, B, np.zeros(0), np.zeros((n, 0)))[: n + (order + 1) * m, : n + (order + 1) * m]
    top = _expm(h * M)[:n]
    return (top[:, :n], *(top[:, n + k * m:n + (k + 1) * m] for k in range(order + 1)))


def generator_quantum(M: Array) -> float:
    """The step lengths within which one exponential of ``M`` serves (SHARE_TOLERANCE / ||M||_1; inf for M = 0)."""
    norm = float(np.linalg.norm(M, 1))
    return SHARE_TOLERANCE / norm if norm > 0.0 else math.inf


class _ExpmCache:
    """Matrix exponentials expm(h M) shared by step lengths within ``SHARE_TOLERANCE / ||M||_1``.

    ``step(h, y, n)`` returns the first n entries of expm(h M) @ y. A step h close to a cached h0 uses
    expm(h M) = expm((h - h0) M) expm(h0 M) ~ (I + (h - h0) M) expm(h0 M), exact to rounding, so uniform
    grids (whose spacings differ in the last bits) cost one expm (the sharing is
    robodyn.linear.exact_steps.SharedExponentials, which the plain-float steps use too).
    """

    def __init__(self, M: Array) -> None:
        self.M = M
        self.shared: SharedExponentials[Array] = SharedExponentials(generator_quantum(M), lambda h: _expm(h * M))

    def step(self, h: float, y: Array, n: int) -> Array:
        found = self.shared.lookup(h)
        assert found is not None  # computed when missing
        h0, E = found
        if h == h0:
            return E[:n] @ y
        w = E @ y
        return w[:n] + (h - h0) * (self.M[:n] @ w)


# --- public API -----------------------------------------------------------------------------------------
def exact_discretization(A: ArrayLike, B: ArrayLike, h: float) -> tuple[Array, Array]:
    """Zero-order-hold discretization: x_{k+1} = Phi x_k + Gamma u_k for u constant over the step.

    Phi = e^{A h}, Gamma = integral_0^h e^{A s} ds B, both from the top block row of
    ``expm(h * [[A, B], [0, 0]])`` (Van Loan 1978, IEEE TAC 23(3)); valid for singular A.

    Parameters
    ----------
    A : (n, n)
    B : (n, m)
    h
        Step length, finite and >= 0.

    Returns
    -------
    Phi : (n, n)
    Gamma : (n, m)
    """
    A_, B_ = _system_matrices(A, B)
    Phi, Gamma = _van_loan_blocks(A_, B_, _step_length(h), order=0)
    return Phi, Gamma


def exact_first_order_hold(A: ArrayLike, B: ArrayLike, h: float) -> tuple[Array, Array, Array]:
    """Discretization for an input affine over the step: x_{k+1} = Phi x_k + Gamma0 u_k + Gamma1 s_k.

    The input is u(t_k + tau) = u_k + s_k tau for tau in [0, h]. Phi = e^{A h},
    Gamma0 = integral_0^h e^{A s} ds B (the zero-order-hold Gamma) and
    Gamma1 = integral_0^h e^{A (h - tau)} B tau dtau, from the top block row of
    ``expm(h * [[A, B, 0], [0, 0, I], [0, 0, 0]])`` (Van Loan 1978, IEEE TAC 23(3)).
    For the interpolation between samples u_k, u_{k+1} (s_k = (u_{k+1} - u_k) / h) the input matrices are
    ``Gamma0 - Gamma1 / h`` on u_k and ``Gamma1 / h`` on u_{k+1}.

    Parameters
    ----------
    A : (n, n)
    B : (n, m)
    h
        Step length, finite and >= 0.

    Returns
    -------
    Phi : (n, n)
    Gamma0 : (n, m)
    Gamma1 : (n, m)
    """
    A_, B_ = _system_matrices(A, B)
    Phi, Gamma0, Gamma1 = _van_loan_blocks(A_, B_, _step_length(h), order=1)
    return Phi, Gamma0, Gamma1


def _merged_grid(t: Array, t0: float, pieces: Sequence[tuple[Array, Array, Array]]) -> Array:
    """Sorted distinct times: t0, the output times and every input break strictly inside (t0, t[-1])."""
    inner = [b[(b > t0) & (b < t[-1])] for b, _, _ in pieces]
    return sorted_unique(np.concatenate([[t0], t, *inner]))


def _affine_on_intervals(starts: Array, pieces: Sequence[tuple[Array, Array, Array]]) -> tuple[Array, Array]:
    """Value at the start and slope of every channel on each interval: two ``(K, m)`` arrays."""
    u0 = np.zeros((starts.size, len(pieces)))
    slope = np.zeros_like(u0)
    for j, (breaks, values, slopes) in enumerate(pieces):
        k = np.clip(np.searchsorted(breaks, starts, side="right") - 1, 0, values.size - 1)
        u0[:, j] = values[k] + slopes[k] * (starts - breaks[k])
        slope[:, j] = slopes[k]
    return u0, slope


def exact_response(
    A: ArrayLike,
    B: ArrayLike,
    x0: ArrayLike,
    t_eval: ArrayLike,
    inputs: Sequence[InputChannel | None] | None,
    t0: float | None = None,
) -> Array:
    """States of x' = A x + B u at the output times, exact for piecewise-affine plus sinusoidal inputs.

    The output times and every input break are merged into one grid; on each interval [a, b] the state is
    advanced by expm((b - a) M) applied to (x(a), z(a), u0, slope), with M the augmented generator of the
    state, the sine oscillators z = (sin(omega a), cos(omega a)) and the affine input part u0 + slope (t - a)
    (Van Loan, "Computing integrals involving the matrix exponential", IEEE TAC 23(3), 1978). Matrix
    exponentials are cached by step length, so a uniform grid costs one.

    Parameters
    ----------
    A : (n, n)
    B : (n, m)
    x0 : (n,)
        State at t0.
    t_eval : (T,)
        Output times, sorted ascending, all >= t0.
    inputs : sequence of m channels, or None
        One object per column of B with ``sine_terms()`` and ``affine_pieces(t0, t1)`` (see
        :class:`InputChannel`); ``None`` (for a channel or for all) is a zero input.
    t0
        Initial time; defaults to ``t_eval[0]``.

    Returns
    -------
    x : (T, n)
        ``x[i]`` is the state at ``t_eval[i]``.
    """
    A_, B_ = _system_matrices(A, B)
    n = A_.shape[0]
    x = _initial_state(x0, n)
    t, start = _output_times(t_eval, t0)
    channels = _channels(inputs, B_.shape[1])
    end = float(t[-1])
    if end == start:
        return np.tile(x, (t.size, 1))
    pieces = [
        _affine_pieces(c, j, start, end) if c is not None else (np.array([start, end]), np.zeros(1), np.zeros(1))
        for j, c in enumerate(channels)
    ]
    omegas, coupling = _sine_block(channels, B_)
    M = _generator(A_, B_, omegas, coupling)
    grid = _merged_grid(t, start, pieces)
    u0, slope = _affine_on_intervals(grid[:-1], pieces)
    angles = np.outer(grid[:-1], omegas)
    oscillators = np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(grid.size - 1, -1)
    extras = np.hstack([oscillators, u0, slope])
    # small: Python's floats, the quick path's own steps (robodyn.linear.exact_steps)
    if plain_sized(n, M.shape[0]):
        shared = SharedExponentials(generator_quantum(M), lambda h: _expm(h * M).tolist())
        plain = plain_steps(grid.tolist(), x.tolist(), extras.tolist(), M.tolist(), shared)
        assert plain is not None  # every exponential is computed when missing
        states = np.array(plain, dtype=float).reshape(grid.size, n)
    else:
        cache = _ExpmCache(M)
        states = np.empty((grid.size, n))
        states[0] = x
        for k in range(grid.size - 1):
            states[k + 1] = cache.step(float(grid[k + 1] - grid[k]), np.concatenate([states[k], extras[k]]), n)
    return states[np.searchsorted(grid, t)]


def with_constant(B: Array, c: Array, channels: Sequence[InputChannel | None]
                  ) -> tuple[Array, list[InputChannel | None]]:
    """The input matrix and channels of x' = A x + B u + c for :func:`exact_response`: c ``(n,)``, when not zero, as
    one more column of B ``(n, m)`` driven by the constant ``1`` (the last channel)."""
    if not np.any(c != 0):
        return B, list(channels)
    from robodyn.signals import Constant

    return np.hstack([B, np.asarray(c, dtype=float).reshape(-1, 1)]), [*channels, Constant(1.0)]


def exact_transitions(A: ArrayLike, B: ArrayLike, t_eval: ArrayLike, t0: float) -> dict[str, Any] | None:
    """What :func:`exact_response` steps with, from ``t0`` over the times ``t_eval`` under constant inputs, in plain
    floats: ``generator`` M (N rows), ``quantum`` (None when infinite) and ``entries``, the ``[h0, expm(h0 M)]`` its
    steps compute (robodyn.linear.exact_steps), for a run image (robodyn.integrate.paths.exact_image); None
    for a system
    too large for the plain steps, or an exponential that is not finite."""
    A_, B_ = _system_matrices(A, B)
    t, start = _output_times(t_eval, t0)
    M = _generator(A_, B_, np.zeros(0), np.zeros((A_.shape[0], 0)))
    if not plain_sized(A_.shape[0], M.shape[0]) or float(t[-1]) == start:
        return None
    quantum = generator_quantum(M)
    shared = SharedExponentials(quantum, lambda h: _expm(h * M).tolist())
    grid = sorted_unique(np.concatenate([[start], t])).tolist()
    size, n = M.shape[0], A_.shape[0]
    plain_steps(grid, [0.0] * n, [[0.0] * (size - n)] * (len(grid) - 1), M.tolist(), shared)  # the steps' lookups
    entries = [[h, rows] for h, rows in shared.entries.values()]
    if not all(math.isfinite(v) for _, rows in entries for row in rows for v in row):
        return None
    return {"generator": M.tolist(), "quantum": quantum if math.isfinite(quantum) else None, "entries": entries}


def _expm(M: np.ndarray) -> np.ndarray:
    """``scipy.linalg.expm``, imported on first use (0.2 s that simulate() on other paths need not pay)."""
    import scipy.linalg

    return scipy.linalg.expm(M)
