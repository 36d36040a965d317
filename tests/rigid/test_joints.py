"""Ball (spherical) joints inside a tree with revolute and prismatic ones (robodyn.rigid.joints and the algorithms
that take any joint: robodyn.rigid.rnea, derivatives, aba), against Pinocchio's ``JointModelSpherical``,
``JointModelRevoluteUnaligned`` and ``JointModelPrismaticUnaligned`` built into the same tree: the mass matrix
(crba), inverse dynamics (rnea), forward dynamics (aba, on a fixed and on a free-flying root), the derivatives of
inverse dynamics and the bodies' placements at random states;
the quaternion's derivative and the chart against Eigen's quaternion product, Poisson's equation, Pinocchio's
``integrate`` and SO(3) Jacobian."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from robodyn.rigid.aba import articulated_accelerations
from robodyn.rigid.base_joints import quaternion_matrix
from robodyn.rigid.derivatives import WorldTree
from robodyn.rigid.joints import SPHERICAL
from robodyn.rigid.rnea import Body, TreeFactor, joint_of, rnea, tree_offsets, world_frames
from robodyn.rigid.spatial import tmatvec
from robodyn.rigid.tape import Tape, Value

pin = pytest.importorskip("pinocchio")

# (parent, joint), depth first (Pinocchio's algorithms take a subtree's velocities as one range): a ball between two
# revolute joints and a ball as the leaf below them, a prismatic branch from the first body with a ball and a
# revolute joint below it: nq = 1 + 4 + 1 + 4 + 1 + 4 + 1 = 16, nv = 13.
TREE = [(-1, "revolute"), (0, "spherical"), (1, "revolute"), (2, "spherical"), (0, "prismatic"), (4, "spherical"),
        (5, "revolute")]
GRAVITY = np.array([0.0, 0.0, -9.81])
STATES = 20
# Relative to the largest entry: the algorithms are sums of O(depth) products of O(1) numbers (round-off ~1e-16
# each) and forward dynamics solves with M, whose condition number for these inertias is up to about 1e3 (the
# factored solve agrees to ~3e-13).
RELATIVE = 1e-12


def _rotation(rng: np.random.Generator) -> np.ndarray:
    """A proper rotation (determinant +1), uniform on SO(3)."""
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q * np.linalg.det(q)


def _unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=4)
    return v / np.linalg.norm(v)


def _close(ours: np.ndarray, theirs: np.ndarray) -> None:
    assert np.max(np.abs(ours - theirs)) <= RELATIVE * max(1.0, np.max(np.abs(theirs))), np.max(np.abs(ours - theirs))


def _pair(rng: np.random.Generator, tree: list[tuple[int, str]] = TREE) -> tuple[Tape, list[Body], Any]:
    """The ``tree`` as robodyn's bodies (constants on a new tape) and as a Pinocchio model, random axes, placements
    and physical inertias (principal moments of a box: within the triangle inequality)."""
    tape = Tape()

    def const(values: np.ndarray) -> Any:
        return tuple(const(v) for v in values) if np.ndim(values) else tape.const(float(values))

    model = pin.Model()
    bodies, ids = [], []
    for parent, kind in tree:
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        rotation, position = _rotation(rng), rng.normal(size=3) * 0.4
        mass, com = rng.uniform(0.5, 2.0), rng.normal(size=3) * 0.2
        sides = rng.uniform(0.1, 0.5, size=3) ** 2
        turn = _rotation(rng)
        inertia = turn @ np.diag(mass / 12.0 * (sides.sum() - sides)) @ turn.T
        joint = {"revolute": pin.JointModelRevoluteUnaligned(*axis),
                 "prismatic": pin.JointModelPrismaticUnaligned(*axis), "spherical": pin.JointModelSpherical()}[kind]
        index = model.addJoint(0 if parent < 0 else ids[parent], joint, pin.SE3(rotation, position), f"j{len(ids)}")
        model.appendBodyToJoint(index, pin.Inertia(mass, com, inertia), pin.SE3.Identity())
        ids.append(index)
        bodies.append(Body(parent, kind == "prismatic", const(axis), const(rotation), const(position), const(mass),
                           const(com), const(inertia), SPHERICAL if kind == "spherical" else None))
    model.gravity = pin.Motion(GRAVITY, np.zeros(3))
    return tape, bodies, model


def _state(model: Any, rng: np.random.Generator) -> np.ndarray:
    """A random configuration: angles, displacements and unit quaternions x y z w."""
    q = []
    for joint in list(model.joints)[1:]:
        q += list(_unit(rng)) if joint.nq == 4 else [rng.uniform(-np.pi, np.pi)]
    return np.array(q)


def test_the_layout_is_pinocchios() -> None:
    """Each body's entries start where Pinocchio's joint's do, in q and in v."""
    _, bodies, model = _pair(np.random.default_rng(0))
    starts_q, starts_v = tree_offsets(bodies)
    assert starts_q == [*(j.idx_q for j in list(model.joints)[1:]), model.nq] == [0, 1, 5, 6, 10, 11, 15, 16]
    assert starts_v == [*(j.idx_v for j in list(model.joints)[1:]), model.nv]


