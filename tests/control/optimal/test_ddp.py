"""The DDP family against independent references: the discrete Riccati recursion (linear-quadratic case),
Crocoddyl's SolverFDDP / SolverBoxFDDP on the UR5 (same Euler step, costs, dt, knots and guess), and itself from
an infeasible guess."""

from __future__ import annotations

import numpy as np
import pytest
from quadratic_problem import QuadraticProblem
from scipy.signal import cont2discrete

import robodyn
from robodyn.base.errors import InputError
from robodyn.control.optimal.ddp import solve_ddp

A_LQ = np.array([[0.0, 1.0], [-2.0, -0.4]])
B_LQ = np.array([[0.0], [1.5]])


def _lq_problem() -> QuadraticProblem:
    return QuadraticProblem(robodyn.LinearSystem(A_LQ, B_LQ), horizon=2.0, knots=40, x0=np.array([1.0, -0.5]),
                            Q=np.diag([3.0, 0.5]), R=np.array([[0.2]]), Qf=np.diag([20.0, 2.0]),
                            x_ref=np.zeros(2), u_ref=np.zeros(1), linear=True)


@pytest.mark.parametrize("method", ["ddp", "fddp"])
def test_linear_quadratic_converges_in_one_iteration_to_the_riccati_gains(method: str) -> None:
    problem = _lq_problem()
    dt = problem.horizon / problem.knots
    # mu = 1e-14 on Q_uu (~1e-2) and V_xx moves the gains by ~1e-12 relative: inside the 1e-10 asked
    outcome = solve_ddp(problem, method=method, integrator="zoh", regularization=1e-14, regularization_min=1e-14)
    assert outcome.converged and outcome.iterations == 1
    Fx, Fu, *_ = cont2discrete((A_LQ, B_LQ, np.eye(2), np.zeros((2, 1))), dt, method="zoh")
    P, gains = problem.Qf, []
    for _ in range(problem.knots):  # P_k = dt Q + Fx' P Fx - Fx' P Fu (dt R + Fu' P Fu)^-1 Fu' P Fx
        K = np.linalg.solve(dt * problem.R + Fu.T @ P @ Fu, Fu.T @ P @ Fx)
        P = dt * problem.Q + Fx.T @ P @ Fx - Fx.T @ P @ Fu @ K
        gains.append(K)
    gains = np.array(gains[::-1])
    assert outcome.gains is not None
    np.testing.assert_allclose(outcome.gains, gains, rtol=1e-10, atol=1e-12)
    x = problem.x0
    for k in range(problem.knots):  # the optimal LQ trajectory is the closed loop u = -K x
        np.testing.assert_allclose(outcome.U[k], -gains[k] @ x, rtol=1e-10, atol=1e-12)
        x = Fx @ x + Fu @ outcome.U[k]
    np.testing.assert_allclose(outcome.X[-1], x, rtol=1e-10, atol=1e-12)
    assert abs(outcome.cost - 0.5 * problem.x0 @ P @ problem.x0) <= 1e-10 * outcome.cost


def _pendulum(knots: int = 60, bounds: np.ndarray | None = None) -> QuadraticProblem:
    problem = QuadraticProblem(robodyn.load("pendulum"), 3.0, knots, np.zeros(2), np.diag([1.0, 0.1]),
                               np.array([[0.01]]), np.diag([100.0, 10.0]), np.array([np.pi, 0.0]), np.zeros(1),
                               mechanical=1)
    if bounds is not None:
        problem.input_bounds = bounds
    return problem


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_fddp_from_an_infeasible_guess_reaches_the_cost_of_a_rollout_guess(integrator: str) -> None:
    problem = _pendulum()
    from_rollout = solve_ddp(problem, integrator=integrator)
    line = np.linspace(0.0, 1.0, problem.knots + 1)[:, None] * problem.x_ref  # gaps at every knot
    guess = (line, np.full((problem.knots, 1), 0.5))
    from_gaps = solve_ddp(problem, integrator=integrator, warm_start=guess)
    assert from_rollout.converged and from_gaps.converged
    assert from_gaps.violation < 1e-12  # the gaps are closed
    # both stop at |expected improvement| < 1e-9 on a cost ~3: the costs agree far inside 1e-8 relative
    assert abs(from_gaps.cost - from_rollout.cost) <= 1e-8 * from_rollout.cost
    np.testing.assert_allclose(from_gaps.U, from_rollout.U, atol=1e-4)


class _Interpreted(QuadraticProblem):
    """The same problem without the compiled f: the DDP rolls out through Python steps."""

    def compiled_dynamics(self):
        return None


