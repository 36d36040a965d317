"""Diagrams, side by side in one run: a diagram against the same equations as one flat model file, and against
python-control's interconnect.

The joint of the catalog (J q'' + b q' + k q = u) closed by the lag-PI controller of examples/pi_controller.yaml
(e = r - y, xc' = -a xc + e, u = kp e + ki xc), as the diagram examples/joint_pi.yaml and as one first-order file
written here with the combined equations. Step r = 1 over 5 s at rtol 1e-8; linearize per call at a point.
Goals (issue 26): simulation within 1.25x the flat model's time, >= 30x faster than python-control's
``input_output_response``; linearize <= 2x the flat model's.

    python benchmarks/bench_diagram.py
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np
from timing import best_of  # benchmarks/timing.py (the script's folder is on sys.path)

import robodyn

ROOT = Path(__file__).resolve().parents[1]
FLAT = """name: joint_pi_flat
kind: first_order
states: [q, q_dot, xc]
inputs: [r]
parameters: {J: 0.01, b: 0.1, k: 1.0, a: 2.0, kp: 20.0, ki: 5.0}
dynamics:
  q: q_dot
  q_dot: (kp*(r - q) + ki*xc - b*q_dot - k*q)/J
  xc: -a*xc + r - q
outputs: {angle: q}
"""


def main() -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# bench_diagram {time.strftime('%Y-%m-%d %H:%M')} UTC, {os.cpu_count()} cores, load {load:.2f}")
    diagram = robodyn.load(str(ROOT / "examples" / "joint_pi.yaml"))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "joint_pi_flat.yaml"
        path.write_text(FLAT)
        flat = robodyn.load(str(path))
    options = dict(method="dopri5", rtol=1e-8, atol=1e-10, t_eval=np.linspace(0.0, 5.0, 101))
    ours = robodyn.simulate(diagram, 5.0, np.zeros(3), 1.0, **options)
    theirs = robodyn.simulate(flat, 5.0, np.zeros(3), 1.0, **options)
    difference = float(np.max(np.abs(ours.x - theirs.x)))
    t_diagram = best_of(lambda: robodyn.simulate(diagram, 5.0, np.zeros(3), 1.0, **options), 3, 2)
    t_flat = best_of(lambda: robodyn.simulate(flat, 5.0, np.zeros(3), 1.0, **options), 3, 20)
    print(f"simulate 5 s, step r = 1: diagram {t_diagram * 1e3:.2f} ms ({ours.stats.path}, {ours.stats.steps} steps) |"
          f" flat model {t_flat * 1e3:.2f} ms ({theirs.stats.path}, {theirs.stats.steps} steps) | diagram / flat "
          f"{t_diagram / t_flat:.1f} (goal <= 1.25) | states differ by {difference:.1e}")
    try:
        import control
    except ImportError:
        print("  python-control not installed: comparison skipped (pip install -e '.[control]')")
    else:
        joint = robodyn.linearize(robodyn.load("joint"), [0.0, 0.0])

        def plant_rhs(t, x, u, params):
            return joint.A @ x + joint.B[:, 0] * u[0]

        plant = control.nlsys(plant_rhs, lambda t, x, u, params: x[:1], inputs=["u"], outputs=["q"], states=2,
                              name="plant")
        pi = control.nlsys(lambda t, x, u, params: [-2.0 * x[0] + u[0] - u[1]],
                           lambda t, x, u, params: [20.0 * (u[0] - u[1]) + 5.0 * x[0]], inputs=["r", "y"],
                           outputs=["u"], states=1, name="pi")
        loop = control.interconnect([plant, pi], connections=[["plant.u", "pi.u"], ["pi.y", "plant.q"]],
                                    inplist=["pi.r"], outlist=["plant.q"])
        grid = np.linspace(0.0, 5.0, 101)

        def response() -> object:
            return control.input_output_response(loop, grid, np.ones_like(grid), np.zeros(3),
                                                 solve_ivp_kwargs={"rtol": 1e-8, "atol": 1e-10})

        t_control = best_of(response, 1, 1)
        print(f"  python-control input_output_response {t_control * 1e3:.1f} ms | control / diagram "
              f"{t_control / t_diagram:.1f}x (goal >= 30x)")
    x, u = np.array([0.1, -0.2, 0.05]), np.array([0.3])
    l_diagram = best_of(lambda: robodyn.linearize(diagram, x, u), 5, 200)
    l_flat = best_of(lambda: robodyn.linearize(flat, x, u), 5, 200)
    same = np.abs(robodyn.linearize(diagram, x, u).A - robodyn.linearize(flat, x, u).A).max()
    print(f"linearize per call: diagram {l_diagram * 1e6:.1f} us | flat {l_flat * 1e6:.1f} us | diagram / flat "
          f"{l_diagram / l_flat:.1f} (goal <= 2) | A differs by {same:.1e}")


if __name__ == "__main__":
    main()
