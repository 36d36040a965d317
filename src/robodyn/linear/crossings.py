"""Where the frequency response of one loop L(s) = C (sI - A)^-1 B + D crosses what its margins are read at,
computed from the realization, not from a sampled plot.

- :func:`phase_crossings`: the w >= 0 where L(jw) is real (Im L = 0), the zeros on the imaginary axis of
  E(s) = L(s) - L(-s), realized as diag(A, -A), [B; B], [C, C], 0;
- :func:`level_crossings`: the w > 0 where |L(jw)| = gamma, the zeros on the imaginary axis of
  gamma^2 - L(-s) L(s), a Hamiltonian system (S. Boyd, V. Balakrishnan and P. Kabamba, "A bisection method for
  computing the H-infinity norm of a transfer matrix", MCSS 2, 1989);
- :func:`smallest_value`: the minimum over w >= 0 of |L(jw)|, by level sets: below the smallest value found, the
  level's crossings bound the bands where |L| is smaller, each band is searched, until a level has no crossing
  (the same iteration, for a minimum; N. A. Bruinsma and M. Steinbuch, Systems & Control Letters 14, 1990).

The zeros are the finite generalized eigenvalues of the Rosenbrock pencil (QZ, backward stable; the realization
balanced first, as SLICOT's TB01ID, so that no state's scale spoils them). Each one near the imaginary axis is a
candidate, refined by Brent's method on the exact response, and kept only where the response changes sign across it
with values above their rounding error (a change of sign between neighbours of a log grid two decades beyond the
poles is a candidate too, a safety net for an ill-conditioned pencil): a "crossing" where L itself is at rounding level
(the phase of 100 / (s^2 + 10 s + 100) only approaches -180 deg; python-control's polynomials report a crossing at
5e8 rad/s) is none. Discrete-time loops are mapped to continuous time by the Cayley transform
z = (1 + s) / (1 - s), exact on the unit circle: w dt = 2 atan(v).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import NumericalError
from robodyn.linear.balancing import balancing

__all__ = ["Loop", "level_crossings", "phase_crossings", "real_everywhere", "smallest_value"]

Array = NDArray[np.float64]

EPS: Final = float(np.finfo(float).eps)
NEAR_AXIS: Final = 1e-3  # A zero with |Re s| <= this |s| is a candidate crossing (refined and verified after).
NOISE: Final = 10.0  # A value counts as signed only when it exceeds this many times its rounding bound.
BRACKETS: Final = (1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2)  # Relative half-widths tried around a candidate.
LEVEL_STEP: Final = 1e-9  # Each level of smallest_value lies this fraction below the smallest value found.
MAX_LEVELS: Final = 60  # Levels tried at most (the iteration converges quadratically: a handful suffice).
SCAN_POINTS: Final = 400  # Points of the log grid whose changes of sign back up the pencil's candidates.


@dataclass(frozen=True, slots=True)
class Loop:
    """A SISO loop in continuous time: ``A`` (n, n), ``B`` (n,), ``C`` (n,), ``D``; its states balanced by powers
    of two (exact). ``dt`` is the sample period of the discrete-time loop this one is the Cayley image of (None:
    continuous): its frequencies v map back to w = 2 atan(v) / dt."""

    A: Array
    B: Array
    C: Array
    D: float
    dt: float | None = None

    @classmethod
    def of(cls, A: Array, B: Array, C: Array, D: float, dt: float | None = None) -> Loop:
        """The loop x' = A x + B u, y = C x + D u (or, with ``dt``, x[k+1] = A x[k] + B u[k]), balanced; a
        discrete-time one as its Cayley image. NumericalError: a discrete-time pole at z = -1 (the transform's
        singular point)."""
        A, B, C = (np.asarray(m, dtype=np.float64) for m in (A, B, C))
        B, C = B.reshape(-1), C.reshape(-1)
        if dt is not None:
            n = A.shape[0]
            shifted = np.eye(n) + A
            if np.linalg.cond(shifted) > 1.0 / (1e3 * EPS):
                raise NumericalError("margins: the discrete-time loop has a pole at z = -1 (the Nyquist frequency): "
                                     "its crossings are not computed")
            X = np.asarray(np.linalg.solve(shifted, np.column_stack([A - np.eye(n), B])), dtype=np.float64)
            C_new = np.asarray(2.0 * np.linalg.solve(shifted.T, C), dtype=np.float64)
            A, B, C, D = X[:, :n], X[:, n], C_new, D - float(C @ X[:, n])
        scale = balancing(A, B[:, None], C[None, :])[0]
        B, C = B / scale, C * scale
        gain = _power_of_two_root(float(np.linalg.norm(C)) / max(float(np.linalg.norm(B)), 1e-300))
        return cls(A * (scale[None, :] / scale[:, None]), B * gain, C / gain, float(D), dt)

    @property
    def n(self) -> int:
        return self.A.shape[0]

    def frequency(self, v: float) -> float:
        """The loop's own frequency (rad/s) of the frequency ``v`` of this realization."""
        return v if self.dt is None else 2.0 * math.atan(v) / self.dt

    def response(self, w: float) -> tuple[complex, float]:
        """L(jw) and a bound on its rounding error (inf at a pole)."""
        shifted = 1j * w * np.eye(self.n) - self.A
        try:
            X = np.linalg.solve(shifted, self.B.astype(complex))
        except np.linalg.LinAlgError:
            return complex(math.inf, 0.0), math.inf
        condition = float(np.linalg.cond(shifted))
        value = complex(self.C @ X) + self.D
        error = EPS * self.n * (condition * float(np.abs(self.C) @ np.abs(X)) + abs(self.D)) + EPS * abs(value)
        return value, error if math.isfinite(error) else math.inf

    def value(self, w: float) -> complex:
        """L(jw) (inf at a pole)."""
        try:
            return complex(self.C @ np.linalg.solve(1j * w * np.eye(self.n) - self.A, self.B.astype(complex))) + self.D
        except np.linalg.LinAlgError:
            return complex(math.inf, 0.0)


