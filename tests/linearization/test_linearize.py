"""linearize(): exact paths against closed forms, central differences within their error estimate."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import sympy

import robodyn
from robodyn.base.errors import InputError
from robodyn.files.catalog import catalog_text
from robodyn.files.loading import read_model_text
from robodyn.linearization.linearize import linearize, operating_point

ROOT = Path(__file__).resolve().parents[2]

G = 9.81  # the catalog pendulum: m = 1, l = 1, I = 1


@pytest.mark.parametrize(("theta", "entry"), [(0.0, -G), (math.pi, G), (math.pi / 4, -G * math.cos(math.pi / 4))])
def test_pendulum_matches_closed_form(theta, entry):
    linear = linearize(robodyn.load("pendulum"), {"theta": theta, "theta_dot": 0.0})
    expected_a = np.array([[0.0, 1.0], [entry, 0.0]])  # d/dtheta of -m g l sin(theta) / I
    np.testing.assert_allclose(linear.A, expected_a, rtol=0, atol=1e-13)
    np.testing.assert_allclose(linear.B, [[0.0], [1.0]], rtol=0, atol=1e-13)
    assert linear.method == "manipulator" and linear.error_estimate == 0.0
    np.testing.assert_array_equal(linear.x_op, [theta, 0.0])


def test_central_differences_agree_within_their_estimate():
    symbolic = robodyn.load("double_pendulum")
    callable_model = robodyn.System(lambda t, x, u, p: symbolic.f(t, x, u), symbolic.states, symbolic.inputs,
                                    name="dp_callable")
    rng = np.random.default_rng(3)
    for _ in range(5):
        x, u = rng.uniform(-1.5, 1.5, 4), rng.uniform(-1, 1, 2)
        exact = linearize(symbolic, x, u)
        approx = linearize(callable_model, x, u)
        assert approx.method == "central"
        # The Richardson estimate bounds the truncation error; rounding adds ~eps^(2/3) ~ 4e-11 relative.
        bound = 10 * approx.error_estimate + 1e-9 * (1 + np.max(np.abs(exact.A)))
        assert np.max(np.abs(approx.A - exact.A)) <= bound
        assert np.max(np.abs(approx.B - exact.B)) <= bound


def test_linear_models_are_their_own_linearization():
    joint = robodyn.load("joint")
    first_order = joint.to_linear()
    for model in (joint, first_order):
        linear = linearize(model, [0.3, -0.2], [1.0])
        np.testing.assert_allclose(linear.A, first_order.A, rtol=0, atol=1e-12)
        np.testing.assert_allclose(linear.B, first_order.B, rtol=0, atol=1e-12)


def test_bad_input():
    pendulum = robodyn.load("pendulum")
    with pytest.raises(InputError, match="unknown linearization method"):
        linearize(pendulum, [0, 0], method="magic")
    with pytest.raises(InputError, match="not available"):
        linearize(pendulum, [0, 0], method="symbolic")
    with pytest.raises(robodyn.ShapeError):
        linearize(pendulum, [0, 0, 0])
    with pytest.raises(InputError, match="not finite"):
        linearize(pendulum, [math.nan, 0])


# --- exact paths: closed forms with parameters that tell m, g, l and I apart ---------------------------------
def pendulum_entry(parameters, theta):
    """d/dtheta of -(m g l / I) sin(theta): the closed form of A[1, 0] (I theta'' + m g l sin(theta) = tau)."""
    return -parameters["m"] * parameters["g"] * parameters["l"] / parameters["I"] * math.cos(theta)


def free_inertia_pendulum() -> robodyn.Model:
    """The catalog pendulum with I a free parameter (the catalog derives I = m l^2)."""
    return read_model_text(catalog_text("pendulum").replace("I: m*l**2", "I: 1.0"), "free_inertia.yaml")


@pytest.mark.parametrize("theta", [0.0, math.pi, math.pi / 4, -2.0])
@pytest.mark.parametrize("overrides", [{}, {"m": 2.0, "l": 0.5, "I": 0.3, "g": 9.80665}])
def test_pendulum_closed_form_with_parameters(theta, overrides):
    pendulum = free_inertia_pendulum().with_parameters(**overrides)
    linearize(robodyn.load("pendulum"), [theta, 0.0])  # warm the caches of the seed model first
    linear = linearize(pendulum, {"theta": theta, "theta_dot": 0.3}, {"tau": 0.7})
    parameters = pendulum.parameters
    # One division m g l cos / I in double precision: a few ulp of |entry| <= 33, far below 1e-13.
    np.testing.assert_allclose(linear.A, [[0.0, 1.0], [pendulum_entry(parameters, theta), 0.0]], rtol=0, atol=1e-13)
    np.testing.assert_allclose(linear.B, [[0.0], [1.0 / parameters["I"]]], rtol=0, atol=1e-13)
    np.testing.assert_array_equal(linear.C, np.eye(2))
    np.testing.assert_array_equal(linear.D, np.zeros((2, 1)))
    assert linear.states == ("theta", "theta_dot") and linear.inputs == ("tau",)


def test_params_override_is_not_served_from_the_cache():
    pendulum = robodyn.load("pendulum")
    seed = linearize(pendulum, [0.0, 0.0])
    heavy = linearize(pendulum, [0.0, 0.0], params={"g": 3 * G})  # (m cancels: I = m l^2 is derived)
    again = linearize(pendulum, [0.0, 0.0])
    assert heavy.A[1, 0] == pytest.approx(3 * seed.A[1, 0], rel=1e-15)
    np.testing.assert_array_equal(again.A, seed.A)


@pytest.mark.parametrize("spelling", [
    {"theta": 1, "theta_dot": 0},  # ints
    [1.0, 0.0], (1, 0.0), np.array([1.0, 0.0]), np.array([1, 0]),  # sequences and arrays
    {"theta": np.float64(1.0), "theta_dot": np.float32(0.0)},  # numpy scalars take the general path
])
def test_every_spelling_of_a_point_gives_the_same_result(spelling):
    pendulum = robodyn.load("pendulum")
    reference = linearize(pendulum, {"theta": 1.0, "theta_dot": 0.0}, {"tau": 0.0})
    for u in (None, {}, {"tau": 0}, [0.0], 0.0):
        linear = linearize(pendulum, spelling, u, t=0)
        np.testing.assert_array_equal(linear.A, reference.A)
        np.testing.assert_array_equal(linear.x_op, [1.0, 0.0])
        np.testing.assert_array_equal(linear.u_op, [0.0])


def test_results_are_read_only_and_own_their_point():
    x = np.array([0.5, 0.1])
    linear = linearize(robodyn.load("pendulum"), x)
    for array in (linear.A, linear.B, linear.C, linear.D, linear.x_op, linear.u_op):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 1.0
    x[0] = 99.0
    assert linear.x_op[0] == 0.5


def test_symbolic_system_with_nonlinear_outputs():
    model = robodyn.SymbolicSystem(["q", "v"], ["u"], {"q": "v", "v": "u*cos(q) - v**3"},
                                   outputs={"height": "sin(q)", "power": "u*v"}, name="toy")
    linear = linearize(model, [0.4, -0.5], [2.0])
    q, v, u = 0.4, -0.5, 2.0  # closed forms of the four Jacobians
    np.testing.assert_allclose(linear.A, [[0.0, 1.0], [-u * math.sin(q), -3 * v**2]], rtol=0, atol=1e-15)
    np.testing.assert_allclose(linear.B, [[0.0], [math.cos(q)]], rtol=0, atol=1e-15)
    np.testing.assert_allclose(linear.C, [[math.cos(q), 0.0], [0.0, u]], rtol=0, atol=1e-15)
    np.testing.assert_allclose(linear.D, [[0.0], [v]], rtol=0, atol=1e-15)
    assert linear.method == "symbolic" and linear.error_estimate == 0.0
    central = linearize(model, [0.4, -0.5], [2.0], method="central")
    assert central.method == "central" and central.error_estimate > 0
    np.testing.assert_array_equal(central.C, linear.C)  # outputs of a symbolic model stay exact


# --- catalog: exact against complex step and central differences of independent complex-capable callables ---
def complex_capable(model: robodyn.ManipulatorSystem) -> robodyn.System:
    """f = [q', M(q)^-1 r] with M and r lambdified by plain sympy/numpy and solved by numpy.linalg.solve:
    independent of robodyn's evaluators, and it accepts complex states and inputs (and batches: no)."""
    args = (model.x_symbols, model.u_symbols, model.p_symbols)
    mass = sympy.lambdify(args, model.mass_expr, modules="numpy", dummify=True)
    rhs = sympy.lambdify(args, model.rhs_expr, modules="numpy", dummify=True)
    c = model.n_coordinates

    def f(t, x, u, p):
        accel = np.linalg.solve(np.array(mass(x, u, p)), np.array(rhs(x, u, p)).reshape(c))
        return np.concatenate([x[c:], accel])

    return robodyn.System(f, model.states, model.inputs, parameters=dict(model.parameters), name=f"{model.name}_py")


@pytest.mark.parametrize("name", sorted(robodyn.CATALOG))
def test_catalog_exact_agrees_with_complex_step_and_central(name):
    model = robodyn.load(name)
    wrapped = complex_capable(model)
    rng = np.random.default_rng(sum(map(ord, name)))
    for _ in range(3):
        x, u = rng.uniform(-1.5, 1.5, model.n_states), rng.uniform(-1, 1, model.n_inputs)
        exact = linearize(model, x, u)
        assert exact.method == "manipulator" and exact.error_estimate == 0.0
        # Rounding allowance: both sides are double-precision evaluations of well-conditioned formulas
        # (cond(M) < 1e3 at these points), i.e. errors of a few hundred ulp of the largest entry; 1e-12 is
        # ~4500 ulp, far below the truncation error of central differences (~1e-9 here).
        rounding = 1e-12 * (1.0 + max(np.abs(exact.A).max(), np.abs(exact.B).max()))
        for method in ("complex", "central"):
            approx = linearize(wrapped, x, u, method="auto" if method == "complex" else method)
            assert approx.method == method
            bound = 10 * approx.error_estimate + rounding
            assert np.abs(approx.A - exact.A).max() <= bound, method
            assert np.abs(approx.B - exact.B).max() <= bound, method
        assert approx.error_estimate < 1e-6  # the central estimate is informative, not vacuous


def test_complex_step_error_estimate_is_of_order_h_squared():
    wrapped = complex_capable(robodyn.load("double_pendulum"))
    linear = linearize(wrapped, [0.3, -0.2, 0.1, 0.5], [0.1, 0.0])
    assert linear.method == "complex"
    assert 0.0 < linear.error_estimate < 1e-30  # (1e-20 max(1, |z|))^2 times max(1, max |J|) ~ 1e-39


# --- which method a callable gets ----------------------------------------------------------------------------
class Counted:
    """A pendulum right-hand side that counts its calls; ``style`` picks what it accepts."""

    def __init__(self, style):
        self.style, self.calls = style, 0

    def __call__(self, t, x, u, p):
        self.calls += 1
        if self.style == "math":  # math.sin rejects complex numbers and arrays
            return [x[1], u[0] - 9.81 * math.sin(x[0])]
        if self.style == "real_part":  # accepts complex, silently drops the imaginary part of sin
            return np.array([x[1], u[0] - 9.81 * np.sin(np.real(x[0]))])
        if self.style == "single":  # complex-capable, one point only (assigning an array to x_dot[1] fails)
            x_dot = np.empty(2, dtype=np.result_type(x, u))
            x_dot[0], x_dot[1] = x[1], u[0] - 9.81 * np.sin(x[0])
            return x_dot
        return np.array([x[1], u[0] - 9.81 * np.sin(x[0])])  # "numpy": complex and batches


EXACT_A10 = -9.81 * math.cos(0.7)


@pytest.mark.parametrize(("style", "method", "batch"), [
    ("math", "central", False), ("real_part", "central", True), ("single", "complex", False),
    ("numpy", "complex", True)])
def test_auto_probes_once_and_picks_complex_step_only_when_it_is_right(style, method, batch):
    f = Counted(style)
    model = robodyn.System(f, ["theta", "omega"], ["tau"], name=style)
    first = linearize(model, [0.7, 0.2], [0.1])
    assert first.method == method
    probes = f.calls
    f.calls = 0
    second = linearize(model, [0.7, 0.2], [0.1])
    # d = n + m = 3 variables: complex step n + m points, central 4 (n + m); a batch is one call.
    assert f.calls == (1 if batch else 3 if method == "complex" else 12)
    assert probes > f.calls  # the probes ran the first time only (verdicts cached on the model)
    tolerance = 1e-14 if method == "complex" else 10 * second.error_estimate + 1e-10
    assert abs(second.A[1, 0] - EXACT_A10) <= tolerance
    np.testing.assert_array_equal(second.A, first.A)


def test_explicit_complex_is_refused_for_callables_that_reject_it():
    for style in ("math", "real_part"):
        with pytest.raises(InputError, match="does not accept complex input"):
            linearize(robodyn.System(Counted(style), ["a", "b"], ["u"]), [0.1, 0.0], method="complex")
    with pytest.raises(InputError, match="does not accept complex input"):  # cho_solve casts to float
        linearize(robodyn.load("pendulum"), [0.1, 0.0], method="complex")


def test_vectorized_central_equals_the_loop_with_one_call_per_jacobian():
    batched, looped = Counted("numpy"), Counted("single")
    outputs = {"calls": 0}

    def h(t, x, u, p):  # batch-capable outputs y = [sin(theta), omega * tau]
        outputs["calls"] += 1
        return np.array([np.sin(x[0]), x[1] * u[0]])

    models = [robodyn.System(f, ["theta", "omega"], ["tau"], h=h, outputs=["y", "power"]) for f in (batched, looped)]
    point = ([0.7, 0.2], [0.1])
    for model in models:
        linearize(model, *point, method="central")
    batched.calls = looped.calls = outputs["calls"] = 0
    fast, slow = (linearize(model, *point, method="central") for model in models)
    assert batched.calls == 1 and looped.calls == 12 and outputs["calls"] == 2  # h batches for both models
    # Same points and formulas; vectorized and scalar ufuncs may differ by an ulp of f (~2e-15), which a
    # central difference divides by 2h ~ 1.2e-5: 1e-9 covers that.
    for label in "ABCD":
        np.testing.assert_allclose(getattr(fast, label), getattr(slow, label), rtol=0, atol=1e-9)
    np.testing.assert_allclose(fast.C, [[math.cos(0.7), 0.0], [0.0, 0.1]], rtol=0, atol=10 * fast.error_estimate)
    np.testing.assert_allclose(fast.D, [[0.0], [0.2]], rtol=0, atol=10 * fast.error_estimate + 1e-10)


def test_complex_f_with_an_h_that_rejects_complex_uses_central_for_h():
    model = robodyn.System(Counted("numpy"), ["theta", "omega"], ["tau"],
                           h=lambda t, x, u, p: [math.sin(x[0])], outputs=["y"])
    linear = linearize(model, [0.7, 0.2], [0.1])
    assert linear.method == "complex"
    assert linear.error_estimate > 1e-20  # the central estimate of dh/dx
    assert abs(linear.C[0, 0] - math.cos(0.7)) <= 10 * linear.error_estimate + 1e-10
    assert abs(linear.A[1, 0] - EXACT_A10) <= 1e-14


def test_a_callable_returning_the_wrong_shape_is_a_shape_error():
    model = robodyn.System(lambda t, x, u, p: [x[0], x[1], 0.0], ["a", "b"])
    with pytest.raises(robodyn.ShapeError, match=r"expected \(2,\)"):
        linearize(model, [0.0, 0.0])


# --- bad input ----------------------------------------------------------------------------------------------
def test_bad_points():
    pendulum = robodyn.load("pendulum")
    with pytest.raises(robodyn.ShapeError):
        linearize(pendulum, [0.0])
    with pytest.raises(robodyn.UnknownNameError, match="did you mean 'theta'"):
        linearize(pendulum, {"thta": 0.0, "theta_dot": 0.0})
    with pytest.raises(InputError, match="missing state"):
        linearize(pendulum, {"theta": 0.0})
    with pytest.raises(robodyn.UnknownNameError):
        linearize(pendulum, [0.0, 0.0], {"force": 1.0})
    with pytest.raises(robodyn.ShapeError):
        linearize(pendulum, [0.0, 0.0], [1.0, 2.0])
    for bad in (math.inf, -math.inf, math.nan):
        with pytest.raises(InputError, match="must be finite"):
            linearize(pendulum, {"theta": 0.0, "theta_dot": bad})
        with pytest.raises(InputError, match="not finite"):
            linearize(pendulum, [0.0, 0.0], [bad])
        with pytest.raises(InputError):
            linearize(pendulum, [0.0, 0.0], t=bad)
    with pytest.raises(InputError):
        linearize(pendulum, [0.0, 0.0], params={"m": math.nan})
    with pytest.raises(InputError):
        linearize(pendulum, ["a", 0.0])


@pytest.mark.parametrize(("name", "params", "x"), [
    ("pendulum", {"m": 0.0}, [0.1, 0.0]),  # 1x1: M = I = m l^2 = 0
    ("pendulum", {"m": -1.0}, [0.1, 0.0]),  # 1x1: negative
    ("double_pendulum", {"l2": 0.0}, [0.1, 0.2, 0.0, 0.0]),  # 2x2: second row and column vanish
    ("mbk", {"m": 0.0}, np.zeros(6)),  # 3x3: Cholesky path
])
def test_singular_mass_matrix_at_the_point(name, params, x):
    with pytest.raises(robodyn.SingularMatrixError, match="not positive definite"):
        linearize(robodyn.load(name), x, params=params)


def test_mass_matrix_singular_only_at_some_points():
    model = robodyn.LagrangianSystem(["q"], ["u"], kinetic="m*q**2*q_dot**2/2", forces={"q": "u"},
                                     parameters={"m": 1.0})
    assert linearize(model, [1.0, 0.5]).method == "manipulator"
    with pytest.raises(robodyn.SingularMatrixError, match=r"q=\{'q': 0.0\}"):
        linearize(model, [0.0, 0.5])


def test_non_differentiable_point():
    model = robodyn.SymbolicSystem(["x"], ["u"], {"x": "sqrt(x) + u"})  # d/dx sqrt(x) = 1/(2 sqrt(x))
    assert linearize(model, [4.0]).A[0, 0] == 0.25
    with np.errstate(divide="ignore"), pytest.raises(InputError, match="non-finite entries in A"):
        linearize(model, [0.0])


def test_unknown_and_unavailable_methods():
    pendulum = robodyn.load("pendulum")
    for method in ("magic", "Central", ""):
        with pytest.raises(InputError, match="unknown linearization method"):
            linearize(pendulum, [0.0, 0.0], method=method)
    with pytest.raises(InputError, match="not available"):
        linearize(pendulum, [0.0, 0.0], method="linear")
    callable_model = robodyn.System(Counted("numpy"), ["a", "b"], ["u"])
    for method in ("symbolic", "manipulator", "linear"):
        with pytest.raises(InputError, match="not available"):
            linearize(callable_model, [0.0, 0.0], method=method)


def test_a_batch_that_drops_complex_parts_falls_back_to_single_complex_calls():
    def f(t, x, u, p):  # batches of real points are fine, batches of complex points come back real
        if np.ndim(x) == 2:
            return np.array([x[1], u[0] - 9.81 * np.sin(x[0])]).real
        return np.array([x[1], u[0] - 9.81 * np.sin(x[0])])

    linear = linearize(robodyn.System(f, ["theta", "omega"], ["tau"]), [0.7, 0.2], [0.1])
    assert linear.method == "complex"
    assert abs(linear.A[1, 0] - EXACT_A10) <= 1e-14 and linear.A[0, 1] == 1.0


# --- the operating point's missing values: one rule with the CLI ----------------------------------------------
def test_hold_takes_the_holding_input_and_zero_velocities():
    pendulum = robodyn.load("pendulum").with_parameters(m=2.0, l=0.5)
    held = linearize(pendulum, {"theta": 0.3}, "hold")
    np.testing.assert_array_equal(held.x_op, [0.3, 0.0])
    assert held.u_op[0] == pytest.approx(2.0 * G * 0.5 * math.sin(0.3), rel=1e-14)  # m g l sin(theta)
    explicit = linearize(pendulum, [0.3, 0.0], held.u_op)
    np.testing.assert_array_equal(held.A, explicit.A)


def test_explicit_and_none_inputs_are_unchanged():
    pendulum = robodyn.load("pendulum")
    np.testing.assert_array_equal(linearize(pendulum, [0.3, 0.0]).u_op, [0.0])
    np.testing.assert_array_equal(linearize(pendulum, [0.3, 0.0], {"tau": 0.5}).u_op, [0.5])
    with pytest.raises(InputError, match="missing state"):
        linearize(pendulum, {"theta": 0.3})  # without "hold" x names every state
    with pytest.raises(InputError, match="'hold'"):
        linearize(pendulum, [0.3, 0.0], "held")


def test_operating_point_keeps_given_inputs_and_falls_back_to_zero():
    double = robodyn.load("double_pendulum")
    x, held = operating_point(double, {"theta1": 0.4, "theta2": -0.2})
    assert x.tolist() == [0.4, -0.2, 0.0, 0.0]
    assert np.max(np.abs(double.f(0.0, x, held))) < 1e-12 and np.all(held != 0.0)  # both torques hold the arm
    _, given = operating_point(double, x, {"tau1": held[0] + 1.0})
    np.testing.assert_array_equal(given, [held[0] + 1.0, 0.0])  # tau2 alone cannot hold it: 0
    moving = operating_point(robodyn.load("pendulum"), {"theta": 0.3, "theta_dot": 1.0})
    np.testing.assert_array_equal(moving[1], [0.0])  # nothing holds a moving pendulum: 0


# --- the lean path: float64 vectors at the default parameters (linearization/lean.py) -----------------------
def _bound(model):
    """This thread's binding of the lean path (robodyn.linearization.lean), None before the first call."""
    from robodyn.linearization.lean import _LOCAL

    return getattr(model.memo().get(_LOCAL), "bound", None)


@pytest.mark.parametrize("name", ["pendulum", "double_pendulum", "cart_pole", "joint", "two_link_arm",
                                  "examples/two_link_arm.urdf"])
def test_the_lean_path_gives_the_general_paths_numbers(name):
    """Float64 vectors take the bound linearization (machine code writing into the result's row for the robots on
    the tape); a list (the general path) gives the same bits, fields and units; the lean result owns its read-only
    arrays."""
    model = robodyn.load(str(ROOT / name) if name.endswith(".urdf") else name)
    rng = np.random.default_rng(5)
    for _ in range(3):
        x, u = rng.uniform(-1, 1, model.n_states), rng.uniform(-1, 1, model.n_inputs)
        lean, general = linearize(model, x, u), linearize(model, x.tolist(), u.tolist())
        for label in ("A", "B", "C", "D", "x_op", "u_op"):
            np.testing.assert_array_equal(getattr(lean, label), getattr(general, label))
            assert not getattr(lean, label).flags.writeable
        assert (lean.method, lean.error_estimate, lean.states, lean.name, lean.declared_units, lean.dt) == \
            (general.method, general.error_estimate, general.states, general.name, general.declared_units, general.dt)
        x[0] += 1.0
        assert lean.x_op[0] == general.x_op[0]  # the point was copied
    bound = _bound(model)
    assert bound is not None and (bound.call is not None) == ("two_link_arm" in name)  # the robots: machine code


def test_the_lean_path_steps_aside_for_everything_else():
    """Parameters, another time, a non-finite point and a singular mass matrix go the general way, with its
    messages."""
    model = robodyn.load("pendulum")
    x = np.array([0.3, 0.0])
    heavy = linearize(model, x, params={"m": 2.0})  # I = m l**2 follows
    np.testing.assert_allclose(heavy.A, linearize(model, x).A, rtol=0, atol=1e-15)  # I theta'' = -m g l sin
    later = linearize(model, x, t=1.0)
    np.testing.assert_array_equal(later.A, linearize(model, x).A)
    with pytest.raises(InputError, match="finite"):
        linearize(model, np.array([np.nan, 0.0]))
    with pytest.raises(InputError):
        linearize(robodyn.load("pendulum"), np.array([0.0, 0.0]), np.array([np.inf]))


@pytest.mark.parametrize("name", ["double_pendulum", "two_link_arm"])
def test_the_lean_path_is_safe_in_threads(name):
    """Each thread has its own binding and arena (the compiled code runs without the GIL): concurrent calls give
    every point its own numbers."""
    from concurrent.futures import ThreadPoolExecutor

    model = robodyn.load(name)
    points = np.random.default_rng(2).uniform(-1, 1, (400, 4))
    expected = [linearize(model, x.tolist()) for x in points]
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda x: linearize(model, x), points))
    for a, b in zip(found, expected):
        np.testing.assert_array_equal(a.A, b.A)
        np.testing.assert_array_equal(a.B, b.B)
        np.testing.assert_array_equal(a.x_op, b.x_op)


