"""A mixed-sensitivity H-infinity controller for the motor + joint of motor_joint_pid.yaml, against its PID.

The plant is the file's without its PID: the catalog joint driven by the DC motor (voltage v in, angle q out),
linearized at rest (exact). The design asks for

- |S| small at low frequency and at most M = 2 everywhere: W1 = (s / M + wb) / (s + wb A), wb = 10 rad/s,
  A = 1e-3 (the error e = r - q within 0.1 % at DC, the sensitivity peak under 2: a modulus margin of 0.5);
- the voltage bounded: W2 = 0.01 (|K S| < 100 V per rad of reference);
- |T| rolling off above 1000 rad/s (sensor noise, what the model leaves out): W3 = s / 1000 + 0.01, made proper by
  a pole at 10^4 rad/s.

robodyn.mixsyn returns K, the closed loop and the achieved gamma: below 1, every weighted transfer is within its
bound (these weights give 0.999). The loop with K as an `lti` block is simulated and linearized as a diagram,
beside the PID of the file (tuned by hand, slow to remove its last error: its integral is weak): step response
(rise, overshoot, 2 % settling, peak voltage) and the margins of each loop opened at the controller's output.

    python examples/motor_joint_mixsyn.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import robodyn
from robodyn import blocks

HERE = Path(__file__).resolve().parent


def plant() -> robodyn.Diagram:
    """Motor + joint, the parameters of motor_joint_pid.yaml: input v (V), output q (rad)."""
    return robodyn.Diagram({"plant": robodyn.load("joint"),
                            "motor": blocks.dc_motor(R=2.0, L=0.5e-3, kt=0.1, ke=0.1, N=1.0)},
                           ["motor.tau -> plant.u", "plant.q_dot -> motor.omega"],
                           inputs={"v": "motor.v"}, outputs={"q": "plant.q"}, name="motor_joint")


def weights() -> tuple[robodyn.LinearSystem, float, robodyn.LinearSystem]:
    wb, M, A, wt = 10.0, 2.0, 1e-3, 1000.0
    W1 = robodyn.LinearSystem([[-wb * A]], [[1.0]], [[wb - wb * A / M]], [[1.0 / M]], name="W1")
    # (1e4 / wt) (s + 0.01 wt) / (s + 1e4) = D + C / (s + 1e4): s / wt + 0.01 below 1e4 rad/s
    W3 = robodyn.LinearSystem([[-1e4]], [[1.0]], [[1e4 * 0.01 - 1e8 / wt]], [[1e4 / wt]], name="W3")
    return W1, 0.01, W3


def closed_hinf(K: robodyn.LinearSystem) -> robodyn.Diagram:
    """The loop r -> e = r - q -> K -> v -> plant (mixsyn's K maps the error to the input: u = K e)."""
    error = blocks.lti(D=[[1.0, -1.0]], inputs=["r", "y"], outputs=["error"])
    return robodyn.Diagram({"G": plant(), "K": K, "sum": error},
                           [f"sum.error -> K.{K.inputs[0]}", f"K.{K.outputs[0]} -> G.v", "G.q -> sum.y"],
                           inputs={"r": "sum.r"}, outputs={"q": "G.q", "v": f"K.{K.outputs[0]}"}, name="hinf_loop")


def closed_pid() -> robodyn.Diagram:
    """The loop of motor_joint_pid.yaml (the PID forms e = r - y itself)."""
    return robodyn.Diagram({"G": plant(), "K": blocks.pid(kp=20.0, ki=5.0, kd=1.0, tf=0.01)},
                           ["K.u -> G.v", "G.q -> K.y"], inputs={"r": "K.r"}, outputs={"q": "G.q", "v": "K.u"},
                           name="pid_loop")


def main() -> None:
    G = robodyn.linearize(plant(), np.zeros(3), [0.0])
    W1, W2, W3 = weights()
    design = robodyn.mixsyn(G, W1, W2, W3)
    print(f"mixsyn: gamma = {design.gamma:.4f} (every weighted transfer within it), K has "
          f"{design.K.A.shape[0]} states")
    hinf, pid = closed_hinf(design.K), closed_pid()
    print(f"{'controller':<10} {'rise [s]':>9} {'overshoot':>10} {'settling [s]':>13} {'peak |v| [V]':>13} "
          f"{'gain margin':>12} {'phase margin':>13}")
    for label, loop, at in (("H-inf", hinf, f"K.{design.K.outputs[0]}"), ("PID", pid, "K.u")):
        run = robodyn.simulate(loop, 10.0, np.zeros(loop.n_states), {"r": 1.0}, t_eval=np.linspace(0, 10, 10001),
                               method="radau")  # the motor current's pole at -4,000 rad/s: stiff
        q, v = run.y[:, run.outputs.index("q")], run.y[:, run.outputs.index("v")]
        rise = run.t[np.argmax(q >= 0.9)] - run.t[np.argmax(q >= 0.1)] if q.max() >= 0.9 else np.nan
        outside = np.flatnonzero(np.abs(q - 1.0) > 0.02)
        settling = run.t[outside[-1] + 1] if outside.size and outside[-1] + 1 < q.size else np.nan
        margins = robodyn.linearize(loop, np.zeros(loop.n_states), [0.0], open=at).margins()
        late = "> 10 s"
        print(f"{label:<10} {late if np.isnan(rise) else f'{rise:.3f}':>9} {max(0.0, q.max() - 1.0):10.1%} "
              f"{late if np.isnan(settling) else f'{settling:.3f}':>13} {np.abs(v).max():13.1f} "
              f"{margins.gain_margin_db:10.1f} dB {margins.phase_margin:11.1f}°")
        assert np.all(np.isfinite(q)), f"{label}: the run is not finite"
    assert design.gamma < 1.0, "the weights are not all met"


if __name__ == "__main__":
    main()