@pytest.mark.parametrize(("integrator", "method"), [("euler", "fddp"), ("rk4", "fddp"), ("rk4", "ddp")])
def test_the_compiled_rollout_equals_the_python_rollout(integrator: str, method: str) -> None:
    bounds = np.array([[-4.0, 4.0]])
    compiled, interpreted = _pendulum(bounds=bounds), _Interpreted(**{
        name: getattr(_pendulum(bounds=bounds), name) for name in QuadraticProblem.__dataclass_fields__})
    assert compiled.compiled_dynamics() is not None and interpreted.compiled_dynamics() is None
    line = np.linspace(0.0, 1.0, compiled.knots + 1)[:, None] * compiled.x_ref  # an infeasible guess: gaps kept
    guess = (line, np.full((compiled.knots, 1), 0.5))
    a = solve_ddp(compiled, method=method, integrator=integrator, warm_start=guess)
    b = solve_ddp(interpreted, method=method, integrator=integrator, warm_start=guess)
    assert a.converged and b.converged and a.iterations == b.iterations
    # the same arithmetic in another order of a few sums (numba against numpy): rounding, grown over ~20 iterations
    assert abs(a.cost - b.cost) <= 1e-10 * b.cost
    np.testing.assert_allclose(a.X, b.X, rtol=0, atol=1e-7)
    np.testing.assert_allclose(a.U, b.U, rtol=0, atol=1e-6)


def test_ddp_and_fddp_agree_and_boxes_are_respected() -> None:
    free = solve_ddp(_pendulum(), method="ddp", integrator="euler")
    bounds = np.array([[-4.0, 4.0]])
    boxed = solve_ddp(_pendulum(bounds=bounds), method="fddp", integrator="euler")
    boxed_ddp = solve_ddp(_pendulum(bounds=bounds), method="ddp", integrator="euler")
    assert free.converged and boxed.converged and boxed_ddp.converged
    assert np.max(np.abs(free.U)) > 4.5  # the bound is active ...
    assert np.all(np.abs(boxed.U) <= 4.0) and np.isclose(np.max(np.abs(boxed.U)), 4.0)  # ... and respected
    assert boxed.cost > free.cost
    assert abs(boxed.cost - boxed_ddp.cost) <= 1e-8 * boxed.cost


def test_progress_is_reported_and_bad_options_are_refused() -> None:
    seen: list[tuple[int, float, float]] = []
    outcome = solve_ddp(_pendulum(knots=20), progress=lambda i, c, v: seen.append((i, c, v)))
    assert [s[0] for s in seen] == list(range(1, outcome.iterations + 1))
    assert seen[-1][1] == pytest.approx(outcome.cost, rel=1e-14)
    with pytest.raises(InputError, match="unknown DDP option"):
        solve_ddp(_pendulum(knots=20), step_size=2.0)
    with pytest.raises(InputError, match="choose 'ddp' or 'fddp'"):
        solve_ddp(_pendulum(knots=20), method="ilqg")
    with pytest.raises(InputError, match="warm_start"):
        solve_ddp(_pendulum(knots=20), warm_start=(np.zeros((3, 2)), np.zeros((2, 1))))
    capped = solve_ddp(_pendulum(knots=20), max_iterations=1)
    assert not capped.converged and "not converged in 1 iterations" in capped.status


crocoddyl = pytest.importorskip("crocoddyl")
pin = pytest.importorskip("pinocchio")


class _PinocchioArm(crocoddyl.DifferentialActionModelAbstract):  # type: ignore[misc]
    """x' = (v, aba(q, v, u)) and 1/2 (x - r)' Q (x - r) + 1/2 u' R u through Pinocchio's Python bindings.

    Crocoddyl's solvers on Pinocchio's dynamics called from Python; :func:`native_model` is the same problem in
    Crocoddyl's own C++ action model (which needs the Pinocchio build crocoddyl was made with: with libpinocchio
    4.1.0 beside libcrocoddyl 3.2.1 it read gravity as ~0, hence the test extra's pin < 4.1)."""

    def __init__(self, model: object, Q: np.ndarray, R: np.ndarray, x_ref: np.ndarray) -> None:
        nv = model.nv  # type: ignore[attr-defined]
        crocoddyl.DifferentialActionModelAbstract.__init__(self, crocoddyl.StateVector(2 * nv), nv, 0)
        self.pm, self.pd, self.Q, self.R, self.x_ref = model, model.createData(), Q, R, x_ref  # type: ignore

    def calc(self, data: object, x: np.ndarray, u: np.ndarray | None = None) -> None:
        nv, dx = self.pm.nv, x - self.x_ref
        data.cost = 0.5 * dx @ self.Q @ dx  # type: ignore[attr-defined]
        if u is not None:
            data.xout[:] = pin.aba(self.pm, self.pd, x[:nv], x[nv:], u)  # type: ignore[attr-defined]
            data.cost += 0.5 * u @ self.R @ u  # type: ignore[attr-defined]

    def calcDiff(self, data: object, x: np.ndarray, u: np.ndarray | None = None) -> None:
        nv = self.pm.nv
        data.Lx[:], data.Lxx[:, :] = self.Q @ (x - self.x_ref), self.Q  # type: ignore[attr-defined]
        if u is not None:
            ddq_dq, ddq_dv, minv = pin.computeABADerivatives(self.pm, self.pd, x[:nv], x[nv:], u)
            data.Fx[:, :nv], data.Fx[:, nv:] = ddq_dq, ddq_dv  # type: ignore[attr-defined]
            data.Fu[:, :] = np.triu(minv) + np.triu(minv, 1).T  # type: ignore[attr-defined]
            data.Lu[:], data.Luu[:, :] = self.R @ u, self.R  # type: ignore[attr-defined]

    def createData(self) -> object:
        return crocoddyl.DifferentialActionDataAbstract(self)


