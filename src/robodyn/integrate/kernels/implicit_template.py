"""Implicit steps for the adaptive kernel: Radau IIA of order 5 (RADAU5) and the Rosenbrock method RODAS4.

A template like ``kernel_template.py``, executed after it in the same module (docs/dev/simulation.md):
``hjit``, ``rhs``, ``jac``, ``eval_inputs`` and ``ULP`` come from the loader and the kernel template.
``_adaptive_core`` calls :func:`_implicit_step` for one accepted step when its ``implicit`` argument is not
None (for the explicit methods it is None and numba compiles none of this). The method's numbers are the
tuple ``implicit = (cfg, T, TI, dense, E, RA, RC, RV)`` from :func:`robodyn.integrate.methods.implicit.tables`.

Radau IIA ([HW] IV.8, Hairer's RADAU5): the three stages Z solve ``Z = h (A ⊗ I) F(x + Z)`` by simplified
Newton iterations in the variables ``W = (T^-1 ⊗ I) Z`` that split the linear algebra into one real system
``(gamma/h - J)`` and one complex system ``((alpha + i beta)/h - J)``; each is factored once per step size
and Jacobian, both reused while Newton converges fast. The error estimate is the embedded order-3 formula
filtered through the real matrix (evaluated a second time after a rejection or at the first step), the
step size follows the published controller (safety factor by Newton iterations, Gustafsson's predictive
rule on accepted steps), the Jacobian is kept while Newton's contraction stays below THET and the
factorizations are kept when the new step is within [QUOT1, QUOT2] of the old. Starting values come from
the previous step's collocation polynomial, which is also the dense output.

RODAS4 ([HW] IV.7, Hairer's RODAS): six linearly implicit stages with the exact Jacobian and df/dt at
the step's start, stiffly accurate, the last stage as its error estimate, the same step controller.
Dense output: the cubic Hermite interpolant of the step's ends (order 3, as RODAS's own).

[HW] E. Hairer, G. Wanner, "Solving Ordinary Differential Equations II", 2nd ed., Springer 1996.
"""

import math
from typing import TYPE_CHECKING

from robodyn.integrate.status import MAX_STEPS, NON_FINITE, OK, STEP_COLLAPSE

if TYPE_CHECKING:  # Injected by the loader and defined by the kernel template; declared for linters.
    def hjit(fn): ...
    def rhs(fns, t, x, u, p, out): ...
    def jac(fns, t, x, u, p, out): ...
    def eval_inputs(t, t_piece, x, inp, out): ...
    ULP = 2.220446049250313e-16

# cfg entries (robodyn.integrate.methods.implicit builds them)
C_KIND, C_FIXED, C_GAMMA, C_ALPHA, C_BETA, C_C1, C_C2, C_NIT, C_SAFE, C_GROW, C_SHRINK, C_THET, C_Q1, C_Q2 = range(14)
# st entries: the method's state between steps of one run
S_NEED_JAC, S_FRESH_JAC, S_NEED_LU, S_LU_H, S_THETA, S_FACCON, S_POLY, S_T_OLD, S_H_OLD, S_H_ACC, S_ERR_ACC, \
    S_FIRST, S_REJECTED = range(13)
N_STATE = 16
# rows of the work matrix V (k, n)
V_Z, V_W, V_F, V_D, V_DOLD = 0, 3, 6, 9, 12
V_XOLD, V_SC, V_XS, V_FW, V_RR, V_FT, V_EF = 15, 16, 17, 18, 19, 20, 21
V_U = 22  # RODAS's stages, 6 rows
N_ROWS = 28


@hjit
def _implicit_reset(st):
    """A segment starts (t0 or a stop point): fresh Jacobian, no extrapolation across the edge."""
    st[S_NEED_JAC], st[S_NEED_LU], st[S_POLY], st[S_FIRST], st[S_REJECTED] = 1.0, 1.0, 0.0, 1.0, 0.0


