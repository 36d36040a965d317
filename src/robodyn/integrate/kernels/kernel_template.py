"""Runge–Kutta kernels in numba's nopython subset: one fixed-step and one adaptive kernel for all tableaus.

A template, never imported as an ordinary module: the loader first defines ``jit`` and ``hjit`` (numba's, or
identity decorators), ``rhs(fns, t, x, u, p, out)``, ``eval_inputs(t, t_piece, x, inp, out)``,
``event_fn(fns, t, x, u, p, out)`` and ``jac(fns, t, x, u, p, out)`` in the module namespace, then executes this
source, ``implicit_template.py`` and ``work_template.py`` (docs/dev/simulation.md). ``fns`` (int64) says where
the model's compiled functions are (``[rhs, event_fn, jac, chart]``, robodyn.codegen.indirect) and is passed
through untouched, as ``inp``; ``event_fn`` is never called without events, ``chart`` only for a model on a
manifold (``fns[3] != 0``): after every step it moves the state and its derivative to the chart centred at the
step's end (robodyn.mechanisms.floating.chart), so every method steps in local coordinates around the step's start.

Public kernels (arrays float64 and C-contiguous, codes int64)::

    fixed_run(fns, A, b, c, grid, steps, x0, p, inp, xs, us) -> nfev
    fixed_chunk(first, stop, fns, A, b, c, grid, steps, x0, p, inp, xs, us, nfev) -> None
    adaptive_run(fns, method, dop853, implicit, t0, t1, x0, p, inp, m, stops, t_eval, rtol, atol, h0, h_max,
                 max_steps, ev_direction, ev_terminal) -> (status, t_fail, i_fail, stats, t, x, u, ev_t, ev_x, ev_idx)
    _adaptive_core(first, stop, work, fns, method, dop853, implicit, ...)  (the runs first <= i < stop; see its
        docstring), with ``work = work_arrays(n, m, method, dop853, implicit, n_events)``

``implicit`` is None for the explicit methods (numba then compiles none of the implicit code) or the tables of
Radau IIA / RODAS4 (``robodyn.integrate.methods.implicit.tables``), whose steps are in ``implicit_template.py``.

Batches (``fixed_batch``, ``adaptive_batch`` in ``robodyn.integrate.kernels.run``) run ``fixed_chunk`` and
``_adaptive_core`` on chunks of the trajectories in threads.

``method, dop853 = ButcherTableau.kernel_method()``: ``method = (A, b, c, e, dense, error_order)`` and ``dop853``
DOP853's E3 error weights, or None for other methods. ``dop853`` is a separate argument so that numba prunes
every ``if dop853 is not None`` branch for the other methods: DOPRI5's kernels never compile DOP853's code.
Statuses are the names imported from :mod:`robodyn.integrate.status` (the one table of their numbers and
messages; numba reads them as compile-time constants): ``OK`` reached t1; ``TERMINATED`` a terminal event;
``STEP_COLLAPSE`` the step size fell below ``max(1e-12 |t|, 10 ulp(t))``; ``MAX_STEPS`` more than
``max_steps`` attempts; ``NON_FINITE`` a non-finite state or derivative. Failures never raise: the results
up to ``t_fail`` are returned.

The adaptive controller is scipy's RK45/DOP853 one (scipy ``_ivp/rk.py``, [HNW] II.4): Hairer's initial step,
the last step clipped to t1, and the constants and rules of :mod:`robodyn.integrate.methods.controller`; without
stop points it takes scipy's steps. The controller is written twice, here and in LLVM IR (``fused_ir.py``: the fused
batch kernels, ~1.6x this kernel on a batch, benchmarks/RESULTS.md), both from the constants of that module: a
change to the formula in one is a change to both (tests/integrate/kernels/test_controller_forms.py checks they agree).

[HNW] E. Hairer, S. P. Nørsett, G. Wanner, "Solving Ordinary Differential Equations I", 2nd ed., Springer
1993: II.4 (step control, initial step), II.6 (dense output), II.10 (DOP853's error estimate).
"""

import math
from typing import TYPE_CHECKING

import numpy as np

from robodyn.integrate.methods.controller import MAX_FACTOR, MIN_FACTOR, MIN_STEP_REL, SAFETY, TINY_SCALE, TINY_STEP
from robodyn.integrate.status import MAX_STEPS, NON_FINITE, OK, STEP_COLLAPSE, TERMINATED

