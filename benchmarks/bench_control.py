"""Control benchmarks, side by side in one run (DDP part): FDDP on the UR5 and the Panda (example-robot-data)
reaching a state target, 100 knots of 10 ms, semi-implicit Euler, the same quadratic costs and warm start (x0 and
its holding torques) as Crocoddyl. Prints the time per iteration and to convergence, and robodyn / crocoddyl.

Crocoddyl runs twice: its native DifferentialActionModelFreeFwdDynamics (C++ throughout; in this environment,
libcrocoddyl 3.2.1 beside libpinocchio 4.1.0, it reads gravity as ~0, so it solves a gravity-free problem: its
per-iteration time is still the C++ cost) and with the same problem's dynamics through Pinocchio's Python
bindings (the same problem as robodyn's; its solver in C++, the dynamics calls in Python).

MPC part (issue 48): one step of robodyn's linear MPC (`controller.solve(x)`, warm-started from the plan at the
previous sample of the closed loop) against one step of python-control's `create_mpc_iosystem` (its update at the
same x, warm-started from its own plan at the previous sample, which it shifts) on the same problem
(tests/control/mpc/peer_case.py: the cart-pole linearized upright, horizon 30, dt 20 ms, 4 states, force and track
bounds), at states of the closed loop where the bounds are active. Prints the wall and CPU (thread) times and the
ratio python-control / robodyn for each of robodyn's QP solvers, and the first inputs' difference (the ratio is
quoted at the same solution: within MPC_ATOL).

Loop part (issue 48, `loop`): the 1 kHz closed loop of examples/cart_pole_mpc_ekf.yaml (its samples made 1 ms: the
cart-pole, an EKF on noisy x and theta, the linear MPC at horizon 30 with the force and track bounds) simulated for
LOOP_SECONDS from theta = 0.2 with the example's seeded sensor noise, as `robodyn simulate` runs it. Prints the wall and
CPU time of the run against the issue's goal (10 s in <= 5 s) and the split per sample: the MPC block's law (the QP and
its glue), the EKF block (update and prediction), and the rest (the diagram's orchestration at each instant, the
noise inputs, the DOPRI5 segments between instants). The split times the two blocks' calls from inside the run.

Run: PYTHONPATH=src python benchmarks/bench_control.py [ddp] [mpc] [loop] (all by default; pinocchio 4.0.0 for
Crocoddyl's native dynamics to be right; a ratio whose costs differ by more than COST_RTOL is marked as another
problem's).
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

sys.path[:0] = [str(Path(__file__).parents[1] / "tests"), str(Path(__file__).parents[1] / "tests/control/optimal"),
                str(Path(__file__).parents[1] / "tests/control/mpc")]

import crocoddyl  # noqa: E402
import peer_case as case  # noqa: E402
import pinocchio as pin  # noqa: E402
from quadratic_problem import QuadraticProblem  # noqa: E402
from test_ddp import _PinocchioArm, native_model  # noqa: E402

import robodyn  # noqa: E402
from pinocchio_reference import ROBOTS  # noqa: E402
from robodyn.control.mpc.solvers import DEFAULT_SOLVER, installed  # noqa: E402
from robodyn.control.optimal.ddp import solve_ddp  # noqa: E402
from robodyn.mechanisms.urdf.chain import chain_from_urdf  # noqa: E402

T = TypeVar("T")
N, DT = 100, 0.01
REPEATS = 5  # each solve timed this often from the same guess, the fastest kept (the machine is noisy)
COST_RTOL = 1e-6  # a ratio is quoted for the same problem only: optimal costs within this, relative


def _panda_arm() -> Path:
    """panda.urdf with its finger joints fixed (Pinocchio ignores the mimic tag, robodyn honours it) and without
    joint damping (robodyn's dynamics include a URDF's ``<dynamics damping>``, Pinocchio's ABA does not)."""
    text = (ROBOTS / "panda_description/urdf/panda.urdf").read_text(encoding="utf-8")
    text = text.replace('type="prismatic"', 'type="fixed"')
    text = re.sub(r'damping="[^"]*"', 'damping="0"', text)
    path = Path(tempfile.mkdtemp()) / "panda_arm.urdf"
    path.write_text(text, encoding="utf-8")
    return path


def _crocoddyl(running: object, terminal: object, x0: np.ndarray, guess: tuple) -> tuple[float, int, float]:
    problem = crocoddyl.ShootingProblem(x0, [crocoddyl.IntegratedActionModelEuler(running, DT)] * N,
                                        crocoddyl.IntegratedActionModelEuler(terminal, 0.0))
    solver = crocoddyl.SolverFDDP(problem)
    solver.th_stop = 1e-9
    best = np.inf
    for _ in range(REPEATS):
        start = time.perf_counter()
        solver.solve(list(guess[0]), list(guess[1]), 200, False)
        best = min(best, time.perf_counter() - start)
    return best, max(solver.iter, 1), solver.cost


def bench(name: str, path: Path) -> None:
    reference, model = pin.buildModelFromUrdf(str(path)), chain_from_urdf(path)
    nv = reference.nv
    rng = np.random.default_rng(0)
    q0 = pin.neutral(reference) + 0.3
    x0, x_ref = np.r_[q0, np.zeros(nv)], np.r_[q0 + rng.uniform(-0.5, 0.5, nv), np.zeros(nv)]
    Q, R = np.diag(np.r_[np.full(nv, 10.0), np.full(nv, 0.1)]), np.diag(np.full(nv, 1e-3))
    Qf = np.diag(np.r_[np.full(nv, 1e4), np.full(nv, 10.0)])
    holding = pin.rnea(reference, reference.createData(), q0, np.zeros(nv), np.zeros(nv))
    guess = (np.tile(x0, (N + 1, 1)), np.tile(holding, (N, 1)))
    problem = QuadraticProblem(model, N * DT, N, x0, Q, R, Qf, x_ref, np.zeros(nv), mechanical=nv, guess=guess)
    solve_ddp(problem, integrator="euler", max_iterations=1)  # compile / load the numba cache first
    outcomes = [solve_ddp(problem, integrator="euler") for _ in range(REPEATS)]
    outcome = min(outcomes, key=lambda o: o.seconds)
    rows = [("robodyn fddp", outcome.seconds, max(outcome.iterations, 1), outcome.cost)]
    rows.append(("crocoddyl native", *_crocoddyl(native_model(reference, Q, R, x_ref),
                                                 native_model(reference, Qf, None, x_ref),
                                                 x0, guess)))
    rows.append(("crocoddyl python dyn", *_crocoddyl(_PinocchioArm(reference, Q, R, x_ref),
                                                     _PinocchioArm(reference, Qf, R, x_ref), x0, guess)))
    print(f"{name}: {N} knots, dt {DT}, nv {nv}")
    for label, seconds, iterations, cost in rows:
        print(f"  {label:22s} total {seconds * 1e3:9.2f} ms  iterations {iterations:3d}  "
              f"per iteration {seconds / iterations * 1e3:8.3f} ms  cost {cost:.10g}")
    for label, seconds, iterations, cost in rows[1:]:
        agree = abs(cost - rows[0][3]) <= COST_RTOL * abs(rows[0][3])
        print(f"  ratio robodyn / {label}: total {rows[0][1] / seconds:.2f}, per iteration "
              f"{rows[0][1] / rows[0][2] / (seconds / iterations):.2f}"
              + ("" if agree else f"  (NOT the same problem: costs differ by "
                                  f"{abs(cost - rows[0][3]) / abs(rows[0][3]):.1e} relative)"))


MPC_SAMPLES = (1, 3, 5, 8, 12, 20)  # samples of the closed loop from X0 timed: the force saturated up to 9, the track
#                                    bound active in the plans from 2 on
MPC_REPEATS = 20  # robodyn's step timed this often (each from the same warm start), the fastest kept
MPC_ATOL = 1e-4  # the same solution: first inputs within this (N)


def _timed(function: Callable[[], T]) -> tuple[float, float, T]:
    """Wall and CPU (this thread's) seconds of one call, and its value."""
    start, start_cpu = time.perf_counter(), time.thread_time()
    value = function()
    return time.perf_counter() - start, time.thread_time() - start_cpu, value


def _loop_states() -> list[np.ndarray]:
    """The closed loop x_{k+1} = A x_k + B u_k from X0 under robodyn's MPC (ProxQP: the exact plans) up to the last
    sample timed."""
    controller = case.controller("proxsuite" if "proxsuite" in installed() else "clarabel")
    A, B = np.asarray(controller.plant.A), np.asarray(controller.plant.B)
    states = [case.X0]
    for _ in range(max(MPC_SAMPLES)):
        states.append(A @ states[-1] + B @ controller(states[-1]))
    return states


def _robodyn_step(controller: robodyn.MPC, before: np.ndarray, x: np.ndarray) -> tuple[float, float, np.ndarray]:
    """The fastest of MPC_REPEATS warm steps at ``x`` (each after a solve at ``before``): wall, CPU, first input."""
    wall = cpu = np.inf
    first = np.full(1, np.nan)
    for _ in range(MPC_REPEATS):
        controller.reset()
        controller.solve(before)
        seconds, cpu_seconds, plan = _timed(lambda: controller.solve(x))
        wall, cpu, first = min(wall, seconds), min(cpu, cpu_seconds), plan.inputs[0]
    return wall, cpu, first


def bench_mpc() -> None:
    import control

    states = _loop_states()
    solvers = [DEFAULT_SOLVER, *(s for s in installed() if s != DEFAULT_SOLVER)]
    controllers = {s: case.controller(s) for s in solvers}
    io = case.peer(controllers[DEFAULT_SOLVER])
    print(f"MPC step: cart-pole, horizon {case.N}, dt {case.DT}, 4 states, |F| <= 5 N, |x| <= 1 m; python-control "
          f"{control.__version__} create_mpc_iosystem (SLSQP, ftol 1e-12) against robodyn ({', '.join(solvers)})")
    print("sample  python-control wall / cpu    solver      robodyn wall / cpu     |du0|    ratio wall / cpu")
    ratios: dict[str, list[tuple[float, float, bool]]] = {s: [] for s in solvers}
    for k in MPC_SAMPLES:
        before, x = states[k - 1], states[k]
        guess = case.peer_plan(io, before, np.zeros(case.N + 1))  # its plan at the previous sample (untimed)
        wall_pc, cpu_pc, plan = _timed(lambda: case.peer_plan(io, x, guess))  # noqa: B023
        for s in solvers:
            wall, cpu, first = _robodyn_step(controllers[s], before, x)
            gap = float(np.max(np.abs(first - plan[:1])))
            same = gap <= MPC_ATOL
            ratios[s].append((wall_pc / wall, cpu_pc / cpu, same))
            print(f"{k:6d}  {wall_pc * 1e3:10.1f} / {cpu_pc * 1e3:8.1f} ms   {s:10s} {wall * 1e6:8.0f} / "
                  f"{cpu * 1e6:6.0f} us  {gap:8.1e}  {wall_pc / wall:8.0f} / {cpu_pc / cpu:6.0f}"
                  + ("" if same else "  (NOT the same solution)"))
    for s in solvers:
        same = [r for r in ratios[s] if r[2]]
        label = " (the default)" if s == DEFAULT_SOLVER else ""
        if same:
            print(f"  median ratio python-control / robodyn {s}{label}: wall {np.median([r[0] for r in same]):.0f}, "
                  f"cpu {np.median([r[1] for r in same]):.0f} over the {len(same)} of {len(ratios[s])} samples at "
                  f"the same solution")
        else:
            print(f"  robodyn {s}{label}: no sample at the same solution (first inputs within {MPC_ATOL:g})")


LOOP_SECONDS = 10.0  # of simulated time: the goal is these in <= LOOP_GOAL s of wall time
LOOP_GOAL = 5.0
LOOP_SAMPLE = 0.001


def _loop_model() -> robodyn.Diagram:
    """examples/cart_pole_mpc_ekf.yaml with both blocks sampled every LOOP_SAMPLE."""
    text = (Path(__file__).parents[1] / "examples/cart_pole_mpc_ekf.yaml").read_text(encoding="utf-8")
    path = Path(tempfile.mkdtemp()) / "cart_pole_mpc_ekf_1khz.yaml"
    path.write_text(text.replace("sample: 0.02", f"sample: {LOOP_SAMPLE}"), encoding="utf-8")
    return robodyn.load(path)


class _Clock:
    """The wall and CPU (thread) time spent in calls of one block's functions, wrapped on the instance for this
    measurement only."""

    def __init__(self, model: object, *names: str) -> None:
        self.wall = self.cpu = 0.0
        for name in names:
            function = getattr(model, name)
            setattr(model, name, self._timed(function))

    def _timed(self, function: Callable[..., T]) -> Callable[..., T]:
        def timed(*arguments: object) -> T:
            wall, cpu, value = _timed(lambda: function(*arguments))
            self.wall, self.cpu = self.wall + wall, self.cpu + cpu
            return value

        return timed


def bench_loop() -> None:
    import subprocess

    from robodyn.signals import WhiteNoise

    model = _loop_model()
    noise = {"noise_x": WhiteNoise(0.01, LOOP_SAMPLE, 1), "noise_theta": WhiteNoise(0.01, LOOP_SAMPLE, 2)}
    x0 = {"plant.theta": 0.2}
    robodyn.simulate(model, (0.0, 0.01), x0, noise)  # kernels compiled or loaded, QP set up: outside the timing
    mpc, ekf = _Clock(model.blocks["mpc"], "_h"), _Clock(model.blocks["ekf"], "_f", "_h")
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    wall, cpu, run = _timed(lambda: robodyn.simulate(model, (0.0, LOOP_SECONDS), x0, noise))
    samples = round(LOOP_SECONDS / LOOP_SAMPLE)
    status = run.y[:, list(model.outputs).index("status")]
    force = run.y[:, list(model.outputs).index("F")]
    print(f"1 kHz loop (examples/cart_pole_mpc_ekf.yaml at {LOOP_SAMPLE * 1e3:g} ms; MPC solver "
          f"{model.blocks['mpc']}): {LOOP_SECONDS:g} s simulated in {wall:.2f} s wall, {cpu:.2f} s CPU (goal <= "
          f"{LOOP_GOAL:g} s: {'met' if wall <= LOOP_GOAL else 'NOT met'}); |F| <= {np.max(np.abs(force)):.3f} N, "
          f"{int(np.sum(status != 0))} steps not solved, |theta(end)| = {abs(run.x[-1, 1]):.1e} rad")
    print("per sample      wall      cpu")
    rest_wall, rest_cpu = wall - mpc.wall - ekf.wall, cpu - mpc.cpu - ekf.cpu
    for label, w, c in (("MPC", mpc.wall, mpc.cpu), ("EKF", ekf.wall, ekf.cpu), ("rest", rest_wall, rest_cpu),
                        ("total", wall, cpu)):
        print(f"  {label:8s} {w / samples * 1e6:6.0f} us {c / samples * 1e6:6.0f} us")


if __name__ == "__main__":
    parts = sys.argv[1:] or ["ddp", "mpc", "loop"]
    if "ddp" in parts:
        bench("UR5", ROBOTS / "ur_description/urdf/ur5_robot.urdf")
        bench("Panda", _panda_arm())
    if "mpc" in parts:
        bench_mpc()
    if "loop" in parts:
        bench_loop()
