"""The unscented Kalman filter's whole sample in one compiled call (:class:`CompiledUnscented`): the arithmetic of
the :func:`~robodyn.control.estimation.blocks.ukf` block's Python steps (:mod:`.filters`: the scaled sigma points
of Wan & van der Merwe 2000, the additive-noise update of Särkkä 2013, algorithm 5.14) written out in numba, on the
plant's machine code as :mod:`.compiled`'s EKF (its RK4 mean at every point, Van Loan's Qd at the Jacobian at
x_{k|k}; the helpers are that module's).

It serves plants whose measured outputs are states (y = x[measured]: the points' outputs are their rows), with
compiled f and exact Jacobian; any other plant keeps the block's Python path. Its numbers equal that path's to a
few units of roundoff per step: the points are the same up to two Cholesky factorizations (numpy's LAPACK and the
compiled one), the means are the same machine code in the same order.
"""

from __future__ import annotations

import numba
import numpy as np
from numpy.typing import NDArray

from robodyn.control.estimation.compiled import (
    _FNS,
    _M,
    _N,
    _OFFSETS,
    _Q,
    _SUBSTEPS,
    CompiledSample,
    _Buffer,
    _cholesky,
    _gain_rows,
    _jac,
    _pack,
    _part,
    _rk4,
    _unpack,
    _van_loan,
    _work_shapes,
)
from robodyn.control.estimation.filters import MerweWeights, innovation_error, sigma_error

__all__ = ["CompiledUnscented"]

Array = NDArray[np.float64]

_UKF_SLOTS = ("T", "scale", "x0", "P0", "R", "Qc", "Wm", "Wc", "u", "jac", "X", "Y", "vec", "mats", "gain", "S", "L",
              "big", "wide")
(_U_T, _U_SCALE, _U_X0, _U_P0, _U_R, _U_QC, _U_WM, _U_WC, _U_U, _U_JAC, _U_X, _U_Y, _U_VEC, _U_MATS, _U_GAIN, _U_S,
 _U_L, _U_BIG, _U_WIDE) = (_UKF_SLOTS.index(name) for name in (
    "T", "scale", "x0", "P0", "R", "Qc", "Wm", "Wc", "u", "jac", "X", "Y", "vec", "mats", "gain", "S", "L", "big",
    "wide"))