@hjit
def _lu(M, piv):
    """LU factorization with partial pivoting in place (real or complex M (n, n)); False when singular."""
    n = M.shape[0]
    for k in range(n):
        big, best = k, abs(M[k, k])
        for i in range(k + 1, n):
            if abs(M[i, k]) > best:
                big, best = i, abs(M[i, k])
        piv[k] = big
        if not (best > 0.0 and math.isfinite(best)):
            return False
        if big != k:
            for j in range(n):
                M[k, j], M[big, j] = M[big, j], M[k, j]
        inverse = 1.0 / M[k, k]
        for i in range(k + 1, n):
            M[i, k] *= inverse
            factor = M[i, k]
            if factor != 0.0:
                for j in range(k + 1, n):
                    M[i, j] -= factor * M[k, j]
    return True


@hjit
def _lu_solve(M, piv, b):
    """Solve (LU) y = P b in place, M and piv from :func:`_lu`."""
    n = M.shape[0]
    for k in range(n):
        j = piv[k]
        if j != k:
            b[k], b[j] = b[j], b[k]
    for i in range(n):
        acc = b[i]
        for j in range(i):
            acc -= M[i, j] * b[j]
        b[i] = acc
    for i in range(n - 1, -1, -1):
        acc = b[i]
        for j in range(i + 1, n):
            acc -= M[i, j] * b[j]
        b[i] = acc / M[i, i]


@hjit
def _f(fns, t, x, p, inp, t_piece, held, u, out):
    """out = f(t, x, u(t, x)); held inputs are the segment's (already in u)."""
    if not held:
        eval_inputs(t, t_piece, x, inp, u)
    rhs(fns, t, x, u, p, out)


@hjit
def _jacobian(fns, t, x, p, inp, t_piece, held, u, f0, J, jw, V, cnt):
    """J = d f(t, x, u(t, x)) / dx: the model's exact Jacobian (fns[2] != 0), with du/dx = -K of state
    feedback, or forward differences of f (Hairer's increments sqrt(eps max(1e-5, |x_j|))): also under a tracking
    feedback (inp[5][0] == 2), whose gain varies in time."""
    n, m = x.size, u.size
    cnt[5] += 1
    if fns[2] != 0 and not (len(inp) == 6 and inp[5][0] == 2):  # a tracking feedback's K(t): differences
        if not held:
            eval_inputs(t, t_piece, x, inp, u)
        jac(fns, t, x, u, p, jw)
        for i in range(n):
            for j in range(n):
                J[i, j] = jw[i * n + j]
        if len(inp) == 6 and inp[5][0] == 1:  # u = ... - K (x - xref)
            K = inp[3]
            for i in range(n):
                for k in range(m):
                    g = jw[n * n + i * m + k]
                    if g != 0.0:
                        for j in range(n):
                            J[i, j] -= g * K[k, j]
        return
    for j in range(n):
        for i in range(n):
            V[V_XS, i] = x[i]
        delta = math.sqrt(ULP * max(1e-5, abs(x[j])))
        V[V_XS, j] = x[j] + delta
        _f(fns, t, V[V_XS], p, inp, t_piece, held, u, V[V_FW])
        for i in range(n):
            J[i, j] = (V[V_FW, i] - f0[i]) / delta
    cnt[2] += n


@hjit
def _rms(V, row, count, scale_row, n):
    """RMS over ``count`` rows from ``row`` of V, each component divided by V[scale_row]."""
    acc = 0.0
    for r in range(row, row + count):
        for i in range(n):
            v = V[r, i] / V[scale_row, i]
            acc += v * v
    return math.sqrt(acc / (count * n)) if n > 0 else 0.0


