"""Forward sensitivities (robodyn.integrate.paths.sensitivities): ``simulate(..., sensitivities=[...])``.

Every number is checked against an independent reference:

- central differences of whole simulations (Richardson-extrapolated, so that the difference's own error is far below
  what is asserted) for a first-order file, the Lagrangian pendulum, a chain, a diagram, a Python-callable System, and
  on every path (explicit, fixed-step, implicit, interpreted, composed calls, batches, state feedback, outputs);
- closed forms for linear systems (d/dx0 of e^{At} x0 is e^{At}; x' = -a x gives dx/da = -t x0 e^{-at});
- SUNDIALS CVODES's forward sensitivities through CasADi: tests/integrate/paths/test_sensitivities_cvodes.py.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.linalg

import robodyn
from robodyn.base.errors import InputError, ShapeError, UnknownNameError
from robodyn.signals import StateFeedback

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _reference(model: Any, name: str, t_final: float, x0: Any, u: Any = None, method: str = "dop853",
               **options: Any) -> np.ndarray:
    """d x(t_final) / d name by central differences of whole simulations at rtol 1e-13, Richardson-extrapolated.

    With D(h) the central difference, (4 D(h/2) - D(h)) / 3 removes the h^2 term: the truncation left is O(h^4) ~
    1e-12 relative for h = 1e-3 of the value (1e-3 for an initial state), and the simulations' error (~1e-13 relative,
    smooth in the parameter for the same step sequence, else ~1e-13 noise) divided by h/2 is ~2e-10. So the
    reference is good to ~1e-9 relative, well below the 1e-7 the tests assert.
    """
    base = name.removesuffix("(0)")
    values = dict(model.parameters)
    state = np.array(model.state_vector(x0) if x0 is not None else np.zeros(model.n_states), dtype=float)

    def final(step: float) -> np.ndarray:
        if base in values:
            params = {base: values[base] + step}
            start = state
        else:
            params, start = None, state.copy()
            start[model.states.index(base)] += step
        run = robodyn.simulate(model, t_final, start, u, params=params, method=method, rtol=1e-13, atol=1e-15,
                               t_eval=[t_final], **options)
        return np.asarray(run.x[-1])

    h = 1e-3 * (abs(values[base]) or 1.0) if base in values else 1e-3

    def central(step: float) -> np.ndarray:
        return (final(step) - final(-step)) / (2 * step)

    return (4 * central(h / 2) - central(h)) / 3


def _relative(got: np.ndarray, expected: np.ndarray) -> float:
    """|got - expected| / |expected| in the 2-norm: one number per sensitivity vector."""
    return float(np.linalg.norm(np.asarray(got) - expected) / np.linalg.norm(expected))


def _check(model: Any, names: list[str], t_final: float, x0: Any, u: Any = None, method: str = "dopri5",
           tolerance: float = 1e-7, **options: Any) -> robodyn.Trajectory:
    """The sensitivities of a run at rtol 1e-11 against :func:`_reference`: the run's own error (~1e-10 relative at
    that rtol) and the reference's (~1e-9) are both well inside ``tolerance``."""
    run = robodyn.simulate(model, t_final, x0, u, method=method, rtol=1e-11, atol=1e-13, sensitivities=names,
                           t_eval=[t_final], **options)
    assert isinstance(run, robodyn.Trajectory)
    for name in run.sensitivity_names:
        expected = _reference(model, name, t_final, x0, u, **options)
        assert _relative(run.sensitivity(name)[-1], expected) < tolerance, name
    return run


# --- (a) central differences of whole simulations, several kinds and paths --------------------------------------------
def test_a_first_order_file_and_its_outputs() -> None:
    model = robodyn.load(str(EXAMPLES / "joint_first_order.yaml"))
    run = _check(model, ["J", "b", "k", "x0"], 1.5, [0.1, 0.0], 1.0)
    assert run.sensitivity_names == ("J", "b", "k", "q(0)", "qd(0)")
    assert run.sensitivity_method == "exact (symbolic)" and run.stats.path == "compiled"
    # the output angle = q: its sensitivity is the state's row, through the generated out_fn
    np.testing.assert_array_equal(run.output_sensitivity("k")[:, 0], run.sensitivity("k")[:, 0])
    assert run.output_sensitivity("k").shape == (1, 1)


