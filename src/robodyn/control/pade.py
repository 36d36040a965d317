"""The matrix exponential by scaling and squaring of a diagonal Padé approximant, compiled (numba), for the kernels
that need an exponential per call: the zero-order holds of many intervals (:mod:`robodyn.control.tracking.zoh`)
and the process noise of an extended Kalman filter's every sample (:mod:`robodyn.control.estimation.compiled`).

The degree m (3, 5, 7, 9 or 13) is chosen from the 1-norm so that the backward error stays below the unit
roundoff, and norms above theta_13 are scaled by 2^-s and squared s times (N. J. Higham, "The scaling and squaring
method for the matrix exponential revisited", SIAM J. Matrix Anal. Appl. 26(4), 2005, algorithm 2.3: its theta_m
and Padé coefficients b_j). The approximant r_m = (V - U)^-1 (V + U), U the odd and V the even part of the Padé
numerator, is evaluated by even powers of the matrix (the same loop for every degree) and solved by Gaussian
elimination with partial pivoting. scipy's ``expm`` (Al-Mohy & Higham 2009) refines the same algorithm; the two
agree to a few units of roundoff (tests/control/test_pade.py).

:func:`van_loan_exponential` is that algorithm on Van Loan's block matrix M = [[X, Y], [0, -X']] written in
n x n blocks: the even powers of M are [[X^2k, Y_2k], [0, (X^2k)']], so V's and U's bottom-right blocks are V11' and
-U11' and need no products, and (V - U)^-1 (V + U) is solved block by block (two n x n factorizations instead of one
of 2n x 2n); the squarings square the block-triangular matrix by its blocks.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["PADE_B3", "PADE_B5", "PADE_B7", "PADE_B9", "PADE_B13", "PADE_THETA", "lu_solve", "multiply",
           "van_loan_exponential"]

#: theta_m of Higham (2005), table 2.3: the largest 1-norm for which the Padé approximant of degree m is exact to
#: the unit roundoff (m = 3, 5, 7, 9, 13).
PADE_THETA = np.array([1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1, 2.097847961257068e0,
                       5.371920351148152e0])
#: The Padé coefficients b_0 ... b_m of degree m (Higham 2005, eq. 2.5 and the algorithm's listing).
PADE_B3 = np.array([120.0, 60.0, 12.0, 1.0])
PADE_B5 = np.array([30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0])
PADE_B7 = np.array([17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0])
PADE_B9 = np.array([17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0,
                    3960.0, 90.0, 1.0])
PADE_B13 = np.array([64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
                     129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0,
                     960960.0, 16380.0, 182.0, 1.0])


@numba.njit(cache=True, nogil=True, error_model="numpy")
def lu_solve(M: np.ndarray, X: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """Overwrite X (n, c) with M^-1 X by Gaussian elimination with partial pivoting (Golub & Van Loan, *Matrix
    Computations*, 4th ed., algorithm 3.4.1); M (n, n) is overwritten."""
    n, c_ = X.shape
    for j in range(n):
        pivot = j
        for i in range(j + 1, n):
            if abs(M[i, j]) > abs(M[pivot, j]):
                pivot = i
        if pivot != j:
            for c in range(n):
                M[j, c], M[pivot, c] = M[pivot, c], M[j, c]
            for c in range(c_):
                X[j, c], X[pivot, c] = X[pivot, c], X[j, c]
        d = M[j, j]
        for i in range(j + 1, n):
            f = M[i, j] / d
            if f != 0.0:
                for c in range(j + 1, n):
                    M[i, c] -= f * M[j, c]
                for c in range(c_):
                    X[i, c] -= f * X[j, c]
    for j in range(n - 1, -1, -1):
        d = M[j, j]
        for c in range(c_):
            X[j, c] /= d
        for i in range(j):
            f = M[i, j]
            if f != 0.0:
                for c in range(c_):
                    X[i, c] -= f * X[j, c]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def multiply(A: np.ndarray, B: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """out (a, c) = A (a, b) @ B (b, c) by BLAS's dgemm (numba calls it without Python: 0.2 us for 14 x 14, a
    quarter of a compiled loop's time); A or B may be a transpose (``B.T``). ``out`` must not share memory with A
    or B."""
    np.dot(A, B, out)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _norm(X: np.ndarray, Y: np.ndarray) -> float:  # pragma: no cover - runs compiled only
    """The 1-norm of [[X, Y], [0, -X']]: a left column's is X's, the right column j's Y's plus row j of X's."""
    n = X.shape[0]
    norm = 0.0
    for j in range(n):
        left, right = 0.0, 0.0
        for i in range(n):
            left += abs(X[i, j])
            right += abs(Y[i, j]) + abs(X[j, i])
        norm = max(norm, left, right)
    return norm


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _powers(X: np.ndarray, Y: np.ndarray, b: np.ndarray, V11: np.ndarray, V12: np.ndarray, O11: np.ndarray,
            O12: np.ndarray, work: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """The blocks of V = sum b_2j M^2j and O = sum b_2j+1 M^2j, M = [[X, Y], [0, Z]], Z = -X': the even powers are
    [[X^2k, Y_2k], [0, (X^2k)']] with Y_2 = X Y + Y Z and Y_2k+2 = X^2k Y_2 + Y_2k (X^2)'; V's and O's bottom
    right blocks are V11' and O11' (not formed). work (6, n, n)."""
    n = X.shape[0]
    X2, Y2, Xp, Yp, scratch, other = work[0], work[1], work[2], work[3], work[4], work[5]
    multiply(X, X, X2)
    multiply(X, Y, Y2)
    multiply(Y, X.T, scratch)
    for i in range(n):
        for c in range(n):
            Y2[i, c] -= scratch[i, c]
            V11[i, c] = b[2] * X2[i, c]
            V12[i, c] = b[2] * Y2[i, c]
            O11[i, c] = b[3] * X2[i, c]
            O12[i, c] = b[3] * Y2[i, c]
        V11[i, i] += b[0]
        O11[i, i] += b[1]
    Xp[:, :] = X2
    Yp[:, :] = Y2
    for j in range(4, b.size, 2):
        multiply(Xp, Y2, scratch)
        multiply(Yp, X2.T, other)
        for i in range(n):
            for c in range(n):
                Yp[i, c] = scratch[i, c] + other[i, c]
        multiply(Xp, X2, other)
        Xp[:, :] = other
        for i in range(n):
            for c in range(n):
                V11[i, c] += b[j] * Xp[i, c]
                V12[i, c] += b[j] * Yp[i, c]
                O11[i, c] += b[j + 1] * Xp[i, c]  # m is odd: b_j+1 exists for every even j < m
                O12[i, c] += b[j + 1] * Yp[i, c]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _van_loan_pade(X: np.ndarray, Y: np.ndarray, b: np.ndarray, E11: np.ndarray, E12: np.ndarray,
                   E22: np.ndarray, work: np.ndarray, right: np.ndarray) -> None:  # pragma: no cover
    """The blocks of r_m(M) = (V - U)^-1 (V + U), M = [[X, Y], [0, -X']], U = M O (module docstring): with
    P = V11 - U11 and Q = V11 + U11 (U22 = -U11'), r_m's blocks are R22 = Q'^-1 P', R11 = P^-1 Q and
    R12 = P^-1 ((V12 + U12) - (V12 - U12) R22). work (10, n, n), right (n, 2 n) scratch."""
    n = X.shape[0]
    V11, V12, O11, O12 = work[0], work[1], work[2], work[3]
    _powers(X, Y, b, V11, V12, O11, O12, work[4:10])
    U11, U12, scratch = work[4], work[5], work[6]
    multiply(X, O11, U11)
    multiply(X, O12, U12)
    multiply(Y, O11.T, scratch)
    U12 += scratch
    Qt = work[7]
    for i in range(n):
        for j in range(n):
            Qt[i, j] = V11[j, i] + U11[j, i]
            E22[i, j] = V11[j, i] - U11[j, i]  # P'
            right[i, j] = V11[i, j] + U11[i, j]  # Q
            scratch[i, j] = V12[i, j] - U12[i, j]
    lu_solve(Qt, E22)
    multiply(scratch, E22, Qt)
    for i in range(n):
        for j in range(n):
            right[i, n + j] = V12[i, j] + U12[i, j] - Qt[i, j]
            V12[i, j] = V11[i, j] - U11[i, j]  # P
    lu_solve(V12, right)
    E11[:, :] = right[:, :n]
    E12[:, :] = right[:, n:]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def van_loan_exponential(X: np.ndarray, Y: np.ndarray, E11: np.ndarray, E12: np.ndarray, E22: np.ndarray,
                         work: np.ndarray, wide: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """The blocks of expm([[X, Y], [0, -X']]) = [[E11, E12], [0, E22]] (X, Y (n, n)): the exponential of Van
    Loan's method for the process noise (C. F. Van Loan, "Computing integrals involving the matrix exponential",
    IEEE TAC 23(3), 1978) by the scaling and squaring of Higham (2005) written in blocks, so that every product is
    n x n: half the work of the whole 2n x 2n matrix. work (14, n, n), wide (n, 2 n) scratch. NaNs in X or Y
    give NaNs."""
    norm = _norm(X, Y)
    if norm <= PADE_THETA[0]:
        _van_loan_pade(X, Y, PADE_B3, E11, E12, E22, work, wide)
    elif norm <= PADE_THETA[1]:
        _van_loan_pade(X, Y, PADE_B5, E11, E12, E22, work, wide)
    elif norm <= PADE_THETA[2]:
        _van_loan_pade(X, Y, PADE_B7, E11, E12, E22, work, wide)
    elif norm <= PADE_THETA[3]:
        _van_loan_pade(X, Y, PADE_B9, E11, E12, E22, work, wide)
    else:
        s = max(0, math.ceil(math.log2(norm / PADE_THETA[4]))) if np.isfinite(norm) else 0
        Xs, Ys, left, right = work[10], work[11], work[12], work[13]
        Xs[:, :] = X * (0.5 ** s)
        Ys[:, :] = Y * (0.5 ** s)
        _van_loan_pade(Xs, Ys, PADE_B13, E11, E12, E22, work, wide)
        for _ in range(s):  # [[E11, E12], [0, E22]]^2 = [[E11^2, E11 E12 + E12 E22], [0, E22^2]]
            multiply(E11, E12, left)
            multiply(E12, E22, right)
            for i in range(E12.shape[0]):
                for j in range(E12.shape[1]):
                    E12[i, j] = left[i, j] + right[i, j]
            multiply(E11, E11, left)
            E11[:, :] = left
            multiply(E22, E22, left)
            E22[:, :] = left