def _brent(f: Callable[[float], float], low: float, high: float) -> float:
    """The root of f in [low, high] (a change of sign) to about 4 eps, by Brent's method."""
    import scipy.optimize

    return float(scipy.optimize.brentq(f, low, high, xtol=1e-300, rtol=4 * EPS))


def _minimize(f: Callable[[float], float], **options: object) -> object:
    """scipy's bounded scalar minimization (Brent's method)."""
    import scipy.optimize

    return scipy.optimize.minimize_scalar(f, **options)


def _power_of_two_root(ratio: float) -> float:
    """The power of two nearest sqrt(ratio) (1 for 0 or inf): B times it and C divided by it have equal norms."""
    return float(2.0 ** round(0.5 * math.log2(ratio))) if 0.0 < ratio < math.inf else 1.0


def _zeros(A: Array, B: Array, C: Array, D: float) -> NDArray[np.complex128]:
    """The finite zeros of the SISO system (A, B, C, D): generalized eigenvalues of [[A, B], [C, D]] - s diag(I, 0)."""
    n = A.shape[0]
    M = np.block([[A, B[:, None]], [C[None, :], np.array([[D]])]])
    N = np.zeros_like(M)
    N[:n, :n] = np.eye(n)
    import scipy.linalg  # here: importing robodyn.linear.lti (which names margins) stays light

    alpha, beta = scipy.linalg.eig(M, N, right=False, homogeneous_eigvals=True)
    with np.errstate(all="ignore"):
        values = alpha / beta
    return values[np.isfinite(values)]


def _candidates(zeros: NDArray[np.complex128], scale: float) -> list[float]:
    """|Im s| of the zeros near the positive imaginary axis (one per conjugate or mirrored pair), sorted."""
    near = [abs(z.imag) for z in zeros if abs(z.real) <= NEAR_AXIS * abs(z) and abs(z.imag) > 1e-12 * scale]
    return sorted(set(near))


def _refined(f: Callable[[float], tuple[float, float]], w: float) -> float | None:
    """The root of ``f(w) -> (value, its rounding error)`` near ``w``, from the narrowest bracket (BRACKETS) whose ends
    are both above their rounding (NOISE times) and of opposite signs (Brent's method); None when there is none (the
    response at rounding level there, or no change of sign: no crossing)."""
    for width in BRACKETS:
        low, high = w * (1.0 - width), w * (1.0 + width)
        (f_low, e_low), (f_high, e_high) = f(low), f(high)
        if not (abs(f_low) > NOISE * e_low and abs(f_high) > NOISE * e_high):
            continue
        if (f_low > 0.0) == (f_high > 0.0):
            continue  # a wider bracket may still hold a root the candidate missed by more than this
        return _brent(lambda x: f(x)[0], low, high)
    return None


def _scanned(loop: Loop, part: Callable[[NDArray[np.complex128]], Array]) -> list[float]:
    """Roots of ``part(L(jw))`` between neighbours of a log grid (SCAN_POINTS, two decades beyond the poles) where it
    changes sign with both values above their rounding: a safety net under the pencil's candidates, which an
    ill-conditioned pencil may lose; every root is Brent's on the exact response, as theirs."""
    poles = np.abs(np.linalg.eigvals(loop.A)) if loop.n else np.zeros(0)
    poles = poles[poles > 1e-12 * max(1.0, float(np.max(poles, initial=0.0)))]
    low, high = (float(poles.min()) / 100, float(poles.max()) * 100) if poles.size else (1e-3, 1e3)
    w = np.geomspace(low, high, SCAN_POINTS)
    shifted = 1j * w[:, None, None] * np.eye(loop.n) - loop.A
    with np.errstate(all="ignore"):
        try:
            X = np.linalg.solve(shifted, np.broadcast_to(loop.B.astype(complex), (w.size, loop.n))[..., None])[..., 0]
        except np.linalg.LinAlgError:
            return []
        values = X @ loop.C + loop.D
        error = EPS * loop.n * (np.linalg.cond(shifted) * (np.abs(X) @ np.abs(loop.C)) + abs(loop.D))
        f = part(values)
    clean = np.isfinite(f) & (np.abs(f) > NOISE * error)
    brackets = np.flatnonzero(clean[:-1] & clean[1:] & (np.sign(f[:-1]) != np.sign(f[1:])))

    def exact(x: float) -> float:
        return float(part(np.array([loop.value(x)]))[0])

    return [_brent(exact, float(w[k]), float(w[k + 1])) for k in brackets]


