"""Estimation benchmark, side by side in one run (issue 48: one EKF update for the Panda, 14 states and 7 outputs,
<= 50 us): one sample of robodyn's EKF block on example-robot-data's Panda (fingers fixed, as bench_control.py's),
T = 1 ms, the 7 joint angles measured, against the same sample on the block's Python path and filterpy.

Lines (median over SAMPLES samples of a run, each at new inputs so that nothing is reused; the lines take turns):

- robodyn compiled, block: the block's outputs then its next state (``h_raw``, ``f_raw``: what a diagram calls per
  sample), one compiled call (robodyn.control.estimation.compiled);
- robodyn compiled, kernel: the compiled sample alone (``CompiledExtended.sample``);
- robodyn Python path: the same block with ``compiled=False`` (numpy, scipy's expm and Cholesky per sample);
- filterpy EKF, matrices given: ``ExtendedKalmanFilter.update`` then ``predict`` with H, R, F = Phi, Q = Qd and the
  mean set beforehand (its arithmetic alone: no Jacobian, exponential or integration in its time);
- filterpy EKF, same work: filterpy's update and predict plus what robodyn's sample also computes (the Jacobian
  through ModelPoints, Van Loan's Phi and Qd by scipy's expm, the RK4 mean).

Agreement is printed for the last sample: the compiled block against the Python path, and filterpy's posterior
against robodyn's. Then the UKF's sample on the same Panda and the cart-pole's EKF, compiled against the Python
path. BLAS runs on one thread throughout (robodyn.base.blas.one_blas_thread): one run without the limit measured
every line 1.5-2x slower and filterpy's scipy-based line 50x, OpenBLAS's idle threads spinning on the 2 shared
cores.

Run: PYTHONPATH=src python benchmarks/bench_estimation.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).parents[1] / "tests")]

from filterpy.kalman import ExtendedKalmanFilter  # noqa: E402

from pinocchio_reference import ROBOTS  # noqa: E402
from robodyn.base.blas import one_blas_thread  # noqa: E402
from robodyn.control.estimation.blocks import ekf, ukf  # noqa: E402
from robodyn.control.estimation.compiled import CompiledExtended  # noqa: E402
from robodyn.control.estimation.discretization import noise_discretization, rk4_points  # noqa: E402
from robodyn.control.optimal.batch.points import ModelPoints  # noqa: E402
from robodyn.mechanisms.urdf.chain import chain_from_urdf  # noqa: E402

T = 0.001  # s, the sample period (a 1 kHz loop)
SAMPLES = 2000  # timed samples per line; the median is kept (the machine is shared)
ROUNDS = 10  # the lines take turns, SAMPLES / ROUNDS samples at a time
GOAL = 50e-6  # s per update (issue 48)


def _panda() -> object:
    text = (ROBOTS / "panda_description/urdf/panda.urdf").read_text(encoding="utf-8")
    path = Path(tempfile.mkdtemp()) / "panda_arm.urdf"
    path.write_text(text.replace('type="prismatic"', 'type="fixed"'), encoding="utf-8")
    return chain_from_urdf(path)


def _medians(steps: dict[str, Callable[[int], object]]) -> dict[str, tuple[float, float]]:
    """The median wall and CPU (this thread's: other processes on a shared machine do not stretch it) times of each
    ``step(k)`` over SAMPLES values of k (after 20 untimed), the lines interleaved in ROUNDS rounds so that a busy
    moment of the machine falls on all of them alike."""
    for step in steps.values():
        for k in range(20):
            step(k)
    wall, cpu = {label: np.empty(SAMPLES) for label in steps}, {label: np.empty(SAMPLES) for label in steps}
    per_round = SAMPLES // ROUNDS
    for r in range(ROUNDS):
        for label, step in steps.items():
            for k in range(r * per_round, (r + 1) * per_round):
                start, start_cpu = time.perf_counter(), time.thread_time()
                step(k)
                wall[label][k], cpu[label][k] = time.perf_counter() - start, time.thread_time() - start_cpu
    return {label: (float(np.median(wall[label])), float(np.median(cpu[label]))) for label in steps}


def main() -> None:
    plant = _panda()
    n, m, joints = plant.n_states, plant.n_inputs, list(plant.outputs[:7])
    Qn, Rn, P0 = 1e-3 * np.eye(n), 1e-6 * np.eye(7), 1e-2 * np.eye(n)
    fast = ekf(plant, T, Qn, Rn, outputs=joints, P0=P0)
    python = ekf(plant, T, Qn, Rn, outputs=joints, P0=P0, compiled=False)
    p_plant, p_block = plant.parameter_vector(), fast.parameter_vector()
    points = ModelPoints(plant, p_plant)
    kernel = CompiledExtended(points.compiled().addresses, p_plant, np.zeros(n), P0, list(range(7)), Rn, Qn, T, 1,
                              None, m, "ekf")
    rng = np.random.default_rng(0)
    inputs = [np.concatenate([1e-2 * rng.standard_normal(7), rng.standard_normal(m)]) for _ in range(SAMPLES + 20)]
    z = np.zeros(fast.n_states)
    z[:7] = 0.3  # a bent arm

    def block(model: object) -> Callable[[int], object]:
        return lambda k: (model.h_raw(k * T, z, inputs[k], p_block), model.f_raw(k * T, z, inputs[k], p_block))

    H = np.eye(n)[:7]
    x, P = z[:n].copy(), P0.copy()
    theirs = ExtendedKalmanFilter(dim_x=n, dim_z=7, dim_u=m)
    Phi, Qd = noise_discretization(points.jacobians(np.zeros(1), x[None], np.zeros((1, m)))[0][0], Qn, T)

    def given(k: int) -> None:
        theirs.x, theirs.P, theirs.R, theirs.F, theirs.Q = x.copy(), P.copy(), Rn, Phi, Qd
        theirs.update(inputs[k][:7], lambda s: H, lambda s: H @ s)
        theirs.predict()

    def same_work(k: int) -> None:
        u = inputs[k][7:]
        theirs.x, theirs.P, theirs.R = x.copy(), P.copy(), Rn
        theirs.update(inputs[k][:7], lambda s: H, lambda s: H @ s)
        A = points.jacobians(np.array([k * T]), theirs.x[None], u[None])[0][0]
        theirs.F, theirs.Q = noise_discretization(A, Qn, T)
        mean = rk4_points(points, k * T, theirs.x, u, T)[0]
        theirs.predict()
        theirs.x = mean

    lines = _medians({"robodyn compiled, block (h + f)": block(fast),
                      "robodyn compiled, kernel alone": lambda k: kernel.sample(k * T, z, inputs[k]),
                      "robodyn Python path (compiled=False)": block(python),
                      "filterpy EKF, matrices given": given,
                      "filterpy EKF, same work (Jacobian, expm, RK4)": same_work})
    wall, cpu = lines["robodyn compiled, block (h + f)"]
    print(f"EKF sample, Panda (14 states, 7 measured joint angles), T = {T * 1e3:g} ms; median of {SAMPLES}")
    print(f"  {'':48s} {'wall':>9s}    {'cpu':>7s}     ratio to the compiled block (wall / cpu)")
    for label, (w, c) in lines.items():
        print(f"  {label:48s} {w * 1e6:6.1f} us  {c * 1e6:6.1f} us   {w / wall:6.2f} / {c / cpu:5.2f}")
    verdict = "met" if min(wall, cpu) <= GOAL else "NOT met"
    print(f"  goal <= {GOAL * 1e6:.0f} us per update (the CPU time on a shared machine): {verdict}")
    k = SAMPLES - 1
    mine, ref = block(fast)(k), block(python)(k)
    gap = max(float(np.max(np.abs(a - b))) for a, b in zip(mine, ref, strict=True))
    same_work(k)
    gap_filterpy = max(float(np.max(np.abs(mine[0][:n] - theirs.x_post))),
                       float(np.max(np.abs(mine[0][n:] - np.diag(theirs.P_post)))))
    print(f"  agreement at the last sample: compiled vs Python path {gap:.1e}; filterpy's posterior {gap_filterpy:.1e}")
    unscented, unscented_python = (ukf(plant, T, Qn, Rn, outputs=joints, P0=P0, compiled=flag)
                                   for flag in (True, False))
    found = _medians({"compiled": block(unscented), "Python path": block(unscented_python)})
    (wall_u, cpu_u), (wall_up, cpu_up) = found["compiled"], found["Python path"]
    print(f"UKF sample, the same Panda (29 sigma points): compiled block {wall_u * 1e6:.1f} us wall / "
          f"{cpu_u * 1e6:.1f} us cpu, Python path {wall_up * 1e6:.1f} / {cpu_up * 1e6:.1f} us "
          f"({wall_up / wall_u:.1f} x)")
    cart_pole()


def cart_pole() -> None:
    """The cart-pole's EKF (4 states, x and theta measured) at 1 kHz: its cost per sample of the closed loop of
    cart-pole + EKF + MPC (issue 48: 10 s of that loop in <= 5 s)."""
    import robodyn

    plant = robodyn.load("cart_pole")
    Qn, Rn = {"x_dot": 0.1, "theta_dot": 0.1}, {"x": 1e-4, "theta": 1e-4}
    fast = ekf(plant, T, Qn, Rn, outputs=["x", "theta"])
    python = ekf(plant, T, Qn, Rn, outputs=["x", "theta"], compiled=False)
    rng = np.random.default_rng(1)
    inputs = [0.01 * rng.standard_normal(3) for _ in range(SAMPLES + 20)]
    z, p = np.zeros(fast.n_states), fast.parameter_vector()
    times = _medians({label: lambda k, b=b: (b.h_raw(k * T, z, inputs[k], p), b.f_raw(k * T, z, inputs[k], p))
                      for label, b in (("compiled", fast), ("Python path", python))})
    (wall, cpu), (wall_py, cpu_py) = times["compiled"], times["Python path"]
    print(f"EKF sample, cart-pole (4 states, x and theta measured), T = {T * 1e3:g} ms: compiled block "
          f"{wall * 1e6:.1f} us wall / {cpu * 1e6:.1f} us cpu, Python path {wall_py * 1e6:.1f} / {cpu_py * 1e6:.1f} us "
          f"({wall_py / wall:.1f} x); 10 s at 1 kHz: {wall * 1e4:.2f} s of EKF")


if __name__ == "__main__":
    with one_blas_thread():  # every line on one BLAS thread: OpenBLAS's idle threads otherwise spin on 2 shared cores
        main()
