"""The compiled implicit methods (Radau IIA, RODAS4): constants, orders, published references, dense output,
events, stop points, batches, the Jacobian they use and the stiffness hint of the explicit methods."""

from __future__ import annotations

import math

import numpy as np
import pytest

import robodyn
import stiff_reference as sr
from robodyn.analysis.verify import verify
from robodyn.integrate.methods.implicit import RADAU_NODES, radau_constants, rodas4
from robodyn.signals import Step

IMPLICIT = ("radau", "rosenbrock")


# --- the methods' numbers -------------------------------------------------------------------------------
def test_radau_constants_are_the_published_ones() -> None:
    """[HW] IV.8: the real eigenvalue of A^-1, the complex pair, and RADAU5's error weights DD1..DD3."""
    k = radau_constants()
    assert k["gamma"] == pytest.approx(3.0 + 3.0 ** (2 / 3) - 3.0 ** (1 / 3), rel=1e-14)
    assert k["alpha"] == pytest.approx(3.0 - 0.5 * (3.0 ** (2 / 3) - 3.0 ** (1 / 3)), rel=1e-14)
    assert k["beta"] == pytest.approx(0.5 * (3.0 ** (5 / 6) + 3.0 ** (7 / 6)), rel=1e-14)
    s6 = math.sqrt(6.0)
    np.testing.assert_allclose(k["E"], np.array([-13.0 - 7.0 * s6, -13.0 + 7.0 * s6, -1.0]) / 3.0, rtol=1e-12)
    # Radau IIA: A's last row is b = ((16 - sqrt 6)/36, (16 + sqrt 6)/36, 1/9), the nodes are its row sums
    np.testing.assert_allclose(k["A"][2], [(16 - s6) / 36, (16 + s6) / 36, 1 / 9], rtol=1e-13)
    np.testing.assert_allclose(k["A"].sum(axis=1), RADAU_NODES, rtol=1e-13)
    block = k["TI"] @ np.linalg.inv(k["A"]) @ k["T"]  # the real and the complex system the kernel solves
    expected = np.array([[k["gamma"], 0, 0], [0, k["alpha"], -k["beta"]], [0, k["beta"], k["alpha"]]])
    np.testing.assert_allclose(block, expected, atol=1e-12)


def test_rodas4_satisfies_the_order_conditions() -> None:
    """Rosenbrock order conditions up to order 4 ([HW] IV.7, Table 7.1) with beta = alpha + gamma: a second,
    independent check of the typed coefficients, in the k-form ``(I - h gamma J) k_i = h f(..) + h J sum
    gamma_ij k_j``, recovered from the U-form the kernel uses (U = Gamma k)."""
    r = rodas4()
    g = 0.25
    C = r["c"]
    # U-form -> k-form: Gamma^-1 = I / gamma - C, alpha = A Gamma^-1, b = m^T Gamma^-1
    gamma_inverse = np.eye(6) / g - C
    Gamma = np.linalg.inv(gamma_inverse)
    alpha = r["a"] @ Gamma
    b = r["m"] @ Gamma
    beta = alpha + Gamma - g * np.eye(6)  # beta_ij = alpha_ij + gamma_ij below the diagonal
    a_i = alpha.sum(axis=1)
    beta_prime = beta.sum(axis=1)
    np.testing.assert_allclose(a_i, r["alpha"], atol=1e-12)
    np.testing.assert_allclose(Gamma.sum(axis=1), r["gamma_i"], atol=1e-12)
    conditions = {
        "1": (b.sum(), 1.0),
        "2": (b @ beta_prime, 0.5 - g),
        "3a": (b @ a_i**2, 1 / 3),
        "3b": (b @ beta @ beta_prime, 1 / 6 - g + g * g),
        "4a": (b @ a_i**3, 1 / 4),
        "4b": (b @ (a_i * (alpha @ beta_prime)), 1 / 8 - g / 3),
        "4c": (b @ beta @ a_i**2, 1 / 12 - g / 3),
        "4d": (b @ beta @ beta @ beta_prime, 1 / 24 - g / 2 + 1.5 * g * g - g**3),
    }
    for name, (value, target) in conditions.items():
        assert value == pytest.approx(target, abs=1e-12), name


# --- orders and accuracy ----------------------------------------------------------------------------------
def test_verify_observes_order_5_for_radau_and_4_for_rodas4() -> None:
    result = verify(robodyn.load("joint"), methods=IMPLICIT)
    orders = {check.method: check for check in result.checks}
    assert abs(orders["radau"].observed_order - 5) <= 0.3 and orders["radau"].passed
    assert abs(orders["rosenbrock"].observed_order - 4) <= 0.3 and orders["rosenbrock"].passed
    assert "radau" in result.table() and "rosenbrock" in result.table()