def test_the_lagrangian_pendulum_with_respect_to_l_through_its_derived_inertia() -> None:
    """I = m l^2 is derived: d/dl includes dI/dl (a missing chain-rule term would be an O(1) error)."""
    model = robodyn.load("pendulum")
    run = _check(model, ["l", "x0"], 3.0, [1.0, 0.0])
    assert run.sensitivity_method == "exact (manipulator)"
    assert run.sensitivity("theta").shape == (1, 2) and run.sensitivity("theta(0)") is not None


def test_a_chain_on_the_tape() -> None:
    model = robodyn.load("two_link_arm")
    run = _check(model, ["m2", "lc2", "l1", "shoulder"], 1.0, [0.3, -0.2, 0.0, 0.0])
    assert "tape" in (run.sensitivity_method or "")


def test_a_diagram_from_the_examples_with_an_implicit_method() -> None:
    model = robodyn.load(str(EXAMPLES / "motor_joint_pid.yaml"))
    run = _check(model, ["pid.kp", "motor.R", "plant.k", "plant.q"], 0.5, None, 1.0, method="radau")
    assert run.sensitivity_method == "exact (diagram)"


def test_a_diagram_across_the_corners_of_a_saturation() -> None:
    """The joint under a PID whose output is clipped: the run stops and restarts at the saturation's corners (its
    switching events); f is continuous there, so the sensitivities need no jump and match the reference."""
    from robodyn.diagrams.blocks.library import make_block

    diagram = robodyn.Diagram({"plant": robodyn.load("joint"), "pid": make_block("pid", {"kp": 20, "ki": 5, "kd": 1}),
                               "sat": make_block("saturation", {"lower": -2.0, "upper": 2.0})},
                              ["pid.u -> sat.u", "sat.y -> plant.u", "plant.q -> pid.y"], inputs={"r": "pid.r"},
                              outputs={"q": "plant.q"})
    assert diagram.switching_events()
    _check(diagram, ["pid.kp", "plant.k", "sat.upper"], 2.0, None, {"r": 1.0})


def _callable_pendulum() -> robodyn.System:
    return robodyn.System(lambda t, x, u, p: np.array([x[1], -p[0] * np.sin(x[0]) - p[1] * x[1] + u[0]]),
                          ["q", "v"], ["tau"], parameters={"g": 9.81, "c": 0.3}, name="callable")


@pytest.mark.parametrize("method", ["dopri5", pytest.param("radau", marks=pytest.mark.slow)])
def test_a_python_callable_by_central_differences_says_so(method: str) -> None:
    """Central differences along each direction (step eps^(1/3) scaled) are accurate to ~1e-10 per evaluation;
    integrated, the sensitivities still agree with the reference to ~1e-8."""
    run = _check(_callable_pendulum(), ["g", "c", "x0"], 2.0, [1.0, 0.0], 0.2, method=method)
    assert run.sensitivity_method == "central differences" and run.stats.path == "interpreted"


def test_central_differences_scale_their_step_to_a_small_parameter() -> None:
    """x' = -(a^3 / a0^2) x with a = a0 = 2e-4 over 1000 s: x = x0 e^{-a0 t}, dx/da = -3 t x0 e^{-a0 t}. The central
    difference of a^3 is off by h^2 / (3 a^2) relative: a step of eps^(1/3) ~ 6e-6 taken absolutely (3% of a) would
    miss by ~1e-3; scaled to a, by ~1e-11."""
    decay = robodyn.System(lambda t, x, u, p: -(p[0] ** 3 / 4e-8) * x, ["x"], parameters={"a": 2e-4},
                           name="slow_decay")
    times = np.array([0.0, 500.0, 1000.0])
    run = robodyn.simulate(decay, 1000.0, [2.0], rtol=1e-11, atol=1e-13, t_eval=times, sensitivities=["a", "x"])
    assert run.sensitivity_method == "central differences"
    np.testing.assert_allclose(run.sensitivity("a")[:, 0], -3 * times * 2.0 * np.exp(-2e-4 * times), rtol=1e-8,
                               atol=1e-12)
    np.testing.assert_allclose(run.sensitivity("x")[:, 0], np.exp(-2e-4 * times), rtol=1e-8)


