"""Loops of diagrams opened at a port (robodyn.linearize(..., open=...)) against python-control: the loop transfer
L = C G, its margins, a two-loop cascade, a sampled loop, and the bad inputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn import blocks
from robodyn.base.errors import InputError, UnknownNameError

control = pytest.importorskip("control")

J, b, k = 0.01, 0.1, 1.0
MOTOR = {"R": 2.0, "L": 0.5e-3, "kt": 0.1, "ke": 0.1, "N": 1.0}
GAINS = {"kp": 20.0, "ki": 5.0, "kd": 1.0, "tf": 0.01}


def response(system, w: np.ndarray) -> np.ndarray:
    A, B, C, D = (np.asarray(m, dtype=float) for m in (system.A, system.B, system.C, system.D))
    return np.array([(C @ np.linalg.solve(1j * x * np.eye(A.shape[0]) - A, B) + D)[0, 0] for x in w])


def plant_and_motor():
    """G from the motor voltage to the joint angle, built by python-control."""
    R, L, kt, ke, N = (MOTOR[key] for key in ("R", "L", "kt", "ke", "N"))
    plant = control.ss([[0, 1], [-k / J, -b / J]], [[0], [1 / J]], np.eye(2), 0, inputs="tau", outputs=["q", "qd"],
                       name="plant")
    motor = control.ss([[-R / L]], [[1 / L, -ke * N / L]], [[N * kt]], 0, inputs=["v", "omega"], outputs=["tau"],
                       name="motor")
    return control.interconnect([plant, motor], connections=[["plant.tau", "motor.tau"], ["motor.omega", "plant.qd"]],
                                inplist=["motor.v"], outlist=["plant.q"])


def loop() -> robodyn.Diagram:
    return robodyn.Diagram({"plant": robodyn.load("joint"), "motor": blocks.dc_motor(**MOTOR),
                            "pid": blocks.pid(**GAINS)},
                           ["pid.u -> motor.v", "motor.tau -> plant.u", "plant.q -> pid.y",
                            "plant.q_dot -> motor.omega"], inputs={"r": "pid.r"}, outputs={"q": "plant.q"})


def test_the_loop_transfer_is_controller_times_plant() -> None:
    L = robodyn.linearize(loop(), np.zeros(5), [0.0], open="pid.u")
    assert (L.inputs, L.outputs) == (("pid.u_injected",), ("pid.u_returned",))
    kp, ki, kd, tf = (GAINS[key] for key in ("kp", "ki", "kd", "tf"))
    pid = control.ss([[0, 0], [0, -1 / tf]], [[1], [1 / tf]], [[ki, -kd / tf]], [[kp + kd / tf]])
    reference = control.series(plant_and_motor(), pid)  # L = C G (pid after the plant: the same product)
    w = np.logspace(-1, 3.5, 10)
    np.testing.assert_allclose(response(L, w), response(reference, w), rtol=1e-10)
    ours, theirs = L.margins(), control.stability_margins(reference)
    np.testing.assert_allclose([ours.gain_margin, ours.phase_margin, ours.stability_margin, ours.phase_crossover,
                                ours.gain_crossover, ours.stability_margin_frequency], theirs, rtol=1e-7)
    assert ours.phase_margin > 90  # a comfortable loop


def test_opening_at_the_input_port_gives_the_same_loop() -> None:
    at_output = robodyn.linearize(loop(), np.zeros(5), [0.0], open="pid.u")
    at_input = robodyn.linearize(loop(), np.zeros(5), [0.0], open="motor.v")
    w = np.logspace(-1, 3, 7)
    np.testing.assert_allclose(response(at_input, w), response(at_output, w), rtol=1e-12)


def test_a_cascade_against_interconnect() -> None:
    """Velocity loop (P on the speed) inside a position loop (PI on the angle): closed-loop poles and the inner
    loop transfer against python-control."""
    diagram = robodyn.Diagram(
        {"plant": robodyn.load("joint"), "motor": blocks.dc_motor(**MOTOR), "outer": blocks.pid(kp=8.0, ki=2.0),
         "inner": blocks.pid(kp=3.0)},
        ["outer.u -> inner.r", "plant.q_dot -> inner.y", "inner.u -> motor.v", "motor.tau -> plant.u",
         "plant.q -> outer.y", "plant.q_dot -> motor.omega"], inputs={"r": "outer.r"}, outputs={"q": "plant.q"})
    R, L, kt, ke, N = (MOTOR[key] for key in ("R", "L", "kt", "ke", "N"))
    plant = control.ss([[0, 1], [-k / J, -b / J]], [[0], [1 / J]], np.eye(2), 0, inputs="tau", outputs=["q", "qd"],
                       name="plant")
    motor = control.ss([[-R / L]], [[1 / L, -ke * N / L]], [[N * kt]], 0, inputs=["v", "omega"], outputs=["tau"],
                       name="motor")
    outer = control.ss([[0]], [[1, -1]], [[2.0]], [[8.0, -8.0]], inputs=["r", "y"], outputs=["u"], name="outer")
    inner = control.ss([], [], [], [[3.0, -3.0]], inputs=["r", "y"], outputs=["u"], name="inner")
    closed = control.interconnect([plant, motor, outer, inner],
                                  connections=[["inner.r", "outer.u"], ["inner.y", "plant.qd"], ["motor.v", "inner.u"],
                                               ["plant.tau", "motor.tau"], ["outer.y", "plant.q"],
                                               ["motor.omega", "plant.qd"]], inplist=["outer.r"], outlist=["plant.q"])
    lin = robodyn.linearize(diagram, np.zeros(4), [0.0])
    np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(lin.A)), np.sort_complex(closed.poles()), rtol=1e-10)
    w = np.logspace(-1, 3, 9)
    np.testing.assert_allclose(response(lin, w), response(closed, w), rtol=1e-10)
    inner_loop = robodyn.linearize(diagram, np.zeros(4), [0.0], open="inner.u")
    speed = control.interconnect([plant, motor], connections=[["plant.tau", "motor.tau"], ["motor.omega", "plant.qd"]],
                                 inplist=["motor.v"], outlist=["plant.qd", "plant.q"])
    # with the outer loop closed around it: inner.r = outer(r=0, q), so L = 3 (qd + outer's response to q)
    G = control.ss2tf(speed)
    C_outer = control.tf([8.0, 2.0], [1.0, 0.0])
    loop_reference = 3.0 * (G[0, 0] + C_outer * G[1, 0])  # -(returned) / injected
    np.testing.assert_allclose(response(inner_loop, w), loop_reference(1j * w), rtol=1e-8)


def test_a_sampled_loop_is_discrete() -> None:
    diagram = robodyn.Diagram({"plant": robodyn.load("joint"), "pd": blocks.pid(kp=5.0, kd=0.2, tf=0.02,
                                                                               sample=0.01)},
                              ["pd.u -> plant.u", "plant.q -> pd.y"], inputs={"r": "pd.r"})
    L = robodyn.linearize(diagram, np.zeros(3), [0.0], open="pd.u")
    assert L.dt == 0.01
    margins = L.margins()
    assert margins.dt == 0.01 and np.isfinite(margins.phase_margin)


def test_bad_openings() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'pid'"):
        robodyn.linearize(loop(), np.zeros(5), [0.0], open="pdi.u")
    with pytest.raises(UnknownNameError, match="has no port 'x'"):
        robodyn.linearize(loop(), np.zeros(5), [0.0], open="pid.x")
    with pytest.raises(InputError, match="no connection to break"):
        robodyn.linearize(loop(), np.zeros(5), [0.0], open="pid.r")
    with pytest.raises(InputError, match="breaks a loop of a diagram"):
        robodyn.linearize(robodyn.load("joint"), [0.0, 0.0], open="pid.u")


def test_the_command_line_prints_the_margins(capsys) -> None:
    from cli_run import run

    example = str(Path(__file__).parents[2] / "examples" / "motor_joint_pid.yaml")
    code, out, _ = run(capsys, "linearize", example, "--open", "pid.u", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["open"] == "pid.u" and data["margins"]["phase_margin"] > 90
    code, out, _ = run(capsys, "linearize", example, "--open", "pid.u")
    assert code == 0 and "phase margin" in out
    code, _, err = run(capsys, "linearize", example, "--open", "pid.nope")
    assert code == 2 and "has no port 'nope'" in err
