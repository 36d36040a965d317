"""The analytical derivatives of inverse dynamics and the composite-rigid-body mass matrix (robodyn.rigid.derivatives)
against two independent references: forward mode over the body-frame Newton–Euler recursion (robodyn.rigid.rnea)
on random trees, and Pinocchio's ``computeRNEADerivatives`` and ``crba`` on robots with a free-flyer or planar base."""

from __future__ import annotations

import numpy as np
import pytest
from tests.pinocchio_reference import ROBOTS

import robodyn
from robodyn.rigid.derivatives import WorldTree
from robodyn.rigid.dynamics import Coulomb, JointTerms, ManipulatorProgram
from robodyn.rigid.rnea import Body, rnea
from robodyn.rigid.tape import Tape, Value


def _rotation(rng: np.random.Generator) -> np.ndarray:
    """A proper rotation (determinant +1), uniform on SO(3)."""
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q * np.linalg.det(q)


def _tree(tape: Tape, rng: np.random.Generator, parents: list[int]) -> list[Body]:
    """Bodies with random axes, placements and physical inertias; every third joint prismatic."""
    def const(values: np.ndarray) -> tuple:
        return tuple(const(v) for v in values) if np.ndim(values) else tape.const(float(values))

    bodies = []
    for k, parent in enumerate(parents):
        axis = rng.normal(size=3)
        root = _rotation(rng)
        inertia = root @ np.diag(rng.uniform(0.5, 1.0, size=3)) @ root.T  # moments within the triangle inequality
        bodies.append(Body(parent, k % 3 == 2, const(axis / np.linalg.norm(axis)), const(_rotation(rng)),
                           const(rng.normal(size=3)), const(rng.uniform(0.5, 2.0)), const(rng.normal(size=3) * 0.3),
                           const(inertia)))
    return bodies


def _numbers(tape: Tape, values: list, arguments: list) -> np.ndarray:
    flat = [e for row in values for e in row] if isinstance(values[0], list) else values
    return np.array(tape.evaluate(flat, arguments)).reshape(np.shape(values) if isinstance(values[0], list)
                                                            else (len(values),))


def _close(ours: np.ndarray, theirs: np.ndarray) -> None:
    """Within 1e-11 of the largest entry: O(depth) sums of products of O(1) numbers, round-off ~1e-15 each."""
    assert np.max(np.abs(ours - theirs)) <= 1e-11 * np.max(np.abs(theirs))


PARENTS = [-1, 0, 1, 1, 3, -1, 5, 2]  # two subtrees from the base, a branch at body 1, depth 5


def test_a_fixed_tree_equals_forward_mode_over_newton_euler() -> None:
    """dtau/dq and dtau/dq' in world-frame algebra against forward mode over the body-frame recursion, M against
    the columns ID(q, 0, e_j) without gravity, tau against rnea: the two share no step but the placements."""
    tape, rng = Tape(), np.random.default_rng(11)
    bodies = _tree(tape, rng, PARENTS)
    n = len(bodies)
    q, v, a = tape.leaves(1, n), tape.leaves(2, n), tape.leaves(4, n)
    gravity = [tape.const(g) for g in (0.3, -0.2, -9.81)]
    world = WorldTree(tape, bodies, q, gravity)
    ours = world.inverse_derivatives(v, a)
    tau = rnea(tape, bodies, q, v, a, gravity)
    forward = tape.derive(tau, [*q, *v], hold=a)
    zeros = [tape.const(0.0)] * n
    columns = [rnea(tape, bodies, q, zeros, [tape.const(float(i == j)) for i in range(n)], [tape.const(0.0)] * 3)
               for j in range(n)]
    for _ in range(3):
        arguments = [[0.0], rng.uniform(-2, 2, n), rng.normal(size=n), [], rng.normal(size=n)]
        _close(_numbers(tape, ours.tau, arguments), _numbers(tape, tau, arguments))
        reference = _numbers(tape, forward, arguments)
        _close(_numbers(tape, ours.dq, arguments), reference[:, :n])
        _close(_numbers(tape, ours.dv, arguments), reference[:, n:])
        _close(_numbers(tape, world.mass, arguments), _numbers(tape, columns, arguments).T)


