"""Tests for robodyn.model.kinds.mechanical: MechanicalSystem, ScalarDamping and ManipulatorSystem."""

from __future__ import annotations

import math

import numpy as np
import pytest

import robodyn
from robodyn import (
    InputError,
    LagrangianSystem,
    ManipulatorSystem,
    MechanicalSystem,
    ScalarDamping,
    ShapeError,
    SingularMatrixError,
)
from robodyn.model.kinds.mechanical import CRITICAL_DAMPING_TOLERANCE

JOINT = robodyn.load("joint")


# --- the seed joint ---------------------------------------------------------------------------------
def test_seed_joint_names_and_form():
    assert isinstance(JOINT, MechanicalSystem)
    assert JOINT.states == ("q", "q_dot")
    assert JOINT.coordinates == ("q",)
    assert JOINT.inputs == ("u",)
    assert JOINT.order == 2
    assert dict(JOINT.parameters) == {"J": 0.01, "b": 0.1, "k": 1.0}


def test_seed_joint_damping_matches_closed_form_exactly():
    J, b, k = 0.01, 0.1, 1.0
    assert JOINT.omega_n == math.sqrt(k / J) == 10.0
    assert JOINT.zeta == b / (2.0 * math.sqrt(k * J)) == 0.5
    assert JOINT.regime == "underdamped"


def test_seed_joint_f_is_the_joint_equation():
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, qd, u = rng.normal(size=3)
        # Hand-written: q'' = (u - b q' - k q) / J. Cholesky of a 1x1 matrix is a square root and a
        # division: a few ulp of difference at most.
        np.testing.assert_allclose(JOINT.f(0.0, [q, qd], [u]), [qd, (u - 0.1 * qd - 1.0 * q) / 0.01], rtol=1e-13)


def test_direct_drive_has_no_restoring_force():
    model = robodyn.load("joint_direct_drive")
    info = model.damping_info()
    assert info.regime == "no restoring force"
    assert info.omega_n is None and info.zeta is None
    assert model.omega_n is None


def test_params_override_in_damping_info_and_numeric_matrices():
    info = JOINT.damping_info(params={"k": 4.0})
    assert info.omega_n == math.sqrt(4.0 / 0.01)
    assert info.zeta == 0.1 / (2.0 * math.sqrt(4.0 * 0.01))
    # b = 2 sqrt(kJ) = 0.2 is exactly critical in floating point too.
    assert JOINT.damping_info(params={"b": 0.2}).regime == "critically damped"
    assert JOINT.damping_info(params={"b": 0.3}).regime == "overdamped"
    M, B, K, F = JOINT.numeric_matrices({"J": 2.0, "k": 5.0})
    np.testing.assert_array_equal(np.concatenate([M, B, K, F], axis=1), [[2.0, 0.1, 5.0, 1.0]])
    assert JOINT.omega_n == 10.0  # the model's defaults are unchanged


def test_damping_info_needs_one_coordinate():
    with pytest.raises(InputError, match=r"defined for one coordinate, this model has 4"):
        robodyn.load("mbk", n=4).damping_info()


def test_joint_printing():
    assert JOINT.pretty().splitlines() == ["q' = q_dot", "J*q'' = -b*q_dot - k*q + u"]
    assert r"J\,\ddot{q} &= - b\,\dot{q} - k\,q + u" in JOINT.latex()  # factors apart by a thin space


# --- ScalarDamping ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("J", "b", "k", "regime"),
    [
        (1.0, 2.0, 1.0, "critically damped"),
        (4.0, 8.0, 4.0, "critically damped"),
        (1.0, 3.0, 1.0, "overdamped"),
        (1.0, 1.0, 1.0, "underdamped"),
        (1.0, 0.0, 1.0, "underdamped"),
        (1.0, 2.0 * (1.0 + 1e-9), 1.0, "overdamped"),
        (1.0, 2.0 * (1.0 - 1e-9), 1.0, "underdamped"),
        (1.0, 1.0, -1.0, "unstable"),
        (1.0, -1.0, 1.0, "unstable"),
        (1.0, 1.0, 0.0, "no restoring force"),
    ],
)
def test_regimes(J, b, k, regime):
    assert ScalarDamping.from_coefficients(J, b, k).regime == regime


