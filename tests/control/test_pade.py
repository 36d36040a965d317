"""The compiled exponential of Van Loan's block matrix (robodyn.control.pade) against scipy.linalg.expm (Al-Mohy &
Higham 2009) of the whole 2n x 2n matrix, and its products and solve against numpy.

Each branch of the Padé degree choice (1-norms below theta_3, theta_5, theta_7, theta_9 and above theta_13 with
squarings) is taken by scaling random blocks.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from robodyn.control.pade import PADE_THETA, lu_solve, multiply, van_loan_exponential


def _blocks(n: int, norm: float, symmetric: bool, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """X, Y (n, n) with the 1-norm of [[X, Y], [0, -X']] equal to ``norm``."""
    rng = np.random.default_rng(seed)
    X, G = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    Y = G @ G.T if symmetric else G
    whole = np.block([[X, Y], [np.zeros((n, n)), -X.T]])
    scale = norm / np.abs(whole).sum(axis=0).max()
    return X * scale, Y * scale


@pytest.mark.parametrize("norm", [1e-3, 0.2, 0.9, 2.0, 5.0, 40.0])
@pytest.mark.parametrize("symmetric", [True, False])
def test_the_block_exponential_is_scipys_exponential_of_the_whole_matrix(norm: float, symmetric: bool) -> None:
    n = 7
    X, Y = _blocks(n, norm, symmetric, seed=int(norm * 10) + symmetric)
    E11, E12, E22 = np.empty((n, n)), np.empty((n, n)), np.empty((n, n))
    van_loan_exponential(X, Y, E11, E12, E22, np.empty((14, n, n)), np.empty((n, 2 * n)))
    E = scipy.linalg.expm(np.block([[X, Y], [np.zeros((n, n)), -X.T]]))
    # both backward stable to the unit roundoff; the squarings at norm 40 lose a few bits: 1e-12 of the largest entry
    # (measured: 4e-16 to 2e-15)
    scale = np.abs(E).max()
    for mine, theirs in ((E11, E[:n, :n]), (E12, E[:n, n:]), (E22, E[n:, n:])):
        assert np.max(np.abs(mine - theirs)) <= 1e-12 * scale


def test_the_degrees_cover_the_norms_tested() -> None:
    """The norms above fall one in each branch of Higham's choice (a test of the test)."""
    edges = np.searchsorted(PADE_THETA, [1e-3, 0.2, 0.9, 2.0, 5.0, 40.0])
    assert list(edges) == [0, 1, 2, 3, 4, 5]


def test_a_nan_gives_nans() -> None:
    n = 3
    X, Y = np.full((n, n), np.nan), np.eye(n)
    E11, E12, E22 = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    van_loan_exponential(X, Y, E11, E12, E22, np.empty((14, n, n)), np.empty((n, 2 * n)))
    assert np.isnan(E22).all() and np.isnan(E12).all()


def test_multiply_and_lu_solve_are_numpys() -> None:
    rng = np.random.default_rng(5)
    A, B = rng.standard_normal((5, 4)), rng.standard_normal((4, 6))
    A[1, 2] = 0.0  # a skipped row of B
    out = np.empty((5, 6))
    multiply(A, B, out)
    np.testing.assert_allclose(out, A @ B, rtol=0, atol=1e-14)  # sums of 4 products of numbers of order 1
    M, X = rng.standard_normal((6, 6)), rng.standard_normal((6, 3))
    M[0, 0] = 1e-9  # pivoting needed
    solved = X.copy()
    lu_solve(M.copy(), solved)
    np.testing.assert_allclose(M @ solved, X, rtol=0, atol=1e-12)  # a residual of a well-conditioned solve
    np.testing.assert_allclose(solved, np.linalg.solve(M, X), rtol=1e-10, atol=0)
