"""Controllability and observability of a linear system: the rank test, the PBH test per mode, the Gramians.

- :func:`controllability`: the rank of [B, AB, ..., A^(n-1) B] by singular values (numpy's ``matrix_rank``
  tolerance unless given), the Popov–Belevitch–Hautus test per distinct eigenvalue λ, rank [λI - A, B] = n,
  which names the modes that fail (T. Kailath, *Linear Systems*, 1980, sec. 2.4; P. J. Antsaklis and A. N.
  Michel, *Linear Systems*, 2006, sec. 3.4), and, when A is stable, the Gramian W: A W + W A^T + B B^T = 0
  (continuous time), A W A^T - W + B B^T = 0 (discrete time).
- :func:`observability`: the dual, on A^T and C^T: [C; CA; ...], rank [λI - A; C], A^T W + W A + C^T C = 0.

The rank of the matrix of powers of A is ill-conditioned for large n (its singular values spread like the
powers of A); the PBH test is not, and the explanation says when the two disagree. References: python-control
0.10 (``ctrb``, ``obsv``, ``gram``), whose matrices these equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robodyn import display
from robodyn.analysis.lti import as_linear
from robodyn.analysis.modes import EPS, RANK_RTOL, ComplexArray, modal_decomposition
from robodyn.errors import InputError

__all__ = ["Controllability", "Observability", "PBHMode", "controllability", "observability", "pbh_modes"]

Array = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class PBHMode:
    """The Popov–Belevitch–Hautus test of one distinct eigenvalue λ (reported once per conjugate pair).

    ``rank`` of [λI - A, B] (observability: [λI - A; C]) against the number of states; ``smallest`` its n-th
    singular value (how far from failing); ``passes``: rank = n (the mode is controllable / observable).
    """

    eigenvalue: complex
    rank: int
    smallest: float
    passes: bool

    def to_dict(self) -> dict[str, Any]:
        return {"eigenvalue": [self.eigenvalue.real, self.eigenvalue.imag], "rank": self.rank,
                "smallest_singular_value": self.smallest, "passes": self.passes}


@dataclass(frozen=True, slots=True, eq=False)
class _RankTest:
    """The rank test, the PBH test per mode and the Gramian (see :func:`controllability`)."""

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

    @property
    def full(self) -> bool:
        """Whether the rank is n (controllable / observable by the rank test)."""
        return self.rank == len(self.states)

    @property
    def failing(self) -> tuple[PBHMode, ...]:
        """The modes that fail the PBH test (uncontrollable / unobservable)."""
        return tuple(mode for mode in self.modes if not mode.passes)

    @property
    def explanation(self) -> str:
        """One sentence: the verdict, the modes that fail, and whether the two tests agree."""
        n, word = len(self.states), "controllable" if self.kind == "controllability" else "observable"
        text = f"rank {self.rank} of {n} (singular values above {self.tolerance:.3g})"
        failing = ", ".join(display.number(mode.eigenvalue) for mode in self.failing)
        text += f": {'' if self.full else 'not '}{word}"
        text += f"; the PBH test finds the mode(s) {failing} not {word}" if failing else \
            "; every mode passes the PBH test"
        if self.full == bool(failing):
            text += (" (the tests disagree: the matrix of powers of A is ill-conditioned, singular values from "
                     f"{self.singular_values[0]:.3g} to {self.singular_values[-1]:.3g}; trust the PBH test)")
        return text

    def to_dict(self) -> dict[str, Any]:
        """Strict JSON: rank, tolerance, singular values, the PBH modes, the Gramian (null with a reason)."""
        return {"kind": self.kind, "rank": self.rank, "states": list(self.states), "full": self.full,
                "tolerance": self.tolerance, "singular_values": self.singular_values.tolist(),
                "modes": [mode.to_dict() for mode in self.modes], "pbh_tolerance": self.pbh_tolerance,
                "gramian": None if self.gramian is None else self.gramian.tolist(),
                "gramian_reason": self.gramian_reason, "explanation": self.explanation, "dt": self.dt}

    def _repr_html_(self) -> str:
        """The verdict, the PBH test per mode, and the Gramian as a labelled matrix."""
        rows = [(display.number(m.eigenvalue), m.rank, m.smallest, m.passes) for m in self.modes]
        parts = [display.heading(f"{self.kind}: {self.explanation}"),
                 display.html_table(rows, header=("eigenvalue", "PBH rank", "smallest singular value", "passes"))]
        if self.gramian is not None:
            parts.append(display.matrix_html(self.gramian, self.states, self.states, title="Gramian"))
        else:
            parts.append(display.note(f"no Gramian: {self.gramian_reason}"))
        return display.block(parts)


@dataclass(frozen=True, slots=True, eq=False)
class Controllability(_RankTest):
    """Controllability of (A, B): ``matrix`` = [B, AB, ..., A^(n-1) B] (n, n m) and its rank, the PBH test
    rank [λI - A, B] per mode, the Gramian W (A W + W A^T + B B^T = 0; discrete A W A^T - W + B B^T = 0)."""


@dataclass(frozen=True, slots=True, eq=False)
class Observability(_RankTest):
    """Observability of (A, C): ``matrix`` = [C; CA; ...; CA^(n-1)] (n p, n) and its rank, the PBH test
    rank [λI - A; C] per mode, the Gramian W (A^T W + W A + C^T C = 0; discrete A^T W A - W + C^T C = 0)."""


def _tolerance(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value) if not isinstance(value, bool) and isinstance(value, int | float | np.floating) else -1.0
    if not (math.isfinite(number) and number >= 0.0):
        raise InputError(f"tolerance must be a number >= 0 (singular values at or below it count as 0), "
                         f"got {value!r}")
    return number


def pbh_modes(A: Array, B: Array, eigenvalues: ComplexArray | None = None,
              clusters: tuple[tuple[int, ...], ...] | None = None) -> tuple[tuple[PBHMode, ...], float]:
    """The PBH test rank [λI - A, B] of every distinct eigenvalue λ of A (one per conjugate pair, largest real
    part first), and its tolerance RANK_RTOL ||[A, B]||_2 (relative: the test does not depend on the units).

    Parameters
    ----------
    A : (n, n)
    B : (n, m)
    eigenvalues, clusters
        A's :func:`~robodyn.analysis.modes.modal_decomposition` (computed when not given).
    """
    n = A.shape[0]
    if eigenvalues is None or clusters is None:
        decomposition = modal_decomposition(A)
        eigenvalues, clusters = decomposition.eigenvalues, decomposition.clusters
    tol = RANK_RTOL * float(np.linalg.norm(np.hstack([A, B]), 2))
    found = []
    for members in clusters:
        group = eigenvalues[list(members)]
        value = complex(np.mean(group))
        if all(np.min(np.abs(group - z.conjugate())) == 0.0 for z in group):  # self-conjugate: real
            value = complex(value.real, 0.0)
        if value.imag < 0.0:
            continue
        values = np.linalg.svd(np.hstack([value * np.eye(n) - A, B.astype(complex)]), compute_uv=False)
        rank = int(np.sum(values > tol))
        found.append(PBHMode(value, rank, float(values[n - 1]), rank == n))
    found.sort(key=lambda mode: (-mode.eigenvalue.real, mode.eigenvalue.imag))
    return tuple(found), tol


def _rank_test(A: Array, B: Array, dt: float | None, tolerance: float | None) -> dict[str, Any]:
    """The fields of a rank test of (A, B): for observability pass (A^T, C^T) and transpose the matrix."""
    n = A.shape[0]
    blocks = [B]
    for _ in range(n - 1):
        blocks.append(A @ blocks[-1])
    matrix = np.hstack(blocks)
    singular = np.linalg.svd(matrix, compute_uv=False) if matrix.size else np.zeros(0)
    top = float(singular[0]) if singular.size else 0.0
    tol = max(matrix.shape) * EPS * top if tolerance is None else tolerance
    decomposition = modal_decomposition(A)
    found, pbh_tol = pbh_modes(A, B, decomposition.eigenvalues, decomposition.clusters)
    gramian, reason = _gramian(A, B, dt, decomposition.eigenvalues)
    return {"rank": int(np.sum(singular > tol)), "matrix": matrix, "singular_values": singular, "tolerance": tol,
            "modes": found, "pbh_tolerance": pbh_tol, "gramian": gramian, "gramian_reason": reason}


def _gramian(A: Array, B: Array, dt: float | None, values: ComplexArray) -> tuple[Array | None, str | None]:
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
    """Controllability of (A, B): rank of [B, AB, ..., A^(n-1) B], the PBH test per mode, the Gramian.

    Parameters
    ----------
    system
        A LinearSystem (continuous or discrete time).
    tolerance
        Singular values of the matrix at or below it count as 0; default max(n, n m) eps sigma_max (numpy's
        ``matrix_rank``). The PBH test uses RANK_RTOL ||[A, B]||_2 (1e-8 relative, as the modes'
        multiplicities: computed eigenvalues carry errors ~ eps ||A|| cond).

    Returns
    -------
    Controllability
        ``matrix`` equal to ``control.ctrb``; ``gramian`` equal to ``control.gram(sys, "c")`` when A is stable.
    """
    linear = as_linear(system, "controllability")
    fields = _rank_test(linear.A, linear.B, linear.dt, _tolerance(tolerance))
    return Controllability("controllability", states=linear.states, dt=linear.dt, **fields)


def observability(system: Any, *, tolerance: float | None = None) -> Observability:
    """Observability of (A, C): rank of [C; CA; ...; CA^(n-1)], the PBH test per mode, the Gramian.

    The dual of :func:`controllability` (on A^T, C^T); ``matrix`` equal to ``control.obsv``, ``gramian`` to
    ``control.gram(sys, "o")`` when A is stable.
    """
    linear = as_linear(system, "observability")
    fields = _rank_test(linear.A.T, linear.C.T, linear.dt, _tolerance(tolerance))
    fields["matrix"] = np.ascontiguousarray(fields["matrix"].T)
    return Observability("observability", states=linear.states, dt=linear.dt, **fields)
