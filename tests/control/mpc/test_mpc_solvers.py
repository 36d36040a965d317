"""The QP solvers behind one call: each installed one equals scipy's trust-constr on a small bounded QP and satisfies
its KKT conditions; infeasible bounds give the status; a QP without bounds is solved directly; names are checked."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from mpc_cases import SOLVERS
from scipy.optimize import Bounds, LinearConstraint, minimize

from robodyn.base.errors import InputError
from robodyn.control.mpc.formulation import QP
from robodyn.control.mpc.solvers import AUTO, PROXQP_CAP, STATUSES, TOLERANCE, DirectSolver, FallbackSolver, make_solver


def small_qp() -> tuple[QP, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """min 1/2 z'Pz + q'z, z1 + z2 + z3 + z4 = 1, -0.3 <= z_i <= 0.6 (z_4 = 0.6 at the optimum)."""
    rng = np.random.default_rng(48)
    M = rng.standard_normal((4, 4))
    P = M @ M.T + 0.5 * np.eye(4)
    q = np.array([-1.0, 2.0, 0.5, -3.0])
    E = np.ones((1, 4))
    G = np.eye(4)
    qp = QP(sp.csc_matrix(P), sp.csc_matrix(E), sp.csc_matrix(G), np.ones(4, bool), np.ones(4, bool), dense=False)
    return qp, q, np.array([1.0]), np.full(4, -0.3), np.full(4, 0.6)


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    qp, q, b, lo, hi = small_qp()
    P = qp.P.toarray()
    result = minimize(lambda z: 0.5 * z @ P @ z + q @ z, np.full(4, 0.25), jac=lambda z: P @ z + q,
                      hess=lambda z: P, method="trust-constr", bounds=Bounds(lo, hi),
                      constraints=[LinearConstraint(qp.E.toarray(), b, b)],
                      options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 5000})
    assert result.success
    return np.asarray(result.x)


@pytest.mark.parametrize("solver", SOLVERS)
def test_each_solver_equals_trust_constr_and_meets_the_kkt_conditions(solver: str, reference: np.ndarray) -> None:
    qp, q, b, lo, hi = small_qp()
    answer = make_solver(solver, qp).solve(q, b, lo, hi, None, False)
    assert answer.status == "solved" and answer.iterations > 0
    active = np.isclose(answer.z, lo, atol=1e-7) | np.isclose(answer.z, hi, atol=1e-7)
    assert active.sum() == 1  # the case has an active bound (z_4 at 0.6)
    # trust-constr (an interior point with barrier) ends ~1e-8 from the bounds it touches: 1e-6 (the bound
    # between two QP solvers)
    np.testing.assert_allclose(answer.z, reference, atol=1e-6)
    # the KKT conditions, solved exactly by numpy on the active set: stationarity with the right signs
    P = qp.P.toarray()
    C = np.vstack([qp.E.toarray(), np.eye(4)[active]])
    kkt = np.block([[P, C.T], [C, np.zeros((C.shape[0], C.shape[0]))]])
    at = np.where(np.isclose(answer.z, hi, atol=1e-7), hi, lo)[active]
    exact = np.linalg.solve(kkt, np.r_[-q, b, at])
    multipliers = exact[5:]
    upper = np.isclose(answer.z, hi, atol=1e-7)[active]
    assert np.all(np.where(upper, multipliers, -multipliers) >= 0)  # the bounds push the right way: optimal
    np.testing.assert_allclose(answer.z, exact[:4], atol=1e-7)  # the solvers' tolerance 1e-10, Clarabel's ~1e-8


@pytest.mark.parametrize("solver", SOLVERS)
def test_infeasible_bounds_give_the_status(solver: str) -> None:
    qp, q, _, lo, hi = small_qp()
    answer = make_solver(solver, qp).solve(q, np.array([3.0]), lo, hi, None, False)  # 4 x 0.6 < 3
    assert answer.status == "infeasible" and answer.status in STATUSES


def test_without_bounds_the_kkt_equations_are_solved_directly() -> None:
    qp, q, b, _, _ = small_qp()
    free = QP(qp.P, qp.E, sp.csc_matrix((0, 4)), np.zeros(0, bool), np.zeros(0, bool), dense=False)
    solver = make_solver(SOLVERS[0], free)
    assert isinstance(solver, DirectSolver)
    answer = solver.solve(q, b, np.zeros(0), np.zeros(0), None, False)
    P = qp.P.toarray()
    exact = np.linalg.solve(np.block([[P, np.ones((4, 1))], [np.ones((1, 4)), np.zeros((1, 1))]]), np.r_[-q, b])
    np.testing.assert_allclose(answer.z, exact[:4], rtol=1e-13)  # two LU factorizations of one system
    assert answer.status == "solved" and answer.iterations == 0


def dense_qp() -> tuple[QP, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """small_qp() with its matrices marked dense (the condensed form's; its equality row kept)."""
    qp, q, b, lo, hi = small_qp()
    return QP(qp.P, qp.E, qp.G, qp.lower, qp.upper, dense=True), q, b, lo, hi


@pytest.mark.skipif(not {"proxsuite", "clarabel"} <= set(SOLVERS), reason="needs ProxQP and Clarabel")
def test_auto_solves_with_proxqp_and_hands_an_unsolved_step_to_clarabel() -> None:
    qp, q, b, lo, hi = dense_qp()
    # the exact solution: the KKT equations of its active set (the equality and z_4 = 0.6), solved by numpy
    rows = np.vstack([np.ones(4), [0.0, 0.0, 0.0, 1.0]])
    kkt = np.block([[qp.P.toarray(), rows.T], [rows, np.zeros((2, 2))]])
    reference = np.linalg.solve(kkt, np.r_[-q, b, hi[3]])[:4]
    solver = make_solver(AUTO, qp)
    assert isinstance(solver, FallbackSolver)
    answer = solver.solve(q, b, lo, hi, None, False)
    assert answer.status == "solved" and answer.solver == "proxsuite"
    np.testing.assert_allclose(answer.z, reference, atol=1e-8)  # tolerance 1e-10 (measured: 1.4e-10)
    stuck = solver.solve(q, np.array([3.0]), lo, hi, None, True)  # 4 x 0.6 < 3: infeasible
    assert stuck.status == "infeasible" and stuck.solver == "clarabel"
    assert "proxsuite" in stuck.detail  # what ProxQP said before Clarabel took the step
    assert stuck.iterations <= PROXQP_CAP + 200  # ProxQP capped, then Clarabel's interior point (its own limit)
    again = solver.solve(q, b, lo, hi, None, True)  # ProxQP again, cold after the handed step
    assert again.status == "solved" and again.solver == "proxsuite"
    np.testing.assert_allclose(again.z, reference, atol=1e-8)


def test_auto_is_clarabel_on_the_sparse_form() -> None:
    qp, *_ = small_qp()
    assert make_solver(AUTO, qp).name == "clarabel"


def test_names_and_tolerances() -> None:
    qp, *_ = small_qp()
    with pytest.raises(InputError, match="unknown QP solver 'gurobi'"):
        make_solver("gurobi", qp)
    assert set(TOLERANCE) == {"osqp", "clarabel", "proxsuite"} and all(0 < t <= 1e-4 for t in TOLERANCE.values())
