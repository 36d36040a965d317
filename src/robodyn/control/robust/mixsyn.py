"""Mixed-sensitivity H-infinity design (:func:`mixsyn`) and the augmented plant it solves (:func:`augw`).

For a plant G (p outputs, m inputs) in the loop u = K e, e = r - y, the weighted sensitivity S = (I + G K)^-1,
control sensitivity K S and complementary sensitivity T = G K S are stacked as z = [W1 S; W2 K S; W3 T] r and
||z||_inf is minimized by :func:`robodyn.hinfsyn` on the augmented plant (python-control's ``augw``):

    z1 = W1 (w - G u),  z2 = W2 u,  z3 = W3 G u,  y = e = w - G u    (inputs [w, u], outputs [z1, z2, z3, e])

A weight may be left out (None), a number (that gain on every channel), a single-input single-output LinearSystem
(repeated on every channel, as python-control does) or a LinearSystem with one input per channel (p for W1 and
W3, m for W2). Reference: S. Skogestad and I. Postlethwaite, *Multivariable Feedback Control* (2005), sec. 3.8
and 9.3.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

from robodyn.base.errors import InputError, ShapeError
from robodyn.base.numbers import finite_number
from robodyn.control.robust.hinf import GAMMA_TOL, HInfinity, hinfsyn
from robodyn.linear.systems import StateSpace, as_linear
from robodyn.model.kinds.linear import LinearSystem

__all__ = ["augw", "mixsyn"]

Array = NDArray[np.float64]
Weight = tuple[Array, Array, Array, Array]  # (A, B, C, D) with A possibly (0, 0)


def _weight(value: Any, channels: int, label: str) -> Weight | None:
    """A weight as (A, B, C, D) with ``channels`` inputs (module docstring), or None."""
    if value is None:
        return None
    if not hasattr(value, "linear_model"):
        gain = finite_number(value, f"mixsyn: {label}", not_real="{what} must be None, a number or a LinearSystem, "
                             "got {value!r:.60}")
        return np.zeros((0, 0)), np.zeros((0, channels)), np.zeros((channels, 0)), gain * np.eye(channels)
    linear = as_linear(value, f"mixsyn: {label}")
    if linear.dt is not None:
        raise InputError(f"mixsyn: {label} is discrete-time: the weights must be continuous-time, like the plant")
    A, B, C, D = linear.A, linear.B, linear.C, linear.D
    if D.shape == (1, 1) and channels > 1:  # one weight on every channel
        blocks = (scipy.linalg.block_diag(*[A] * channels), scipy.linalg.block_diag(*[B] * channels),
                  scipy.linalg.block_diag(*[C] * channels), np.kron(np.eye(channels), D))
        return tuple(np.asarray(M, dtype=np.float64) for M in blocks)  # type: ignore[return-value]
    if D.shape[1] != channels:
        raise ShapeError(f"mixsyn: {label} has {D.shape[1]} inputs, expected {channels} (or one, repeated)")
    return A, B, C, D


def augw(G: Any, W1: Any = None, W2: Any = None, W3: Any = None) -> LinearSystem:
    """The augmented plant of the mixed-sensitivity problem (module docstring): inputs [w, u] (``r1 ...`` then G's
    inputs), outputs [z1, z2, z3, e] (``z1_1 ...``, ``z2_1 ...``, ``z3_1 ...``, ``e1 ...``), states G's then the
    weights' (``W1.x1 ...``); python-control's ``augw``."""
    plant = as_linear(G, "mixsyn")
    if plant.dt is not None:
        raise InputError(f"mixsyn: {plant.name!r} is discrete-time: mixed-sensitivity synthesis is continuous-time")
    p, m = plant.D.shape
    weights = [_weight(W, k, label) for W, k, label in ((W1, p, "W1"), (W2, m, "W2"), (W3, p, "W3"))]
    if all(w is None for w in weights):
        raise InputError("mixsyn: give at least one weight (W1 on S, W2 on K S, W3 on T)")
    return _assemble(plant, weights)


def _assemble(plant: StateSpace, weights: list[Weight | None]) -> LinearSystem:
    """x = [xG, x1, x2, x3]; each weight's input is an affine map of (xG, w, u): e = w - CG xG - DG u for W1, u for
    W2, CG xG + DG u for W3."""
    AG, BG, CG, DG = plant.A, plant.B, plant.C, plant.D
    p, m = DG.shape
    nG = AG.shape[0]
    # each weight's input as rows over [xG, w, u]
    drives = [np.hstack([-CG, np.eye(p), -DG]), np.hstack([np.zeros((m, nG + p)), np.eye(m)]),
              np.hstack([CG, np.zeros((p, p)), DG])]
    sizes = [0 if w is None else w[0].shape[0] for w in weights]
    n = nG + sum(sizes)
    A = np.zeros((n, n))
    A[:nG, :nG] = AG
    Bmat = np.zeros((n, p + m))
    Bmat[:nG, p:] = BG
    rows_C, rows_D, names = [], [], []
    start = nG
    for k, (weight, drive) in enumerate(zip(weights, drives)):
        if weight is None:
            continue
        Aw, Bw, Cw, Dw = weight
        size = Aw.shape[0]
        block = slice(start, start + size)
        A[block, block] = Aw
        A[block, :nG] = Bw @ drive[:, :nG]
        Bmat[block] = Bw @ drive[:, nG:]
        C = np.zeros((Dw.shape[0], n))
        C[:, :nG] = Dw @ drive[:, :nG]
        C[:, block] = Cw
        rows_C.append(C)
        rows_D.append(Dw @ drive[:, nG:])
        names += [f"z{k + 1}_{i + 1}" for i in range(Dw.shape[0])]
        start += size
    error = np.zeros((p, n))
    error[:, :nG] = -CG
    C = np.vstack([*rows_C, error])
    D = np.vstack([*rows_D, np.hstack([np.eye(p), -DG])])
    states = (*plant.states, *(f"W{k + 1}.x{i + 1}" for k, size in enumerate(sizes) for i in range(size)))
    return LinearSystem(A, Bmat, C, D, states=states, inputs=(*(f"r{i + 1}" for i in range(p)), *plant.inputs),
                        outputs=(*names, *(f"e{i + 1}" for i in range(p))), name=f"{plant.name}_augmented")


def mixsyn(G: Any, W1: Any = None, W2: Any = None, W3: Any = None, gamma_tol: float = GAMMA_TOL) -> HInfinity:
    """The mixed-sensitivity H-infinity controller of a plant: :func:`robodyn.hinfsyn` on :func:`augw`'s plant.

    Parameters
    ----------
    G
        A continuous-time LinearSystem (p outputs, m inputs).
    W1, W2, W3
        The weights on S, K S and T (module docstring); at least one. Like every H-infinity problem, D12 must have
        full column rank: W2 (or a W1/W3 with feedthrough through a G with feedthrough) must weigh every input.
    gamma_tol
        The relative width of the bracket of the optimal level (:func:`robodyn.hinfsyn`).

    Returns
    -------
    HInfinity
        ``K`` (input e = r - y, output u: u = K e, negative feedback of y), ``closed_loop`` (r -> [z1, z2, z3]),
        ``gamma``: python-control's ``mixsyn``.
    """
    plant = as_linear(G, "mixsyn")
    P = augw(plant, W1, W2, W3)
    p, m = plant.D.shape
    return hinfsyn(P, p, m, gamma_tol=gamma_tol)
