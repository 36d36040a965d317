"""The estimator blocks (robodyn.control.estimation.blocks) step by step against filterpy fed the same model and
discretization, the linear filter against a hand-written numpy recursion and python-control's ``dlqe``, and their
refusals of bad input.

Each block is driven directly: at t_k its outputs ``h(z_k, [y_k, u_k])`` are x_{k|k} and diag P_{k|k}, its next
state ``f(z_k, [y_k, u_k])`` holds x_{k+1|k} - x0 and the upper triangle of P_{k+1|k} - P0.
"""

from __future__ import annotations

import numpy as np
import pytest
from filterpy.kalman import ExtendedKalmanFilter, KalmanFilter, MerweScaledSigmaPoints, UnscentedKalmanFilter

import robodyn
from robodyn.base.errors import InputError, NumericalError, ShapeError, UnknownNameError
from robodyn.control.estimation.blocks import ekf, kalman, ukf
from robodyn.control.estimation.discretization import hold_discretization, noise_discretization, rk4_points
from robodyn.control.optimal.batch.points import ModelPoints
from robodyn.signals.noise import standard_normals

T = 0.01
A = np.array([[0.0, 1.0], [-4.0, -0.4]])
B = np.array([[0.0], [1.0]])
C = np.array([[1.0, 0.0]])


def _spring() -> robodyn.LinearSystem:
    return robodyn.LinearSystem(A, B, C, np.zeros((1, 1)), states=["q", "v"], inputs=["f"],
                                outputs=["position"], name="spring")


def _unpack(block, z: np.ndarray, x0: np.ndarray, P0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x_{k|k-1}, P_{k|k-1}) from the block's state."""
    n = x0.size
    P = P0.copy()
    upper = np.triu_indices(n)
    P[upper] += z[n:]
    P.T[upper] = P[upper]
    return x0 + z[:n], P


def _measurements(count: int, seed: int, std: float) -> np.ndarray:
    return std * standard_normals(seed, np.arange(count))


def test_the_kalman_block_is_the_numpy_recursion_and_filterpys_filter() -> None:
    Qc, R, x0, P0 = np.diag([0.0, 0.3]), np.array([[0.02]]), np.array([0.5, -0.2]), np.diag([0.4, 0.9])
    block = kalman(_spring(), T, Qn=Qc, Rn=R, x0=x0, P0=P0)
    assert block.inputs == ("position", "f") and block.outputs == ("q_hat", "v_hat", "P_q", "P_v")
    assert block.states == ("q_prior", "v_prior", "P_0_0", "P_0_1", "P_1_1") and block.sample_period == T
    Phi, Gamma = hold_discretization(A, B, T)
    Qd = noise_discretization(A, Qc, T)[1]
    # the truth: the held plant driven by seeded process noise, measured with seeded noise
    count = 300
    w = np.linalg.cholesky(Qd + 1e-30 * np.eye(2)) @ np.vstack([standard_normals(1, np.arange(count)),
                                                                 standard_normals(2, np.arange(count))])
    u = np.sin(0.05 * np.arange(count))
    truths, ys = [np.zeros(2)], []
    noise = _measurements(count, 3, np.sqrt(R[0, 0]))
    for k in range(count):
        ys.append(C @ truths[k] + noise[k])
        truths.append(Phi @ truths[k] + Gamma[:, 0] * u[k] + w[:, k])
    filt = KalmanFilter(dim_x=2, dim_z=1, dim_u=1)
    filt.x, filt.P, filt.F, filt.B, filt.H, filt.Q, filt.R = x0.copy(), P0.copy(), Phi, Gamma, C, Qd, R
    x, P = x0.copy(), P0.copy()  # the recursion written out
    z, p = np.zeros(block.n_states), block.parameter_vector()
    for k in range(count):
        v = np.array([ys[k][0], u[k]])
        out = block.h_raw(k * T, z, v, p)
        S = C @ P @ C.T + R
        K = P @ C.T @ np.linalg.inv(S)
        x = x + K @ (ys[k] - C @ x)
        P = (np.eye(2) - K @ C) @ P @ (np.eye(2) - K @ C).T + K @ R @ K.T
        filt.update(ys[k])
        # 1e-12: the same arithmetic in another order (a Cholesky solve against an inverse), on numbers of order 1
        np.testing.assert_allclose(out, np.concatenate([x, np.diag(P)]), rtol=0, atol=1e-12)
        np.testing.assert_allclose(out[:2], filt.x, rtol=0, atol=1e-12)
        np.testing.assert_allclose(out[2:], np.diag(filt.P), rtol=0, atol=1e-12)
        z = block.f_raw(k * T, z, v, p)
        x, P = Phi @ x + Gamma[:, 0] * u[k], Phi @ P @ Phi.T + Qd
        filt.predict(u=np.array([u[k]]))
        prior, P_prior = _unpack(block, z, x0, P0)
        np.testing.assert_allclose(prior, x, rtol=0, atol=1e-12)
        np.testing.assert_allclose(P_prior, filt.P, rtol=0, atol=1e-12)
    error = out[:2] - truths[count - 1]
    assert np.all(np.abs(error) < 4 * np.sqrt(out[2:]))  # the estimate follows the truth within its covariance


