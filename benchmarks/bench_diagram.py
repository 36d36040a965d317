"""Diagrams, side by side in one run: a diagram against the same equations as one flat model file, and against
python-control's interconnect.

The two-link arm of the catalog (a chain: its tape) driven at each joint by a DC motor (L i' = v - R i - ke N w,
tau = N kt i) under a PID (e = r - q, v = kp e + ki xi + kd (e - xd)/tf): the diagram of robodyn blocks, and one
first-order file written here with the combined equations (the arm's mass matrix inverted in closed form).
Steps r = (0.5, -0.3) rad over 5 s at rtol 1e-8; linearize per call at a point. Goals (issue 26): simulation
within 1.25x the flat model's time, >= 30x faster than python-control's ``input_output_response`` on the same
interconnect; linearize <= 2x the flat model's.

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
from robodyn import blocks

MOTOR = {"R": 1.0, "L": 1e-3, "kt": 0.5, "ke": 0.5, "N": 10.0}
PID = {"kp": 50.0, "ki": 10.0, "kd": 5.0, "tf": 0.01}
ARM = {"m1": 2.0, "m2": 1.0, "l1": 1.0, "lc1": 0.5, "lc2": 0.4, "g": 9.81, "I1": 0.17, "I2": 0.054}


def flat_text() -> str:
    """The combined equations: states q1 q2 w1 w2 i1 i2 xi1 xd1 xi2 xd2, inputs r1 r2."""
    a = "(I1 + I2 + m1*lc1**2 + m2*(l1**2 + lc2**2 + 2*l1*lc2*cos(q2)))"
    b = "(I2 + m2*(lc2**2 + l1*lc2*cos(q2)))"
    d = "(I2 + m2*lc2**2)"
    h = "(m2*l1*lc2*sin(q2))"
    tau = {k: f"(N*kt*i{k})" for k in (1, 2)}
    r1 = f"({tau[1]} + {h}*w2*(2*w1 + w2) - (m1*lc1 + m2*l1)*g*cos(q1) - m2*lc2*g*cos(q1 + q2))"
    r2 = f"({tau[2]} - {h}*w1**2 - m2*lc2*g*cos(q1 + q2))"
    det = f"({a}*{d} - {b}**2)"
    pid = {k: f"(kp*(r{k} - q{k}) + ki*xi{k} + kd*(r{k} - q{k} - xd{k})/tf)" for k in (1, 2)}
    parameters = {**ARM, **MOTOR, **PID}
    lines = ["name: arm_motors_pid_flat", "kind: first_order",
             "states: [q1, q2, w1, w2, i1, i2, xi1, xd1, xi2, xd2]", "inputs: [r1, r2]",
             "parameters: {" + ", ".join(f"{k}: {v!r}" for k, v in parameters.items()) + "}", "dynamics:",
             "  q1: w1", "  q2: w2", f"  w1: ({d}*{r1} - {b}*{r2})/{det}", f"  w2: ({a}*{r2} - {b}*{r1})/{det}"]
    for k in (1, 2):
        lines.append(f"  i{k}: ({pid[k]} - R*i{k} - ke*N*w{k})/L")
    for k in (1, 2):
        lines += [f"  xi{k}: r{k} - q{k}", f"  xd{k}: (r{k} - q{k} - xd{k})/tf"]
    lines.append("outputs: {y1: q1, y2: q2}")
    return "\n".join(lines) + "\n"


def diagram() -> robodyn.Diagram:
    made = {"arm": robodyn.load("two_link_arm"), "m1": blocks.dc_motor(**MOTOR), "m2": blocks.dc_motor(**MOTOR),
            "c1": blocks.pid(**PID), "c2": blocks.pid(**PID)}
    wires = ["c1.u -> m1.v", "c2.u -> m2.v", "m1.tau -> arm.shoulder_tau", "m2.tau -> arm.elbow_tau",
             "arm.shoulder -> c1.y", "arm.elbow -> c2.y", "arm.shoulder_dot -> m1.omega", "arm.elbow_dot -> m2.omega"]
    return robodyn.Diagram(made, wires, inputs={"r1": "c1.r", "r2": "c2.r"},
                           outputs={"y1": "arm.shoulder", "y2": "arm.elbow"}, name="arm_motors_pid")


#: the diagram's state order -> the flat model's (arm, motors, PIDs)
ORDER = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]


def control_loop(control):
    """The same interconnect of python-control NonlinearIOSystems (numpy right-hand sides)."""
    m1, m2, l1, lc1, lc2, g, I1, I2 = (ARM[k] for k in ("m1", "m2", "l1", "lc1", "lc2", "g", "I1", "I2"))
    R, L, kt, ke, N = (MOTOR[k] for k in ("R", "L", "kt", "ke", "N"))
    kp, ki, kd, tf = (PID[k] for k in ("kp", "ki", "kd", "tf"))

    def arm_rhs(t, x, u, params):
        q1, q2, w1, w2 = x
        c2, s2 = np.cos(q2), np.sin(q2)
        a = I1 + I2 + m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2)
        b, d, h = I2 + m2 * (lc2**2 + l1 * lc2 * c2), I2 + m2 * lc2**2, m2 * l1 * lc2 * s2
        r1 = u[0] + h * w2 * (2 * w1 + w2) - (m1 * lc1 + m2 * l1) * g * np.cos(q1) - m2 * lc2 * g * np.cos(q1 + q2)
        r2 = u[1] - h * w1**2 - m2 * lc2 * g * np.cos(q1 + q2)
        det = a * d - b * b
        return [w1, w2, (d * r1 - b * r2) / det, (a * r2 - b * r1) / det]

    arm = control.nlsys(arm_rhs, lambda t, x, u, params: x, inputs=["tau1", "tau2"],
                        outputs=["q1", "q2", "w1", "w2"], states=4, name="arm")
    motors = [control.nlsys(lambda t, x, u, params: [(u[0] - R * x[0] - ke * N * u[1]) / L],
                            lambda t, x, u, params: [N * kt * x[0]], inputs=["v", "omega"], outputs=["tau"],
                            states=1, name=f"m{k}") for k in (1, 2)]
    pids = [control.nlsys(lambda t, x, u, params: [u[0] - u[1], (u[0] - u[1] - x[1]) / tf],
                          lambda t, x, u, params: [kp * (u[0] - u[1]) + ki * x[0] + kd * (u[0] - u[1] - x[1]) / tf],
                          inputs=["r", "y"], outputs=["u"], states=2, name=f"c{k}") for k in (1, 2)]
    systems = [arm, *motors, *pids]  # the diagram's state order: arm, m1, m2, c1, c2
    connections = [["m1.v", "c1.u"], ["m2.v", "c2.u"], ["arm.tau1", "m1.tau"], ["arm.tau2", "m2.tau"],
                   ["c1.y", "arm.q1"], ["c2.y", "arm.q2"], ["m1.omega", "arm.w1"], ["m2.omega", "arm.w2"]]
    return control.interconnect(systems, connections=connections, inplist=["c1.r", "c2.r"],
                                outlist=["arm.q1", "arm.q2"])


def main() -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# bench_diagram {time.strftime('%Y-%m-%d %H:%M')} UTC, {os.cpu_count()} cores, load {load:.2f}")
    loop = diagram()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "arm_motors_pid_flat.yaml"
        path.write_text(flat_text())
        flat = robodyn.load(str(path))
    grid = np.linspace(0.0, 5.0, 101)
    options = dict(method="dopri5", rtol=1e-8, atol=1e-10, t_eval=grid)
    steps = {"r1": 0.5, "r2": -0.3}
    ours = robodyn.simulate(loop, 5.0, np.zeros(10), steps, **options)
    theirs = robodyn.simulate(flat, 5.0, np.zeros(10), steps, **options)
    difference = float(np.max(np.abs(ours.x - theirs.x[:, ORDER])))
    rounds = []
    for _ in range(5):  # interleaved: the machine is shared
        rounds.append((best_of(lambda: robodyn.simulate(loop, 5.0, np.zeros(10), steps, **options), 1, 5),
                       best_of(lambda: robodyn.simulate(flat, 5.0, np.zeros(10), steps, **options), 1, 5)))
    t_diagram, t_flat = (float(np.median([r[i] for r in rounds])) for i in (0, 1))
    ratio = float(np.median([a / b for a, b in rounds]))
    print(f"simulate 5 s: diagram {t_diagram * 1e3:.2f} ms ({ours.stats.path}, {ours.stats.steps} steps) | flat model "
          f"{t_flat * 1e3:.2f} ms ({theirs.stats.path}, {theirs.stats.steps} steps) | diagram / flat {ratio:.2f} "
          f"(goal <= 1.25) | states differ by {difference:.1e}")
    try:
        import control
    except ImportError:
        print("  python-control not installed: comparison skipped (pip install -e '.[control]')")
    else:
        system = control_loop(control)
        inputs = np.vstack([np.full_like(grid, 0.5), np.full_like(grid, -0.3)])

        def response() -> object:
            return control.input_output_response(system, grid, inputs, np.zeros(10),
                                                 solve_ivp_kwargs={"rtol": 1e-8, "atol": 1e-10, "method": "RK45"})

        peer = response()
        gap = float(np.max(np.abs(np.asarray(peer.outputs).T - ours.y)))
        t_control = best_of(response, 1, 1)
        print(f"  python-control input_output_response {t_control * 1e3:.0f} ms | control / diagram "
              f"{t_control / t_diagram:.0f}x (goal >= 30x) | outputs differ by {gap:.1e}")
    x = np.array([0.3, -0.2, 0.1, 0.05, 0.2, -0.1, 0.01, 0.02, -0.01, 0.03])
    u = np.array([0.5, -0.3])
    rounds = []
    for _ in range(5):
        rounds.append((best_of(lambda: robodyn.linearize(loop, x, u), 1, 200),
                       best_of(lambda: robodyn.linearize(flat, x[ORDER], u), 1, 200)))
    l_diagram, l_flat = (float(np.median([r[i] for r in rounds])) for i in (0, 1))
    ratio = float(np.median([a / b for a, b in rounds]))
    same = np.abs(robodyn.linearize(loop, x, u).A - robodyn.linearize(flat, x[ORDER], u).A).max()
    print(f"linearize per call: diagram {l_diagram * 1e6:.1f} us | flat {l_flat * 1e6:.1f} us | diagram / flat "
          f"{ratio:.2f} (goal <= 2) | A differs by {same:.1e}")


if __name__ == "__main__":
    main()