def test_mass_matrix_inverse_and_forward_dynamics_equal_pinocchio() -> None:
    """crba, rnea, aba and computeRNEADerivatives at 20 random states; forward dynamics also by M's tree-sparse
    factor, whose entries outside the tree's pattern are constant zeros (no fill-in with 3-velocity blocks)."""
    rng = np.random.default_rng(7)
    tape, bodies, model = _pair(rng)
    data = model.createData()
    nq, nv = model.nq, model.nv
    q, v, a = tape.leaves(1, nq), tape.leaves(2, nv), tape.leaves(3, nv)
    gravity = [tape.const(g) for g in GRAVITY]
    tau = rnea(tape, bodies, q, v, a, gravity)
    bias = rnea(tape, bodies, q, v, [tape.const(0.0)] * nv, gravity)
    world = WorldTree(tape, bodies, q, gravity)
    derivatives = world.inverse_derivatives(v, a)
    accelerations, base = articulated_accelerations(tape, bodies, q, v, a, [tape.const(0.0)] * nv, gravity)
    factor = TreeFactor(world.mass, list(reversed(range(nv))))
    solved = factor.solve([f - c for f, c in zip(a, bias)])
    assert base is None and len(tau) == len(accelerations) == nv
    _assert_no_fill_in(tape, bodies, factor)
    outputs: list[Value] = [*tau, *(e for row in world.mass for e in row), *accelerations, *solved,
                            *(e for row in derivatives.dq for e in row), *(e for row in derivatives.dv for e in row)]
    for _ in range(STATES):
        qs, vs, acc = _state(model, rng), rng.normal(size=nv), rng.normal(size=nv)
        numbers = np.array(tape.evaluate(outputs, ([0.0], qs, vs, acc)))
        ours = np.split(numbers, np.cumsum([nv, nv * nv, nv, nv, nv * nv]))
        _close(ours[0], pin.rnea(model, data, qs, vs, acc))
        upper = pin.crba(model, data, qs, pin.Convention.WORLD)  # Pinocchio fills the upper triangle
        _close(ours[1].reshape(nv, nv), np.triu(upper) + np.triu(upper, 1).T)
        forward = pin.aba(model, data, qs, vs, acc)  # ``acc`` as the joint forces
        _close(ours[2], forward)
        _close(ours[3], forward)
        dq, dv, _ = pin.computeRNEADerivatives(model, data, qs, vs, acc)
        _close(ours[4].reshape(nv, nv), dq)
        _close(ours[5].reshape(nv, nv), dv)


