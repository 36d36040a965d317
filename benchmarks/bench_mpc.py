"""The QP solver of robodyn.mpc, chosen by measurement (issue 48): OSQP, Clarabel and ProxQP side by side, each on
the sparse (states as variables) and the condensed formulation, on the same problems:

- a double integrator (2 states, 1 input; dt 0.1 s), its force and speed bounded;
- the joint of the course (``joint``: 2 states, 1 input; dt 10 ms), its torque bounded;
- the cart-pole linearized upright (4 states, 1 input; dt 20 ms), force and track bounded;
- six oscillating masses (12 states, 3 inputs; dt 0.5 s; Wang & Boyd, "Fast model predictive control using online
  optimization", IEEE TCST 18(2), 2010), forces and positions bounded;

- the cart-pole of examples/cart_pole_mpc_ekf.yaml at 1 kHz (``cart-pole 1k``: dt 1 ms, |F| <= 5 N, |x| <= 1 m; the
  force saturated over the whole plan at every sample);

horizons 10, 30 and 50. Each problem is a closed loop of STEPS samples on the prediction model with a seeded
disturbance, run once with the reference (Clarabel, sparse); every solver then solves the QPs at the same recorded
states in order (warm-started as in use). Shown per solver and form: the median wall time and the median CPU time of
the thread (which other processes on the shared machine do not stretch) of ``controller.solve`` (the whole call:
vectors, QP, plan), the mean iterations, the largest difference of the whole plan's inputs from the exact solution
(an active-set iteration whose KKT systems numpy solves: exact to rounding) and the statuses met. ``auto`` (the
default: its size rule picks the form) runs beside each solver's two forms. Then each solver's tolerance against its
time and accuracy (the cart-pole, N = 30, sparse).

    python benchmarks/bench_mpc.py [problem ...]   (names' first words, e.g. "cart-pole"; all by default)
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import robodyn
from robodyn.control.mpc.controller import MPC, mpc
from robodyn.control.mpc.solvers import installed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "control" / "mpc"))
from mpc_cases import exact_plan  # the tests' exact QP solution, one definition

STEPS = 60  # closed-loop samples per problem
HORIZONS = (10, 30, 50)
FORMS = ("sparse", "condensed")


def masses(count: int = 6) -> robodyn.LinearSystem:
    """``count`` unit masses in a row between walls, unit springs, damping 0; forces on the first three pairs."""
    n = 2 * count
    K = 2 * np.eye(count) - np.eye(count, k=1) - np.eye(count, k=-1)
    A = np.block([[np.zeros((count, count)), np.eye(count)], [-K, np.zeros((count, count))]])
    B = np.zeros((n, 3))
    B[count:, :] = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, 0, 1], [0, -1, 0], [0, 0, -1]]
    states = [f"p{i}" for i in range(count)] + [f"v{i}" for i in range(count)]
    return robodyn.LinearSystem(A, B, states=states, inputs=["f1", "f2", "f3"], name="masses")


def problems() -> list[tuple[str, dict, np.ndarray, float]]:
    """(name, mpc keyword arguments but the horizon and solver, x0, disturbance scale)."""
    joint = dict(sys=robodyn.load("joint"), Q=np.diag([100.0, 1.0]), R=np.array([[0.01]]), dt=0.01,
                 bounds={"inputs": {"u": [-1.0, 1.0]}})
    cart = dict(sys=robodyn.load("cart_pole"), Q=np.diag([1.0, 10.0, 0.1, 0.1]), R=np.array([[0.1]]), dt=0.02,
                bounds={"inputs": {"F": [-3.0, 3.0]}, "states": {"x": [-0.5, 0.5]}})
    mass = dict(sys=masses(), Q=np.eye(12), R=np.eye(3), dt=0.5,
                bounds={"inputs": {f: [-0.5, 0.5] for f in ("f1", "f2", "f3")},
                        "states": {f"p{i}": [-4.0, 4.0] for i in range(6)}})
    di = dict(sys=robodyn.LinearSystem([[0.0, 1.0], [0.0, 0.0]], [[0.0], [1.0]], states=["p", "v"], inputs=["u"]),
              Q=np.eye(2), R=np.array([[0.1]]), dt=0.1,
              bounds={"inputs": {"u": [-1.0, 1.0]}, "states": {"v": [-1.5, 1.5]}})
    fast = dict(sys=robodyn.load("cart_pole"), Q=np.diag([1.0, 10.0, 0.1, 0.1]), R=np.array([[0.1]]), dt=0.001,
                bounds={"inputs": {"F": [-5.0, 5.0]}, "states": {"x": [-1.0, 1.0]}})
    x_mass = np.concatenate([np.array([3.0, -2.0, 1.5, -3.0, 2.0, 1.0]), np.zeros(6)])
    return [("double int. (2)", di, np.array([4.0, 0.0]), 0.01),
            ("joint (n=2)", joint, np.array([1.0, 0.0]), 0.01),
            ("cart-pole (n=4)", cart, np.array([0.2, 0.12, 0.0, 0.0]), 0.002),
            ("cart-pole 1k (n=4)", fast, np.array([0.0, 0.2, 0.0, 0.0]), 0.002),
            ("masses (n=12)", mass, x_mass, 0.05)]


def record(controller: MPC, x0: np.ndarray, scale: float) -> list[np.ndarray]:
    """The states of a closed loop on the prediction model, x+ = A x + B u + seeded disturbance."""
    rng = np.random.default_rng(48)
    plant, x, states = controller.plant, x0.copy(), []
    for _ in range(STEPS):
        states.append(x.copy())
        u = controller(x)
        x = plant.A @ (x - plant.x_op) + plant.B @ (u - plant.u_op) + plant.c + plant.x_op
        x += scale * rng.standard_normal(x.size)
    return states


def exact_inputs(controller: MPC, x: np.ndarray, plan) -> np.ndarray:
    """The inputs (N, m) of the QP solved exactly (tests/control/mpc/mpc_cases.py: a primal-dual active-set
    iteration on the condensed problem, the KKT systems solved by numpy), started from ``plan``'s active set."""
    plant = controller.plant
    inputs = exact_plan(plant.A, plant.B, plant.c, controller.Q, controller.R, controller.Qf, controller.horizon,
                        x - plant.x_op, controller.input_bounds - plant.u_op[:, None],
                        controller.state_bounds - plant.x_op[:, None], plan.inputs - plant.u_op)
    return inputs + plant.u_op


