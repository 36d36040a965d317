"""Every shared compiled kernel made ready on a machine, in parallel processes: ``python -m robodyn.prepare``.

robodyn's kernels that do not depend on a model — the integrators' (:mod:`robodyn.integrate.prepare`), the DDP
family's passes and batched rollout, TVLQR's Riccati ODE, zero-order holds and recursion, the tracking feedback
inside the input evaluator, the estimator blocks' samples — are compiled by numba once per machine and robodyn
version and then loaded from the private cache by every later process. Several processes that start at once (a test
suite's workers, a pool of sweeps) would each compile the ones they lack at the same time; preparing them first, one
task per process with ``--jobs`` processes (default: one per core), compiles each once and keeps every core busy.

Each task is a short run of a catalog model that reaches one group of kernels; ``python -m robodyn.prepare``
prints one line per task: its name, whether its kernels were compiled or loaded, and the wall time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Final

__all__ = ["TASKS", "Task", "prepare_all", "share"]


def _integrator(method: str) -> Callable[[], None]:
    def run() -> None:
        from robodyn.files.loading import load
        from robodyn.integrate.prepare import PREPARED_METHODS
        from robodyn.integrate.simulate import simulate

        simulate(load("joint"), 0.1, method=method, dt=PREPARED_METHODS[method])

    return run


def _ddp() -> None:
    """FDDP and DDP on the pendulum (the passes, the batched knots, the compiled rollout)."""
    import numpy as np

    from robodyn.control.optimal.problem import OptimalControlProblem
    from robodyn.files.loading import load

    costs = {"state": {"weights": {"theta": 1.0, "theta_dot": 0.1}}, "input": {"weights": {"tau": 0.1}}}
    for method in ("fddp", "ddp"):
        for integrator in ("rk4", "euler"):
            OptimalControlProblem(load("pendulum"), 0.2, 4, np.array([0.1, 0.0]), costs, method=method,
                                  integrator=integrator).solve()


def _tvlqr() -> None:
    """TVLQR, continuous and discrete, and its feedback simulated (the Riccati ODE, holds, recursion, evaluator)."""
    import numpy as np

    from robodyn.control.tracking.tvlqr import tvlqr
    from robodyn.files.loading import load
    from robodyn.integrate.simulate import simulate

    model = load("pendulum")
    run = simulate(model, 0.2, np.array([0.1, 0.0]), None, method="rk4", dt=0.05)
    for discrete in (False, True):
        design = tvlqr(model, run, np.eye(2), np.eye(1), discrete=discrete)
    simulate(model, 0.2, np.array([0.11, 0.0]), design.feedback, method="rk4", dt=0.05)


def _estimators() -> None:
    """The compiled samples of the kalman, ekf and ukf blocks (robodyn.control.estimation.compiled), one sample each
    on the pendulum measured by its angle."""
    import numpy as np

    from robodyn.control.estimation.blocks import ekf, kalman, ukf
    from robodyn.files.loading import load
    from robodyn.linearization.linearize import linearize

    plant = load("pendulum")
    linear = linearize(plant, x={"theta": 0.1, "theta_dot": 0.0})
    Qn, Rn = {"theta_dot": 0.01}, {"theta": 1e-4}
    blocks = [kalman(linear, 0.01, Qn, Rn, outputs=["theta"]),
              *(make(plant, 0.01, Qn, Rn, outputs=["theta"]) for make in (ekf, ukf))]
    for block in blocks:
        z, v = np.zeros(block.n_states), np.zeros(block.n_inputs)
        block.f_raw(0.0, z, v, block.parameter_vector())


@dataclass(frozen=True, slots=True)
class Task:
    """One group of kernels: ``name``, ``run`` reaching them, and ``cost``, the seconds of its cold compile on the
    2-core development machine (to share the tasks out evenly)."""

    name: str
    run: Callable[[], None]
    cost: float


#: The tasks, longest first (they are handed to the processes in this order).
TASKS: Final[tuple[Task, ...]] = (
    Task("radau", _integrator("radau"), 46.0),
    Task("estimators", _estimators, 45.0),
    Task("tvlqr", _tvlqr, 33.0),
    Task("ddp", _ddp, 30.0),
    Task("dopri5", _integrator("dopri5"), 19.0),
    Task("dop853", _integrator("dop853"), 17.0),
    Task("rk4", _integrator("rk4"), 1.0),
)


def share(parts: int) -> list[list[str]]:
    """The tasks' names split into ``parts`` lists of about equal cost (longest first to the least loaded)."""
    shares: list[list[str]] = [[] for _ in range(max(1, parts))]
    loads = [0.0] * len(shares)
    for task in TASKS:
        least = loads.index(min(loads))
        shares[least].append(task.name)
        loads[least] += task.cost
    return shares


def _run(name: str) -> tuple[str, float]:
    from robodyn.base.progress import quiet

    task = {t.name: t for t in TASKS}[name]
    start = time.perf_counter()
    with quiet():
        task.run()
    return name, time.perf_counter() - start


def prepare_all(names: Sequence[str] | None = None, jobs: int | None = None) -> list[tuple[str, float]]:
    """Run the tasks ``names`` (default: all) in ``jobs`` processes (default: one per core); (name, seconds) of
    each, in the order they finished."""
    known = [t.name for t in TASKS]
    chosen = known if names is None else [n for n in known if n in names]
    unknown = sorted(set(names or ()) - set(known))
    if unknown:
        from robodyn.base.errors import UnknownNameError

        raise UnknownNameError(f"no preparation task named {', '.join(unknown)}: the tasks are {', '.join(known)}")
    workers = max(1, min(jobs or os.cpu_count() or 1, len(chosen)))
    if workers == 1:
        return [_run(name) for name in chosen]
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        return list(pool.map(_run, chosen))


def main(argv: Sequence[str] | None = None) -> int:  # pragma: no cover - exercised by make test
    parser = argparse.ArgumentParser(prog="python -m robodyn.prepare", description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=None, help="processes (default: one per core)")
    parser.add_argument("tasks", nargs="*", help=f"tasks to run (default: all of {', '.join(t.name for t in TASKS)})")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    for name, seconds in prepare_all(args.tasks or None, args.jobs):
        print(f"robodyn prepare: {name:<7} {seconds:6.1f} s")
    print(f"robodyn prepare: all    {time.perf_counter() - start:6.1f} s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