@hjit
def _next_attempt(cnt, max_steps, fixed, h_abs, min_step, t, seg_end, i_bad, i_worst):
    """(status, i_fail, h_abs, t_new) of the next attempt: MAX_STEPS when the budget is spent, NON_FINITE or
    STEP_COLLAPSE when the step fell below ``min_step``, else OK and the attempt's end."""
    if cnt[3] + cnt[4] >= max_steps:
        return MAX_STEPS, -1, h_abs, t
    if fixed > 0.0:
        h_abs = fixed
    if h_abs < min_step:
        return (NON_FINITE, i_bad, h_abs, t) if i_bad >= 0 else (STEP_COLLAPSE, i_worst, h_abs, t)
    return OK, -1, h_abs, min(t + h_abs, seg_end)


@hjit
def _worst(V, row, scale_row, n):
    """The component with the largest |V[row] / V[scale_row]| (-1 if none is finite)."""
    worst, index = -1.0, -1
    for i in range(n):
        v = abs(V[row, i] / V[scale_row, i])
        if v > worst:
            worst, index = v, i
    return index


@hjit
def _first_bad(V, row, count, n):
    for r in range(row, row + count):
        for i in range(n):
            if not math.isfinite(V[r, i]):
                return i
    return -1


@hjit
def _implicit_step(implicit, fns, t, x, f0, seg_end, h_abs, min_step, max_steps, p, inp, t_piece, held, rtol,
                   atol, u, x_new, f_new, R, J, E1, Ec, piv, V, cw, jw, st, cnt):
    """One accepted step from (t, x) with f0 = f(t, x): the method of ``implicit[0][C_KIND]``.

    Writes x_new, f_new = f(t_new, x_new), the dense output R (rows: x, x_new, then the coefficients of
    theta, theta^2, theta^3 divided by h) and the counters cnt[2..6]. Returns (status, i_fail, t_new,
    h_next, h_wanted): h_next the next step, h_wanted the step the controller asked for before any clip.
    """
    cfg = implicit[0]
    if cfg[C_KIND] == 0.0:
        return _radau_step(implicit, fns, t, x, f0, seg_end, h_abs, min_step, max_steps, p, inp, t_piece, held,
                           rtol, atol, u, x_new, f_new, R, J, E1, Ec, piv, V, cw, jw, st, cnt)
    return _rodas_step(implicit, fns, t, x, f0, seg_end, h_abs, min_step, max_steps, p, inp, t_piece, held, rtol,
                       atol, u, x_new, f_new, R, J, E1, piv, V, jw, st, cnt)


