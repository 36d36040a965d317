"""A hand-written numba ``prange`` Dormand–Prince 5(4) for a batch of pendulums: the yardstick of robodyn's batch.

The model (theta'' = -g/l sin theta, g = 9.81, l = 1) and the tableau are written into the code, the loop over
trajectories is numba's ``prange``: what a user who knows numba writes for one model in an afternoon. The step
controller is scipy's RK45 one (Hairer's first step, safety 0.9, factors in [0.2, 10], no growth right after a
rejection, RMS error norm), and the outputs at ``t_eval`` come from DOPRI5's fourth-order dense output, exact
at the step ends: the same steps, hence the same trajectories, as robodyn's ``dopri5`` (the benchmark checks).

[HNW] E. Hairer, S. P. Nørsett, G. Wanner, "Solving Ordinary Differential Equations I", 2nd ed., Springer
1993, II.4 (Table 4.6, step control) and II.6 (dense output).
"""

from __future__ import annotations

import math

import numba
import numpy as np

C2, C3, C4, C5 = 1 / 5, 3 / 10, 4 / 5, 8 / 9
A21 = 1 / 5
A31, A32 = 3 / 40, 9 / 40
A41, A42, A43 = 44 / 45, -56 / 15, 32 / 9
A51, A52, A53, A54 = 19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729
A61, A62, A63, A64, A65 = 9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656
B1, B3, B4, B5, B6 = 35 / 384, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84
E1, E3, E4, E5, E6, E7 = -71 / 57600, 71 / 16695, -71 / 1920, 17253 / 339200, -22 / 525, 1 / 40
# scipy's RK45 dense output: x(t + theta h) = x + h sum_r theta^(r+1) (P[:, r] . K)
P = np.array([
    [1.0, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432],
    [0.0, 0.0, 0.0, 0.0],
    [0.0, 131558114200 / 32700410799, -68118460800 / 10900136933, 87487479700 / 32700410799],
    [0.0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072],
    [0.0, 127303824393 / 49829197408, -318862633887 / 49829197408, 701980252875 / 199316789632],
    [0.0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844],
    [0.0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423],
])
G_OVER_L = 9.81


@numba.njit(inline="always")
def _f(theta: float, omega: float) -> tuple[float, float]:
    return omega, -G_OVER_L * math.sin(theta)


@numba.njit(inline="always")
def _scale(atol: float, rtol: float, a: float, b: float) -> float:
    return atol + rtol * max(abs(a), abs(b))


@numba.njit(parallel=True, cache=True)
def batch(theta0: np.ndarray, t_eval: np.ndarray, rtol: float, atol: float, out: np.ndarray) -> np.ndarray:
    """Pendulums from (theta0[i], 0) at rest over [t_eval[0], t_eval[-1]]: out (N, T, 2); returns steps (N,)."""
    N, T = theta0.size, t_eval.size
    steps = np.zeros(N, np.int64)
    t1 = t_eval[T - 1]
    for i in numba.prange(N):
        t = t_eval[0]
        x0, x1 = theta0[i], 0.0
        k10, k11 = _f(x0, x1)
        # Hairer's initial step ([HNW] II.4; scipy select_initial_step), error order 4
        s0, s1 = atol + abs(x0) * rtol, atol + abs(x1) * rtol
        d0 = math.sqrt(((x0 / s0) ** 2 + (x1 / s1) ** 2) / 2)
        d1 = math.sqrt(((k10 / s0) ** 2 + (k11 / s1) ** 2) / 2)
        h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
        h0 = min(h0, t1 - t)
        f0, f1 = _f(x0 + h0 * k10, x1 + h0 * k11)
        d2 = math.sqrt((((f0 - k10) / s0) ** 2 + ((f1 - k11) / s1) ** 2) / 2) / h0
        h1 = max(1e-6, h0 * 1e-3) if d1 <= 1e-15 and d2 <= 1e-15 else (0.01 / max(d1, d2)) ** 0.2
        h = min(100 * h0, h1, t1 - t)
        out[i, 0, 0], out[i, 0, 1] = x0, x1
        j = 1
        n_steps = 0
        while t < t1:
            rejected = False
            while True:
                t_new = min(t + h, t1)
                hh = t_new - t
                k20, k21 = _f(x0 + hh * A21 * k10, x1 + hh * A21 * k11)
                k30, k31 = _f(x0 + hh * (A31 * k10 + A32 * k20), x1 + hh * (A31 * k11 + A32 * k21))
                k40, k41 = _f(x0 + hh * (A41 * k10 + A42 * k20 + A43 * k30),
                              x1 + hh * (A41 * k11 + A42 * k21 + A43 * k31))
                k50, k51 = _f(x0 + hh * (A51 * k10 + A52 * k20 + A53 * k30 + A54 * k40),
                              x1 + hh * (A51 * k11 + A52 * k21 + A53 * k31 + A54 * k41))
                k60, k61 = _f(x0 + hh * (A61 * k10 + A62 * k20 + A63 * k30 + A64 * k40 + A65 * k50),
                              x1 + hh * (A61 * k11 + A62 * k21 + A63 * k31 + A64 * k41 + A65 * k51))
                y0 = x0 + hh * (B1 * k10 + B3 * k30 + B4 * k40 + B5 * k50 + B6 * k60)
                y1 = x1 + hh * (B1 * k11 + B3 * k31 + B4 * k41 + B5 * k51 + B6 * k61)
                k70, k71 = _f(y0, y1)
                e0 = hh * (E1 * k10 + E3 * k30 + E4 * k40 + E5 * k50 + E6 * k60 + E7 * k70) / _scale(atol, rtol, x0, y0)
                e1 = hh * (E1 * k11 + E3 * k31 + E4 * k41 + E5 * k51 + E6 * k61 + E7 * k71) / _scale(atol, rtol, x1, y1)
                err = math.sqrt((e0 * e0 + e1 * e1) / 2)
                if err < 1.0:
                    factor = 10.0 if err == 0.0 else min(10.0, 0.9 * err ** -0.2)
                    h = hh * (min(1.0, factor) if rejected else factor)
                    break
                h = hh * max(0.2, 0.9 * err ** -0.2)
                rejected = True
            n_steps += 1
            while j < T and t_eval[j] <= t_new:  # dense output at the t_eval points the step passed
                if t_eval[j] == t_new:
                    out[i, j, 0], out[i, j, 1] = y0, y1
                else:
                    th = (t_eval[j] - t) / hh
                    q0 = q1 = 0.0
                    power = 1.0
                    for r in range(4):
                        power *= th
                        q0 += power * (P[0, r] * k10 + P[2, r] * k30 + P[3, r] * k40 + P[4, r] * k50
                                       + P[5, r] * k60 + P[6, r] * k70)
                        q1 += power * (P[0, r] * k11 + P[2, r] * k31 + P[3, r] * k41 + P[4, r] * k51
                                       + P[5, r] * k61 + P[6, r] * k71)
                    out[i, j, 0], out[i, j, 1] = x0 + hh * q0, x1 + hh * q1
                j += 1
            t, x0, x1, k10, k11 = t_new, y0, y1, k70, k71
        steps[i] = n_steps
    return steps