def test_fixed_step_sensitivities_are_the_derivative_of_the_discrete_map() -> None:
    """rk4 at a fixed dt: S follows the same steps, so it equals the derivative of the rk4 solution itself (central
    differences of rk4 runs at the same dt; the variational equation of an explicit Runge-Kutta step is the step of
    the variational equation), to ~1e-9."""
    model = robodyn.load("pendulum")
    run = robodyn.simulate(model, 1.0, [1.0, 0.0], method="rk4", dt=0.01, sensitivities=["l"])
    h = 1e-4

    def final(step: float) -> np.ndarray:
        return np.asarray(robodyn.simulate(model, 1.0, [1.0, 0.0], method="rk4", dt=0.01,
                                           params={"l": 1.0 + step}).x[-1])

    expected = (final(h) - final(-h)) / (2 * h)
    assert _relative(run.sensitivity("l")[-1], expected) < 1e-7


def test_rosenbrock_needs_and_gets_the_exact_jacobian_of_the_sensitivity_system() -> None:
    """RODAS4's order rests on the exact Jacobian: with f_xx S left out it took 300x the plain run's steps (measured);
    the generated code's Jacobian by forward mode keeps them within 2x (1.4x measured: the error test covers S too)."""
    model = robodyn.load("pendulum")
    run = _check(model, ["l", "theta"], 2.0, [1.0, 0.0], method="rosenbrock")
    plain = robodyn.simulate(model, 2.0, [1.0, 0.0], method="rosenbrock", rtol=1e-11, atol=1e-13)
    assert run.stats.steps < 2 * plain.stats.steps


def test_inputs_given_as_python_functions_of_time_run_interpreted_with_exact_derivatives() -> None:
    model = robodyn.load("pendulum")
    run = _check(model, ["l"], 2.0, [0.5, 0.0], {"tau": lambda t: 0.3 * math.sin(2 * t)})
    assert run.stats.path == "interpreted" and run.sensitivity_method == "exact (manipulator)"


def test_state_feedback_moves_the_inputs_with_the_state() -> None:
    """u = -K x: S' = (f_x - f_u K) S + f_p; leaving -f_u K out would be an O(1) error."""
    model = robodyn.load("pendulum")
    gain = StateFeedback(np.array([[8.0, 2.0]]))
    _check(model, ["l", "x0"], 2.0, [0.5, 0.0], gain)
    _check(model, ["l"], 2.0, [0.5, 0.0], gain, method="radau")


def test_the_composed_path_for_code_that_is_not_straight_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain whose tape is not written out (a larger one than this, or with many directions: TAPE_BUDGET) calls its
    rhs, jac and jacp (numba): the same sensitivities, and Radau with the block-diagonal Newton matrix."""
    from robodyn.model.derived import sensitivity_code

    monkeypatch.setattr(sensitivity_code, "TAPE_BUDGET", 0)
    model = robodyn.load("two_link_arm")
    memo = model.memo()
    kept = memo.pop("sensitivity models", None)  # the models made here are the composed ones: not for other tests
    try:
        run = _check(model, ["m2", "elbow"], 1.0, [0.3, -0.2, 0.0, 0.0], method="radau")
        assert all(m.jacobian_method == "block diagonal" for m in memo["sensitivity models"].values())
        assert run.stats.path == "compiled"
        with pytest.raises(InputError, match="rosenbrock"):
            robodyn.simulate(model, 1.0, [0.3, -0.2, 0.0, 0.0], method="rosenbrock", sensitivities=["m2"])
    finally:
        memo.pop("sensitivity models", None)
        if kept is not None:
            memo["sensitivity models"] = kept


@pytest.mark.slow
def test_a_mechanical_model_above_the_unrolled_solve() -> None:
    """Seven masses on springs: M q'' + K q = 0 solved on work arrays (not straight-line): the composed path with the
    manipulator's jacp of loops, against the reference."""
    n = 7
    stiffness = [[("2*k" if i == j else "-k" if abs(i - j) == 1 else 0) for j in range(n)] for i in range(n)]
    mass = [[("m" if i == j else 0) for j in range(n)] for i in range(n)]
    model = robodyn.MechanicalSystem([f"q{i}" for i in range(n)], [], mass, stiffness=stiffness,
                                     input_matrix=np.zeros((n, 0)), parameters={"m": 1.0, "k": 3.0})
    x0 = np.zeros(2 * n)
    x0[0] = 0.2
    _check(model, ["m", "k"], 1.0, x0, method="dopri5")