@hjit
def _radau_step(implicit, fns, t, x, f0, seg_end, h_abs, min_step, max_steps, p, inp, t_piece, held, rtol, atol,
                u, x_new, f_new, R, J, E1, Ec, piv, V, cw, jw, st, cnt):
    """RADAU5's step (see the module docstring); arguments as :func:`_implicit_step`."""
    cfg, T, TI, dense, E = implicit[0], implicit[1], implicit[2], implicit[3], implicit[4]
    n = x.size
    gamma, alpha, beta = cfg[C_GAMMA], cfg[C_ALPHA], cfg[C_BETA]
    nodes = (cfg[C_C1], cfg[C_C2], 1.0)
    nit, safe, fixed = int(cfg[C_NIT]), cfg[C_SAFE], cfg[C_FIXED]
    fnewt = max(10.0 * ULP / rtol, min(0.03, math.sqrt(rtol)))
    for i in range(n):
        V[V_SC, i] = atol[i] + rtol * abs(x[i])
    i_bad = i_worst = -1  # the first non-finite component; the one with the largest scaled correction or error
    while True:
        status, i_fail, h_abs, t_new = _next_attempt(cnt, max_steps, fixed, h_abs, min_step, t, seg_end, i_bad,
                                                     i_worst)
        if status != OK:
            return status, i_fail, t, h_abs, h_abs
        h = t_new - t
        if st[S_NEED_JAC] != 0.0:
            _jacobian(fns, t, x, p, inp, t_piece, held, u, f0, J, jw, V, cnt)
            st[S_NEED_JAC], st[S_FRESH_JAC], st[S_NEED_LU] = 0.0, 1.0, 1.0
        fac1 = gamma / h
        ac = complex(alpha / h, beta / h)
        if st[S_NEED_LU] != 0.0 or h != st[S_LU_H]:
            for i in range(n):
                for j in range(n):
                    E1[i, j] = -J[i, j]
                    Ec[i, j] = -J[i, j]
                E1[i, i] += fac1
                Ec[i, i] += ac
            cnt[6] += 1
            st[S_LU_H], st[S_NEED_LU] = h, 0.0
            if not (_lu(E1, piv[0]) and _lu(Ec, piv[1])):
                st[S_NEED_LU] = 1.0
                h_abs = 0.5 * h
                cnt[4] += 1
                continue
        # starting values from the last step's collocation polynomial (zero at the first step of a segment)
        for k in range(3):
            if st[S_POLY] != 0.0:
                s = (t + nodes[k] * h - st[S_T_OLD]) / st[S_H_OLD]
                for i in range(n):
                    value = V[V_DOLD, i] + s * (V[V_DOLD + 1, i] + s * V[V_DOLD + 2, i])
                    V[V_Z + k, i] = V[V_XOLD, i] + s * value - x[i]
            else:
                for i in range(n):
                    V[V_Z + k, i] = 0.0
        for k in range(3):
            for i in range(n):
                V[V_W + k, i] = TI[k, 0] * V[V_Z, i] + TI[k, 1] * V[V_Z + 1, i] + TI[k, 2] * V[V_Z + 2, i]
        # simplified Newton iterations
        faccon = max(st[S_FACCON], ULP) ** 0.8 if fixed <= 0.0 else 1.0  # fixed steps: no trust in the last rate
        theta, thq_old, dnorm_old = cfg[C_THET], 1.0, 1.0  # RADAU5: one iteration counts as fast convergence
        newt, converged, shrink = 0, False, 0.5
        while newt < nit:
            for k in range(3):
                for i in range(n):
                    V[V_XS, i] = x[i] + V[V_Z + k, i]
                _f(fns, t + nodes[k] * h, V[V_XS], p, inp, t_piece, held, u, V[V_F + k])
            cnt[2] += 3
            i_bad = _first_bad(V, V_F, 3, n)
            if i_bad >= 0:
                break
            for i in range(n):
                g0 = TI[0, 0] * V[V_F, i] + TI[0, 1] * V[V_F + 1, i] + TI[0, 2] * V[V_F + 2, i]
                g1 = TI[1, 0] * V[V_F, i] + TI[1, 1] * V[V_F + 1, i] + TI[1, 2] * V[V_F + 2, i]
                g2 = TI[2, 0] * V[V_F, i] + TI[2, 1] * V[V_F + 1, i] + TI[2, 2] * V[V_F + 2, i]
                V[V_RR, i] = g0 - fac1 * V[V_W, i]
                cw[i] = complex(g1, g2) - ac * complex(V[V_W + 1, i], V[V_W + 2, i])
            _lu_solve(E1, piv[0], V[V_RR])
            _lu_solve(Ec, piv[1], cw)
            dnorm = worst = 0.0
            for i in range(n):
                d0, d1, d2 = V[V_RR, i] / V[V_SC, i], cw[i].real / V[V_SC, i], cw[i].imag / V[V_SC, i]
                square = d0 * d0 + d1 * d1 + d2 * d2
                dnorm += square
                if square > worst:
                    worst, i_worst = square, i
            dnorm = math.sqrt(dnorm / (3 * n))
            if not math.isfinite(dnorm):
                i_bad = 0
                break
            if newt > 0:
                thq = dnorm / dnorm_old
                theta = thq if newt == 1 else math.sqrt(thq * thq_old)
                thq_old = thq
                if theta >= 0.99:
                    break
                faccon = theta / (1.0 - theta)
                dyth = faccon * dnorm * theta ** (nit - 1 - newt) / fnewt
                if dyth >= 1.0 and fixed <= 0.0:  # convergence is predicted to fail: a smaller step at once
                    qnewt = max(1e-4, min(20.0, dyth))
                    shrink = 0.8 * qnewt ** (-1.0 / (4.0 + nit - 1 - newt))
                    break
            dnorm_old = max(dnorm, ULP)
            for i in range(n):
                V[V_W, i] += V[V_RR, i]
                V[V_W + 1, i] += cw[i].real
                V[V_W + 2, i] += cw[i].imag
            for k in range(3):
                for i in range(n):
                    V[V_Z + k, i] = T[k, 0] * V[V_W, i] + T[k, 1] * V[V_W + 1, i] + T[k, 2] * V[V_W + 2, i]
            newt += 1
            if faccon * dnorm <= fnewt:
                converged = True
                break
        if not converged:  # a smaller step; a fresh Jacobian first if this one is old
            cnt[4] += 1
            if fixed > 0.0:
                return (NON_FINITE, i_bad, t, h_abs, h_abs) if i_bad >= 0 else (STEP_COLLAPSE, i_worst, t, h_abs,
                                                                                h_abs)
            h_abs = shrink * h
            st[S_NEED_LU] = 1.0
            if st[S_FRESH_JAC] == 0.0:
                st[S_NEED_JAC] = 1.0
            continue
        i_bad = -1
        st[S_THETA], st[S_FACCON] = theta, faccon
        # error estimate: (gamma/h - J)^-1 (f0 + sum_k E_k Z_k / h), again through f after a rejection
        for i in range(n):
            x_new[i] = x[i] + V[V_Z + 2, i]
            V[V_EF, i] = (E[0] * V[V_Z, i] + E[1] * V[V_Z + 1, i] + E[2] * V[V_Z + 2, i]) / h
            V[V_RR, i] = f0[i] + V[V_EF, i]
        _lu_solve(E1, piv[0], V[V_RR])
        err = max(_rms(V, V_RR, 1, V_SC, n), 1e-10)
        if err >= 1.0 and (st[S_FIRST] != 0.0 or st[S_REJECTED] != 0.0):
            for i in range(n):
                V[V_XS, i] = x[i] + V[V_RR, i]
            _f(fns, t, V[V_XS], p, inp, t_piece, held, u, V[V_FW])
            cnt[2] += 1
            for i in range(n):
                V[V_RR, i] = V[V_FW, i] + V[V_EF, i]
            _lu_solve(E1, piv[0], V[V_RR])
            err = max(_rms(V, V_RR, 1, V_SC, n), 1e-10)
        if not math.isfinite(err):
            err = 1e10
        i_worst = _worst(V, V_RR, V_SC, n)
        if fixed > 0.0:
            err = 0.5
        fac = min(safe, safe * (1.0 + 2.0 * nit) / (newt + 2.0 * nit))
        quot = max(cfg[C_GROW], min(cfg[C_SHRINK], err ** 0.25 / fac))
        h_new = h / quot
        if err < 1.0:
            cnt[3] += 1
            if st[S_FIRST] == 0.0:  # Gustafsson's predictive controller
                gus = (st[S_H_ACC] / h) * (err * err / st[S_ERR_ACC]) ** 0.25 / safe
                h_new = h / max(quot, max(cfg[C_GROW], min(cfg[C_SHRINK], gus)))
            st[S_H_ACC], st[S_ERR_ACC] = h, max(1e-2, err)
            for r in range(3):
                for i in range(n):
                    d = dense[r, 0] * V[V_Z, i] + dense[r, 1] * V[V_Z + 1, i] + dense[r, 2] * V[V_Z + 2, i]
                    V[V_DOLD + r, i] = d
                    R[2 + r, i] = d / h
            for i in range(n):
                R[0, i], R[1, i] = x[i], x_new[i]
                V[V_XOLD, i] = x[i]
            st[S_T_OLD], st[S_H_OLD], st[S_POLY] = t, h, 1.0
            _f(fns, t_new, x_new, p, inp, t_piece, held, u, f_new)
            cnt[2] += 1
            if st[S_REJECTED] != 0.0:
                h_new = min(h_new, h)
            st[S_REJECTED], st[S_FIRST], st[S_FRESH_JAC] = 0.0, 0.0, 0.0
            if fixed > 0.0:  # fixed steps (verify): a fresh Jacobian at every step, Newton converged in full
                st[S_NEED_JAC] = 1.0
                return OK, -1, t_new, fixed, fixed
            ratio = h_new / h
            if theta <= cfg[C_THET] and cfg[C_Q1] <= ratio <= cfg[C_Q2]:
                return OK, -1, t_new, h, h_new  # the same step: Jacobian and factorizations kept
            st[S_NEED_JAC] = 0.0 if theta <= cfg[C_THET] else 1.0
            return OK, -1, t_new, h_new, h_new
        cnt[4] += 1
        st[S_REJECTED] = 1.0
        h_abs = 0.1 * h if st[S_FIRST] != 0.0 else h_new
        st[S_NEED_LU] = 1.0
        if st[S_FRESH_JAC] == 0.0:
            st[S_NEED_JAC] = 1.0


