"""TVLQR along 1,000 knots of the Panda (example-robot-data's stock URDF: 9 joints, 18 states): issue 47's speed goal
is <= 50 ms.

The trajectory: the robot falling from a bent pose under zero torque for 1 s, rk4 at 1 ms (1,001 knots, the inputs
held). Both forms of robodyn.tvlqr are timed (best of 3, wall time), then profiled by stage: the Jacobians at the
knots, the slopes of x* (f at the knots), the zero-order-hold exponentials and the Riccati recursion or ODE.

    python benchmarks/bench_tvlqr.py
"""

from __future__ import annotations

import importlib.metadata
import os
import time
from pathlib import Path

import numpy as np

import robodyn

GOAL = 0.050  # s, issue 47


def panda() -> robodyn.Model:
    folder = Path(str(importlib.metadata.distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots")))
    return robodyn.load(str(folder / "panda_description/urdf/panda.urdf"))


def best(function, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    model = panda()
    n, m = model.n_states, model.n_inputs
    q0 = np.linspace(0.3, -0.3, n // 2)
    trajectory = robodyn.simulate(model, 1.0, np.concatenate([q0, np.zeros(n // 2)]), None, method="rk4", dt=1e-3,
                                  limits="ignore")
    Q, R = np.eye(n), 0.01 * np.eye(m)
    print(f"Panda (stock URDF): {n} states, {m} inputs, {len(trajectory)} knots; load {os.getloadavg()[0]:.2f}")
    for discrete in (True, False):  # compile and warm every path once
        robodyn.tvlqr(model, trajectory, Q, R, discrete=discrete)
    for label, discrete in (("discrete (ZOH + Riccati recursion)", True),
                            ("continuous (Riccati ODE, compiled DOP853)", False)):
        seconds = best(lambda d=discrete: robodyn.tvlqr(model, trajectory, Q, R, discrete=d))
        print(f"  {label:38s} {seconds * 1e3:9.1f} ms   goal {GOAL * 1e3:.0f} ms: "
              f"{'met' if seconds <= GOAL else 'not met'} (ratio {seconds / GOAL:.2f})")
    stages(model, trajectory, Q, R)
    continuous_work(model, trajectory, Q, R)


def continuous_work(model, trajectory, Q, R) -> None:
    """The continuous form's work: DOP853's steps, right-hand sides and Jacobians, and what those Jacobians cost
    alone (the same number at the knots, one compiled loop): the floor of this form on one core."""
    from robodyn.base.blas import one_blas_thread
    from robodyn.control.optimal.batch.kernels import jacobian_points
    from robodyn.control.tracking.knots import compiled_functions, derivatives_at_knots
    from robodyn.control.tracking.riccati_ode import compiled_riccati
    from robodyn.control.tracking.tvlqr import DEFAULT_RTOL

    p = model.parameter_vector()
    t, x, u = trajectory.t, trajectory.x, trajectory.u
    knots = derivatives_at_knots(model, t, x, u, p, True)
    fns = compiled_functions(model)
    with one_blas_thread():
        solution = compiled_riccati(fns, t, x, u, knots.d0, knots.d1, True, p, Q, R, Q, DEFAULT_RTOL)
        seconds = best(lambda: compiled_riccati(fns, t, x, u, knots.d0, knots.d1, True, p, Q, R, Q, DEFAULT_RTOL))
    count = solution.jacobians
    rows = np.arange(count) % len(t)
    times, X, U = np.ascontiguousarray(t[rows]), np.ascontiguousarray(x[rows]), np.ascontiguousarray(u[rows])
    out = np.empty((count, model.n_states * (model.n_states + model.n_inputs)))
    alone = best(lambda: jacobian_points(fns, times, X, U, p, out))
    print(f"    Riccati ODE: {solution.steps} steps, {solution.rates} right-hand sides, {count} Jacobians "
          f"{seconds * 1e3:9.1f} ms")
    print(f"    the same {count} Jacobians alone, one thread {alone * 1e3:17.1f} ms "
          f"({alone / count * 1e6:.2f} us each)")


def stages(model, trajectory, Q, R) -> None:
    """Where the time of the discrete form goes (the same steps tvlqr takes)."""
    from robodyn.base.blas import one_blas_thread
    from robodyn.control.tracking.knots import derivatives_at_knots
    from robodyn.control.tracking.riccati import discrete_riccati
    from robodyn.control.tracking.zoh import zoh_models

    p = model.parameter_vector()
    t, x, u = trajectory.t, trajectory.x, trajectory.u
    knots = derivatives_at_knots(model, t, x, u, p, True)
    h = np.diff(t)
    Phi, Gamma = zoh_models(knots.A[:-1], knots.B[:-1], h)
    parts = {
        "Jacobians at 1,001 knots, 2 x 1,000 f": lambda: derivatives_at_knots(model, t, x, u, p, True),
        "ZOH exponentials (compiled)": lambda: zoh_models(knots.A[:-1], knots.B[:-1], h),
        "Riccati recursion (compiled)": lambda: discrete_riccati(Phi, Gamma, h, Q, R, Q),
    }
    with one_blas_thread():
        for label, function in parts.items():
            print(f"    {label:38s} {best(function) * 1e3:9.1f} ms")


if __name__ == "__main__":
    main()
