"""What an estimator takes of its plant over one period (robodyn.control.estimation.discretization): Van Loan's
transition and process noise against the integral by quadrature and against the closed form of a double integrator,
the zero-order hold against scipy's cont2discrete, and the RK4 mean against scipy's DOP853."""

from __future__ import annotations

import numpy as np
import scipy.integrate
import scipy.linalg
import scipy.signal

import robodyn
from robodyn.control.estimation.discretization import hold_discretization, noise_discretization, rk4_points
from robodyn.control.optimal.batch.points import ModelPoints


def test_van_loans_process_noise_is_the_integral() -> None:
    A = np.array([[0.0, 1.0, 0.0], [-4.0, -0.3, 1.0], [0.0, 0.0, -2.0]])
    G = np.array([[0.0, 0.0], [1.0, 0.0], [0.2, 1.0]])
    Qc = G @ np.diag([0.7, 0.1]) @ G.T
    T = 0.05
    Phi, Qd = noise_discretization(A, Qc, T)
    integral, _ = scipy.integrate.quad_vec(
        lambda s: scipy.linalg.expm(A * s) @ Qc @ scipy.linalg.expm(A * s).T, 0.0, T, epsabs=1e-16, epsrel=1e-14)
    # adaptive Gauss-Kronrod on a smooth integrand: ~1e-16 of its size; the exponential ~1e-16 relative
    np.testing.assert_allclose(Qd, integral, rtol=0, atol=1e-14 * np.max(np.abs(integral)))
    np.testing.assert_allclose(Phi, scipy.linalg.expm(A * T), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(Qd, Qd.T)


def test_the_double_integrators_noise_is_its_closed_form() -> None:
    """White acceleration of intensity q on a double integrator: Qd = q [[T^3/3, T^2/2], [T^2/2, T]]."""
    q, T = 2.5, 0.1
    Phi, Qd = noise_discretization(np.array([[0.0, 1.0], [0.0, 0.0]]), np.diag([0.0, q]), T)
    np.testing.assert_allclose(Qd, q * np.array([[T**3 / 3, T**2 / 2], [T**2 / 2, T]]), rtol=1e-14, atol=0)
    np.testing.assert_allclose(Phi, [[1.0, T], [0.0, 1.0]], rtol=0, atol=1e-16)


def test_the_hold_is_scipys_zoh() -> None:
    A = np.array([[0.0, 1.0], [-4.0, -0.4]])
    B = np.array([[0.0, 1.0], [1.0, -0.5]])
    Phi, Gamma = hold_discretization(A, B, 0.02)
    Ad, Bd, *_ = scipy.signal.cont2discrete((A, B, np.eye(2), np.zeros((2, 2))), 0.02, method="zoh")
    np.testing.assert_allclose(Phi, Ad, rtol=0, atol=1e-15)  # the same exponential: rounding
    np.testing.assert_allclose(Gamma, Bd, rtol=0, atol=1e-15)


def test_the_rk4_mean_is_the_flow_to_its_order() -> None:
    pendulum = robodyn.load("pendulum")
    p = pendulum.parameter_vector()
    points = ModelPoints(pendulum, p)
    X = np.array([[0.3, -1.0], [2.5, 0.4], [-1.0, 3.0]])
    u = np.array([0.7])
    T = 0.01
    found = rk4_points(points, 0.0, X, u, T)
    errors = []
    for row, x in zip(found, X, strict=True):
        exact = scipy.integrate.solve_ivp(lambda t, y: pendulum.f_raw(t, y, u, p), (0.0, T), x, method="DOP853",
                                          rtol=1e-13, atol=1e-15).y[:, -1]
        errors.append(np.max(np.abs(row - exact)))
    # RK4's local error is O(T^5) = 1e-10 times the fifth derivatives' scale (~1 .. 10 for these states, g = 9.81):
    # measured 0.9e-10 .. 3.7e-10
    assert max(errors) < 1e-9
    halved = rk4_points(points, 0.0, X, u, T, substeps=2)
    exact_first = scipy.integrate.solve_ivp(lambda t, y: pendulum.f_raw(t, y, u, p), (0.0, T), X[1],
                                            method="DOP853", rtol=1e-13, atol=1e-15).y[:, -1]
    # fourth order: two substeps divide the local error by ~2^4 (at least 8 with the reference's own error)
    assert np.max(np.abs(halved[1] - exact_first)) < np.max(np.abs(found[1] - exact_first)) / 8