def test_a_parameter_copy_is_not_served_the_originals_bound():
    """Parameter copies share the model's memo: the lean path's held linearization is its own copy's."""
    model = robodyn.load("pendulum")
    x = np.array([0.2, 0.0])
    original = linearize(model, x)
    short = model.with_parameters({"l": 0.5})
    assert linearize(short, x).A[1, 0] == pytest.approx(-G * math.cos(0.2) / 0.5, rel=1e-14)  # I = m l^2
    np.testing.assert_array_equal(linearize(model, x).A, original.A)
    np.testing.assert_array_equal(linearize(short, x).A, linearize(short, x.tolist()).A)


@pytest.mark.parametrize("name", ["double_pendulum", "two_link_arm"])
def test_lean_results_keep_their_numbers_across_arenas(name):
    """The lean path writes each result into the next row of a shared block, a new block when one is used up: every
    result keeps its own numbers (no row written twice) however many follow it, and stays read-only."""
    model = robodyn.load(name)
    linearize(model, np.zeros(4))
    rows = _bound(model).rows
    assert rows > 1
    points = np.random.default_rng(8).uniform(-1, 1, (3 * rows + 5, 4))  # three blocks and a part
    results = [linearize(model, x) for x in points]
    kept = results[::7]
    del results  # the blocks of results dropped are freed; the kept ones keep theirs
    for x, lean in zip(points[::7], kept):
        general = linearize(model, x.tolist())
        for label in ("A", "B", "C", "D", "x_op", "u_op"):
            np.testing.assert_array_equal(getattr(lean, label), getattr(general, label))
            assert not getattr(lean, label).flags.writeable
        np.testing.assert_array_equal(lean.x_op, x)
    assert not any(np.shares_memory(a.A, b.A) for a, b in itertools.pairwise(kept))
