"""Tests for robodyn.model.kinds.lagrange: equations of motion derived from energies, against textbook forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn
from robodyn import InputError, LagrangianSystem
from robodyn.files.catalog import catalog_text
from robodyn.files.loading import read_model_text

# The catalog pendulum with I a free parameter (the catalog derives it, I = m l^2): m, g, l and I told apart.
PENDULUM = read_model_text(catalog_text("pendulum").replace("I: m*l**2", "I: 1.0"), "free_inertia.yaml")
DOUBLE = robodyn.load("double_pendulum")
CART_POLE = robodyn.load("cart_pole")

angle = st.floats(-2 * math.pi, 2 * math.pi, allow_nan=False)
rate = st.floats(-5.0, 5.0, allow_nan=False)
positive = st.floats(0.2, 3.0, allow_nan=False)


# --- single pendulum --------------------------------------------------------------------------------
def test_pendulum_structure():
    assert isinstance(PENDULUM, LagrangianSystem)
    assert PENDULUM.states == ("theta", "theta_dot")
    assert PENDULUM.order == 2
    np.testing.assert_array_equal(PENDULUM.mass_matrix([0.3]), [[1.0]])
    np.testing.assert_array_equal(PENDULUM.mass_matrix([0.3], {"I": 2.5}), [[2.5]])
    assert str(PENDULUM.mass_expr) == "Matrix([[I]])"


def test_catalog_pendulum_inertia_follows_m_and_l():
    catalog = robodyn.load("pendulum")
    assert tuple(catalog.parameters) == ("m", "g", "l") and dict(catalog.derived_parameters) == {"I": "l**2*m"}
    np.testing.assert_allclose(catalog.mass_matrix([0.3], {"m": 2.0, "l": 0.5}), [[0.5]], rtol=1e-15)


def test_pendulum_f_at_random_points():
    rng = np.random.default_rng(2024)
    for _ in range(20):
        theta, theta_dot, tau = rng.uniform(-4, 4, 3)
        m, g, length, inertia = rng.uniform(0.5, 2.0, 4)
        params = {"m": m, "g": g, "l": length, "I": inertia}
        # I theta'' = tau - m g l sin(theta); a 1x1 Cholesky solve adds a few ulp.
        expected = [theta_dot, (tau - m * g * length * math.sin(theta)) / inertia]
        np.testing.assert_allclose(PENDULUM.f(0.0, [theta, theta_dot], [tau], params), expected,
                                   rtol=1e-13, atol=1e-13)


def test_pendulum_energy_closed_form():
    T, V = PENDULUM.energy({"theta": 0.4, "theta_dot": 2.0}, {"m": 2.0})
    assert T == pytest.approx(1.0 * 2.0**2 / 2, rel=1e-15)
    assert V == pytest.approx(-2.0 * 9.81 * 1.0 * math.cos(0.4), rel=1e-15)


# --- double pendulum (Spong, Hutchinson & Vidyasagar, Robot Modeling and Control, sec. 6.4) ---------
def double_mass(theta2, m1, m2, l1, l2):
    c2 = math.cos(theta2)
    m11 = (m1 + m2) * l1**2 + m2 * l2**2 + 2 * m2 * l1 * l2 * c2
    m12 = m2 * l2**2 + m2 * l1 * l2 * c2
    return np.array([[m11, m12], [m12, m2 * l2**2]])


def double_forward(x, tau, m1, m2, l1, l2, g):
    """Independent forward dynamics: M q'' = tau - c - g_vec, solved with numpy."""
    t1, t2, w1, w2 = x
    s2 = math.sin(t2)
    coriolis = np.array([-m2 * l1 * l2 * s2 * (2 * w1 * w2 + w2**2), m2 * l1 * l2 * s2 * w1**2])
    gravity = np.array([(m1 + m2) * g * l1 * math.sin(t1) + m2 * g * l2 * math.sin(t1 + t2),
                        m2 * g * l2 * math.sin(t1 + t2)])
    accel = np.linalg.solve(double_mass(t2, m1, m2, l1, l2), np.asarray(tau) - coriolis - gravity)
    return np.array([w1, w2, *accel])


@settings(max_examples=40, deadline=None)
@given(theta1=angle, theta2=angle, m1=positive, m2=positive, l1=positive, l2=positive)
def test_double_pendulum_mass_matrix_is_the_textbook_one(theta1, theta2, m1, m2, l1, l2):
    params = {"m1": m1, "m2": m2, "l1": l1, "l2": l2}
    # Same closed form evaluated in a different association: a few ulp of the largest entry.
    np.testing.assert_allclose(DOUBLE.mass_matrix([theta1, theta2], params), double_mass(theta2, m1, m2, l1, l2),
                               rtol=1e-13, atol=1e-13 * (m1 + m2) * (l1 + l2) ** 2)


@settings(max_examples=40, deadline=None)
@given(theta1=angle, theta2=angle, w1=rate, w2=rate, tau1=rate, tau2=rate,
       m1=positive, m2=positive, l1=positive, l2=positive, g=st.floats(1.0, 20.0))
def test_double_pendulum_f_agrees_with_hand_written_dynamics(theta1, theta2, w1, w2, tau1, tau2, m1, m2, l1, l2, g):
    x = np.array([theta1, theta2, w1, w2])
    params = {"m1": m1, "m2": m2, "l1": l1, "l2": l2, "g": g}
    got = DOUBLE.f(0.0, x, [tau1, tau2], params)
    expected = double_forward(x, [tau1, tau2], m1, m2, l1, l2, g)
    # Both solve the same 2x2 system (Cholesky vs LU) with right-hand sides summed in different orders.
    # With these parameter ranges cond(M) stays below ~1e3, so the difference is ~cond * eps * |rhs| /
    # |M| <~ 1e-13 relative to the largest entry; 1e-12 relative leaves a factor of ten.
    scale = np.max(np.abs(expected))
    assert np.max(np.abs(got - expected)) <= 1e-12 * scale


def test_double_pendulum_at_rest_hanging_down_is_an_equilibrium():
    np.testing.assert_array_equal(DOUBLE.f(0.0, np.zeros(4)), np.zeros(4))


def rk4(f, x, h, steps):
    states = [x]
    for _ in range(steps):
        k1 = f(x)
        k2 = f(x + h / 2 * k1)
        k3 = f(x + h / 2 * k2)
        k4 = f(x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        states.append(x)
    return states


def test_double_pendulum_conserves_energy():
    x0 = np.array([1.0, -0.5, 0.3, 0.8])
    states = rk4(lambda x: DOUBLE.f(0.0, x), x0, 1e-3, 1000)
    energies = np.array([sum(DOUBLE.energy(x)) for x in states])
    T0, V0 = DOUBLE.energy(x0)
    # The motion is not trivial: the kinetic energy changes by a lot along the way.
    kinetic = np.array([DOUBLE.energy(x)[0] for x in states[::100]])
    assert np.ptp(kinetic) > 1.0
    # RK4 with h = 1e-3 over 1 s: global error O(h^4) ~ 1e-12 times derivative bounds, far below 1e-8
    # relative to the energy scale |T| + |V|. A wrong sign or factor in any term drifts by O(1).
    drift = np.max(np.abs(energies - energies[0])) / (abs(T0) + abs(V0))
    assert drift < 1e-8


@settings(max_examples=25, deadline=None)
@given(theta1=angle, theta2=angle, w1=rate, w2=rate)
def test_double_pendulum_kinetic_energy_is_half_qdot_m_qdot(theta1, theta2, w1, w2):
    T, V = DOUBLE.energy([theta1, theta2, w1, w2])
    qd = np.array([w1, w2])
    assert T == pytest.approx(0.5 * qd @ double_mass(theta2, 1.0, 1.0, 1.0, 1.0) @ qd, rel=1e-12, abs=1e-12)
    assert V == pytest.approx(-2 * 9.81 * math.cos(theta1) - 9.81 * math.cos(theta1 + theta2), rel=1e-12, abs=1e-12)


# --- cart-pole --------------------------------------------------------------------------------------
def cart_pole_forward(x, F, mc, mp, L, g):
    """(mc+mp) x'' + mp L cos th th'' - mp L sin th th'^2 = F;  mp L cos th x'' + mp L^2 th'' - mp g L sin th = 0."""
    _, th, xd, thd = x
    c, s = math.cos(th), math.sin(th)
    M = np.array([[mc + mp, mp * L * c], [mp * L * c, mp * L**2]])
    rhs = np.array([F + mp * L * s * thd**2, mp * g * L * s])
    return np.array([xd, thd, *np.linalg.solve(M, rhs)])


