"""robodyn.mechanisms.chain.ball_program.FlatTreeProgram (a fixed-base tree with ball joints, flat q and v) against
Pinocchio: a branched tree whose bodies come breadth first while the model's joints (and Pinocchio's) come depth
first, so every output goes through the program's reordering: f (q' by the quaternion product, v' = aba with damping
and rotor inertias), M (crba plus the rotor inertias), Q - c and c (rnea), inverse dynamics and the centres of mass,
at random states; the functions it does not record are refused, ending with the message it is given."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from robodyn.base.errors import InputError
from robodyn.mechanisms.chain.ball_program import FlatTreeProgram
from robodyn.rigid.dynamics import Coulomb, JointTerms
from robodyn.rigid.joints import SPHERICAL
from robodyn.rigid.rnea import Body
from robodyn.rigid.tape import Tape

pin = pytest.importorskip("pinocchio")

# The model's joints, depth first (Pinocchio's order): (parent joint, kind). Bodies go breadth first: 0, 1, 3, 2.
JOINTS = [(-1, "revolute"), (0, "spherical"), (1, "revolute"), (0, "spherical")]
BREADTH_FIRST = [0, 1, 3, 2]
GRAVITY = np.array([0.0, 0.0, -9.81])
STATES = 20
# Relative to the largest entry: sums of O(depth) products of O(1) numbers and a solve with M (condition ~1e2):
# measured 3e-15; 1e-12 as tests/rigid/test_joints.py.
RELATIVE = 1e-12


def _close(ours: np.ndarray, theirs: np.ndarray) -> None:
    assert np.max(np.abs(ours - theirs)) <= RELATIVE * max(1.0, np.max(np.abs(theirs))), np.max(np.abs(ours - theirs))


def _rotation(rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q * np.linalg.det(q)


def _build(rng: np.random.Generator) -> tuple[FlatTreeProgram, Any, np.ndarray, np.ndarray, int]:
    """The program (bodies breadth first, damping and rotor inertia per velocity entry, one input per velocity entry)
    and the same tree in Pinocchio, with the damping and rotor inertias (``armature``) it adds."""
    tape = Tape()
    model = pin.Model()
    ids: list[int] = []
    bodies: dict[int, Body] = {}
    for k, (parent, kind) in enumerate(JOINTS):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        rotation, position = _rotation(rng), rng.normal(size=3) * 0.4
        mass, com = rng.uniform(0.5, 2.0), rng.normal(size=3) * 0.2
        sides = rng.uniform(0.1, 0.5, size=3) ** 2
        turn = _rotation(rng)
        inertia = turn @ np.diag(mass / 12.0 * (sides.sum() - sides)) @ turn.T
        joint = pin.JointModelSpherical() if kind == "spherical" else pin.JointModelRevoluteUnaligned(*axis)
        ids.append(model.addJoint(0 if parent < 0 else ids[parent], joint, pin.SE3(rotation, position), f"j{k}"))
        model.appendBodyToJoint(ids[-1], pin.Inertia(mass, com, inertia), pin.SE3.Identity())

        def const(values: Any) -> Any:
            return tuple(const(v) for v in values) if np.ndim(values) else tape.const(float(values))

        bodies[k] = Body(BREADTH_FIRST.index(parent) if parent >= 0 else -1, False, const(axis), const(rotation),
                         const(position), const(mass), const(com), const(inertia),
                         SPHERICAL if kind == "spherical" else None)
    model.gravity = pin.Motion(GRAVITY, np.zeros(3))
    nq, nv = model.nq, model.nv
    damping, rotor = rng.uniform(0.0, 0.5, nv), rng.uniform(0.0, 0.1, nv)
    model.armature = rotor
    zero = tape.const(0.0)
    terms = [JointTerms(tape.const(r), tape.const(b), Coulomb(zero, zero, 1e-3), zero, zero)
             for r, b in zip(rotor, damping)]
    x, u, a = tape.leaves(1, nq + nv), tape.leaves(2, nv), tape.leaves(4, nv)
    program = FlatTreeProgram(tape, [bodies[k] for k in BREADTH_FIRST], x, u, a, [tape.const(g) for g in GRAVITY],
                              terms, u, "say what to do", BREADTH_FIRST)
    return program, model, damping, rotor, nq


def _configuration(model: Any, rng: np.random.Generator) -> np.ndarray:
    q: list[float] = []
    for joint in list(model.joints)[1:]:
        if joint.nq == 4:
            unit = rng.normal(size=4)
            q += list(unit / np.linalg.norm(unit))
        else:
            q.append(rng.uniform(-np.pi, np.pi))
    return np.array(q)


def test_every_function_equals_pinocchio_in_the_models_order() -> None:
    rng = np.random.default_rng(3)
    program, model, damping, _, nq = _build(rng)
    data = model.createData()
    nv = model.nv
    names = ("rhs", "mass", "terms", "inverse", "com")
    outputs = [v for name in names for v in program.outputs(name)]
    sizes = [nq + nv, nv * nv, 2 * nv + nv * nv, nv, 3 * len(JOINTS)]
    for _ in range(STATES):
        q, v, u, acc = _configuration(model, rng), rng.normal(size=nv), rng.normal(size=nv), rng.normal(size=nv)
        numbers = np.array(program.tape.evaluate(outputs, ([0.0], [*q, *v], u, [], acc)))
        rhs, mass, terms, inverse, com = np.split(numbers, np.cumsum(sizes)[:-1])
        _close(rhs[nq:], pin.aba(model, data, q, v, u - damping * v))
        for joint in list(model.joints)[1:]:
            if joint.nq == 4:  # q' = 1/2 q (x) (w, 0), Eigen's product
                quaternion = pin.Quaternion(q[joint.idx_q + 3], *q[joint.idx_q: joint.idx_q + 3])
                w = pin.Quaternion(0.0, *v[joint.idx_v: joint.idx_v + 3])
                product = quaternion * w
                _close(rhs[joint.idx_q: joint.idx_q + 4], 0.5 * np.array([product.x, product.y, product.z, product.w]))
            else:
                assert rhs[joint.idx_q] == v[joint.idx_v]
        upper = pin.crba(model, data, q, pin.Convention.WORLD)  # with the armature on its diagonal
        _close(mass.reshape(nv, nv), np.triu(upper) + np.triu(upper, 1).T)
        bias = pin.rnea(model, data, q, v, np.zeros(nv)) + damping * v
        _close(terms[nv: 2 * nv], bias)
        _close(terms[:nv], u - bias)
        _close(terms[2 * nv:].reshape(nv, nv), np.eye(nv))  # d(Q - c)/du: Q = u
        _close(inverse, pin.rnea(model, data, q, v, acc) + damping * v)  # rnea adds the armature times acc
        pin.forwardKinematics(model, data, q)
        pin.centerOfMass(model, data, q, False)
        ours = com.reshape(-1, 3)
        for k, body in enumerate(BREADTH_FIRST):
            frame = data.oMi[body + 1]
            _close(ours[k], frame.act(model.inertias[body + 1].lever))


@pytest.mark.parametrize("name", ["jacobians", "solved_jacobians", "regressor", "mass_derivative",
                                  "parameter_jacobian"])
def test_the_other_functions_are_refused_with_the_given_message(name: str) -> None:
    program, *_ = _build(np.random.default_rng(0))
    with pytest.raises(InputError, match="ball joint yet: say what to do"):
        program.outputs(name)
    with pytest.raises(InputError, match="say what to do"):
        program.factor_pattern()