if TYPE_CHECKING:  # Injected by the loader before this source runs; declared for linters and type checkers.
    def jit(fn): ...
    def hjit(fn): ...  # jit for helpers only called from jitted code (no Python wrapper)
    def rhs(fns, t, x, u, p, out): ...
    def event_fn(fns, t, x, u, p, out): ...
    # fns[3]: x and xdot recentred (2n values), robodyn.mechanisms.floating.chart
    def chart(fns, t, x, xdot, p, out): ...
    def _implicit_step(*args): ...  # implicit_template.py
    def _implicit_reset(st): ...
    def _implicit_work(work, n, m): ...
    def implicit_work_shape(n, m): ...
    def work_arrays(n, m, method, dop853, implicit, n_events): ...  # work_template.py
    def _allocate(specs): ...
    HAS_EVENTS = True  # False lets numba prune the event machinery (a compile-time constant)
    def eval_inputs(t, t_piece, x, inp, out): ...

EVENT_TOL = 1e-12  # Event times are located to a bracket this wide (or 8 ulp of t, if wider).
ULP = 2.220446049250313e-16  # Machine epsilon of float64.
N_COUNTS = 7  # counts per run: outputs, events, nfev, accepted, rejected, Jacobians, LU factorizations


@hjit
def _eval_stages(fns, A, c, first, stop, t, h, x, p, inp, t_piece, K, xw, u):
    """K[j] = f(t + c_j h, x + h sum_{l<j} A[j, l] K[l]) for first <= j < stop, zero weights skipped."""
    for j in range(first, stop):
        _combine(A, j, K, j, x, h, xw)
        tj = t + c[j] * h
        eval_inputs(tj, t_piece, xw, inp, u)
        rhs(fns, tj, xw, u, p, K[j])


@hjit
def _combine(W, row, K, count, x, h, out):
    """out = x + h sum_{j < count} W[row, j] K[j], zero weights skipped; ``out`` must not alias ``x``."""
    for i in range(x.size):
        acc = 0.0
        for j in range(count):
            if W[row, j] != 0.0:
                acc += W[row, j] * K[j, i]
        out[i] = x[i] + h * acc


@hjit
def _first_nonfinite(v):
    """Index of the first NaN or infinite entry of ``v``, or -1."""
    for i in range(v.size):
        if not math.isfinite(v[i]):
            return i
    return -1


@jit
def fixed_run(fns, A, b, c, grid, steps, x0, p, inp, xs, us):
    """Explicit Runge–Kutta steps between consecutive points of ``grid``, of the sizes in ``steps``.

    Inputs are sampled at each step's start and held over its stages (zero-order hold),
    ``u_k = eval_inputs(t_k, t_k, x_k)``: Euler gives exactly ``x_{k+1} = x_k + h f(t_k, x_k, u_k)``.

    Parameters
    ----------
    A (s, s), b (s,), c (s,) : the tableau
    grid : (T,) increasing times, T >= 1; step k goes from ``grid[k]`` to ``grid[k + 1]``
    steps : (T - 1,) the step sizes, normally ``grid[k + 1] - grid[k]``; the caller passes exactly ``dt``
        for full steps (``t0 + k dt`` rounded differs from it by an ulp), so a fixed-step run with ``dt``
        reproduces a hand-written loop bit for bit
    x0 : (n,), p : (n_p,), inp : tuple passed to ``eval_inputs``
    xs : (T, n) written states, ``xs[0] = x0``
    us : (T, m) written inputs: ``us[k]`` held over step k, ``us[T - 1]`` at the last time

    Returns
    -------
    nfev : int, the rhs evaluations. Non-finite states are not detected: check ``xs``.
    """
    s = 0
    for j in range(b.size):
        if b[j] != 0.0:
            s = j + 1  # stages after the last weighted one (an FSAL stage) are not needed
    n, m = x0.size, us.shape[1]
    K, x, xw, u, moved = np.empty((s, n)), x0.copy(), np.empty(n), np.empty(m), np.empty(2 * n)
    B = b.reshape((1, b.size))
    for k in range(grid.size):
        for i in range(n):
            xs[k, i] = x[i]
        eval_inputs(grid[k], grid[k], x, inp, u)
        for i in range(m):
            us[k, i] = u[i]
        if k == grid.size - 1:
            break
        h = steps[k]
        rhs(fns, grid[k], x, u, p, K[0])
        for j in range(1, s):
            _combine(A, j, K, j, x, h, xw)
            rhs(fns, grid[k] + c[j] * h, xw, u, p, K[j])
        _combine(B, 0, K, s, x, h, xw)
        x, xw = xw, x
        if fns[3] != 0:  # a model on a manifold: the next step in the chart centred where this one ended
            chart(fns, grid[k + 1], x, K[0], p, moved)
            for i in range(n):
                x[i] = moved[i]
    return s * max(grid.size - 1, 0)


