"""The steady-state Kalman filter of a linear system (:func:`kalman`) and the LQG controller (:func:`lqg`).

The system x' = A x + B u + G w, y = C x + D u + v (continuous time) or x[k+1] = A x[k] + B u[k] + G w[k],
y[k] = C x[k] + D u[k] + v[k] (discrete time, by ``sys.dt``), with white noises of covariances E{w w^T} = Qn,
E{v v^T} = Rn and E{w v^T} = N (zero unless given).

- Continuous time (python-control's ``lqe``): P solves the filter Riccati equation
  A P + P A^T - (P C^T + G N) Rn^-1 (C P + N^T G^T) + G Qn G^T = 0 (``scipy.linalg.solve_continuous_are`` on the
  dual problem), L = (P C^T + G N) Rn^-1, and the estimator is x_hat' = A x_hat + B u + L (y - C x_hat - D u).
- Discrete time (python-control's ``dlqe``): the *predictor* form. P is the covariance of the error of the
  prediction x_hat[k | k-1], the stabilizing solution of
  P = A P A^T - (A P C^T + G N)(C P C^T + Rn)^-1 (C P A^T + N^T G^T) + G Qn G^T (``solve_discrete_are``), the gain
  L = (A P C^T + G N)(C P C^T + Rn)^-1 and x_hat[k+1] = A x_hat[k] + B u[k] + L (y[k] - C x_hat[k] - D u[k]).
  (MATLAB's ``kalman`` also reports the current-estimator gain P C^T (C P C^T + Rn)^-1; without N it is
  A^-1 L.)

In both, ``poles`` are the eigenvalues of A - L C. Checks, before solving: Qn symmetric positive semidefinite, Rn
symmetric positive definite, [[Qn, N], [N^T, Rn]] positive semidefinite; (A, C) detectable (a mode that is not
asymptotically stable and that the outputs do not see is named); no mode on the stability boundary that the noise
does not excite (the PBH test of (A - G N Rn^-1 C, G (Qn - N Rn^-1 N^T)^1/2), the dual of :func:`robodyn.lqr`'s
check): either makes the Riccati equation lack a stabilizing solution.

References: R. E. Kalman and R. S. Bucy, "New results in linear filtering and prediction theory", J. Basic Eng.
83 (1961); B. D. O. Anderson and J. B. Moore, *Optimal Filtering* (1979), ch. 4; python-control's ``lqe``,
``dlqe``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn import display
from robodyn.base.errors import InputError
from robodyn.control.design import BOUNDARY_RTOL, lqr, on_boundary, riccati_gain, unstable
from robodyn.control.weights import check_definite, check_symmetric, weight_matrix
from robodyn.linear.controllability import pbh_modes
from robodyn.linear.systems import StateSpace, as_linear
from robodyn.model.kinds.linear import LinearSystem

__all__ = ["Kalman", "kalman", "lqg"]

Array = NDArray[np.float64]
ComplexArray = NDArray[np.complex128]



@dataclass(frozen=True, slots=True, eq=False)
class Kalman:
    """A steady-state Kalman filter (see :func:`kalman`).

    Attributes
    ----------
    L : (n, p)
        The gain; rows by state, columns by output. Discrete time: the predictor-form gain (module docstring).
    P : (n, n)
        The steady-state error covariance (discrete time: of the prediction x_hat[k | k-1]).
    poles : (n,)
        The eigenvalues of A - L C (poles z in discrete time), sorted by real part.
    system
        The LinearSystem the filter estimates the state of.
    Qn, Rn, N, G
        The noise covariances and the noise input matrix (n, g).
    """

    L: Array
    P: Array
    poles: ComplexArray
    system: StateSpace
    Qn: Array
    Rn: Array
    N: Array
    G: Array

    def estimator(self) -> LinearSystem:
        """The estimator as a LinearSystem: inputs the system's inputs u then its outputs y, output the estimate
        x_hat (states and outputs named ``<state>_hat``):
        x_hat' = (A - L C) x_hat + (B - L D) u + L y (x_hat[k+1] = ... in discrete time)."""
        sys = self.system
        A, B, C, D = sys.A, sys.B, sys.C, sys.D
        names = tuple(f"{s}_hat" for s in sys.states)
        n, m, p = A.shape[0], B.shape[1], C.shape[0]
        return LinearSystem(A - self.L @ C, np.hstack([B - self.L @ D, self.L]), np.eye(n), np.zeros((n, m + p)),
                            states=names, inputs=(*sys.inputs, *sys.outputs), outputs=names,
                            name=f"{sys.name}_estimator", dt=sys.dt)

    def _repr_html_(self) -> str:
        """L and P as labelled matrices and the estimator's poles."""
        sys = self.system
        time = "" if sys.dt is None else f" (discrete-time predictor, dt = {sys.dt:g} s)"
        values = ", ".join(display.number(complex(z)) for z in self.poles)
        return display.block([display.heading(f"Kalman filter{time}"),
                              display.matrix_html(self.L, sys.states, sys.outputs, title="L"),
                              display.matrix_html(self.P, sys.states, sys.states, title="P"),
                              display.note(f"poles of A - L C: {values}")])