def test_coupled_bodies_and_joint_terms_equal_forward_mode() -> None:
    """A coordinate that moves three bodies (a mimic joint: multiplier and offset) and joints with rotors, damping,
    friction and springs: the residual's Jacobian [dq | dq' | du] and M in coordinates against forward mode over
    the manipulator's own inverse dynamics."""
    tape, rng = Tape(), np.random.default_rng(4)
    bodies = _tree(tape, rng, PARENTS)
    n, m = 5, 2
    x, u, a = tape.leaves(1, 2 * n), tape.leaves(2, m), tape.leaves(4, n)
    c = tape.const
    couplings = [(0, c(1.0), c(0.0)), (1, c(1.0), c(0.0)), (2, c(1.0), c(0.0)), (3, c(1.0), c(0.0)),
                 (1, c(-0.7), c(0.2)), (4, c(1.0), c(0.0)), (1, c(2.0), c(-0.1)), (3, c(1.5), c(0.0))]
    joints = [JointTerms(c(0.1 * i), c(0.3), Coulomb(c(0.2), c(0.0), 1.0), c(0.5 if i % 2 else 0.0), c(0.1))
              for i in range(n)]
    forces = [u[0], u[1] * x[2].cos(), c(0.0), u[0] * x[0], x[n]]  # Q depending on u, q and q'
    gravity = [c(0.0), c(0.0), c(-9.81)]
    program = ManipulatorProgram(tape, bodies, couplings, x, u, a, gravity, joints, forces)
    rows = program.residual_jacobian(program.qd, a, [*x, *u])
    residual = [tau - f for tau, f in zip(program.inverse(a, program.qd, gravity), forces)]
    forward = tape.derive(residual, [*x, *u], hold=a)
    unit = [[c(float(i == j)) for i in range(n)] for j in range(n)]
    columns = [program.inverse(e, [c(0.0)] * n, [c(0.0)] * 3) for e in unit]  # with rotors, damping at q' = 0
    spring = [joints[i].stiffness * (x[i] - joints[i].rest) for i in range(n)]
    columns = [[col[i] - spring[i] for i in range(n)] for col in columns]
    for _ in range(3):
        arguments = [[0.0], rng.uniform(-1.5, 1.5, 2 * n), rng.normal(size=m), [], rng.normal(size=n)]
        _close(_numbers(tape, rows, arguments), _numbers(tape, forward, arguments))
        _close(_numbers(tape, program.mass, arguments), _numbers(tape, columns, arguments).T)


@pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
@pytest.mark.parametrize("base", ["floating", "planar"])
def test_a_moving_base_equals_pinocchio(base: str) -> None:
    """The quadruped on a free-flyer and on a planar base: the residual's Jacobian in the tangent space (the chart's
    d at 0) is computeRNEADerivatives' [dtau/dq | dtau/dv] and -[0; I] for the joints' torques, M is crba's."""
    pin = pytest.importorskip("pinocchio")
    path = str(ROBOTS / "solo_description/robots/solo12.urdf")
    model = robodyn.load(path, base=base, dynamics=False, check_inertia=False)
    joint = pin.JointModelFreeFlyer() if base == "floating" else pin.JointModelPlanar()
    reference = pin.buildModelFromUrdf(path, joint)
    data = reference.createData()
    program = model._program(True)
    tape, _ = model._tape
    nq, nv, nb, m = model.nq, model.nv, model.nb, model.n_inputs
    x = tape.leaves(1, nq + nv + nb)
    variables: list[Value] = [*x[nq + nv:], *x[nq - program.n: nq], *x[nq: nq + nv], *tape.leaves(2, m)]
    rows = program.residual_jacobian([*program.base_v, *program.qd], program.a, variables)
    rng = np.random.default_rng(2)
    for _ in range(2):
        q = pin.normalize(reference, rng.normal(size=nq))
        v, acc = rng.normal(size=nv), rng.normal(size=nv)
        arguments = [[0.0], np.concatenate([q, v, np.zeros(nb)]), np.zeros(m), model.parameter_vector(), acc]
        pin.computeRNEADerivatives(reference, data, q, v, acc)
        jacobian = _numbers(tape, rows, arguments)
        _close(jacobian[:, :nv], np.asarray(data.dtau_dq))
        _close(jacobian[:, nv: 2 * nv], np.asarray(data.dtau_dv))
        assert np.array_equal(jacobian[:, 2 * nv:], -np.eye(nv)[:, nb:])
        mass = np.asarray(pin.crba(reference, data, q))
        _close(_numbers(tape, program.mass, arguments), np.triu(mass) + np.triu(mass, 1).T)
