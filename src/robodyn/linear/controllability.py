"""Controllability and observability of a linear system: one verdict, by the PBH test on the balanced system.

- :func:`controllability`: (A, B) is controllable iff every distinct eigenvalue λ of A passes the
  Popov–Belevitch–Hautus test rank [λI - A, B] = n (T. Kailath, *Linear Systems*, 1980, sec. 2.4; P. J. Antsaklis
  and A. N. Michel, *Linear Systems*, 2006, sec. 3.4). The failing modes are named; the Gramian W
  (A W + W A^T + B B^T = 0, discrete time A W A^T - W + B B^T = 0) is given when A is stable.
- :func:`observability`: the dual, on A^T and C^T: rank [λI - A; C], A^T W + W A + C^T C = 0.

How the verdict is decided (module constants):

- **Balancing** (:mod:`robodyn.linear.balancing`). The states are scaled by powers of two (exact: nothing is
  rounded) so that, for each state, its row of [A, B] and its column of A outside the diagonal have equal 2-norms
  (the iteration of LAPACK's ``gebal``, and of SLICOT's ``TB01ID`` on [A, B]), and each input column of B is scaled
  to about the size of A (observability: the pair (A^T, C^T)). Neither changes which modes are controllable; both
  keep units from deciding it (a state in micrometres beside one in kilometres). A state nothing else depends on (a
  zero column of A outside the diagonal) changes only its own row when scaled: its row is scaled to the size of A.
- **Tolerance, per mode.** On the balanced system P(λ) = [λI - A, B] is evaluated at the computed eigenvalue, which
  carries an error up to about eps ||A|| κ (κ: the norm of the eigenvalue's spectral projector, 1 for a normal
  matrix), and its singular values carry eps ||P||. A singular value of P counts as 0 at or below
  ``PBH_SAFETY n eps (||P|| + κ ||A||)`` plus the matrices' own error (a linearization's
  ``error_estimate``), but never above ``RANK_RTOL ||P||`` (1e-8: half the digits).
- **Margin.** The smallest singular value of P(λ) relative to ||[A, B]||_2 (balanced) is the size of the
  relative change of [A, B] that makes the mode fail (Eckart–Young): a mode that passes with a margin below
  :data:`NEAR_MARGIN` is *nearly* uncontrollable, and the explanation says so.

The rank of the Kalman matrix [B, AB, ..., A^(n-1) B] (python-control's ``ctrb``; ``obsv`` for observability) is
kept as a detail: its singular values spread like the powers of A, so it loses the rank of well-controllable
systems to rounding (a motor's electrical pole at -4000 beside a mechanical one at -0.1); when it disagrees with
the verdict, the explanation says why. References: python-control 0.10 (``ctrb``, ``obsv``, ``gram``), whose
matrices these equal; C. C. Paige, "Properties of numerical algorithms related to computing controllability",
IEEE TAC 26(1), 1981 (why the Kalman matrix is not used to decide).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from robodyn import display
from robodyn.base.errors import InputError
from robodyn.linear.balancing import balancing
from robodyn.linear.modes import EPS, RANK_RTOL, ModalDecomposition, modal_decomposition
from robodyn.linear.systems import as_linear

__all__ = ["NEAR_MARGIN", "PBH_SAFETY", "Controllability", "Observability", "PBHMode", "balancing", "controllability",
           "observability", "pbh_modes"]  # balancing: robodyn.linear.balancing's, where the PBH test's comes from

Array = NDArray[np.float64]

PBH_SAFETY: Final = 10.0  # Factor on the rounding bound n eps (||P|| + κ ||A||) of a PBH singular value.
NEAR_MARGIN: Final = 1e-8  # A mode passing with a margin below this (relative to ||[A, B]||) is nearly failing.


@dataclass(frozen=True, slots=True)
class PBHMode:
    """The Popov–Belevitch–Hautus test of one distinct eigenvalue λ (reported once per conjugate pair).

    ``rank`` of [λI - A, B] (observability: [λI - A; C]) on the balanced system against the number of states;
    ``smallest`` its n-th singular value; ``tolerance`` the level at or below which a singular value counts as 0
    (module docstring); ``passes``: rank = n (the mode is controllable / observable); ``margin``: ``smallest``
    relative to ||[A, B]||_2, the relative change of the matrices that makes the mode fail.
    """

    eigenvalue: complex
    rank: int
    smallest: float
    passes: bool
    tolerance: float = 0.0
    margin: float = math.nan

    @property
    def nearly(self) -> bool:
        """Passes, but with a margin below :data:`NEAR_MARGIN` (nearly uncontrollable / unobservable)."""
        return self.passes and self.margin < NEAR_MARGIN

    def to_dict(self) -> dict[str, Any]:
        return {"eigenvalue": [self.eigenvalue.real, self.eigenvalue.imag], "rank": self.rank,
                "smallest_singular_value": self.smallest, "passes": self.passes, "tolerance": self.tolerance,
                "margin": self.margin if math.isfinite(self.margin) else None, "nearly": self.nearly}


@dataclass(frozen=True, slots=True, eq=False)
class _RankTest:
    """The verdict (PBH on the balanced system), the Kalman matrix and its rank, the Gramian (see
    :func:`controllability`)."""

    kind: str
    rank: int
    matrix: Array
    singular_values: Array
    tolerance: float
    modes: tuple[PBHMode, ...]
    pbh_tolerance: float
    gramian: Array | None
    gramian_reason: str | None
    states: tuple[str, ...]
    dt: float | None = None
    scaling: Array | None = None

    @property
    def _word(self) -> str:
        return "controllable" if self.kind == "controllability" else "observable"

    @property
    def full(self) -> bool:
        """The verdict: every mode passes the PBH test (controllable / observable). The Kalman matrix's rank is
        :attr:`rank` (a detail: rounding can lose it)."""
        return all(mode.passes for mode in self.modes)

    @property
    def failing(self) -> tuple[PBHMode, ...]:
        """The modes that fail the PBH test (uncontrollable / unobservable)."""
        return tuple(mode for mode in self.modes if not mode.passes)

    @property
    def nearly(self) -> tuple[PBHMode, ...]:
        """The modes that pass with a margin below :data:`NEAR_MARGIN`."""
        return tuple(mode for mode in self.modes if mode.nearly)

    def _shown(self, value: complex) -> str:
        """An eigenvalue as text, round-off against the largest |λ| (at least 1) shown as 0."""
        scale = max([1.0, *(abs(mode.eigenvalue) for mode in self.modes)])
        return display.number(complex(display.cleaned([value], scale=scale)[0]))

    @property
    def explanation(self) -> str:
        """The verdict and why: the modes that fail, or the smallest margin; the modes that nearly fail; the
        Kalman matrix's rank as a detail (and why it differs when it does)."""
        n, word = len(self.states), self._word
        pair = "[A, B]" if word == "controllable" else "[A; C]"
        if self.failing and 0 in self.matrix.shape:
            text = f"not {word}: the model has no {'inputs' if word == 'controllable' else 'outputs'}"
        elif self.failing:
            names = ", ".join(self._shown(mode.eigenvalue) for mode in self.failing)
            text = f"not {word}: the PBH test on the balanced system finds the mode(s) {names} not {word}"
        else:
            weakest = min(self.modes, key=lambda mode: mode.margin)
            text = (f"{word}: every mode passes the PBH test on the balanced system (the weakest, "
                    f"{self._shown(weakest.eigenvalue)}, by a margin of {weakest.margin:.2g} of ||{pair}||)")
        if self.nearly:
            close = ", ".join(f"{self._shown(mode.eigenvalue)} (margin {mode.margin:.1g})" for mode in self.nearly)
            text += (f"; nearly not {word}: the mode(s) {close} pass by so little that a relative change of {pair} "
                     f"that small makes them un{word}")
        matrix = "[B, AB, ..., A^(n-1) B]" if word == "controllable" else "[C; CA; ...; CA^(n-1)]"
        text += f"; the Kalman matrix {matrix} has rank {self.rank} of {n}"
        if (self.rank == n) != self.full and self.full:
            spread = f"{self.singular_values[0]:.3g} to {self.singular_values[-1]:.3g}"
            text += f" (lost to rounding: its singular values span {spread}; it does not decide)"
        elif (self.rank == n) != self.full:
            text += " (rounding hides the failing modes from it; it does not decide)"
        return text

    def to_dict(self) -> dict[str, Any]:
        """Strict JSON: the verdict (``full`` and ``controllable`` / ``observable``), the PBH modes, the Kalman
        matrix's rank, tolerance and singular values, the balancing, the Gramian (null with a reason)."""
        n = len(self.states)
        return {"kind": self.kind, "rank": self.rank, "states": list(self.states), "full": self.full,
                self._word: self.full, "test": "PBH on the balanced system", "rank_full": self.rank == n,
                "tolerance": self.tolerance, "singular_values": self.singular_values.tolist(),
                "modes": [mode.to_dict() for mode in self.modes], "pbh_tolerance": self.pbh_tolerance,
                "failing": [[m.eigenvalue.real, m.eigenvalue.imag] for m in self.failing],
                "nearly": [[m.eigenvalue.real, m.eigenvalue.imag] for m in self.nearly],
                "scaling": None if self.scaling is None else self.scaling.tolist(),
                "gramian": None if self.gramian is None else self.gramian.tolist(),
                "gramian_reason": self.gramian_reason, "explanation": self.explanation, "dt": self.dt}

    def _repr_html_(self) -> str:
        """The verdict, the PBH test per mode, and the Gramian as a labelled matrix."""
        rows = [(display.number(m.eigenvalue), m.rank, m.smallest, m.margin, m.passes) for m in self.modes]
        parts = [display.heading(f"{self.kind}: {self.explanation}"),
                 display.html_table(rows, header=("eigenvalue", "PBH rank", "smallest singular value", "margin",
                                                  "passes"))]
        if self.gramian is not None:
            parts.append(display.matrix_html(self.gramian, self.states, self.states, title="Gramian"))
        else:
            parts.append(display.note(f"no Gramian: {self.gramian_reason}"))
        return display.block(parts)


