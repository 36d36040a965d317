"""Trees at Pinocchio's speed: forward dynamics and linearize per call, fixed and floating bases, 6 to 38 velocities.

Robots from example-robot-data (``dynamics=False``: Pinocchio models rigid bodies only), each loaded by robodyn
(``base="floating"`` for the legged ones) and by Pinocchio (``JointModelFreeFlyer`` for those), at one random
state; side by side in one run, interleaved rounds, the median of each round's best (the machine is shared):

- forward dynamics per call: robodyn's compiled ``rhs`` called from Python (robodyn.model.compiled.python_function:
  x' of the stored state, the articulated-body algorithm on the tape) against ``pinocchio.aba``;
- linearize per call: ``robodyn.Linearizer`` (A, B, C, D into held buffers; for a floating base in the tangent
  space, 2 nv states) against ``pinocchio.computeABADerivatives`` alone and with A and B assembled into
  preallocated arrays (A = [[0, I], [da/dq, da/dv]], B = [0; M^-1 S]);
- the public calls a user makes from Python (issue 45): ``model.f(t, x, u)`` against ``pinocchio.aba`` and
  ``robodyn.linearize(model, x, u)`` (a LinearSystem with names, the point and read-only arrays) against
  ``computeABADerivatives`` with A and B assembled, per call, for the Panda (fingers free) and the Talos (floating);
- first compile of the humanoid (talos_reduced, nq 39): a new process with an empty robodyn cache, load to the first
  f and the first linearize;
- a free-floating solo12 falling for 1 s (no contact, joints moving): robodyn dopri5 against MuJoCo's RK4 at the
  step whose base-position error matches robodyn's (reference: robodyn at rtol 1e-12), MuJoCo from PyPI
  (``pip install 'robodyn[bench]'``; ``--skip-mujoco`` leaves it out).

Goals (issue 27): forward dynamics <= 1.5x pinocchio.aba and linearize <= computeABADerivatives + assembly for every
robot; the humanoid's first compile <= 30 s; the falling solo12 at least as fast as MuJoCo at matched accuracy.
Goals (issue 45): ``model.f`` <= ``pinocchio.aba`` and ``robodyn.linearize`` <= ``computeABADerivatives`` + assembly
for the Panda and the floating Talos, from Python.

    python benchmarks/bench_trees.py [--quick] [--skip-mujoco] [--skip-cold] [--public]
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import os
import platform
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin
from timing import best_of, run_cold  # benchmarks/timing.py (the script's folder is on sys.path)

import robodyn
from robodyn.model.compiled import python_function

ROBOTS_FOLDER = Path(str(importlib.metadata.distribution("example-robot-data").locate_file(
    "cmeel.prefix/share/example-robot-data/robots")))
HUMANOID = "talos_data/robots/talos_reduced.urdf"


def _panda_fingers_free(folder: Path) -> Path:
    """The Panda with both fingers as coordinates (its <mimic> removed): 9 coordinates."""
    text = (ROBOTS_FOLDER / "panda_description/urdf/panda.urdf").read_text()
    path = folder / "panda9.urdf"
    path.write_text(re.sub(r"<mimic[^>]*/>", "", text))
    return path


def robots(folder: Path) -> list[tuple[str, Path, str | None]]:
    return [("ur5 (fixed, 6)", ROBOTS_FOLDER / "ur_description/urdf/ur5_robot.urdf", None),
            ("panda, fingers free (fixed, 9)", _panda_fingers_free(folder), None),
            ("solo12 (fixed, 12)", ROBOTS_FOLDER / "solo_description/robots/solo12.urdf", None),
            ("g1 (fixed, 29)", ROBOTS_FOLDER / "g1_description/urdf/g1_29dof_rev_1_0.urdf", None),
            ("solo12 (floating, nv 18)", ROBOTS_FOLDER / "solo_description/robots/solo12.urdf", "floating"),
            ("anymal (floating, nv 18)", ROBOTS_FOLDER / "anymal_b_simple_description/robots/anymal.urdf", "floating"),
            ("talos (floating, nv 38)", ROBOTS_FOLDER / HUMANOID, "floating")]


class Pair:
    """One robot in robodyn and in Pinocchio, at one random state."""

    def __init__(self, path: Path, base: str | None, seed: int = 0):
        self.model = robodyn.load(str(path), base=base, dynamics=False, check_inertia=False)
        joint = pin.JointModelFreeFlyer() if base else None
        self.pin = pin.buildModelFromUrdf(str(path), joint) if joint else pin.buildModelFromUrdf(str(path))
        self.data = self.pin.createData()
        rng = np.random.default_rng(seed)
        nb = 6 if base else 0
        self.q = pin.neutral(self.pin)
        if base:
            self.q[:3] = rng.normal(size=3)
            quaternion = rng.normal(size=4)
            self.q[3:7] = quaternion / np.linalg.norm(quaternion)
        self.q[nb + (1 if base else 0):] = rng.uniform(-0.5, 0.5, self.pin.nq - nb - (1 if base else 0))
        self.v = rng.normal(size=self.pin.nv)
        self.tau = np.concatenate([np.zeros(nb), rng.normal(size=self.pin.nv - nb)])
        self.x, self.u = np.concatenate([self.q, self.v]), self.tau[nb:].copy()
        self.p = self.model.parameter_vector()
        self.rhs = python_function(self.model, "rhs")
        self.out = np.empty(self.model.n_states)
        self.linearizer = robodyn.Linearizer(self.model)
        nv, m = self.pin.nv, self.pin.nv - nb
        self.A, self.B = np.zeros((2 * nv, 2 * nv)), np.zeros((2 * nv, m))
        self.eye = np.eye(nv)

    def check(self) -> float:
        """The largest relative difference of the accelerations and of A's velocity rows (they must agree)."""
        self.rhs(0.0, self.x, self.u, self.p, self.out)
        nq, nv = self.pin.nq, self.pin.nv
        ours = self.out[nq:]
        theirs = pin.aba(self.pin, self.data, self.q, self.v, self.tau)
        A, _, _, _ = self.linearizer(self.x, self.u)
        pin.computeABADerivatives(self.pin, self.data, self.q, self.v, self.tau)
        return float(max(np.abs(ours - theirs).max() / np.abs(theirs).max(),
                         np.abs(A[nv:, :nv] - self.data.ddq_dq).max() / np.abs(self.data.ddq_dq).max()))

    def robodyn_fd(self) -> None:
        self.rhs(0.0, self.x, self.u, self.p, self.out)

    def pinocchio_fd(self) -> None:
        pin.aba(self.pin, self.data, self.q, self.v, self.tau)

    def robodyn_linearize(self) -> None:
        self.linearizer(self.x, self.u)

    def public_f(self) -> None:
        self.model.f(0.0, self.x, self.u)

    def public_linearize(self) -> None:
        robodyn.linearize(self.model, self.x, self.u)

    def pinocchio_derivatives(self) -> None:
        pin.computeABADerivatives(self.pin, self.data, self.q, self.v, self.tau)

    def pinocchio_assembled(self) -> None:
        pin.computeABADerivatives(self.pin, self.data, self.q, self.v, self.tau)
        nv, nb = self.pin.nv, self.pin.nv - self.u.size
        self.A[:nv, nv:] = self.eye
        self.A[nv:, :nv] = self.data.ddq_dq
        self.A[nv:, nv:] = self.data.ddq_dv
        self.B[nv:] = self.data.Minv[:, nb:]  # Minv's upper triangle is filled for aba's derivatives


