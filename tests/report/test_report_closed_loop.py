"""The report of a closed loop with an estimator and a predictive controller (examples/cart_pole_mpc_ekf.yaml):
the upright operating point found from the blocks' rest states, the closed loop's poles against the loop assembled
here by hand (the LQR gain the unconstrained MPC equals, the EKF's steady-state gain from robodyn.kalman), the
estimate against the truth and the constraint activity (robodyn.report.closed_loop), in the page and the JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg
from scipy.optimize import linear_sum_assignment

import robodyn
from robodyn.report import analyze
from robodyn.report.closed_loop import PERTURBATION

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
T = 0.02  # the example's sample period (EKF and MPC)
Q, R = np.diag([1.0, 10.0, 0.1, 0.1]), np.array([[0.1]])  # the MPC's weights in the example
QC, RN = np.diag([0.0, 0.0, 0.01, 0.01]), 1e-4 * np.eye(2)  # the EKF's noise in the example
H = np.eye(4)[:2]  # the EKF measures x and theta


@pytest.fixture(scope="module")
def report() -> robodyn.report.Report:
    return analyze(robodyn.load(EXAMPLES / "cart_pole_mpc_ekf.yaml"))


def _hand_built_poles() -> tuple[np.ndarray, np.ndarray]:
    """The 8 poles of plant + estimator + controller and the 10 of the covariance's Riccati map, at the upright
    point. The plant is held over T (ZOH); u = -K x_{k|k} with K the discrete LQR gain (the unconstrained MPC with
    its default terminal weight); x_{k|k} = x_{k|k-1} + M (y_k - H x_{k|k-1}), M = P H' (H P H' + Rn)^-1 from
    robodyn.kalman's P of the held model with Van Loan's Qd; the EKF's mean prediction is one RK4 step (its
    derivative the RK4 polynomial of A T). The covariance P_{k+1|k} = Phi P_{k|k} Phi' + Qd has, at the optimal
    gain, the derivative dP -> F dP F' with F = Phi (I - M H): poles lambda_i lambda_j (i <= j) of F, and no
    coupling into the estimate (the innovation is zero at rest)."""
    linear = robodyn.linearize(robodyn.load("cart_pole"), np.zeros(4), np.zeros(1))
    A, B = np.asarray(linear.A), np.asarray(linear.B)
    n = 4
    E = scipy.linalg.expm(np.block([[A, B], [np.zeros((1, n + 1))]]) * T)
    Phi, Gamma = E[:n, :n], E[:n, n:]
    S = scipy.linalg.solve_discrete_are(Phi, Gamma, Q, R)
    K = np.linalg.solve(R + Gamma.T @ S @ Gamma, Gamma.T @ S @ Phi)
    V = scipy.linalg.expm(np.block([[-A, QC], [np.zeros((n, n)), A.T]]) * T)
    Qd = V[n:, n:].T @ V[:n, n:]
    held = robodyn.LinearSystem(Phi, Gamma, H, np.zeros((2, 1)), dt=T)
    P = np.asarray(robodyn.kalman(held, Qd, RN).P)
    M = P @ H.T @ np.linalg.inv(H @ P @ H.T + RN)
    hA, eye = A * T, np.eye(n)
    rk4 = eye + hA + hA @ hA / 2 + hA @ hA @ hA / 6 + hA @ hA @ hA @ hA / 24
    rk4_input = T * (eye + hA / 2 + hA @ hA / 6 + hA @ hA @ hA / 24) @ B
    keep = eye - M @ H
    loop = np.block([[Phi - Gamma @ K @ M @ H, -Gamma @ K @ keep],
                     [(rk4 - rk4_input @ K) @ M @ H, (rk4 - rk4_input @ K) @ keep]])
    lam = np.linalg.eigvals(Phi @ keep)
    return np.linalg.eigvals(loop), np.array([lam[i] * lam[j] for i in range(n) for j in range(i, n)])


def test_the_report_finds_the_upright_point_and_its_closed_loop_poles(report) -> None:
    point = report.data["points"][0]
    assert len(report.data["operating_points"]) == 1 and "error" not in point
    np.testing.assert_array_equal(point["x"][:8], np.zeros(8))  # plant and estimate upright, at rest
    assert point["stability"].startswith("asymptotically")
    found = np.array([complex(re, im) for re, im in point["eigenvalues"]])
    loop, covariance = _hand_built_poles()
    expected = np.concatenate([loop, covariance])
    distance = np.abs(found[:, None] - expected[None, :])
    rows, columns = linear_sum_assignment(distance)
    errors = distance[rows, columns][np.argsort(columns)]
    # the loop's poles: exact Jacobians of the plant and the MPC, the EKF's x-columns differenced where it is linear
    # in x (h) or smooth on the scale 1 (RK4 of the cart-pole): agreement to the differences' rounding
    assert np.max(errors[:8]) < 1e-9
    # the covariance's poles: the EKF's P-columns differenced with steps of 6e-6 where P ~ 1e-4 (the coordinates
    # are offsets from P0 = I): the extrapolated differences' O((h / 1e-4)^4) error, 2.3e-5 measured
    assert np.max(errors[8:]) < 1e-4
    assert np.max(np.abs(expected)) < 1.0  # a stable loop: a pole the report got wrong would show
    continuous = np.array([complex(re, im) for re, im in point["continuous_eigenvalues"]])
    np.testing.assert_allclose(np.exp(continuous * T), found, rtol=1e-12, atol=0)  # s = ln z / T


def test_the_report_shows_the_estimate_against_the_truth(report, tmp_path: Path) -> None:
    page = report.write(tmp_path).read_text()
    assert "<h3>Estimate against truth</h3>" in page and "<h3>Constraint activity</h3>" in page
    assert "against the truth (solid), shaded +-3 standard deviations" in page
    data = json.loads((tmp_path / "report.json").read_text())
    point = data["points"][0]
    assert point["closed_loop"]["displaced"] == ["plant.x", "plant.theta", "plant.x_dot", "plant.theta_dot"]
    assert point["closed_loop"]["perturbation"] == PERTURBATION and point["closed_loop"]["samples"] == 251
    estimates = point["estimate_against_truth"]["ekf"]
    assert set(estimates) == {"x", "theta", "x_dot", "theta_dot"}
    for state, found in estimates.items():
        # no noise: the estimate converges to the truth; at the start the error (0.1 on every state) is far outside
        # the steady-state filter's band, after a few samples inside it
        assert found["final_error"] < 1e-6, state
        assert 0.9 < found["within_band"] < 1.0, state
        assert found["max_error"] > 0.1 * PERTURBATION, state  # the first update halves the error at most
    roles = data["roles"]
    assert [r["role"] for r in roles] == ["estimator", "predictive controller"]
    assert roles[1]["input_bounds"] == {"F": [-5.0, 5.0]} and roles[1]["state_bounds"]["x_dot"] == [None, None]


def test_the_report_counts_the_constraints_activity_and_the_statuses(report) -> None:
    activity = report.data["points"][0]["constraint_activity"]["mpc"]
    assert activity["samples"] == 251 and activity["status"] == {"solved": 251}
    assert set(activity["inputs"]) == {"F"} and set(activity["states"]) == {"x"}  # the finite bounds only
    assert activity["states"]["x"] == {"lower": 0.0, "upper": 0.0}  # the cart stays within 0.35 m of the centre
    # the same run, independently: the force applied at its bound at some samples (the plan's first input); the
    # plan's active set counts those and the samples whose later planned inputs reach it
    model = robodyn.load(EXAMPLES / "cart_pole_mpc_ekf.yaml")
    point = report.data["points"][0]
    x0 = np.array(point["x"])
    x0[:4] += PERTURBATION
    run = robodyn.simulate(model, 5.0, x0, np.zeros(2))
    force = run.output("F")
    at_bound = np.mean(np.abs(force - 5.0) <= 1e-6 * 5.0), np.mean(np.abs(force + 5.0) <= 1e-6 * 5.0)
    assert at_bound[0] > 0.0  # it saturates after the push
    assert activity["inputs"]["F"]["upper"] >= at_bound[0] and activity["inputs"]["F"]["lower"] >= at_bound[1]
    assert activity["inputs"]["F"]["upper"] <= 10 * at_bound[0]  # a few samples, not the run
