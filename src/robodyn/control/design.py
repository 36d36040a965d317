"""Controller design for linear systems: the linear-quadratic regulator and pole placement.

- :func:`lqr`: the state feedback u = -K x that minimizes the integral (continuous time) or the sum (discrete
  time, by ``dt``) of x^T Q x + u^T R u + 2 x^T N u. S solves the algebraic Riccati equation
  (``scipy.linalg.solve_continuous_are`` / ``solve_discrete_are``), K = R^-1 (B^T S + N^T) in continuous time,
  K = (R + B^T S B)^-1 (B^T S A + N^T) in discrete time: python-control's ``lqr`` and ``dlqr``.
- :func:`place`: K with eig(A - B K) equal to the requested poles (``scipy.signal.place_poles``, the Tits–Yang
  method, as ``control.place``; for one input the gain is unique: Ackermann's).

Both check before solving: shapes; Q symmetric positive semidefinite, R symmetric positive definite, the cost
[[Q, N], [N^T, R]] positive semidefinite; every mode that must move is controllable (the PBH test of
:mod:`robodyn.linear.controllability`, which names the mode otherwise); for LQR no mode on the stability
boundary (imaginary axis, unit circle) unseen by the cost. Closing the loop: ``robodyn.StateFeedback(K)`` on
the LinearSystem (its states are deviations from x_op), or :meth:`LQR.feedback` (u = u_op - K (x - x_op)) on
the model it linearizes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn import display
from robodyn.base.errors import InputError, NumericalError, ShapeError
from robodyn.control.weights import lqr_weights
from robodyn.linear.controllability import pbh_modes
from robodyn.linear.systems import StateSpace, as_linear
from robodyn.signals import StateFeedback

__all__ = ["BOUNDARY_RTOL", "LQR", "lqr", "on_boundary", "place", "riccati_gain", "unstable"]

Array = NDArray[np.float64]
ComplexArray = NDArray[np.complex128]

BOUNDARY_RTOL: Final = 1e-9  # |Re λ| (| |z| - 1 |) below this times max(1, ||A||): on the stability boundary.
PLACE_RTOL: Final = 1e-8  # Closed-loop eigenvalues within this of the requested ones (relative to max(1, |p|)).


@dataclass(frozen=True, slots=True, eq=False)
class LQR:
    """A linear-quadratic regulator u = -K x (see :func:`lqr`).

    Attributes
    ----------
    K : (m, n)
        The gain; rows by input, columns by state.
    S : (n, n)
        The stabilizing solution of the Riccati equation (the cost from x is x^T S x).
    eigenvalues : (n,)
        The closed-loop eigenvalues of A - B K (poles z in discrete time), sorted by real part.
    Q, R, N
        The weights (N is zeros when not given).
    states, inputs, dt, x_op, u_op
        Names, the sample period (None: continuous time), and the operating point of the linearization.
    """

    K: Array
    S: Array
    eigenvalues: ComplexArray
    Q: Array
    R: Array
    N: Array
    states: tuple[str, ...]
    inputs: tuple[str, ...]
    dt: float | None = None
    x_op: Array | None = None
    u_op: Array | None = None

    def feedback(self) -> StateFeedback:
        """The law u = u_op - K (x - x_op) for ``robodyn.simulate(model, ..., u=...)`` of the model that was
        linearized (x_op, u_op are 0 when the system has none). For the LinearSystem itself, whose states are
        deviations, use ``robodyn.StateFeedback(result.K)``."""
        x_ref = np.zeros(len(self.states)) if self.x_op is None else self.x_op
        u_ref = np.zeros(len(self.inputs)) if self.u_op is None else self.u_op
        return StateFeedback(self.K, x_ref=x_ref, u_ref=tuple(u_ref.tolist()))

    def to_dict(self) -> dict[str, Any]:
        """Strict JSON: K, S, the closed-loop eigenvalues as [re, im], the weights and names."""
        return {"K": self.K.tolist(), "S": self.S.tolist(),
                "eigenvalues": [[float(z.real), float(z.imag)] for z in self.eigenvalues],
                "Q": self.Q.tolist(), "R": self.R.tolist(), "N": self.N.tolist(), "states": list(self.states),
                "inputs": list(self.inputs), "dt": self.dt}

    def _repr_html_(self) -> str:
        """K and S as labelled matrices and the closed-loop eigenvalues."""
        time = "" if self.dt is None else f" (discrete-time, dt = {self.dt:g} s)"
        values = ", ".join(display.number(complex(z)) for z in self.eigenvalues)
        return display.block([display.heading(f"LQR{time}: u = -K x"),
                              display.matrix_html(self.K, self.inputs, self.states, title="K"),
                              display.matrix_html(self.S, self.states, self.states, title="S"),
                              display.note(f"closed-loop eigenvalues: {values}")])


def _inputs(linear: StateSpace, where: str) -> None:
    if not linear.inputs:
        raise InputError(f"{where}: {linear.name!r} has no inputs: there is nothing to feed back")


def on_boundary(value: complex, dt: float | None, tol: float) -> bool:
    """Whether an eigenvalue is on the stability boundary within ``tol`` (|z| = 1 with ``dt``, Re = 0 without)."""
    return abs(abs(value) - 1.0) <= tol if dt is not None else abs(value.real) <= tol


def unstable(value: complex, dt: float | None, tol: float) -> bool:
    """Whether an eigenvalue is not asymptotically stable within ``tol`` (|z| >= 1 with ``dt``, Re >= 0 without)."""
    return abs(value) >= 1.0 - tol if dt is not None else value.real >= -tol


def _check_stabilizable(linear: StateSpace, where: str) -> None:
    """InputError naming a mode that is not asymptotically stable and that the inputs cannot move."""
    tol = BOUNDARY_RTOL * max(1.0, float(np.linalg.norm(linear.A, 2)))
    modes, _ = pbh_modes(linear.A, linear.B)
    for mode in modes:
        if not mode.passes and unstable(mode.eigenvalue, linear.dt, tol):
            raise InputError(
                f"{where}: the mode {display.number(mode.eigenvalue)} of {linear.name!r} is not stable and the "
                f"inputs cannot move it (rank [λI - A, B] = {mode.rank} < {len(linear.states)}): no state feedback "
                "stabilizes it; add an input that acts on it (or leave the mode out of the model)")


def _check_detectable(linear: StateSpace, Q: Array, R: Array, N: Array) -> None:
    """InputError naming a mode on the stability boundary that the cost does not see (then the Riccati equation
    has no stabilizing solution): rank [λI - Ae; Qe^1/2] < n, Ae = A - B R^-1 N^T, Qe = Q - N R^-1 N^T."""
    coupling = np.linalg.solve(R, N.T)
    Ae, Qe = linear.A - linear.B @ coupling, Q - N @ coupling
    w, V = np.linalg.eigh(0.5 * (Qe + Qe.T))
    root = np.sqrt(np.maximum(w, 0.0))[:, None] * V.T
    tol = BOUNDARY_RTOL * max(1.0, float(np.linalg.norm(Ae, 2)))
    modes, _ = pbh_modes(Ae.T, root.T)
    for mode in modes:
        if not mode.passes and on_boundary(mode.eigenvalue, linear.dt, tol):
            boundary = "unit circle" if linear.dt is not None else "imaginary axis"
            raise InputError(f"lqr: the mode {display.number(mode.eigenvalue)} on the {boundary} is not seen by the "
                             "cost (rank [λI - A; Q^1/2] < n): the Riccati equation has no stabilizing solution; put "
                             "weight on it in Q")


def riccati_gain(A: Array, B: Array, Q: Array, R: Array, N: Array | None, dt: float | None, where: str, loop: str,
                 weights: str) -> tuple[Array, Array, ComplexArray]:
    """S (n, n), K (m, n) and the sorted eigenvalues of A - B K of the algebraic Riccati equation of the LQR
    (continuous, or discrete when ``dt`` is set; N the cross weight or None), checked to stabilize. The Kalman
    filter is its dual (A', C', G Qn G', Rn, G N: L = K'). A failed solve or a solution that does not stabilize is a
    NumericalError beginning with ``where`` and naming ``loop`` and the ``weights`` to rescale."""
    import scipy.linalg

    cross = np.zeros((A.shape[0], B.shape[1])) if N is None else N
    try:
        if dt is None:
            S = scipy.linalg.solve_continuous_are(A, B, Q, R, s=N)
            K = np.linalg.solve(R, B.T @ S + cross.T)
        else:
            S = scipy.linalg.solve_discrete_are(A, B, Q, R, s=N)
            K = np.linalg.solve(B.T @ S @ B + R, B.T @ S @ A + cross.T)
    except (np.linalg.LinAlgError, ValueError) as exc:
        raise NumericalError(f"{where} could not be solved ({exc}): check that {weights} are well scaled") from None
    closed = np.linalg.eigvals(A - B @ K).astype(np.complex128)
    closed = closed[np.lexsort((closed.imag, closed.real))]
    tol = BOUNDARY_RTOL * max(1.0, float(np.linalg.norm(A, 2)))
    if not np.all(np.isfinite(K)) or any(unstable(z, dt, tol) for z in closed):
        raise NumericalError(f"{where}: its solution does not stabilize {loop} (eigenvalues "
                             f"{', '.join(display.number(complex(z)) for z in closed)}): the problem is "
                             f"ill-conditioned; rescale {weights}")
    return S, K, closed


def lqr(system: Any, Q: ArrayLike, R: ArrayLike, N: ArrayLike | None = None) -> LQR:
    """The linear-quadratic regulator u = -K x of a LinearSystem (continuous or discrete time, by its ``dt``).

    Parameters
    ----------
    system
        A LinearSystem (or a model linear by construction) with inputs.
    Q : (n, n)
        State weight, symmetric positive semidefinite.
    R : (m, m)
        Input weight, symmetric positive definite (a number for one input).
    N : (n, m), optional
        Cross weight (the cost term 2 x^T N u); [[Q, N], [N^T, R]] must be positive semidefinite.

    Returns
    -------
    LQR
        K, S and the closed-loop eigenvalues: equal to ``control.lqr`` (``control.dlqr`` in discrete time).
        Close the loop with ``robodyn.StateFeedback(result.K)`` on the LinearSystem (deviation coordinates)
        or ``result.feedback()`` (u = u_op - K (x - x_op)) on the model it came from.

    Raises
    ------
    InputError, ShapeError
        A weight of the wrong shape, not symmetric or not (semi)definite; a mode that is unstable and
        uncontrollable (named), or on the stability boundary and unseen by Q.
    NumericalError
        The Riccati solver failed or its solution does not stabilize (an ill-conditioned problem).
    """

    linear = as_linear(system, "lqr")
    _inputs(linear, "lqr")
    (n, m), A, B = linear.B.shape, linear.A, linear.B
    Q_, R_, N_ = lqr_weights(Q, R, N, n, m)
    _check_stabilizable(linear, "lqr")
    _check_detectable(linear, Q_, R_, N_)
    S, K, closed = riccati_gain(A, B, Q_, R_, None if N is None else N_, linear.dt, f"lqr: the Riccati equation of "
                                f"{linear.name!r}", "the closed loop", "Q and R")
    for array in (K, S, closed, Q_, R_, N_):
        array.setflags(write=False)
    return LQR(K, S, closed, Q_, R_, N_, linear.states, linear.inputs, linear.dt, linear.x_op, linear.u_op)


def _poles(poles: ArrayLike | Sequence[complex], n: int) -> ComplexArray:
    try:
        values = np.array(poles, dtype=complex).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"place: poles must be numbers (complex ones in conjugate pairs), got {poles!r:.60}") \
            from None
    if values.size != n:
        raise ShapeError(f"place: {values.size} poles requested for {n} states: give one per state")
    if not np.all(np.isfinite(values)):
        raise InputError("place: the poles must be finite")
    scale = np.maximum(1.0, np.abs(values))
    for z, size in zip(values, scale):
        if z.imag != 0.0 and np.min(np.abs(values - z.conjugate())) > 1e-12 * size:
            raise InputError(f"place: the pole {display.number(complex(z))} has no conjugate among the poles: "
                             "complex poles come in pairs a ± bj (a real gain has real closed-loop polynomials)")
    return values


def place(system: Any, poles: ArrayLike | Sequence[complex]) -> Array:
    """The gain K (m, n) that puts the eigenvalues of A - B K at ``poles`` (poles z in discrete time).

    Parameters
    ----------
    system
        A LinearSystem (or a model linear by construction) with inputs.
    poles : (n,)
        The closed-loop eigenvalues, complex ones in conjugate pairs; a pole may repeat at most rank(B) times.

    Returns
    -------
    K : (m, n)
        From ``scipy.signal.place_poles`` (Tits–Yang, like ``control.place``: for one input K is unique); the
        eigenvalues of A - B K are checked to equal the poles within PLACE_RTOL max(1, |p|).

    Raises
    ------
    InputError, ShapeError
        The wrong number of poles, a complex pole without its conjugate, a pole repeated more than rank(B)
        times, an uncontrollable mode (named).
    NumericalError
        The placement is inaccurate (ill-conditioned: poles far from the open-loop ones, nearly uncontrollable).
    """
    import scipy.signal

    linear = as_linear(system, "place")
    _inputs(linear, "place")
    n = len(linear.states)
    requested = _poles(poles, n)
    rank = int(np.linalg.matrix_rank(linear.B))
    for z in requested:
        count = int(np.sum(np.abs(requested - z) <= 1e-12 * max(1.0, abs(z))))
        if count > rank:
            raise InputError(f"place: the pole {display.number(complex(z))} is requested {count} times but B has rank "
                             f"{rank}: a pole can be placed at most rank(B) times; spread them (e.g. "
                             f"{display.number(complex(z))}, {display.number(complex(z) * 1.05)}, ...)")
    modes, _ = pbh_modes(linear.A, linear.B)
    for mode in modes:
        if not mode.passes:
            raise InputError(f"place: the mode {display.number(mode.eigenvalue)} of {linear.name!r} is uncontrollable "
                             f"(rank [λI - A, B] = {mode.rank} < {n}): no gain moves it; add an input that acts on it")
    try:
        K = np.asarray(scipy.signal.place_poles(linear.A, linear.B, requested, method="YT").gain_matrix, dtype=float)
    except ValueError as exc:
        raise InputError(f"place: {exc}") from None
    _check_placed(linear, K, requested)
    return K


def _check_placed(linear: StateSpace, K: Array, requested: ComplexArray) -> None:
    """NumericalError unless every requested pole is an eigenvalue of A - B K (matched one to one)."""
    closed = list(np.linalg.eigvals(linear.A - linear.B @ K).astype(complex))
    worst = 0.0
    for z in sorted(requested, key=lambda v: (v.real, v.imag)):
        k = int(np.argmin([abs(c - z) for c in closed]))
        worst = max(worst, abs(closed.pop(k) - z) / max(1.0, abs(z)))
    if not (np.all(np.isfinite(K)) and worst <= PLACE_RTOL):
        raise NumericalError(f"place: the closed-loop eigenvalues of {linear.name!r} miss the requested poles by "
                             f"{worst:.3g} (relative): the placement is ill-conditioned; choose poles closer to the "
                             "open-loop ones or better separated")
