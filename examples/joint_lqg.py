"""The joint of the course under LQG: an LQR on the Kalman estimate of its state, from a noisy angle sensor.

The catalog joint (J q'' + b q' + k q = u) measures only its angle, through a sensor with 0.01 rad of white noise,
and is pushed by a random torque of 0.05 N m standard deviation; both are seeded white noise held for 1 ms
(robodyn.signals.WhiteNoise), whose intensities as continuous white noise are sigma^2 T. robodyn.lqg designs the
controller y -> u: the LQR gain K (Q = diag(100, 1), R = 0.01) on the steady-state Kalman filter's estimate (the
torque noise entering through B). The loop is a diagram — plant, the two noise sums, the controller as an `lti`
block — simulated from 0.5 rad (RK4 at a quarter of the noise's hold) and linearized:

- its poles are those of A - B K and A - L C (the separation principle), to rounding;
- the controller's states are the estimate, whose error stays within 3 standard deviations of the filter's own
  covariance P at nearly every sample once the start has been forgotten;
- the angle is regulated to within a few noise levels of zero.

    python examples/joint_lqg.py
"""

from __future__ import annotations

import numpy as np

import robodyn
from robodyn import blocks
from robodyn.signals import WhiteNoise

T = 1e-3  # the noises are held for 1 ms
SENSOR, TORQUE = 0.01, 0.05  # standard deviations: rad, N m


def design() -> tuple[robodyn.LinearSystem, robodyn.LinearSystem, np.ndarray]:
    """(the angle-measured plant, the LQG controller, the Kalman filter's covariance P)."""
    joint = robodyn.linearize(robodyn.load("joint"), [0.0, 0.0], [0.0])
    angle = robodyn.LinearSystem(joint.A, joint.B, joint.C[:1], joint.D[:1], states=["angle", "speed"],
                                 inputs=joint.inputs, outputs=["q"], name="joint")  # measures q, the angle
    Qn, Rn = TORQUE**2 * T, SENSOR**2 * T  # the intensities of the held noises as continuous white noise
    controller = robodyn.lqg(angle, np.diag([100.0, 1.0]), 0.01, Qn, Rn, G=joint.B)
    P = np.asarray(robodyn.kalman(angle, Qn, Rn, G=joint.B).P)
    return angle, controller, P


def loop(controller: robodyn.LinearSystem) -> robodyn.Diagram:
    # the controller as a library `lti` block (compiled into the diagram's code; its states x1, x2 are the estimate
    # of the angle and the speed): a LinearSystem block is accepted too, but evaluated in Python
    K = blocks.lti(controller.A, controller.B, controller.C, controller.D, inputs=["q"], outputs=["u"])
    return robodyn.Diagram(
        {"plant": robodyn.load("joint"), "K": K, "torque": blocks.sum("++"), "sensor": blocks.sum("++")},
        ["K.u -> torque.u1", "torque.y -> plant.u", "plant.q -> sensor.u1", "sensor.y -> K.q"],
        inputs={"disturbance": "torque.u2", "noise": "sensor.u2"}, outputs={"q": "plant.q", "u": "K.u"},
        name="joint_lqg")


def main() -> None:
    angle, controller, P = design()
    closed = loop(controller)
    poles = np.sort_complex(robodyn.linearize(closed, np.zeros(closed.n_states), [0.0, 0.0]).eigenvalues)
    regulator = robodyn.lqr(angle, np.diag([100.0, 1.0]), 0.01)
    separated = np.sort_complex(np.concatenate([np.asarray(regulator.eigenvalues),
                                                np.linalg.eigvals(angle.A - np.asarray(
                                                    robodyn.kalman(angle, TORQUE**2 * T, SENSOR**2 * T,
                                                                   G=angle.B).L) @ angle.C)]))
    print("loop poles:     ", np.round(poles, 3))
    print("A - BK, A - LC: ", np.round(separated, 3))
    assert np.allclose(poles, separated, rtol=1e-9, atol=1e-9), "the separation principle"

    x0 = np.zeros(closed.n_states)
    x0[closed.states.index("plant.q")] = 0.5
    noises = {"disturbance": WhiteNoise(TORQUE, T, seed=1), "noise": WhiteNoise(SENSOR, T, seed=2)}
    # RK4 at a quarter of the noise's hold, its steps on the holds' edges: the filter's fast pole (-1000 1/s) at
    # h |lambda| = 0.25, well inside RK4's stability region
    run = robodyn.simulate(closed, 3.0, x0, noises, method="rk4", dt=T / 4)
    truth = run.x[:, [closed.states.index("plant.q"), closed.states.index("plant.q_dot")]]
    estimate = run.x[:, [closed.states.index("K.x1"), closed.states.index("K.x2")]]
    settled = (run.t >= 1.0) & (np.arange(run.t.size) % 4 == 0)  # the samples after 1 s
    error = np.abs(estimate - truth)[settled]
    inside = np.mean(np.all(error <= 3.0 * np.sqrt(np.diag(P)), axis=1))
    q = truth[settled, 0]
    print(f"estimate within 3 sigma of P at {inside:.1%} of the samples after 1 s; sigma = "
          f"{np.sqrt(np.diag(P)).round(5)} (angle, speed)")
    print(f"angle after 1 s: RMS {np.sqrt(np.mean(q**2)):.4f} rad (the sensor's noise: {SENSOR} rad)")
    assert inside > 0.95, "the estimate is consistent with its covariance"
    assert np.sqrt(np.mean(q**2)) < 3 * SENSOR, "regulated near zero"


if __name__ == "__main__":
    main()
