"""Serial chains (kind: chain): straight-line Newton–Euler against closed forms and a Lagrangian model.

Tolerances: entries of M, c and g are O(1..30) and computed by a few dozen floating-point operations
along different routes (recursive vs closed form), so they agree to a few ulp: 1e-12 absolute leaves
two orders of margin. Forward dynamics and Jacobians go through a Cholesky solve of a 2x2 M with a
condition number below 100, hence 1e-10.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn
from robodyn.base.errors import ModelFileError
from robodyn.files.loading import read_model_text
from robodyn.mechanisms.chain.system import ChainSystem, Joint, Link
from robodyn.model.kinds.lagrange import LagrangianSystem

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
PARAMS = {"m1": 1.0, "m2": 0.8, "l1": 1.0, "lc1": 0.5, "lc2": 0.4, "I1": 0.09, "I2": 0.05, "g": 9.81}


@pytest.fixture(scope="module")
def arm() -> ChainSystem:
    model = robodyn.load(EXAMPLES / "planar_arm.yaml")
    assert isinstance(model, ChainSystem)
    return model


def textbook(q: np.ndarray, qd: np.ndarray, p: dict[str, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """M(q), C(q, q') q' and g(q) of the two-link planar arm (Spong, Hutchinson, Vidyasagar, section 7.4)."""
    m1, m2, l1, lc1, lc2, I1, I2, g = (p[k] for k in ("m1", "m2", "l1", "lc1", "lc2", "I1", "I2", "g"))
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    M11 = m1 * lc1**2 + I1 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2) + I2
    M12 = m2 * (lc2**2 + l1 * lc2 * c2) + I2
    M22 = m2 * lc2**2 + I2
    h = -m2 * l1 * lc2 * s2
    coriolis = np.array([h * (2 * qd[0] * qd[1] + qd[1] ** 2), -h * qd[0] ** 2])
    gravity = np.array([(m1 * lc1 + m2 * l1) * g * np.cos(q[0]) + m2 * lc2 * g * np.cos(q[0] + q[1]),
                        m2 * lc2 * g * np.cos(q[0] + q[1])])
    return np.array([[M11, M12], [M12, M22]]), coriolis, gravity


def lagrangian_arm() -> LagrangianSystem:
    kinetic = ("((m1*lc1**2 + I1 + m2*(l1**2 + lc2**2 + 2*l1*lc2*cos(q2)) + I2)*q1_dot**2"
               " + 2*(m2*(lc2**2 + l1*lc2*cos(q2)) + I2)*q1_dot*q2_dot + (m2*lc2**2 + I2)*q2_dot**2)/2")
    potential = "m1*g*lc1*sin(q1) + m2*g*(l1*sin(q1) + lc2*sin(q1 + q2))"
    return LagrangianSystem(["q1", "q2"], ["q1_tau", "q2_tau"], kinetic, potential,
                            {"q1": "q1_tau", "q2": "q2_tau"}, parameters=PARAMS, name="arm")


def states(seed: int, count: int = 5) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-3, 3, 4) for _ in range(count)]


def test_arm_matches_textbook_closed_form(arm: ChainSystem) -> None:
    for x in states(1):
        q, qd = x[:2], x[2:]
        M, cqd, g = textbook(q, qd, PARAMS)
        np.testing.assert_allclose(arm.mass_matrix(q), M, rtol=0, atol=1e-12)
        np.testing.assert_allclose(arm.inverse_dynamics(q, [0, 0], [0, 0]), g, rtol=0, atol=1e-12)
        np.testing.assert_allclose(arm.inverse_dynamics(q, qd, [0, 0]), cqd + g, rtol=0, atol=1e-12)
        qdd = np.array([0.7, -1.3])
        np.testing.assert_allclose(arm.inverse_dynamics(q, qd, qdd), M @ qdd + cqd + g, rtol=0, atol=1e-12)
        np.testing.assert_allclose(arm.coriolis_matrix(q, qd) @ qd, cqd, rtol=0, atol=1e-12)


def test_arm_matches_lagrangian_model(arm: ChainSystem) -> None:
    reference = lagrangian_arm()
    u = np.array([0.4, -0.2])
    for x in states(2):
        np.testing.assert_allclose(arm.f(0.0, x, u), reference.f(0.0, x, u), rtol=0, atol=1e-10)
        for mine, theirs in zip(arm.jacobians(0.0, x, u), reference.jacobians(0.0, x, u)):
            np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-10)


def test_closed_form_expressions_agree_with_straight_line_code(arm: ChainSystem) -> None:
    reference = lagrangian_arm()
    x = states(3, 1)[0]
    args = (0.0, x, np.zeros(2), arm.parameter_vector())
    np.testing.assert_allclose(arm.lambdify(arm.mass_expr)(*args), arm.mass_matrix(x[:2]), atol=1e-12)
    reference_args = (0.0, x, np.zeros(2), reference.parameter_vector())  # the file also has l2 (its tip frame)
    np.testing.assert_allclose(arm.lambdify(arm.rhs_expr)(*args),
                               reference.lambdify(reference.rhs_expr)(*reference_args), atol=1e-12)


DH_ARM = """\
name: planar_arm_dh
kind: chain
parameters: {m1: 1.0, m2: 0.8, l1: 1.0, l2: 0.9, lc1: 0.5, lc2: 0.4, I1: 0.09, I2: 0.05, g: 9.81}
gravity: [0, -g, 0]
joints:
  - {name: q1, parent: base, child: link1, dh: {a: l1, alpha: 0, d: 0, theta: 0}}
  - {name: q2, parent: link1, child: link2, dh: {a: l2, alpha: 0, d: 0, theta: 0}}
links:
  - {name: base}
  - {name: link1, mass: m1, com: [lc1 - l1, 0, 0], ixx: I1, iyy: I1, izz: I1}
  - {name: link2, mass: m2, com: [lc2 - l2, 0, 0], ixx: I2, iyy: I2, izz: I2}
"""


def test_denavit_hartenberg_equals_xyz_rpy(arm: ChainSystem) -> None:
    dh = read_model_text(DH_ARM)
    assert isinstance(dh, ChainSystem)
    u = np.array([0.3, 0.1])
    for x in states(4):
        np.testing.assert_allclose(dh.mass_matrix(x[:2]), arm.mass_matrix(x[:2]), rtol=0, atol=1e-12)
        np.testing.assert_allclose(dh.f(0.0, x, u), arm.f(0.0, x, u), rtol=0, atol=1e-10)


SPATIAL = """\
name: spatial3
kind: chain
parameters: {m: 1.2, l: 0.7}
joints:
  - {name: a, parent: base, child: l1, axis: [0, 0, 1]}
  - {name: b, parent: l1, child: l2, axis: [0, 1, 0], xyz: [0, 0, l], rpy: [0.1, 0, 0]}
  - {name: c, parent: l2, child: l3, axis: [1, 1, 0], xyz: [l, 0, 0], rpy: [0, 0.2, -0.3]}
links:
  - {name: base}
  - {name: l1, mass: m, com: [0, 0, l/2], inertia: [[0.05, 0, 0], [0, 0.05, 0], [0, 0, 0.01]]}
  - {name: l2, mass: m, com: [l/2, 0.05, 0], inertia: [[0.01, 0.002, 0], [0.002, 0.05, 0], [0, 0, 0.05]]}
  - {name: l3, mass: 0.5, com: [0.3, 0, 0.1], inertia: {ixx: 0.01, iyy: 0.02, izz: 0.02, ixz: 0.001}}
"""


@pytest.fixture(scope="module")
def spatial() -> ChainSystem:
    model = read_model_text(SPATIAL)
    assert isinstance(model, ChainSystem)
    return model


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-np.pi, np.pi), min_size=6, max_size=6), st.floats(0.2, 3.0), st.floats(0.2, 2.0))
def test_mass_matrix_spd_and_skew_symmetry(spatial: ChainSystem, values: list[float], m: float,
                                           length: float) -> None:
    q, qd = np.array(values[:3]), np.array(values[3:])
    params = {"m": m, "l": length}
    M = spatial.mass_matrix(q, params)
    np.testing.assert_allclose(M, M.T, rtol=0, atol=1e-13)
    assert np.linalg.eigvalsh(M).min() > 0
    dM = spatial.mass_derivative(q, params)
    skew = np.einsum("ijk,k->ij", dM, qd) - 2 * spatial.coriolis_matrix(q, qd, params)
    np.testing.assert_allclose(skew + skew.T, 0.0, rtol=0, atol=1e-12)


def test_mass_derivative_against_central_differences(spatial: ChainSystem) -> None:
    q = np.array([0.3, -0.8, 1.1])
    h = 1e-6  # truncation error ~h^2 * |M'''| ~ 1e-12; rounding ~1e-16/h = 1e-10
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        central = (spatial.mass_matrix(q + e) - spatial.mass_matrix(q - e)) / (2 * h)
        np.testing.assert_allclose(spatial.mass_derivative(q)[:, :, k], central, rtol=0, atol=1e-8)


def test_jacobians_against_central_differences(spatial: ChainSystem) -> None:
    x, u = np.array([0.3, -0.8, 1.1, 0.5, -0.2, 0.9]), np.array([0.1, -0.3, 0.2])
    A, B = spatial.jacobians(0.0, x, u)
    h = 1e-6
    for k in range(6):
        e = np.zeros(6)
        e[k] = h
        central = (spatial.f(0.0, x + e, u) - spatial.f(0.0, x - e, u)) / (2 * h)
        np.testing.assert_allclose(A[:, k], central, rtol=0, atol=1e-7)
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        central = (spatial.f(0.0, x, u + e) - spatial.f(0.0, x, u - e)) / (2 * h)
        np.testing.assert_allclose(B[:, k], central, rtol=0, atol=1e-7)


def test_energy_is_conserved_without_friction_or_inputs(spatial: ChainSystem) -> None:
    x0 = np.array([0.2, 0.9, -0.4, 1.0, -0.5, 2.0])
    run = robodyn.simulate(spatial, (0.0, 10.0), x0, method="dop853", rtol=1e-12, atol=1e-12,
                           t_eval=np.linspace(0, 10, 21))
    energies = np.array([sum(spatial.energy(x)) for x in run.x])
    drift = np.max(np.abs(energies - energies[0])) / abs(energies[0])
    assert drift <= 1e-9


def test_potential_energy_from_kinematics(arm: ChainSystem) -> None:
    q = np.array([0.4, -1.2])
    coms = arm.com_positions(q)
    tip = [np.cos(q[0]) + 0.4 * np.cos(q.sum()), np.sin(q[0]) + 0.4 * np.sin(q.sum())]
    np.testing.assert_allclose(coms[1, :2], tip, atol=1e-15)
    _, potential = arm.energy(np.r_[q, 0, 0])
    expected = 9.81 * (1.0 * 0.5 * np.sin(q[0]) + 0.8 * (np.sin(q[0]) + 0.4 * np.sin(q.sum())))
    assert potential == pytest.approx(expected, abs=1e-12)


def test_friction_stiffness_and_rotor_inertia_add_their_terms(arm: ChainSystem) -> None:
    extra = {"damping": 0.3, "friction": 0.7, "stiffness": 4.0, "rest": 0.25, "rotor_inertia": 0.002,
             "gear_ratio": 50.0}
    joints = [Joint("q1", "base", "link1"), Joint("q2", "link1", "link2", xyz=("l1", 0, 0), **extra)]
    links = [Link("base"), Link("link1", "m1", ("lc1", 0, 0), {"ixx": "I1", "iyy": "I1", "izz": "I1"}),
             Link("link2", "m2", ("lc2", 0, 0), {"ixx": "I2", "iyy": "I2", "izz": "I2"})]
    model = ChainSystem(joints, links, gravity=(0, "-g", 0), parameters=PARAMS, friction_smoothing=0.01)
    q, qd, qdd = np.array([0.3, -0.6]), np.array([0.8, 0.004]), np.array([-0.5, 1.5])
    difference = model.inverse_dynamics(q, qd, qdd) - arm.inverse_dynamics(q, qd, qdd)
    expected = (0.3 * qd[1] + 0.7 * np.tanh(qd[1] / 0.01) + 4.0 * (q[1] - 0.25) + 50.0**2 * 0.002 * qdd[1])
    np.testing.assert_allclose(difference, [0.0, expected], rtol=0, atol=1e-12)
    mass_difference = model.mass_matrix(q) - arm.mass_matrix(q)
    np.testing.assert_allclose(mass_difference, [[0, 0], [0, 50.0**2 * 0.002]], rtol=0, atol=1e-12)
    A = model.jacobians(0.0, np.r_[q, qd])[0]
    assert np.all(np.isfinite(A))


def test_prismatic_joint_lifts_against_gravity() -> None:
    model = ChainSystem([Joint("z", "base", "slider", type="prismatic", axis=(0, 0, 2))],
                        [Link("base"), Link("slider", 2.0, (0.1, 0.2, 0.0), {"ixx": 0.1, "iyy": 0.1, "izz": 0.1})])
    assert model.inverse_dynamics([0.5], [1.0], [3.0]) == pytest.approx([2.0 * (3.0 + 9.81)], abs=1e-12)


def replace(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new)


@pytest.mark.parametrize(("old", "new", "message"), [
    ("{name: link1, mass: m1", "{name: link1, mass: -1", "link 'link1' has negative mass"),
    ("ixx: I2, iyy: I2, izz: I2", "ixx: 1, iyy: 1, izz: -1", "link 'link2': inertia"),
    ("axis: [0, 0, 1], xyz: [l1", "axis: [0, 0, 0], xyz: [l1", "joint 'q2': axis"),
    ("parent: link1", "parent: link9", "joint 'q2': unknown parent link 'link9'"),
    ("parent: base, child: link1", "parent: link2, child: link1", "is its own ancestor"),
    ("{name: q2,", "{name: q1,", "name 'q1' is used twice"),
    ("- {name: link2,", "- {name: link1,", "duplicate link name 'link1'"),
])
def test_bad_chains_are_named(old: str, new: str, message: str) -> None:
    text = replace((EXAMPLES / "planar_arm.yaml").read_text(), old, new)
    with pytest.raises(ModelFileError, match=r"^planar_arm\.yaml:\d+: ") as info:
        read_model_text(text, "planar_arm.yaml")
    assert message in str(info.value)