def _random_tree(rng: np.random.Generator, count: int) -> list[tuple[int, str]]:
    """``count`` bodies in depth-first order (each hangs from the previous body, one of its ancestors or the base),
    half of the joints balls, the others revolute or prismatic."""
    tree: list[tuple[int, str]] = []
    for k in range(count):
        line = [-1]
        body = k - 1
        while body >= 0:
            line.append(body)
            body = tree[body][0]
        kind = "spherical" if rng.uniform() < 0.5 else str(rng.choice(["revolute", "prismatic"]))
        tree.append((int(rng.choice(line)), kind))
    return tree


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_trees_with_rotor_inertias_equal_pinocchio(seed: int) -> None:
    """Trees of random shape (balls at the root, in a row, at leaves): rnea and crba against Pinocchio, and forward
    dynamics with reflected rotor inertias on every velocity entry against (M + diag(armature))^-1 (tau - c) from
    Pinocchio's crba and rnea solved by numpy, at 20 random states each."""
    rng = np.random.default_rng(seed)
    tape, bodies, model = _pair(rng, _random_tree(rng, 7))
    data, nq, nv = model.createData(), model.nq, model.nv
    q, v, a, armature = tape.leaves(1, nq), tape.leaves(2, nv), tape.leaves(3, nv), tape.leaves(4, nv)
    gravity = [tape.const(g) for g in GRAVITY]
    accelerations, _ = articulated_accelerations(tape, bodies, q, v, a, armature, gravity)
    outputs = [*rnea(tape, bodies, q, v, a, gravity), *(e for row in WorldTree(tape, bodies, q, gravity).mass
                                                        for e in row), *accelerations]
    for _ in range(STATES):
        qs, vs, acc, rotors = _state(model, rng), rng.normal(size=nv), rng.normal(size=nv), rng.uniform(0, 1, nv)
        numbers = np.array(tape.evaluate(outputs, ([0.0], qs, vs, acc, rotors)))
        upper = pin.crba(model, data, qs, pin.Convention.WORLD)
        mass = np.triu(upper) + np.triu(upper, 1).T
        _close(numbers[:nv], pin.rnea(model, data, qs, vs, acc))
        _close(numbers[nv: nv + nv * nv].reshape(nv, nv), mass)
        bias = pin.rnea(model, data, qs, vs, np.zeros(nv))
        _close(numbers[nv + nv * nv:], np.linalg.solve(mass + np.diag(rotors), acc - bias))


def _assert_no_fill_in(tape: Tape, bodies: list[Body], factor: TreeFactor) -> None:
    """Entry (k, l), k > l, of the leaves-first factor is a constant zero unless velocity ``order[k]``'s body is
    ``order[l]``'s or one of its ancestors."""
    _, starts = tree_offsets(bodies)
    owner = [b for b in range(len(bodies)) for _ in range(starts[b], starts[b + 1])]

    def line(body: int) -> set[int]:
        found = set()
        while body >= 0:
            found.add(body)
            body = bodies[body].parent
        return found

    order = factor.order
    for k, row in enumerate(factor.lower):
        for col in range(k):
            if owner[order[k]] not in line(owner[order[col]]):
                assert tape.constant_of(row[col]) == 0.0, (k, col)


def test_the_quaternion_derivative_is_half_the_product_and_satisfies_poisson() -> None:
    """q' = 1/2 q (x) (w, 0) equals Eigen's quaternion product (Pinocchio's ``Quaternion``), keeps |q| (q . q' = 0)
    and moves the rotation as R' = R [w]x (the placement's forward-mode derivative along q'), at 20 random points."""
    rng = np.random.default_rng(3)
    tape = Tape()
    identity = ((tape.const(1.0), tape.const(0.0), tape.const(0.0)), (tape.const(0.0), tape.const(1.0),
                tape.const(0.0)), (tape.const(0.0), tape.const(0.0), tape.const(1.0)))
    frame = Body(-1, False, (tape.const(0.0),) * 3, identity, (tape.const(0.0),) * 3, tape.const(1.0),
                 (tape.const(0.0),) * 3, identity, SPHERICAL)
    q, w = tape.leaves(1, 4), tape.leaves(2, 3)
    rate = SPHERICAL.derivative(tape, q, w)
    rotation, _ = joint_of(frame).placement(tape, frame, q)
    moved = [sum((d * r for d, r in zip(row, rate)), tape.const(0.0))
             for row in tape.derive([e for line in rotation for e in line], q)]
    for _ in range(STATES):
        qs, ws = _unit(rng), rng.normal(size=3)
        numbers = np.array(tape.evaluate([*rate, *moved], ([0.0], qs, ws)))
        product = pin.Quaternion(qs[3], *qs[:3]) * pin.Quaternion(0.0, *ws)
        np.testing.assert_allclose(numbers[:4], 0.5 * product.coeffs(), rtol=0, atol=1e-15)  # one product: exact
        assert abs(qs @ numbers[:4]) < 1e-15
        matrix = pin.Quaternion(qs[3], *qs[:3]).toRotationMatrix()
        np.testing.assert_allclose(numbers[4:].reshape(3, 3), matrix @ pin.skew(ws), rtol=0, atol=1e-14)