@jit
def fixed_chunk(first, stop, fns, A, b, c, grid, steps, x0, p, inp, xs, us, nfev):
    """``fixed_run`` for the trajectories ``first <= i < stop`` of a batch (``robodyn.integrate.kernels.run`` runs
    chunks of a batch in threads)."""
    for i in range(first, stop):
        nfev[i] = fixed_run(fns, A, b, c, grid, steps, x0[i], p[i], inp, xs[i], us[i])


@hjit
def _state_at(tq, t, t_new, h, R, dop853, out):
    """State at tq in [t, t_new] from R = [x, x_new, dense-output coefficients...] of the step: exact at its
    ends, else the dense output (DOPRI5: x + h sum_r theta^(r+1) R[2 + r]; DOP853: Hairer's form in theta and
    1 - theta, [HNW] II.6, scipy ``Dop853DenseOutput``)."""
    if tq == t_new or tq == t:
        row = 1 if tq == t_new else 0
        for i in range(out.size):
            out[i] = R[row, i]
    elif dop853 is not None:
        theta = (tq - t) / h
        top = R.shape[0] - 1
        for i in range(out.size):
            y = 0.0
            for q in range(top - 1):
                y += R[top - q, i]
                y *= theta if q % 2 == 0 else 1.0 - theta
            out[i] = y + R[0, i]
    else:
        theta = (tq - t) / h
        for i in range(out.size):
            acc = 0.0
            power = 1.0
            for r in range(2, R.shape[0]):
                power *= theta
                acc += R[r, i] * power
            out[i] = h * acc + R[0, i]


@hjit
def _locate(fns, k, t, t_new, h, g_lo, g_hi, R, dop853, p, inp, t_piece, xd, u, g):
    """Zero of event k in [t, t_new] with g(t) = g_lo != 0 and g(t_new) = g_hi of the other sign (or 0).

    Illinois regula falsi on the dense output, bisecting whenever three iterations did not halve the
    bracket; stops at a bracket of max(EVENT_TOL, 8 ulp(t)) and returns the end with the smaller |g|.
    """
    if g_hi == 0.0:
        return t_new
    lo, hi = t, t_new
    f_lo, f_hi = g_lo, g_hi  # Illinois-scaled values
    tol = max(EVENT_TOL, 8.0 * ULP * abs(t_new))
    side = 0
    width_ref = hi - lo
    for it in range(200):
        if hi - lo <= tol:
            break
        tm = hi - f_hi * (hi - lo) / (f_hi - f_lo) if f_hi != f_lo else 0.5 * (lo + hi)
        if it % 3 == 2:
            if hi - lo > 0.5 * width_ref:
                tm = 0.5 * (lo + hi)
            width_ref = hi - lo
        if not (lo < tm < hi):
            tm = 0.5 * (lo + hi)
            if not (lo < tm < hi):
                break
        _state_at(tm, t, t_new, h, R, dop853, xd)
        eval_inputs(tm, t_piece, xd, inp, u)
        event_fn(fns, tm, xd, u, p, g)
        if g[k] == 0.0:
            return tm
        if (g[k] > 0.0) == (g_hi > 0.0):
            hi, g_hi, f_hi = tm, g[k], g[k]
            f_lo *= 0.5 if side == -1 else 1.0
            side = -1
        else:
            lo, g_lo, f_lo = tm, g[k], g[k]
            f_hi *= 0.5 if side == 1 else 1.0
            side = 1
    return lo if abs(g_lo) < abs(g_hi) else hi


@hjit
def _is_active(g_old, g_new, direction):
    """g went from nonzero to zero or the other sign in an allowed direction (-1, 0, +1 as in scipy)."""
    return (g_old < 0.0 <= g_new and direction >= 0) or (g_old > 0.0 >= g_new and direction <= 0)