def test_critical_tolerance_is_documented_value():
    assert CRITICAL_DAMPING_TOLERANCE == 1e-12
    # zeta = 1 +- 1e-9 is far outside the tolerance; 1 + 1e-13 is inside.
    assert ScalarDamping.from_coefficients(1.0, 2.0 * (1.0 + 1e-13), 1.0).regime == "critically damped"


def test_closed_form_values():
    info = ScalarDamping.from_coefficients(2.0, 3.0, 8.0)
    assert info.omega_n == math.sqrt(8.0 / 2.0) == 2.0
    assert info.zeta == 3.0 / (2.0 * math.sqrt(16.0)) == 0.375
    assert ScalarDamping.from_coefficients(1.0, 1.0, -1.0).omega_n is None
    assert ScalarDamping.from_coefficients(1.0, -1.0, 1.0).zeta == -0.5


@pytest.mark.parametrize("J", [0.0, -1.0, math.nan])
def test_non_positive_inertia_raises(J):
    with pytest.raises(InputError, match=r"inertia J must be positive"):
        ScalarDamping.from_coefficients(J, 1.0, 1.0)


# --- MechanicalSystem -> LinearSystem ---------------------------------------------------------------
def random_mechanical(seed: int = 7):
    rng = np.random.default_rng(seed)
    n, m = 3, 2
    G = rng.normal(size=(n, n))
    M = G @ G.T + 3.0 * np.eye(n)  # SPD with condition number of order 10
    H = rng.normal(size=(n, n))
    Bd = H @ H.T + 0.1 * np.eye(n)
    L = rng.normal(size=(n, n))
    K = L @ L.T + 0.5 * np.eye(n)
    F = rng.normal(size=(n, m))
    model = MechanicalSystem(["a", "b", "c"], ["u", "v"], M, Bd, K, F, name="random")
    return model, M, Bd, K, F


