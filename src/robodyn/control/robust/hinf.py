"""H-infinity output-feedback synthesis by the two Riccati equations and a bisection on gamma (:func:`hinfsyn`).

For a generalized plant P (inputs [w, u], outputs [z, y]; :mod:`robodyn.control.robust.partition`) a controller
u = K y that makes the closed loop stable with ||T_zw||_inf < gamma exists if and only if, on the normalized plant
(D12 = [0; I], D21 = [0, I], D22 = 0; Zhou, Doyle & Glover, *Robust and Optimal Control* (1996), Theorem 17.1,
after Glover & Doyle, Systems & Control Letters 11 (1988)):

1. gamma > max(s_max[D1111, D1112], s_max[D1111^T, D1121^T]) (D11 partitioned by the rows of D12's zero block and
   the columns of D21's);
2. X >= 0, the stabilizing solution of A^T X + X A + C1^T C1 - (X B + C1^T D1.) R^-1 (B^T X + D1.^T C1) = 0 with
   B = [B1, B2], D1. = [D11, D12], R = D1.^T D1. - diag(gamma^2 I, 0) (indefinite);
3. Y >= 0, the dual one: A Y + Y A^T + B1 B1^T - (Y C^T + B1 D.1^T) R~^-1 (C Y + D.1 B1^T) = 0 with
   C = [C1; C2], D.1 = [D11; D21], R~ = D.1 D.1^T - diag(gamma^2 I, 0);
4. rho(X Y) < gamma^2.

Both Riccati equations (R indefinite) are solved from the stable invariant subspace of their Hamiltonian
(``scipy.linalg.schur`` ordered); a solution counts only if the Hamiltonian has no eigenvalue on the imaginary axis
and the solution is symmetric positive semidefinite and stabilizing (A + B F, A + L C stable by a margin). The
smallest feasible gamma is bracketed by doubling and bisected to the relative width ``gamma_tol``; the central
controller (Q = 0 in the theorem's parametrization) is built at the feasible end of the bracket (or a little above,
:func:`_build`), for the original plant by undoing the normalization and shifting D22 back.

References: J. C. Doyle, K. Glover, P. P. Khargonekar and B. A. Francis, "State-space solutions to standard H2
and H-infinity control problems", IEEE TAC 34 (1989); K. Glover and J. C. Doyle, "State-space formulae for all
stabilizing controllers that satisfy an H-infinity norm bound and relations to risk sensitivity", Systems &
Control Letters 11 (1988); M. G. Safonov, D. J. N. Limebeer and R. Y. Chiang, "Simplifying the H-infinity
theory via loop-shifting, matrix-pencil and descriptor concepts", Int. J. Control 50 (1989); Zhou, Doyle &
Glover (1996), ch. 14 and 17.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from robodyn import display
from robodyn.base.errors import ConvergenceError, InputError, NumericalError
from robodyn.base.numbers import finite_number
from robodyn.control.robust.partition import (
    Normalized,
    Plant,
    check_assumptions,
    close_loop,
    controller,
    normalize,
    partition,
    recover,
)
from robodyn.linear.norms import hinfnorm
from robodyn.model.kinds.linear import LinearSystem

__all__ = ["HInfinity", "central_controller", "hinfsyn"]

Array = NDArray[np.float64]

GAMMA_TOL: Final = 1e-6  # Default relative width of the final bracket of gamma.
STABLE_RTOL: Final = 1e-9  # Re λ of A + B F, A + L C below -this max(1, ||A||): stabilizing.
PSD_RTOL: Final = 1e-8  # Eigenvalues of X, Y above -this max(1, ||X||): positive semidefinite.
AXIS_RTOL: Final = 1e-12  # Eigenvalues of a Hamiltonian with |Re λ| below this ||H||_1: on the imaginary axis.
MAX_DOUBLINGS: Final = 60  # Upper bracket: gamma doubled at most this many times (2^60 ~ 1e18).
MAX_BISECTIONS: Final = 200  # Bisections at most (gamma_tol = 1e-6 takes about 25).
BACKOFFS: Final = (0.0, 1e-6, 3e-6, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2)  # Relative steps of the
# controller's level above the bracket, tried in turn until its closed loop meets the level.
NORM_RTOL: Final = 1e-6  # The computed closed-loop norm may exceed the level by this (its rounding near the optimum).
GAIN_LIMIT: Final = 1e8  # ||Ak|| above this times max(1, ||A||): the optimum's singularity, not a controller.


@dataclass(frozen=True, slots=True, eq=False)
class HInfinity:
    """An H-infinity controller (see :func:`hinfsyn`).

    Attributes
    ----------
    K
        The controller, input the measurements y, output the controls u (u = K y).
    closed_loop
        The closed loop from w to z (states: the plant's, then the controller's as ``K.xk1 ...``).
    gamma
        The level the controller was built for: ||closed_loop||_inf <= gamma (checked).
    gamma_lower, gamma_optimal
        The bracket of the optimal level after the bisection: gamma_lower is not achievable (or the bound of
        condition 1), gamma_optimal is, and gamma_optimal - gamma_lower <= gamma_tol gamma_optimal. ``gamma`` is
        gamma_optimal unless the central controller there is too ill-conditioned to meet its bound: then the first
        of gamma_optimal (1 + d), d = 1e-6, 3e-6, 1e-5, ..., 1e-2, that does.
    X, Y : (n, n)
        The two Riccati solutions at gamma (of the normalized plant).
    """

    K: LinearSystem
    closed_loop: LinearSystem
    gamma: float
    gamma_lower: float
    gamma_optimal: float
    X: Array
    Y: Array

    def norm(self) -> float:
        """The closed loop's H-infinity norm (:func:`robodyn.hinfnorm`), at most ``gamma``."""
        return hinfnorm(self.closed_loop)

    def _repr_html_(self) -> str:
        """The levels and the controller's size."""
        K = self.K
        return display.block([
            display.heading(f"H-infinity controller: gamma = {display.number(self.gamma)}"),
            display.note(f"optimum in [{display.number(self.gamma_lower)}, {display.number(self.gamma_optimal)}]; "
                         f"K: {len(K.states)} states, {', '.join(K.inputs)} -> {', '.join(K.outputs)}")])