def _check_detectable(linear: StateSpace) -> None:
    """InputError naming a mode that is not asymptotically stable and that the outputs do not see."""
    tol = BOUNDARY_RTOL * max(1.0, float(np.linalg.norm(linear.A, 2)))
    modes, _ = pbh_modes(linear.A.T, linear.C.T)
    for mode in modes:
        if not mode.passes and unstable(mode.eigenvalue, linear.dt, tol):
            raise InputError(
                f"kalman: the mode {display.number(mode.eigenvalue)} of {linear.name!r} is not stable and the outputs "
                f"do not see it (rank [λI - A; C] = {mode.rank} < {len(linear.states)}): (A, C) is not detectable, "
                "no observer converges; measure a signal that depends on it")


def _check_excited(linear: StateSpace, G: Array, Qn: Array, Rn: Array, N: Array) -> None:
    """InputError naming a mode on the stability boundary that the process noise does not excite: PBH on
    (A - G N Rn^-1 C, G (Qn - N Rn^-1 N^T)^1/2)."""
    Ae = linear.A - G @ N @ np.linalg.solve(Rn, linear.C)
    Qe = Qn - N @ np.linalg.solve(Rn, N.T)
    w, V = np.linalg.eigh(0.5 * (Qe + Qe.T))
    root = G @ (V * np.sqrt(np.maximum(w, 0.0))[None, :])
    tol = BOUNDARY_RTOL * max(1.0, float(np.linalg.norm(Ae, 2)))
    modes, _ = pbh_modes(Ae, root)
    for mode in modes:
        if not mode.passes and on_boundary(mode.eigenvalue, linear.dt, tol):
            boundary = "unit circle" if linear.dt is not None else "imaginary axis"
            raise InputError(f"kalman: the mode {display.number(mode.eigenvalue)} on the {boundary} is not excited by "
                             "the process noise (rank [λI - A, G Qn^1/2] < n): (A, G Qn^1/2) is not stabilizable and "
                             "the Riccati equation has no stabilizing solution; give that mode process noise in Qn "
                             "(or G)")


def _noise(linear: StateSpace, Qn: ArrayLike, Rn: ArrayLike, G: ArrayLike | None, N: ArrayLike | None
           ) -> tuple[Array, Array, Array, Array]:
    """G (n, g), Qn (g, g) symmetric PSD, Rn (p, p) symmetric PD, N (g, p) with [[Qn, N], [N^T, Rn]] PSD."""
    n, p = len(linear.states), len(linear.outputs)
    if G is None:
        G_ = np.eye(n)
    else:  # a vector of n entries is one noise input's column
        try:
            given = np.shape(G)
        except ValueError:  # ragged rows
            raise InputError(f"kalman: G must be an n x g matrix of real numbers (n = {n}), got {G!r:.60}") from None
        columns = 1 if len(given) == 1 and given[0] == n else (given[1] if len(given) == 2 else -1)
        G_ = weight_matrix(np.reshape(G, (n, 1)) if len(given) == 1 and given[0] == n else G, (n, columns),
                           "kalman: G")
    g = G_.shape[1]
    Qn_ = weight_matrix(Qn, (g, g), "kalman: Qn")
    Rn_ = weight_matrix(Rn, (p, p), "kalman: Rn")
    N_ = np.zeros((g, p)) if N is None else weight_matrix(N, (g, p), "kalman: N")
    for label, matrix in (("kalman: Qn", Qn_), ("kalman: Rn", Rn_)):
        check_symmetric(matrix, label)
    check_definite(Qn_, "kalman: Qn", strict=False)
    check_definite(Rn_, "kalman: Rn", strict=True)
    if N is not None:
        check_definite(np.block([[Qn_, N_], [N_.T, Rn_]]), "kalman: the noise covariance [[Qn, N], [N^T, Rn]]",
                       strict=False)
    return G_, 0.5 * (Qn_ + Qn_.T), 0.5 * (Rn_ + Rn_.T), N_