def test_the_chart_is_the_stored_placement_at_zero_and_pinocchios_integrate() -> None:
    """c (+) d = Pinocchio's ``integrate`` of a spherical joint, d' = Jr(d)^-1 w (Jexp3, Pinocchio's right Jacobian,
    maps it back to w), the chart's placement at d = 0 is the stored one (the same numbers) and its derivative along
    d there is R [e_i]x (the chart's tangent is the joint's motion subspace), at 20 random points with |d| above and
    below base_joints.SMALL_ANGLE (the Taylor branch)."""
    rng = np.random.default_rng(5)
    tape, bodies, _ = _pair(rng)
    body = bodies[1]
    single = pin.Model()
    single.addJoint(0, pin.JointModelSpherical(), pin.SE3.Identity(), "ball")
    centre, d, w = tape.leaves(1, 4), tape.leaves(2, 3), tape.leaves(3, 3)
    stored, _ = SPHERICAL.placement(tape, body, centre)
    charted, position = SPHERICAL.chart_placement(tape, body, centre, d)
    slopes = tape.derive([e for row in charted for e in row], d)
    outputs = [*SPHERICAL.recentred(tape, centre, d), *SPHERICAL.chart_rate(tape, d, w),
               *(e for row in stored for e in row), *(e for row in charted for e in row), *position,
               *(e for row in slopes for e in row)]
    fixed = np.array(tape.evaluate([e for row in body.rotation for e in row], ([0.0], [], [], []))).reshape(3, 3)
    for k in range(STATES):
        cs, ws = _unit(rng), rng.normal(size=3)
        ds = rng.normal(size=3) * (1e-3 if k % 2 else 1.0)
        numbers = np.array(tape.evaluate(outputs, ([0.0], cs, ds, ws)))
        _close(numbers[:4], pin.integrate(single, cs, ds))
        _close(pin.Jexp3(ds) @ numbers[4:7], ws)
        at_zero = np.array(tape.evaluate(outputs, ([0.0], cs, np.zeros(3), ws)))
        assert np.array_equal(at_zero[7:16], at_zero[16:25])
        turned = at_zero[7:16].reshape(3, 3)
        np.testing.assert_allclose(turned, fixed @ pin.Quaternion(cs[3], *cs[:3]).toRotationMatrix(), atol=1e-15)
        slope = at_zero[28:].reshape(3, 3, 3)  # [row, column, i]: d R / d d_i
        for i in range(3):
            _close(slope[:, :, i], turned @ pin.skew(np.eye(3)[i]))


