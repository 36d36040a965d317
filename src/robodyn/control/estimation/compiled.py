"""A sampled estimator's whole sample in one compiled call: the measurement update and the prediction of the
:func:`~robodyn.control.estimation.blocks.kalman` and :func:`~robodyn.control.estimation.blocks.ekf` blocks, the
arithmetic of their Python steps (:mod:`.filters`, :mod:`.discretization`) written out in numba.

- :class:`CompiledKalman`: the linear filter, its matrices constant (Phi, Gamma, Qd made once by the block).
- :class:`CompiledExtended`: the EKF. The plant's f and exact Jacobian are its generated ``rhs_c`` and ``jac_c``,
  called through their addresses (robodyn.model.compiled.model_addresses, robodyn.codegen.indirect.model_call: the
  mechanism of the DDP rollout and the batched points, :class:`~robodyn.control.optimal.batch.points.ModelPoints`,
  whose addresses the Python path uses too); the mean is the same ``substeps`` classic RK4 steps in the same order
  (:func:`~.discretization.rk4_points`), so it equals the Python path's bit for bit; Phi and Qd are Van Loan's
  exponential (:func:`~.discretization.noise_discretization`) by
  :func:`robodyn.control.pade.van_loan_exponential` (Higham 2005, in n x n blocks) where the Python path calls
  scipy's ``expm`` (Al-Mohy & Higham 2009) on the 2n x 2n matrix: the two agree to a few units of roundoff. The
  measured outputs: y = x[measured] and H its rows of the identity when the plant's outputs are its states;
  otherwise h and dh/dx at x_{k|k-1} are the plant's own (``h_raw``, ``output_jacobians_raw``), evaluated before
  the call.

Both work on the block's state and inputs directly (z = [x_{k|k-1} - x0, upper triangle of P_{k|k-1} - P0],
v = [y_k, u_k]: robodyn.control.estimation.blocks) into arrays made once (one float64 buffer of named arrays and
one int64 table of sizes, addresses and offsets: a compiled call's dispatch costs ~0.2 us per array argument), and
keep the last sample's answer: the block asks for its outputs and its next state at the same (t, z, v). The UKF's
sample is :mod:`.compiled_ukf`'s, on the same pieces. A block's compiled sample is not shared between threads (one
buffer per block, as the Python path's one kept answer). The update is Joseph's form with the gain
by a Cholesky factor of the innovation covariance (its failure is the Python path's NumericalError).
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np
from numpy.typing import NDArray

from robodyn.codegen.indirect import model_call
from robodyn.codegen.linalg import cholesky_solve_columns
from robodyn.control.estimation.filters import innovation_error
from robodyn.control.pade import multiply, van_loan_exponential

__all__ = ["CompiledExtended", "CompiledKalman", "CompiledSample"]

Array = NDArray[np.float64]
Outputs = Callable[[float, Array, Array], tuple[Array, Array]]

_rhs = model_call(0)  # rhs(fns, t, x, u, p, out): the model's rhs_c at fns[0]
_jac = model_call(2)  # jac(fns, t, x, u, p, out): df/dx then df/du, row-major, at fns[2]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _unpack(z: np.ndarray, x0: np.ndarray, P0: np.ndarray, x: np.ndarray, P: np.ndarray) -> None:  # pragma: no cover
    """x = x0 + z[:n], P = P0 + the symmetric matrix of the upper triangle z[n:] (row by row)."""
    n = x0.size
    for i in range(n):
        x[i] = x0[i] + z[i]
    k = n
    for i in range(n):
        for j in range(i, n):
            value = P0[i, j] + z[k]
            P[i, j] = value
            P[j, i] = value
            k += 1


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _pack(x: np.ndarray, P: np.ndarray, x0: np.ndarray, P0: np.ndarray, nxt: np.ndarray) -> None:  # pragma: no cover
    """nxt = [x - x0, upper triangle of P - P0 row by row]."""
    n = x0.size
    for i in range(n):
        nxt[i] = x[i] - x0[i]
    k = n
    for i in range(n):
        for j in range(i, n):
            nxt[k] = P[i, j] - P0[i, j]
            k += 1


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _cholesky(S: np.ndarray, L: np.ndarray) -> bool:  # pragma: no cover - runs compiled only
    """L lower with L L' = S (S symmetric; its lower triangle read); False when S is not positive definite."""
    p = S.shape[0]
    for j in range(p):
        d = S[j, j]
        for k in range(j):
            d -= L[j, k] * L[j, k]
        if not d > 0.0:
            return False
        L[j, j] = np.sqrt(d)
        for i in range(j + 1, p):
            s = S[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
        for i in range(j):
            L[i, j] = 0.0
    return True


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _gain_rows(L: np.ndarray, cross: np.ndarray, K: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """K (n, p) = cross (n, p) S^-1, S = L L' (L lower (p, p)): K' = S^-1 cross', the columns of K' solved by
    :func:`robodyn.codegen.linalg.cholesky_solve_columns` in place."""
    K[:, :] = cross
    cholesky_solve_columns(L, K.T)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _joseph(x: np.ndarray, P: np.ndarray, innovation: np.ndarray, H: np.ndarray, R: np.ndarray, x_out: np.ndarray,
            P_out: np.ndarray, gain: np.ndarray, S: np.ndarray, L: np.ndarray, mats: np.ndarray
            ) -> bool:  # pragma: no cover - runs compiled only
    """filters.joseph_update into (x_out, P_out): K = P H' S^-1, S = H P H' + R (Cholesky: False when S is not
    positive definite, S kept); gain (3, n, p) and mats (2, n, n) scratch."""
    n, p = H.shape[1], H.shape[0]
    PH, K, KR = gain[0], gain[1], gain[2]
    multiply(P, H.T, PH)
    multiply(H, PH, S)
    S += R
    if not _cholesky(S, L):
        return False
    _gain_rows(L, PH, K)
    I_KH, left = mats[0], mats[1]
    multiply(K, H, I_KH)
    for i in range(n):
        s = 0.0
        for k in range(p):
            s += K[i, k] * innovation[k]
        x_out[i] = x[i] + s
        for j in range(n):
            I_KH[i, j] = (1.0 if i == j else 0.0) - I_KH[i, j]
    multiply(I_KH, P, left)
    multiply(left, I_KH.T, P_out)
    multiply(K, R, KR)
    multiply(KR, K.T, left)
    P_out += left
    return True


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _propagate(Phi: np.ndarray, P: np.ndarray, Qd: np.ndarray, P_out: np.ndarray, scratch: np.ndarray
               ) -> None:  # pragma: no cover - runs compiled only
    """P_out = Phi P Phi' + Qd."""
    multiply(Phi, P, scratch)
    multiply(scratch, Phi.T, P_out)
    P_out += Qd


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _kalman_sample(z: np.ndarray, v: np.ndarray, x0: np.ndarray, P0: np.ndarray, C: np.ndarray, D: np.ndarray,
                   R: np.ndarray, Phi: np.ndarray, Gamma: np.ndarray, Qd: np.ndarray, out: np.ndarray,
                   nxt: np.ndarray, vec: np.ndarray, mats: np.ndarray, gain: np.ndarray, S: np.ndarray,
                   L: np.ndarray) -> bool:  # pragma: no cover - runs compiled only
    """The linear filter's sample: out = [x_{k|k}, diag P_{k|k}], nxt the block's next state; False when the
    innovation covariance is not positive definite (S holds it)."""
    n, p = x0.size, C.shape[0]
    x, x_post, innovation = vec[0, :n], vec[1, :n], vec[2, :p]
    P, P_post = mats[0], mats[1]
    _unpack(z, x0, P0, x, P)
    for i in range(p):
        s = v[i]
        for j in range(n):
            s -= C[i, j] * x[j]
        t = 0.0
        for j in range(D.shape[1]):
            t += D[i, j] * v[p + j]
        innovation[i] = s - t
    if not _joseph(x, P, innovation, C, R, x_post, P_post, gain, S, L, mats[2:4]):
        return False
    for i in range(n):
        out[i] = x_post[i]
        out[n + i] = P_post[i, i]
        s = 0.0
        for j in range(n):
            s += Phi[i, j] * x_post[j]
        t = 0.0
        for j in range(Gamma.shape[1]):
            t += Gamma[i, j] * v[p + j]
        x[i] = s + t
    _propagate(Phi, P_post, Qd, P, mats[2])
    _pack(x, P, x0, P0, nxt)
    return True


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _rk4(fns: np.ndarray, p: np.ndarray, t: float, T: float, substeps: int, x: np.ndarray, u: np.ndarray,
         vec: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """x advanced over T by ``substeps`` classic RK4 steps, in discretization.rk4_points' order; vec (5, n)."""
    n = x.size
    k1, k2, k3, k4, stage = vec[0], vec[1], vec[2], vec[3], vec[4]
    h = T / substeps
    for step in range(substeps):
        t0 = t + step * h
        _rhs(fns, t0, x, u, p, k1)
        for i in range(n):
            stage[i] = x[i] + (0.5 * h) * k1[i]
        _rhs(fns, t0 + 0.5 * h, stage, u, p, k2)
        for i in range(n):
            stage[i] = x[i] + (0.5 * h) * k2[i]
        _rhs(fns, t0 + 0.5 * h, stage, u, p, k3)
        for i in range(n):
            stage[i] = x[i] + h * k3[i]
        _rhs(fns, t0 + h, stage, u, p, k4)
        for i in range(n):
            x[i] = x[i] + (h / 6.0) * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _van_loan(A: np.ndarray, Qc: np.ndarray, T: float, Phi: np.ndarray, Qd: np.ndarray, big: np.ndarray,
              wide: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """discretization.noise_discretization: expm(T [[-A, Qc], [0, A']]) = [[., F12], [0, F22]], Phi = F22',
    Qd = Phi F12 symmetrized (the exponential by blocks: robodyn.control.pade.van_loan_exponential); big
    (19, n, n) and wide (n, 2 n) scratch."""
    n = A.shape[0]
    X, Y, E11, F12, F22 = big[0], big[1], big[2], big[3], big[4]
    for i in range(n):
        for j in range(n):
            X[i, j] = -A[i, j] * T
            Y[i, j] = Qc[i, j] * T
    van_loan_exponential(X, Y, E11, F12, F22, big[5:], wide)
    for i in range(n):
        for j in range(n):
            Phi[i, j] = F22[j, i]
    multiply(Phi, F12, Qd)
    for i in range(n):
        for j in range(i + 1, n):
            value = 0.5 * (Qd[i, j] + Qd[j, i])
            Qd[i, j] = value
            Qd[j, i] = value


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _ekf_sample(fns: np.ndarray, p: np.ndarray, t: float, T: float, substeps: int, z: np.ndarray, v: np.ndarray,
                x0: np.ndarray, P0: np.ndarray, measured: np.ndarray, direct: bool, hx: np.ndarray, H: np.ndarray,
                R: np.ndarray, Qc: np.ndarray, out: np.ndarray, nxt: np.ndarray, u: np.ndarray, jac: np.ndarray,
                vec: np.ndarray, mats: np.ndarray, gain: np.ndarray, S: np.ndarray, L: np.ndarray,
                big: np.ndarray, wide: np.ndarray) -> bool:  # pragma: no cover - runs compiled only
    """The EKF's sample (see the module docstring): out = [x_{k|k}, diag P_{k|k}], nxt the block's next state;
    ``direct``: y = x[measured] (else hx, H are h and dh/dx at x_{k|k-1}). False when the innovation covariance is
    not positive definite (S holds it)."""
    n, q = x0.size, measured.size
    x, x_post, innovation = vec[0, :n], vec[1, :n], vec[2, :q]
    P, P_post, Phi, Qd = mats[0], mats[1], mats[2], mats[3]
    _unpack(z, x0, P0, x, P)
    for i in range(u.size):
        u[i] = v[q + i]
    for i in range(q):
        innovation[i] = v[i] - (x[measured[i]] if direct else hx[i])
    if not _joseph(x, P, innovation, H, R, x_post, P_post, gain, S, L, mats[4:6]):
        return False
    for i in range(n):
        out[i] = x_post[i]
        out[n + i] = P_post[i, i]
        x[i] = x_post[i]
    _jac(fns, t, x_post, u, p, jac)
    A = jac[:n * n].reshape((n, n))
    _van_loan(A, Qc, T, Phi, Qd, big, wide)
    _rk4(fns, p, t, T, substeps, x, u, vec[3:8])
    _propagate(Phi, P_post, Qd, P, mats[4])
    _pack(x, P, x0, P0, nxt)
    return True


#: The arrays of a kernel's one float64 buffer, in order (:class:`_Buffer`; the kernels find each by its offset,
#: ``ints[_OFFSETS + slot]``): one argument instead of twenty, since a compiled function's dispatch from Python costs
#: ~0.2 us per array argument.
_KALMAN_SLOTS = ("x0", "P0", "C", "D", "R", "Phi", "Gamma", "Qd", "vec", "mats", "gain", "S", "L")
_EKF_SLOTS = ("T", "x0", "P0", "R", "Qc", "hx", "H", "u", "jac", "vec", "mats", "gain", "S", "L", "big", "wide")
#: The slots of the int64 argument: sizes, flags and addresses, then the buffer's offsets, then the measured outputs.
_N, _Q, _M, _SUBSTEPS, _DIRECT, _FNS = 0, 1, 2, 3, 4, 5
_OFFSETS = _FNS + 4
_K_X0, _K_P0, _K_C, _K_D, _K_R, _K_PHI, _K_GAMMA, _K_QD, _K_VEC, _K_MATS, _K_GAIN, _K_S, _K_L = (
    _KALMAN_SLOTS.index(name) for name in ("x0", "P0", "C", "D", "R", "Phi", "Gamma", "Qd", "vec", "mats", "gain",
                                           "S", "L"))
(_E_T, _E_X0, _E_P0, _E_R, _E_QC, _E_HX, _E_H, _E_U, _E_JAC, _E_VEC, _E_MATS, _E_GAIN, _E_S, _E_L, _E_BIG,
 _E_WIDE) = (_EKF_SLOTS.index(name) for name in ("T", "x0", "P0", "R", "Qc", "hx", "H", "u", "jac", "vec", "mats",
                                                 "gain", "S", "L", "big", "wide"))


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _part(data: np.ndarray, start: int, size: int) -> np.ndarray:  # pragma: no cover - runs compiled only
    """The buffer's array at ``start`` (its slot's offset, read from ``ints`` when the kernel runs: a constant slot
    here would be compiled once per slot), flat (size,)."""
    return data[start:start + size]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _kalman_entry(ints: np.ndarray, z: np.ndarray, v: np.ndarray, data: np.ndarray, out: np.ndarray
                  ) -> bool:  # pragma: no cover - runs compiled only
    """:func:`_kalman_sample` on the arrays of ``data`` (_KALMAN_SLOTS); out = [outputs, next state]."""
    n, q, m, o = ints[_N], ints[_Q], ints[_M], ints[_OFFSETS:]  # o: the buffer's offsets
    w = max(n, q)
    return _kalman_sample(
        z, v, _part(data, o[_K_X0], n), _part(data, o[_K_P0], n * n).reshape((n, n)),
        _part(data, o[_K_C], q * n).reshape((q, n)), _part(data, o[_K_D], q * m).reshape((q, m)),
        _part(data, o[_K_R], q * q).reshape((q, q)), _part(data, o[_K_PHI], n * n).reshape((n, n)),
        _part(data, o[_K_GAMMA], n * m).reshape((n, m)), _part(data, o[_K_QD], n * n).reshape((n, n)),
        out[:2 * n], out[2 * n:], _part(data, o[_K_VEC], 8 * w).reshape((8, w)),
        _part(data, o[_K_MATS], 6 * n * n).reshape((6, n, n)),
        _part(data, o[_K_GAIN], 3 * n * q).reshape((3, n, q)), _part(data, o[_K_S], q * q).reshape((q, q)),
        _part(data, o[_K_L], q * q).reshape((q, q)))


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _ekf_entry(ints: np.ndarray, p: np.ndarray, t: float, z: np.ndarray, v: np.ndarray, data: np.ndarray,
               out: np.ndarray) -> bool:  # pragma: no cover - runs compiled only
    """:func:`_ekf_sample` on the arrays of ``data`` (_EKF_SLOTS); out = [outputs, next state]."""
    n, q, m, o = ints[_N], ints[_Q], ints[_M], ints[_OFFSETS:]  # o: the buffer's offsets
    w = max(n, q)
    measured = ints[_OFFSETS + len(_EKF_SLOTS):_OFFSETS + len(_EKF_SLOTS) + q]
    return _ekf_sample(
        ints[_FNS:_FNS + 4], p, t, _part(data, o[_E_T], 1)[0], ints[_SUBSTEPS], z, v,
        _part(data, o[_E_X0], n), _part(data, o[_E_P0], n * n).reshape((n, n)), measured,
        ints[_DIRECT] != 0, _part(data, o[_E_HX], q), _part(data, o[_E_H], q * n).reshape((q, n)),
        _part(data, o[_E_R], q * q).reshape((q, q)), _part(data, o[_E_QC], n * n).reshape((n, n)),
        out[:2 * n], out[2 * n:], _part(data, o[_E_U], m), _part(data, o[_E_JAC], n * (n + m)),
        _part(data, o[_E_VEC], 8 * w).reshape((8, w)), _part(data, o[_E_MATS], 6 * n * n).reshape((6, n, n)),
        _part(data, o[_E_GAIN], 3 * n * q).reshape((3, n, q)), _part(data, o[_E_S], q * q).reshape((q, q)),
        _part(data, o[_E_L], q * q).reshape((q, q)), _part(data, o[_E_BIG], 19 * n * n).reshape((19, n, n)),
        _part(data, o[_E_WIDE], 2 * n * n).reshape((n, 2 * n)))


class _Buffer:
    """Named arrays in one float64 buffer, in the order of ``shapes`` (a kernel's slots)."""

    def __init__(self, shapes: list[tuple[str, tuple[int, ...]]]):
        sizes = [int(np.prod(shape)) for _, shape in shapes]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.data = np.zeros(sum(sizes))
        self.views = {name: self.data[start:start + size].reshape(shape)
                      for (name, shape), start, size in zip(shapes, self.offsets, sizes, strict=True)}


def _work_shapes(n: int, q: int) -> dict[str, tuple[int, ...]]:
    """The scratch arrays' shapes (n states, q measured outputs)."""
    return {"vec": (8, max(n, q)), "mats": (6, n, n), "gain": (3, n, q), "S": (q, q), "L": (q, q),
            "big": (19, n, n), "wide": (n, 2 * n)}


class CompiledSample:
    """The last sample's answer, kept for the block's two questions at the same (t, z, v)."""

    buffer: _Buffer  # the kernel's arrays (a subclass makes them)

    def __init__(self, n: int, where: str):
        self.where = where  # what the error names
        self.n = n
        self.out = np.empty(2 * n + n + n * (n + 1) // 2)  # the outputs, then the next state
        self.key: tuple[float, bytes, bytes] | None = None

    def sample(self, t: float, z: Array, v: Array) -> tuple[Array, Array]:
        """(outputs [x_{k|k}, diag P_{k|k}] (2 n,), next state (n + n (n + 1) / 2,)) of the block at (t, z, v), new
        arrays."""
        z = np.ascontiguousarray(z, dtype=float)
        v = np.ascontiguousarray(v, dtype=float)
        key = (float(t), z.tobytes(), v.tobytes())
        if key != self.key:
            self.key = None
            if not self._run(float(t), z, v):
                raise self._error()
            self.key = key
        out = self.out.copy()
        return out[:2 * self.n], out[2 * self.n:]

    def _run(self, t: float, z: Array, v: Array) -> bool:
        raise NotImplementedError

    def _error(self) -> Exception:
        """The error of a sample that failed: its innovation covariance is not positive definite."""
        return innovation_error(self.buffer.views["S"], self.where)


class CompiledKalman(CompiledSample):
    """The linear Kalman filter's sample in one call: x_{k+1} = Phi x_k + Gamma u_k + w_k (Qd),
    y_k = C x_k + D u_k + v_k (R); x0 (n,), P0 (n, n) the offsets of the block's state."""

    def __init__(self, x0: Array, P0: Array, C: Array, D: Array, R: Array, Phi: Array, Gamma: Array, Qd: Array,
                 where: str):
        n, q, m = x0.size, C.shape[0], Gamma.shape[1]
        super().__init__(n, where)
        given = {"x0": x0, "P0": P0, "C": C, "D": D, "R": R, "Phi": Phi, "Gamma": Gamma, "Qd": Qd}
        shapes = {**{name: np.shape(a) for name, a in given.items()}, **_work_shapes(n, q)}
        self.buffer = _Buffer([(name, shapes[name]) for name in _KALMAN_SLOTS])
        for name, a in given.items():
            self.buffer.views[name][...] = a
        self.ints = np.concatenate([[n, q, m, 0, 0, 0, 0, 0, 0], self.buffer.offsets]).astype(np.int64)

    def _run(self, t: float, z: Array, v: Array) -> bool:
        return bool(_kalman_entry(self.ints, z, v, self.buffer.data, self.out))


class CompiledExtended(CompiledSample):
    """The EKF's sample in one call (see the module docstring).

    Parameters
    ----------
    addresses : (4,) int64
        The plant's compiled functions (``rhs_c`` at 0, ``jac_c`` at 2: robodyn.model.compiled.model_addresses).
    p : (n_p,)
        The plant's parameters.
    x0 : (n,), P0 : (n, n)
        The offsets of the block's state.
    measured : (q,)
        The indices of the measured outputs.
    R : (q, q), Qc : (n, n)
        The measurement noise and the process noise intensity G Qn G'.
    T, substeps
        The sample period and the RK4 steps per sample.
    outputs
        ``outputs(t, x, u) -> (h (q,), dh/dx (q, n))`` of the measured outputs, or None when they are the states
        x[measured].
    m
        The plant's number of inputs.
    """

    def __init__(self, addresses: NDArray[np.int64], p: Array, x0: Array, P0: Array, measured: list[int],
                 R: Array, Qc: Array, T: float, substeps: int, outputs: Outputs | None, m: int, where: str):
        n, q = x0.size, len(measured)
        super().__init__(n, where)
        self.p, self.outputs = np.ascontiguousarray(p, dtype=float), outputs
        shapes = {"T": (1,), "x0": (n,), "P0": (n, n), "R": (q, q), "Qc": (n, n), "hx": (q,), "H": (q, n),
                  "u": (m,), "jac": (n * (n + m),), **_work_shapes(n, q)}
        self.buffer = _Buffer([(name, shapes[name]) for name in _EKF_SLOTS])
        views = self.buffer.views
        views["T"][0], views["x0"][:], views["P0"][:], views["R"][:], views["Qc"][:] = T, x0, P0, R, Qc
        if outputs is None:  # y = x[measured]: H is rows of the identity
            views["H"][np.arange(q), measured] = 1.0
        self.ints = np.concatenate([[n, q, m, substeps, outputs is None], np.asarray(addresses, dtype=np.int64),
                                    self.buffer.offsets, measured]).astype(np.int64)

    def _run(self, t: float, z: Array, v: Array) -> bool:
        if self.outputs is not None:
            views, q = self.buffer.views, int(self.ints[_Q])
            views["hx"][:], views["H"][:] = self.outputs(t, views["x0"] + z[:self.n], v[q:])
        return bool(_ekf_entry(self.ints, self.p, t, z, v, self.buffer.data, self.out))
