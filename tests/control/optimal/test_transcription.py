"""Tests for robodyn.control.optimal.transcription: the layout, the quadratures and the defects against closed
forms, the sparse Jacobian against central differences of the transcription's own values."""

from __future__ import annotations

import numpy as np
import pytest
from tests.control.optimal.collocation_cases import QuadraticProblem, cart_pole

import robodyn
from robodyn.base.errors import InputError
from robodyn.control.optimal.transcription import TRANSCRIPTIONS, Transcription


def integrator(knots: int) -> QuadraticProblem:
    """x' = u (one state, one input) on [0, 1.5]."""
    system = robodyn.LinearSystem(np.zeros((1, 1)), np.ones((1, 1)), states=("x",), inputs=("u",))
    return QuadraticProblem(system, 1.5, knots, np.zeros(1), np.eye(1), np.eye(1), np.eye(1), linear=True)


@pytest.mark.parametrize("scheme", TRANSCRIPTIONS)
def test_layout_covers_the_decision_vector_once(scheme: str) -> None:
    tr = Transcription(cart_pole(5), scheme)
    lay = tr.layout
    every = np.concatenate([a.ravel() for a in (lay.X, lay.U, lay.XM, lay.UM)])
    np.testing.assert_array_equal(np.sort(every), np.arange(lay.size))
    assert len(set(zip(tr.rows.tolist(), tr.cols.tolist()))) == len(tr.rows)  # no repeated entry


@pytest.mark.parametrize(("scheme", "degree"), [("trapezoidal", 1), ("hermite_simpson", 3)])
def test_quadrature_is_exact_to_its_degree(scheme: str, degree: int) -> None:
    tr = Transcription(integrator(6), scheme)
    T = 1.5
    for power in range(degree + 1):  # trapezoid: exact for lines; Simpson: exact for cubics
        assert tr.weights @ tr.t**power == pytest.approx(T ** (power + 1) / (power + 1), rel=1e-13)
    assert abs(tr.weights @ tr.t ** (degree + 1) - T ** (degree + 2) / (degree + 2)) > 1e-6  # and no further


@pytest.mark.parametrize(("scheme", "degree"), [("trapezoidal", 1), ("hermite_simpson", 2)])
def test_defects_vanish_on_the_schemes_polynomials(scheme: str, degree: int) -> None:
    """x' = u with u a polynomial of the scheme's degree: the trapezoid (u linear) and Simpson plus the cubic
    Hermite midpoint (u quadratic, x cubic) are exact, so every defect is rounding."""
    coefficients = np.array([0.7, -1.3, 2.1])[: degree + 1]
    u = np.polynomial.Polynomial(coefficients)
    x = u.integ()
    tr = Transcription(integrator(5), scheme)
    z = np.zeros(tr.layout.size)
    N = tr.N
    z[tr.layout.X[:, 0]], z[tr.layout.U[:, 0]] = x(tr.t[: N + 1]), u(tr.t[: N + 1])
    z[tr.layout.XM[:, 0]], z[tr.layout.UM[:, 0]] = x(tr.t[N + 1 :]), u(tr.t[N + 1 :])
    assert np.max(np.abs(tr.constraints(z, tr.evaluate(z)))) < 1e-14
    z[tr.layout.U[2, 0]] += 1e-3  # and a defect sees a wrong input
    assert np.max(np.abs(tr.constraints(z, tr.evaluate(z)))) > 1e-5


@pytest.mark.parametrize("scheme", TRANSCRIPTIONS)
def test_jacobian_equals_central_differences(scheme: str) -> None:
    def speed(t: float, x: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.array([x[2] ** 2 - 1.0, x[0] * u[0]]), np.array([[0, 0, 2 * x[2], 0], [u[0], 0, 0, 0]]), \
            np.array([[0.0], [x[0]]])

    problem = cart_pole(4)
    problem.path_function, problem.n_path = speed, 2
    tr = Transcription(problem, scheme)
    z = np.random.default_rng(3).normal(size=tr.layout.size)
    grad, entries = tr.jacobian(z)
    J = np.zeros((tr.n_constraints, tr.layout.size))
    J[tr.rows, tr.cols] = entries
    step = 1e-6
    fd_J, fd_grad = np.zeros_like(J), np.zeros_like(grad)
    for i in range(tr.layout.size):
        plus, minus = z.copy(), z.copy()
        plus[i] += step
        minus[i] -= step
        vp, vm = tr.evaluate(plus), tr.evaluate(minus)
        fd_J[:, i] = (tr.constraints(plus, vp) - tr.constraints(minus, vm)) / (2 * step)
        fd_grad[i] = (tr.objective(plus, vp) - tr.objective(minus, vm)) / (2 * step)
    # Central differences with h = 1e-6: truncation ~h^2 |f'''| ~ 1e-11, rounding ~eps |f| / h ~ 1e-9 here.
    assert np.max(np.abs(J - fd_J)) < 1e-6 * max(1.0, np.max(np.abs(J)))  # also: nothing outside the pattern
    assert np.max(np.abs(grad - fd_grad)) < 1e-6 * max(1.0, np.max(np.abs(grad)))


def test_unknown_scheme_is_refused() -> None:
    with pytest.raises(InputError, match="hermite_simpson"):
        Transcription(integrator(3), "radau")


def test_mechanical_rows_leave_their_structural_zeros_out() -> None:
    """The cart-pole (x = (q, v), q' = v): a defect row of a q keeps, per [x_k, u_k] block, the q's own 1 and the
    v's -c h, where a dense [A | B] block has n + m = 5 entries."""
    dense, mechanical = cart_pole(6), cart_pole(6)
    dense.mechanical = 0
    n, m, N, nq = 4, 1, 6, 2
    # blocks per interval with the identity's constant (they keep 2 of n + m) and without (Hermite-Simpson's
    # f at the midpoint in the Simpson defect: keeps 1)
    for scheme, with_identity, without in (("trapezoidal", 2, 0), ("hermite_simpson", 4, 1)):
        full, sparse = Transcription(dense, scheme), Transcription(mechanical, scheme)
        assert sparse.structure()[:nq].sum() == nq and sparse.structure()[nq:].all()
        lost = N * nq * (with_identity * (n + m - 2) + without * (n + m - 1))
        assert len(full.rows) - len(sparse.rows) == lost


def test_a_problem_whose_q_rows_are_not_v_is_refused() -> None:
    """A problem that declares mechanical = 1 while q' = q + v: the Jacobian check names the fix."""
    system = robodyn.LinearSystem(np.array([[1.0, 1.0], [0.0, 0.0]]), np.array([[0.0], [1.0]]),
                                  states=("q", "v"), inputs=("a",))
    problem = QuadraticProblem(system, 1.0, 4, np.zeros(2), np.eye(2), np.eye(1), np.eye(2), mechanical=1)
    tr = Transcription(problem, "trapezoidal")
    with pytest.raises(InputError, match="mechanical to 0"):
        tr.jacobian(np.zeros(tr.layout.size))
    problem.mechanical = 2  # and nq must be half the states
    with pytest.raises(InputError, match="2 nq states"):
        Transcription(problem, "trapezoidal")