# --- outputs ----------------------------------------------------------------------------------------------------------
def test_output_sensitivities_of_a_kinematic_output_on_the_tape() -> None:
    """dy/dp = h_x S + h_p for the tool position (it depends on l1 directly and through the motion), against central
    differences of the simulated outputs."""
    model = robodyn.load(str(EXAMPLES / "arm_with_tip.yaml"))
    x0 = [0.3, -0.2, 0.0, 0.0]
    run = robodyn.simulate(model, 0.8, x0, rtol=1e-11, atol=1e-13, sensitivities=["l1", "m2"], t_eval=[0.8])

    def outputs(value: float) -> np.ndarray:
        return np.asarray(robodyn.simulate(model, 0.8, x0, rtol=1e-13, atol=1e-15, method="dop853", t_eval=[0.8],
                                           params={"l1": value}).y[-1])

    h = 1e-3
    expected = (4 * (outputs(1 + h / 2) - outputs(1 - h / 2)) / h - (outputs(1 + h) - outputs(1 - h)) / (2 * h)) / 3
    assert _relative(run.output_sensitivity("l1")[-1], expected) < 1e-7
    assert run.output_sensitivity("m2").shape == (1, model.n_outputs)


# --- (c) closed forms -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["exact", "dopri5", "radau"])
def test_the_sensitivity_to_the_initial_state_of_a_linear_system_is_its_exponential(method: str) -> None:
    A = np.array([[0.0, 1.0], [-4.0, -0.4]])
    model = robodyn.LinearSystem(A, np.zeros((2, 1)), np.eye(2), np.zeros((2, 1)))
    times = np.linspace(0.0, 3.0, 7)
    run = robodyn.simulate(model, 3.0, [1.0, -0.5], method=method, rtol=1e-11, atol=1e-13, t_eval=times,
                           sensitivities=["x0"])
    first, second = run.sensitivity_names
    for k, t in enumerate(times):
        exponential = scipy.linalg.expm(A * t)
        np.testing.assert_allclose(run.sensitivity(first)[k], exponential[:, 0], rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(run.sensitivity(second)[k], exponential[:, 1], rtol=1e-9, atol=1e-11)
    assert (run.stats.path == "exact") == (method == "exact")


@pytest.mark.parametrize("method", ["exact", "dopri5"])
def test_a_parameter_of_a_linear_decay(method: str) -> None:
    """x' = -a x: x = x0 e^{-a t}, dx/da = -t x0 e^{-a t}; the exact path takes the sensitivity system's affine form."""
    model = robodyn.SymbolicSystem(["x"], [], {"x": "-a*x"}, parameters={"a": 2.0}, name="decay_a")
    times = np.linspace(0.0, 2.0, 5)
    run = robodyn.simulate(model, 2.0, [1.5], method=method, rtol=1e-12, atol=1e-14, t_eval=times,
                           sensitivities=["a", "x"])
    np.testing.assert_allclose(run.sensitivity("a")[:, 0], -times * 1.5 * np.exp(-2.0 * times), rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(run.sensitivity("x")[:, 0], np.exp(-2.0 * times), rtol=1e-9, atol=1e-13)


# --- (d) batches ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["dopri5", "radau", "rk4"])
def test_a_batch_gives_each_run_what_it_gives_alone(method: str) -> None:
    """x0 (N, n) and parameters per run: the same kernels with the same tolerances (the sensitivities' sizes are the
    model's values, not the runs'), so each run equals its single simulation exactly."""
    model = robodyn.load("pendulum")
    x0 = np.array([[1.0, 0.0], [0.5, 0.3], [-0.2, 1.0]])
    lengths = [1.0, 0.8, 1.3]
    times = np.linspace(0.0, 1.0, 11)
    options: dict[str, Any] = {"dt": 0.01} if method == "rk4" else {"t_eval": times}
    batch = robodyn.simulate(model, 1.0, x0, params={"l": lengths}, method=method, sensitivities=["l", "x0"],
                             **options)
    assert isinstance(batch, robodyn.BatchTrajectory) and batch.sensitivity("l").shape == (3, batch.t.size, 2)
    for i in range(3):
        alone = robodyn.simulate(model, 1.0, x0[i], params={"l": lengths[i]}, method=method,
                                 sensitivities=["l", "x0"], **options)
        np.testing.assert_array_equal(batch[i].sensitivity("l"), alone.sensitivity("l"))
        np.testing.assert_array_equal(batch.sensitivity("theta_dot")[i], alone.sensitivity("theta_dot"))
        np.testing.assert_array_equal(batch[i].x, alone.x)


# --- files ------------------------------------------------------------------------------------------------------------
def test_the_sensitivities_survive_csv_and_npz(tmp_path: Path) -> None:
    model = robodyn.load(str(EXAMPLES / "joint_first_order.yaml"))
    run = robodyn.simulate(model, 1.0, [0.1, 0.0], 1.0, sensitivities=["k", "qd"], t_eval=np.linspace(0, 1, 5))
    csv, npz = tmp_path / "run.csv", tmp_path / "run.npz"
    run.to_csv(csv)
    header = csv.read_text().splitlines()[0].split(",")
    assert header == ["t", "q", "qd", "angle", "d(q)/d(k)", "d(qd)/d(k)", "d(q)/d(qd(0))", "d(qd)/d(qd(0))",
                      "d(angle)/d(k)", "d(angle)/d(qd(0))"]
    run.to_npz(npz)
    for path in (csv, npz):
        back = robodyn.Trajectory.load(path, states=["q", "qd"] if path.suffix == ".csv" else None)
        assert back.sensitivity_names == ("k", "qd(0)")
        np.testing.assert_array_equal(back.sensitivity("qd"), run.sensitivity("qd"))
        np.testing.assert_array_equal(back.output_sensitivity("k"), run.output_sensitivity("k"))
    assert robodyn.Trajectory.load(npz).sensitivity_method == run.sensitivity_method
    plain = robodyn.simulate(model, 1.0, [0.1, 0.0], 1.0, t_eval=np.linspace(0, 1, 5))
    assert plain.to_csv_text().splitlines()[0] == "t,q,qd,angle"  # no sensitivities: the CSV contract unchanged


# --- (e) bad input ----------------------------------------------------------------------------------------------------
def test_bad_requests_name_the_choices() -> None:
    model = robodyn.load("pendulum")
    with pytest.raises(InputError, match=r"derived \(I = .*m.*l"):
        robodyn.simulate(model, 1.0, [1.0, 0.0], sensitivities=["I"])
    with pytest.raises(InputError, match=r"'x0'.*theta, theta_dot.*m, g, l"):
        robodyn.simulate(model, 1.0, [1.0, 0.0], sensitivities=["length"])
    with pytest.raises(InputError, match="no names"):
        robodyn.simulate(model, 1.0, [1.0, 0.0], sensitivities=[])
    with pytest.raises(InputError, match=r"u\(t, x\)"):
        robodyn.simulate(model, 1.0, [1.0, 0.0], lambda t, x: [-x[0]], sensitivities=["l"])
    with pytest.raises(ShapeError):
        robodyn.simulate(model, 1.0, [1.0, 0.0], StateFeedback(np.ones((1, 3))), sensitivities=["l"])
    with pytest.raises(InputError, match="constraints"):
        robodyn.simulate(robodyn.load(str(EXAMPLES / "four_bar.yaml")), 1.0, sensitivities=["x0"])
    discrete = robodyn.LinearSystem(np.eye(1) * 0.5, np.zeros((1, 0)), np.eye(1), np.zeros((1, 0)), dt=0.1)
    with pytest.raises(InputError, match="discrete-time"):
        robodyn.simulate(discrete, 1.0, [1.0], sensitivities=["x0"])
    plain = robodyn.simulate(model, 1.0, [1.0, 0.0])
    with pytest.raises(InputError, match="sensitivities="):
        plain.sensitivity("l")
    run = robodyn.simulate(model, 1.0, [1.0, 0.0], sensitivities="l")
    with pytest.raises(UnknownNameError, match="computed: l"):
        run.sensitivity("g")


def test_events_read_the_model_state() -> None:
    """An event given as text and one as a callable see the model's x (n entries), and the records hold n values."""
    model = robodyn.load("pendulum")
    seen: list[int] = []

    def crossing(t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> float:
        seen.append(x.size + 10 * p.size)
        return float(x[0])

    run = robodyn.simulate(model, 3.0, [1.0, 0.0], events=["theta + 0.5", crossing], sensitivities=["l"],
                           backend="interpreted")
    plain = robodyn.simulate(model, 3.0, [1.0, 0.0], events=["theta + 0.5", crossing], backend="interpreted")
    assert set(seen) == {2 + 30} and [e.name for e in run.events] == [e.name for e in plain.events]
    assert all(e.x.shape == (2,) for e in run.events)
    np.testing.assert_allclose([e.t for e in run.events], [e.t for e in plain.events], rtol=1e-6)
