"""H-infinity and H2 norms of G(s) = C (s I - A)^-1 B + D (G(z) in discrete time).

- :func:`hinfnorm` (:func:`hinf_peak` with the peak's frequency): sup over w of the largest singular value of
  G(j w), by Bruinsma & Steinbuch's quadratically convergent level sets: the imaginary eigenvalues j w_i of the
  Hamiltonian H(gamma) are where a singular value equals gamma; the gains at the midpoints of the w_i raise the
  lower bound; none means gamma bounds the norm. Discrete time: on the continuous system of the bilinear map
  z = (1 + s) / (1 - s) (the unit circle onto the imaginary axis, the same gains).
- :func:`h2norm`: sqrt(trace(C W C^T)) (+ trace(D D^T) in discrete time), W the controllability Gramian (scipy's
  Lyapunov solvers); infinite for a continuous-time system with D != 0.

A system that is not asymptotically stable is in neither Hardy space: its norms are ``math.inf`` (MATLAB's
``hinfnorm`` and ``norm``; python-control's ``linfnorm``, Slycot's ab13dd, is the L-infinity norm, finite without
poles on the axis: the two agree on stable systems).

References: S. Boyd, V. Balakrishnan and P. Kabamba, Math. Control Signals Systems 2 (1989); N. A. Bruinsma and
M. Steinbuch, "A fast algorithm to compute the H-infinity-norm of a transfer function matrix", Systems & Control
Letters 14 (1990); K. Zhou, J. C. Doyle and K. Glover, *Robust and Optimal Control* (1996), sec. 4.4, 4.7, 21.1.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError, NumericalError
from robodyn.linear.systems import StateSpace, as_linear

__all__ = ["BOUNDARY_RTOL", "HINF_RTOL", "h2norm", "hinf_peak", "hinfnorm", "stable"]

Array = NDArray[np.float64]

BOUNDARY_RTOL: Final = 1e-12  # Re λ >= -this max(1, ||A||) (|z| >= 1 - this): not asymptotically stable (the
# rounding of eigenvalues is about 1e-16 ||A||: a near-optimal H-infinity loop has ||A|| ~ 1e7 and poles at -0.001).
HINF_RTOL: Final = 1e-12  # Default relative width of the bracket [lower, upper] of the H-infinity norm.
IMAGINARY_RTOL: Final = 1e-8  # |Re λ| of H(gamma) below this max(1, |λ|) ||H||-relative: on the imaginary axis.
MAX_ITERATIONS: Final = 100  # Level-set iterations (quadratic convergence: typically fewer than 10).


def stable(linear: StateSpace) -> bool:
    """Whether every pole is strictly inside the stability region, by the margin BOUNDARY_RTOL max(1, ||A||)."""
    values = np.linalg.eigvals(linear.A)
    tol = BOUNDARY_RTOL * max(1.0, float(np.linalg.norm(linear.A, 2)))
    if linear.dt is not None:
        return bool(np.all(np.abs(values) < 1.0 - tol))
    return bool(np.all(values.real < -tol))


def _gain(A: Array, B: Array, C: Array, D: Array, w: float) -> float:
    """The largest singular value of C (j w I - A)^-1 B + D."""
    G = C @ np.linalg.solve(1j * w * np.eye(A.shape[0]) - A, B) + D
    return float(np.linalg.norm(G, 2))


def _hamiltonian(A: Array, B: Array, C: Array, D: Array, gamma: float) -> Array:
    """H(gamma), whose imaginary eigenvalues j w are the frequencies where G(j w) has the singular value gamma
    (Bruinsma & Steinbuch, eq. 3): R = D^T D - gamma^2 I, S = D D^T - gamma^2 I,
    H = [[A - B R^-1 D^T C, -gamma B R^-1 B^T], [gamma C^T S^-1 C, -A^T + C^T D R^-1 B^T]]."""
    m, p = B.shape[1], C.shape[0]
    R = D.T @ D - gamma**2 * np.eye(m)
    S = D @ D.T - gamma**2 * np.eye(p)
    RB = np.linalg.solve(R, B.T)  # R^-1 B^T
    RDC = np.linalg.solve(R, D.T @ C)  # R^-1 D^T C
    return np.block([[A - B @ RDC, -gamma * B @ RB], [gamma * C.T @ np.linalg.solve(S, C), -A.T + C.T @ D @ RB]])


def _crossings(H: Array) -> Array:
    """The frequencies w >= 0 of the (numerically) imaginary eigenvalues j w of H, sorted."""
    values = np.linalg.eigvals(H)
    scale = max(1.0, float(np.linalg.norm(H, 1)))
    imaginary = np.abs(values.real) <= IMAGINARY_RTOL * scale
    return np.sort(np.unique(np.abs(values[imaginary].imag)))


def _continuous_peak(A: Array, B: Array, C: Array, D: Array, rtol: float) -> tuple[float, float]:
    """(norm, frequency) of a stable continuous-time system by Bruinsma & Steinbuch's iteration."""
    values = np.linalg.eigvals(A)
    candidates = [0.0, *np.abs(values).tolist()]  # w = 0 and the poles' natural frequencies (their sec. 3)
    gains = [_gain(A, B, C, D, w) for w in candidates]
    gains.append(float(np.linalg.norm(D, 2)))  # the gain as w -> inf
    candidates.append(math.inf)
    k = int(np.argmax(gains))
    lower, peak = gains[k], candidates[k]
    if lower == 0.0:
        return 0.0, 0.0
    for _ in range(MAX_ITERATIONS):
        gamma = (1.0 + 2.0 * rtol) * lower
        w = _crossings(_hamiltonian(A, B, C, D, gamma))  # R, S are definite: gamma > the gain at infinity
        if w.size == 0:
            return lower, peak
        mids = 0.5 * (w[:-1] + w[1:]) if w.size > 1 else w
        gains = [_gain(A, B, C, D, float(x)) for x in mids]
        k = int(np.argmax(gains))
        if gains[k] <= lower:  # the crossings were round-off near a tangency: gamma bounds the norm
            return lower, peak
        lower, peak = gains[k], float(mids[k])
    raise NumericalError(f"hinfnorm: the level-set iteration did not converge in {MAX_ITERATIONS} iterations "
                         f"(last lower bound {lower:.17g}): the system is ill-conditioned")