def native_model(model: object, Q: np.ndarray, R: np.ndarray | None, x_ref: np.ndarray) -> object:
    """Crocoddyl's DifferentialActionModelFreeFwdDynamics (ABA in C++) with the costs 1/2 (x - r)' Q (x - r) (+ 1/2 u'
    R u) as weighted-quadratic state and control residuals: the problem of :class:`_PinocchioArm`, natively."""
    state = crocoddyl.StateMultibody(model)
    actuation = crocoddyl.ActuationModelFull(state)
    costs = crocoddyl.CostModelSum(state, actuation.nu)
    costs.addCost("x", crocoddyl.CostModelResidual(state, crocoddyl.ActivationModelWeightedQuad(np.diag(Q).copy()),
                                                  crocoddyl.ResidualModelState(state, x_ref, actuation.nu)), 1.0)
    if R is not None:
        costs.addCost("u", crocoddyl.CostModelResidual(state, crocoddyl.ActivationModelWeightedQuad(np.diag(R).copy()),
                                                      crocoddyl.ResidualModelControl(state, actuation.nu)), 1.0)
    return crocoddyl.DifferentialActionModelFreeFwdDynamics(state, actuation, costs)


@pytest.mark.parametrize("native", [False, True], ids=["pinocchio-python", "native"])
@pytest.mark.parametrize("box", [None, np.array([50.0, 50.0, 40.0, 30.0, 40.0, 8.0])], ids=["free", "box"])
def test_ur5_fddp_reaches_crocoddyls_optimal_cost(box: np.ndarray | None, native: bool) -> None:
    from pinocchio_reference import ROBOTS
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    from robodyn.mechanisms.urdf.chain import chain_from_urdf
    path = ROBOTS / "ur_description/urdf/ur5_robot.urdf"
    reference, model = pin.buildModelFromUrdf(str(path)), chain_from_urdf(path)
    N, dt = 50, 0.01
    x0 = np.concatenate([[0.0, -1.2, 1.5, -0.3, 0.4, 0.0], np.zeros(6)])
    x_ref = np.concatenate([[0.6, -0.8, 1.0, 0.2, -0.3, 0.5], np.zeros(6)])
    Q, R = np.diag(np.r_[np.full(6, 10.0), np.full(6, 0.1)]), np.diag(np.full(6, 1e-3))
    Qf = np.diag(np.r_[np.full(6, 1e4), np.full(6, 10.0)])
    holding = pin.rnea(reference, reference.createData(), x0[:6], np.zeros(6), np.zeros(6))
    guess = (np.tile(x0, (N + 1, 1)), np.tile(holding, (N, 1)))
    arm = native_model if native else _PinocchioArm
    running = crocoddyl.IntegratedActionModelEuler(arm(reference, Q, R, x_ref), dt)
    problem = QuadraticProblem(model, N * dt, N, x0, Q, R, Qf, x_ref, np.zeros(6), mechanical=6, guess=guess)
    if box is not None:
        running.u_lb, running.u_ub = -box, box
        problem.input_bounds = np.column_stack([-box, box])
    terminal = crocoddyl.IntegratedActionModelEuler(arm(reference, Qf, None if native else R, x_ref), 0.0)
    shooting = crocoddyl.ShootingProblem(x0, [running] * N, terminal)
    solver = crocoddyl.SolverFDDP(shooting) if box is None else crocoddyl.SolverBoxFDDP(shooting)
    solver.th_stop = 1e-9
    assert solver.solve(list(guess[0]), list(guess[1]), 200, False)
    outcome = solve_ddp(problem, integrator="euler")
    assert outcome.converged
    # both stop at an expected improvement < 1e-9 on a cost ~2: the optimal costs agree far inside 1e-6
    assert abs(outcome.cost - solver.cost) <= 1e-6 * solver.cost
    if box is not None:
        assert np.all(np.abs(outcome.U) <= box) and np.any(np.isclose(np.abs(outcome.U), box))