def test_the_kalman_gain_converges_to_dlqe_of_the_held_plant() -> None:
    import control

    Qc, R = np.diag([0.1, 0.5]), np.array([[0.01]])
    block = kalman(_spring(), T, Qn=Qc, Rn=R, P0=np.eye(2))
    Phi, _ = hold_discretization(A, B, T)
    Qd = noise_discretization(A, Qc, T)[1]
    L, P_dlqe, _ = control.dlqe(Phi, np.eye(2), C, Qd, R)
    z, p, v = np.zeros(block.n_states), block.parameter_vector(), np.zeros(2)
    for k in range(3000):  # the covariance does not depend on the data: its Riccati recursion converges
        z = block.f_raw(k * T, z, v, p)
    _, P = _unpack(block, z, np.zeros(2), np.eye(2))
    K = P @ C.T @ np.linalg.inv(C @ P @ C.T + R)
    # the recursion converges geometrically (the closed loop's spectral radius ~0.96 per step): after 3000 steps
    # what is left is rounding; dare's own accuracy on these numbers is ~1e-13 relative
    np.testing.assert_allclose(P, P_dlqe, rtol=1e-10, atol=0)
    np.testing.assert_allclose(Phi @ K, L, rtol=1e-10, atol=0)  # dlqe's gain is the predictor's, A K


