"""System norms of a linear system G(s) = C (s I - A)^-1 B + D (G(z) in discrete time): H-infinity and H2.

- :func:`hinfnorm`: sup over frequencies of the largest singular value of G(j w) (G(exp(j w dt))), by the
  quadratically convergent level-set iteration of Bruinsma & Steinbuch (1990): at a level gamma above a lower
  bound, the imaginary eigenvalues j w_i of the Hamiltonian H(gamma) are the frequencies where a singular value of
  G equals gamma; the largest singular value at the midpoints of consecutive w_i is the next lower bound; no
  imaginary eigenvalue means gamma is an upper bound. Discrete time: on the continuous system of the bilinear
  map z = (1 + s) / (1 - s), which maps the unit circle onto the imaginary axis with the same gains.
  :func:`hinf_peak` also gives the frequency of the peak.
- :func:`h2norm`: sqrt(trace(C W C^T)) (+ trace(D D^T) in discrete time), W the controllability Gramian
  (``scipy.linalg.solve_continuous_lyapunov`` / ``solve_discrete_lyapunov``); infinite for a continuous-time
  system with D != 0.

Both norms are those of the Hardy spaces: a system that is not asymptotically stable (a pole with Re s >= 0, or
|z| >= 1, within BOUNDARY_RTOL) is not in H-infinity or H2 and its norm is ``math.inf``, as MATLAB's ``hinfnorm``
and ``norm`` answer (python-control's ``linfnorm``, Slycot's ab13dd, computes the L-infinity norm, finite for an
unstable system without poles on the axis: the two agree on stable systems).

References: S. Boyd, V. Balakrishnan and P. Kabamba, "A bisection method for computing the H-infinity norm of a
transfer matrix and related problems", Math. Control Signals Systems 2 (1989); N. A. Bruinsma and M. Steinbuch,
"A fast algorithm to compute the H-infinity-norm of a transfer function matrix", Systems & Control Letters 14
(1990); K. Zhou, J. C. Doyle and K. Glover, *Robust and Optimal Control* (1996), sec. 4.4 and 4.7.
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
    k = int(np.argmax(gains))
    lower, peak = gains[k], candidates[k]
    high = float(np.linalg.norm(D, 2))  # the gain as w -> inf
    if high > lower:
        lower, peak = high, math.inf
    if lower == 0.0:
        return 0.0, 0.0
    for _ in range(MAX_ITERATIONS):
        gamma = (1.0 + 2.0 * rtol) * lower
        try:
            w = _crossings(_hamiltonian(A, B, C, D, gamma))
        except np.linalg.LinAlgError:
            raise NumericalError("hinfnorm: the Hamiltonian of the level-set iteration is singular: the system is "
                                 "ill-conditioned (balance or rescale it)") from None
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
    """The continuous system with G_c(s) = G_d(z), z = (1 + s) / (1 - s) (Zhou, Doyle & Glover, sec. 21.1):
    Ac = (A + I)^-1 (A - I), Bc = sqrt2 (A + I)^-1 B, Cc = sqrt2 C (A + I)^-1, Dc = D - C (A + I)^-1 B."""
    A, B, C, D = linear.A, linear.B, linear.C, linear.D
    plus = A + np.eye(A.shape[0])  # nonsingular: a stable system has no pole at z = -1
    inv_B, inv_A = np.linalg.solve(plus, B), np.linalg.solve(plus, A - np.eye(A.shape[0]))
    C_inv = np.linalg.solve(plus.T, C.T).T
    return inv_A, math.sqrt(2.0) * inv_B, math.sqrt(2.0) * C_inv, D - C @ inv_B


def hinf_peak(sys: Any, rtol: float = HINF_RTOL) -> tuple[float, float]:
    """The H-infinity norm and the frequency (rad/s) where it is reached: ``(math.inf, nan)`` for a system that is
    not asymptotically stable, frequency ``inf`` when the peak is the gain at infinite frequency (continuous time)
    and ``0`` for a zero system. See :func:`hinfnorm`."""
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
    """The H-infinity norm of a LinearSystem: sup over w of the largest singular value of G(j w)
    (G(exp(j w dt)) in discrete time); ``math.inf`` if the system is not asymptotically stable.

    Parameters
    ----------
    sys
        A LinearSystem (continuous or discrete time), or a model linear by construction.
    rtol
        The relative width of the final bracket: the norm is in [result, result (1 + 2 rtol)] (the result is the
        gain at a frequency, so never above the norm).

    Returns
    -------
    float
        Equal to python-control's ``linfnorm`` (Slycot's ab13dd) on stable systems.
    """
    return hinf_peak(sys, rtol)[0]


def h2norm(sys: Any) -> float:
    """The H2 norm of a LinearSystem: sqrt(trace(C W C^T)) with A W + W A^T + B B^T = 0 (continuous time; ``inf``
    when D != 0) or sqrt(trace(C W C^T + D D^T)) with W = A W A^T + B B^T (discrete time); ``math.inf`` for a
    system that is not asymptotically stable.

    Returns
    -------
    float
        Equal to python-control's ``system_norm(sys, 2)``.
    """
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