@dataclass(frozen=True, slots=True)
class _Blocks:
    """D11 of the normalized plant partitioned as in Theorem 17.1."""

    D1111: Array
    D1112: Array
    D1121: Array
    D1122: Array


def _blocks(plant: Plant) -> _Blocks:
    _, m1, m2, p1, p2 = plant.sizes
    D = plant.D11
    r, c = p1 - m2, m1 - p2
    return _Blocks(D[:r, :c], D[:r, c:], D[r:, :c], D[r:, c:])


def _floor(blocks: _Blocks) -> float:
    """Condition 1's bound max(s_max[D1111, D1112], s_max[D1111^T, D1121^T])."""
    top = np.hstack([blocks.D1111, blocks.D1112])
    left = np.vstack([blocks.D1111, blocks.D1121])
    return max(float(np.linalg.norm(top, 2)) if top.size else 0.0, float(np.linalg.norm(left, 2)) if left.size else 0.0)


def _stable(M: Array, scale: float) -> bool:
    return bool(np.all(np.linalg.eigvals(M).real < -STABLE_RTOL * scale))


def _psd(X: Array) -> bool:
    size = max(1.0, float(np.max(np.abs(X))))
    return bool(np.all(np.isfinite(X))) and float(np.min(np.linalg.eigvalsh(0.5 * (X + X.T)))) >= -PSD_RTOL * size


def _care(A: Array, B: Array, Q: Array, R: Array, S: Array) -> Array | None:
    """The stabilizing, positive semidefinite solution of A^T X + X A + Q - (X B + S) R^-1 (B^T X + S^T) = 0 (R
    symmetric, nonsingular, indefinite), or None: from the stable invariant subspace [U1; U2] of the Hamiltonian
    H = [[Ar, -B R^-1 B^T], [-(Q - S R^-1 S^T), -Ar^T]], Ar = A - B R^-1 S^T (ordered real Schur form,
    ``scipy.linalg.schur(sort='lhp')``), X = U2 U1^-1; None when H has eigenvalues on the imaginary axis (by
    AXIS_RTOL ||H||) or U1 is singular. (scipy's ``solve_continuous_are`` refuses some of these problems after its
    balancing when the pencil has eigenvalues 1e-7 ||H|| from the axis, as the weights' slow poles give.)"""
    import scipy.linalg

    n = A.shape[0]
    try:
        RB, RS = np.linalg.solve(R, B.T), np.linalg.solve(R, S.T)
    except np.linalg.LinAlgError:
        return None
    Ar = A - B @ RS
    H = np.block([[Ar, -B @ RB], [-(Q - S @ RS), -Ar.T]])
    if not np.all(np.isfinite(H)):
        return None
    scale = max(1.0, float(np.linalg.norm(H, 1)))
    _, U, sdim = scipy.linalg.schur(H, output="real", sort=lambda re, im: re < -AXIS_RTOL * scale)
    if sdim != n:
        return None
    U1, U2 = U[:n, :n], U[n:, :n]
    if np.linalg.cond(U1) > 1.0 / (AXIS_RTOL * 1e-3):
        return None
    X = np.linalg.solve(U1.T, U2.T).T
    X = 0.5 * (X + X.T)
    return X if _psd(X) else None


