"""Linearization of a closed chain in its independent coordinates (robodyn.linearization.reduced) against
sympy.mechanics'
KanesMethod with configuration constraints, linearized at the same equilibrium, and against the closed-form natural
frequency of the four-bar: omega^2 = V''/m_eff along Freudenstein's solution."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.optimize
import sympy
from sympy.physics import mechanics as me

import robodyn
from robodyn.base.errors import InputError

FOUR_BAR = str(Path(__file__).resolve().parents[2] / "examples" / "four_bar.yaml")


def _equilibrium(model: robodyn.ConstrainedChain) -> dict[str, float]:
    """The rest state (crank between its spring's rest angle and where gravity pulls it): the crank acceleration
    of the assembled linkage at rest, zero."""
    def acceleration(crank: float) -> float:
        state = robodyn.assemble(model, guess, fix={"crank": crank, "crank_dot": 0.0})
        return float(model.f(0.0, state)[3])

    guess = robodyn.assemble(model, fix={"crank": 1.2})
    crank = scipy.optimize.brentq(acceleration, 0.2, 1.2, xtol=1e-15)
    return robodyn.assemble(model, guess, fix={"crank": crank, "crank_dot": 0.0})


@pytest.fixture(scope="module")
def four_bar() -> tuple[robodyn.ConstrainedChain, dict[str, float], robodyn.LinearSystem]:
    model = robodyn.load(FOUR_BAR)
    state = _equilibrium(model)
    return model, state, robodyn.linearize(model, state)


def _kane(model: robodyn.ConstrainedChain, state: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """A and B of the same linkage by Kane's method with the loop as two configuration constraints (sympy)."""
    par = {k: sympy.Float(v) for k, v in model.parameters.items()}
    a, b, c, d, m1, m2, m3, k, rest, g = (par[n] for n in ("a", "b", "c", "d", "m1", "m2", "m3", "k_s",
                                                              "crank_rest", "g"))
    q1, q2, q3 = me.dynamicsymbols("q1 q2 q3")
    u1, u2, u3 = me.dynamicsymbols("u1 u2 u3")
    tau = me.dynamicsymbols("tau")  # an input: a function of time for the linearizer
    N = me.ReferenceFrame("N")
    C1 = N.orientnew("C1", "Axis", [q1, N.z])
    C2 = C1.orientnew("C2", "Axis", [q2, C1.z])
    C3 = N.orientnew("C3", "Axis", [q3, N.z])
    C1.set_ang_vel(N, u1 * N.z)
    C2.set_ang_vel(C1, u2 * C1.z)
    C3.set_ang_vel(N, u3 * N.z)
    origin = me.Point("O")
    origin.set_vel(N, 0)
    B = origin.locatenew("B", a * C1.x)
    tip = B.locatenew("tip", b * C2.x)
    D = origin.locatenew("D", d * N.x)
    D.set_vel(N, 0)
    rocker_tip = D.locatenew("rocker_tip", c * C3.x)
    G1, G2, G3 = origin.locatenew("G1", a / 2 * C1.x), B.locatenew("G2", b / 2 * C2.x), D.locatenew("G3", c / 2 * C3.x)
    for point, frame, base in ((G1, C1, origin), (B, C1, origin), (G2, C2, B), (tip, C2, B), (G3, C3, D)):
        point.v2pt_theory(base, N, frame)
    rocker_tip.v2pt_theory(D, N, C3)
    gap = tip.pos_from(origin) - rocker_tip.pos_from(origin)
    configuration = [gap.dot(N.x), gap.dot(N.y)]
    velocity = [(tip.vel(N) - rocker_tip.vel(N)).dot(e) for e in (N.x, N.y)]
    bodies = [me.RigidBody(name, G, F, m, (me.inertia(F, 0, m * L**2 / 12, m * L**2 / 12), G))
              for name, G, F, m, L in (("crank", G1, C1, m1, a), ("coupler", G2, C2, m2, b), ("rocker", G3, C3, m3, c))]
    loads = [(G1, -m1 * g * N.y), (G2, -m2 * g * N.y), (G3, -m3 * g * N.y), (C1, (tau - k * (q1 - rest)) * N.z)]
    kane = me.KanesMethod(N, q_ind=[q1], u_ind=[u1], kd_eqs=[q1.diff() - u1, q2.diff() - u2, q3.diff() - u3],
                          q_dependent=[q2, q3], configuration_constraints=configuration,
                          u_dependent=[u2, u3], velocity_constraints=velocity)
    kane.kanes_equations(bodies, loads)
    point = {q1: state["crank"], q2: state["coupler"], q3: state["rocker"], u1: 0, u2: 0, u3: 0, tau: 0}
    point.update({s.diff(): 0 for s in (q1, q2, q3, u1, u2, u3)})
    A, B_input = kane.to_linearizer(linear_solver="LU").linearize(op_point=point, A_and_B=True)
    return np.array(A, dtype=float), np.array(B_input, dtype=float)


def test_the_linear_model_is_kanes_in_the_independent_coordinates(four_bar) -> None:
    """1e-10 relative: both are exact (forward mode on the tape; sympy's symbolic derivatives), apart from
    round-off in the solves."""
    model, state, linear = four_bar
    assert linear.states == ("crank", "crank_dot") and linear.n_states == 2
    A, B = _kane(model, state)
    np.testing.assert_allclose(linear.A, A, rtol=1e-10, atol=1e-10 * np.max(np.abs(A)))
    np.testing.assert_allclose(linear.B, B, rtol=1e-10, atol=1e-10 * np.max(np.abs(B)))
    assert np.all(np.isfinite(linear.C)) and linear.C.shape == (model.n_outputs, 2)


def _closed_form_frequency(model: robodyn.ConstrainedChain, crank: float, rocker: float) -> float:
    """omega_n = sqrt(V''(theta) / m_eff(theta)) at the equilibrium theta, with the rocker and coupler angles from
    Freudenstein's closed-form solution (Norton's A, B, C form) on the branch of ``rocker``."""
    par = model.parameters
    a, b, c, d = (par[k] for k in "abcd")
    theta = sympy.Symbol("theta")
    k1, k2, k3 = d / a, d / c, (a * a - b * b + c * c + d * d) / (2 * a * c)
    A_ = sympy.cos(theta) - k1 - k2 * sympy.cos(theta) + k3
    B_ = -2 * sympy.sin(theta)
    C_ = k1 - (k2 + 1) * sympy.cos(theta) + k3
    branches = [2 * sympy.atan2(-B_ + s * sympy.sqrt(B_**2 - 4 * A_ * C_), 2 * A_) for s in (1, -1)]
    theta4 = min(branches, key=lambda e: abs(math.remainder(float(e.subs(theta, crank)) - rocker, 2 * math.pi)))
    theta3 = sympy.atan2(c * sympy.sin(theta4) - a * sympy.sin(theta), d + c * sympy.cos(theta4) - a * sympy.cos(theta))
    g, m1, m2, m3 = par["g"], par["m1"], par["m2"], par["m3"]
    centres = [(a / 2 * sympy.cos(theta), a / 2 * sympy.sin(theta)),
               (a * sympy.cos(theta) + b / 2 * sympy.cos(theta3), a * sympy.sin(theta) + b / 2 * sympy.sin(theta3)),
               (d + c / 2 * sympy.cos(theta4), c / 2 * sympy.sin(theta4))]
    masses, lengths, angles = (m1, m2, m3), (a, b, c), (theta, theta3, theta4)
    potential = sum(m * g * y for m, (_, y) in zip(masses, centres))
    potential += par["k_s"] / 2 * (theta - par["crank_rest"]) ** 2
    inertia = sum(m * (sympy.diff(x, theta) ** 2 + sympy.diff(y, theta) ** 2) + m * L**2 / 12 * sympy.diff(q, theta)**2
                  for m, (x, y), L, q in zip(masses, centres, lengths, angles))
    assert abs(float(sympy.diff(potential, theta).subs(theta, crank))) < 1e-9  # the point is the equilibrium
    return math.sqrt(float(sympy.diff(potential, theta, 2).subs(theta, crank)) / float(inertia.subs(theta, crank)))


def test_the_natural_frequency_is_the_closed_forms(four_bar) -> None:
    model, state, linear = four_bar
    (mode,) = robodyn.modes(linear).rows
    expected = _closed_form_frequency(model, state["crank"], state["rocker"])
    assert mode.omega_n == pytest.approx(expected, rel=1e-10)
    assert mode.zeta == pytest.approx(0.0, abs=1e-12)  # no damping: the Baumgarte terms leave no trace


def test_a_point_off_the_constraints_or_a_finite_difference_method_is_refused(four_bar) -> None:
    model, state, _ = four_bar
    off = np.array(list(state.values()))
    off[2] += 0.01
    with pytest.raises(InputError, match=r"off its constraints: close\.[xy] = "):
        robodyn.linearize(model, off)
    with pytest.raises(InputError, match=r"cannot be closed with crank, coupler, rocker"):  # a mapping: all held
        robodyn.linearize(model, {**state, "rocker": state["rocker"] + 0.01})
    with pytest.raises(InputError, match="independent coordinates"):
        robodyn.linearize(model, state, method="central")


def test_independent_coordinates_chosen_by_the_jacobian_span_the_same_dynamics() -> None:
    """Without 'independent:', a pivoted QR picks them; the eigenvalue is the same whichever is kept."""
    text = Path(FOUR_BAR).read_text().replace("independent: [crank]", "")
    model = robodyn.read_model_text(text, "four_bar.yaml")
    declared = robodyn.load(FOUR_BAR)
    state = _equilibrium(declared)
    linear = robodyn.linearize(model, state)
    assert linear.n_states == 2 and linear.states[0] in model.coordinates
    ours = np.sort_complex(np.linalg.eigvals(linear.A))
    theirs = np.sort_complex(np.linalg.eigvals(robodyn.linearize(declared, state).A))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)


def test_equilibria_of_the_linkage_lie_on_its_loop(four_bar) -> None:
    """f = 0 holds only on the constraints (at rest, Baumgarte's gamma = -alpha^2 phi must vanish): every branch's
    rest point found closes the loop, and the open branch's is the one found by assembly and bisection."""
    model, state, _ = four_bar
    points = robodyn.find_equilibrium(model, fix={"crank_tau": 0.0}, starts=8)
    p = model.parameter_vector()
    for point in points:
        residuals = model.constraints().residuals(0.0, point.x, p)
        assert max(map(abs, residuals.values())) <= 1e-9
    assert any(abs(point.x[0] - state["crank"]) < 1e-9 and abs(point.x[2] - state["rocker"]) < 1e-9
               for point in points)


def test_the_linearizer_sends_a_linkage_to_linearize(four_bar) -> None:
    model, _, _ = four_bar
    with pytest.raises(InputError, match=r"closed loops.*robodyn\.linearize"):
        robodyn.Linearizer(model)