def test_cart_pole_structure():
    assert CART_POLE.states == ("x", "theta", "x_dot", "theta_dot")
    assert CART_POLE.inputs == ("F",)


@settings(max_examples=40, deadline=None)
@given(pos=rate, theta=angle, xd=rate, thd=rate, F=rate,
       mc=positive, mp=positive, length=positive, g=st.floats(1.0, 20.0))
def test_cart_pole_f_agrees_with_textbook_equations(pos, theta, xd, thd, F, mc, mp, length, g):
    x = np.array([pos, theta, xd, thd])
    params = {"m_cart": mc, "m_pole": mp, "l": length, "g": g}
    got = CART_POLE.f(0.0, x, [F], params)
    expected = cart_pole_forward(x, F, mc, mp, length, g)
    # Same 2x2 solve argument as for the double pendulum; det(M) = mp l^2 (mc + mp sin^2) keeps
    # cond(M) below ~1e3 for these ranges.
    assert np.max(np.abs(got - expected)) <= 1e-12 * np.max(np.abs(expected))


def test_cart_pole_upright_is_an_unstable_equilibrium():
    np.testing.assert_array_equal(CART_POLE.f(0.0, np.zeros(4)), np.zeros(4))
    tilted = CART_POLE.f(0.0, [0.0, 0.01, 0.0, 0.0])
    assert tilted[3] > 0  # the pole falls further from upright