def _riccati(plant: Plant, gamma: float) -> tuple[Array, Array, Array, Array] | None:
    """(X, Y, F, L) of conditions 2-4 at gamma, or None when gamma is not achievable."""
    _, m1, _, p1, _ = plant.sizes
    A = plant.A
    B = np.hstack([plant.B1, plant.B2])
    C = np.vstack([plant.C1, plant.C2])
    D1 = np.hstack([plant.D11, plant.D12])
    Dv = np.vstack([plant.D11, plant.D21])
    R = D1.T @ D1
    R[:m1, :m1] -= gamma**2 * np.eye(m1)
    Rt = Dv @ Dv.T
    Rt[:p1, :p1] -= gamma**2 * np.eye(p1)
    scale = max(1.0, float(np.linalg.norm(A, 2)))
    X = _care(A, B, plant.C1.T @ plant.C1, R, plant.C1.T @ D1)
    Y = None if X is None else _care(A.T, C.T, plant.B1 @ plant.B1.T, Rt, plant.B1 @ Dv.T)
    if X is None or Y is None:
        return None
    F = -np.linalg.solve(R, D1.T @ plant.C1 + B.T @ X)
    L = -np.linalg.solve(Rt, Dv @ plant.B1.T + C @ Y).T
    if not (_stable(A + B @ F, scale) and _stable(A + L @ C, scale)):
        return None
    if float(np.max(np.abs(np.linalg.eigvals(X @ Y)))) >= gamma**2:
        return None
    return X, Y, np.asarray(F, dtype=np.float64), np.asarray(L, dtype=np.float64)


def _hat(blocks: _Blocks, gamma: float) -> tuple[Array, Array, Array]:
    """D^11, D^12, D^21 of Theorem 17.1: D^11 = -D1121 D1111^T (g^2 I - D1111 D1111^T)^-1 D1112 - D1122,
    D^12 D^12^T = I - D1121 (g^2 I - D1111^T D1111)^-1 D1121^T, D^21^T D^21 = I - D1112^T (g^2 I - D1111
    D1111^T)^-1 D1112 (Cholesky factors)."""
    D1111, D1112, D1121, D1122 = blocks.D1111, blocks.D1112, blocks.D1121, blocks.D1122
    rows, cols = D1111.shape
    left = gamma**2 * np.eye(rows) - D1111 @ D1111.T
    right = gamma**2 * np.eye(cols) - D1111.T @ D1111
    D11 = -D1121 @ D1111.T @ np.linalg.solve(left, D1112) - D1122
    D12 = np.linalg.cholesky(np.eye(D1121.shape[0]) - D1121 @ np.linalg.solve(right, D1121.T))
    D21 = np.linalg.cholesky(np.eye(D1112.shape[1]) - D1112.T @ np.linalg.solve(left, D1112)).T
    return tuple(np.asarray(M, dtype=np.float64) for M in (D11, D12, D21))  # type: ignore[return-value]


def central_controller(plant: Plant, gamma: float, X: Array, Y: Array, F: Array, L: Array
                       ) -> tuple[Array, Array, Array, Array]:
    """(Ak, Bk, Ck, Dk) of the central controller of the normalized plant at gamma (Theorem 17.1, Q = 0):
    Z = (I - Y X / g^2)^-1, B^2 = Z (B2 + L12) D^12, C^2 = -D^21 (C2 + F12), B^1 = -Z L2 + B^2 D^12^-1 D^11,
    C^1 = F2 + D^11 D^21^-1 C^2, A^ = A + B F + B^1 D^21^-1 C^2; K = (A^, B^1, C^1, D^11)."""
    n, m1, m2, p1, p2 = plant.sizes
    D11, D12, D21 = _hat(_blocks(plant), gamma)
    F12, F2 = F[m1 - p2:m1], F[m1:]
    L12, L2 = L[:, p1 - m2:p1], L[:, p1:]
    Z = np.linalg.inv(np.eye(n) - Y @ X / gamma**2)
    B2h = Z @ (plant.B2 + L12) @ D12
    C2h = -D21 @ (plant.C2 + F12)
    B1h = -Z @ L2 + B2h @ np.linalg.solve(D12, D11)
    C1h = F2 + D11 @ np.linalg.solve(D21, C2h)
    Ah = plant.A + np.hstack([plant.B1, plant.B2]) @ F + B1h @ np.linalg.solve(D21, C2h)
    return Ah, B1h, C1h, D11


def _bracket(plant: Plant, floor: float, gamma_max: float | None) -> tuple[float, float]:
    """(infeasible, feasible) levels: from max(1, 2 floor) doubled until feasible."""
    lower = floor
    gamma = max(1.0, 2.0 * floor) if gamma_max is None else gamma_max
    for _ in range(MAX_DOUBLINGS):
        if gamma > floor and _riccati(plant, gamma) is not None:
            return lower, gamma
        if gamma_max is not None:
            raise InputError(f"hinfsyn: gamma_max = {gamma_max:g} is not achievable (no stabilizing controller gives "
                             "||T_zw||_inf below it): raise gamma_max or relax the weights")
        lower, gamma = gamma, 2.0 * gamma
    raise ConvergenceError(f"hinfsyn: no gamma up to {gamma:.3g} is achievable: the Riccati equations have no "
                           "stabilizing solution; check the plant's scaling and the weights")