def kalman(sys: Any, Qn: ArrayLike, Rn: ArrayLike, G: ArrayLike | None = None, N: ArrayLike | None = None) -> Kalman:
    """The steady-state Kalman filter of a LinearSystem (continuous or discrete time, by its ``dt``).

    Parameters
    ----------
    sys
        A LinearSystem (or a model linear by construction) with outputs; its n states, p outputs.
    Qn : (g, g)
        Process noise covariance, symmetric positive semidefinite (a number when g = 1).
    Rn : (p, p)
        Measurement noise covariance, symmetric positive definite.
    G : (n, g), optional
        How the process noise enters the states; the identity (g = n) by default.
    N : (g, p), optional
        Cross covariance E{w v^T}.

    Returns
    -------
    Kalman
        ``L`` (n, p), ``P`` (n, n), ``poles`` (eig(A - L C)) and ``estimator()``: equal to python-control's
        ``lqe(A, G, C, Qn, Rn)`` (``dlqe`` in discrete time: the predictor form).

    Raises
    ------
    InputError, ShapeError
        A covariance of the wrong shape, not symmetric or not (semi)definite; (A, C) not detectable or a mode on
        the stability boundary without process noise (named).
    NumericalError
        The Riccati solver failed or its solution does not stabilize A - L C.
    """

    linear = as_linear(sys, "kalman")
    if not linear.outputs:
        raise InputError(f"kalman: {linear.name!r} has no outputs: there is nothing to estimate the state from")
    G_, Qn_, Rn_, N_ = _noise(linear, Qn, Rn, G, N)
    _check_detectable(linear)
    _check_excited(linear, G_, Qn_, Rn_, N_)
    A, C = linear.A, linear.C
    # the dual of the LQR: (A', C', G Qn G', Rn, G N) gives P and K = L'; eig(A' - C' K) = eig(A - L C)
    P, gain, poles = riccati_gain(A.T, C.T, G_ @ Qn_ @ G_.T, Rn_, None if N is None else G_ @ N_, linear.dt,
                                  f"kalman: the Riccati equation of {linear.name!r}", "A - L C", "Qn and Rn")
    L = np.ascontiguousarray(gain.T)
    for array in (L, P, poles, Qn_, Rn_, N_, G_):
        array.setflags(write=False)
    return Kalman(L, P, poles, linear, Qn_, Rn_, N_, G_)


def lqg(sys: Any, Q: ArrayLike, R: ArrayLike, Qn: ArrayLike, Rn: ArrayLike, G: ArrayLike | None = None
        ) -> LinearSystem:
    """The LQG controller of a LinearSystem: the LQR gain K (:func:`robodyn.lqr` with Q, R) on the Kalman estimate
    (:func:`kalman` with Qn, Rn, G), u = -K x_hat.

    Returns
    -------
    LinearSystem
        Input the system's outputs y, output its inputs u, states ``<state>_hat``:
        x_hat' = (A - B K - L C + L D K) x_hat + L y, u = -K x_hat (x_hat[k+1] = ... in discrete time, the
        predictor-form filter). Closed with the plant by u -> u, y -> y (positive feedback of this controller:
        the minus sign is inside), the loop's poles are eig(A - B K) and eig(A - L C) (separation).
    """
    linear = as_linear(sys, "lqg")
    regulator = lqr(linear, Q, R)
    filter_ = kalman(linear, Qn, Rn, G)
    K, L = regulator.K, filter_.L
    A, B, C, D = linear.A, linear.B, linear.C, linear.D
    names = tuple(f"{s}_hat" for s in linear.states)
    return LinearSystem(A - B @ K - L @ C + L @ D @ K, L, -K, np.zeros((K.shape[0], L.shape[1])), states=names,
                        inputs=linear.outputs, outputs=linear.inputs, name=f"{linear.name}_lqg", dt=linear.dt)
