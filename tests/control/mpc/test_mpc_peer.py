"""robodyn.mpc against python-control's MPC (``control.optimal.create_mpc_iosystem``, SLSQP) on the same problem: the
cart-pole linearized upright, horizon 30, dt 20 ms, force and track bounds (peer_case.py: why the two problems are
the same). One plan from a state where both bounds are active (default), and the closed loop of 25 samples on the
discrete linear model itself (slow: python-control takes seconds per solve, two solves per sample). python-control
solves once per module; robodyn's side is compared with each installed QP solver."""

from __future__ import annotations

import numpy as np
import pytest
from mpc_cases import SOLVERS
from peer_case import FORCE, TRACK, X0, N, controller, peer, peer_input, peer_plan

import robodyn

pytest.importorskip("control")

# SLSQP at ftol 1e-12 with forward-difference gradients stops 3e-5 N from the exact plan here (measured; robodyn's
# Clarabel and ProxQP plans are within 1e-6 of it: test_mpc_solvers, benchmarks/RESULTS.md); 1e-4 N (inputs up to
# 5 N) is the agreement.
ATOL = 1e-4
STEPS = 25
# OSQP's sparse form at its default tolerance (1e-5, then polished) returns plans 1e-3 off the exact QP solution on
# this problem while the track bound is active over many stages (status "solved"; "inaccurate" after 10000
# iterations at samples 8-11 of the loop, 0.1 off): the case is expected to fail until the solver is fixed.
OSQP_OFF = pytest.mark.xfail(strict=True, reason="OSQP sparse, default tolerance: ~1e-3 from the exact plan here")
CASES = [pytest.param(s, marks=OSQP_OFF) if s == "osqp" else s for s in SOLVERS]


def discrete(mpc: robodyn.MPC) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(mpc.plant.A), np.asarray(mpc.plant.B)


def start() -> np.ndarray:
    """The state after 3 samples of the exact closed loop from X0 (robodyn's ProxQP or Clarabel, exact to ~1e-7: the
    state only has to be the same on both sides): its plan has 5 saturated inputs and the track bound active."""
    mpc = controller("clarabel" if "proxsuite" not in SOLVERS else "proxsuite")
    A, B = discrete(mpc)
    x = X0
    for _ in range(3):
        x = A @ x + B @ mpc(x)
    return x


@pytest.fixture(scope="module")
def their_plan() -> tuple[np.ndarray, np.ndarray]:
    """The state and python-control's plan u_0 ... u_{N-1} from it: its update from its initial state (zeros, as in
    a closed loop's first sample)."""
    x = start()
    return x, peer_plan(peer(controller()), x, np.zeros(N + 1))[:N]


@pytest.mark.parametrize("solver", CASES)
def test_one_plan_equals_python_controls(solver: str, their_plan: tuple[np.ndarray, np.ndarray]) -> None:
    x, theirs = their_plan
    mpc = controller(solver)
    plan = mpc.solve(x)
    assert plan.solved
    # both bounds are active in this plan, and not everywhere: the comparison is of a constrained solution
    assert np.sum(np.isclose(plan.inputs[:, 0], FORCE, atol=1e-6)) >= 5
    assert np.any(np.abs(plan.inputs[:, 0]) < FORCE - 0.1)
    assert np.max(plan.states[1:, 0]) == pytest.approx(TRACK, abs=1e-6)
    np.testing.assert_allclose(theirs, plan.inputs[:, 0], rtol=0, atol=ATOL)
    # the states python-control's inputs predict (simulated here on the same matrices)
    A, B = discrete(mpc)
    states = [x]
    for u in theirs:
        states.append(A @ states[-1] + B[:, 0] * u)
    # B ~ dt-scaled: an input error of 1e-5 N moves the states by less than 1e-4 over the 30 steps
    np.testing.assert_allclose(np.array(states), plan.states, rtol=0, atol=ATOL)


@pytest.fixture(scope="module")
def their_loop() -> tuple[np.ndarray, np.ndarray]:
    """python-control's closed loop from X0: states (STEPS + 1, n), inputs (STEPS, m). The loop its
    input_output_response runs for a discrete-time I/O system (each sample: output u_k = out(xc_k, x_k), then the
    controller's state xc_{k+1} = update(xc_k, x_k), xc_0 = 0), written out: its interconnect would solve the same
    problem again for every evaluation of the loop's outputs (~25 s a sample)."""
    mpc = controller()
    io = peer(mpc)
    A, B = discrete(mpc)
    states, inputs, guess = [X0], [], np.zeros(N + 1)
    for _ in range(STEPS):
        x = states[-1]
        assert abs(x[0]) <= TRACK  # python-control bounds x_0 too: the same problem only while x_0 is within
        inputs.append(peer_input(io, x, guess))
        guess = peer_plan(io, x, guess)
        states.append(A @ x + B @ inputs[-1])
    return np.array(states), np.array(inputs)


@pytest.mark.slow
@pytest.mark.parametrize("solver", CASES)
def test_closed_loop_equals_python_controls(solver: str, their_loop: tuple[np.ndarray, np.ndarray]) -> None:
    """STEPS samples of x_{k+1} = A x_k + B u_k under each controller, from X0."""
    mpc = controller(solver)
    A, B = discrete(mpc)
    states, inputs = [X0], []
    for _ in range(STEPS):
        inputs.append(mpc(states[-1]))
        states.append(A @ states[-1] + B @ inputs[-1])
    assert np.sum(np.isclose(np.array(inputs), FORCE, atol=1e-6)) >= 5  # the force bound active in the loop
    np.testing.assert_allclose(their_loop[1], np.array(inputs), rtol=0, atol=ATOL)
    np.testing.assert_allclose(their_loop[0], np.array(states), rtol=0, atol=ATOL)