@dataclass(frozen=True, slots=True, eq=False)
class Controllability(_RankTest):
    """Controllability of (A, B): the verdict ``full`` (every mode passes rank [λI - A, B] = n on the balanced
    system), ``matrix`` = [B, AB, ..., A^(n-1) B] (n, n m) and its rank (a detail), the Gramian W
    (A W + W A^T + B B^T = 0; discrete A W A^T - W + B B^T = 0)."""

    @property
    def controllable(self) -> bool:
        """The verdict (= :attr:`full`)."""
        return self.full


@dataclass(frozen=True, slots=True, eq=False)
class Observability(_RankTest):
    """Observability of (A, C): the verdict ``full`` (every mode passes rank [λI - A; C] = n on the balanced
    system), ``matrix`` = [C; CA; ...; CA^(n-1)] (n p, n) and its rank (a detail), the Gramian W
    (A^T W + W A + C^T C = 0; discrete A^T W A - W + C^T C = 0)."""

    @property
    def observable(self) -> bool:
        """The verdict (= :attr:`full`)."""
        return self.full


def _tolerance(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value) if not isinstance(value, bool) and isinstance(value, int | float | np.floating) else -1.0
    if not (math.isfinite(number) and number >= 0.0):
        raise InputError(f"tolerance must be a number >= 0 (singular values at or below it count as 0), "
                         f"got {value!r}")
    return number


