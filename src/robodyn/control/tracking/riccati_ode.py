"""The Riccati differential equation of TVLQR integrated backward over the whole horizon in one compiled call.

-S' = A' S + S A - S B R^-1 B' S + Q, S(t_T) = Qf (:mod:`~robodyn.control.tracking.riccati`), with A(t), B(t) the
model's exact Jacobians on the reference x*(t), u*(t): at every stage of every step the compiled kernel evaluates the
cubic Hermite x*(t) of the interval (:func:`robodyn.signals.tracking.hermite`), u*(t) held or linear, and calls the
model's compiled ``jac`` through its address (:mod:`~robodyn.control.tracking.knots`). Nothing is interpolated or
tabulated: A and B are exact at each stage point, as in the interval-by-interval scipy integration this replaces.

The integrator is DOP853 (Hairer, Nørsett & Wanner, *Solving ODEs I*, II.5 and II.10; the tableau of
:mod:`robodyn.integrate.methods.tableaus`, the step controller's constants of
:mod:`robodyn.integrate.methods.controller`, scipy's error norm with the 5th- and 3rd-order estimators). Each
interval [t_k, t_{k+1}] is integrated on its own (a held input puts a kink in A(t), B(t) at each knot), starting with
the step the last interval ended with, at most the whole interval; accuracy is kept by the error control at ``rtol``
and ``atol`` exactly as scipy's DOP853 keeps it, so the gains agree with scipy's at tight tolerance
(tests/control/tracking/test_tracking_riccati_ode.py).

Cost: a step takes 12 Jacobians (its stage 12 and its last evaluation share t + h) and 13 right-hand sides, S' by
loops for small models and by four BLAS products from ``_BLAS_SIZE`` states. Along 1,000 knots of the Panda
(16 states) DOP853 takes ~1,215 steps at the default rtol 1e-10: ~14,400 Jacobians at ~3.7 us and ~15,600
right-hand sides at ~1.6 us, about 95 ms in all, two thirds of it the model's Jacobians (benchmarks/bench_tvlqr.py).
The discrete-time design (one Jacobian and one exponential per interval) takes ~20 ms on the same trajectory.
"""

from __future__ import annotations

from typing import Final, NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import NumericalError
from robodyn.codegen.indirect import model_call
from robodyn.integrate.methods.controller import MAX_FACTOR, MIN_FACTOR, SAFETY, step_exponent
from robodyn.integrate.methods.tableaus import DOP853

__all__ = ["RiccatiSolution", "compiled_riccati"]

Array = NDArray[np.float64]

