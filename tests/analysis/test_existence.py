"""existence(), lipschitz(), picard() and the interval evaluator against closed forms and exact values.

References are independent of the code under test: closed-form Jacobians and solutions (e^{at}, the
damped joint), mpmath at 50 digits for the interval soundness property, the models' own Cholesky-based
Jacobians for the explicit-inverse path, and robodyn.simulate's matrix-exponential path.

Tolerances: interval bounds are outward-rounded, so "exact" results may be off by a few ulps (1e-12
relative is generous). Picard iterates carry cumulative-Simpson error ~h^4/24 max|d^3 f/dt^3| <= 3e-11
for h = 0.005 on [0, 1], and ~2e-11 on the joint (h = 2.5e-4, derivatives ~1e4): checked to 1e-8.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import robodyn
from robodyn.analysis.existence import box_around, existence, lipschitz, picard
from robodyn.analysis.intervals import Interval, enclose
from robodyn.base.errors import InputError, UnknownNameError
from robodyn.model.expr import symbol

X, Y = symbol("x"), symbol("y")


def decay(rate: float = -2.0) -> robodyn.SymbolicSystem:
    return robodyn.SymbolicSystem(["x"], None, {"x": f"{rate}*x"})


def pendulum() -> robodyn.SymbolicSystem:
    return robodyn.SymbolicSystem(["theta", "v"], None, {"theta": "v", "v": "-9.81*sin(theta)"})


def root() -> robodyn.SymbolicSystem:
    return robodyn.SymbolicSystem(["x"], None, {"x": "sqrt(abs(x))"})


# --- Lipschitz constants ----------------------------------------------------------------------------------
def test_linear_decay_has_lipschitz_constant_two():
    bound = lipschitz(decay(), {"x": (-1.0, 1.0)})
    assert bound.rigorous and bound.method == "interval" and bound.norm == "inf"
    assert 2.0 <= bound.L_upper <= 2.0 + 1e-9
    assert bound.L_sampled <= 2.0 and bound.L_sampled == pytest.approx(2.0, abs=1e-12)  # constant Jacobian
    assert bound.L == bound.L_upper and bound.issues == ()


def test_pendulum_upper_bound_dominates_samples_and_closed_form():
    bound = lipschitz(pendulum(), {"theta": (0.1, 3.0), "v": (-1.0, 1.0)})
    # df/dx = [[0, 1], [-9.81 cos(theta), 0]]: the row sums are 1 and 9.81 |cos(theta)|, largest at 0.1.
    exact = 9.81 * math.cos(0.1)
    assert math.isfinite(bound.L_upper) and math.isfinite(bound.L_sampled)
    assert bound.L_sampled <= exact + 1e-12 <= bound.L_upper + 2e-12
    assert bound.L_upper == pytest.approx(exact, rel=1e-12)  # cos is monotone on [0.1, 3]: tight
    assert bound.L_sampled >= bound.L_upper * 0.99  # 2000 samples come close to the maximum
    sine = enclose(sympy.sin(X), {"x": (0.1, 3.0)})
    assert sine.lo <= math.sin(3.0) and sine.hi >= 1.0  # contains [sin 3, 1] (the max at pi/2 is inside)
    assert sine.lo >= math.sin(0.1) - 1e-15  # and is tight: the min is sin(0.1)


@pytest.mark.parametrize("name", ["pendulum", "double_pendulum", "cart_pole"])
def test_explicit_inverse_bounds_the_models_own_jacobians(name):
    model = robodyn.load(name)
    box = box_around(model, np.full(model.n_states, 0.3), 0.2)
    bound = lipschitz(model, box, samples=200)
    assert bound.rigorous and math.isfinite(bound.L_upper)
    rng = np.random.default_rng(1)
    lo, hi = np.array([b[0] for b in box.values()]), np.array([b[1] for b in box.values()])
    for x in rng.uniform(lo, hi, size=(50, model.n_states)):
        exact = model.dfdx(0.0, x)  # Cholesky-based, no symbolic inverse
        assert np.abs(exact).sum(axis=1).max() <= bound.L_upper * (1 + 1e-12)
    assert bound.L_sampled <= bound.L_upper * (1 + 1e-12)


def test_linear_system_is_rigorous():
    model = robodyn.LinearSystem([[0.0, 1.0], [-4.0, -0.4]], [[0.0], [1.0]])
    bound = lipschitz(model, {"x1": (-1, 1), "x2": (-1, 1)}, u=[2.0])
    assert bound.rigorous and bound.L_upper == pytest.approx(4.4, rel=1e-15)
    assert bound.L_sampled == pytest.approx(4.4, rel=1e-15)


def test_plain_callables_are_sampled_only():
    model = robodyn.System(lambda t, x, u, p: [-2.0 * x[0]], ["x"])
    bound = lipschitz(model, {"x": (-1.0, 1.0)}, samples=300)
    assert not bound.rigorous and bound.method == "sampled" and bound.L_upper is None
    assert bound.L_sampled == pytest.approx(2.0, abs=1e-8)  # central differences: rounding ~eps/h ~ 1e-11
    report = existence(model, [1.0], radius=0.5, samples=300)
    assert not report.rigorous and not report.to_dict()["rigorous"]
    assert "not proven" in report.explanation and report.contraction


def test_manipulators_with_more_than_two_coordinates_are_sampled():
    model = robodyn.ManipulatorSystem(["a", "b", "c"], None, mass=[[1, 0, 0], [0, 2, 0], [0, 0, 4]],
                                      forces=["-4*a", "-b", "-c"], bias=[0, 0, 0])
    bound = lipschitz(model, box_around(model, np.zeros(6), 1.0), samples=50)
    assert bound.method == "sampled" and not bound.rigorous
    assert bound.L_sampled == pytest.approx(4.0, rel=1e-14)  # row of a'' = -4 a


def test_kinks_keep_a_finite_bound():
    model = robodyn.SymbolicSystem(["x", "y"], None, {"x": "abs(x) - max(x, y)", "y": "-x"})
    bound = lipschitz(model, {"x": (-1, 1), "y": (-1, 1)})
    # d/dx (|x| - max(x, y)) = sign(x) - H(x - y) in [-2, 1], d/dy = -H(y - x) in [-1, 0]: row sum <= 3.
    assert bound.L_upper == 3.0 and bound.issues == ()


# --- existence --------------------------------------------------------------------------------------------
def test_existence_for_linear_decay():
    report = existence(decay(), [1.0], radius=0.5, horizon=1.0)
    assert report.M == 3.0  # sup |-2x| on [0.5, 1.5]; the interval product is exact in binary
    assert report.L == 2.0
    assert Fraction(report.delta) <= Fraction(1, 6) and 1 / 6 - report.delta < 1e-16  # rounded down
    assert report.contraction and report.exists and report.unique and report.rigorous
    assert "contraction" in report.explanation and "delta L = 0.333333 < 1" in report.explanation
    data = report.to_dict()
    assert set(data) == {"L", "M", "delta", "contraction", "rigorous", "explanation"}
    assert json.loads(json.dumps(data)) == data


def test_square_root_is_not_lipschitz_at_zero():
    report = existence(root(), [0.0], radius=1.0, horizon=1.0)
    assert not report.contraction and not report.unique and report.exists
    assert "uniqueness is not guaranteed" in report.explanation and "Peano" in report.explanation
    assert "not Lipschitz near x0" in report.explanation
    assert report.M == 1.0 and report.delta == 1.0 and report.to_dict()["L"] is None  # inf -> JSON null
    # The two documented solutions on [0, delta]: x = 0 and x = t^2/4 both satisfy x' = sqrt(|x|).
    model, t = root(), np.linspace(0.0, report.delta, 101)
    for x, xdot in ((np.zeros_like(t), np.zeros_like(t)), (t**2 / 4, t / 2)):
        assert np.max(np.abs(x)) <= report.radius  # both stay in the box
        f = np.array([model.f(ti, [xi])[0] for ti, xi in zip(t, x)])
        np.testing.assert_allclose(f, xdot, rtol=0, atol=1e-15)  # sqrt(t^2/4) = t/2 exactly in floats
        np.testing.assert_allclose(np.gradient(x, t, edge_order=2), xdot, rtol=0, atol=1e-12)  # exact: quadratic
    iterates = picard(model, [0.0], 1.0, iterations=3).iterates
    assert np.all(iterates == 0.0)  # Picard iteration finds x = 0, not t^2/4


def test_square_root_away_from_zero_is_lipschitz():
    report = existence(root(), [1.0], radius=0.5, horizon=1.0)
    # df/dx = 1/(2 sqrt(x)) is largest at x = 0.5: 1/sqrt(2).
    assert report.unique and report.L == pytest.approx(1 / math.sqrt(2), rel=1e-12)


def test_unbounded_and_discontinuous_right_hand_sides():
    log = existence(robodyn.SymbolicSystem(["x"], None, {"x": "log(x)"}), [0.5], radius=1.0)
    assert log.M == math.inf and log.delta == 0.0 and not log.exists and not log.contraction
    assert "no finite bound on |f|" in log.explanation and log.to_dict()["M"] is None
    jump = existence(robodyn.SymbolicSystem(["x"], None, {"x": "-sign(x)"}), [0.0], radius=1.0)
    assert not jump.exists and not jump.unique and "not continuous" in jump.explanation
    away = existence(robodyn.SymbolicSystem(["x"], None, {"x": "-sign(x)"}), [2.0], radius=1.0)
    assert away.L == 0.0 and away.contraction  # derivative 2 delta(x) vanishes off x = 0


def test_lipschitz_but_not_a_contraction():
    joint = robodyn.SymbolicSystem(["q", "qd"], ["u"], {"q": "qd", "qd": "(u - 0.1*qd - q)/0.01"})
    report = existence(joint, [0.0, 0.0], radius=10.0, horizon=1.0, u={"u": 1.0})
    # qd' = 100 u - 10 qd - 100 q: M = 100 + 100 + 1000, L = 110 (row 2), delta = 10/1200, delta L = 0.92.
    assert report.M == pytest.approx(1200.0, rel=1e-12) and report.L == pytest.approx(110.0, rel=1e-12)
    assert report.contraction
    # x' = 10 sin(x): M = 10, L = 10, delta = min(1, 10/10) = 1, delta L = 10: unique, not a contraction.
    wave = existence(robodyn.SymbolicSystem(["x"], None, {"x": "10*sin(x)"}), [0.0], radius=10.0)
    assert wave.M == 10.0 and wave.L == 10.0 and wave.delta == 1.0
    assert wave.unique and not wave.contraction
    assert "not a contraction" in wave.explanation and "1/L = 0.1" in wave.explanation


def test_zero_right_hand_side_uses_the_whole_horizon():
    report = existence(robodyn.SymbolicSystem(["x"], None, {"x": "0"}), [3.0], radius=1.0, horizon=2.5)
    assert report.M == 0.0 and report.delta == 2.5 and report.contraction


# --- Picard iterates --------------------------------------------------------------------------------------
@pytest.mark.parametrize("rate", [-1.0, 0.5])
def test_picard_iterates_are_taylor_polynomials(rate):
    result = picard(decay(rate), [1.0], (0.0, 1.0), iterations=6)
    t = result.t
    for k in range(7):
        taylor = sum((rate * t) ** j / math.factorial(j) for j in range(k + 1))
        np.testing.assert_allclose(result.iterates[k, :, 0], taylor, rtol=0, atol=1e-8)
    np.testing.assert_allclose(result.iterates[-1, -1, 0], math.exp(rate), atol=2e-3)  # 7th-order Taylor
    assert np.all(np.diff(result.differences) < 0)
    expected = [abs(rate) ** (k + 1) / math.factorial(k + 1) for k in range(6)]  # |a|^{k+1} t^{k+1}/(k+1)!
    np.testing.assert_allclose(result.differences, expected, rtol=0, atol=1e-10)
    assert result.bound.L == pytest.approx(abs(rate), rel=1e-15)
    assert np.all(result.differences <= result.apriori * (1 + 1e-12))
    assert np.all(result.differences <= result.apriori_factorial + 1e-10)
    assert result.quadrature_error < 1e-9


def joint_closed_form(t: np.ndarray) -> np.ndarray:
    """q'' + 10 q' + 100 q = 100, q(0) = q'(0) = 0 (omega_n = 10, zeta = 0.5)."""
    wd = math.sqrt(75.0)
    q = 1 - np.exp(-5 * t) * (np.cos(wd * t) + 5 / wd * np.sin(wd * t))
    return np.stack([q, np.exp(-5 * t) * (100 / wd) * np.sin(wd * t)], axis=1)


def test_picard_on_the_seed_joint_converges_to_the_exact_solution():
    joint = robodyn.SymbolicSystem(["q", "qd"], ["u"], {"q": "qd", "qd": "(u - 0.1*qd - q)/0.01"})
    result = picard(joint, [0.0, 0.0], 0.05, iterations=20, u={"u": 1.0})
    exact = joint_closed_form(result.t)
    np.testing.assert_allclose(result.iterates[-1], exact, rtol=0, atol=1e-8)
    assert np.max(np.abs(result.iterates[5] - exact)) > 1e-6  # it takes iterations to get there
    assert result.bound.L == pytest.approx(110.0, rel=1e-12)  # row 2: 100 + 10
    assert np.all(result.differences <= result.apriori * (1 + 1e-12))
    assert np.all(result.differences <= result.apriori_factorial + 1e-10)
    catalog = robodyn.load("joint")  # the mechanical model gives the same iterates (explicit 1/J)
    same = picard(catalog, [0.0, 0.0], 0.05, iterations=20, u={"u": 1.0})
    np.testing.assert_allclose(same.iterates, result.iterates, rtol=0, atol=1e-12)
    reference = robodyn.simulate(catalog, 0.05, [0.0, 0.0], u=1.0, method="exact", t_eval=result.t)
    np.testing.assert_allclose(same.iterates[-1], reference.x, rtol=0, atol=1e-8)


def test_picard_with_a_plain_callable():
    model = robodyn.System(lambda t, x, u, p: [-x[0]], ["x"])
    result = picard(model, {"x": 1.0}, (0.0, 0.5), iterations=8)
    np.testing.assert_allclose(result.iterates[-1, :, 0], np.exp(-result.t), atol=1e-8)
    assert not result.bound.rigorous


# --- interval evaluation ----------------------------------------------------------------------------------
UNARY = [sympy.sin, sympy.cos, sympy.tan, sympy.exp, sympy.log, sympy.sqrt, sympy.Abs, sympy.sign, sympy.atan,
         sympy.asin, sympy.acos, sympy.sinh, sympy.cosh, sympy.tanh, lambda a: a**2, lambda a: a**3,
         lambda a: 1 / a, lambda a: a**-2, lambda a: a ** sympy.Rational(1, 3), lambda a: a**1.5, lambda a: -a]
BINARY = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b, sympy.atan2,
          sympy.Min, sympy.Max]
LEAVES = st.sampled_from([X, Y, X, Y, sympy.Integer(2), sympy.Integer(-3), sympy.Rational(1, 3),
                          sympy.Float(0.7), sympy.pi, sympy.E])
NOT_REAL = (sympy.I, sympy.zoo, sympy.nan, sympy.oo)


def build(function, *args):
    """function(*args), or None where sympy rejects it or folds constants into something not real."""
    try:
        expr = function(*args)
    except (ValueError, TypeError, ZeroDivisionError):
        return None
    if expr.has(*NOT_REAL) or any(sub.is_extended_real is False for sub in sympy.preorder_traversal(expr)
                                  if sub.is_number):
        return None  # like (-3)**(1/3) or asin(-3): complex constants
    return expr


EXPRESSIONS = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.builds(build, st.sampled_from(UNARY), inner),
        st.builds(build, st.sampled_from(BINARY), inner, inner),
    ).filter(lambda expr: expr is not None),
    max_leaves=6,
)


def exact_value(expr: sympy.Expr, x: float, y: float) -> mpmath.mpf | None:
    """The expression at (x, y) with mpmath at 50 digits; None where it is undefined or not real."""
    function = sympy.lambdify((X, Y), expr, modules="mpmath")
    with mpmath.workdps(50):
        try:
            value = function(mpmath.mpf(x), mpmath.mpf(y))
        except (ArithmeticError, ValueError, TypeError, AttributeError):  # complex arguments of min, atan2
            return None
        if not isinstance(value, mpmath.mpf) or not mpmath.isfinite(value):
            return None
        return value


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EXPRESSIONS, st.floats(-3, 3), st.floats(0, 2), st.floats(-3, 3), st.floats(0, 2), st.integers(0, 10**6))
def test_enclosures_contain_every_value(expr, x0, wx, y0, wy, seed):
    """Soundness: the value at any point of the box lies in the enclosure (mpmath at 50 digits; the 1e-30
    slack covers its rounding, far below the outward rounding of the float endpoints)."""
    box = {"x": (x0, x0 + wx), "y": (y0, y0 + wy)}
    enclosure = enclose(expr, box)
    rng = np.random.default_rng(seed)
    points = [(x0, y0), (x0 + wx, y0 + wy), *rng.uniform([x0, y0], [x0 + wx, y0 + wy], size=(6, 2))]
    for x, y in points:
        value = exact_value(expr, float(x), float(y))
        if value is None:
            continue
        slack = 1e-30 * (1 + abs(value))
        assert enclosure.lo - slack <= value <= enclosure.hi + slack, (expr, box, (x, y), value, enclosure)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EXPRESSIONS, EXPRESSIONS, st.floats(-2, 2), st.floats(-2, 2), st.floats(0.01, 1.5))
def test_rigorous_bounds_dominate_sampled_values(fx, fy, x0, y0, radius):
    """M and L_upper bound what sampling sees (numpy evaluation: 1e-6 relative slack for rounding near
    cancellations; the rigorous side is exact up to outward rounding)."""
    model = robodyn.SymbolicSystem(["x", "y"], None, {"x": fx, "y": fy})
    report = existence(model, [x0, y0], radius, samples=50)
    bound = report.lipschitz
    if math.isfinite(bound.L_sampled):
        assert bound.L_sampled <= bound.L_upper * (1 + 1e-6) + 1e-12
    points = np.random.default_rng(0).uniform([x0 - radius, y0 - radius], [x0 + radius, y0 + radius], (20, 2))
    f = sympy.lambdify((X, Y), [fx, fy], modules="numpy")
    with np.errstate(all="ignore"):
        values = np.array([np.broadcast_to(np.asarray(v, dtype=complex), 20) for v in f(*points.T)])
    finite = np.abs(values[:, np.all(np.isfinite(values) & (values.imag == 0), axis=0)])
    if finite.size and report.exists:
        assert finite.max() <= report.M * (1 + 1e-6) + 1e-12


@pytest.mark.parametrize("fy", [sympy.Min(2, sympy.asin(sympy.Min(2, X))), sympy.Min(X, sympy.asin(sympy.Min(2, X)))])
def test_jacobians_whose_conditions_order_a_complex_constant_are_sampled(fy):
    """Hypothesis's find: the Jacobian of min(2, asin(min(2, x))) has Heaviside steps whose conditions, printed as
    Piecewise, compare x with asin(2), which sympy refuses to order; the samples are taken with numpy's heaviside
    instead, NaN where asin is undefined (|x| > 1), and the Lipschitz bound on the box [-1, 1]^2 is the slope
    1 / sqrt(1 - x^2) of asin sampled there (finite, dominated by the rigorous bound)."""
    model = robodyn.SymbolicSystem(["x", "y"], None, {"x": X, "y": fy})
    bound = existence(model, [0.0, 0.0], 0.9, samples=50).lipschitz
    assert math.isfinite(bound.L_sampled) and 1.0 <= bound.L_sampled <= bound.L_upper * (1 + 1e-6)


def test_enclosure_domains_and_poles():
    issues: list = []
    assert enclose(sympy.log(X), {"x": (-1.0, 2.0)}, issues) == Interval(-math.inf, math.inf)
    assert issues[0].kind == "undefined" and "log" in issues[0].message
    assert not enclose(sympy.tan(X), {"x": (1.0, 2.0)}).bounded  # pi/2 inside
    assert enclose(sympy.tan(X), {"x": (-1.0, 1.0)}).hi == pytest.approx(math.tan(1.0), rel=1e-15)
    assert enclose(1 / X, {"x": (0.0, 2.0)}) == Interval(0.5, math.inf)
    assert enclose(sympy.asin(X), {"x": (-1.0, 1.0)}).hi >= math.pi / 2
    assert not enclose(sympy.acos(X), {"x": (0.0, 1.5)}).bounded
    assert enclose(sympy.cos(X), {"x": (-1.0, 1.0)}).hi == 1.0
    assert enclose(X**2, {"x": (-1.0, 2.0)}) == Interval(0.0, 4.0)  # not [-2, 4]: powers are not products
    assert enclose(sympy.pi, {}) == Interval(math.pi, math.nextafter(math.pi, 4.0))  # math.pi < pi
    with pytest.raises(InputError, match="not text"):
        enclose("x + 1", {"x": (0, 1)})
    with pytest.raises(UnknownNameError, match="'y'"):
        enclose(X + Y, {"x": (0, 1)})


# --- bad input --------------------------------------------------------------------------------------------
def test_bad_input():
    model = pendulum()
    good = {"theta": (0.0, 1.0), "v": (0.0, 1.0)}
    with pytest.raises(UnknownNameError, match="omega"):
        lipschitz(model, {**good, "omega": (0, 1)})
    with pytest.raises(InputError, match="lo > hi"):
        lipschitz(model, {**good, "v": (1.0, 0.0)})
    with pytest.raises(InputError, match="not finite"):
        lipschitz(model, {**good, "v": (0.0, math.inf)})
    with pytest.raises(InputError, match="no range for state"):
        lipschitz(model, {"theta": (0.0, 1.0)})
    with pytest.raises(InputError, match="samples"):
        lipschitz(model, good, samples=0)
    with pytest.raises(UnknownNameError):
        lipschitz(robodyn.load("joint"), box_around(robodyn.load("joint"), [0, 0], 1.0), u={"torque": 1.0})
    for radius in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(InputError, match="radius"):
            existence(model, [0.0, 0.0], radius=radius)
    for horizon in (0.0, -1.0, math.nan):
        with pytest.raises(InputError, match="horizon"):
            existence(model, [0.0, 0.0], radius=1.0, horizon=horizon)
    with pytest.raises(InputError, match="not finite"):
        existence(model, [math.nan, 0.0], radius=1.0)
    with pytest.raises(InputError, match="t_span"):
        picard(model, [0.0, 0.0], (1.0, 0.0))
    with pytest.raises(InputError, match="iterations"):
        picard(model, [0.0, 0.0], 1.0, iterations=0)
    with pytest.raises(InputError, match="grid"):
        picard(model, [0.0, 0.0], 1.0, grid=3)


def test_atan2_enclosure_of_a_point_is_sound():
    """Regression (found by the soundness property): mpmath's atan2 rounds y/x first, so its directed
    rounding alone could miss the true value by an ulp."""
    import mpmath
    import sympy

    from robodyn.analysis.intervals import enclose

    x = sympy.Symbol("x", real=True)
    enclosure = enclose(sympy.atan2(sympy.atan(x), x**3), {"x": (0.001953125, 0.001953125)})
    with mpmath.workdps(50):
        value = mpmath.atan2(mpmath.atan(mpmath.mpf(0.001953125)), mpmath.mpf(0.001953125) ** 3)
    assert enclosure.lo <= value <= enclosure.hi