def _pendulum_truth(count: int, seed: int, std: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(states (count, 2), torques (count,), noisy angles (count,)) of the pendulum under a held torque."""
    pendulum = robodyn.load("pendulum")
    u = 0.5 * np.sin(0.02 * np.arange(count))
    points = ModelPoints(pendulum, pendulum.parameter_vector())
    X = np.zeros((count, 2))
    X[0] = [0.6, 0.0]
    for k in range(count - 1):
        X[k + 1] = rk4_points(points, k * T, X[k], u[k:k + 1], T, 4)[0]
    return X, u, X[:, 0] + std * standard_normals(seed, np.arange(count))


def test_the_ekf_is_filterpys_ekf_fed_the_same_jacobians_and_discretization() -> None:
    pendulum = robodyn.load("pendulum")
    p_plant = pendulum.parameter_vector()
    points = ModelPoints(pendulum, p_plant)
    Qc, R, x0, P0 = np.diag([0.0, 0.2]), np.array([[1e-3]]), np.array([0.3, 0.1]), np.diag([0.2, 0.5])
    block = ekf(pendulum, T, Qn={"theta_dot": 0.2}, Rn={"theta": 1e-3}, outputs=["theta"], x0=x0, P0=P0)
    assert block.inputs == ("theta", "tau")
    X, u, y = _pendulum_truth(200, 11, np.sqrt(R[0, 0]))
    theirs = ExtendedKalmanFilter(dim_x=2, dim_z=1)
    theirs.x, theirs.P, theirs.R = x0.copy(), P0.copy(), R

    def H(x):
        return np.asarray(pendulum.output_jacobians_raw(0.0, x, np.zeros(1), p_plant)[0])[:1]

    def h(x):
        return np.asarray(pendulum.h_raw(0.0, x, np.zeros(1), p_plant))[:1]

    z, p = np.zeros(block.n_states), block.parameter_vector()
    for k in range(200):
        v = np.array([y[k], u[k]])
        out = block.h_raw(k * T, z, v, p)
        theirs.update(np.array([y[k]]), H, h)
        # 1e-10: the same formulas; a Cholesky solve against filterpy's inverse, 200 steps of a stable filter
        np.testing.assert_allclose(out[:2], theirs.x, rtol=0, atol=1e-10)
        np.testing.assert_allclose(out[2:], np.diag(theirs.P), rtol=0, atol=1e-10)
        jac = pendulum.jacobians_raw(k * T, theirs.x, u[k:k + 1], p_plant)[0]
        theirs.F, theirs.Q = noise_discretization(np.asarray(jac), Qc, T)
        mean = rk4_points(points, k * T, theirs.x, u[k:k + 1], T)[0]

        def predict_x(_u, mean=mean):
            theirs.x = mean

        theirs.predict_x = predict_x
        theirs.predict(u=u[k])
        z = block.f_raw(k * T, z, v, p)
        prior, P_prior = _unpack(block, z, x0, P0)
        np.testing.assert_allclose(prior, theirs.x, rtol=0, atol=1e-10)
        np.testing.assert_allclose(P_prior, theirs.P, rtol=0, atol=1e-10)
    assert abs(out[0] - X[-1, 0]) < 4 * np.sqrt(out[2]) and abs(out[1] - X[-1, 1]) < 4 * np.sqrt(out[3])


@pytest.mark.parametrize(("alpha", "beta", "kappa"), [(1.0, 2.0, 0.0), (0.5, 2.0, 1.0)])
def test_the_ukf_is_filterpys_ukf_with_the_same_points_and_process(alpha, beta, kappa) -> None:
    pendulum = robodyn.load("pendulum")
    p_plant = pendulum.parameter_vector()
    points = ModelPoints(pendulum, p_plant)
    Qc, R, x0, P0 = np.diag([0.0, 0.2]), np.array([[1e-3]]), np.array([0.3, 0.1]), np.diag([0.2, 0.5])
    block = ukf(pendulum, T, Qn=Qc, Rn=R, outputs=["theta"], x0=x0, P0=P0, alpha=alpha, beta=beta, kappa=kappa)
    X, u, y = _pendulum_truth(150, 12, np.sqrt(R[0, 0]))
    torque = {"u": 0.0}

    def fx(x, dt):
        return rk4_points(points, torque["t"], x, np.array([torque["u"]]), dt)[0]

    def hx(x):
        return np.asarray(pendulum.h_raw(0.0, x, np.zeros(1), p_plant))[:1]

    sigma = MerweScaledSigmaPoints(2, alpha=alpha, beta=beta, kappa=kappa)
    theirs = UnscentedKalmanFilter(dim_x=2, dim_z=1, dt=T, hx=hx, fx=fx, points=sigma)
    theirs.x, theirs.P, theirs.R = x0.copy(), P0.copy(), R
    theirs.sigmas_f = sigma.sigma_points(theirs.x, theirs.P)  # as after a prediction: the points of the prior
    z, p = np.zeros(block.n_states), block.parameter_vector()
    for k in range(150):
        v = np.array([y[k], u[k]])
        out = block.h_raw(k * T, z, v, p)
        theirs.update(np.array([y[k]]))
        # 1e-10: the same points, weights and formulas (a Cholesky solve against an inverse) over 150 steps
        np.testing.assert_allclose(out[:2], theirs.x, rtol=0, atol=1e-10)
        np.testing.assert_allclose(out[2:], np.diag(theirs.P), rtol=0, atol=1e-10)
        jac = pendulum.jacobians_raw(k * T, theirs.x, u[k:k + 1], p_plant)[0]
        theirs.Q = noise_discretization(np.asarray(jac), Qc, T)[1]
        torque["t"], torque["u"] = k * T, u[k]
        theirs.predict()
        z = block.f_raw(k * T, z, v, p)
        prior, P_prior = _unpack(block, z, x0, P0)
        np.testing.assert_allclose(prior, theirs.x, rtol=0, atol=1e-10)
        np.testing.assert_allclose(P_prior, theirs.P, rtol=0, atol=1e-10)
    assert abs(out[0] - X[-1, 0]) < 4 * np.sqrt(out[2])


def test_a_discrete_plant_is_filtered_at_its_own_period() -> None:
    Phi, Gamma = hold_discretization(A, B, T)
    discrete = robodyn.LinearSystem(Phi, Gamma, C, np.zeros((1, 1)), dt=T, states=["q", "v"], inputs=["f"],
                                    outputs=["position"], name="held")
    continuous = kalman(_spring(), T, Qn=np.zeros((2, 2)), Rn=0.1)
    same = kalman(discrete, None, Qn=np.zeros((2, 2)), Rn=0.1)  # Qn per step: zero in both
    assert same.sample_period == T
    z1 = z2 = np.zeros(5)
    for k in range(20):
        v = np.array([np.cos(k), np.sin(k)])
        np.testing.assert_allclose(continuous.h_raw(0.0, z1, v, []), same.h_raw(0.0, z2, v, []), rtol=0,
                                   atol=1e-14)
        z1, z2 = continuous.f_raw(0.0, z1, v, []), same.f_raw(0.0, z2, v, [])
    with pytest.raises(InputError, match="differs from the plant's dt"):
        kalman(discrete, 2 * T, Qn=np.zeros((2, 2)), Rn=0.1)


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda p: kalman(robodyn.load("pendulum"), T, 0.0, 1.0), InputError, "kalman .*needs a linear system"),
    (lambda p: ekf(p, T, Qn=np.zeros((2, 2)), Rn=[[-1.0]], outputs=["theta"]), InputError, "Rn .*positive semidef"),
    (lambda p: ekf(p, T, Qn=np.zeros((2, 2)), Rn=0.0, outputs=["theta"]), InputError, "Rn .*positive definite"),
    (lambda p: ekf(p, T, Qn=[[1.0, 0.0], [0.0, -1.0]], Rn=1.0, outputs=["theta"]), InputError,
     "Qn .*positive semidefinite"),
    (lambda p: ekf(p, T, Qn=[[1.0, 2.0], [0.0, 1.0]], Rn=1.0, outputs=["theta"]), InputError, "Qn must be symmetric"),
    (lambda p: ekf(p, T, Qn=np.eye(3), Rn=1.0, outputs=["theta"]), ShapeError, r"Qn has shape \(3, 3\)"),
    (lambda p: ekf(p, T, Qn=np.zeros((2, 2)), Rn=1.0, outputs=["phi"]), UnknownNameError, "no output 'phi'"),
    (lambda p: ekf(p, T, Qn=np.zeros((2, 2)), Rn={"tehta": 1.0}, outputs=["theta"]), UnknownNameError,
     "unknown name 'tehta'"),
    (lambda p: ekf(p, 0.0, np.zeros((2, 2)), 1.0, outputs=["theta"]), InputError, "sample must be > 0"),
    (lambda p: ekf(p, T, Qn=np.zeros((2, 2)), Rn=1.0, outputs=["theta"],
               x0=[0.0, float("nan")]), InputError, "x0 contains non-finite"),
    (lambda p: ekf(p, T, Qn=np.zeros((2, 2)), Rn=1.0, outputs=["theta"],
               P0=np.diag([1.0, -1.0])), InputError, "P0 .*semidefinite"),
    (lambda p: ekf(p, T, Qn=np.zeros((2, 2)), Rn=1.0, outputs=["theta"],
               substeps=0), InputError, "substeps must be"),
    (lambda p: ukf(p, T, Qn=np.zeros((2, 2)), Rn=1.0, outputs=["theta"],
               P0=np.diag([1.0, 0.0])), InputError, "P0 .*positive definite"),
    (lambda p: ukf(p, T, Qn=np.zeros((2, 2)), Rn=1.0, outputs=["theta"],
               alpha=2.0), InputError, r"alpha must be in \(0, 1\]"),
    (lambda p: ukf(p, T, Qn=np.zeros((2, 2)), Rn=1.0, outputs=["theta"],
               kappa=-2.0), InputError, "n \\+ lambda"),
    (lambda p: ekf(robodyn.System(lambda t, x, u, p: [u[0]], ["x"], ["u"]), T, 0.0, 1.0), InputError,
     "exact Jacobians .* use the ukf"),
])
def test_bad_input_is_one_line(make, error, message) -> None:
    with pytest.raises(error, match=message) as caught:
        make(robodyn.load("pendulum"))
    assert "\n" not in str(caught.value)


def test_a_covariance_made_indefinite_by_the_state_is_a_numerical_error() -> None:
    """A diagram's initial state is the offset from P0: one that makes P_{0|-1} indefinite is named, not used."""
    block = ekf(robodyn.load("pendulum"), T, Qn=np.zeros((2, 2)), Rn=1e-4, outputs=["theta"], P0=np.eye(2))
    z = np.array([0.0, 0.0, -2.0, 0.0, 0.0])  # P_{0|-1}[0, 0] = 1 - 2
    with pytest.raises(NumericalError, match=r"innovation covariance .* not positive definite") as caught:
        block.h_raw(0.0, z, np.zeros(2), [])
    assert "\n" not in str(caught.value)
    unscented = ukf(robodyn.load("pendulum"), T, Qn=np.zeros((2, 2)), Rn=1e-4, outputs=["theta"], P0=np.eye(2))
    with pytest.raises(NumericalError, match=r"not positive definite .* no sigma points"):
        unscented.h_raw(0.0, z, np.zeros(2), [])
