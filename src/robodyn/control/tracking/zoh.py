"""The exact zero-order-hold models of many intervals at once, one compiled call for the whole stack.

Phi_k = e^{A_k h_k} and Gamma_k = integral_0^{h_k} e^{A_k s} ds B_k are the top block row of
E_k = expm(h_k [[A_k, B_k], [0, 0]]) (Van Loan, "Computing integrals involving the matrix exponential", IEEE TAC 23(3),
1978), computed from top block rows only (the bottom rows of every power of [[A, B], [0, 0]] are zero: a third of
the products of the whole matrix). Each exponential is the scaling and squaring of a diagonal Padé approximant,
degree 3, 5, 7, 9 or 13 chosen from the 1-norm so that the backward error stays below the unit roundoff (Higham,
"The scaling and squaring method for the matrix exponential revisited", SIAM J. Matrix Anal. Appl. 26(4), 2005,
algorithm 2.3: its theta_m and Padé coefficients b_j, :mod:`robodyn.control.pade`'s). scipy's ``expm`` (Al-Mohy &
Higham 2009) refines the same algorithm; the two agree to a few units of roundoff
(tests/control/tracking/test_tracking_zoh.py). Compiled over the stack, the Panda's 1,000 exponentials take ~15 ms
where scipy's stacked call took ~35 ms (benchmarks/RESULTS.md, issue 47), on one thread; long stacks run in one
thread per CPU (the kernel releases the GIL).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numpy.typing import NDArray

from robodyn.base.threads import in_pieces
from robodyn.control.pade import PADE_B3, PADE_B5, PADE_B7, PADE_B9, PADE_B13, PADE_THETA, lu_solve

__all__ = ["zoh_models"]

Array = NDArray[np.float64]

@numba.njit(cache=True, nogil=True, error_model="numpy")
def _hold_pade(F: np.ndarray, G: np.ndarray, b: np.ndarray) -> np.ndarray:  # pragma: no cover - runs compiled only
    """The top block row (n, n + m) of r_m(M), M = [[F, G], [0, 0]], m = b.size - 1 <= 13, from products of n rows
    only: the top rows of M^j are F^(j-1) [F, G], those of a polynomial c_0 I + sum c_j M^j are [c_0 I, 0] plus
    theirs, and its bottom rows [0, c_0 I]; so V - U = [[P, X], [0, b_0 I]], V + U = [[P', X'], [0, b_0 I]] and
    r_m(M)'s top row is P^-1 [P', X' - X]."""
    n, m = G.shape
    top = np.empty((n, n + m))
    top[:, :n] = F
    top[:, n:] = G
    square = F @ top  # top rows of M^2
    power = np.zeros((n, n + m))
    V = np.zeros((n, n + m))
    odd = np.zeros((n, n + m))  # top rows of b_1 I + b_3 M^2 + ... (its bottom rows: [0, b_1 I])
    for i in range(n):
        power[i, i] = 1.0
        V[i, i] = b[0]
        odd[i, i] = b[1]
    for j in range(2, b.size, 2):
        power = np.ascontiguousarray(power[:, :n]) @ square
        V += b[j] * power
        if j + 1 < b.size:
            odd += b[j + 1] * power
    U = F @ odd
    U[:, n:] += b[1] * G
    P = V[:, :n] - U[:, :n]
    X = np.empty((n, n + m))
    X[:, :n] = V[:, :n] + U[:, :n]
    X[:, n:] = 2.0 * U[:, n:]  # X' - X = (V + U) - (V - U) in the top-right block
    solved = np.ascontiguousarray(X)
    lu_solve(P, solved)
    return solved


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _hold_exponential(F: np.ndarray, G: np.ndarray) -> np.ndarray:  # pragma: no cover - runs compiled only
    """The top block row (n, n + m) of expm([[F, G], [0, 0]]): Padé of degree 3 to 9 by the 1-norm, else Padé 13
    with scaling and squarings, top rows only: [E_11, E_12]^2 = [E_11^2, E_11 E_12 + E_12]."""
    n, m = G.shape
    norm = 0.0
    for c in range(n):
        norm = max(norm, np.sum(np.abs(F[:, c])))
    for c in range(m):
        norm = max(norm, np.sum(np.abs(G[:, c])))
    if norm <= PADE_THETA[0]:
        return _hold_pade(F, G, PADE_B3)
    if norm <= PADE_THETA[1]:
        return _hold_pade(F, G, PADE_B5)
    if norm <= PADE_THETA[2]:
        return _hold_pade(F, G, PADE_B7)
    if norm <= PADE_THETA[3]:
        return _hold_pade(F, G, PADE_B9)
    s = max(0, math.ceil(math.log2(norm / PADE_THETA[4])))
    top = _hold_pade(F / 2.0 ** s, G / 2.0 ** s, PADE_B13)
    for _ in range(s):
        left = np.ascontiguousarray(top[:, :n])
        right = left @ np.ascontiguousarray(top[:, n:]) + top[:, n:]
        top[:, :n] = left @ left
        top[:, n:] = right
    return top


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _zoh_stack(A: np.ndarray, B: np.ndarray, h: np.ndarray, Phi: np.ndarray,
               Gamma: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    n = A.shape[1]
    for k in range(B.shape[0]):
        top = _hold_exponential(A[k] * h[k], B[k] * h[k])
        Phi[k] = top[:, :n]
        Gamma[k] = top[:, n:]


def zoh_models(A: Array, B: Array, h: Array) -> tuple[Array, Array]:
    """(Phi (K, n, n), Gamma (K, n, m)) of ``A`` (K, n, n), ``B`` (K, n, m) held over the intervals ``h`` (K,)."""
    K, n, m = B.shape
    Phi, Gamma = np.empty((K, n, n)), np.empty((K, n, m))
    A, B = np.ascontiguousarray(A, dtype=float), np.ascontiguousarray(B, dtype=float)
    h = np.ascontiguousarray(h, dtype=float)
    in_pieces(lambda a, b: _zoh_stack(A[a:b], B[a:b], h[a:b], Phi[a:b], Gamma[a:b]), K, 64)  # ~15 us each
    return Phi, Gamma