def test_to_linear_matches_the_inverse_mass_formula():
    model, M, Bd, K, F = random_mechanical()
    linear = model.to_linear()
    Minv = np.linalg.inv(M)
    n = 3
    A = np.block([[np.zeros((n, n)), np.eye(n)], [-Minv @ K, -Minv @ Bd]])
    B = np.vstack([np.zeros((n, 2)), Minv @ F])
    # Cholesky solve vs explicit inverse: both backward stable, the difference is ~cond(M) eps |entries|
    # (cond(M) ~ 10, entries O(1)), far below 1e-12.
    np.testing.assert_allclose(linear.A, A, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(linear.B, B, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(linear.C, np.eye(6))
    np.testing.assert_array_equal(linear.D, np.zeros((6, 2)))
    assert linear.states == ("a", "b", "c", "a_dot", "b_dot", "c_dot")
    assert linear.inputs == ("u", "v")
    # Float literals pass through sympy: equal to a few ulp (exact equality is the xfail test below).
    np.testing.assert_allclose(np.concatenate(model.numeric_matrices(), axis=1), np.hstack([M, Bd, K, F]),
                               rtol=1e-14, atol=0.0)


def test_numeric_matrices_return_the_given_floats_exactly():
    model, M, Bd, K, F = random_mechanical()
    np.testing.assert_array_equal(np.concatenate(model.numeric_matrices(), axis=1), np.hstack([M, Bd, K, F]))


def test_f_equals_to_linear_f_at_random_points():
    model, *_ = random_mechanical(11)
    linear = model.to_linear()
    rng = np.random.default_rng(3)
    for _ in range(10):
        x, u = rng.normal(size=6), rng.normal(size=2)
        # Both solve with the same Cholesky factor, in a different association: agreement to ~1e-14.
        np.testing.assert_allclose(model.f(0.0, x, u), linear.f(0.0, x, u), rtol=1e-11, atol=1e-12)


def test_to_linear_with_params_and_outputs():
    model = MechanicalSystem(["q"], ["u"], [["J"]], [["b"]], [["k"]], parameters={"J": 2.0, "b": 1.0, "k": 8.0},
                             outputs={"angle": "3*q", "rate": "q_dot + u"})
    linear = model.to_linear({"J": 4.0})
    np.testing.assert_array_equal(linear.A, [[0.0, 1.0], [-2.0, -0.25]])
    np.testing.assert_array_equal(linear.B, [[0.0], [0.25]])
    np.testing.assert_array_equal(linear.C, [[3.0, 0.0], [0.0, 1.0]])
    np.testing.assert_array_equal(linear.D, [[0.0], [1.0]])
    assert linear.outputs == ("angle", "rate")


def test_to_linear_rejects_nonlinear_outputs():
    model = MechanicalSystem(["q"], ["u"], [[1]], outputs={"energy": "q_dot**2"})
    with pytest.raises(InputError, match=r"outputs are nonlinear in the state"):
        model.to_linear()


@pytest.mark.parametrize("J", [0.0, -1.0])
def test_to_linear_with_a_non_positive_mass_override_raises_a_robodyn_error(J):
    with pytest.raises(robodyn.RobodynError, match=r"mass matrix"):
        JOINT.to_linear(params={"J": J})


def test_f_with_a_non_positive_mass_override_raises():
    with pytest.raises(SingularMatrixError, match=r"mass matrix M\(q\) is not positive definite at q=\{'q': 0.5\}"):
        JOINT.f(0.0, [0.5, 0.0], params={"J": 0.0})


# --- the mass-spring-damper chain -------------------------------------------------------------------
def chain(n: int) -> np.ndarray:
    T = 2.0 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    T[-1, -1] = 1.0
    return T


def test_mbk_matrices():
    model = robodyn.load("mbk", n=4)
    assert model.coordinates == ("x1", "x2", "x3", "x4")
    assert model.inputs == ("F1", "F2", "F3", "F4")
    m, k, b = 2.5, 3.0, 0.7
    M, B, K, F = model.numeric_matrices({"m": m, "k": k, "b": b})
    np.testing.assert_array_equal(M, m * np.eye(4))
    np.testing.assert_array_equal(K, k * chain(4))
    np.testing.assert_array_equal(B, b * chain(4))
    np.testing.assert_array_equal(F, np.eye(4))
    assert K[3, 3] == k and K[0, 0] == 2 * k and K[0, 1] == -k


def test_mbk_is_asymptotically_stable():
    values = robodyn.load("mbk", n=4).to_linear().eigenvalues
    assert values.shape == (8,)
    assert np.all(values.real < 0)


# --- validation -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"mass": [[1, 2], [2, 1]]}, InputError, r"mass matrix \[\[1.0, 2.0\], \[2.0, 1.0\]\] is not positive"),
        ({"mass": [["m", 0], [0, 1]], "parameters": {"m": -1.0}}, InputError, r"not positive definite"),
        ({"mass": [[1, 0.5], [0, 1]]}, InputError, r"is not symmetric"),
        ({"mass": [[1, 0], [0, 1]], "damping": [[1, 0]]}, ShapeError, r"damping must be 2x2"),
        ({"mass": [[1, 0, 0], [0, 1, 0]]}, ShapeError, r"mass must be 2x2"),
        ({"mass": [[1, 0], [0, "q"]]}, InputError, r"mass\[1\]\[1\]: unknown name .*'q'"),
    ],
)
def test_invalid_matrices_raise(kwargs, error, match):
    with pytest.raises(error, match=match):
        MechanicalSystem(["a", "b"], ["u", "v"], **kwargs)


def test_input_count_must_match_without_input_matrix():
    with pytest.raises(ShapeError, match=r"1 input\(s\) for 2 coordinate\(s\): give input_matrix"):
        MechanicalSystem(["a", "b"], ["u"], [[1, 0], [0, 1]])


def test_matrices_may_not_depend_on_the_state():
    with pytest.raises(InputError, match=r"stiffness\[0\]\[0\]: unknown name .*'q'"):
        MechanicalSystem(["q"], ["u"], [[1]], stiffness=[["q"]])


