"""robodyn.rigid.regressor: body wrench columns carried to the joints, Y theta = Newton-Euler.

Reference: robodyn.rigid.rnea.rnea on the same trees (bodies given by mass, centre of mass and inertia about it: no
step shared with the regressor but the forward pass), for trees with branches and prismatic joints.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from tests.rigid.test_derivatives import PARENTS, _close, _numbers, _tree

from robodyn.rigid.regressor import INERTIAL, inertial_regressor, standard_parameters
from robodyn.rigid.rnea import rnea
from robodyn.rigid.tape import Tape


def test_y_theta_is_newton_euler_for_any_inertias_of_one_geometry() -> None:
    """Two trees of one geometry and different masses and inertias: one Y (it holds no inertial parameter), and
    Y theta equals each tree's rnea; a body's columns are zero in the rows of joints that do not carry it."""
    tape, rng = Tape(), np.random.default_rng(4)
    bodies = _tree(tape, rng, PARENTS)
    others = [dataclasses.replace(body, mass=other.mass, com=other.com, inertia=other.inertia)
              for body, other in zip(bodies, _tree(tape, np.random.default_rng(9), PARENTS))]
    n = len(bodies)
    q, v, a = tape.leaves(1, n), tape.leaves(2, n), tape.leaves(4, n)
    gravity = [tape.const(g) for g in (0.3, -0.2, -9.81)]
    Y = inertial_regressor(tape, bodies, q, v, a, gravity)
    assert len(Y) == n and all(len(row) == len(INERTIAL) * n for row in Y)
    again = inertial_regressor(tape, others, q, v, a, gravity)
    for tree in (bodies, others):
        theta = [e for body in tree for e in standard_parameters(body)]
        tau = rnea(tape, tree, q, v, a, gravity)
        for _ in range(3):
            arguments = [[0.0], rng.uniform(-2, 2, n), rng.normal(size=n), [], rng.normal(size=n)]
            np.testing.assert_array_equal(_numbers(tape, again, arguments), _numbers(tape, Y, arguments))  # no inertia
            _close(_numbers(tape, Y, arguments) @ _numbers(tape, theta, arguments), _numbers(tape, tau, arguments))
    ancestors = {i: {i} for i in range(n)}
    for i, parent in enumerate(PARENTS):
        if parent >= 0:
            ancestors[i] |= ancestors[parent]
    for j in range(n):
        for i in range(n):
            if j not in ancestors[i]:
                assert all(tape.constant_of(e) == 0.0 for e in Y[j][10 * i:10 * i + 10])


def test_standard_parameters_move_the_inertia_to_the_origin() -> None:
    """m, m c and I_O = I_c + m (|c|^2 1 - c c^T) (the parallel-axis theorem), from a body's numbers."""
    tape, rng = Tape(), np.random.default_rng(2)
    body = _tree(tape, rng, [-1])[0]
    m, c = tape.constant_of(body.mass), np.array([tape.constant_of(e) for e in body.com])
    inertia = np.array([[tape.constant_of(e) for e in row] for row in body.inertia])
    origin = inertia + m * (c @ c * np.eye(3) - np.outer(c, c))
    expected = [m, *(m * c), origin[0, 0], origin[0, 1], origin[1, 1], origin[0, 2], origin[1, 2], origin[2, 2]]
    np.testing.assert_allclose([tape.constant_of(e) for e in standard_parameters(body)], expected, rtol=1e-15)