def _projector_norms(decomposition: ModalDecomposition) -> list[float]:
    """The norm of each cluster's spectral projector V_c W_c (its eigenvalue's condition number, >= 1; inf when
    the eigenvectors are dependent)."""
    V, W = decomposition.V, decomposition.V_inv
    norms = []
    for members in decomposition.clusters:
        index = list(members)
        with np.errstate(all="ignore"):
            value = float(np.linalg.norm(V[:, index] @ W[index, :]))  # Frobenius: within sqrt(size) of the 2-norm
        norms.append(max(1.0, value) if math.isfinite(value) else math.inf)
    return norms


def pbh_modes(A: Array, B: Array, *, error: float = 0.0) -> tuple[tuple[PBHMode, ...], float]:
    """The PBH test rank [λI - A, B] = n of every distinct eigenvalue λ of A (one per conjugate pair, largest real
    part first) on the balanced system, and the largest tolerance used (module docstring).

    Parameters
    ----------
    A : (n, n)
    B : (n, m)
    error
        The largest absolute error of the entries of A and B (a linearization's ``error_estimate``; 0: exact).
    """
    found, tol, _ = _pbh(A, B, error)
    return found, tol


def _pbh(A: Array, B: Array, error: float) -> tuple[tuple[PBHMode, ...], float, Array]:
    """:func:`pbh_modes` and the state scaling of the balancing."""
    n, m = B.shape
    d, s = balancing(A, B)
    A_b, B_b = A * (d[None, :] / d[:, None]), (B / d[:, None]) * s[None, :]
    decomposition = modal_decomposition(A_b)
    size = float(np.linalg.norm(np.hstack([A_b, B_b]), 2))
    spread = float(max(np.max(d) / np.min(d), np.max(s, initial=1.0)))
    floor = error * spread * math.sqrt(n * (n + m))  # entrywise errors of A and B in the balanced coordinates
    found = []
    for k, kappa in enumerate(_projector_norms(decomposition)):
        value = decomposition.center(k)
        if value.imag < 0.0:
            continue
        rounding = PBH_SAFETY * n * EPS * (size + kappa * decomposition.norm)
        tol = min(rounding + floor, RANK_RTOL * size)
        values = np.linalg.svd(np.hstack([value * np.eye(n) - A_b, B_b.astype(complex)]), compute_uv=False)
        rank = int(np.sum(values > tol))
        smallest = float(values[n - 1])
        found.append(PBHMode(value, rank, smallest, rank == n, tol, smallest / size if size > 0.0 else 0.0))
    found.sort(key=lambda mode: (-mode.eigenvalue.real, mode.eigenvalue.imag))
    return tuple(found), max((mode.tolerance for mode in found), default=0.0), d