@pytest.mark.parametrize(("key", "rtol"), [("rober_1e11", 1e-8), ("vdpol", 1e-7)])
def test_radau_reaches_the_ivp_test_sets_solution(key: str, rtol: float) -> None:
    """The published reference solutions (IVP Test Set, tests/stiff_reference.py) to the requested tolerance:
    the worst component relative to the reference, floored by atol, within rtol."""
    problem = sr.problem(key)
    atol = np.asarray(problem.atol, dtype=float) * (rtol / problem.rtol)
    tr = robodyn.simulate(robodyn.load(str(problem.path)), problem.t_span, list(problem.x0), method="radau",
                          rtol=rtol, atol=atol)
    assert tr.stats.path == "compiled" and tr.stats.njev > 0 and tr.stats.nlu >= tr.stats.njev
    assert sr.relative_error(tr.final, problem.reference, atol) < rtol


def test_rosenbrock_reaches_robers_solution_at_1e5() -> None:
    problem = sr.problem("rober_1e5")
    tr = robodyn.simulate(robodyn.load(str(problem.path)), problem.t_span, list(problem.x0), method="rosenbrock",
                          rtol=problem.rtol, atol=problem.atol)
    assert sr.relative_error(tr.final, problem.reference, problem.floor) < problem.rtol


@pytest.mark.parametrize("method", IMPLICIT)
def test_dense_output_meets_the_tolerance(method: str) -> None:
    """Output at t_eval between steps (the collocation polynomial / Hermite cubic) within the tolerance on a
    stiff decay x' = -a (x - cos t) with its closed form."""
    a = 1000.0
    model = robodyn.SymbolicSystem(["x"], [], {"x": "-a*(x - cos(t))"}, parameters={"a": a}, name="stiff_decay")
    t = np.linspace(0.0, 2.0, 4001)
    tr = robodyn.simulate(model, 2.0, [0.0], method=method, rtol=1e-8, atol=1e-10, t_eval=t)
    A, B = a * a / (1 + a * a), a / (1 + a * a)
    exact = A * np.cos(t) + B * np.sin(t) - A * np.exp(-a * t)
    assert tr.stats.steps < 2000  # most outputs come from the dense output (radau ~180 steps, rosenbrock ~1300)
    assert np.abs(tr.x[:, 0] - exact).max() < 1e-7  # 10 rtol |x|: global error over [0, 2]


# --- events, stop points, batches --------------------------------------------------------------------------
@pytest.mark.parametrize("method", IMPLICIT)
def test_events_are_located_on_the_dense_output(method: str) -> None:
    pendulum = robodyn.load("pendulum")
    options = {"events": [robodyn.Event("theta", direction=-1)], "rtol": 1e-9, "atol": 1e-11}
    reference = robodyn.simulate(pendulum, 6.0, {"theta": 1.0}, method="dop853", rtol=1e-12, atol=1e-14,
                                 events=options["events"])
    tr = robodyn.simulate(pendulum, 6.0, {"theta": 1.0}, method=method, **options)
    assert len(tr.events) == len(reference.events) >= 2
    # the dense output's order (3) and rtol 1e-9 over a step of ~0.05: the crossing times to 1e-6
    np.testing.assert_allclose([e.t for e in tr.events], [e.t for e in reference.events], atol=1e-6)


@pytest.mark.parametrize("method", IMPLICIT)
def test_terminal_event_stops_the_run(method: str) -> None:
    ball = robodyn.SymbolicSystem(["h", "v"], [], {"h": "v", "v": "-9.81"}, name="falling")
    tr = robodyn.simulate(ball, 5.0, [10.0, 0.0], method=method, rtol=1e-10, atol=1e-12,
                          events=[robodyn.Event("h", terminal=True)])
    assert tr.t[-1] == pytest.approx(math.sqrt(2 * 10.0 / 9.81), abs=1e-9)
    assert tr.events[0].x[0] == pytest.approx(0.0, abs=1e-8)


