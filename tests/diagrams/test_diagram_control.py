"""Nonlinear diagrams linearized against python-control's ``linearize`` of the ``interconnect`` of the same
NonlinearIOSystems (finite differences: agreement to their accuracy, ~1e-6 relative)."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn
from robodyn import blocks

control = pytest.importorskip("control")
FD = 2e-5  # python-control differences with a step of 1e-6 (forward): its error is ~1e-6 of the entries' scale


def pid_system(kp: float, ki: float, kd: float, tf: float, name: str):
    """The library PID's realization (states xi, xd) as a NonlinearIOSystem."""
    def update(t, x, u, params):
        e = u[0] - u[1]
        return [e, (e - x[1]) / tf]

    def output(t, x, u, params):
        e = u[0] - u[1]
        return [kp * e + ki * x[0] + kd * (e - x[1]) / tf]

    return control.nlsys(update, output, inputs=["r", "y"], outputs=["u"], states=2, name=name)


def compare(ours: robodyn.LinearSystem, theirs) -> None:
    for got, want in zip((ours.A, ours.B, ours.C, ours.D), (theirs.A, theirs.B, theirs.C, theirs.D)):
        want = np.asarray(want, dtype=float)
        np.testing.assert_allclose(got, want, rtol=FD, atol=FD * max(1.0, np.abs(want).max()))


def test_pendulum_with_pid_against_python_control() -> None:
    m, g, length = 1.0, 9.81, 1.0
    gains = {"kp": 40.0, "ki": 10.0, "kd": 8.0, "tf": 0.05}
    diagram = robodyn.Diagram({"pendulum": robodyn.load("pendulum"), "pid": blocks.pid(**gains)},
                              ["pid.u -> pendulum.tau", "pendulum.theta -> pid.y"], inputs={"r": "pid.r"},
                              outputs={"theta": "pendulum.theta"})
    def swing(t, x, u, params):
        return [x[1], (u[0] - m * g * length * np.sin(x[0])) / (m * length * length)]

    pendulum = control.nlsys(swing, lambda t, x, u, params: [x[0]], inputs=["tau"], outputs=["theta"], states=2,
                             name="pendulum")
    loop = control.interconnect([pendulum, pid_system(**gains, name="pid")],
                                connections=[["pendulum.tau", "pid.u"], ["pid.y", "pendulum.theta"]],
                                inplist=["pid.r"], outlist=["pendulum.theta"])
    for x, r in ((np.array([np.pi, 0.0, 0.0, 0.0]), np.pi), (np.array([0.7, -0.4, 0.05, 0.02]), 1.0)):
        compare(robodyn.linearize(diagram, x, [r]), control.linearize(loop, x, [r]))


def test_arm_with_motors_and_pd_against_python_control() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
    import bench_diagram  # the arm, motors and PIDs of the benchmark, in both libraries

    diagram = bench_diagram.diagram()
    loop = bench_diagram.control_loop(control)
    x = np.array([0.3, -0.2, 0.1, 0.05, 0.2, -0.1, 0.01, 0.02, -0.01, 0.03])
    u = np.array([0.5, -0.3])
    ours = robodyn.linearize(diagram, x, u)
    theirs = control.linearize(loop, x, u)
    for got, want in zip((ours.A, ours.B), (theirs.A, theirs.B)):
        want = np.asarray(want, dtype=float)
        np.testing.assert_allclose(got, want, rtol=FD, atol=FD * np.abs(want).max())