@hjit
def _push_output(cnt, tq, xq, uq, out_t, out_x, out_u):
    """Write (tq, xq, uq) at row cnt[0] if the buffers have room (else drop it) and count it."""
    k = cnt[0]
    if k < out_t.size:
        out_t[k] = tq
        for i in range(xq.size):
            out_x[k, i] = xq[i]
        for i in range(uq.size):
            out_u[k, i] = uq[i]
    cnt[0] = k + 1


@hjit
def _next_boundary(stops, i, t, t1):
    """Index of the first stop after t, and the end of the segment that starts at t."""
    while i < stops.size and stops[i] <= t:
        i += 1
    return i, (stops[i] if i < stops.size and stops[i] < t1 else t1)


@jit
def _adaptive_core(first, stop, work, fns, method, dop853, implicit, t0, t1, x0s, ps, inp, stops, t_eval, rtol, atol,
                   h0, h_max, max_steps, ev_direction, ev_terminal, out_ts, out_xs, out_us, ev_ts, ev_xs, ev_idxs,
                   counts, statuses, t_fails, i_fails):
    """The runs ``first <= i < stop`` behind ``adaptive_run`` (one) and ``adaptive_batch`` (a chunk of a batch):
    one compiled entry point for both, so a batch after a single run (or the other way round) compiles nothing.

    ``work`` is the tuple of ``work_arrays(...)``, used by each run in turn. Run i starts
    from ``x0s[i]`` with parameters ``ps[i]`` and writes into row i of the buffers ``out_ts``
    (N, rows), ``out_xs`` (N, rows, n), ``out_us`` (N, rows, m), ``ev_ts`` (N, E), ``ev_xs`` (N, E, n),
    ``ev_idxs`` (N, E) int64; rows that do not fit are dropped but counted (the caller runs again with room
    for them: runs are deterministic). It sets ``statuses[i]``, ``t_fails[i]``, ``i_fails[i]`` and
    ``counts[i]`` = [n_out, n_events, nfev, accepted, rejected, Jacobians, LU factorizations] (int64, N_COUNTS).

    The per-step work is written out here rather than in helpers: every array argument of a jitted call
    that LLVM does not inline costs two atomic reference-count updates (numba's NRT), which took two thirds
    of the run time when the step attempt and the error norm were separate functions.
    """
    A, b, c, e, dense, error_order = method
    for i_run in range(first, stop):
        x0, p, cnt = x0s[i_run], ps[i_run], counts[i_run]
        out_t, out_x, out_u = out_ts[i_run], out_xs[i_run], out_us[i_run]
        ev_t, ev_x, ev_idx = ev_ts[i_run], ev_xs[i_run], ev_idxs[i_run]
        n, s, n_events = x0.size, b.size, ev_direction.size
        m = out_u.shape[1]
        # the work arrays are carved from ``work = (w, W, Wc, Wi)`` (see work_arrays): the kernel allocates nothing
        w, W = work[0], work[1]
        at, row = 0, 0
        if implicit is not None:  # the implicit methods' matrices and state (implicit_template.py)
            J, E1, Ec, piv, V, cw, jw, st, at, row = _implicit_work(work, n, m)
        # R: the step's x and x_new, then its dense-output coefficients (DOP853: three more rows, [HNW] II.6)
        r = 2 + dense.shape[0] + (0 if dop853 is None else 3)
        K, R = W[row:row + c.size], W[row + c.size:row + c.size + r]
        x, x_new, xw, xq = w[at:at + n], w[at + n:at + 2 * n], w[at + 2 * n:at + 3 * n], w[at + 3 * n:at + 4 * n]
        moved = w[at + 2 * n:at + 4 * n]  # xw and xq together: free between steps, where a chart is recentred
        at += 4 * n
        for i in range(n):
            x[i] = x0[i]
        u, uo = w[at:at + m], w[at + m:at + 2 * m]  # u at the stages, uo at the outputs
        at += 2 * m
        # Inputs constant between stop points (robodyn.signals: flags[1]) are evaluated once per segment, not at
        # every stage; anything but the compiled 6-tuple (the interpreted path's stand-in for Python inputs) is not.
        held = len(inp) == 6 and inp[5][1] != 0
        g_old, g_new = w[at:at + n_events], w[at + n_events:at + 2 * n_events]
        g, roots = w[at + 2 * n_events:at + 3 * n_events], w[at + 3 * n_events:at + 4 * n_events]
        order = w[at + 4 * n_events:at + 5 * n_events]  # event indices (exact as floats)
        for k in range(cnt.size):
            cnt[k] = 0
        status, t_fail, i_fail, t, j_eval = OK, math.nan, -1, t0, 0
        exponent = -1.0 / (error_order + 1)  # controller.step_exponent (numba calls no Python function)
        i_stop, seg_end = _next_boundary(stops, cnt[0], t0, t1)  # cnt[0] == 0 (numba would type a literal 0 apart)
        t_piece = 0.5 * (t0 + seg_end)
        eval_inputs(t0, t0, x, inp, uo)  # outputs use the ordinary evaluation, t_piece = t
        if t_eval.size == 0:
            _push_output(cnt, t0, x, uo, out_t, out_x, out_u)
        while j_eval < t_eval.size and t_eval[j_eval] <= t0:
            _push_output(cnt, t_eval[j_eval], x, uo, out_t, out_x, out_u)
            j_eval += 1
        h_abs = h0
        fresh = True  # a segment starts (at t0 and at every stop point): f(t, x) and the events afresh
        while t < t1:
            if fresh:
                eval_inputs(t, t_piece, x, inp, u)
                rhs(fns, t, x, u, p, K[0])
                cnt[2] += 1
                i_fail = _first_nonfinite(x) if _first_nonfinite(x) >= 0 else _first_nonfinite(K[0])
                if i_fail >= 0:
                    status, t_fail = NON_FINITE, t
                    break
                if HAS_EVENTS and n_events > 0:
                    event_fn(fns, t, x, u, p, g_old)
                    k_bad = _first_nonfinite(g_old)
                    if k_bad >= 0:  # an event function that is not finite: i_fail = n + its index
                        status, t_fail, i_fail = NON_FINITE, t, n + k_bad
                        break
                fresh = False
                if implicit is not None:
                    _implicit_reset(st)
                if h_abs <= 0.0:  # the first step: Hairer's ([HNW] II.4; scipy select_initial_step), one rhs call
                    h_abs = seg_end - t
                    if n > 0 and h_abs > 0.0:
                        d0 = d1 = d2 = 0.0
                        for i in range(n):
                            scale = max(atol[i] + abs(x[i]) * rtol, TINY_SCALE)
                            d0 += (x[i] / scale) * (x[i] / scale)
                            d1 += (K[0, i] / scale) * (K[0, i] / scale)
                        d0 = math.sqrt(d0) / math.sqrt(n)
                        d1 = math.sqrt(d1) / math.sqrt(n)
                        h_probe = min(1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1, h_abs)
                        for i in range(n):
                            xw[i] = x[i] + h_probe * K[0, i]
                        eval_inputs(t + h_probe, t_piece, xw, inp, u)
                        rhs(fns, t + h_probe, xw, u, p, x_new)
                        for i in range(n):
                            v = (x_new[i] - K[0, i]) / max(atol[i] + abs(x[i]) * rtol, TINY_SCALE)
                            d2 += v * v  # not v ** 2: Python's float power raises OverflowError
                        d2 = math.sqrt(d2) / math.sqrt(n) / h_probe
                        if not math.isfinite(d2):
                            h_abs = h_probe  # f is not finite at the probe: the step loop reports it
                        else:
                            if d1 <= 1e-15 and d2 <= 1e-15:
                                h1 = max(1e-6, h_probe * 1e-3)
                            else:
                                h1 = (0.01 / max(d1, d2)) ** (1.0 / (error_order + 1))
                            h_abs = min(100.0 * h_probe, h1, h_abs, h_max)
                    cnt[2] += 1
            # One accepted step: scipy's controller ([HNW] II.4); a non-finite attempt shrinks by MIN_FACTOR.
            min_step = max(MIN_STEP_REL * abs(t), TINY_STEP)
            h_abs = h_max if h_abs > h_max else max(h_abs, min_step)
            rejected = False
            i_bad = i_worst = -1
            if implicit is not None:  # Radau IIA or RODAS4: x_new, f(t_new, x_new) in K[s - 1] and the dense output R
                status, i_fail, t_new, h_abs, h_prop = _implicit_step(
                    implicit, fns, t, x, K[0], seg_end, h_abs, min_step, max_steps, p, inp, t_piece, held, rtol, atol,
                    u, x_new, K[s - 1], R, J, E1, Ec, piv, V, cw, jw, st, cnt)
                h = t_new - t
            while implicit is None:  # the explicit methods' attempts
                if h_abs < min_step:
                    status, i_fail = (NON_FINITE, i_bad) if i_bad >= 0 else (STEP_COLLAPSE, i_worst)
                    break
                if cnt[3] + cnt[4] >= max_steps:
                    status = MAX_STEPS
                    break
                h_prop = h_abs
                t_new = min(t + h_abs, seg_end)
                h = t_new - t
                for j in range(1, s):  # stages; the last is FSAL: x_new = x + h sum_j b_j k_j, then f(t_new, x_new)
                    for i in range(n):
                        acc = 0.0
                        for r in range(j):
                            if A[j, r] != 0.0:
                                acc += A[j, r] * K[r, i]
                        xw[i] = x[i] + h * acc
                    tj = t + c[j] * h if j < s - 1 else t_new
                    if not held:
                        eval_inputs(tj, t_piece, xw, inp, u)
                    rhs(fns, tj, xw, u, p, K[j])
                for i in range(n):
                    x_new[i] = xw[i]
                cnt[2] += s - 1
                sq = sq3 = worst = 0.0  # RMS norm of the scaled error ([HNW] (4.11); DOP853: E5 with E3, II.10)
                for i in range(n):
                    scale = max(atol[i] + rtol * max(abs(x[i]), abs(x_new[i])), TINY_SCALE)
                    d = d3 = 0.0
                    for j in range(s):
                        if e[j] != 0.0:
                            d += e[j] * K[j, i]
                        if i_bad < 0 and not (math.isfinite(K[j, i]) and math.isfinite(x_new[i])):
                            i_bad = i
                    if dop853 is None:
                        d = d * h / scale
                    else:
                        for j in range(s):
                            if dop853[j] != 0.0:
                                d3 += dop853[j] * K[j, i]
                        d, d3 = d / scale, d3 / scale
                    sq, sq3 = sq + d * d, sq3 + d3 * d3
                    if abs(d) > worst:
                        worst, i_worst = abs(d), i
                if dop853 is None:
                    err = math.sqrt(sq) / math.sqrt(n)
                else:
                    err = 0.0 if sq == 0.0 and sq3 == 0.0 else abs(h) * sq / math.sqrt((sq + 0.01 * sq3) * n)
                if i_bad >= 0:
                    factor = MIN_FACTOR
                elif err < 1.0:
                    factor = MAX_FACTOR if err == 0.0 else min(MAX_FACTOR, SAFETY * err**exponent)
                    h_abs = h * (min(1.0, factor) if rejected else factor)
                    cnt[3] += 1
                    break
                else:
                    factor = max(MIN_FACTOR, SAFETY * err**exponent)
                h_abs = h * factor
                rejected = True
                cnt[4] += 1
                i_bad = i_bad if h_abs < min_step else -1  # keep the cause of a collapse
            if status != OK:
                t_fail = t
                break
            active = False
            if HAS_EVENTS and n_events > 0:  # events: sign changes of g over the step, located on the dense output
                if not held:
                    eval_inputs(t_new, t_piece, x_new, inp, u)
                event_fn(fns, t_new, x_new, u, p, g_new)
                k_bad = _first_nonfinite(g_new)
                if k_bad >= 0:
                    status, t_fail, i_fail = NON_FINITE, t_new, n + k_bad
                    break
                for k in range(n_events):
                    active = active or _is_active(g_old[k], g_new[k], ev_direction[k])
            if implicit is None and (active or (j_eval < t_eval.size and t_eval[j_eval] < t_new)):  # dense output
                # Written out rather than a helper: each array argument of a call that LLVM does not inline costs
                # two atomic reference-count updates (numba's NRT), a tenth of a batch's run time at 100 outputs.
                if dop853 is not None:  # DOP853's extra stages
                    _eval_stages(fns, A, c, s, c.size, t, h, x, p, inp, t_piece, K, xw, u)
                    cnt[2] += c.size - s
                for i in range(n):
                    R[0, i], R[1, i] = x[i], x_new[i]
                    if dop853 is not None:  # R[2..4] from x, x_new, f, f_new
                        dy = x_new[i] - x[i]
                        R[2, i] = dy
                        R[3, i] = h * K[0, i] - dy
                        R[4, i] = 2.0 * dy - h * (K[s - 1, i] + K[0, i])
                offset = 2 if dop853 is None else 5
                for r in range(dense.shape[0]):  # DOPRI5: sum_j dense[r, j] k_j; DOP853: h times that
                    for i in range(n):
                        acc = 0.0
                        for j in range(c.size):
                            if dense[r, j] != 0.0:
                                acc += dense[r, j] * K[j, i]
                        R[offset + r, i] = acc if dop853 is None else h * acc
            t_end = t_new
            if HAS_EVENTS and active:  # locate the active events, in time order up to the first terminal one
                n_found, stop_now = 0, False
                for k in range(n_events):
                    if _is_active(g_old[k], g_new[k], ev_direction[k]):
                        root = _locate(fns, k, t, t_new, h, g_old[k], g_new[k], R, dop853, p, inp, t_piece, xq, u,
                                       g)
                        q = n_found
                        while q > 0 and roots[q - 1] > root:  # insertion sort by time
                            roots[q], order[q] = roots[q - 1], order[q - 1]
                            q -= 1
                        roots[q], order[q] = root, k
                        n_found += 1
                for q in range(n_found):
                    if ev_terminal[int(order[q])] != 0:
                        n_found, stop_now = q + 1, True
                        break
                for q in range(n_found):  # event records: written if there is room, always counted
                    if cnt[1] < ev_t.size:
                        ev_t[cnt[1]], ev_idx[cnt[1]] = roots[q], int(order[q])
                        _state_at(roots[q], t, t_new, h, R, dop853, ev_x[cnt[1]])
                    cnt[1] += 1
                if stop_now:
                    t_end, status = roots[n_found - 1], TERMINATED
            q_end = j_eval  # outputs: the step's end without t_eval, else the t_eval points it passed
            while q_end < t_eval.size and t_eval[q_end] <= t_end:
                q_end += 1
            for q in range(j_eval, q_end if t_eval.size else j_eval + 1):
                tq = t_eval[q] if t_eval.size else t_end
                if tq == t_new:
                    for i in range(n):
                        xq[i] = x_new[i]
                else:
                    _state_at(tq, t, t_new, h, R, dop853, xq)
                if held and t < tq < seg_end:  # inside the segment: its held value
                    for i in range(u.size):
                        uo[i] = u[i]
                else:
                    eval_inputs(tq, tq, xq, inp, uo)
                k = cnt[0]  # _push_output, written out (reference counts, see above)
                if k < out_t.size:
                    out_t[k] = tq
                    for i in range(n):
                        out_x[k, i] = xq[i]
                    for i in range(uo.size):
                        out_u[k, i] = uo[i]
                cnt[0] = k + 1
            j_eval = q_end
            if status == TERMINATED:
                break
            t = t_new
            for i in range(n):
                x[i] = x_new[i]
                K[0, i] = K[s - 1, i]
            if fns[3] != 0:  # a model on a manifold: the state and its derivative in the chart centred at x
                chart(fns, t, x, K[0], p, moved)
                for i in range(n):
                    x[i], K[0, i] = moved[i], moved[n + i]
            if HAS_EVENTS:
                for k in range(n_events):
                    g_old[k] = g_new[k]
            if t == seg_end and t < t1:  # a stop point: the next segment's piece and a fresh derivative
                i_stop, seg_end = _next_boundary(stops, i_stop, t, t1)
                t_piece = 0.5 * (t + seg_end)
                fresh = True
                h_abs = max(h_abs, h_prop)  # the step the controller wanted before the clip to the stop
        statuses[i_run], t_fails[i_run], i_fails[i_run] = status, t_fail, i_fail


