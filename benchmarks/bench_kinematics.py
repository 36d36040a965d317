"""Forward kinematics and the frame Jacobian: robodyn.kinematics against Pinocchio, side by side in one run.

Robots from example-robot-data: the Panda (panda.urdf; its second finger mimics the first, which robodyn
folds into one coordinate and Pinocchio keeps as a joint: its configuration is q_full = G q + o and its
Jacobian columns contract with G) and the UR5, at their tool frames (panda_hand_tcp, tool0), LOCAL_WORLD_ALIGNED:

- one configuration per call: robodyn ``kinematics(model).pose(q, f)`` + ``.jacobian(q, f)`` against
  ``pinocchio.forwardKinematics`` + ``updateFramePlacement`` + ``computeFrameJacobian``, microseconds per
  call, best of 5 rounds;
- 10,000 configurations: robodyn one batch call each for pose and Jacobian against a Python loop of the same
  Pinocchio calls, best of 3.

Both give the same numbers (the largest difference is printed).

    python benchmarks/bench_kinematics.py [--quick]
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
from timing import best_of  # benchmarks/timing.py

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from pinocchio_reference import ROBOTS as FOLDER
from pinocchio_reference import coupling

ROBOTS = {"panda": ("panda_description/urdf/panda.urdf", "panda_hand_tcp"),
          "ur5": ("ur_description/urdf/ur5_robot.urdf", "tool0")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1,000 configurations in the batch comparison")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# bench_kinematics {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
          f"load {load:.2f}; pose + Jacobian (LOCAL_WORLD_ALIGNED) of the tool frame")
    for label, (relative, frame) in ROBOTS.items():
        compare(label, FOLDER / relative, frame, 1000 if args.quick else 10_000)


def compare(label: str, path: Path, frame: str, count: int) -> None:
    """One robot: per-call times and a batch of ``count`` configurations."""
    import pinocchio as pin

    import robodyn
    from robodyn.kinematics import kinematics

    kin = kinematics(robodyn.load(str(path)))
    reference = pin.buildModelFromUrdf(str(path))
    data = reference.createData()
    fid = reference.getFrameId(frame, pin.BODY)
    n = len(kin.coordinates)
    G, offset = coupling(path, reference, kin.coordinates)
    assert reference.nq == G.shape[0], "continuous joints (nq = 2) are not handled here"
    qs = np.random.default_rng(0).uniform(-np.pi, np.pi, (count, n))
    full = np.ascontiguousarray(qs @ G.T + offset)
    world = pin.LOCAL_WORLD_ALIGNED

    def ours() -> None:
        kin.pose(qs[0], frame)
        kin.jacobian(qs[0], frame)

    def theirs(q: np.ndarray) -> tuple[Any, np.ndarray]:
        pin.forwardKinematics(reference, data, q)
        placement = pin.updateFramePlacement(reference, data, fid)
        return placement, pin.computeFrameJacobian(reference, data, q, fid, world)

    ours()  # compile (or load from the cache) before timing
    per_ours = best_of(ours, 5, 2000)
    per_theirs = best_of(lambda: theirs(full[0]), 5, 2000)

    kin.pose(qs[:2], frame)
    kin.jacobian(qs[:2], frame)
    batch_ours = best_of(lambda: (kin.pose(qs, frame), kin.jacobian(qs, frame)), 3, 1)

    def loop() -> None:
        for q in full:
            theirs(q)

    batch_theirs = best_of(loop, 3, 1)
    # the same numbers: the largest difference over the batch
    pose, J = kin.pose(qs, frame), kin.jacobian(qs, frame)
    difference = 0.0
    for k in range(0, count, max(1, count // 200)):
        placement, expected = theirs(full[k])
        difference = max(difference, float(np.abs(pose.position[k] - placement.translation).max()),
                         float(np.abs(pose.rotation[k] - placement.rotation).max()),
                         float(np.abs(J[k] - expected @ G).max()))
    print(f"{label}: {n} coordinates (Pinocchio nq {reference.nq}), frame {frame}")
    print(f"  one call:  robodyn pose + jacobian {per_ours * 1e6:7.2f} us | pinocchio forwardKinematics + "
          f"updateFramePlacement + computeFrameJacobian {per_theirs * 1e6:7.2f} us | ratio "
          f"{per_theirs / per_ours:.2f}x")
    print(f"  {count} configurations: robodyn batch {batch_ours * 1e3:7.2f} ms ({batch_ours / count * 1e6:.2f} us "
          f"each) | pinocchio loop {batch_theirs * 1e3:7.1f} ms ({batch_theirs / count * 1e6:.2f} us each) | ratio "
          f"{batch_theirs / batch_ours:.1f}x; largest difference {difference:.1e}")


if __name__ == "__main__":
    main()