@hjit
def _rodas_step(implicit, fns, t, x, f0, seg_end, h_abs, min_step, max_steps, p, inp, t_piece, held, rtol, atol,
                u, x_new, f_new, R, J, E1, piv, V, jw, st, cnt):
    """RODAS4's step (see the module docstring); arguments as :func:`_implicit_step`."""
    cfg, RA, RC, RV = implicit[0], implicit[5], implicit[6], implicit[7]
    n, stages = x.size, RA.shape[0]
    gamma, safe, fixed = cfg[C_GAMMA], cfg[C_SAFE], cfg[C_FIXED]
    i_bad = i_worst = -1
    while True:
        status, i_fail, h_abs, t_new = _next_attempt(cnt, max_steps, fixed, h_abs, min_step, t, seg_end, i_bad,
                                                     i_worst)
        if status != OK:
            return status, i_fail, t, h_abs, h_abs
        h = t_new - t
        if st[S_NEED_JAC] != 0.0:  # J and df/dt at the step's start (kept through rejections)
            _jacobian(fns, t, x, p, inp, t_piece, held, u, f0, J, jw, V, cnt)
            # df/dt by central differences (error ~ eps^(2/3) relative: a forward difference's ~ eps^(1/2) limited
            # RODAS4 to ~1e-9 on time-dependent problems); f_t = 0 where f does not depend on t
            delta = 6e-6 * max(1.0, abs(t))  # ~ eps^(1/3)
            _f(fns, t + delta, x, p, inp, t_piece, held, u, V[V_FW])
            _f(fns, t - delta, x, p, inp, t_piece, held, u, V[V_XS])
            cnt[2] += 2
            for i in range(n):
                V[V_FT, i] = (V[V_FW, i] - V[V_XS, i]) / (2.0 * delta)
            st[S_NEED_JAC] = 0.0
        for i in range(n):
            for j in range(n):
                E1[i, j] = -J[i, j]
            E1[i, i] += 1.0 / (gamma * h)
        cnt[6] += 1
        if not _lu(E1, piv[0]):
            h_abs = 0.5 * h
            cnt[4] += 1
            continue
        for k in range(stages):
            for i in range(n):
                acc = x[i]
                for j in range(k):
                    acc += RA[k, j] * V[V_U + j, i]
                V[V_XS, i] = acc
            if k == 0:
                for i in range(n):
                    V[V_FW, i] = f0[i]
            else:
                _f(fns, t + RV[2, k] * h, V[V_XS], p, inp, t_piece, held, u, V[V_FW])
                cnt[2] += 1
            for i in range(n):
                acc = V[V_FW, i] + RV[3, k] * h * V[V_FT, i]
                for j in range(k):
                    acc += RC[k, j] / h * V[V_U + j, i]
                V[V_U + k, i] = acc
            _lu_solve(E1, piv[0], V[V_U + k])
        i_bad = _first_bad(V, V_U, stages, n)
        for i in range(n):
            acc, e = x[i], 0.0
            for k in range(stages):
                acc += RV[0, k] * V[V_U + k, i]
                e += RV[1, k] * V[V_U + k, i]
            x_new[i] = acc
            V[V_RR, i] = e
            V[V_SC, i] = atol[i] + rtol * max(abs(x[i]), abs(acc))
        err = _rms(V, V_RR, 1, V_SC, n) if i_bad < 0 else 1e10
        i_worst = _worst(V, V_RR, V_SC, n)
        if not math.isfinite(err):
            err = 1e10
        if fixed > 0.0:
            if i_bad >= 0:
                return NON_FINITE, i_bad, t, h_abs, h_abs
            err = 0.5
        quot = max(cfg[C_GROW], min(cfg[C_SHRINK], err ** 0.25 / safe))
        h_new = h / quot
        if err <= 1.0:
            cnt[3] += 1
            if st[S_FIRST] == 0.0:
                gus = (st[S_H_ACC] / h) * (err * err / max(st[S_ERR_ACC], 1e-10)) ** 0.25 / safe
                h_new = h / max(quot, max(cfg[C_GROW], min(cfg[C_SHRINK], gus)))
            st[S_H_ACC], st[S_ERR_ACC] = h, max(1e-2, err)
            _f(fns, t_new, x_new, p, inp, t_piece, held, u, f_new)
            cnt[2] += 1
            for i in range(n):  # cubic Hermite: x + h (f0 th + (3 d - 2 f0 - f1) th^2 + (f0 + f1 - 2 d) th^3)
                slope = (x_new[i] - x[i]) / h
                R[0, i], R[1, i] = x[i], x_new[i]
                R[2, i] = f0[i]
                R[3, i] = 3.0 * slope - 2.0 * f0[i] - f_new[i]
                R[4, i] = f0[i] + f_new[i] - 2.0 * slope
            if st[S_REJECTED] != 0.0:
                h_new = min(h_new, h)
            st[S_REJECTED], st[S_FIRST], st[S_NEED_JAC] = 0.0, 0.0, 1.0
            return OK, -1, t_new, h_new, h_new
        cnt[4] += 1
        h_abs = 0.1 * h if st[S_FIRST] != 0.0 and st[S_REJECTED] != 0.0 else h_new
        st[S_REJECTED] = 1.0


