"""The motion/force algebra of robodyn.rigid.spatial against closed forms (Featherstone, Rigid Body Dynamics
Algorithms, 2008, chapter 2): 3-vector products, placements composed and inverted, the Plücker transforms of
motion and force vectors, spatial cross products and their duality, spatial inertias."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from robodyn.rigid import spatial
from robodyn.rigid.tape import Tape, Value

RNG_SEEDS = range(5)


class Recorder:
    """Random numbers as tape leaves, and the tape's values of what the algebra recorded on them."""

    def __init__(self) -> None:
        self.tape = Tape()
        self.numbers: list[float] = []

    def vector(self, values: Sequence[float]) -> list[Value]:
        start = len(self.numbers)
        self.numbers.extend(float(v) for v in values)
        return [self.tape.leaf(0, start + i) for i in range(len(values))]

    def matrix(self, values: np.ndarray) -> list[list[Value]]:
        return [self.vector(row) for row in values]

    def value(self, recorded: Sequence[Value] | Sequence[Sequence[Value]]) -> np.ndarray:
        flat = np.asarray(recorded, dtype=object)
        numbers = self.tape.evaluate(list(flat.ravel()), [self.numbers])
        return np.array(numbers, dtype=float).reshape(flat.shape)


def _rotation(rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q * np.linalg.det(q)


def _skew(v: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _plucker(rotation: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Featherstone's X from parent to child coordinates, the child placed at (rotation, position): rot(E) xlt(r),
    E = rotation^T, r = position (equation 2.28)."""
    E = rotation.T
    return np.block([[E, np.zeros((3, 3))], [-E @ _skew(position), E]])


def _crm(v: np.ndarray) -> np.ndarray:
    """Featherstone's v x (equation 2.31)."""
    return np.block([[_skew(v[:3]), np.zeros((3, 3))], [_skew(v[3:]), _skew(v[:3])]])


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_three_vector_algebra_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    rec = Recorder()
    a, b, c = rng.normal(size=(3, 3))
    m, n = rng.normal(size=(2, 3, 3))
    s = float(rng.normal())
    va, vb, vc, mm, mn = rec.vector(a), rec.vector(b), rec.vector(c), rec.matrix(m), rec.matrix(n)
    vs = rec.vector([s])[0]
    np.testing.assert_allclose(rec.value(spatial.cross(va, vb)), np.cross(a, b), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(rec.value(spatial.matvec(mm, va)), m @ a, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(rec.value(spatial.tmatvec(mm, va)), m.T @ a, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(rec.value(spatial.matmul(mm, mn)), m @ n, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(rec.value(spatial.add(va, vb, vc)), a + b + c, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(rec.value(spatial.scale(vs, va)), s * a, rtol=1e-14, atol=1e-14)


def test_cross_product_of_the_axes():
    rec = Recorder()
    x, y, z = (rec.vector(e) for e in np.eye(3))
    np.testing.assert_array_equal(rec.value(spatial.cross(x, y)), [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(rec.value(spatial.cross(y, z)), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(rec.value(spatial.cross(z, x)), [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(rec.value(spatial.cross(y, x)), [0.0, 0.0, -1.0])


def test_add_keeps_the_order_of_its_terms_on_the_tape():
    """(a + b) + c, in that order: the generated code's operations are fixed."""
    tape = Tape()
    a, b, c = ([tape.leaf(k, i) for i in range(3)] for k in range(3))
    total = spatial.add(a, b, c)
    op, first, second = tape.nodes[total[0].index]  # a commutative node keeps its operands sorted
    assert op == "add" and c[0].index in (first, second)
    inner = second if first == c[0].index else first
    assert tape.nodes[inner] == ("add", a[0].index, b[0].index)  # a + b first
    assert len(tape) == 9 + 6  # nine leaves, then three a + b and three (a + b) + c


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_placements_compose_and_invert(seed):
    rng = np.random.default_rng(seed)
    rec = Recorder()
    r1, r2 = _rotation(rng), _rotation(rng)
    p1, p2 = rng.normal(size=(2, 3))
    outer, inner = (rec.matrix(r1), rec.vector(p1)), (rec.matrix(r2), rec.vector(p2))
    rotation, position = spatial.compose(outer, inner)
    np.testing.assert_allclose(rec.value(rotation), r1 @ r2, atol=1e-14)
    np.testing.assert_allclose(rec.value(position), p1 + r1 @ p2, atol=1e-14)
    back_rotation, back_position = spatial.invert(outer)
    np.testing.assert_allclose(rec.value(back_rotation), r1.T, atol=0)
    np.testing.assert_allclose(rec.value(back_position), -r1.T @ p1, atol=1e-14)
    # a placement composed with its inverse is the identity, both ways
    for first, second in ((outer, spatial.invert(outer)), (spatial.invert(outer), outer)):
        identity_rotation, zero = spatial.compose(first, second)
        np.testing.assert_allclose(rec.value(identity_rotation), np.eye(3), atol=1e-14)
        np.testing.assert_allclose(rec.value(zero), np.zeros(3), atol=1e-14)
    # the Plücker transforms follow: X of the composition is X_inner X_outer (parent to grandchild)
    X = _plucker(rec.value(rotation), rec.value(position))
    np.testing.assert_allclose(X, _plucker(r2, p2) @ _plucker(r1, p1), atol=1e-13)
    np.testing.assert_allclose(_plucker(rec.value(back_rotation), rec.value(back_position)),
                               np.linalg.inv(_plucker(r1, p1)), atol=1e-13)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_motion_and_force_transforms_are_pluckers(seed):
    rng = np.random.default_rng(seed)
    rec = Recorder()
    r, p = _rotation(rng), rng.normal(size=3)
    m, f = rng.normal(size=(2, 6))
    rotation, position = rec.matrix(r), rec.vector(p)
    X = _plucker(r, p)
    np.testing.assert_allclose(rec.value(spatial.motion_to_child(rotation, position, rec.vector(m))), X @ m,
                               atol=1e-13)
    np.testing.assert_allclose(rec.value(spatial.force_to_parent(rotation, position, rec.vector(f))), X.T @ f,
                               atol=1e-13)
    # power is invariant: f_child . (X m) == (X^T f_child) . m
    moved = rec.value(spatial.motion_to_child(rotation, position, rec.vector(m)))
    back = rec.value(spatial.force_to_parent(rotation, position, rec.vector(f)))
    assert f @ moved == pytest.approx(back @ m, rel=1e-12, abs=1e-12)


def test_a_pure_translation_moves_the_moment_only():
    """A force f at the child's origin, the child at p: the parent sees the moment p x f (closed form)."""
    rec = Recorder()
    rotation = rec.matrix(np.eye(3))
    position = rec.vector([1.0, 0.0, 0.0])
    force = rec.vector([0.0, 0.0, 0.0, 0.0, 2.0, 0.0])  # (n, f): 2 N along y
    np.testing.assert_array_equal(rec.value(spatial.force_to_parent(rotation, position, force)),
                                  [0.0, 0.0, 2.0, 0.0, 2.0, 0.0])
    # a turn about z at 1 rad/s in the parent: the child's origin at (1, 0, 0) moves at 1 m/s along y
    turn = rec.vector([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(rec.value(spatial.motion_to_child(rotation, position, turn)),
                                  [0.0, 0.0, 1.0, 0.0, 1.0, 0.0])


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_spatial_cross_products_and_their_duality(seed):
    rng = np.random.default_rng(seed)
    rec = Recorder()
    v, m, f = rng.normal(size=(3, 6))
    vv, vm, vf = rec.vector(v), rec.vector(m), rec.vector(f)
    motion = rec.value(spatial.motion_cross(vv, vm))
    force = rec.value(spatial.force_cross(vv, vf))
    np.testing.assert_allclose(motion, _crm(v) @ m, atol=1e-13)
    np.testing.assert_allclose(force, -_crm(v).T @ f, atol=1e-13)  # v x* = -(v x)^T (equation 2.32)
    assert force @ m == pytest.approx(-(f @ motion), rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(rec.value(spatial.motion_cross(vv, vv)), np.zeros(6), atol=1e-14)  # v x v = 0


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_spatial_inertia_closed_form_and_transform(seed):
    rng = np.random.default_rng(seed)
    rec = Recorder()
    mass = float(rng.uniform(0.5, 2.0))
    com = rng.normal(size=3)
    half = rng.normal(size=(3, 3))
    inertia_c = half @ half.T + np.eye(3)
    recorded_mass = rec.vector([mass])[0]
    inertia = rec.value(spatial.spatial_inertia(rec.tape, recorded_mass, rec.vector(com), rec.matrix(inertia_c)))
    C = _skew(com)
    expected = np.block([[inertia_c + mass * C @ C.T, mass * C], [mass * C.T, mass * np.eye(3)]])
    np.testing.assert_allclose(inertia, expected, atol=1e-13)
    # kinetic energy of a body turning about its centre of mass: 1/2 w . I_c w
    w = rng.normal(size=3)
    motion = np.concatenate([w, -np.cross(w, com)])  # the origin's velocity when the centre of mass is still
    recorded = rec.matrix(inertia)
    momentum = rec.value(spatial.inertia_times(recorded, rec.vector(motion)))
    assert 0.5 * motion @ momentum == pytest.approx(0.5 * w @ inertia_c @ w, rel=1e-12)
    r, p = _rotation(rng), rng.normal(size=3)
    moved = rec.value(spatial.inertia_to_parent(rec.tape, rec.matrix(r), rec.vector(p), recorded))
    X = _plucker(r, p)
    np.testing.assert_allclose(moved, X.T @ inertia @ X, atol=1e-12)
