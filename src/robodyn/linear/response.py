"""Forced response of x' = A x + B u, y = C x + D u by the convolution integral.

x(t) = e^{A t} x0 + integral_0^t e^{A (t - s)} B u(s) ds, evaluated in modal coordinates when the
eigenvector basis is well conditioned and in Schur coordinates otherwise (see
:mod:`robodyn.linear.modes`), each output interval by adaptive quadrature split at the inputs'
breakpoints. It shares no code with the matrix-exponential simulation path, against which it is tested.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike
from scipy.integrate import quad_vec

from robodyn.base.errors import ConvergenceError, InputError, NumericalError, ShapeError, UnknownNameError
from robodyn.base.numbers import finite_number, is_real_number
from robodyn.linear.modes import Array, ComplexArray, modal_decomposition, system_matrix
from robodyn.linear.systems import require_continuous
from robodyn.signals.core import Signal

__all__ = ["forced_response"]

QUAD_EPSREL: Final = 1e-12  # Relative accuracy of each interval's convolution integral.
QUAD_EPSABS: Final = 1e-15  # Absolute floor of the same (an interval where u = 0 converges at once).


def _state_space(system: Any) -> tuple[Array, Array, Array, Array, tuple[str, ...], tuple[str, ...]]:
    A, states = system_matrix(system)
    n = A.shape[0]
    B = np.zeros((n, 0)) if getattr(system, "B", None) is None else np.array(system.B, dtype=float, ndmin=2)
    C = np.eye(n) if getattr(system, "C", None) is None else np.array(system.C, dtype=float, ndmin=2)
    m, p = B.shape[1], C.shape[0]
    D = np.zeros((p, m)) if getattr(system, "D", None) is None else np.array(system.D, dtype=float, ndmin=2)
    for label, matrix, shape in (("B", B, (n, m)), ("C", C, (p, n)), ("D", D, (p, m))):
        if matrix.shape != shape:
            raise ShapeError(f"{label} has shape {matrix.shape}, expected {shape}")
        if not np.all(np.isfinite(matrix)):
            raise InputError(f"{label} contains non-finite entries: give finite numbers")
    names = getattr(system, "inputs", None)
    inputs = tuple(names) if names is not None else tuple(f"u{j + 1}" for j in range(m))
    return A, B, C, D, states, inputs


def _times(t: ArrayLike) -> Array:
    try:
        times = np.array(t, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError("t must be a vector of times") from None
    if times.size == 0 or not np.all(np.isfinite(times)):
        raise InputError("t must be a non-empty vector of finite times")
    if times[0] < 0.0 or np.any(np.diff(times) < 0.0):
        raise InputError("t must be sorted ascending with t >= 0 (x0 is the state at t = 0): sort it")
    return times


def _initial(x0: ArrayLike | Mapping[str, float] | None, states: tuple[str, ...]) -> Array:
    n = len(states)
    if x0 is None:
        return np.zeros(n)
    if isinstance(x0, Mapping):
        x = np.zeros(n)
        for name, value in x0.items():
            if name not in states:
                raise UnknownNameError(f"x0 names {name!r}, not a state: one of {', '.join(states)}")
            x[states.index(name)] = finite_number(value, f"x0[{name!r}]")
        return x
    try:
        x = np.array(x0, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"x0 must be numbers or a {{state: value}} mapping, got {x0!r}") from None
    if x.shape != (n,) or not np.all(np.isfinite(x)):
        raise ShapeError(f"x0 must be {n} finite numbers (one per state {', '.join(states)}), got {x.tolist()}")
    return x


def _scalar(entry: Any, name: str) -> Callable[[float], float]:
    """One input channel as τ -> float: None (zero), a number, a signal or a callable u_j(τ)."""
    if entry is None or is_real_number(entry):
        value = 0.0 if entry is None else finite_number(entry, f"input {name!r}")
        return lambda tau: value
    if not callable(entry):
        raise InputError(f"input {name!r} must be a signal, a number or a callable u(t), got {entry!r}")
    return lambda tau: finite_number(float(entry(tau)), f"input {name!r} at t={tau}")


def _input_function(u: Any, inputs: tuple[str, ...]) -> tuple[Callable[[float], Array], list[Signal]]:
    """u(τ) -> (m,) with checks, and the signals whose breakpoints the quadrature must respect."""
    m, listed = len(inputs), ", ".join(inputs) or "none"
    if callable(u) and not isinstance(u, Signal):
        def vector(tau: float) -> Array:
            value = np.asarray(u(tau), dtype=float).reshape(-1)
            if value.shape != (m,) or not np.all(np.isfinite(value)):
                raise InputError(f"u({tau}) returned {value.tolist()}: return {m} finite numbers")
            return value

        return vector, []
    entries: list[Any] = [None] * m
    if isinstance(u, Signal) or is_real_number(u):
        if m != 1:
            raise ShapeError(f"one input given for {m} inputs ({listed}): give a sequence or mapping, one per input")
        entries = [u]
    elif isinstance(u, Mapping):
        for name, value in u.items():
            if name not in inputs:
                raise UnknownNameError(f"u names {name!r}, not an input: one of {listed}")
            entries[inputs.index(name)] = value
    elif isinstance(u, Sequence | np.ndarray):
        if len(u) != m:
            raise ShapeError(f"{len(u)} inputs given, expected {m} ({listed})")
        entries = list(u)
    elif u is not None:
        raise InputError(f"u must be None, a signal, a number, a sequence or mapping of them, or u(t) -> (m,); "
                         f"got {u!r}")
    channels = [_scalar(entry, name) for entry, name in zip(entries, inputs)]
    return (lambda tau: np.array([c(tau) for c in channels], dtype=float)), [e for e in entries
                                                                             if isinstance(e, Signal)]


def forced_response(
    system: Any,
    t: ArrayLike,
    u: Any = None,
    x0: ArrayLike | Mapping[str, float] | None = None,
) -> tuple[Array, Array]:
    """States and outputs of x' = A x + B u, y = C x + D u from the convolution integral.

    x(t) = e^{A t} x0 + ∫_0^t e^{A (t - τ)} B u(τ) dτ in modal coordinates V^-1 x (e^{Λ s} diagonal) when the
    decomposition is reliable, else in Schur coordinates Z^H x (e^{T s} by expm). The free part is evaluated
    at each t; the forced part is advanced from output time to output time, w_k = e^{G h} w_{k-1} +
    ∫ e^{G (t_k - τ)} B_w u(τ) dτ, by adaptive Gauss-Kronrod quadrature (``scipy.integrate.quad_vec``, relative
    accuracy QUAD_EPSREL) split at the signals' breakpoints: nothing is shared with ``method="exact"``.

    Parameters
    ----------
    system
        A :class:`~robodyn.LinearSystem` (or an object with A and optionally B, C, D, states, inputs).
    t : (T,)
        Output times, sorted, >= 0.
    u
        ``None`` (zero); a robodyn signal or number (one input); a sequence of m signals, numbers, callables
        u_j(τ) or ``None``; a mapping ``{input: ...}`` of those; or a callable u(τ) -> (m,). Give callables
        with jumps the jump times as output times, or the quadrature may converge slowly.
    x0 : (n,) or {state: value}, optional
        The state at t = 0 (default zero).

    Returns
    -------
    x : (T, n)
    y : (T, p)

    Raises
    ------
    ConvergenceError, NumericalError
        The quadrature did not reach its accuracy; the response overflows (an unstable mode, a long time).
    """
    require_continuous(system, "forced_response", "step it with robodyn.simulate(system, ...)")
    A, B, C, D, states, inputs = _state_space(system)
    times, x_init = _times(t), _initial(x0, states)
    u_of, signals = _input_function(u, inputs)
    decomposition = modal_decomposition(A)
    growth = float(np.max(decomposition.eigenvalues.real))
    if growth * times[-1] > math.log(np.finfo(float).max) - 10.0:  # e^{λ t} would overflow
        raise NumericalError(f"the response grows like e^({growth:.6g} t) and overflows before t = {times[-1]}: "
                             "shorten the time span")
    if decomposition.reliable:
        P, P_inv, values = decomposition.V, decomposition.V_inv, decomposition.eigenvalues

        def apply(s: float, w: ComplexArray) -> ComplexArray:
            return np.asarray(np.exp(values * s) * w, dtype=np.complex128)
    else:
        P, P_inv, T = decomposition.schur_Z, decomposition.schur_Z.conj().T, decomposition.schur_T

        def apply(s: float, w: ComplexArray) -> ComplexArray:
            return np.asarray(scipy.linalg.expm(T * s) @ w, dtype=np.complex128)

    B_w, w_init, forced = P_inv @ B, P_inv @ x_init.astype(complex), np.zeros(A.shape[0], dtype=complex)
    x, previous = np.empty((times.size, A.shape[0])), 0.0
    for k, now in enumerate(times):
        if now > previous:
            forced = apply(now - previous, forced)
            if B.shape[1]:
                forced = forced + _interval_integral(apply, B_w, u_of, signals, previous, now)
        x[k] = (P @ (apply(float(now), w_init) + forced)).real
        previous = float(now)
    u_values = np.array([u_of(float(tk)) for tk in times]).reshape(times.size, B.shape[1])
    return x, x @ C.T + u_values @ D.T


def _interval_integral(apply: Callable[[float, ComplexArray], ComplexArray], B_w: ComplexArray,
                       u_of: Callable[[float], Array], signals: list[Signal], a: float, b: float) -> ComplexArray:
    """∫_a^b e^{G (b - τ)} B_w u(τ) dτ by quad_vec, split at the input breakpoints inside (a, b)."""
    def integrand(tau: float) -> ComplexArray:
        return apply(b - tau, B_w @ u_of(tau))

    inner = np.unique(np.concatenate([s.breakpoints(a, b) for s in signals])) if signals else np.empty(0)
    with np.errstate(over="ignore", invalid="ignore"):
        result, _, info = quad_vec(integrand, a, b, epsabs=QUAD_EPSABS, epsrel=QUAD_EPSREL, norm="max",
                                   points=inner.tolist() or None, full_output=True)
    if not info.success:
        raise ConvergenceError(f"the convolution integral on [{a}, {b}] did not converge ({info.message}): "
                               "add output times at the input's discontinuities or shorten the intervals")
    return np.asarray(result, dtype=np.complex128)