# --- ManipulatorSystem: singular mass matrices --------------------------------------------------------
def test_acceleration_raises_when_the_mass_matrix_is_singular():
    model = LagrangianSystem(["q"], ["u"], kinetic="m*q**2*q_dot**2/2", forces={"q": "u"}, parameters={"m": 1.0})
    x, u, p = np.array([0.0, 1.0]), np.array([1.0]), model.parameter_vector()
    with pytest.raises(SingularMatrixError, match=r"not positive definite at q=\{'q': 0.0\}"):
        model.acceleration(0.0, x, u, p)
    with pytest.raises(SingularMatrixError, match=r"M=\[\[0.0\]\]"):
        model.f(0.0, x, u)
    assert model.f(0.0, [2.0, 0.0], [1.0])[1] == pytest.approx(0.25, rel=1e-15)  # M = 4 away from q = 0


def test_acceleration_raises_when_the_mass_matrix_is_negative():
    model = LagrangianSystem(["q"], None, kinetic="m*cos(q)*q_dot**2/2", parameters={"m": 1.0})
    with pytest.raises(SingularMatrixError, match=r"q=\{'q': 3.14159"):
        model.f(0.0, [math.pi, 0.0])


def test_manipulator_with_a_singular_2x2_mass_matrix():
    model = ManipulatorSystem(["a", "b"], ["u"], [[1, "cos(b)"], ["cos(b)", 1]], ["u", 0], [0, 0])
    with pytest.raises(SingularMatrixError, match=r"q=\{'a': 0.25, 'b': 0.0\}"):
        model.f(0.0, [0.25, 0.0, 0.0, 0.0], [1.0])
    # Away from b = 0: [[1, c], [c, 1]] q'' = [u, 0]  ->  q'' = [1, -c] u / (1 - c^2).
    c = math.cos(1.0)
    np.testing.assert_allclose(model.f(0.0, [0.25, 1.0, 0.0, 0.0], [1.0])[2:], [1 / (1 - c**2), -c / (1 - c**2)],
                               rtol=1e-13)


def test_tiny_positive_mass_is_accepted_exactly_zero_mass_raises():
    """No pivot tolerance: M = m cos(q)^2 at the double nearest pi/2 is 3.7e-33 > 0, and q'' = 1/M is the
    correct answer for that q. A mass matrix that is exactly singular (sin(pi/2) == 1.0 in floating
    point, so 1 - sin(q)^2 == 0) raises and names q."""
    tiny = LagrangianSystem(["q"], ["u"], kinetic="m*cos(q)**2*q_dot**2/2", forces={"q": "u"},
                            parameters={"m": 1.0})
    qdd = tiny.f(0.0, [math.pi / 2, 0.0], [1.0])[1]
    assert qdd == pytest.approx(1.0 / math.cos(math.pi / 2) ** 2, rel=1e-12)
    exact_zero = LagrangianSystem(["q"], ["u"], kinetic="m*(1 - sin(q)**2)*q_dot**2/2", forces={"q": "u"},
                                  parameters={"m": 1.0})
    with pytest.raises(SingularMatrixError, match=r"q=\{'q': 1.5707"):
        exact_zero.f(0.0, [math.pi / 2, 0.0], [1.0])


def test_mass_matrix_accepts_arrays_and_mappings():
    model = robodyn.load("double_pendulum")
    from_array = model.mass_matrix([0.1, 0.7])
    from_mapping = model.mass_matrix({"theta2": 0.7})
    np.testing.assert_array_equal(from_array, from_mapping)
    assert from_array.shape == (2, 2)


def test_mass_matrix_checks_the_shape():
    with pytest.raises(ShapeError):
        robodyn.load("double_pendulum").mass_matrix([0.1, 0.2, 0.3])


def test_mass_matrix_rejects_non_finite_coordinates():
    with pytest.raises(InputError, match="finite"):
        robodyn.load("double_pendulum").mass_matrix([math.nan, 0.2])


def test_equation_terms_name_damping_and_stiffness():
    """M q'' + B q' + K q = F u: b q' is the damping term and k q the stiffness, not Coriolis and gravity."""
    terms = dict(JOINT.equation_terms())
    assert list(terms) == ["M", "B q' (damping)", "K q (stiffness)", "F u"]
    assert str(terms["B q' (damping)"]) == "Matrix([[b*q_dot]])" and str(terms["K q (stiffness)"]) == "Matrix([[k*q]])"
    pendulum = dict(robodyn.load("pendulum").equation_terms())  # Lagrangian: the manipulator names stay
    assert list(pendulum) == ["M(q)", "C(q, q') q'", "g(q)", "Q"]