def run(problem: dict, N: int, solver: str, form: str | None, states: list[np.ndarray], exact: list[np.ndarray],
        tolerance: float | None = None) -> tuple[float, float, float, float, set[str]]:
    """Median wall and thread CPU time of controller.solve, mean iterations, worst |plan - exact| over the plans'
    inputs, statuses (``form`` None: the solver's own choice, for "auto")."""
    controller = mpc(problem["sys"], N, problem["Q"], problem["R"], bounds=problem["bounds"], dt=problem["dt"],
                     solver=solver, formulation=form, tolerance=tolerance)
    controller.solve(states[0])  # set-up (factorizations) outside the timing
    controller.reset()
    times, cpu, iterations, errors, statuses = [], [], [], [], set()
    for x, u in zip(states, exact):
        start, start_cpu = time.perf_counter(), time.thread_time()
        plan = controller.solve(x)
        cpu.append(time.thread_time() - start_cpu)
        times.append(time.perf_counter() - start)
        iterations.append(plan.iterations)
        statuses.add(plan.status)
        errors.append(float(np.max(np.abs(plan.inputs - u))) if plan.solved else np.inf)
    return (float(np.median(times)), float(np.median(cpu)), float(np.mean(iterations)), max(errors), statuses)


def main(chosen: list[str]) -> None:
    solvers = installed()
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"uptime: {load}\nsolvers: {', '.join(solvers)}; {STEPS} closed-loop samples per problem; times per "
          "controller.solve call (median wall, median CPU time of the thread)")
    print(f"{'problem':18s} {'N':>3s} {'solver':10s} {'form':9s} {'wall':>9s} {'cpu':>9s} {'iters':>7s} "
          f"{'|u - exact|':>12s}  status")
    for name, problem, x0, scale in problems():
        if chosen and name.split()[0] not in chosen:
            continue
        for N in HORIZONS:
            reference = mpc(problem["sys"], N, problem["Q"], problem["R"], bounds=problem["bounds"],
                            dt=problem["dt"], solver="clarabel")
            states = record(reference, x0, scale)
            reference.reset()
            exact = [exact_inputs(reference, x, reference.solve(x)) for x in states]
            for solver, form in [("auto", None), *((s, f) for s in solvers for f in FORMS)]:
                wall, cpu, iterations, error, statuses = run(problem, N, solver, form, states, exact)
                shown = form or mpc(problem["sys"], N, problem["Q"], problem["R"], bounds=problem["bounds"],
                                    dt=problem["dt"]).formulation
                print(f"{name:18s} {N:3d} {solver:10s} {shown:9s} {wall * 1e6:7.0f}us {cpu * 1e6:7.0f}us "
                      f"{iterations:7.1f} {error:12.1e}  {','.join(sorted(statuses))}", flush=True)
    if not chosen:
        tolerances(solvers)


