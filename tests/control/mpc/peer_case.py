"""The cart-pole MPC problem of issue 48 on both sides: robodyn.mpc, and python-control's MPC
(``control.optimal.create_mpc_iosystem``: the inputs optimized by scipy's SLSQP, the states by simulating the
discrete model, "shooting") on robodyn's exact zero-order-hold matrices. Shared by test_mpc_peer.py and
benchmarks/bench_control.py.

The two problems are the same, term by term (python-control 0.10, control/optimal.py):

- cost: python-control sums ``integral_cost(x_k, u_k)`` for k = 0 ... N-1 (its N + 1 time points t_0 ... t_N; the
  input u_N at t_N is a variable that enters nothing but its bound) and adds ``terminal_cost(x_N, u_N)``;
  ``quadratic_cost(sys, Q, R)`` is x'Qx + u'Ru with no factor 1/2, as robodyn's stage cost, and
  ``quadratic_cost(sys, Qf, None)`` is x_N' Qf x_N with robodyn's Qf (its default, the DARE solution, passed
  explicitly);
- bounds: python-control applies trajectory constraints at every time point, t_0 included: the input bound also to
  u_N (free, harmless) and the state bound also to the measured x_0, which robodyn leaves unbounded; the two agree
  whenever x_0 lies within its bounds, as every state of the loops here does (the tests check it).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

import robodyn

N, DT = 30, 0.02  # horizon (steps) and sample period (s) of the benchmark
Q = {"x": 1.0, "theta": 10.0, "x_dot": 0.1, "theta_dot": 0.1}
R = {"F": 0.1}
FORCE, TRACK = 5.0, 1.0  # |F| <= 5 N, |x| <= 1 m
BOUNDS = {"inputs": {"F": [-FORCE, FORCE]}, "states": {"x": [-TRACK, TRACK]}}
# From here the force saturates at +5 N for the first 9 samples of the closed loop and the track bound x <= 1 m is
# active in 23 of its first 25 plans (and the problem stays feasible).
X0 = np.array([0.3, 0.2, 0.6, 0.0])
# SLSQP stops when the cost (~100 here) changes by less than ftol between iterations (its default 1e-6 leaves the
# inputs ~1e-3 off): 1e-12 brings them to ~3e-5 of the exact QP solution (its gradients are forward differences,
# step ~1.5e-8: its limit); maxiter: SLSQP needs 15-40 iterations here, 1000 only keeps it from stopping short.
SLSQP: dict[str, Any] = {"ftol": 1e-12, "maxiter": 1000}


def controller(solver: str | None = None) -> robodyn.MPC:
    """robodyn's MPC of the cart-pole linearized upright (theta = 0), held over DT by the exact ZOH (with its default
    QP solver, or ``solver``)."""
    return robodyn.mpc(robodyn.load("cart_pole"), N, Q, R, bounds=BOUNDS, dt=DT, solver=solver)


def peer(mpc: robodyn.MPC) -> Any:
    """python-control's MPC (a discrete-time NonlinearIOSystem: input the state, output u_0, its state the planned
    inputs u_0 ... u_N) of the same problem as ``mpc``, on ``mpc``'s discrete matrices A, B."""
    import control as ct
    import control.optimal as opt

    n, m = np.asarray(mpc.plant.B).shape
    plant = ct.ss(np.asarray(mpc.plant.A), np.asarray(mpc.plant.B), np.eye(n), np.zeros((n, m)), DT,
                  states=list(mpc.states), inputs=list(mpc.inputs), outputs=list(mpc.states), name="cart_pole")
    box = np.asarray(mpc.state_bounds)
    constraints = [opt.input_range_constraint(plant, mpc.input_bounds[:, 0], mpc.input_bounds[:, 1]),
                   opt.state_range_constraint(plant, box[:, 0], box[:, 1])]
    return opt.create_mpc_iosystem(
        plant, np.arange(N + 1) * DT, opt.quadratic_cost(plant, np.asarray(mpc.Q), np.asarray(mpc.R)), constraints,
        terminal_cost=opt.quadratic_cost(plant, np.asarray(mpc.Qf), None), minimize_options=SLSQP,
        inputs=list(mpc.states), outputs=list(mpc.inputs), name="mpc")


def peer_plan(io: Any, x: np.ndarray, guess: np.ndarray) -> np.ndarray:
    """The I/O system's update at the state ``x`` from its state ``guess`` (m (N + 1),: the previous plan, which it
    shifts one step as its initial guess): the new plan u_0 ... u_N, (m (N + 1),)."""
    with _quiet():
        return np.asarray(io.dynamics(0.0, guess, x), dtype=float)


def peer_input(io: Any, x: np.ndarray, guess: np.ndarray) -> np.ndarray:
    """The I/O system's output at the state ``x``, its state ``guess``: the input u_0 (m,) it applies."""
    with _quiet():
        return np.atleast_1d(np.asarray(io.output(0.0, guess, x), dtype=float))


@contextmanager
def _quiet() -> Iterator[None]:
    """scipy's note that the unbounded state components' rows "are ignored" (they are: +-inf) silenced; python-control's
    warning that SLSQP did not succeed made an error (it would otherwise return the unfinished plan)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "At least one constraint is unbounded")
        warnings.filterwarnings("error", "unable to solve optimal control problem")
        yield
