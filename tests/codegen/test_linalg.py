"""The compiled sparse solve of a tree's leaves-first factor (robodyn.codegen.linalg.tree_solve) against numpy's dense
solve, with the pattern read from a tape's structural zeros (robodyn.rigid.dynamics.TreeProgram.factor_pattern)."""

from __future__ import annotations

import numpy as np

from robodyn.codegen.linalg import tree_solve
from robodyn.rigid.dynamics import TreeProgram
from robodyn.rigid.rnea import TreeFactor
from robodyn.rigid.tape import Tape

PARENTS = [-1, 0, 1, 1, 3, -1, 5, 2, 6]  # two subtrees, a branch, depth 5


def _tree_matrix(rng: np.random.Generator) -> np.ndarray:
    """A symmetric positive definite matrix with a tree's pattern: M_ij = 0 unless i and j are on one root path."""
    n = len(PARENTS)
    ancestors = []
    for k in range(n):
        chain, node = set(), k
        while node >= 0:
            chain.add(node)
            node = PARENTS[node]
        ancestors.append(chain)
    L = np.zeros((n, n))  # M = L^T L with L[i, j] != 0 only for j an ancestor of i: the tree's pattern, no fill-in
    for i in range(n):
        for j in ancestors[i]:
            L[i, j] = rng.uniform(1.0, 2.0) if i == j else rng.normal()
    return L.T @ L


class _Program(TreeProgram):
    """The factor's order and pattern of a TreeProgram, over a given matrix on a tape."""

    def __init__(self, tape: Tape, matrix: list[list], order: list[int]):
        self.tape, self._order, self._matrix = tape, order, matrix

    @property
    def tree(self) -> TreeFactor:  # type: ignore[override]
        return TreeFactor(self._matrix, self._order)


def test_the_sparse_solve_of_a_leaves_first_factor_equals_a_dense_solve() -> None:
    rng = np.random.default_rng(8)
    M = _tree_matrix(rng)
    n, k, split = M.shape[0], 7, 4
    tape = Tape()
    leaves = tape.leaves(1, n * n)
    zero = tape.const(0.0)
    matrix = [[leaves[i * n + j] if M[i, j] != 0 else zero for j in range(n)] for i in range(n)]
    order = list(reversed(range(n)))  # parents first reversed: leaves first
    program = _Program(tape, matrix, order)
    starts, columns = program.factor_pattern()
    assert len(columns) < n * (n - 1) // 2  # the tree's zeros stay zeros: a sparse pattern
    lower = np.array(tape.evaluate([e for row in program.tree.lower for e in row], [[], M.ravel()])).reshape(n, n)
    G = rng.normal(size=(n, k))
    left, right = np.empty((n, split)), np.empty((n, k - split))
    block, target = rng.normal(size=(2, 3)), np.empty((2, 3))
    total = tree_solve(lower, G[order].copy(), np.array(starts), np.array(columns), np.array(order), -1.0, left,
                       right, block, target)
    expected = -np.linalg.solve(M, G)
    # a backward-stable solve: error ~ cond(M) eps |X|
    tolerance = 10 * np.linalg.cond(M) * np.finfo(float).eps * np.abs(expected).max()
    assert np.abs(np.hstack([left, right]) - expected).max() <= tolerance
    np.testing.assert_array_equal(target, block)
    assert abs(total - (expected.sum() + block.sum())) <= n * k * tolerance  # the sum of what it wrote


def test_a_zero_pivot_passes_through_as_non_finite() -> None:
    n = 3
    lower = np.array([[1.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.2, 1.0]])  # the second pivot is zero
    left, right = np.empty((n, 2)), np.empty((n, 1))
    none = np.empty((0, 0))
    total = tree_solve(lower, np.ones((n, 3)), np.array([0, 0, 1, 2]), np.array([0, 1]), np.arange(n), -1.0, left,
                       right, none, none)
    assert not np.isfinite(total) and not np.isfinite(left).all()
