"""A quadruped falling freely: solo12 on a floating base, tumbling in flight with its legs swinging.

Run: ``python examples/falling_quadruped.py [--urdf PATH] [--time T]``.

Nothing but gravity acts on the robot from outside, so in flight its centroidal momentum obeys

    d/dt (linear momentum) = m g,        d/dt (angular momentum about the centre of mass) = 0,

whatever its joints do inside. The script drops solo12 (from example-robot-data) with its base spinning and its
joints moving, integrates it on the manifold of the base's rotation (robodyn.simulate: dopri5 at rtol 1e-10),
and prints how far the simulated momentum is from those laws, the centre of mass from its parabola, and the
quaternion from unit norm.
"""

from __future__ import annotations

import argparse
import importlib.metadata
from pathlib import Path

import numpy as np

import robodyn


def solo12() -> Path:
    """solo12's URDF in the installed example-robot-data package."""
    robots = importlib.metadata.distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots")
    return Path(str(robots)) / "solo_description/robots/solo12.urdf"


def fall(urdf: Path, duration: float = 0.5) -> dict[str, float]:
    """Simulate the fall; return the worst relative errors of the momentum laws and of the quaternion norm."""
    robot = robodyn.load(str(urdf), base="floating")
    start = {"base_z": 1.0, "base_wx": 2.0, "base_wy": -1.0, "base_wz": 3.0, "base_vx": 0.5,
             **{f"{joint}_dot": 4.0 * (-1) ** k for k, joint in enumerate(robot.chain.coordinates)}}
    run = robodyn.simulate(robot, duration, start, rtol=1e-10, atol=1e-10, t_eval=np.linspace(0.0, duration, 101))
    momentum = np.array([robot.centroidal_momentum(x) for x in run.x])
    mass = robot.centroidal_map(run.x[0, : robot.nq])[0, 0]  # A_g's first entry is the total mass
    gravity = np.array([0.0, 0.0, -9.81])
    linear = momentum[0, :3] + mass * gravity * run.t[:, None]
    scale = np.abs(momentum).max()
    centre = np.array([robot.center_of_mass(x[: robot.nq]) for x in run.x])
    parabola = centre[0] + momentum[0, :3] / mass * run.t[:, None] + 0.5 * gravity * run.t[:, None] ** 2
    return {"linear momentum": float(np.abs(momentum[:, :3] - linear).max() / scale),
            "angular momentum": float(np.abs(momentum[:, 3:] - momentum[0, 3:]).max() / scale),
            "centre of mass": float(np.abs(centre - parabola).max()),  # m, from the parabola of free fall
            "quaternion norm": float(np.abs(np.linalg.norm(run.x[:, 3:7], axis=1) - 1.0).max())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urdf", type=Path, default=None, help="the robot (default: solo12)")
    parser.add_argument("--time", type=float, default=0.5, help="seconds of flight")
    args = parser.parse_args()
    for name, value in fall(args.urdf or solo12(), args.time).items():
        print(f"{name:>18}: {value:.3g}")


if __name__ == "__main__":
    main()
