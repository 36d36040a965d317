"""The cost terms of an optimal control problem: values against closed forms, exact derivatives against central
differences of the values, the frame target against Pinocchio on the UR5."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn
from pinocchio_reference import ROBOTS, coupling
from robodyn.control.optimal.costs import build_costs, jlog3
from robodyn.kinematics.rotations import rotation_error, rotation_from_rpy, skew

STEP = 1e-5
# central differences: truncation ~ STEP^2 |f'''| ~ 1e-10 and rounding ~ eps |f| / STEP ~ 1e-11 for values of
# order 1-100: 1e-7 relative (to max(1, |gradient|)) leaves a margin of ~100 over both
DIFF_RTOL = 1e-7


def _gradient(fun, z: np.ndarray) -> np.ndarray:
    out = np.zeros(z.size)
    for k in range(z.size):
        e = np.zeros(z.size)
        e[k] = STEP
        out[k] = (fun(z + e) - fun(z - e)) / (2 * STEP)
    return out


def _jacobian(fun, z: np.ndarray) -> np.ndarray:
    columns = []
    for k in range(z.size):
        e = np.zeros(z.size)
        e[k] = STEP
        columns.append((np.asarray(fun(z + e)) - np.asarray(fun(z - e))) / (2 * STEP))
    return np.stack(columns, axis=-1)


def _close(found: np.ndarray, expected: np.ndarray) -> None:
    scale = max(1.0, float(np.max(np.abs(expected))))
    assert np.max(np.abs(found - expected)) <= DIFF_RTOL * scale


@pytest.fixture(scope="module")
def pendulum():
    return robodyn.load("pendulum")


def test_quadratic_terms_equal_their_closed_form(pendulum) -> None:
    rng = np.random.default_rng(1)
    L = rng.normal(size=(2, 2))
    Q = L @ L.T
    table = {"t": [0.0, 1.0, 2.0], "theta": [0.0, 1.0, 3.0]}
    costs = build_costs({"state": {"weights": Q, "reference": table},
                         "input": {"weights": {"tau": 0.3}, "reference": {"tau": "2*pi"}},
                         "terminal": {"weights": {"theta": 100, "theta_dot": 10}, "reference": {"theta": "pi"}}},
                        pendulum, pendulum.parameter_vector(None), ".")
    x, u, t = np.array([0.4, -1.2]), np.array([0.7]), 1.5
    r = np.array([2.0, 0.0])  # the table's theta at t = 1.5, linear between 1 and 3
    dx, du = x - r, u - 2 * np.pi
    expected = 0.5 * dx @ Q @ dx + 0.5 * 0.3 * du[0] ** 2
    d = costs.running_derivatives(t, x, u)
    assert d.l == pytest.approx(expected, rel=1e-14)  # the same few operations: rounding only
    np.testing.assert_allclose(d.lx, Q @ dx, rtol=1e-13)
    np.testing.assert_allclose(d.lu, 0.3 * du, rtol=1e-13)
    np.testing.assert_allclose(d.lxx, Q, rtol=1e-15)
    np.testing.assert_allclose(d.luu, [[0.3]])
    assert not d.lux.any()
    QT, rT = np.diag([100.0, 10.0]), np.array([np.pi, 0.0])
    dT = costs.terminal_derivatives(x)
    assert dT.l == pytest.approx(0.5 * (x - rT) @ QT @ (x - rT), rel=1e-14)
    np.testing.assert_allclose(dT.lx, QT @ (x - rT), rtol=1e-14)
    np.testing.assert_allclose(dT.lxx, QT)
    assert costs.running(t, x, u) == d.l and costs.terminal(x) == dT.l


def test_running_expression_derivatives_against_central_differences(pendulum) -> None:
    costs = build_costs({"running": "0.5*tau**2*cos(theta) + m*g*l*(1 - cos(theta))*theta_dot**2 + t*sin(tau)"},
                        pendulum, pendulum.parameter_vector(None), ".")
    t, x, u = 0.7, np.array([0.4, -1.2]), np.array([0.7])
    d = costs.running_derivatives(t, x, u)
    value = 0.5 * 0.49 * np.cos(0.4) + 9.81 * (1 - np.cos(0.4)) * 1.44 + 0.7 * np.sin(0.7)
    assert d.l == pytest.approx(value, rel=1e-14)
    z = np.hstack([x, u])

    def cost(z):
        return costs.running(t, z[:2], z[2:])

    def grad(z):
        e = costs.running_derivatives(t, z[:2], z[2:])
        return np.hstack([e.lx, e.lu])

    _close(np.hstack([d.lx, d.lu]), _gradient(cost, z))
    H = np.block([[d.lxx, d.lux.T], [d.lux, d.luu]])
    _close(H, _jacobian(grad, z))
    np.testing.assert_allclose(H, H.T, rtol=0, atol=1e-14)


def test_jlog3_is_the_derivative_of_the_log_map() -> None:
    rng = np.random.default_rng(3)
    for angle in (1e-6, 0.3, 2.0, 3.0):
        axis = rng.normal(size=3)
        r = angle * axis / np.linalg.norm(axis)
        R = _exp(r)
        found = jlog3(r)

        def log_of(w, R=R):
            return rotation_error(np.eye(3), R @ _exp(w))

        _close(found, _jacobian(log_of, np.zeros(3)))


def _exp(w: np.ndarray) -> np.ndarray:
    angle = np.linalg.norm(w)
    K = skew(w)
    if angle < 1e-12:
        return np.eye(3) + K
    return np.eye(3) + np.sin(angle) / angle * K + (1 - np.cos(angle)) / angle**2 * K @ K


needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")


@needs_robots
def test_frame_target_against_pinocchio_on_the_ur5() -> None:
    pin = pytest.importorskip("pinocchio")
    path = ROBOTS / "ur_description/urdf/ur5_robot.urdf"  # type: ignore[operator]
    model = robodyn.load(str(path))
    reference = pin.buildModelFromUrdf(str(path))
    data = reference.createData()
    nq = model.n_states // 2
    G, offset = coupling(path, reference, tuple(model.states[:nq]))
    target, rpy = np.array([0.4, 0.1, 0.5]), np.array([0.3, -0.5, 1.0])
    costs = build_costs({"frame": {"name": "tool0", "position": target.tolist(), "weight": 1000,
                                   "orientation": rpy.tolist(), "orientation_weight": 7.0, "terminal": True}},
                        model, model.parameter_vector(None), ".")
    q = np.random.default_rng(5).uniform(-1.5, 1.5, nq)
    x = np.hstack([q, np.zeros(nq)])
    d = costs.terminal_derivatives(x)
    frame = reference.getFrameId("tool0")
    qp = G @ q + offset
    pin.forwardKinematics(reference, data, qp)
    pin.updateFramePlacements(reference, data)
    placement = data.oMf[frame]
    J = pin.computeFrameJacobian(reference, data, qp, frame, pin.LOCAL) @ G  # local: v then w, frame axes
    R_star = rotation_from_rpy(rpy)
    r = pin.log3(R_star.T @ placement.rotation)
    p_error = placement.translation - target
    expected = 0.5 * 1000 * p_error @ p_error + 0.5 * 7.0 * r @ r
    # the tape's kinematics and Pinocchio's agree to rounding (~1e-15 per entry of a 6-joint chain)
    assert d.l == pytest.approx(expected, rel=1e-11)
    Jp = placement.rotation @ J[:3]  # the origin's velocity in world axes
    Jr = pin.Jlog3(R_star.T @ placement.rotation) @ J[3:]  # Pinocchio's inverse right Jacobian of SO(3)
    gradient = 1000 * Jp.T @ p_error + 7.0 * Jr.T @ r
    np.testing.assert_allclose(d.lx[:nq], gradient, rtol=1e-9, atol=1e-9 * np.abs(gradient).max())
    assert not d.lx[nq:].any()
    np.testing.assert_allclose(d.lxx[:nq, :nq], 1000 * Jp.T @ Jp + 7.0 * Jr.T @ Jr, rtol=1e-9,
                               atol=1e-9 * 1000)  # Gauss–Newton, as Crocoddyl
    _close(d.lx, _gradient(costs.terminal, x))  # the gradient is exact