# --- mass matrices are SPD --------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(q1=angle, q2=angle, a=positive, b=positive, c=positive, d=positive)
def test_mass_matrices_are_symmetric_positive_definite(q1, q2, a, b, c, d):
    for model, q, params in (
        (DOUBLE, [q1, q2], {"m1": a, "m2": b, "l1": c, "l2": d}),
        (CART_POLE, [q1, q2], {"m_cart": a, "m_pole": b, "l": c}),
    ):
        M = model.mass_matrix(q, params)
        assert M.shape == (2, 2)
        assert M[0, 1] == M[1, 0]
        assert np.all(np.linalg.eigvalsh(M) > 0)


# --- validation -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"kinetic": "q_dot**4/4"}, r"kinetic energy is not quadratic in the velocities.*depends on q_dot"),
        ({"kinetic": "q_dot**3"}, r"not quadratic in the velocities"),
        ({"kinetic": "m*q_dot**2*r_dot**2"}, r"not quadratic.*q_dot, r_dot"),
        ({"kinetic": "m*q**2"}, r"kinetic energy does not depend on the velocities"),
        ({"kinetic": "m*q_dot**2/2", "forces": {"z": "u"}}, r"forces given for \['z'\], which are not coordinates"),
        ({"kinetic": "m*q_dot**2/2", "potential": "q_dot**2"}, r"potential.*'q_dot'"),
        ({"kinetic": "m*q_dot**2/2 + u"}, r"kinetic.*'u'"),
    ],
)
def test_invalid_energies_raise(kwargs, match):
    with pytest.raises(InputError, match=match):
        LagrangianSystem(["q", "r"], ["u"], parameters={"m": 1.0}, **kwargs)


def test_coordinates_left_out_of_forces_get_zero_force():
    model = LagrangianSystem(["q", "r"], ["u"], "m*(q_dot**2 + r_dot**2)/2", forces={"q": "u"},
                             parameters={"m": 2.0})
    # M = 2 I is solved by Cholesky (sqrt(2) twice): one ulp of rounding is possible.
    np.testing.assert_allclose(model.f(0.0, [0.0, 0.0, 0.0, 0.0], [3.0]), [0.0, 0.0, 1.5, 0.0], rtol=1e-15, atol=0)


def test_time_dependent_force():
    model = LagrangianSystem(["q"], None, "q_dot**2/2", forces={"q": "sin(t)"})
    assert model.f(1.2, [0.0, 0.0])[1] == pytest.approx(math.sin(1.2), rel=1e-15)