@pytest.mark.parametrize("method", IMPLICIT)
def test_input_edges_are_stop_points(method: str) -> None:
    """A step input in the middle of a stiff linear joint: the run lands on the edge and matches the exact path."""
    joint = robodyn.load(str(sr.model_path("stiff_joint")))
    u = Step(1.234567, before=0.0, after=1e4)
    t = np.linspace(0.0, 2.0, 51)
    options = {"params": {"b": 2000.0}, "t_eval": t}
    exact = robodyn.simulate(joint, 2.0, [0.0, 0.0], u, method="exact", **options)
    tr = robodyn.simulate(joint, 2.0, [0.0, 0.0], u, method=method, rtol=1e-9, atol=1e-12, **options)
    np.testing.assert_allclose(tr.x, exact.x, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("method", IMPLICIT)
def test_batch_equals_single_runs(method: str) -> None:
    model = sr.load("vdpol")
    x0 = {"y1": [2.0, 1.5, -1.0], "y2": [0.0, 0.1, 0.5]}
    options = {"method": method, "rtol": 1e-8, "atol": 1e-10, "t_eval": np.linspace(0.0, 2.0, 21),
               "params": {"eps": 1e-3}}
    batch = robodyn.simulate(model, 2.0, x0, **options)
    for i in range(3):
        single = robodyn.simulate(model, 2.0, {"y1": x0["y1"][i], "y2": x0["y2"][i]}, **options)
        np.testing.assert_array_equal(batch.x[i], single.x)  # the same kernel core, bit for bit


# --- the Jacobian ------------------------------------------------------------------------------------------
def test_python_callables_run_with_a_differenced_jacobian() -> None:
    """A model of Python callables runs the same Radau (interpreted) with finite differences of f."""
    def f(t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> np.ndarray:
        return np.array([-0.04 * x[0] + 1e4 * x[1] * x[2], 0.04 * x[0] - 1e4 * x[1] * x[2] - 3e7 * x[1] ** 2,
                         3e7 * x[1] ** 2])

    python = robodyn.System(f, ["y1", "y2", "y3"], [], name="rober_python")
    tr = robodyn.simulate(python, 1e3, [1.0, 0.0, 0.0], method="radau", rtol=1e-7, atol=[1e-12, 1e-18, 1e-12])
    compiled = robodyn.simulate(sr.load("rober"), 1e3, [1.0, 0.0, 0.0], method="radau", rtol=1e-7,
                                atol=[1e-12, 1e-18, 1e-12])
    assert tr.stats.path == "interpreted" and compiled.stats.path == "compiled"
    assert tr.stats.nfev > compiled.stats.nfev  # the differences cost n evaluations per Jacobian
    np.testing.assert_allclose(tr.final, compiled.final, rtol=1e-6)


def test_state_feedback_enters_the_jacobian() -> None:
    """u = -K x makes the closed loop stiff; with du/dx = -K in the Jacobian Newton converges as fast as for the
    same loop written into the model: the Jacobian and LU counts match."""
    plant = robodyn.SymbolicSystem(["q", "v"], ["tau"], {"q": "v", "v": "tau"}, name="double_integrator")
    closed = robodyn.SymbolicSystem(["q", "v"], [], {"q": "v", "v": "-1e6*q - 2e3*v"}, name="closed_loop")
    feedback = robodyn.StateFeedback([[1e6, 2e3]])
    a = robodyn.simulate(plant, 1.0, [1.0, 0.0], feedback, method="radau", rtol=1e-8, atol=1e-12)
    b = robodyn.simulate(closed, 1.0, [1.0, 0.0], method="radau", rtol=1e-8, atol=1e-12)
    assert (a.stats.steps, a.stats.njev) == (b.stats.steps, b.stats.njev)
    np.testing.assert_allclose(a.final, b.final, rtol=1e-10, atol=1e-14)


# --- the stiffness hint ------------------------------------------------------------------------------------
def test_explicit_method_limited_by_stability_says_so() -> None:
    decay = robodyn.SymbolicSystem(["x"], [], {"x": "-1e5*(x - cos(t))"}, name="very_stiff_decay")
    tr = robodyn.simulate(decay, 1.0, [0.0], method="dopri5", rtol=1e-6)
    assert tr.stats.hint is not None and "method='radau'" in tr.stats.hint and "stiff" in tr.stats.hint
    implicit = robodyn.simulate(decay, 1.0, [0.0], method="radau", rtol=1e-6)
    assert implicit.stats.steps * 50 < tr.stats.steps and implicit.stats.hint is None


def test_the_hint_sees_the_closed_loop_of_state_feedback() -> None:
    """A high-gain feedback makes the pendulum stiff (poles -20 and -1e4); the model alone is not stiff."""
    upright = np.array([np.pi, 0.0])
    gain = robodyn.StateFeedback([[2.0e5, 1.0e4]], x_ref=upright)
    tr = robodyn.simulate(robodyn.load("pendulum"), 2.0, [np.pi + 0.3, 0.0], gain, method="dopri5")
    assert tr.stats.hint is not None and "|lambda| = 9.98e+03" in tr.stats.hint


def test_no_hint_when_accuracy_limits_the_step() -> None:
    tr = robodyn.simulate(robodyn.load("pendulum"), 100.0, {"theta": 1.0}, method="dopri5", rtol=1e-10)
    assert tr.stats.steps > 1000 and tr.stats.hint is None