def tolerances(solvers: tuple[str, ...]) -> None:
    """Each solver's time and accuracy against its tolerance (the cart-pole, N = 30, sparse)."""
    name, problem, x0, scale = problems()[2]
    reference = mpc(problem["sys"], 30, problem["Q"], problem["R"], bounds=problem["bounds"], dt=problem["dt"],
                    solver="clarabel")
    states = record(reference, x0, scale)
    reference.reset()
    exact = [exact_inputs(reference, x, reference.solve(x)) for x in states]
    print(f"\ntolerance against time and accuracy ({name}, N = 30, sparse; load {os.getloadavg()[0]:.2f}); then OSQP's "
          "polish at each tolerance on every problem (sparse): solves whose polish failed and ADMM went on to 1e-10")
    for solver in solvers:
        for tolerance in (1e-3, 1e-5, 1e-7, 1e-9, 1e-10):
            wall, cpu, iterations, error, statuses = run(problem, 30, solver, "sparse", states, exact, tolerance)
            print(f"  {solver:10s} eps {tolerance:7.0e} {wall * 1e6:7.0f}us {cpu * 1e6:7.0f}us {iterations:7.1f} "
                  f"{error:12.1e}  {','.join(sorted(statuses))}", flush=True)
    for name, problem, x0, scale in problems():
        for N in HORIZONS:
            reference = mpc(problem["sys"], N, problem["Q"], problem["R"], bounds=problem["bounds"],
                            dt=problem["dt"], solver="clarabel")
            states = record(reference, x0, scale)
            reference.reset()
            exact = [exact_inputs(reference, x, reference.solve(x)) for x in states]
            row = []
            for tolerance in (1e-3, 1e-4, 1e-5, 1e-6):
                controller = mpc(problem["sys"], N, problem["Q"], problem["R"], bounds=problem["bounds"],
                                 dt=problem["dt"], solver="osqp", tolerance=tolerance)
                plans = [controller.solve(x) for x in states]
                refined = sum("refined" in plan.detail for plan in plans)
                error = max(float(np.max(np.abs(plan.inputs - u))) for plan, u in zip(plans, exact))
                row.append(f"{tolerance:.0e}: {refined} refined, {np.mean([p.iterations for p in plans]):5.1f} it, "
                           f"err {error:.0e}")
            print(f"  {name:16s} {N:3d}  " + " | ".join(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