_jac = model_call(2)  # fns[2]: [df/dx | df/du] (n (n + m),)
_EXPONENT: Final = step_exponent(7)  # DOP853's error estimate is of order 7
_MIN_STEP: Final = 1e-12  # A step below this fraction of its interval has collapsed.
_MAX_STEPS: Final = 100_000  # Steps per interval before the integration is given up.
_BLAS_SIZE: Final = 10  # From this many states S' is four BLAS products: loops win below (measured: 6 states 0.7 us
# against 0.9 us), BLAS above (12 states 1.7 us against 2.4 us, 16 states 1.6 us against 3.2 us).


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _riccati_rhs(fns: np.ndarray, time: float, k: int, S: np.ndarray, t: np.ndarray, x: np.ndarray, u: np.ndarray,
                 d0: np.ndarray, d1: np.ndarray, hold: bool, p: np.ndarray, Q: np.ndarray, R_inv: np.ndarray,
                 point: np.ndarray, control: np.ndarray, J: np.ndarray, SA: np.ndarray, SB: np.ndarray,
                 W: np.ndarray, G: np.ndarray, out: np.ndarray,
                 counts: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """out (n n,) = S' at ``time`` in interval k, S (n n,) row-major. ``point`` (n + 2,) ends with the time and
    interval of the Jacobian in J: DOP853's stage 12 and its step's last evaluation share t + h, so one
    Jacobian serves both."""
    n, m = Q.shape[0], R_inv.shape[0]
    if time != point[n] or k != point[n + 1]:
        h = t[k + 1] - t[k]
        s = min(max((time - t[k]) / h, 0.0), 1.0)
        s2, s3 = s * s, s * s * s
        for i in range(n):
            point[i] = ((2 * s3 - 3 * s2 + 1) * x[k, i] + (s3 - 2 * s2 + s) * h * d0[k, i]
                        + (-2 * s3 + 3 * s2) * x[k + 1, i] + (s3 - s2) * h * d1[k, i])
        for j in range(m):
            control[j] = u[k, j] if hold else (1.0 - s) * u[k, j] + s * u[k + 1, j]
        _jac(fns, time, point[:n], control, p, J)
        point[n], point[n + 1] = time, k
        counts[2] += 1
    if n >= _BLAS_SIZE:
        _products_blas(S, J, Q, R_inv, SA, SB, W, G, out)
    else:
        _products_loops(S, J, Q, R_inv, SA, SB, W, out)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _products_blas(S: np.ndarray, J: np.ndarray, Q: np.ndarray, R_inv: np.ndarray, SA: np.ndarray, SB: np.ndarray,
                   W: np.ndarray, G: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """out (n n,) = -(S A + (S A)' - S B R^-1 B' S + Q) for [A | B] = J (n (n + m),), by four BLAS products."""
    n, m = Q.shape[0], R_inv.shape[0]
    nn = n * n
    square = S.reshape(n, n)
    np.dot(square, J[:nn].reshape(n, n), SA)
    np.dot(square, J[nn:].reshape(n, m), SB)
    np.dot(SB, R_inv, W)
    np.dot(W, SB.T, G)
    for i in range(n):
        for j in range(i, n):
            v = SA[i, j] + SA[j, i] + Q[i, j] - G[i, j]
            out[i * n + j] = -v
            out[j * n + i] = -v


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _products_loops(S: np.ndarray, J: np.ndarray, Q: np.ndarray, R_inv: np.ndarray, SA: np.ndarray, SB: np.ndarray,
                    W: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """:func:`_products_blas` by loops, for small models (where a BLAS call costs more than its product)."""
    n, m = Q.shape[0], R_inv.shape[0]
    nn = n * n
    for i in range(n):
        for j in range(n):
            SA[i, j] = 0.0
        for j in range(m):
            SB[i, j] = 0.0
        for q in range(n):
            s_iq = S[i * n + q]
            for j in range(n):
                SA[i, j] += s_iq * J[q * n + j]
            for j in range(m):
                SB[i, j] += s_iq * J[nn + q * m + j]
        for j in range(m):
            v = 0.0
            for q in range(m):
                v += SB[i, q] * R_inv[q, j]
            W[i, j] = v
    for i in range(n):
        for j in range(i, n):
            v = SA[i, j] + SA[j, i] + Q[i, j]
            for q in range(m):
                v -= W[i, q] * SB[j, q]
            out[i * n + j] = -v
            out[j * n + i] = -v


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _integrate(fns: np.ndarray, t: np.ndarray, x: np.ndarray, u: np.ndarray, d0: np.ndarray, d1: np.ndarray,
               hold: bool, p: np.ndarray, Q: np.ndarray, R_inv: np.ndarray, rtol: float, atol: float,
               a: np.ndarray, b: np.ndarray, c: np.ndarray, e5: np.ndarray, e3: np.ndarray, S: np.ndarray,
               counts: np.ndarray) -> int:  # pragma: no cover - runs compiled only
    """S (T, n n) from S[T - 1] back to S[0]; -1, or the interval whose integration failed. ``counts`` gets the
    accepted steps, the right-hand sides and the Jacobians."""
    T, n, m = t.size, Q.shape[0], R_inv.shape[0]
    N = n * n
    stages = b.size  # 13: the 12 stages and f(t + h, y_new)
    K = np.empty((stages, N))
    y, y_new, work = np.empty(N), np.empty(N), np.empty(N)
    point, control, J = np.full(n + 2, np.nan), np.empty(m), np.empty(n * (n + m))
    SA, SB, W, G = np.empty((n, n)), np.empty((n, m)), np.empty((n, m)), np.empty((n, n))
    step = t[T - 1] - t[T - 2]
    for k in range(T - 2, -1, -1):
        y[:] = S[k + 1]
        time, end = t[k + 1], t[k]
        length = t[k + 1] - t[k]
        step = min(step, length)
        _riccati_rhs(fns, time, k, y, t, x, u, d0, d1, hold, p, Q, R_inv, point, control, J, SA, SB, W, G, K[0],
                     counts)
        counts[1] += 1
        rejected = False
        taken = 0
        while time > end:
            if taken > _MAX_STEPS or step < _MIN_STEP * length:
                return k
            taken += 1
            h = -step
            last = time + h - end < _MIN_STEP * length  # the last step lands on the knot
            if last:
                h = end - time
            for s in range(1, stages - 1):
                work[:] = y
                for j in range(s):
                    weight = h * a[s, j]
                    if weight != 0.0:
                        for i in range(N):
                            work[i] += weight * K[j, i]
                _riccati_rhs(fns, time + c[s] * h, k, work, t, x, u, d0, d1, hold, p, Q, R_inv, point, control,
                             J, SA, SB, W, G, K[s], counts)
            y_new[:] = y
            for j in range(stages - 1):
                weight = h * b[j]
                if weight != 0.0:
                    for i in range(N):
                        y_new[i] += weight * K[j, i]
            _riccati_rhs(fns, time + h, k, y_new, t, x, u, d0, d1, hold, p, Q, R_inv, point, control, J, SA, SB,
                         W, G, K[stages - 1], counts)
            counts[1] += stages - 1
            err5, err3 = 0.0, 0.0
            finite = True
            for i in range(N):
                scale = atol + rtol * max(abs(y[i]), abs(y_new[i]))
                v5, v3 = 0.0, 0.0
                for j in range(stages):
                    v5 += e5[j] * K[j, i]
                    v3 += e3[j] * K[j, i]
                err5 += (v5 / scale) ** 2
                err3 += (v3 / scale) ** 2
                finite = finite and np.isfinite(y_new[i])
            if err5 == 0.0 and err3 == 0.0:
                error = 0.0
            else:
                error = abs(h) * err5 / np.sqrt((err5 + 0.01 * err3) * N)
            if finite and error < 1.0:
                factor = MAX_FACTOR if error == 0.0 else min(MAX_FACTOR, SAFETY * error ** _EXPONENT)
                if rejected:
                    factor = min(1.0, factor)
                time = end if last else time + h
                y[:] = y_new
                K[0] = K[stages - 1]
                step = abs(h) * factor
                rejected = False
                counts[0] += 1
            else:
                factor = MIN_FACTOR if not finite else max(MIN_FACTOR, SAFETY * error ** _EXPONENT)
                step = abs(h) * factor
                rejected = True
        S[k] = y
    return -1


class RiccatiSolution(NamedTuple):
    """S (T, n, n) at the knots, and the integration's work: accepted ``steps``, right-hand sides ``rates``, and
    the model's ``jacobians`` it called."""

    S: Array
    steps: int
    rates: int
    jacobians: int


def compiled_riccati(fns: np.ndarray, t: Array, x: Array, u: Array, d0: Array, d1: Array, hold: bool, p: Array,
                     Q: Array, R: Array, Qf: Array, rtol: float) -> RiccatiSolution:
    """:class:`RiccatiSolution` of the Riccati differential equation (module docstring) at the knots ``t`` (T,) on
    the reference ``x`` (T, n), ``u`` (T, m) with the slopes ``d0``, ``d1`` (T - 1, n), through the model's addresses
    ``fns``.

    ``rtol`` is DOP853's relative tolerance; its absolute tolerance is ``rtol`` times the size of the weights
    (max(1, |Qf|, |Q| (t_T - t_0))), the scale of S.
    """
    T, n = x.shape
    scale = max(1.0, float(np.max(np.abs(Qf))), float(np.max(np.abs(Q))) * float(t[-1] - t[0]))
    S = np.empty((T, n * n))
    S[-1] = (0.5 * (Qf + Qf.T)).reshape(-1)
    counts = np.zeros(3, dtype=np.int64)
    c = np.ascontiguousarray
    tableau = DOP853
    e5, e3 = np.asarray(tableau.e, dtype=float), np.asarray(tableau.e3, dtype=float)
    failed = _integrate(fns, c(t), c(x), c(u), c(d0), c(d1), hold, c(p, dtype=float), c(Q), c(np.linalg.inv(R)),
                        rtol, rtol * scale, c(tableau.A), c(tableau.b), c(tableau.c), e5, e3, S, counts)
    if failed >= 0 or not np.all(np.isfinite(S)):
        where = f"[{t[failed]:g}, {t[failed + 1]:g}]" if failed >= 0 else "the horizon"
        raise NumericalError(f"tvlqr: the Riccati equation could not be integrated back over {where}: check that the "
                             "trajectory is one of the model's and the weights are well scaled")
    return RiccatiSolution(S.reshape(T, n, n), int(counts[0]), int(counts[1]), int(counts[2]))
