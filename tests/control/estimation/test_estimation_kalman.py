"""Tests for robodyn.control.estimation.kalman: kalman against python-control's lqe / dlqe and closed forms, the
estimator and the LQG controller, and the refusals.

Tolerance 1e-10 relative to the largest entry: both tools call scipy's Riccati solvers on the same dual problem
(python-control by ``method="scipy"``; with Slycot installed its default, sb02md, gives the poles to 1e-8 only);
the gains differ by the rounding of a few products (measured: below 1e-14).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import robodyn
from robodyn import InputError, LinearSystem, ShapeError
from robodyn.control.estimation.kalman import kalman, lqg

control = pytest.importorskip("control")

from tests.linear.linear_cases import DT, arm, joint  # noqa: E402 - after the importorskip


def close(actual: object, expected: object, rtol: float = 1e-10) -> None:
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, (a.shape, e.shape)
    scale = float(np.max(np.abs(e), initial=0.0))
    assert float(np.max(np.abs(a - e), initial=0.0)) <= rtol * max(scale, 1e-300), (a, e)


def sorted_complex(values: object) -> np.ndarray:
    z = np.asarray(values, dtype=complex)
    return z[np.lexsort((z.imag, z.real))]


def random_system(seed: int, n: int = 4, m: int = 2, p: int = 2, dt: float | None = None) -> LinearSystem:
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n))
    if dt is not None:
        A *= 0.9 / max(1.0, float(np.max(np.abs(np.linalg.eigvals(A)))))  # mostly stable, detectable anyway
    return LinearSystem(A, rng.normal(size=(n, m)), rng.normal(size=(p, n)), rng.normal(size=(p, m)), dt=dt)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_continuous_gain_equals_lqe(seed: int) -> None:
    sys = random_system(seed)
    Qn, Rn = np.diag([1.0, 2.0, 3.0, 0.5]), np.array([[1.0, 0.2], [0.2, 2.0]])
    result = kalman(sys, Qn, Rn)
    L, P, E = control.lqe(sys.A, np.eye(4), sys.C, Qn, Rn, method="scipy")
    close(result.L, L)
    close(result.P, P)
    close(result.poles, sorted_complex(E))


@pytest.mark.parametrize("seed", [3, 4])
def test_discrete_gain_equals_dlqe_the_predictor_form(seed: int) -> None:
    sys = random_system(seed, dt=0.1)
    G = np.array([[1.0], [0.5], [0.0], [2.0]])
    result = kalman(sys, 0.7, np.diag([0.3, 1.5]), G=G)
    L, P, E = control.dlqe(sys.A, G, sys.C, 0.7, np.diag([0.3, 1.5]), method="scipy")
    close(result.L, L)
    close(result.P, P)
    close(result.poles, sorted_complex(E))
    # the predictor form: P is the prediction's covariance, P = A (P - P C^T S^-1 C P) A^T + G Qn G^T
    S = sys.C @ result.P @ sys.C.T + np.diag([0.3, 1.5])
    update = result.P - result.P @ sys.C.T @ np.linalg.solve(S, sys.C @ result.P)
    close(sys.A @ update @ sys.A.T + 0.7 * G @ G.T, result.P, 1e-12)


def test_scalar_closed_forms() -> None:
    """x' = a x + w, y = x + v: p = r (a + sqrt(a^2 + q / r)), l = p / r; discrete x+ = a x + w: the positive root
    of p^2 + (r (1 - a^2) - q) p - q r = 0, l = a p / (p + r)."""
    a, q, r = 0.7, 2.0, 0.5
    continuous = kalman(LinearSystem([[a]], [[1.0]], [[1.0]]), q, r)
    p = r * (a + math.sqrt(a * a + q / r))
    assert continuous.P[0, 0] == pytest.approx(p, rel=1e-13)
    assert continuous.L[0, 0] == pytest.approx(p / r, rel=1e-13)
    assert continuous.poles[0].real == pytest.approx(-math.sqrt(a * a + q / r), rel=1e-13)
    discrete = kalman(LinearSystem([[a]], [[1.0]], [[1.0]], dt=0.1), q, r)
    b = r * (1 - a * a) - q
    p = (-b + math.sqrt(b * b + 4 * q * r)) / 2
    assert discrete.P[0, 0] == pytest.approx(p, rel=1e-13)
    assert discrete.L[0, 0] == pytest.approx(a * p / (p + r), rel=1e-13)


def test_cross_covariance_equals_the_decorrelated_problem() -> None:
    """With E{w v^T} = N: the same filter as the system A - G N Rn^-1 C, the noise covariance Qn - N Rn^-1 N^T and the
    known input G N Rn^-1 y (the classical decorrelation; python-control's lqe has no N), L = L0 + G N Rn^-1."""
    sys = random_system(5, n=3, m=1, p=1)
    G, Qn, Rn, N = np.eye(3), np.diag([2.0, 1.0, 3.0]), np.array([[0.8]]), np.array([[0.3], [-0.2], [0.5]])
    result = kalman(sys, Qn, Rn, N=N)
    shift = G @ N @ np.linalg.inv(Rn)
    L0, P0, _ = control.lqe(sys.A - shift @ sys.C, G, sys.C, Qn - N @ np.linalg.inv(Rn) @ N.T, Rn)
    close(result.P, P0)
    close(result.L, L0 + shift)


def test_the_joint_and_the_arm_equal_lqe() -> None:
    for sys in (joint(), arm()):
        n = len(sys.states)
        result = kalman(sys, np.eye(n) * 0.1, np.eye(len(sys.outputs)) * 0.01)
        L, P, _ = control.lqe(sys.A, np.eye(n), sys.C, np.eye(n) * 0.1, np.eye(len(sys.outputs)) * 0.01)
        close(result.L, L)
        close(result.P, P)


def test_estimator_converges_to_the_state_of_the_discrete_plant() -> None:
    """The estimator LinearSystem run beside the plant (no noise): the error obeys e+ = (A - L C) e exactly."""
    sys = robodyn.LinearSystem(joint().A, joint().B, joint().C, joint().D).discretize(DT)
    result = kalman(sys, np.eye(2), np.eye(len(sys.outputs)) * 0.1)
    estimator = result.estimator()
    assert estimator.inputs == (*sys.inputs, *sys.outputs) and estimator.dt == DT
    x, xh = np.array([0.3, -1.0]), np.zeros(2)
    e0 = x - xh
    for k in range(5):
        u = np.array([math.sin(0.1 * k)])
        y = sys.C @ x + sys.D @ u
        x, xh = sys.A @ x + sys.B @ u, estimator.A @ xh + estimator.B @ np.concatenate([u, y])
    closed = sys.A - result.L @ sys.C
    error = np.linalg.matrix_power(closed, 5) @ e0
    assert np.abs(x - xh - error).max() <= 1e-13 * np.abs(e0).max()  # a few roundings of entries ~ |e0|


@pytest.mark.parametrize("dt", [None, 0.05])
def test_lqg_loop_poles_are_the_regulator_and_the_filter_poles(dt: float | None) -> None:
    """Separation: the plant with the LQG controller (u = K(y)) has the poles of A - B K and of A - L C; the
    controller equals python-control's composition of lqr / lqe (dlqr / dlqe) gains."""
    sys = random_system(7, n=3, m=1, p=2, dt=dt)
    Q, R, Qn, Rn = np.eye(3), np.array([[0.5]]), np.diag([1.0, 0.5, 2.0]), np.diag([0.1, 0.2])
    controller = lqg(sys, Q, R, Qn, Rn)
    assert controller.inputs == sys.outputs and controller.outputs == sys.inputs and controller.dt == dt
    K = (control.dlqr if dt else control.lqr)(sys.A, sys.B, Q, R)[0]
    L = (control.dlqe if dt else control.lqe)(sys.A, np.eye(3), sys.C, Qn, Rn)[0]
    A, B, C, D = sys.A, sys.B, sys.C, sys.D
    close(controller.A, A - B @ K - L @ C + L @ D @ K)
    close(controller.B, L)
    close(controller.C, -K)
    # the loop u = Dk-free: x' = A x + B Ck xk, xk' = Ak xk + Bk (C x + D Ck xk)
    loop = np.block([[A, B @ controller.C], [controller.B @ C, controller.A + controller.B @ D @ controller.C]])
    expected = np.concatenate([np.linalg.eigvals(A - B @ K), np.linalg.eigvals(A - L @ C)])
    close(sorted_complex(np.linalg.eigvals(loop)), sorted_complex(expected), 1e-9)


def test_refusals_are_named() -> None:
    sys = LinearSystem([[1.0, 0.0], [0.0, -1.0]], [[1.0], [1.0]], [[0.0, 1.0]])
    with pytest.raises(InputError, match="not detectable"):
        kalman(sys, np.eye(2), 1.0)  # the unstable mode 1 is not measured
    marginal = LinearSystem([[0.0, 0.0], [0.0, -1.0]], [[1.0], [1.0]], [[1.0, 1.0]])
    with pytest.raises(InputError, match="not excited by the process noise"):
        kalman(marginal, 1.0, 1.0, G=[[0.0], [1.0]])  # the integrator gets no noise
    good = LinearSystem([[-1.0]], [[1.0]], [[1.0]])
    with pytest.raises(InputError, match="Rn must be positive definite"):
        kalman(good, 1.0, 0.0)
    with pytest.raises(InputError, match="Qn must be positive semidefinite"):
        kalman(good, -1.0, 1.0)
    with pytest.raises(InputError, match="Qn must be symmetric"):
        kalman(LinearSystem(-np.eye(2), None, np.eye(2)), [[1.0, 0.5], [0.0, 1.0]], np.eye(2))
    with pytest.raises(ShapeError, match="Rn has shape"):
        kalman(good, 1.0, np.eye(2))
    with pytest.raises(InputError, match=r"\[\[Qn, N\], \[N\^T, Rn\]\]"):
        kalman(good, 1.0, 1.0, N=[[2.0]])
    with pytest.raises(ShapeError, match="G has shape"):
        kalman(good, 1.0, 1.0, G=[[1.0, 2.0], [3.0, 4.0]])
    column = kalman(LinearSystem(-np.eye(2), None, [[1.0, 0.0]]), 2.0, 1.0, G=[1.0, 0.5])  # a vector: one column
    assert column.G.shape == (2, 1) and column.Qn.shape == (1, 1)
    with pytest.raises(InputError, match="needs a linear system"):
        kalman(object(), 1.0, 1.0)
