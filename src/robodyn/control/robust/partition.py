"""The generalized plant of robust synthesis, its partition, normalization and checks, and closing the loop.

A generalized plant P (a continuous-time LinearSystem) has inputs [w, u] and outputs [z, y]: the last ``ncon``
inputs are the controls u, the last ``nmeas`` outputs the measurements y::

    x' = A x  + B1 w  + B2 u
    z  = C1 x + D11 w + D12 u
    y  = C2 x + D21 w + D22 u

and a controller K (x_k' = Ak x_k + Bk y, u = Ck x_k + Dk y: positive feedback, as python-control's ``hinfsyn``
and MATLAB's) closes it to the map w -> z (:func:`close_loop`, the lower linear fractional transformation).

:func:`normalize` brings a plant to the form the two-Riccati formulas are written for (Zhou, Doyle & Glover,
*Robust and Optimal Control*, sec. 17.2; Safonov, Limebeer & Chiang, Int. J. Control 50 (1989)):
D12 = [0; I], D21 = [0, I] by u = Tu u~, y~ = Ty y (Tu = V12 S12^-1, Ty = S21^-1 U21^T from the singular value
decompositions D12 = U12 [S12; 0] V12^T, D21 = U21 [S21, 0] V21^T) and orthogonal rotations of z and w, which
keep every norm; D22 is set aside (the loop shift of :func:`recover`). :func:`check_assumptions` names the
assumptions that fail: (A, B2) stabilizable, (A, C2) detectable, D12 of full column rank, D21 of full row rank,
and the imaginary-axis conditions rank [A - jwI, B2; C1, D12] = n + m2, rank [A - jwI, B1; C2, D21] = n + p2 for
every w.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from robodyn import display
from robodyn.base.errors import InputError, NumericalError, ShapeError
from robodyn.linear.controllability import pbh_modes
from robodyn.linear.systems import as_linear
from robodyn.model.kinds.linear import LinearSystem

__all__ = ["Normalized", "Plant", "check_assumptions", "close_loop", "controller", "normalize", "partition",
           "recover"]

Array = NDArray[np.float64]

RANK_RTOL: Final = 1e-10  # A singular value below this times max(1, ||M||): rank deficient.
AXIS_RTOL: Final = 1e-9  # |Re λ| below this times max(1, ||A||): on the imaginary axis (or not stable).


@dataclass(frozen=True, slots=True, eq=False)
class Plant:
    """A generalized plant's blocks (module docstring): A (n, n), B1 (n, m1), B2 (n, m2), C1 (p1, n),
    C2 (p2, n), D11 (p1, m1), D12 (p1, m2), D21 (p2, m1), D22 (p2, m2), and the plant it came from."""

    A: Array
    B1: Array
    B2: Array
    C1: Array
    C2: Array
    D11: Array
    D12: Array
    D21: Array
    D22: Array
    source: Any

    @property
    def sizes(self) -> tuple[int, int, int, int, int]:
        """(n, m1, m2, p1, p2)."""
        return self.A.shape[0], self.B1.shape[1], self.B2.shape[1], self.C1.shape[0], self.C2.shape[0]


@dataclass(frozen=True, slots=True, eq=False)
class Normalized:
    """A plant with D12 = [0; I], D21 = [0, I] and D22 = 0 (``plant``), and what undoes it: u = Tu u~,
    y~ = Ty y, and the original D22 (the loop shift of :func:`recover`)."""

    plant: Plant
    Tu: Array
    Ty: Array
    D22: Array


def _count(value: object, label: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InputError(f"{where}: {label} must be a whole number >= 1, got {value!r:.60}")
    number = int(value)
    if number < 1:
        raise InputError(f"{where}: {label} = {number} must be at least 1")
    return int(number)


def partition(P: Any, nmeas: object, ncon: object, where: str) -> Plant:
    """The blocks of a continuous-time generalized plant: its last ``ncon`` inputs are u, its last ``nmeas``
    outputs are y (InputError / ShapeError when the counts leave no w or z, or the plant is discrete-time)."""
    linear = as_linear(P, where)
    ny, nu = _count(nmeas, "nmeas", where), _count(ncon, "ncon", where)
    if linear.dt is not None:
        raise InputError(f"{where}: {linear.name!r} is discrete-time (dt = {linear.dt:g} s): the synthesis is for "
                         "continuous-time plants; design on the continuous model and discretize the controller")
    p, m = linear.D.shape
    if not (ny < p and nu < m):
        raise ShapeError(f"{where}: {linear.name!r} has {m} inputs and {p} outputs: ncon = {nu} controls and nmeas = "
                         f"{ny} measurements must leave at least one disturbance input w and one performance output z")
    A, B, C, D = linear.A, linear.B, linear.C, linear.D
    m1, p1 = m - nu, p - ny
    return Plant(A, B[:, :m1], B[:, m1:], C[:p1], C[p1:], D[:p1, :m1], D[:p1, m1:], D[p1:, :m1], D[p1:, m1:],
                 linear)


def _rank_split(M: Array, rows: bool, label: str, where: str) -> tuple[Array, Array, Array]:
    """The SVD M = U S V^T of a tall (``rows`` False) or wide matrix, after checking its full rank."""
    U, s, Vt = np.linalg.svd(M)
    if s.size == 0 or s[-1] <= RANK_RTOL * max(1.0, float(s[0])):
        kind, size = ("row", M.shape[0]) if rows else ("column", M.shape[1])
        smallest = float(s[-1]) if s.size else 0.0
        raise InputError(f"{where}: {label} must have full {kind} rank {size} (smallest singular value "
                         f"{smallest:.3g}): "
                         + ("every control must be penalized in z (e.g. a weight W2 on u)" if not rows else
                            "every measurement must carry noise from w (e.g. a sensor noise input)"))
    return U, s, Vt.T


def normalize(plant: Plant, where: str) -> Normalized:
    """D12 -> [0; I], D21 -> [0, I], D22 -> 0 (module docstring); InputError when D12 or D21 lacks full rank."""
    _, m1, m2, p1, p2 = plant.sizes
    if p1 < m2:
        raise InputError(f"{where}: {m2} controls but only {p1} performance outputs: D12 cannot have full column "
                         "rank; penalize every control in z")
    if m1 < p2:
        raise InputError(f"{where}: {p2} measurements but only {m1} disturbance inputs: D21 cannot have full row "
                         "rank; give every measurement a noise input")
    U12, s12, V12 = _rank_split(plant.D12, False, "D12", where)
    U21, s21, V21 = _rank_split(plant.D21, True, "D21", where)
    Tu = V12 / s12[None, :]  # u = Tu u~
    Ty = U21.T / s21[:, None]  # y~ = Ty y
    Theta = np.vstack([U12[:, m2:].T, U12[:, :m2].T])  # z~ = Theta z: D12 -> [0; I]
    Phi = np.vstack([V21[:, p2:].T, V21[:, :p2].T])  # w~ = Phi w: D21 -> [0, I]
    D12 = np.vstack([np.zeros((p1 - m2, m2)), np.eye(m2)])
    D21 = np.hstack([np.zeros((p2, m1 - p2)), np.eye(p2)])
    scaled = Plant(plant.A, plant.B1 @ Phi.T, plant.B2 @ Tu, Theta @ plant.C1, Ty @ plant.C2,
                   Theta @ plant.D11 @ Phi.T, D12, D21, np.zeros((p2, m2)), plant.source)
    return Normalized(scaled, Tu, Ty, plant.D22)


def _axis_modes(A: Array, B: Array) -> list[complex]:
    """The eigenvalues on the imaginary axis of A that the PBH test finds uncontrollable from B (all of them on
    the axis when B has no columns)."""
    tol = AXIS_RTOL * max(1.0, float(np.linalg.norm(A, 2)))
    if B.shape[1] == 0:
        return [complex(v) for v in np.linalg.eigvals(A) if abs(v.real) <= tol]
    modes, _ = pbh_modes(A, B)
    return [mode.eigenvalue for mode in modes if not mode.passes and abs(mode.eigenvalue.real) <= tol]


def _unstable_modes(A: Array, B: Array) -> list[complex]:
    tol = AXIS_RTOL * max(1.0, float(np.linalg.norm(A, 2)))
    modes, _ = pbh_modes(A, B)
    return [mode.eigenvalue for mode in modes if not mode.passes and mode.eigenvalue.real >= -tol]


def check_assumptions(normalized: Normalized, where: str) -> None:
    """InputError naming the first standard assumption that fails (module docstring); D12, D21 were checked by
    :func:`normalize`. With D12 = [0; I] the first imaginary-axis condition is: (A - B2 C1b, C1a) has no
    unobservable mode on the axis (C1 = [C1a; C1b]); dually (A - B1b C2, B1a) no uncontrollable one."""
    plant = normalized.plant
    _, m1, m2, p1, p2 = plant.sizes
    name = plant.source.name
    for mode in _unstable_modes(plant.A, plant.B2):
        raise InputError(f"{where}: the mode {display.number(mode)} of {name!r} is not stable and the controls u "
                         "cannot move it: (A, B2) is not stabilizable; add a control that acts on it")
    for mode in _unstable_modes(plant.A.T, plant.C2.T):
        raise InputError(f"{where}: the mode {display.number(mode)} of {name!r} is not stable and the measurements "
                         "y do not see it: (A, C2) is not detectable; measure a signal that depends on it")
    C1a, C1b = plant.C1[:p1 - m2], plant.C1[p1 - m2:]
    for mode in _axis_modes((plant.A - plant.B2 @ C1b).T, C1a.T):
        raise InputError(f"{where}: rank [A - jwI, B2; C1, D12] < n + m2 at {display.number(mode)}: the plant from u "
                         "to z has a zero on the imaginary axis (e.g. an integrator in the plant and none in the "
                         "weight on z); move it slightly into the left half-plane (s -> s + eps)")
    B1a, B1b = plant.B1[:, :m1 - p2], plant.B1[:, m1 - p2:]
    for mode in _axis_modes(plant.A - B1b @ plant.C2, B1a):
        raise InputError(f"{where}: rank [A - jwI, B1; C2, D21] < n + p2 at {display.number(mode)}: the plant from "
                         "w to y has a zero on the imaginary axis; move it slightly into the left half-plane")


def recover(normalized: Normalized, Ak: Array, Bk: Array, Ck: Array, Dk: Array
            ) -> tuple[Array, Array, Array, Array]:
    """The controller of the original plant from one of the normalized plant (u~ = K~ y~): u = Tu K~ Ty y, then
    the loop shift of D22: u = (I + K D22)^-1 K y (the normalized plant has D22 = 0). NumericalError when
    I + Dk D22 is singular (the loop is ill-posed)."""
    Bk, Ck, Dk = Bk @ normalized.Ty, normalized.Tu @ Ck, normalized.Tu @ Dk @ normalized.Ty
    D22 = normalized.D22
    if not np.any(D22):
        return Ak, Bk, Ck, Dk
    shift = np.eye(Dk.shape[0]) + Dk @ D22
    if np.linalg.cond(shift) > 1.0 / RANK_RTOL:
        raise NumericalError("the controller's loop with D22 is ill-posed (I + Dk D22 is singular)")
    M = np.linalg.inv(shift)
    return Ak - Bk @ D22 @ M @ Ck, Bk - Bk @ D22 @ M @ Dk, M @ Ck, M @ Dk


def controller(plant: Plant, Ak: Array, Bk: Array, Ck: Array, Dk: Array, name: str) -> LinearSystem:
    """The controller as a LinearSystem: inputs the plant's measurements y, outputs its controls u, states
    ``xk1 ...``."""
    source = plant.source
    _, m1, _, p1, _ = plant.sizes
    states = tuple(f"xk{i + 1}" for i in range(Ak.shape[0]))
    if not states:  # a static gain: one state that no signal reaches (a LinearSystem has n >= 1)
        Ak, Bk, Ck, states = -np.eye(1), np.zeros((1, Dk.shape[1])), np.zeros((Dk.shape[0], 1)), ("xk1",)
    return LinearSystem(Ak, Bk, Ck, Dk, states=states, inputs=source.outputs[p1:], outputs=source.inputs[m1:],
                        name=name)


def close_loop(plant: Plant, K: LinearSystem, name: str) -> LinearSystem:
    """The closed loop from w to z of the plant with u = K y (the lower linear fractional transformation):
    y = (I - D22 Dk)^-1 (C2 x + D22 Ck xk + D21 w), u = Ck xk + Dk y."""
    A, B1, B2, C1, C2 = plant.A, plant.B1, plant.B2, plant.C1, plant.C2
    D11, D12, D21, D22 = plant.D11, plant.D12, plant.D21, plant.D22
    Ak, Bk, Ck, Dk = K.A, K.B, K.C, K.D
    R = np.linalg.inv(np.eye(D22.shape[0]) - D22 @ Dk)
    # y = Yx x + Yk xk + Yw w; u = Ux x + Uk xk + Uw w
    Yx, Yk, Yw = R @ C2, R @ D22 @ Ck, R @ D21
    Ux, Uk, Uw = Dk @ Yx, Ck + Dk @ Yk, Dk @ Yw
    Acl = np.block([[A + B2 @ Ux, B2 @ Uk], [Bk @ Yx, Ak + Bk @ Yk]])
    Bcl = np.vstack([B1 + B2 @ Uw, Bk @ Yw])
    Ccl = np.hstack([C1 + D12 @ Ux, D12 @ Uk])
    Dcl = D11 + D12 @ Uw
    source = plant.source
    _, m1, _, p1, _ = plant.sizes
    states = (*source.states, *(f"{K.name}.{s}" for s in K.states))
    return LinearSystem(Acl, Bcl, Ccl, Dcl, states=states, inputs=source.inputs[:m1], outputs=source.outputs[:p1],
                        name=name)