def _build(plant: Plant, normalized: Normalized, optimal: float
           ) -> tuple[LinearSystem, LinearSystem, float, tuple[Array, Array]]:
    """The central controller at the first level gamma = optimal (1 + d), d in BACKOFFS, whose closed loop is
    stable with ||T_zw||_inf <= gamma (1 + NORM_RTOL) and whose ||Ak|| is below GAIN_LIMIT max(1, ||A||): near the
    optimum X, Y or (I - Y X / gamma^2)^-1 grows without bound and the controller's gains with it (to 1e9 at 1e-6
    above the optimum), and its loop is too ill-conditioned to meet the bound in floating point (python-control's
    Slycot controllers there exceed their level by up to 3 %)."""
    scaled = normalized.plant
    for factor in BACKOFFS:
        level = optimal * (1.0 + factor)
        found = _riccati(scaled, level)
        if found is None:
            continue
        X, Y, F, L = found
        try:
            matrices = recover(normalized, *central_controller(scaled, level, X, Y, F, L))
        except (np.linalg.LinAlgError, NumericalError):
            continue
        if not all(np.all(np.isfinite(M)) for M in matrices):
            continue
        K = controller(plant, *matrices, name="K")
        closed = close_loop(plant, K, f"{plant.source.name}_hinf")
        fast = float(np.linalg.norm(K.A, 2)) > GAIN_LIMIT * max(1.0, float(np.linalg.norm(plant.A, 2)))
        if not fast and hinfnorm(closed) <= level * (1.0 + NORM_RTOL):
            return K, closed, level, (X, Y)
    raise NumericalError(f"hinfsyn: no central controller between gamma = {optimal:.6g} and "
                         f"{optimal * (1.0 + BACKOFFS[-1]):.6g} gives a stable loop within its bound: the "
                         "problem is ill-conditioned; rescale the plant or the weights")


def hinfsyn(P: Any, nmeas: int, ncon: int, gamma_tol: float = GAMMA_TOL, gamma_max: float | None = None
            ) -> HInfinity:
    """The H-infinity optimal controller u = K y of a generalized plant, within ``gamma_tol`` of the optimal level.

    Parameters
    ----------
    P
        A continuous-time LinearSystem with inputs [w, u] and outputs [z, y].
    nmeas, ncon
        The number of measurements y (the last outputs) and of controls u (the last inputs).
    gamma_tol
        The relative width of the final bracket [gamma_lower, gamma] of the optimal level.
    gamma_max
        Optional: the largest acceptable level; InputError when it is not achievable.

    Returns
    -------
    HInfinity
        ``K``, ``closed_loop`` (w -> z), ``gamma`` (||closed_loop||_inf < gamma) and ``gamma_lower``: the optimum
        is in [gamma_lower, gamma]; python-control's ``hinfsyn`` (Slycot's sb10ad) reaches the same optimum.

    Raises
    ------
    InputError, ShapeError
        Counts that leave no w or z, a discrete-time plant, a failed assumption (named: D12 / D21 rank,
        stabilizability, detectability, a zero on the imaginary axis), an unachievable ``gamma_max``.
    ConvergenceError, NumericalError
        No level achievable up to 1e18, or an ill-conditioned central controller.
    """
    plant = partition(P, nmeas, ncon, "hinfsyn")
    tol = finite_number(gamma_tol, "hinfsyn: gamma_tol", positive="{what} = {value!r} must be > 0, e.g. 1e-6")
    cap = None if gamma_max is None else finite_number(gamma_max, "hinfsyn: gamma_max",
                                                      positive="{what} = {value!r} must be > 0")
    normalized = normalize(plant, "hinfsyn")
    check_assumptions(normalized, "hinfsyn")
    scaled = normalized.plant
    floor = _floor(_blocks(scaled))
    lower, upper = _bracket(scaled, floor, cap)
    for _ in range(MAX_BISECTIONS):  # a bound: with lower = 0 (an optimum of 0) the halving never closes the gap
        if upper - lower <= tol * upper:
            break
        middle = math.sqrt(lower * upper) if lower > 0.0 else 0.5 * upper
        if middle > floor and _riccati(scaled, middle) is not None:
            upper = middle
        else:
            lower = middle
    K, closed, level, (X, Y) = _build(plant, normalized, upper)
    for array in (X, Y):
        array.setflags(write=False)
    return HInfinity(K, closed, float(level), float(lower), float(upper), X, Y)