def implicit_work_shape(n, m):
    """Rows of the run's float work matrix and doubles of its work vector the implicit methods take (plain Python:
    ``_implicit_work`` carves the same arrays)."""
    return 2 * n + N_ROWS, n * (n + m) + N_STATE


@hjit
def _implicit_work(work, n, m):
    """Work arrays of one implicit run, zeroed, carved from the start of ``work = (w, W, Wc, Wi)``: J, E1 (n, n),
    Ec (n, n) complex, piv (2, n) int64, V (N_ROWS, n), cw (n,) complex, jw (n (n + m),), st (N_STATE,); and the
    offsets in w and W after them. Rows of the matrices are sliced, never reshaped (no numba runtime helper)."""
    w, W, Wc, Wi = work
    rows, size = 2 * n + N_ROWS, n * (n + m) + N_STATE
    for i in range(rows):
        for k in range(n):
            W[i, k] = 0.0
    for i in range(n + 1):
        for k in range(n):
            Wc[i, k] = 0.0
    for i in range(2):
        for k in range(n):
            Wi[i, k] = 0
    for i in range(size):
        w[i] = 0.0
    J, E1, V = W[0:n], W[n:2 * n], W[2 * n:rows]
    return J, E1, Wc[0:n], Wi, V, Wc[n], w[0:n * (n + m)], w[n * (n + m):size], size, rows