def per_call(pairs: list[tuple[str, Pair]], rounds: int, number: int) -> None:
    print(f"\n{'robot':<34}{'fd':>8}{'aba':>8}{'ratio':>7}{'lin':>9}{'dABA':>8}{'+asm':>8}{'ratio':>7}  (us)")
    for label, pair in pairs:
        times: dict[str, list[float]] = {k: [] for k in ("fd", "aba", "lin", "dABA", "asm")}
        for _ in range(rounds):  # interleaved: each round times every function once
            times["fd"].append(best_of(pair.robodyn_fd, 3, number))
            times["aba"].append(best_of(pair.pinocchio_fd, 3, number))
            times["lin"].append(best_of(pair.robodyn_linearize, 3, number // 4))
            times["dABA"].append(best_of(pair.pinocchio_derivatives, 3, number // 4))
            times["asm"].append(best_of(pair.pinocchio_assembled, 3, number // 4))
        med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
        print(f"{label:<34}{med['fd']:>8.2f}{med['aba']:>8.2f}{med['fd'] / med['aba']:>7.2f}{med['lin']:>9.1f}"
              f"{med['dABA']:>8.1f}{med['asm']:>8.1f}{med['lin'] / med['asm']:>7.2f}")


PUBLIC = ("panda, fingers free (fixed, 9)", "talos (floating, nv 38)")  # issue 45's robots


def public_calls(pairs: list[tuple[str, Pair]], rounds: int, number: int) -> None:
    """``model.f`` and ``robodyn.linearize`` beside Pinocchio's Python calls, interleaved rounds (each times every
    function once, best of 3), medians; the results agree (checked in ``Pair.check`` and here). Timed by this
    thread's CPU time: both tools run in the calling thread, and the machine is shared (wall time under load
    stretches whichever call another process preempts)."""
    print(f"\npublic calls from Python{'':<10}{'f':>8}{'aba':>8}{'ratio':>7}{'lin':>9}{'+asm':>8}{'ratio':>7}"
          "  (us, thread CPU time)")
    for label, pair in pairs:
        if label not in PUBLIC:
            continue
        pair.pinocchio_assembled()
        linear = robodyn.linearize(pair.model, pair.x, pair.u)
        nv = pair.pin.nv
        if not (np.allclose(linear.A[nv:, :nv], pair.A[nv:, :nv], rtol=0, atol=1e-9 * np.abs(pair.A).max())
                and np.allclose(pair.model.f(0.0, pair.x, pair.u)[-nv:], pin.aba(pair.pin, pair.data, pair.q, pair.v,
                                                                                  pair.tau), rtol=1e-9, atol=1e-9)):
            raise SystemExit(f"{label}: robodyn's public calls and Pinocchio disagree: nothing to compare")
        times: dict[str, list[float]] = {k: [] for k in ("f", "aba", "lin", "asm")}
        cpu = time.thread_time
        for _ in range(rounds):
            times["f"].append(best_of(pair.public_f, 3, number, cpu))
            times["aba"].append(best_of(pair.pinocchio_fd, 3, number, cpu))
            times["lin"].append(best_of(pair.public_linearize, 3, number // 4, cpu))
            times["asm"].append(best_of(pair.pinocchio_assembled, 3, number // 4, cpu))
        med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
        print(f"{label:<34}{med['f']:>8.2f}{med['aba']:>8.2f}{med['f'] / med['aba']:>7.2f}{med['lin']:>9.1f}"
              f"{med['asm']:>8.1f}{med['lin'] / med['asm']:>7.2f}")


COLD = """
import json, sys, time
import numpy as np
t0 = time.perf_counter()
import robodyn
model = robodyn.load(sys.argv[1], base="floating", dynamics=False, check_inertia=False)
x = model.state_vector({"base_qw": 1.0}, default=0.0)
model.f(0.0, x)
t1 = time.perf_counter()
robodyn.linearize(model, x)
t2 = time.perf_counter()
print(json.dumps({"f": t1 - t0, "linearize": t2 - t1}))
"""


def cold_compile() -> None:
    result = run_cold(COLD, str(ROBOTS_FOLDER / HUMANOID))
    print(f"\nhumanoid (talos_reduced, nq 39) in a new process, empty cache: load + first f {result['f']:.1f} s, "
          f"first linearize {result['linearize']:.1f} s more (goal: <= 30 s)")


def falling(quick: bool) -> None:
    """solo12 falling 1 s with its joints moving: robodyn dopri5 vs MuJoCo RK4 at matched base-position error."""
    import mujoco

    path = ROBOTS_FOLDER / "solo_description/robots/solo12.urdf"
    robot = robodyn.load(str(path), base="floating", dynamics=False)
    joints = robot.chain.coordinates
    start = {"base_z": 1.0, "base_wx": 1.0, "base_wz": 2.0, **{f"{j}_dot": 3.0 * (-1) ** k for k, j in
                                                                   enumerate(joints)}}
    reference = robodyn.simulate(robot, 1.0, start, rtol=1e-12, atol=1e-12, t_eval=[1.0]).x[-1, :3]
    runs = {}
    for rtol in (1e-6, 1e-8):
        robodyn.simulate(robot, 1.0, start, rtol=rtol, atol=rtol, t_eval=[1.0])  # compiled, warm
        def run(tolerance: float = rtol) -> Any:
            return robodyn.simulate(robot, 1.0, start, rtol=tolerance, atol=tolerance, t_eval=[1.0])

        seconds = statistics.median(best_of(run, 3, 3) for _ in range(3))
        error = np.abs(robodyn.simulate(robot, 1.0, start, rtol=rtol, atol=rtol, t_eval=[1.0]).x[-1, :3]
                       - reference).max()
        runs[rtol] = (seconds, error)
    text = re.sub(r"<(visual|collision)>.*?</\1>", "", path.read_text(), flags=re.S)
    spec = mujoco.MjSpec.from_string(text)
    body = spec.worldbody.first_body()
    body.add_freejoint()
    spec.option.gravity = [0.0, 0.0, -9.81]
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
    spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    mj = spec.compile()
    mj.dof_damping[:] = 0.0
    mj.dof_armature[:] = 0.0
    data = mujoco.MjData(mj)
    names = [mj.joint(i).name for i in range(mj.njnt)]

    def mujoco_run(dt: float) -> np.ndarray:
        mj.opt.timestep = dt
        mujoco.mj_resetData(mj, data)
        data.qpos[:3] = [0.0, 0.0, 1.0]
        data.qpos[3:7] = [1.0, 0.0, 0.0, 0.0]  # MuJoCo's quaternion is w x y z
        data.qvel[3:6] = [1.0, 0.0, 2.0]  # the free joint's angular velocity in the body frame
        data.qvel[:3] = 0.0
        for k, joint in enumerate(joints):
            data.qvel[mj.joint(names.index(joint)).dofadr[0]] = 3.0 * (-1) ** k
        for _ in range(round(1.0 / dt)):
            mujoco.mj_step(mj, data)
        return data.qpos[:3].copy()

    print("\nsolo12 falling 1 s (no contact): base position error at t = 1 against robodyn at rtol 1e-12")
    for rtol, (seconds, error) in runs.items():
        dt = 1e-2
        while dt > 1e-5 and np.abs(mujoco_run(dt) - reference).max() > error:
            dt /= 2
        mujoco_seconds = statistics.median(best_of(lambda step=dt: mujoco_run(step), 3, 3) for _ in range(3))
        print(f"  robodyn dopri5 rtol {rtol:g}: {seconds * 1e3:7.2f} ms, error {error:.1e};  MuJoCo RK4 dt {dt:.2e}: "
              f"{mujoco_seconds * 1e3:7.2f} ms, error {np.abs(mujoco_run(dt) - reference).max():.1e};  "
              f"robodyn/MuJoCo {seconds / mujoco_seconds:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and calls")
    parser.add_argument("--skip-mujoco", action="store_true")
    parser.add_argument("--skip-cold", action="store_true")
    parser.add_argument("--public", action="store_true", help="only the public calls of the Panda and the Talos")
    args = parser.parse_args()
    print(f"bench_trees.py {datetime.datetime.now():%Y-%m-%d %H:%M}, {platform.processor() or platform.machine()}, "
          f"load {os.getloadavg()[0]:.2f}, pinocchio {pin.__version__}")
    with tempfile.TemporaryDirectory() as folder:
        pairs = []
        for label, path, base in robots(Path(folder)):
            if args.public and label not in PUBLIC:
                continue
            start = time.perf_counter()
            pair = Pair(path, base)
            difference = pair.check()
            print(f"{label:<34} loaded and compiled in {time.perf_counter() - start:5.1f} s; agrees with Pinocchio to "
                  f"{difference:.1e}")
            if difference > 1e-10:
                raise SystemExit(f"{label}: robodyn and Pinocchio disagree ({difference:.1e}): nothing to compare")
            pairs.append((label, pair))
        rounds, number = (3, 200) if args.quick else (7, 1000)
        if not args.public:
            per_call(pairs, rounds, number)
        public_calls(pairs, 2 * rounds if args.public else rounds, number)
    if args.public:
        print(f"load {os.getloadavg()[0]:.2f} at the end")
        return
    if not args.skip_cold:
        cold_compile()
    if not args.skip_mujoco:
        falling(args.quick)
    print(f"load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
