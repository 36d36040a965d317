"""The figures of docs/control.md: each optimal control example solved, then tracked by TVLQR from perturbed starts.

Run: ``python examples/control_figures.py [--out DIR]`` (default ``docs/figures``).

For each problem file (``examples/*_swingup.yaml``, ``examples/panda_reach.yaml``; the acrobot's solve takes
minutes) it solves the problem, designs ``robodyn.tvlqr(..., handover=True)`` along the solution, simulates the
nonlinear model from 5 seeded starts at |dx0| = 0.05 under the feedback and under the open-loop inputs alone,
prints the largest distance from the trajectory's end of each, and plots the states and inputs (the bounds
dashed) into ``DIR/<example>.png``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import robodyn
from robodyn.signals import Table

HERE = Path(__file__).resolve().parent
#: file -> (the states plotted, the TVLQR weights Q on positions and on velocities, R)
EXAMPLES = {"pendulum_swingup.yaml": (("theta", "theta_dot"), 100.0, 10.0, 0.1),
            "cart_pole_swingup.yaml": (("x", "theta"), 100.0, 10.0, 0.1),
            "acrobot_swingup.yaml": (("theta1", "theta2"), 100.0, 10.0, 0.1),
            "panda_reach.yaml": (tuple(f"panda_joint{j}" for j in range(1, 8)), 100.0, 1.0, 0.01)}
STARTS, RADIUS = 5, 0.05


def track(problem: robodyn.OptimalControlProblem, result: robodyn.OptimalTrajectory, q: float, v: float,
          r: float) -> tuple[object, object]:
    """(closed loop, open loop) runs from the perturbed starts."""
    model = problem.model
    half = model.n_states // 2
    Q = {name: (q if k < half else v) for k, name in enumerate(model.states)}
    how = "linear" if result.method == "collocation" else "hold"
    design = robodyn.tvlqr(model, result, Q, dict.fromkeys(model.inputs, r), handover=True, interpolation=how)
    dx0 = np.random.default_rng(47).normal(size=(STARTS, model.n_states))
    x0 = result.x[0] + RADIUS * dx0 / np.linalg.norm(dx0, axis=1, keepdims=True)
    kind = "linear" if how == "linear" else "zoh"
    table = {name: Table(result.t, result.u[:, i], kind) for i, name in enumerate(model.inputs)}
    span = (0.0, float(result.t[-1]))
    closed = robodyn.simulate(model, span, x0, design.feedback, rtol=1e-9, atol=1e-11, limits="ignore")
    opened = robodyn.simulate(model, span, x0, table, rtol=1e-9, atol=1e-11, limits="ignore")
    return closed, opened


def figure(name: str, plotted: tuple[str, ...], result: robodyn.OptimalTrajectory,
           problem: robodyn.OptimalControlProblem, closed: object, opened: object, out: Path) -> None:
    """The states (with the tracked and open-loop runs when two are plotted) and the inputs against their bounds."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True)
    for name_ in plotted:
        k = result.states.index(name_)
        line, = top.plot(result.t, result.x[:, k], lw=2, label=f"{name_} (optimal)")
        if len(plotted) <= 2:
            top.plot(closed.t, closed.x[:, :, k].T, color=line.get_color(), lw=0.6, alpha=0.6)  # type: ignore[attr-defined]
            top.plot(opened.t, opened.x[:, :, k].T, color=line.get_color(), lw=0.6, ls=":")  # type: ignore[attr-defined]
    top.set_ylabel("state")
    top.set_title(f"{name}: optimal (thick), TVLQR (thin), open loop (dotted)" if len(plotted) <= 2
                  else f"{name}: the optimal joint angles", fontsize=10)
    top.legend(fontsize=7, ncol=2)
    for i, name_ in enumerate(result.inputs):
        if result.method == "collocation":  # values at the knots, linear between them
            line, = bottom.plot(result.t, result.u[:, i], label=name_)
        else:  # the DDP family: held from a knot to the next
            line, = bottom.step(result.t, result.u[:, i], where="post", label=name_)
        lo, hi = problem.input_bounds[i]
        if np.isfinite(hi) and len(result.inputs) <= 2:
            bottom.axhline(hi, color=line.get_color(), ls="--", lw=0.8)
            bottom.axhline(lo, color=line.get_color(), ls="--", lw=0.8)
    bottom.set_xlabel("t [s]")
    bottom.set_ylabel("input (bounds dashed)")
    bottom.legend(fontsize=7, ncol=4)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE.parent / "docs" / "figures")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for file, (plotted, q, v, r) in EXAMPLES.items():
        problem = robodyn.load_problem(HERE / file)
        result = problem.solve()
        closed, opened = track(problem, result, q, v, r)
        tracked = np.linalg.norm(closed.x[:, -1] - result.x[-1], axis=1).max()  # type: ignore[attr-defined]
        missed = np.linalg.norm(opened.x[:, -1] - result.x[-1], axis=1).min()  # type: ignore[attr-defined]
        print(f"{file}: {result.method}, cost {result.cost:.6g}, {result.iterations} iterations; from {STARTS} "
              f"starts at |dx0| = {RADIUS}: TVLQR ends within {tracked:.2g}, the open loop misses by >= {missed:.2g}")
        path = args.out / f"{Path(file).stem}.png"
        figure(Path(file).stem, plotted, result, problem, closed, opened, path)
        print(f"saved {path}")


if __name__ == "__main__":
    main()
