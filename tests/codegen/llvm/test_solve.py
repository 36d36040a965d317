"""The sparse solve of a tree's factor in LLVM IR on addresses (robodyn.codegen.llvm.solve) against numba's
robodyn.codegen.linalg.tree_solve: the same bits (every entry undergoes the same operations in the same order), only
where its plan says, on random trees of every depth and branching, any width of the right-hand sides (vector lanes
and the scalar tail) and a block; a zero pivot passes through as non-finite."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn.codegen.linalg import tree_solve
from robodyn.codegen.llvm.solve import LANES, tree_solve_ir, tree_solve_plan


def _tree(rng: np.random.Generator, n: int) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """A leaves-first factor L of a random tree's M (L[i, j] != 0 only for j below i on one root path: no fill-in)
    and its pattern (starts, columns, order)."""
    parents = [-1] + [int(rng.integers(-1, k)) for k in range(1, n)]  # -1: another root
    ancestors = []
    for k in range(n):
        chain, node = [], parents[k]
        while node >= 0:
            chain.append(node)
            node = parents[node]
        ancestors.append(chain)
    # leaves first: index i of the factor is node n - 1 - i; L[i, j] with j < i is a descendant's entry
    L = np.zeros((n, n))
    starts, columns = [0], []
    for i in range(n):
        node = n - 1 - i
        below = sorted(n - 1 - d for d in range(n) if node in ancestors[d])
        for j in below:
            L[i, j] = rng.normal()
        L[i, i] = rng.uniform(1.0, 2.0)
        columns += below
        starts.append(len(columns))
    return L, (np.array(starts), np.array(columns, dtype=np.int64), rng.permutation(n))


def _solve_both(L: np.ndarray, G: np.ndarray, pattern: tuple[np.ndarray, ...], split: int, nb: int, stride: int,
                rng: np.random.Generator) -> tuple[float, float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n, k = G.shape
    block = rng.normal(size=(nb, nb))
    left, right, target = np.empty((n, split)), np.empty((n, k - split)), np.empty((nb, nb))
    expected = tree_solve(L.copy(), G.copy(), pattern[0], pattern[1], pattern[2], -1.0, left, right, block, target)
    parts = np.concatenate([L.ravel(), G.ravel(), block.ravel()])
    left_at = max(nb * stride, 5)
    right_at = left_at + n * split + 3
    out = np.full(right_at + n * (k - split) + 4, 7.0)
    plan = tree_solve_plan((n, k, split), parts.size, (left_at, right_at, out.size), (n * n + n * k, nb, stride),
                           pattern)
    total = tree_solve_ir()(*(a.ctypes.data for a in (parts, plan, out)))
    got_left = out[left_at: left_at + n * split].reshape(n, split)
    got_right = out[right_at: right_at + n * (k - split)].reshape(n, k - split)
    np.testing.assert_array_equal(got_left, left)
    np.testing.assert_array_equal(got_right, right)
    np.testing.assert_array_equal(out[: nb * stride].reshape(nb, stride)[:, :nb], target)
    written = np.zeros(out.size, dtype=bool)
    written[left_at: left_at + n * split] = written[right_at: right_at + n * (k - split)] = True
    written[: nb * stride].reshape(nb, stride)[:, :nb] = True
    assert (out[~written] == 7.0).all()  # nothing else
    return total, expected, left, right, target, block


@settings(max_examples=40)
@given(st.integers(1, 24), st.integers(1, 3 * LANES + 3), st.integers(0, 4), st.integers(0, 2 ** 32 - 1))
def test_the_ir_solve_equals_numbas_bit_for_bit(n: int, k: int, nb: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    L, pattern = _tree(rng, n)
    split = int(rng.integers(0, k + 1))
    total, expected, *_ = _solve_both(L, rng.normal(size=(n, k)), pattern, split, min(nb, n), max(nb, 1) + 2, rng)
    # the same entries summed in another order: equal to rounding
    assert total == pytest.approx(expected, rel=1e-9, abs=1e-9 * max(1.0, abs(expected)))


def test_a_humanoid_sized_solve_against_a_dense_solve() -> None:
    """38 rows, 108 columns (13 vectors and a tail): -M^-1 G within cond(M) eps of numpy's dense solve."""
    rng = np.random.default_rng(38)
    L, pattern = _tree(rng, 38)
    G = rng.normal(size=(38, 108))
    _, _, left, right, _, _ = _solve_both(L, G, pattern, 76, 6, 76, rng)
    M = L @ L.T  # the factor's M in the factor's order (leaves first): L Z = G, then L^T X = Z
    expected = -np.linalg.solve(M, G)
    solved = np.empty_like(expected)
    solved[:] = np.hstack([left, right])[pattern[2]]  # rows back in factor order
    tolerance = 10 * np.linalg.cond(M) * np.finfo(float).eps * np.abs(expected).max()
    assert np.abs(solved - expected).max() <= tolerance


def test_a_zero_pivot_passes_through_as_non_finite() -> None:
    L = np.array([[1.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.2, 1.0]])
    pattern = (np.array([0, 0, 1, 2]), np.array([0, 1]), np.arange(3))
    parts = np.concatenate([L.ravel(), np.ones(9)])
    out = np.zeros(9)
    plan = tree_solve_plan((3, 3, 2), parts.size, (0, 6, 9), (0, 0, 0), pattern)
    assert not np.isfinite(tree_solve_ir()(*(a.ctypes.data for a in (parts, plan, out))))