def test_frames_and_a_moving_root_equal_pinocchio() -> None:
    """The bodies' world placements (world_frames) against Pinocchio's forward kinematics, and the tree hung from a
    free-flying root link: forward dynamics (the root's articulated inertia solved for its acceleration) against
    ``aba`` with a ``JointModelFreeFlyer`` at 20 random states (the root's velocity linear then angular, its frame)."""
    rng = np.random.default_rng(13)
    tape, bodies, fixed = _pair(rng)
    model = pin.Model()
    root = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root")
    mass, com, turn = 3.0, rng.normal(size=3) * 0.1, _rotation(rng)
    inertia = turn @ np.diag([0.2, 0.3, 0.4]) @ turn.T
    model.appendBodyToJoint(root, pin.Inertia(mass, com, inertia), pin.SE3.Identity())
    for joint, parent, placement, body_inertia in zip(list(fixed.joints)[1:], list(fixed.parents)[1:],
                                                      list(fixed.jointPlacements)[1:], list(fixed.inertias)[1:]):
        index = model.addJoint(parent + 1, joint, placement, f"b{parent}")  # joint i of ``fixed`` is joint i + 1 here
        model.appendBodyToJoint(index, body_inertia, pin.SE3.Identity())
    model.gravity = fixed.gravity
    data, fixed_data = model.createData(), fixed.createData()
    nq, nv = fixed.nq, fixed.nv
    q, v, tau = tape.leaves(1, nq), tape.leaves(2, nv), tape.leaves(3, nv)
    base_q, base_v = tape.leaves(4, 4), tape.leaves(5, 6)  # the root's orientation (x y z w) and velocity
    frames = [e for rotation, position in world_frames(tape, bodies, q) for e in (*(x for r in rotation for x in r),
                                                                                 *position)]
    gravity = tmatvec(quaternion_matrix(base_q), [tape.const(g) for g in GRAVITY])
    const = tape.const
    root_body = (const(mass), tuple(map(const, com)), tuple(tuple(map(const, row)) for row in inertia))
    accelerations, base = articulated_accelerations(tape, bodies, q, v, tau, [const(0.0)] * nv, gravity, root_body,
                                                    (base_v[:3], base_v[3:]))
    assert base is not None
    outputs = [*frames, *base, *accelerations]
    for _ in range(STATES):
        qs, vs, taus = _state(fixed, rng), rng.normal(size=nv), rng.normal(size=nv)
        orientation, twist, position = _unit(rng), rng.normal(size=6), rng.normal(size=3)
        numbers = np.array(tape.evaluate(outputs, ([0.0], qs, vs, taus, orientation, twist)))
        pin.forwardKinematics(fixed, fixed_data, qs)
        placed = numbers[: 12 * len(bodies)].reshape(len(bodies), 12)
        for k, body_frame in enumerate(list(fixed_data.oMi)[1:]):
            _close(placed[k], np.concatenate([body_frame.rotation.ravel(), body_frame.translation]))
        whole = pin.aba(model, data, np.concatenate([position, orientation, qs]), np.concatenate([twist, vs]),
                        np.concatenate([np.zeros(6), taus]))
        _close(numbers[12 * len(bodies):], whole)


def test_the_programs_of_one_coordinate_per_body_refuse_a_ball_joint() -> None:
    """ManipulatorProgram, FloatingProgram, KinematicsProgram and the regressor still take one coordinate per body:
    a ball joint is refused by name, not computed wrong."""
    from robodyn.base.errors import InputError
    from robodyn.rigid.base_joints import FreeFlyer
    from robodyn.rigid.dynamics import ManipulatorProgram
    from robodyn.rigid.floating import FloatingProgram, RootBody
    from robodyn.rigid.kinematics import KinematicsProgram
    from robodyn.rigid.regressor import inertial_regressor

    tape, bodies, _ = _pair(np.random.default_rng(1))
    zeros = [tape.const(0.0)] * 16
    with pytest.raises(InputError, match="body 1 has a spherical joint: ManipulatorProgram"):
        ManipulatorProgram(tape, bodies, [], zeros, [], zeros, zeros[:3], [], [])
    root = RootBody(zeros[0], tuple(zeros[:3]), (tuple(zeros[:3]),) * 3)
    with pytest.raises(InputError, match="body 1 has a spherical joint: FloatingProgram"):
        FloatingProgram(tape, FreeFlyer(), root, bodies, [], ([], []), zeros[:6], zeros, zeros, zeros, zeros[:3], [],
                        [])
    with pytest.raises(InputError, match="body 1 has a spherical joint: KinematicsProgram"):
        KinematicsProgram(tape, bodies, [], zeros)
    with pytest.raises(InputError, match="body 1 has a spherical joint: inertial_regressor"):
        inertial_regressor(tape, bodies, zeros, zeros, zeros, zeros[:3])