def adaptive_run(fns, method, dop853, implicit, t0, t1, x0, p, inp, m, stops, t_eval, rtol, atol, h0, h_max,
                 max_steps, ev_direction, ev_terminal):
    """One adaptive run from t0 to t1 >= t0: an FSAL embedded pair (DOPRI5, DOP853), or Radau IIA / RODAS4.

    Parameters
    ----------
    fns : (4,) int64, the model's functions (see the module docstring)
    method, dop853 : ``ButcherTableau.kernel_method()``: (A, b, c, e, dense, error_order), and DOP853's E3 weights
        or None; for the implicit methods ``robodyn.integrate.methods.implicit.IMPLICIT_METHOD`` and None
    implicit : None, or the tables of the implicit method (``robodyn.integrate.methods.implicit.tables``)
    t0, t1 : float, t1 >= t0 (the caller validates)
    x0 : (n,), p : (n_p,), inp : tuple passed to ``eval_inputs``; m : int, the number of inputs
    stops : (n_stops,) sorted stop points; those strictly inside (t0, t1) are landed on exactly. The stages
        of a step in segment [s_k, s_k+1] get ``t_piece = (s_k + s_k+1) / 2``; f is re-evaluated at a stop.
    t_eval : (T,) sorted output times in [t0, t1], filled by dense output (exact at step ends); or empty to
        output every accepted step, t0 included
    rtol : float (the caller clamps it to >= 100 eps); atol : (n,)
    h0 : the first step, or <= 0 to select it (Hairer); h_max : the largest step (inf for none)
    max_steps : int, the most step attempts (accepted + rejected)
    ev_direction : (n_events,) int64 in {-1, 0, +1} (as in scipy); ev_terminal : (n_events,) int64 0/1

    Returns
    -------
    status : int, see the module docstring
    t_fail : float, where a failed run stopped (NaN otherwise)
    i_fail : int, the first non-finite state component (NON_FINITE), the component with the largest scaled
        error in the last attempt (STEP_COLLAPSE), else -1
    stats : (5,) int64, nfev, accepted steps, rejected steps, Jacobian evaluations, LU factorizations (the
        last two are 0 for the explicit methods)
    t (n_out,), x (n_out, n), u (n_out, m) : outputs, u = ``eval_inputs(t, t, x)``. After a terminal event
        the last row is the event (without t_eval) or the last t_eval point before it.
    ev_t (n_ev,), ev_x (n_ev, n), ev_idx (n_ev,) int64 : events in time order. An event counts when g was
        nonzero at a step's start and reached zero or crossed it in an allowed direction by its end; its
        time is located to 1e-12 on the dense output.
    """
    # Plain Python on purpose: a jitted wrapper around the core cost 1.6 s of compilation (numba compiles the
    # whole call tree again into every jitted caller) to save a few microseconds. The buffers are sized by the
    # largest run of this module so far; a run that outgrows them runs again with room for everything (runs
    # are deterministic), which spares the kernel the code for growing them (~0.5 s of compilation). Repeated
    # runs therefore fit at once, and a long run is repeated at most once per module.
    rows = t_eval.size if t_eval.size > 0 else _SIZES[0]
    events = _SIZES[1] if ev_direction.size > 0 else 0
    n = x0.size
    counts, status, i_fail, t_fail = _allocate((((1, N_COUNTS), np.int64), ((1,), np.int64), ((1,), np.int64),
                                                ((1,), np.float64)))
    work = work_arrays(n, m, method, dop853, implicit, ev_direction.size)
    while True:
        # 2-D buffers of one run (a batch's are (N, ...)); the outputs are their rows
        out_t, out_x, out_u, ev_t, ev_x, ev_idx = _allocate((
            ((1, rows), np.float64), ((1, rows, n), np.float64), ((1, rows, m), np.float64),
            ((1, events), np.float64), ((1, events, n), np.float64), ((1, events), np.int64)))
        _adaptive_core(0, 1, work, fns, method, dop853, implicit, t0, t1, x0.reshape(1, n), p.reshape(1, p.size), inp,
                       stops, t_eval, rtol, atol, h0, h_max, max_steps, ev_direction, ev_terminal, out_t, out_x, out_u,
                       ev_t, ev_x, ev_idx, counts, status, t_fail, i_fail)
        out_t, out_x, out_u, ev_t, ev_x, ev_idx = out_t[0], out_x[0], out_u[0], ev_t[0], ev_x[0], ev_idx[0]
        k, q = counts[0, 0], counts[0, 1]
        if k <= rows and q <= events:
            break
        rows, events = max(rows, k), max(events, q)
    if t_eval.size == 0:
        _SIZES[0] = max(_SIZES[0], k)
    if ev_direction.size > 0:
        _SIZES[1] = max(_SIZES[1], q)
    if k < rows:  # else the buffers are exactly full (the usual case for repeated calls): no views
        out_t, out_x, out_u = out_t[:k], out_x[:k], out_u[:k]
    return (status[0], t_fail[0], i_fail[0], counts[0, 2:].copy(), out_t, out_x, out_u, ev_t[:q], ev_x[:q],
            ev_idx[:q])


_SIZES = [64, 4]  # the most output rows (without t_eval) and events of this module's runs: the next one's buffers