def _rank_test(A: Array, B: Array, dt: float | None, tolerance: float | None, error: float) -> dict[str, Any]:
    """The fields of a test of (A, B) (observability: pass A^T, C^T and transpose the matrix)."""
    n = A.shape[0]
    blocks = [B]
    for _ in range(n - 1):
        blocks.append(A @ blocks[-1])
    matrix = np.hstack(blocks)
    with np.errstate(all="ignore"):
        singular = np.linalg.svd(matrix, compute_uv=False) if matrix.size and np.all(np.isfinite(matrix)) else \
            np.zeros(0)
    top = float(singular[0]) if singular.size else 0.0
    tol = max(matrix.shape) * EPS * top if tolerance is None else tolerance
    found, pbh_tol, scaling = _pbh(A, B, error)
    gramian, reason = _gramian(A, B, dt, np.array([mode.eigenvalue for mode in found]))
    scaling.setflags(write=False)
    return {"rank": int(np.sum(singular > tol)), "matrix": matrix, "singular_values": singular, "tolerance": tol,
            "modes": found, "pbh_tolerance": pbh_tol, "gramian": gramian, "gramian_reason": reason,
            "scaling": scaling}


def _gramian(A: Array, B: Array, dt: float | None, values: Any) -> tuple[Array | None, str | None]:
    import scipy.linalg

    tol = 1e-9 * max(1.0, float(np.linalg.norm(A, 2)))
    if dt is None and float(np.max(values.real)) >= -tol:
        return None, (f"A is not stable (an eigenvalue has real part {np.max(values.real):.6g} >= 0): the "
                      "infinite-horizon Gramian does not exist")
    if dt is not None and float(np.max(np.abs(values))) >= 1.0 - tol:
        return None, (f"A is not stable (a pole has |z| = {np.max(np.abs(values)):.6g} >= 1): the "
                      "infinite-horizon Gramian does not exist")
    Q = B @ B.T
    W = scipy.linalg.solve_discrete_lyapunov(A, Q) if dt is not None else \
        scipy.linalg.solve_continuous_lyapunov(A, -Q)
    W = 0.5 * (W + W.T)
    W.setflags(write=False)
    return W, None


def controllability(system: Any, *, tolerance: float | None = None) -> Controllability:
    """Controllability of (A, B): the verdict by the PBH test on the balanced system, the Kalman matrix's rank
    (a detail), the Gramian.

    Parameters
    ----------
    system
        A LinearSystem (continuous or discrete time); its ``error_estimate`` (a linearization's) widens the PBH
        tolerance.
    tolerance
        For the Kalman matrix's rank only: its singular values at or below it count as 0; default
        max(n, n m) eps sigma_max (numpy's ``matrix_rank``). The verdict's tolerance is the module docstring's.

    Returns
    -------
    Controllability
        ``full`` (= ``controllable``) is the verdict; ``failing`` and ``nearly`` name the modes; ``matrix`` equals
        ``control.ctrb``; ``gramian`` equals ``control.gram(sys, "c")`` when A is stable.
    """
    linear = as_linear(system, "controllability")
    fields = _rank_test(linear.A, linear.B, linear.dt, _tolerance(tolerance), linear.error_estimate or 0.0)
    return Controllability("controllability", states=linear.states, dt=linear.dt, **fields)


def observability(system: Any, *, tolerance: float | None = None) -> Observability:
    """Observability of (A, C): the dual of :func:`controllability` (on A^T, C^T); ``matrix`` equal to
    ``control.obsv``, ``gramian`` to ``control.gram(sys, "o")`` when A is stable."""
    linear = as_linear(system, "observability")
    fields = _rank_test(linear.A.T, linear.C.T, linear.dt, _tolerance(tolerance), linear.error_estimate or 0.0)
    fields["matrix"] = np.ascontiguousarray(fields["matrix"].T)
    return Observability("observability", states=linear.states, dt=linear.dt, **fields)
