"""Input-signal evaluator: numba-compatible source, loaded compiled or interpreted.

This file is a template, not an ordinary module: it is plain Python in numba's nopython subset, read
as text and pasted into generated kernel modules (:mod:`robodyn.integrate.kernels.module`) or executed as a fresh
module by :func:`robodyn.signals.load_evaluator`. It does not import numba and does not define
``hjit``: whoever loads it injects it into the module namespace before executing it (in generated
modules ``numba.njit(cache=True)`` without a Python wrapper, since only the kernels call it; numba's
``njit`` for :func:`robodyn.signals.load_evaluator`; an identity decorator on the interpreted path; see
docs/dev/simulation.md).
The engine concatenates this source into generated modules, so it must not contain ``from __future__``
imports, and its private names start with ``_sig_`` / ``_SIG_`` to avoid clashes: the kind codes are
imported from :mod:`robodyn.signals.kinds` (the table the packer uses too) under ``_SIG_`` aliases.

``inp = (codes, coef, tdata, K, xref, flags)`` is built by :meth:`robodyn.signals.Inputs.compiled`
(``flags[0]``: 0 no feedback, 1 state feedback K (m, n) about xref (n,), 2 tracking feedback tabulated in K and xref
as :mod:`robodyn.signals.tracking` describes);
:mod:`robodyn.signals.kinds` lists the kind codes and their ``coef`` columns. One row ``j`` of
``codes``/``coef`` is one term ``coef[j, 0] * f(t)`` added to channel ``codes[j, 0]``.
"""

# ``hjit`` is injected by the loader (see above); tell the linters it is not a typo:
# ruff: noqa: F821
# mypy: disable-error-code="name-defined"

import math

from robodyn.signals.kinds import CONSTANT as _SIG_CONSTANT
from robodyn.signals.kinds import PULSE as _SIG_PULSE
from robodyn.signals.kinds import RAMP as _SIG_RAMP
from robodyn.signals.kinds import SINE as _SIG_SINE
from robodyn.signals.kinds import STEP as _SIG_STEP
from robodyn.signals.kinds import TABLE_LINEAR as _SIG_TABLE_LINEAR
from robodyn.signals.kinds import WHITE_NOISE as _SIG_WHITE_NOISE


@hjit
def _sig_mulhilo(a, b):
    """(hi, lo) 32-bit words of a * b for 32-bit a, b, from 16-bit halves: every product and sum fits in 63 bits, so
    numba's int64 and Python's ints give the same words."""
    a0 = a & 0xFFFF
    a1 = a >> 16
    b0 = b & 0xFFFF
    b1 = b >> 16
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    middle = (p00 >> 16) + (p01 & 0xFFFF) + (p10 & 0xFFFF)
    hi = a1 * b1 + (p01 >> 16) + (p10 >> 16) + (middle >> 16)
    return hi & 0xFFFFFFFF, ((middle & 0xFFFF) << 16) | (p00 & 0xFFFF)


@hjit
def _sig_normal(seed, k):
    """N_k of the stream ``seed``: Philox4x32-10 of the counter (k, 0) and key seed, then Box-Muller (the
    arithmetic of robodyn.signals.noise.standard_normals, on integers)."""
    x0 = k & 0xFFFFFFFF
    x1 = (k >> 32) & 0xFFFFFFFF
    x2 = 0
    x3 = 0
    k0 = seed & 0xFFFFFFFF
    k1 = (seed >> 32) & 0xFFFFFFFF
    for r in range(10):
        if r > 0:
            k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
            k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
        hi0, lo0 = _sig_mulhilo(0xD2511F53, x0)
        hi1, lo1 = _sig_mulhilo(0xCD9E8D57, x2)
        x0, x1, x2, x3 = hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0
    first = float(x0 >> 5) * 67108864.0 + float(x1 >> 6)
    second = float(x2 >> 5) * 67108864.0 + float(x3 >> 6)
    u1 = 1.0 - first * 1.1102230246251565e-16  # 2**-53
    u2 = second * 1.1102230246251565e-16
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


@hjit
def _sig_noise_index(t_piece, start, period):
    """k of the hold interval [start + k period, start + (k + 1) period) holding ``t_piece``."""
    k = math.floor((t_piece - start) / period)
    if t_piece < start + k * period:
        k -= 1
    elif t_piece >= start + (k + 1) * period:
        k += 1
    return int(k)


@hjit
def _sig_pulse_on(t_piece, t0, width, period):
    """Whether the pulse is high on the piece containing ``t_piece`` (right-continuous edges)."""
    if t_piece < t0:
        return False
    if period <= 0.0:
        return t_piece < t0 + width
    k = math.floor((t_piece - t0) / period)
    if t_piece < t0 + k * period:
        k -= 1
    elif t_piece >= t0 + (k + 1) * period:
        k += 1
    return t_piece < t0 + k * period + width


