"""Tableaus against the Runge–Kutta order conditions (Butcher's rooted trees, [HNW] II.2) and scipy's data."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest
from scipy.integrate._ivp.rk import DOP853 as ScipyDOP853
from scipy.integrate._ivp.rk import RK45

from robodyn.base.errors import InputError
from robodyn.integrate.methods.tableaus import (
    ADAPTIVE,
    DOP853,
    DOPRI5,
    EULER,
    FIXED_STEP,
    HEUN,
    METHODS,
    RK4,
    ButcherTableau,
)

Tree = tuple["Tree", ...]  # a rooted tree is the sorted tuple of its root's subtrees; () is a single node


def _grow(tree: Tree) -> Iterator[Tree]:
    """Every tree with one node more, attached anywhere."""
    yield tuple(sorted((*tree, ())))
    for i, child in enumerate(tree):
        for bigger in _grow(child):
            yield tuple(sorted((*tree[:i], bigger, *tree[i + 1:])))


def _trees(max_order: int) -> list[list[Tree]]:
    by_order: list[list[Tree]] = [[], [()]]
    for _ in range(2, max_order + 1):
        by_order.append(sorted({bigger for tree in by_order[-1] for bigger in _grow(tree)}))
    return by_order


TREES = _trees(9)


def _phi(tree: Tree, A: np.ndarray) -> np.ndarray:
    """Stage vector of the elementary weight: prod over subtrees of A @ phi(subtree)."""
    out = np.ones(A.shape[0])
    for child in tree:
        out = out * (A @ _phi(child, A))
    return out


def _gamma(tree: Tree) -> int:
    order = 1 + sum(_size(child) for child in tree)
    return order * int(np.prod([_gamma(child) for child in tree]))


def _size(tree: Tree) -> int:
    return 1 + sum(_size(child) for child in tree)


def _max_residual(weights: np.ndarray, A: np.ndarray, order: int, theta: float = 1.0) -> float:
    """Largest |weights . phi(t) - theta^|t| / gamma(t)| over the trees of exactly ``order`` nodes."""
    return max(abs(weights @ _phi(tree, A) - theta ** _size(tree) / _gamma(tree)) for tree in TREES[order])


def test_tree_counts_are_butchers() -> None:
    # OEIS A000081: 1, 1, 2, 4, 9, 20, 48, 115, 286 rooted trees with 1..9 nodes.
    assert [len(level) for level in TREES[1:]] == [1, 1, 2, 4, 9, 20, 48, 115, 286]


def test_registry() -> None:
    assert set(METHODS) == {"euler", "heun", "rk4", "dopri5", "dop853"}
    assert FIXED_STEP == ("euler", "heun", "rk4") and ADAPTIVE == ("dopri5", "dop853")
    assert all(METHODS[name].adaptive for name in ADAPTIVE)
    assert not any(METHODS[name].adaptive for name in FIXED_STEP)
    assert all(name == tableau.name for name, tableau in METHODS.items())


@pytest.mark.parametrize("tableau", [EULER, HEUN, RK4, DOPRI5, DOP853], ids=lambda t: t.name)
def test_order_conditions(tableau: ButcherTableau) -> None:
    # Decimal coefficients (DOP853: 30 digits rounded to double) make the residuals rounding-sized; 1e-12
    # leaves room for the sums of up to 13 terms of size ~30 while a missed condition is >= 1e-4.
    for order in range(1, tableau.order + 1):
        assert _max_residual(tableau.b, tableau.A, order) < 1e-12, f"order {order}"
    # The order is sharp: some condition of the next order fails.
    assert _max_residual(tableau.b, tableau.A, tableau.order + 1) > 1e-6


@pytest.mark.parametrize(("tableau", "weights", "order"), [
    (DOPRI5, "e", 4),  # the embedded 4th-order solution
    (DOP853, "e", 5),  # E5: the 5th-order estimator
    (DOP853, "e3", 3),  # E3: the 3rd-order estimator
], ids=["dopri5-e", "dop853-e5", "dop853-e3"])
def test_embedded_methods_have_their_order(tableau: ButcherTableau, weights: str, order: int) -> None:
    b_hat = tableau.b - getattr(tableau, weights)  # e = b - b_hat
    for k in range(1, order + 1):
        assert _max_residual(b_hat, tableau.A, k) < 1e-12, f"order {k}"
    assert _max_residual(b_hat, tableau.A, order + 1) > 1e-6


@pytest.mark.parametrize("theta", [0.1, 0.37, 0.5, 0.9, 1.0])
def test_dopri5_dense_output_is_fourth_order(theta: float) -> None:
    # Continuous weights b_j(theta) = sum_r dense[r, j] theta^(r+1) satisfy the conditions with theta^|t|
    # ([HNW] II.6 (6.11)) up to order 4, and b(1) = b.
    assert DOPRI5.dense is not None
    b_theta = DOPRI5.dense.T @ theta ** np.arange(1, DOPRI5.dense.shape[0] + 1)
    for order in range(1, 5):
        assert _max_residual(b_theta, DOPRI5.A, order, theta) < 1e-14
    if theta == 1.0:
        np.testing.assert_allclose(b_theta, DOPRI5.b, rtol=0, atol=1e-14)


def test_dopri5_is_scipy_rk45() -> None:
    # Same published numbers: A, b, c exactly; the dense matrix is scipy's P transposed; e = -E (b - b_hat).
    assert DOPRI5.dense is not None and DOPRI5.e is not None
    np.testing.assert_array_equal(DOPRI5.A[:6, :5], RK45.A)
    np.testing.assert_array_equal(DOPRI5.b[:6], RK45.B)
    np.testing.assert_array_equal(DOPRI5.c[:6], RK45.C)
    np.testing.assert_allclose(DOPRI5.e, -RK45.E, rtol=0, atol=1e-18)
    np.testing.assert_allclose(DOPRI5.dense, RK45.P.T, rtol=0, atol=1e-15)
    assert DOPRI5.error_order == RK45.error_estimator_order


def test_dop853_is_scipy_dop853() -> None:
    assert DOP853.a_extra is not None and DOP853.c_extra is not None and DOP853.dense is not None
    np.testing.assert_array_equal(DOP853.A[:12, :12], ScipyDOP853.A)
    np.testing.assert_array_equal(DOP853.b[:12], ScipyDOP853.B)
    np.testing.assert_array_equal(DOP853.a_extra, ScipyDOP853.A_EXTRA)
    np.testing.assert_array_equal(DOP853.c_extra, ScipyDOP853.C_EXTRA)
    np.testing.assert_array_equal(DOP853.dense, ScipyDOP853.D)
    assert DOP853.error_order == ScipyDOP853.error_estimator_order


@pytest.mark.parametrize("tableau", [DOPRI5, DOP853], ids=lambda t: t.name)
def test_kernel_method_layout(tableau: ButcherTableau) -> None:
    (A, b, c, e, dense, error_order), e3 = tableau.kernel_method()
    s, q = tableau.stages, A.shape[0] - tableau.stages
    assert A.shape == (s + q, s + q) and c.shape == (s + q,) and e.shape == b.shape == (s,)
    assert dense.shape[1] == s + q and error_order == tableau.error_order
    assert (e3 is not None) == (tableau is DOP853)  # None lets the kernels prune DOP853's code
    if e3 is not None:
        np.testing.assert_array_equal(e3, tableau.e3)
    np.testing.assert_array_equal(A[:s, :s], tableau.A)
    assert np.all(np.triu(A) == 0.0)  # extra stages use only the stages before them
    for array in (A, b, c, e, dense, *([] if e3 is None else [e3])):
        assert array.flags.c_contiguous and array.flags.writeable  # one numba type for every method


def test_fixed_step_methods_have_no_kernel_method() -> None:
    with pytest.raises(InputError, match="fixed step"):
        RK4.kernel_method()


def test_arrays_are_read_only() -> None:
    with pytest.raises(ValueError, match="read-only"):
        RK4.A[1, 0] = 1.0


@pytest.mark.parametrize(("change", "message"), [
    ({"c": np.array([0.0, 0.4, 0.5, 1.0])}, "row 1 of A sums to"),
    ({"b": np.array([0.2, 0.3, 0.3, 0.1])}, "sum to"),
    ({"A": np.array(RK4.A) + 0.5 * np.eye(4)}, "strictly lower"),
    ({"fsal": True}, "fsal"),
    ({"e": np.ones(4) / 4}, "must sum to 0"),
    ({"e": np.zeros(4)}, "together"),
    ({"A": np.zeros((3, 3))}, "do not match"),
    ({"dense": np.zeros((2, 4))}, "together"),
])
def test_inconsistent_tableaus_raise_value_error(change: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        replace(RK4, **change)


def test_non_finite_coefficient_raises() -> None:
    with pytest.raises(InputError, match="non-finite"):
        ButcherTableau("bad", 1, A=np.zeros((1, 1)), b=np.array([np.nan]), c=np.zeros(1))