OK, INNOVATION, SIGMA = 0, 1, 2  # the kernel's answers: done, H P H' + R not positive definite, no sigma points


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _sigma_points(x: np.ndarray, P: np.ndarray, scale: float, X: np.ndarray, scaled: np.ndarray,
                  L: np.ndarray) -> bool:  # pragma: no cover - runs compiled only
    """filters.sigma_points: X (2 n + 1, n) = x, x + the columns of L, x - them, L L' = scale P; False when scale P
    is not positive definite."""
    n = x.size
    for i in range(n):
        for j in range(n):
            scaled[i, j] = scale * P[i, j]
    if not _cholesky(scaled, L):
        return False
    for j in range(n):
        X[0, j] = x[j]
        for i in range(n):
            X[1 + i, j] = x[j] + L[j, i]
            X[1 + n + i, j] = x[j] - L[j, i]
    return True


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _transform(Y: np.ndarray, Wm: np.ndarray, Wc: np.ndarray, noise: np.ndarray, mean: np.ndarray,
               cov: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """filters.unscented_transform: mean = Wm Y, cov = sum_k Wc_k (Y_k - mean)(Y_k - mean)' + noise; Y (2 n + 1, k)
    is overwritten with Y - mean."""
    points, k = Y.shape
    for j in range(k):
        s = 0.0
        for r in range(points):
            s += Wm[r] * Y[r, j]
        mean[j] = s
    for r in range(points):
        for j in range(k):
            Y[r, j] -= mean[j]
    for i in range(k):
        for j in range(k):
            s = 0.0
            for r in range(points):
                s += Y[r, i] * Wc[r] * Y[r, j]
            cov[i, j] = s + noise[i, j]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _update(x: np.ndarray, P: np.ndarray, y: np.ndarray, measured: np.ndarray, scale: float, Wm: np.ndarray,
            Wc: np.ndarray, R: np.ndarray, X: np.ndarray, Y: np.ndarray, x_out: np.ndarray, P_out: np.ndarray,
            vec: np.ndarray, mats: np.ndarray, gain: np.ndarray, S: np.ndarray, L: np.ndarray
            ) -> int:  # pragma: no cover - runs compiled only
    """filters.unscented_update at the points of (x, P), their outputs X[:, measured]; the kernel's answer."""
    n, q = x.size, measured.size
    if not _sigma_points(x, P, scale, X, mats[0], mats[1]):
        return SIGMA
    for r in range(X.shape[0]):
        for i in range(q):
            Y[r, i] = X[r, measured[i]]
    mu = vec[0, :q]
    _transform(Y[:, :q], Wm, Wc, R, mu, S)
    cross, K = gain[0], gain[1]
    for i in range(n):
        for j in range(q):
            s = 0.0
            for r in range(X.shape[0]):
                s += (X[r, i] - x[i]) * Wc[r] * Y[r, j]
            cross[i, j] = s
    if not _cholesky(S, L):
        return INNOVATION
    _gain_rows(L, cross, K)
    for i in range(n):
        s = 0.0
        for j in range(q):
            s += K[i, j] * (y[j] - mu[j])
        x_out[i] = x[i] + s
    KS = gain[2]
    np.dot(K, S, KS)
    np.dot(KS, K.T, P_out)
    for i in range(n):
        for j in range(n):
            P_out[i, j] = P[i, j] - P_out[i, j]
    return OK


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _ukf_entry(ints: np.ndarray, p: np.ndarray, t: float, z: np.ndarray, v: np.ndarray, data: np.ndarray,
               out: np.ndarray) -> int:  # pragma: no cover - runs compiled only
    """The UKF's sample: out = [x_{k|k}, diag P_{k|k}, the block's next state]; the kernel's answer (mats[0] holds
    the covariance without sigma points, S the innovation covariance)."""
    n, q, m, o = ints[_N], ints[_Q], ints[_M], ints[_OFFSETS:]  # o: the buffer's offsets
    w, points = max(n, q), 2 * n + 1
    fns, measured = ints[_FNS:_FNS + 4], ints[_OFFSETS + len(_UKF_SLOTS):_OFFSETS + len(_UKF_SLOTS) + q]
    T, scale = _part(data, o[_U_T], 1)[0], _part(data, o[_U_SCALE], 1)[0]
    x0, P0 = _part(data, o[_U_X0], n), _part(data, o[_U_P0], n * n).reshape((n, n))
    Wm, Wc, u = _part(data, o[_U_WM], points), _part(data, o[_U_WC], points), _part(data, o[_U_U], m)
    X, Y = _part(data, o[_U_X], points * n).reshape((points, n)), _part(data, o[_U_Y], points * w).reshape(
        (points, w))
    vec, mats = _part(data, o[_U_VEC], 8 * w).reshape((8, w)), _part(data, o[_U_MATS], 6 * n * n).reshape(
        (6, n, n))
    S, L = _part(data, o[_U_S], q * q).reshape((q, q)), _part(data, o[_U_L], q * q).reshape((q, q))
    x, x_post, mean = vec[1, :n], vec[2, :n], vec[3, :n]
    P, P_post, Phi, Qd = mats[2], mats[3], mats[4], mats[5]
    _unpack(z, x0, P0, x, P)
    for i in range(m):
        u[i] = v[q + i]
    answer = _update(x, P, v[:q], measured, scale, Wm, Wc, _part(data, o[_U_R], q * q).reshape((q, q)), X, Y,
                     x_post, P_post, vec, mats, _part(data, o[_U_GAIN], 3 * n * q).reshape((3, n, q)), S, L)
    if answer != OK:
        if answer == SIGMA:
            mats[0] = P
        return answer
    for i in range(n):
        out[i] = x_post[i]
        out[n + i] = P_post[i, i]
    if not _sigma_points(x_post, P_post, scale, X, mats[0], mats[1]):
        mats[0] = P_post
        return SIGMA
    jac = _part(data, o[_U_JAC], n * (n + m))
    _jac(fns, t, x_post, u, p, jac)
    _van_loan(jac[:n * n].reshape((n, n)), _part(data, o[_U_QC], n * n).reshape((n, n)), T, Phi, Qd,
              _part(data, o[_U_BIG], 19 * n * n).reshape((19, n, n)),
              _part(data, o[_U_WIDE], 2 * n * n).reshape((n, 2 * n)))
    for r in range(points):
        _rk4(fns, p, t, T, ints[_SUBSTEPS], X[r], u, vec[3:8])
    _transform(X, Wm, Wc, Qd, mean, P)
    _pack(mean, P, x0, P0, out[2 * n:])
    return OK


class CompiledUnscented(CompiledSample):
    """The UKF's sample in one call (see the module docstring); the arguments are
    :class:`~robodyn.control.estimation.compiled.CompiledExtended`'s, with the sigma points' ``weights`` and without
    ``outputs`` (the measured outputs are states)."""

    def __init__(self, addresses: NDArray[np.int64], p: Array, x0: Array, P0: Array, measured: list[int],
                 R: Array, Qc: Array, T: float, substeps: int, weights: MerweWeights, m: int, where: str):
        n, q = x0.size, len(measured)
        super().__init__(n, where)
        self.p = np.ascontiguousarray(p, dtype=float)
        points = 2 * n + 1
        shapes = {"T": (1,), "scale": (1,), "x0": (n,), "P0": (n, n), "R": (q, q), "Qc": (n, n), "Wm": (points,),
                  "Wc": (points,), "u": (m,), "jac": (n * (n + m),), "X": (points, n), "Y": (points, max(n, q)),
                  **_work_shapes(n, q)}
        self.buffer = _Buffer([(name, shapes[name]) for name in _UKF_SLOTS])
        views = self.buffer.views
        views["T"][0], views["scale"][0], views["x0"][:], views["P0"][:] = T, weights.scale, x0, P0
        views["R"][:], views["Qc"][:], views["Wm"][:], views["Wc"][:] = R, Qc, weights.mean, weights.covariance
        self.ints = np.concatenate([[n, q, m, substeps, 1], np.asarray(addresses, dtype=np.int64),
                                    self.buffer.offsets, measured]).astype(np.int64)
        self.answer = OK

    def _run(self, t: float, z: Array, v: Array) -> bool:
        self.answer = int(_ukf_entry(self.ints, self.p, t, z, v, self.buffer.data, self.out))
        return self.answer == OK

    def _error(self) -> Exception:
        if self.answer == SIGMA:
            return sigma_error(self.buffer.views["mats"][0], self.where)
        return innovation_error(self.buffer.views["S"], self.where)