@hjit
def _sig_table(t, t_piece, tdata, offset, n, linear):
    """Table value: the interval is chosen by ``t_piece`` (binary search), the formula uses ``t``."""
    lo = 0
    hi = n
    while lo < hi:  # largest i with times[i] <= t_piece, as numpy.searchsorted(side="right") - 1
        mid = (lo + hi) // 2
        if tdata[offset + mid] <= t_piece:
            lo = mid + 1
        else:
            hi = mid
    i = lo - 1
    values = offset + n
    if i < 0:
        return tdata[values]
    if not linear or i >= n - 1:
        return tdata[values + i]
    t_left = tdata[offset + i]
    v_left = tdata[values + i]
    return v_left + (tdata[values + i + 1] - v_left) * ((t - t_left) / (tdata[offset + i + 1] - t_left))


@hjit
def _sig_tracking(t, t_piece, x, K, knots, hold, out):
    """out -= K(t) (x - x*(t)) of a tracking feedback: ``knots`` (T,) its times, ``K`` (T, m n + 3 n) its rows
    ``[K_k | x_k | d0_k | d1_{k-1}]`` (robodyn.signals.tracking); the interval is chosen by ``t_piece``."""
    m = out.shape[0]
    n = x.shape[0]
    T = knots.shape[0]
    lo = 0
    hi = T
    while lo < hi:  # largest i with knots[i] <= t_piece
        mid = (lo + hi) // 2
        if knots[mid] <= t_piece:
            lo = mid + 1
        else:
            hi = mid
    i = min(max(lo - 1, 0), T - 2)
    h = knots[i + 1] - knots[i]
    s = min(max((t - knots[i]) / h, 0.0), 1.0)
    past = t_piece >= knots[T - 1]  # after the end: the last knot's gain about the last knot's state
    if past:
        i = T - 2
        s = 1.0
    s2 = s * s
    s3 = s2 * s
    h00 = 2.0 * s3 - 3.0 * s2 + 1.0
    h10 = (s3 - 2.0 * s2 + s) * h
    h01 = -2.0 * s3 + 3.0 * s2
    h11 = (s3 - s2) * h
    w = s if hold == 0 or past else 0.0  # a held gain is K_i on the whole interval chosen by t_piece
    mn = m * n
    for r in range(m):
        feedback = 0.0
        for c in range(n):
            x_ref = (h00 * K[i, mn + c] + h10 * K[i, mn + n + c] + h01 * K[i + 1, mn + c]
                     + h11 * K[i + 1, mn + 2 * n + c])
            gain = (1.0 - w) * K[i, r * n + c] + w * K[i + 1, r * n + c]
            feedback += gain * (x[c] - x_ref)
        out[r] -= feedback


@hjit
def eval_inputs(t, t_piece, x, inp, out):
    """Write the inputs u (m,) at time ``t`` into ``out``; ``t_piece`` picks the piece of piecewise terms.

    Parameters
    ----------
    t : float
        Time used in the formulas (ramp value, sine, linear interpolation).
    t_piece : float
        Time choosing the piece: the side of a step or pulse edge, the table interval. Pass ``t`` for
        ordinary evaluation, the midpoint of the segment between two stop points inside integrators.
    x : (n,) float64
        State, used only with state feedback.
    inp : tuple
        ``(codes, coef, tdata, K, xref, flags)`` from ``Inputs.compiled()``.
    out : (m,) float64
        Overwritten with u.
    """
    codes, coef, tdata, K, xref, flags = inp
    for i in range(out.shape[0]):
        out[i] = 0.0
    for j in range(codes.shape[0]):
        kind = codes[j, 1]
        if kind == _SIG_CONSTANT:
            value = coef[j, 1]
        elif kind == _SIG_STEP:
            value = coef[j, 2] if t_piece < coef[j, 1] else coef[j, 3]
        elif kind == _SIG_RAMP:
            value = coef[j, 3] if t_piece < coef[j, 1] else coef[j, 3] + coef[j, 2] * (t - coef[j, 1])
        elif kind == _SIG_SINE:
            value = coef[j, 1] * math.sin(coef[j, 2] * t + coef[j, 3]) + coef[j, 4]
        elif kind == _SIG_PULSE:
            value = coef[j, 4]
            if _sig_pulse_on(t_piece, coef[j, 1], coef[j, 2], coef[j, 5]):
                value = coef[j, 4] + coef[j, 3]
        elif kind == _SIG_WHITE_NOISE:
            k = _sig_noise_index(t_piece, coef[j, 1], coef[j, 2])
            value = coef[j, 4] + coef[j, 3] * _sig_normal(int(coef[j, 5]), k)
        else:  # a table: zero-order hold (TABLE_ZOH) or linear (TABLE_LINEAR)
            linear = kind == _SIG_TABLE_LINEAR
            value = _sig_table(t, t_piece, tdata, int(coef[j, 1]), int(coef[j, 2]), linear)
        out[codes[j, 0]] += coef[j, 0] * value
    if flags[0] == 2:
        _sig_tracking(t, t_piece, x, K, xref, flags[2], out)
    elif flags[0] != 0:
        for i in range(K.shape[0]):
            feedback = 0.0
            for k in range(K.shape[1]):
                feedback += K[i, k] * (x[k] - xref[k])
            out[i] -= feedback
