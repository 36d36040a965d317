"""The linear systems the linear-systems view is checked on against python-control: the seed joint, the pendulum
(hanging and upright) and the two-link arm where it hangs at rest."""

from __future__ import annotations

import functools
import math

import robodyn
from robodyn import LinearSystem

DT = 0.01  # the sample period of the discrete cases


@functools.cache
def joint() -> LinearSystem:
    return robodyn.linearize(robodyn.load("joint"), [0.0, 0.0])


@functools.cache
def pendulum(theta: float) -> LinearSystem:
    return robodyn.linearize(robodyn.load("pendulum"), [theta, 0.0])


@functools.cache
def arm() -> LinearSystem:
    """The two-link arm linearized where it hangs at rest (undamped: marginally stable)."""
    model = robodyn.load("two_link_arm")
    point = robodyn.find_equilibrium(model, {"shoulder_tau": 0.0, "elbow_tau": 0.0, "shoulder_dot": 0.0,
                                             "elbow_dot": 0.0}, {"shoulder": -1.5, "elbow": 0.1})[0]
    assert abs(point.x[0] + math.pi / 2) < 1e-9 and abs(point.x[1]) < 1e-12
    return robodyn.linearize(model, point.x, point.u)
