"""The compiled loops of the batched problem evaluation and of the DDP rollout: a model's ``rhs_c`` and ``jac_c``
(robodyn.model.compiled.model_addresses) called through their addresses from numba code
(robodyn.codegen.indirect.model_call), so that the machine code of these loops does not depend on the model and
numba's on-disk cache of them serves every model.

- :func:`f_points`, :func:`jacobian_points`: f and [df/dx | df/du] at P points, one compiled loop each;
- :func:`rollout`: the forward rollout of the DDP family (affine feedback, then one step of the discretized
  dynamics, knot after knot), with the step rules of :mod:`..steps` written out: explicit Euler, semi-implicit
  Euler (Crocoddyl's ``IntegratedActionModelEuler``), classic RK4 (``IntegratedActionModelRK``), and the exact
  zero-order hold x+ = Phi x + Gamma u + gamma of a linear model (no calls of the model).

The arithmetic of each rule is that of the classes of :mod:`..steps` in the same order, so a compiled rollout and
a Python one differ by rounding only.
"""

from __future__ import annotations

import numba
import numpy as np

from robodyn.codegen.indirect import model_call
from robodyn.control.optimal.ddp_passes import affine_inputs
from robodyn.control.optimal.steps import EULER, SEMI_IMPLICIT, ZOH

__all__ = ["f_points", "jacobian_points", "rollout"]


_rhs = model_call(0)  # rhs(fns, t, x, u, p, out): the model's rhs_c at fns[0]
_jac = model_call(2)  # jac(fns, t, x, u, p, out): df/dx then df/du, row-major, at fns[2]


@numba.njit(cache=True, nogil=True)
def f_points(fns: np.ndarray, t: np.ndarray, X: np.ndarray, U: np.ndarray, p: np.ndarray,
             out: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """out[k] = f(t[k], X[k], U[k], p): X (P, n), U (P, m), out (P, n), C order."""
    for k in range(t.shape[0]):
        _rhs(fns, t[k], X[k], U[k], p, out[k])


@numba.njit(cache=True, nogil=True)
def jacobian_points(fns: np.ndarray, t: np.ndarray, X: np.ndarray, U: np.ndarray, p: np.ndarray,
                    out: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """out[k] = [df/dx (n, n) | df/du (n, m)] flat row-major at point k: out (P, n (n + m))."""
    for k in range(t.shape[0]):
        _jac(fns, t[k], X[k], U[k], p, out[k])


@numba.njit(cache=True, nogil=True)
def _step(fns: np.ndarray, rule: int, t: float, dt: float, x: np.ndarray, u: np.ndarray, p: np.ndarray,
          nq: int, zoh: np.ndarray, work: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    """out = F(t, x, u) by ``rule``; work (3, n) scratch; zoh = [Phi | Gamma | gamma] (n, n + m + 1)."""
    n = x.shape[0]
    if rule == ZOH:
        m = u.shape[0]
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += zoh[i, j] * x[j]
            for j in range(m):
                s += zoh[i, n + j] * u[j]
            out[i] = s + zoh[i, n + m]
        return
    k, stage, total = work[0], work[1], work[2]
    _rhs(fns, t, x, u, p, k)
    if rule == EULER:
        out[:] = x + dt * k
    elif rule == SEMI_IMPLICIT:
        for i in range(nq, n):
            out[i] = x[i] + dt * k[i]
        for i in range(nq):
            out[i] = x[i] + dt * out[nq + i]
    else:  # RK4: the stages of steps.RK4Step.advance, in its order
        total[:] = 0.0
        total += (1.0 / 6.0) * k
        for c, w in ((0.5, 1.0 / 3.0), (0.5, 1.0 / 3.0), (1.0, 1.0 / 6.0)):
            stage[:] = x + c * dt * k
            _rhs(fns, t + c * dt, stage, u, p, k)
            total += w * k
        out[:] = x + dt * total


@numba.njit(cache=True, nogil=True)
def rollout(fns: np.ndarray, p: np.ndarray, rule: int, nq: int, zoh: np.ndarray, dt: float, times: np.ndarray,
            x0: np.ndarray, X: np.ndarray, U: np.ndarray, k_ff: np.ndarray, K: np.ndarray, gaps: np.ndarray,
            alpha: float, keep_gaps: bool, lower: np.ndarray, upper: np.ndarray, X_try: np.ndarray,
            U_try: np.ndarray) -> bool:  # pragma: no cover - runs compiled only
    """The DDP rollout (the rollout of robodyn.control.optimal.ddp): X_try (N + 1, n), U_try (N, m) from
    x0 with u_k = clip(U_k - alpha k_k - K_k (x_k - X_k)); with ``keep_gaps`` each knot starts at
    F(previous) + (alpha - 1) gap_k. False when a state stops being finite (the step is rejected)."""
    N, n = U.shape[0], x0.shape[0]
    work = np.empty((3, n))
    x = x0.copy()
    for k in range(N):
        if keep_gaps:
            X_try[k] = x + (alpha - 1.0) * gaps[k]
        else:
            X_try[k] = x
        U_try[k] = affine_inputs(U, k_ff, K, X, X_try[k], k, alpha, lower, upper)
        _step(fns, rule, times[k], dt, X_try[k], U_try[k], p, nq, zoh, work, x)
        for i in range(n):
            if not np.isfinite(x[i]):
                return False
    if keep_gaps:
        X_try[N] = x + (alpha - 1.0) * gaps[N]
    else:
        X_try[N] = x
    return True
