"""Region of attraction of the LQR-stabilized upright pendulum: a 200 x 200 sweep of initial states.

Run: ``python examples/region_of_attraction.py [--workers N | --scheduler tcp://host:8786] [--out DIR]``.

It recomputes the LQR gain (Q = diag(10, 1), R = 1 at theta = pi) and checks it against the gains written in
``examples/pendulum_lqr_closed_loop.yaml``, sweeps theta0 in [pi - 3, pi + 3] x theta_dot0 in [-6, 6] with
``reduce=["converged"]`` (|x(T) - (pi, 0)|_inf <= 1e-3 at T = 10 s) for that model and for the same loop with
the torque limited to 6 N m (``examples/pendulum_lqr_saturated.yaml``), prints the converged fraction of each
and saves the two maps as ``docs/roa.png``.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import numpy as np
import scipy.linalg
import yaml

import robodyn
from robodyn.sweep import sweep

HERE = Path(__file__).resolve().parent
MODELS = {"unbounded torque": HERE / "pendulum_lqr_closed_loop.yaml",
          "|tau| <= 6 N m": HERE / "pendulum_lqr_saturated.yaml"}
SIDE = 200  # grid points per axis
T_FINAL = 10.0  # s: the closed loop's slowest pole is about -3.2 1/s, so 10 s leaves e^-32 of a start near pi


def lqr_gain() -> np.ndarray:
    """K : (2,) for Q = diag(10, 1), R = 1 on the pendulum linearized upright."""
    linear = robodyn.linearize(robodyn.load("pendulum"), [math.pi, 0.0], [0.0])
    a, b = np.asarray(linear.A), np.asarray(linear.B)
    p = scipy.linalg.solve_continuous_are(a, b, np.diag([10.0, 1.0]), np.eye(1))
    return np.asarray(b.T @ p, dtype=float).reshape(-1)


def check_gains(gain: np.ndarray) -> None:
    for path in MODELS.values():
        parameters = yaml.safe_load(path.read_text(encoding="utf-8"))["parameters"]
        written = np.array([parameters["k1"], parameters["k2"]], dtype=float)
        if not np.allclose(written, gain, rtol=1e-6):
            raise SystemExit(f"{path.name}: k1, k2 = {written} but the LQR gain is {gain}: update the file")


def region(path: Path, where: dict[str, Any], out: Path | None) -> np.ndarray:
    """converged : (SIDE, SIDE), rows theta_dot0, columns theta0."""
    over = {"theta": np.linspace(math.pi - 3, math.pi + 3, SIDE), "theta_dot": np.linspace(-6.0, 6.0, SIDE)}
    table = sweep(path, over, T_FINAL, reduce=["converged"], target={"theta": math.pi}, points=2,
                  out=None if out is None else out / path.stem, **where)
    return table["converged"].to_numpy().reshape(SIDE, SIDE).T  # the grid is theta-major


def plot(maps: dict[str, np.ndarray], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    figure, axes = plt.subplots(1, len(maps), figsize=(8.0, 3.6), sharey=True, layout="constrained")
    colours = ListedColormap(["#d9d9d9", "#2b8cbe"])
    for ax, (label, converged) in zip(axes, maps.items()):
        ax.imshow(converged, origin="lower", extent=(-3.0, 3.0, -6.0, 6.0), aspect="auto", cmap=colours,
                  vmin=0, vmax=1, interpolation="nearest")
        ax.plot(0.0, 0.0, "k+", markersize=10)
        ax.set_title(f"{label}: {converged.mean():.0%} converge", fontsize=10)
        ax.set_xlabel(r"$\theta_0 - \pi$ [rad]")
    axes[0].set_ylabel(r"$\dot\theta_0$ [rad/s]")
    figure.suptitle(f"LQR-held upright pendulum: reaches (pi, 0) within 1e-3 at T = {T_FINAL:g} s (blue)",
                    fontsize=10)
    figure.savefig(path, dpi=80)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, help="run on a LocalCluster of this many processes")
    parser.add_argument("--scheduler", help="run on an existing dask cluster (tcp://host:8786)")
    parser.add_argument("--out", type=Path, help="keep the sweeps (Parquet parts) in this folder: reruns resume")
    parser.add_argument("--figure", type=Path, default=HERE.parent / "docs" / "roa.png")
    args = parser.parse_args()
    gain = lqr_gain()
    check_gains(gain)
    print(f"K = {gain}")
    where: dict[str, Any] = {"workers": args.workers, "scheduler": args.scheduler}
    maps = {label: region(path, where, args.out) for label, path in MODELS.items()}
    for label, converged in maps.items():
        print(f"{label}: {converged.mean():.1%} of the {SIDE} x {SIDE} initial states converge")
    plot(maps, args.figure)
    print(f"saved {args.figure} ({args.figure.stat().st_size / 1024:.0f} KB)")


if __name__ == "__main__":
    main()
