"""The compiled Riccati ODE (control/tracking/riccati_ode.py) against scipy's DOP853 on the same equation.

The reference is riccati.continuous_riccati: scipy's solve_ivp, one interval at a time, with A(t), B(t) from the
model's jacobians_raw on the same x*(t), u*(t) (tvlqr's Python path). The acrobot (4 states, a chain of two links)
swings under a tabulated torque; both inputs interpolations are checked. (The closed-form check on the pendulum is in
test_tracking_tvlqr.py.)
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.pinocchio_reference import ROBOTS

import robodyn
from robodyn.control.tracking.knots import compiled_functions, derivatives_at_knots
from robodyn.control.tracking.reference import reference_path
from robodyn.control.tracking.riccati import continuous_riccati
from robodyn.control.tracking.riccati_ode import compiled_riccati
from robodyn.signals import Table
from robodyn.signals.tracking import hermite


@pytest.fixture(scope="module")
def acrobot_run():
    model = robodyn.load("acrobot")
    times = np.linspace(0.0, 1.5, 31)
    torque = Table(times, 1.5 * np.sin(4.0 * times), "zoh")
    run = robodyn.simulate(model, (0.0, 1.5), np.zeros(model.n_states) + 0.1, {model.inputs[0]: torque},
                           method="rk4", dt=0.05)
    return model, run


def scipy_jacobians(model, path, p):
    """A(t), B(t) on interval k by the model's jacobians_raw (Python) at x*(t), u*(t)."""
    def jacobians(k: int, time: float):
        h = float(path.t[k + 1] - path.t[k])
        s = min(max((time - path.t[k]) / h, 0.0), 1.0)
        x = hermite(s, h, path.x[k], path.x[k + 1], path.d0[k], path.d1[k])
        u = path.u[k] if path.interpolation == "hold" else (1 - s) * path.u[k] + s * path.u[k + 1]
        A, B = model.jacobians_raw(time, x, u, p)
        return np.asarray(A, dtype=float), np.asarray(B, dtype=float)

    return jacobians


@pytest.mark.parametrize("interpolation", ["hold", "linear"])
def test_compiled_riccati_equals_scipy(acrobot_run, interpolation: str) -> None:
    model, run = acrobot_run
    n, m = model.n_states, model.n_inputs
    t, x, u = run.t, run.x, run.u
    p = model.parameter_vector()
    hold = interpolation == "hold"
    knots = derivatives_at_knots(model, t, x, u, p, hold)
    path = reference_path(model, t, x, u, p, interpolation, (knots.d0, knots.d1))
    Q, R, Qf = np.diag([10.0, 10.0, 1.0, 1.0]), 0.1 * np.eye(m), 20.0 * np.eye(n)
    fns = compiled_functions(model)
    assert fns is not None
    solution = compiled_riccati(fns, t, x, u, knots.d0, knots.d1, hold, p, Q, R, Qf, 1e-10)
    mine = solution.S
    # DOP853's stage 12 and each step's last evaluation share t + h: one Jacobian for the two (a rejected step has
    # its own); every other evaluation takes one
    assert solution.jacobians <= solution.rates - solution.steps
    reference = continuous_riccati(t, scipy_jacobians(model, path, p), Q, R, Qf, 1e-12)
    # DOP853 at rtol 1e-10 (compiled) against 1e-12 (scipy), the same steps' error control: ~1e-10 relative; the
    # issue promises 1e-8 on gains
    assert np.max(np.abs(mine - reference)) <= 1e-8 * np.max(np.abs(reference))
    assert np.array_equal(mine[-1], Qf)


@pytest.mark.parametrize(("n", "m"), [(4, 2), (16, 8)])
def test_riccati_products_equal_the_formula(n: int, m: int) -> None:
    """Both ways of computing S' (loops for small models, BLAS from _BLAS_SIZE states) equal numpy's formula."""
    from robodyn.control.tracking.riccati_ode import _products_blas, _products_loops

    rng = np.random.default_rng(n)
    A, B = rng.normal(size=(n, n)), rng.normal(size=(n, m))
    S = rng.normal(size=(n, n))
    S = S @ S.T
    Q = np.diag(rng.uniform(0.5, 2.0, n))
    R = np.diag(rng.uniform(0.1, 1.0, m)) + 0.05
    R_inv = np.linalg.inv(R)
    expected = -(A.T @ S + S @ A - S @ B @ R_inv @ B.T @ S + Q)
    J = np.concatenate([A.ravel(), B.ravel()])
    SA, SB, W, G = np.empty((n, n)), np.empty((n, m)), np.empty((n, m)), np.empty((n, n))
    loops, blas = np.empty(n * n), np.empty(n * n)
    _products_loops(S.ravel(), J, Q, R_inv, SA, SB, W, loops)
    _products_blas(S.ravel(), J, Q, R_inv, SA, SB, W, G, blas)
    # sums of ~n^2 products of O(1) entries: rounding ~1e-15 relative to the largest term
    scale = np.max(np.abs(S)) * (np.max(np.abs(A)) + np.max(np.abs(B)) ** 2 * np.max(np.abs(S)) * np.max(R_inv)) * n
    for mine in (loops, blas):
        assert np.max(np.abs(mine.reshape(n, n) - expected)) <= 1e-14 * scale
        assert np.array_equal(mine.reshape(n, n), mine.reshape(n, n).T)


@pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
def test_compiled_riccati_of_a_twelve_state_robot_equals_scipy() -> None:
    """The UR5 (12 states: S' by BLAS products) swinging under a tabulated torque: the compiled integration equals
    scipy's interval-by-interval DOP853 with the model's Python Jacobians."""
    model = robodyn.load(str(ROBOTS / "ur_description/urdf/ur5_robot.urdf"))
    n, m = model.n_states, model.n_inputs
    times = np.linspace(0.0, 0.1, 6)
    torques = {name: Table(times, 2.0 * np.sin(5.0 * times + k), "zoh") for k, name in enumerate(model.inputs)}
    run = robodyn.simulate(model, (0.0, 0.1), np.linspace(0.2, -0.2, n), torques, method="rk4", dt=0.02)
    t, x, u = run.t, run.x, run.u
    p = model.parameter_vector()
    knots = derivatives_at_knots(model, t, x, u, p, True)
    path = reference_path(model, t, x, u, p, "hold", (knots.d0, knots.d1))
    Q, R = np.eye(n), 0.05 * np.eye(m)
    fns = compiled_functions(model)
    assert fns is not None and n >= 10  # the BLAS products (_BLAS_SIZE)
    mine = compiled_riccati(fns, t, x, u, knots.d0, knots.d1, True, p, Q, R, 10.0 * Q, 1e-10).S
    reference = continuous_riccati(t, scipy_jacobians(model, path, p), Q, R, 10.0 * Q, 1e-12)
    # as for the acrobot: rtol 1e-10 against 1e-12, the gains' promise is 1e-8
    assert np.max(np.abs(mine - reference)) <= 1e-8 * np.max(np.abs(reference))
