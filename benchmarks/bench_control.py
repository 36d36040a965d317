"""Control benchmarks, side by side in one run (DDP part): FDDP on the UR5 and the Panda (example-robot-data)
reaching a state target, 100 knots of 10 ms, semi-implicit Euler, the same quadratic costs and warm start (x0 and
its holding torques) as Crocoddyl. Prints the time per iteration and to convergence, and robodyn / crocoddyl.

Crocoddyl runs twice: its native DifferentialActionModelFreeFwdDynamics (C++ throughout; in this environment,
libcrocoddyl 3.2.1 beside libpinocchio 4.1.0, it reads gravity as ~0, so it solves a gravity-free problem: its
per-iteration time is still the C++ cost) and with the same problem's dynamics through Pinocchio's Python
bindings (the same problem as robodyn's; its solver in C++, the dynamics calls in Python).

Run: PYTHONPATH=src python benchmarks/bench_control.py (pinocchio 4.0.0 for Crocoddyl's native dynamics to be right;
a ratio whose costs differ by more than COST_RTOL is marked as another problem's).
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).parents[1] / "tests"), str(Path(__file__).parents[1] / "tests/control/optimal")]

import crocoddyl  # noqa: E402
import pinocchio as pin  # noqa: E402
from quadratic_problem import QuadraticProblem  # noqa: E402
from test_ddp import _PinocchioArm, native_model  # noqa: E402

from pinocchio_reference import ROBOTS  # noqa: E402
from robodyn.control.optimal.ddp import solve_ddp  # noqa: E402
from robodyn.mechanisms.urdf.chain import chain_from_urdf  # noqa: E402

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


if __name__ == "__main__":
    bench("UR5", ROBOTS / "ur_description/urdf/ur5_robot.urdf")
    bench("Panda", _panda_arm())
