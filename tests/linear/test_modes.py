"""Tests for robodyn.linear.modes: modes against closed forms, decompositions against their definitions,
the convolution integral against the exact (Van Loan) path and scipy's expm.

Tolerances. Eigenvalues of the 2x2 seed models come from LAPACK with errors of a few eps * ||A||
(||A|| ~ 100 for the joint, ~10 for the pendulum), so closed-form eigenvalues, omega_n and zeta are checked
to 1e-12 (absolute; relative for the joint's |λ| = 10). Reconstructions: V Λ V^-1 carries ~eps * cond(V) *
||A|| rounding (cond(V) ~ 10 for mbk4), Z T Z^H ~ n eps ||A||; 1e-10 and 1e-12 keep a factor >= 100.
The forced response integrates each output interval by Gauss-Kronrod to 1e-12 relative; over 100
intervals of a decaying system the errors add to < 1e-11 of |x|, so 1e-9 against the exact path (itself
exact to ~1e-13) is a safe bound. The free response involves no quadrature: V e^{Λ t} V^-1 x0 against
expm(A t) x0 differs by rounding (~eps * cond(V) * |x|): 1e-12.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import robodyn
from robodyn.base.errors import InputError, NumericalError, ShapeError, UnknownNameError
from robodyn.linear.modes import STABILITY, modal_decomposition, modes
from robodyn.linear.response import forced_response
from robodyn.model.kinds.linear import LinearSystem
from robodyn.signals import Ramp, Sine, Step

G = 9.81  # the catalog pendulum: m = 1, l = 1, I = 1, so the linearizations have omega = sqrt(g / l)
SQRT_G = 3.132091952673165
JOINT_PAIR = complex(-5.0, 8.660254037844386)  # J q'' + b q' + k q: -zeta w_n + i w_n sqrt(1 - zeta^2)
CONTRACT_ROW = {"eigenvalue", "omega_n", "zeta", "time_constant", "period", "shape"}


def joint() -> LinearSystem:
    return robodyn.load("joint").to_linear()


def pendulum(theta: float) -> LinearSystem:
    return robodyn.linearize(robodyn.load("pendulum"), {"theta": theta, "theta_dot": 0.0})


def three_state() -> LinearSystem:
    """A damped oscillator driving a first-order lag, with two inputs and an output mixing all states."""
    A = [[0.0, 1.0, 0.0], [-4.0, -0.8, 0.5], [1.0, 0.0, -3.0]]
    B = [[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]]
    C = [[1.0, 0.0, 1.0]]
    D = [[0.0, 0.5]]
    return LinearSystem(A, B, C, D, states=["p", "v", "w"], inputs=["f", "g"], outputs=["y"])


# --- modes against closed forms ----------------------------------------------------------------------------
def test_joint_has_one_underdamped_pair():
    result = modes(joint())
    assert len(result.rows) == 1
    row = result.rows[0]
    assert abs(row.eigenvalue - JOINT_PAIR) <= 1e-12 * 10
    # omega_n = sqrt(k / J) = 10, zeta = b / (2 sqrt(k J)) = 0.5 (J = 0.01, b = 0.1, k = 1).
    assert row.omega_n == pytest.approx(10.0, rel=1e-12)
    assert row.zeta == pytest.approx(0.5, rel=1e-12)
    assert row.period == pytest.approx(2 * math.pi / 8.660254037844386, rel=1e-12)
    assert row.time_constant == pytest.approx(0.2, rel=1e-12)
    assert row.multiplicity == 1 and not row.defective
    assert result.stability == "asymptotically stable"
    assert "-5 ± 8.66025j" in result.explanation


def test_joint_shape_is_an_eigenvector():
    system = joint()
    row = modes(system).rows[0]
    v = np.array([row.shape[name] for name in system.states])
    assert np.max(np.abs(v)) == 1.0  # normalized: the largest component is exactly 1
    residual = np.linalg.norm(system.A @ v - row.eigenvalue * v)
    assert residual <= 1e-12 * np.linalg.norm(system.A, 2) * np.linalg.norm(v)
    # Closed form for the companion matrix: the eigenvector is (1, λ), so q / q_dot = 1 / λ.
    assert abs(row.shape["q"] / row.shape["q_dot"] - 1 / JOINT_PAIR) <= 1e-14


def test_inverted_pendulum_is_unstable_with_negative_damping_ratio():
    result = modes(pendulum(math.pi))
    unstable, stable = result.rows  # sorted by real part, largest first
    assert unstable.eigenvalue.imag == 0.0 and abs(unstable.eigenvalue.real - SQRT_G) <= 1e-12
    assert unstable.zeta == -1.0 and unstable.period is None
    assert unstable.time_constant == pytest.approx(1 / SQRT_G, rel=1e-12)  # e-folding growth time
    assert abs(stable.eigenvalue.real + SQRT_G) <= 1e-12 and stable.zeta == 1.0
    assert result.stability == "unstable"
    assert "3.13209" in result.explanation
    # The unstable shape (1, sqrt(g)) / sqrt(g): theta_dot = sqrt(g) theta, theta_dot the largest.
    assert unstable.shape["theta_dot"] == 1.0
    assert abs(unstable.shape["theta"] - 1 / SQRT_G) <= 1e-14


def test_hanging_pendulum_is_an_undamped_pair():
    result = modes(pendulum(0.0))
    (row,) = result.rows
    assert abs(row.eigenvalue - complex(0.0, SQRT_G)) <= 1e-12
    assert row.zeta == 0.0 and row.time_constant is None
    assert row.omega_n == pytest.approx(SQRT_G, rel=1e-12)
    assert row.period == pytest.approx(2 * math.pi / SQRT_G, rel=1e-12)
    assert result.stability == "marginally stable"


def test_double_integrator_is_defective_and_unstable():
    A = np.array([[0.0, 1.0], [0.0, 0.0]])
    decomposition = modal_decomposition(A)
    assert decomposition.defective and not decomposition.reliable
    np.testing.assert_allclose(decomposition.reconstruct(), A, rtol=0, atol=1e-15)
    result = modes(LinearSystem(A))
    (row,) = result.rows
    assert (row.multiplicity, row.geometric_multiplicity) == (2, 1)
    assert row.omega_n == 0.0 and row.zeta is None and row.time_constant is None and row.period is None
    assert row.shape_source == "schur vector" and row.shape == {"x1": 1.0, "x2": 0.0}
    assert result.stability == "unstable" and "Jordan" in result.explanation


def test_zero_matrix_is_semisimple_and_marginally_stable():
    decomposition = modal_decomposition(np.zeros((2, 2)))
    assert not decomposition.defective and decomposition.geometric == (2,)
    result = modes(LinearSystem(np.zeros((2, 2))))
    (row,) = result.rows
    assert (row.multiplicity, row.geometric_multiplicity) == (2, 2)
    assert result.stability == "marginally stable"


def test_stable_jordan_block_is_flagged_and_reconstructed():
    A = np.array([[-1.0, 1.0], [0.0, -1.0]])
    decomposition = modal_decomposition(A)
    assert decomposition.defective and decomposition.condition > 1e8
    np.testing.assert_allclose(decomposition.reconstruct(), A, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.diag(decomposition.schur_T), [-1.0, -1.0], atol=1e-15)
    result = modes(LinearSystem(A))
    (row,) = result.rows
    assert row.eigenvalue == -1.0 and row.multiplicity == 2 and row.defective
    assert row.zeta == 1.0 and row.time_constant == 1.0
    assert row.shape == {"x1": 1.0, "x2": 0.0}  # the only eigenvector, e1
    assert result.stability == "asymptotically stable"  # t e^{-t} still decays


def test_rounding_split_jordan_block_is_still_defective():
    # A^2 = 0 with A != 0: a nilpotent Jordan block in a rotated basis. LAPACK returns two eigenvalues of
    # size ~1e-16 that are not equal; the clustering must still see one defective eigenvalue at 0.
    A = np.array([[1.0, 1.0], [-1.0, -1.0]])
    assert np.all(A @ A == 0.0)
    result = modes(LinearSystem(A))
    (row,) = result.rows
    assert row.multiplicity == 2 and row.geometric_multiplicity == 1
    assert result.stability == "unstable"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multiplicity_in_a_random_basis(seed):
    # Built with known Jordan structure, then hidden by a random similarity: rounding splits the
    # eigenvalues by ~sqrt(eps) (defective) or ~eps (semisimple).
    rng = np.random.default_rng(seed)
    S = rng.normal(size=(3, 3))
    semisimple = S @ np.diag([0.0, 0.0, -1.0]) @ np.linalg.inv(S)
    jordan = S @ np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, -1.0]]) @ np.linalg.inv(S)
    triple = S @ np.array([[-2.0, 1.0, 0.0], [0.0, -2.0, 1.0], [0.0, 0.0, -2.0]]) @ np.linalg.inv(S)
    assert modes(LinearSystem(semisimple)).stability == "marginally stable"
    assert not modal_decomposition(semisimple).defective
    assert modes(LinearSystem(jordan)).stability == "unstable"
    assert modal_decomposition(jordan).defective
    (row,) = modes(LinearSystem(triple)).rows
    assert row.multiplicity == 3 and row.geometric_multiplicity == 1
    assert abs(row.eigenvalue + 2.0) <= 1e-9  # the cluster mean is far more accurate than its members


def test_mbk_chain_matches_numpy():
    system = robodyn.load("mbk:n=4").to_linear()
    result = modes(system)
    assert len(result.rows) == 4 and all(row.period is not None for row in result.rows)
    assert result.stability == "asymptotically stable"
    reference = np.sort_complex(np.linalg.eigvals(system.A))
    decomposition = modal_decomposition(system.A)
    np.testing.assert_allclose(np.sort_complex(decomposition.eigenvalues), reference, rtol=1e-12, atol=1e-14)
    pairs = np.sort_complex(np.array([row.eigenvalue for row in result.rows]))
    np.testing.assert_allclose(pairs, reference[reference.imag > 0], rtol=1e-12)
    assert decomposition.reliable
    error = np.linalg.norm(decomposition.reconstruct() - system.A, 2)
    assert error <= 1e-10 * np.linalg.norm(system.A, 2)


# --- the JSON contract and the table ---------------------------------------------------------------------
@pytest.mark.parametrize("system", [joint(), pendulum(math.pi), LinearSystem([[0.0, 1.0], [0.0, 0.0]])])
def test_to_dict_is_the_json_contract(system):
    result = modes(system)
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    # the DESIGN contract's keys, extended compatibly with "explanation" and per-row "multiplicity"
    assert set(data) == {"modes", "stability", "explanation"} and data["stability"] in STABILITY
    assert data["explanation"] == result.explanation
    for row, mode in zip(data["modes"], result.rows):
        assert set(row) == CONTRACT_ROW | {"multiplicity"} and row["multiplicity"] == mode.multiplicity
        assert row["eigenvalue"] == [mode.eigenvalue.real, mode.eigenvalue.imag]
        assert set(row["shape"]) == set(system.states)
        assert all(len(component) == 2 for component in row["shape"].values())
        for key in ("zeta", "time_constant", "period"):
            assert row[key] == getattr(mode, key)  # None -> null -> None


def test_table_lists_rows_and_verdict():
    text = modes(pendulum(math.pi)).table()
    assert "omega_n" in text and "3.13209" in text and "-3.13209" in text
    assert text.splitlines()[-1].startswith("unstable: eigenvalue 3.13209")


# --- forced response ---------------------------------------------------------------------------------------
INPUTS = {
    "step": Step(0.3, 0.0, 1.0),
    "ramp": Ramp(0.1, 2.0, initial=-0.5),
    "sine": Sine(1.5, 1.2, phase=0.3, offset=0.1),
}


@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_forced_response_matches_exact_path_on_joint(kind):
    system, t, x0 = joint(), np.linspace(0.0, 2.0, 101), [0.1, -0.2]
    x, y = forced_response(system, t, INPUTS[kind], x0=x0)
    reference = robodyn.simulate(system, (0.0, 2.0), x0, INPUTS[kind], method="exact", t_eval=t)
    np.testing.assert_allclose(x, reference.x, rtol=0, atol=1e-9 * max(1.0, np.max(np.abs(reference.x))))
    np.testing.assert_allclose(y, reference.y, rtol=0, atol=1e-9 * max(1.0, np.max(np.abs(reference.y))))


@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_forced_response_matches_exact_path_on_three_states(kind):
    system, t, x0 = three_state(), np.linspace(0.0, 3.0, 61), {"p": 0.5, "w": -1.0}
    u = {"f": INPUTS[kind], "g": Sine(0.5, 0.4)}
    x, y = forced_response(system, t, u, x0=x0)
    reference = robodyn.simulate(system, (0.0, 3.0), x0, u, method="exact", t_eval=t)
    np.testing.assert_allclose(x, reference.x, rtol=0, atol=1e-9 * max(1.0, np.max(np.abs(reference.x))))
    np.testing.assert_allclose(y, reference.y, rtol=0, atol=1e-9 * max(1.0, np.max(np.abs(reference.y))))


def test_forced_response_on_a_defective_system_uses_schur_form():
    system = LinearSystem([[-1.0, 1.0], [0.0, -1.0]], [[0.0], [1.0]])
    t, u = np.linspace(0.0, 2.0, 31), Sine(1.0, 0.5)
    x, _ = forced_response(system, t, u, x0=[1.0, 2.0])
    reference = robodyn.simulate(system, (0.0, 2.0), [1.0, 2.0], u, method="exact", t_eval=t)
    np.testing.assert_allclose(x, reference.x, rtol=0, atol=1e-9)


def test_callable_input_equals_signal_input():
    system, t = three_state(), np.linspace(0.0, 1.0, 21)
    signal = Sine(1.0, 0.8)

    def u(tau):
        return [math.sin(2 * math.pi * 0.8 * tau), 0.0]

    x_signal, _ = forced_response(system, t, [signal, None])
    x_callable, _ = forced_response(system, t, u)
    np.testing.assert_allclose(x_callable, x_signal, rtol=0, atol=1e-12)


@pytest.mark.parametrize("system", [joint(), three_state(), pendulum(math.pi)])
def test_free_response_matches_expm(system):
    t = np.array([0.0, 0.05, 0.3, 0.7, 1.0, 2.5])
    x0 = np.linspace(1.0, -1.0, system.n_states)
    x, _ = forced_response(system, t, None, x0=x0)
    reference = np.array([scipy.linalg.expm(system.A * tk) @ x0 for tk in t])
    np.testing.assert_allclose(x, reference, rtol=0, atol=1e-12 * max(1.0, np.max(np.abs(reference))))


def test_unstable_scalar_against_closed_form():
    # x' = a x + u with u = 1: x(t) = e^{a t} x0 + (e^{a t} - 1) / a. Growth by e^5 keeps rounding ~1e-13.
    system, t = LinearSystem([[50.0]], [[1.0]]), np.array([0.0, 0.02, 0.1])
    x, _ = forced_response(system, t, 1.0, x0=[1.0])
    expected = np.exp(50 * t) + (np.exp(50 * t) - 1) / 50
    np.testing.assert_allclose(x[:, 0], expected, rtol=1e-12)
    with pytest.raises(NumericalError, match="overflows"):
        forced_response(system, [0.0, 20.0], 1.0)


# --- property tests ----------------------------------------------------------------------------------------
entries = st.one_of(st.integers(-3, 3).map(float), st.floats(-5.0, 5.0, allow_nan=False, allow_infinity=False))
matrices = st.integers(3, 4).flatmap(lambda n: hnp.arrays(np.float64, (n, n), elements=entries))


@settings(max_examples=150, deadline=None)
@given(matrices)
def test_random_matrices(A):
    n, norm = A.shape[0], max(1.0, np.linalg.norm(A, 2))
    decomposition = modal_decomposition(A)
    # Z T Z^H (used when not reliable) is backward stable: ~n eps ||A||. V Λ V^-1 - A = R V^-1 with R the
    # eigenvector residuals, kept below 100 n eps ||A|| per column, so the error is <= sqrt(n) 100 n eps
    # ||A|| ||V^-1|| <= 1000 n eps ||A|| cond(V) for n <= 4.
    amplification = decomposition.condition if decomposition.reliable else 1.0
    error = np.max(np.abs(decomposition.reconstruct() - A))
    assert error <= 1000 * n * np.finfo(float).eps * norm * amplification
    result = modes(LinearSystem(A), tolerance=1e-9)
    tol = result.tolerance
    counted = sum(row.multiplicity * (1 if row.eigenvalue.imag == 0 else 2) for row in result.rows)
    assert counted == n
    for row in result.rows:
        if row.zeta is None:
            assert abs(row.eigenvalue) <= tol
            continue
        # λ = -ζ ω_n + i ω_n sqrt(1 - ζ²): exact up to rounding, and up to tol where Re λ is snapped to 0.
        assert abs(row.eigenvalue.real + row.zeta * row.omega_n) <= tol + 1e-12 * row.omega_n
        assert abs(abs(row.eigenvalue.imag) - row.omega_n * math.sqrt(max(0.0, 1 - row.zeta**2))) <= (
            1e-7 * row.omega_n + tol)  # sqrt(1 - ζ²) amplifies rounding in ζ near |ζ| = 1
        if row.multiplicity == 1 and row.geometric_multiplicity == 1:
            v = np.array([row.shape[name] for name in result.states])
            assert np.linalg.norm(A @ v - row.eigenvalue * v) <= 1e-9 * norm * np.linalg.norm(v)
    largest = float(np.max(np.linalg.eigvals(A).real))
    margin = 1e-4 * norm  # beyond any rounding split of a (<= 3x3 Jordan) eigenvalue cluster
    if largest > margin:
        assert result.stability == "unstable"
    elif largest < -margin:
        assert result.stability == "asymptotically stable"
    if result.stability == "marginally stable":
        assert all(row.eigenvalue.real <= tol and not (abs(row.eigenvalue.real) <= tol and row.defective)
                   for row in result.rows)


# --- bad input ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("A", "error"), [
    ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], ShapeError),
    ([1.0, 2.0], ShapeError),
    (np.zeros((0, 0)), ShapeError),
    ([[1.0, math.nan], [0.0, 1.0]], InputError),
    ([[1.0, math.inf], [0.0, 1.0]], InputError),
    ([["a", "b"], ["c", "d"]], InputError),
])
def test_bad_matrices_are_rejected(A, error):
    with pytest.raises(error):
        modal_decomposition(A)


def test_bad_arguments_are_rejected():
    with pytest.raises(InputError, match="linearize"):
        modes(np.eye(2))
    with pytest.raises(InputError, match="tolerance"):
        modes(joint(), tolerance=0.0)
    with pytest.raises(InputError, match="sorted"):
        forced_response(joint(), [0.0, 2.0, 1.0])
    with pytest.raises(InputError, match="t >= 0"):
        forced_response(joint(), [-1.0, 0.0])
    with pytest.raises(ShapeError):
        forced_response(joint(), [0.0, 1.0], x0=[1.0, 2.0, 3.0])
    with pytest.raises(UnknownNameError):
        forced_response(joint(), [0.0, 1.0], {"force": 1.0})
    with pytest.raises(ShapeError):
        forced_response(three_state(), [0.0, 1.0], Step(0.0, 0.0, 1.0))
    with pytest.raises(InputError, match="finite"):
        forced_response(joint(), [0.0, 1.0], lambda tau: [math.nan])
