"""H2-optimal output-feedback synthesis (:func:`h2syn`): the controller that minimizes the H2 norm of the closed
loop w -> z (the RMS of z under unit white noise w; LQG in the language of the generalized plant).

On the normalized plant (D12 = [0; I], D21 = [0, I], D22 = 0; :mod:`robodyn.control.robust.partition`) the
optimum is unique (Zhou, Doyle & Glover, *Robust and Optimal Control* (1996), Theorem 14.7; Doyle, Glover,
Khargonekar & Francis, IEEE TAC 34 (1989)):

- X2 stabilizing of A^T X + X A + C1^T C1 - (X B2 + C1^T D12)(B2^T X + D12^T C1) = 0, F2 = -(B2^T X2 + D12^T C1);
- Y2 stabilizing of A Y + Y A^T + B1 B1^T - (Y C2^T + B1 D21^T)(C2 Y + D21 B1^T) = 0, L2 = -(Y2 C2^T + B1 D21^T);
- K = [[A + B2 F2 + L2 C2, -L2], [F2, 0]] (u = K y),

both Riccati equations by ``scipy.linalg.solve_continuous_are`` (R = I; unbalanced when balancing fails). The
controller of the original plant undoes the scaling of u and y and shifts D22 back. The closed loop's H2 norm is
finite only when D11 = 0 (a strictly proper map w -> z): a plant with D11 != 0 is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from robodyn import display
from robodyn.base.errors import InputError, NumericalError
from robodyn.control.robust.partition import check_assumptions, close_loop, controller, normalize, partition, recover
from robodyn.linear.norms import h2norm
from robodyn.model.kinds.linear import LinearSystem

__all__ = ["H2", "h2syn"]

Array = NDArray[np.float64]

STABLE_RTOL: Final = 1e-9  # Re λ of A + B2 F2, A + L2 C2 below -this max(1, ||A||): stabilizing.


@dataclass(frozen=True, slots=True, eq=False)
class H2:
    """An H2-optimal controller (see :func:`h2syn`).

    Attributes
    ----------
    K
        The controller, input the measurements y, output the controls u (u = K y).
    closed_loop
        The closed loop from w to z (states: the plant's, then the controller's as ``K.xk1 ...``).
    norm
        The closed loop's H2 norm (the optimum).
    X, Y : (n, n)
        The two Riccati solutions (of the normalized plant).
    """

    K: LinearSystem
    closed_loop: LinearSystem
    norm: float
    X: Array
    Y: Array

    def _repr_html_(self) -> str:
        """The optimal norm and the controller's size."""
        K = self.K
        return display.block([
            display.heading(f"H2-optimal controller: ||T_zw||_2 = {display.number(self.norm)}"),
            display.note(f"K: {len(K.states)} states, {', '.join(K.inputs)} -> {', '.join(K.outputs)}")])


def _solve(A: Array, B: Array, Q: Array, S: Array, what: str) -> Array:
    """The stabilizing solution of A^T X + X A + Q - (X B + S)(B^T X + S^T) = 0 by scipy's solver, balanced, then
    (when its balancing fails near the imaginary axis, as a weight's slow pole makes it) without balancing."""
    import scipy.linalg

    scale = max(1.0, float(np.linalg.norm(A, 2)))
    failure = "no solution"
    for balanced in (True, False):
        try:
            X = scipy.linalg.solve_continuous_are(A, B, Q, np.eye(B.shape[1]), s=S, balanced=balanced)
        except (np.linalg.LinAlgError, ValueError) as exc:
            failure = str(exc)
            continue
        closed = A - B @ (B.T @ X + S.T)
        if np.all(np.isfinite(X)) and np.all(np.linalg.eigvals(closed).real < -STABLE_RTOL * scale):
            return X
        failure = "the solution does not stabilize"
    raise NumericalError(f"h2syn: the {what} Riccati equation has no stabilizing solution in floating point "
                         f"({failure}): the plant is ill-conditioned; rescale it")


def h2syn(P: Any, nmeas: int, ncon: int) -> H2:
    """The H2-optimal controller u = K y of a generalized plant.

    Parameters
    ----------
    P
        A continuous-time LinearSystem with inputs [w, u] and outputs [z, y], D11 = 0.
    nmeas, ncon
        The number of measurements y (the last outputs) and of controls u (the last inputs).

    Returns
    -------
    H2
        ``K``, ``closed_loop`` (w -> z) and ``norm``; the controller equals python-control's ``h2syn`` (Slycot's
        sb10hd): the optimum is unique.

    Raises
    ------
    InputError, ShapeError
        Counts that leave no w or z, a discrete-time plant, D11 != 0, a failed assumption (named: D12 / D21 rank,
        stabilizability, detectability, a zero on the imaginary axis).
    NumericalError
        A Riccati equation without a stabilizing solution in floating point (an ill-conditioned plant).
    """
    plant = partition(P, nmeas, ncon, "h2syn")
    if np.any(plant.D11 != 0.0):
        raise InputError("h2syn: D11 (from w to z) must be zero: otherwise the closed loop has direct feedthrough "
                         "and an infinite H2 norm; remove the direct path (or use hinfsyn)")
    normalized = normalize(plant, "h2syn")
    check_assumptions(normalized, "h2syn")
    scaled = normalized.plant
    A, B1, B2, C1, C2 = scaled.A, scaled.B1, scaled.B2, scaled.C1, scaled.C2
    X = _solve(A, B2, C1.T @ C1, C1.T @ scaled.D12, "state-feedback")
    Y = _solve(A.T, C2.T, B1 @ B1.T, B1 @ scaled.D21.T, "filter")
    F2 = -(B2.T @ X + scaled.D12.T @ C1)
    L2 = -(Y @ C2.T + B1 @ scaled.D21.T)
    matrices = recover(normalized, A + B2 @ F2 + L2 @ C2, -L2, F2, np.zeros((B2.shape[1], C2.shape[0])))
    K = controller(plant, *matrices, name="K")
    closed = close_loop(plant, K, f"{plant.source.name}_h2")
    for array in (X, Y):
        array.setflags(write=False)
    return H2(K, closed, h2norm(closed), X, Y)