def _distinct(values: list[float]) -> list[float]:
    kept: list[float] = []
    for value in sorted(values):
        if not kept or value - kept[-1] > 1e-9 * max(abs(value), 1e-300):
            kept.append(value)
    return kept


def real_everywhere(loop: Loop) -> bool:
    """Whether L(jw) is real at every frequency (L(s) = L(-s): a loop without damping, E = 0): the Markov parameters
    C A^(2i) B of E vanish for i < n (Cayley-Hamilton: then all do), to their rounding."""
    size = float(np.linalg.norm(loop.A, 2)) or 1.0
    scaled = loop.A / size
    vector = loop.B.copy()
    reach = float(np.linalg.norm(loop.C) * np.linalg.norm(loop.B))
    for _ in range(loop.n):
        if abs(float(loop.C @ vector)) > 1e3 * loop.n * EPS * reach * max(1.0, float(np.linalg.norm(vector)) /
                                                                          max(float(np.linalg.norm(loop.B)), 1e-300)):
            return False
        vector = scaled @ (scaled @ vector)
    return True


def phase_crossings(loop: Loop) -> list[float]:
    """Every w > 0 (of this realization) where L(jw) is real and finite, and w = 0 when L(0) is; sorted."""
    A, B, C = loop.A, loop.B, loop.C
    n = loop.n
    stacked = np.block([[A, np.zeros((n, n))], [np.zeros((n, n)), -A]])
    zeros = _zeros(stacked, np.concatenate([B, B]), np.concatenate([C, C]), 0.0)
    scale = max(1.0, float(np.linalg.norm(A, 2)))

    def imaginary(w: float) -> tuple[float, float]:
        value, error = loop.response(w)
        return value.imag, error

    found = [root for w in _candidates(zeros, scale) if (root := _refined(imaginary, w)) is not None]
    found += _scanned(loop, lambda values: values.imag)
    origin = loop.value(0.0)
    return ([0.0] if math.isfinite(origin.real) else []) + _distinct(found)


def level_crossings(loop: Loop, level: float) -> list[float]:
    """Every w > 0 (of this realization) where |L(jw)| = ``level``; sorted."""
    A, B, C, D = loop.A, loop.B, loop.C, loop.D
    n = loop.n
    # gamma^2 - L(-s) L(s): states (x, p), x' = A x + B u, p' = -A^T p + C^T y with y = C x + D u, and the output
    # gamma^2 u - (D y - B^T p)
    H = np.block([[A, np.zeros((n, n))], [np.outer(C, C), -A.T]])
    zeros = _zeros(H, np.concatenate([B, C * D]), np.concatenate([-D * C, B]), level**2 - D**2)
    scale = max(1.0, float(np.linalg.norm(A, 2)))

    def gap(w: float) -> tuple[float, float]:
        value, error = loop.response(w)
        return abs(value) - level, error

    found = [root for w in _candidates(zeros, scale) if (root := _refined(gap, w)) is not None]
    return _distinct(found + _scanned(loop, lambda values: np.abs(values) - level))


def smallest_value(loop: Loop, hints: list[float]) -> tuple[float, float, list[float]]:
    """min over w >= 0 of |L(jw)|, where it is reached (inf: approached as w -> inf), and the local minima met.

    ``hints`` are frequencies to start from (crossovers, the poles' |Im|); w = 0 and w -> inf (|D|) are always
    among them.
    """
    best, where = abs(loop.D), math.inf
    for w in [0.0, *hints]:
        value = abs(loop.value(w))
        if value < best:
            best, where = value, w
    minima: list[float] = []
    for _ in range(MAX_LEVELS):
        if best == 0.0:
            break
        level = best * (1.0 - LEVEL_STEP)
        edges = [0.0, *level_crossings(loop, level)]
        bands = [(a, b) for a, b in itertools.pairwise(edges) if abs(loop.value(0.5 * (a + b))) < level]
        if not bands:
            break
        for low, high in bands:
            found = float(_minimize(lambda w: abs(loop.value(w)), bounds=(low, high), method="bounded",
                                    options={"xatol": 1e-12 * max(high, 1e-300)}).x)  # type: ignore[attr-defined]
            value = abs(loop.value(found))
            minima.append(found)
            if value < best:
                best, where = value, found
    if math.isfinite(where) and where not in minima:  # no band below it: the smallest value (within LEVEL_STEP)
        minima.append(where)
    return best, where, _distinct(minima)
