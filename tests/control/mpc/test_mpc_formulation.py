"""The MPC's QP in its two forms: the sparse equalities hold on a simulated trajectory, the condensed prediction
equals the recursion x+ = A x + B u + c, both forms have the same optimum (numpy's KKT solve), and the shift of a
warm start."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from robodyn.control.mpc.formulation import CondensedForm, SparseForm, shift_blocks
from robodyn.control.mpc.plant import Plant

N = 6


@pytest.fixture
def plant() -> Plant:
    rng = np.random.default_rng(48)
    A = np.eye(3) + 0.1 * rng.standard_normal((3, 3))
    B = rng.standard_normal((3, 2))
    c = 0.01 * rng.standard_normal(3)
    x_op, u_op = rng.standard_normal(3), rng.standard_normal(2)
    return Plant(A, B, c, x_op, u_op, 0.1, ("a", "b", "c"), ("u", "v"), "random", True)


def boxes() -> tuple[np.ndarray, np.ndarray]:
    x_box = np.array([[-np.inf, np.inf], [-1.0, np.inf], [-2.0, 2.0]])
    u_box = np.array([[-1.0, 1.0], [-np.inf, np.inf]])
    return x_box, u_box


def simulate(plant: Plant, x0: np.ndarray, U: np.ndarray) -> np.ndarray:
    """The deviations' states x_0 ... x_N under the inputs U (N, m), by the recursion."""
    states = [x0]
    for u in U:
        states.append(plant.A @ states[-1] + plant.B @ u + plant.c)
    return np.array(states)


def test_sparse_equalities_hold_on_a_simulated_trajectory(plant: Plant) -> None:
    form = SparseForm(plant, N, np.eye(3), np.eye(2), np.eye(3), *boxes())
    rng = np.random.default_rng(1)
    x0, U = rng.standard_normal(3), rng.standard_normal((N, 2))
    X = simulate(plant, x0, U)
    _, b, _, _ = form.vectors(x0, np.zeros((N + 1, 3)), np.zeros((N, 2)))
    z = np.concatenate([X.ravel(), U.ravel()])
    np.testing.assert_allclose(form.qp.E @ z, b, atol=1e-13)  # the same products in another order: rounding
    states, inputs = form.plan(x0, z)
    np.testing.assert_array_equal(states, X)  # the variables themselves
    np.testing.assert_array_equal(inputs, U)


def test_condensed_prediction_is_the_recursion(plant: Plant) -> None:
    form = CondensedForm(plant, N, np.eye(3), np.eye(2), np.eye(3), *boxes())
    rng = np.random.default_rng(2)
    x0, U = rng.standard_normal(3), rng.standard_normal((N, 2))
    states, _ = form.plan(x0, U.ravel())
    np.testing.assert_allclose(states, simulate(plant, x0, U), atol=1e-12)  # powers of A vs the recursion: rounding


def test_both_forms_have_the_same_optimum_and_bounds(plant: Plant) -> None:
    rng = np.random.default_rng(3)
    Q, R, Qf = np.diag([1.0, 2.0, 0.5]), np.diag([0.1, 0.3]), 3.0 * np.eye(3)
    x0, r, v = rng.standard_normal(3), rng.standard_normal((N + 1, 3)), rng.standard_normal((N, 2))
    plans, margins = [], []
    for kind in (SparseForm, CondensedForm):
        form = kind(plant, N, Q, R, Qf, *boxes())
        q, b, lo, _ = form.vectors(x0, r, v)
        P, E = form.qp.P.toarray(), form.qp.E.toarray()
        kkt = np.block([[P, E.T], [E, np.zeros((E.shape[0], E.shape[0]))]])
        z = np.linalg.solve(kkt, np.concatenate([-q, b]))[:P.shape[0]]  # without the bounds: the KKT equations
        plans.append(form.plan(x0, z))
        # the bound rows, stage by stage: input u (both sides), then states b (lower only) and c (both sides)
        np.testing.assert_array_equal(form.qp.lower, np.ones(3 * N, bool))
        np.testing.assert_array_equal(form.qp.upper, np.r_[np.ones(N, bool), np.tile([False, True], N)])
        assert sp.issparse(form.qp.P) and form.qp.P.format == "csc"
        margins.append(np.where(form.qp.lower, form.qp.G @ z - lo, 0.0))
    np.testing.assert_allclose(plans[0][0], plans[1][0], atol=1e-10)  # two factorizations of one problem
    np.testing.assert_allclose(plans[0][1], plans[1][1], atol=1e-10)
    states, inputs = plans[0]
    x_box, u_box = boxes()
    expected = np.r_[inputs[:, 0] - (u_box[0, 0] - plant.u_op[0]),
                     np.ravel(states[1:, 1:] - (x_box[1:, 0] - plant.x_op[1:]))]
    for margin in margins:  # the distance to each lower bound, in deviations: the same in both forms
        np.testing.assert_allclose(margin, expected, atol=1e-10)


def test_shift_moves_each_run_one_block() -> None:
    vector = np.arange(10.0)  # runs: 3 blocks of 2, then 4 blocks of 1
    np.testing.assert_array_equal(shift_blocks(vector, ((2, 3), (1, 4))), [2, 3, 4, 5, 4, 5, 7, 8, 9, 9])
    np.testing.assert_array_equal(shift_blocks(np.zeros(0), ((0, 5),)), np.zeros(0))
