"""The inverse-dynamics regressor (docs/identification.md) against Pinocchio's, side by side in one run.

Per sample of 1,000 random (q, q', q'') on the Panda arm (example-robot-data's URDF with its fingers made fixed
joints, so that both tools have the same 7 joints): ``robodyn.regressor`` on the samples (one compiled call for
all rows) and on one point at a time, against ``pinocchio.computeJointTorqueRegressor`` called once per sample
from Python (Pinocchio has no batched form). The inertial columns are checked equal before anything is timed.
Goal (issue 30): robodyn per sample <= 2x Pinocchio.

    python benchmarks/bench_identify.py
"""

from __future__ import annotations

import datetime
import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

import robodyn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from timing import best_of

from pinocchio_reference import ROBOTS

SAMPLES = 1000


def main() -> None:
    import pinocchio as pin

    if ROBOTS is None:
        raise SystemExit("example-robot-data is not installed: pip install -e .[bench]")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# bench_identify {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
          f"load {load:.2f}")
    panda = (ROBOTS / "panda_description/urdf/panda.urdf").read_text(encoding="utf-8")
    path = Path(tempfile.mkdtemp()) / "panda_arm.urdf"
    path.write_text(re.sub(r'(<joint name="panda_finger_joint[12]" type=)"prismatic"', r'\1"fixed"', panda),
                    encoding="utf-8")
    model = robodyn.load(str(path))
    reference = pin.buildModelFromUrdf(str(path))
    data = reference.createData()
    n = model.n_coordinates
    q, qd, qdd = np.random.default_rng(0).uniform(-1.0, 1.0, (3, SAMPLES, n))
    found = robodyn.regressor(model, q, qd, qdd)
    inertial = 10 * n
    worst = max(np.abs(found.Y[k, :, :inertial] - pin.computeJointTorqueRegressor(reference, data, q[k], qd[k],
                                                                                   qdd[k])).max()
                for k in range(SAMPLES))
    print(f"panda arm ({n} joints, {len(found.names)} columns): inertial columns equal Pinocchio's to {worst:.1e}")

    def pinocchio_loop() -> None:
        for k in range(SAMPLES):
            pin.computeJointTorqueRegressor(reference, data, q[k], qd[k], qdd[k])

    def single_points() -> None:
        for k in range(100):
            robodyn.regressor(model, q[k], qd[k], qdd[k])

    batch = best_of(lambda: robodyn.regressor(model, q, qd, qdd), 7, 1) / SAMPLES
    single = best_of(single_points, 7, 1) / 100
    theirs = best_of(pinocchio_loop, 7, 1) / SAMPLES
    print(f"  per sample: robodyn.regressor on {SAMPLES} samples {batch * 1e6:.2f} us, one point per call "
          f"{single * 1e6:.1f} us | pinocchio computeJointTorqueRegressor {theirs * 1e6:.2f} us")
    verdict = "met" if batch <= 2 * theirs else "NOT met"
    print(f"  robodyn (samples) / pinocchio {batch / theirs:.2f} (goal <= 2: {verdict})")


if __name__ == "__main__":
    main()