def _bilinear(linear: StateSpace) -> tuple[Array, Array, Array, Array]:
    """G_c(s) = G_d((1 + s) / (1 - s)): Ac = (A + I)^-1 (A - I), Bc = sqrt2 (A + I)^-1 B, Cc = sqrt2 C (A + I)^-1,
    Dc = D - C (A + I)^-1 B."""
    A, B, C, D = linear.A, linear.B, linear.C, linear.D
    plus = A + np.eye(A.shape[0])  # nonsingular: a stable system has no pole at z = -1
    inv_B, C_inv = np.linalg.solve(plus, B), np.linalg.solve(plus.T, C.T).T
    blocks = (np.linalg.solve(plus, A - np.eye(A.shape[0])), math.sqrt(2.0) * inv_B, math.sqrt(2.0) * C_inv,
              D - C @ inv_B)
    return tuple(np.asarray(M, dtype=np.float64) for M in blocks)  # type: ignore[return-value]


def hinf_peak(sys: Any, rtol: float = HINF_RTOL) -> tuple[float, float]:
    """(:func:`hinfnorm`, the frequency in rad/s of the peak): ``(inf, nan)`` for a system that is not stable,
    frequency ``inf`` for the gain at infinite frequency (continuous time)."""
    linear = as_linear(sys, "hinfnorm")
    if not (isinstance(rtol, float | int) and 0.0 < rtol < 1e-2):
        raise InputError(f"hinfnorm: rtol = {rtol!r} must be a number in (0, 0.01), e.g. 1e-12")
    if not linear.inputs or not linear.outputs:
        return 0.0, 0.0
    if not stable(linear):
        return math.inf, math.nan
    if linear.dt is None:
        return _continuous_peak(linear.A, linear.B, linear.C, linear.D, float(rtol))
    norm, w = _continuous_peak(*_bilinear(linear), float(rtol))
    return norm, 2.0 * math.atan(w) / linear.dt  # z = (1 + j w) / (1 - j w) = exp(2 j atan w)


def hinfnorm(sys: Any, rtol: float = HINF_RTOL) -> float:
    """The H-infinity norm of a LinearSystem (continuous or discrete time): sup over w of the largest singular
    value of G(j w) (G(exp(j w dt))); ``math.inf`` if it is not asymptotically stable. The result is the gain at a
    frequency, and the norm is in [result, result (1 + 2 rtol)]: python-control's ``linfnorm`` on stable systems.
    """
    return hinf_peak(sys, rtol)[0]


def h2norm(sys: Any) -> float:
    """The H2 norm of a LinearSystem: sqrt(trace(C W C^T)), A W + W A^T + B B^T = 0 (continuous time; ``inf`` when
    D != 0) or sqrt(trace(C W C^T + D D^T)), W = A W A^T + B B^T (discrete time); ``math.inf`` for a system that is
    not asymptotically stable. python-control's ``system_norm(sys, 2)``."""
    import scipy.linalg

    linear = as_linear(sys, "h2norm")
    if not linear.inputs or not linear.outputs:
        return 0.0
    if not stable(linear):
        return math.inf
    A, B, C, D = linear.A, linear.B, linear.C, linear.D
    if linear.dt is None:
        if np.any(D != 0.0):
            return math.inf
        W = scipy.linalg.solve_continuous_lyapunov(A, -B @ B.T)
        value = float(np.trace(C @ W @ C.T))
    else:
        W = scipy.linalg.solve_discrete_lyapunov(A, B @ B.T)
        value = float(np.trace(C @ W @ C.T + D @ D.T))
    return math.sqrt(max(value, 0.0))
