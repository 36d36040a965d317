"""Tests for robodyn.control.design: lqr and place against python-control, and their refusals.

Tolerance 1e-10 relative to the largest entry (both tools call the same scipy solvers, python-control by
``method="scipy"``: with Slycot installed its default is Slycot's sb02md, whose closed-loop eigenvalues agree to
only 1e-8; the gains differ by the rounding of a few products). Placed poles: 1e-8 relative (scipy's Tits–Yang
iteration stops there).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import robodyn
from robodyn import LQR, InputError, LinearSystem, NumericalError, ShapeError, StateFeedback
from robodyn.control.design import lqr, place

control = pytest.importorskip("control")

from tests.linear.linear_cases import DT, arm, joint, pendulum  # noqa: E402 - after the importorskip


def close(actual: object, expected: object, rtol: float = 1e-10) -> None:
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, (a.shape, e.shape)
    scale = float(np.max(np.abs(e), initial=0.0))
    assert float(np.max(np.abs(a - e), initial=0.0)) <= rtol * max(scale, 1e-300), (a, e)


def sorted_complex(values: object) -> np.ndarray:
    array = np.asarray(values, dtype=complex).reshape(-1)
    return array[np.lexsort((array.imag, array.real))]


CASES = {
    "joint": (joint, np.diag([10.0, 1.0]), [[0.1]]),
    "pendulum_down": (lambda: pendulum(0.0), np.eye(2), [[1.0]]),
    "pendulum_up": (lambda: pendulum(math.pi), np.diag([100.0, 1.0]), [[0.5]]),
    "arm": (arm, np.eye(4), np.diag([1.0, 2.0])),
}


# --- lqr ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", CASES)
def test_lqr_equals_control_lqr(name: str) -> None:
    make, Q, R = CASES[name]
    system = make()
    ours = lqr(system, Q, R)
    K, S, E = control.lqr(system.to_control(), Q, R, method="scipy")
    close(ours.K, K)
    close(ours.S, S)
    close(ours.eigenvalues, sorted_complex(E))
    assert np.all(ours.eigenvalues.real < 0) and ours.K.shape == (len(system.inputs), len(system.states))


@pytest.mark.parametrize("name", CASES)
def test_discrete_lqr_equals_control_dlqr(name: str) -> None:
    make, Q, R = CASES[name]
    system = make().discretize(DT)
    ours = robodyn.lqr(system, Q, R)
    K, S, E = control.dlqr(system.to_control(), Q, R, method="scipy")
    close(ours.K, K)
    close(ours.S, S)
    close(ours.eigenvalues, sorted_complex(E))
    assert np.all(np.abs(ours.eigenvalues) < 1) and ours.dt == DT


def test_lqr_with_a_cross_weight_equals_control() -> None:
    system = pendulum(math.pi)
    Q, R, N = np.diag([4.0, 1.0]), [[1.0]], [[0.5], [0.1]]
    ours = lqr(system, Q, R, N)
    K, S, _ = control.lqr(system.to_control(), Q, R, N, method="scipy")
    close(ours.K, K)
    close(ours.S, S)
    discrete = lqr(system.discretize(DT), Q, R, N)
    Kd, Sd, _ = control.dlqr(system.discretize(DT).to_control(), Q, R, N, method="scipy")
    close(discrete.K, Kd)
    close(discrete.S, Sd)


def test_the_regulator_closes_the_loop_on_the_linear_and_the_nonlinear_model() -> None:
    plant = pendulum(math.pi)
    result = lqr(plant, np.diag([100.0, 1.0]), [[0.5]])
    linear_run = robodyn.simulate(plant, 5.0, [0.2, 0.0], StateFeedback(result.K))  # deviations: x_ref = 0
    assert np.max(np.abs(linear_run.final)) < 1e-3
    law = result.feedback()  # u = u_op - K (x - x_op) about the upright operating point
    np.testing.assert_array_equal(law.reference_state, plant.x_op)
    run = robodyn.simulate(robodyn.load("pendulum"), 5.0, [math.pi + 0.2, 0.0], law)
    assert abs(run.final[0] - math.pi) < 1e-3 and abs(run.final[1]) < 1e-3
    data = result.to_dict()
    assert data["K"] == result.K.tolist() and len(data["eigenvalues"]) == 2
    assert "u = -K x" in result._repr_html_() and isinstance(result, LQR)


@pytest.mark.parametrize(("Q", "R", "N", "error", "match"), [
    (np.eye(3), [[1.0]], None, ShapeError, r"Q has shape \(3, 3\), expected \(2, 2\)"),
    ([1.0, 1.0], [[1.0]], None, ShapeError, r"for weights on the diagonal write np.diag"),
    (np.eye(2), [[1.0, 0.0]], None, ShapeError, r"R has shape \(1, 2\), expected \(1, 1\)"),
    (np.eye(2), [[1.0]], [[1.0]], ShapeError, r"N has shape \(1, 1\), expected \(2, 1\)"),
    ([[1.0, 0.5], [0.0, 1.0]], [[1.0]], None, InputError, r"Q must be symmetric.*\(Q \+ Q.T\) / 2"),
    (np.diag([1.0, -1.0]), [[1.0]], None, InputError, r"Q must be positive semidefinite: its smallest eigenvalue "
                                                       r"is -1"),
    (np.eye(2), [[0.0]], None, InputError, r"R must be positive definite.*every input needs a positive weight"),
    (np.eye(2), [[-1.0]], None, InputError, r"R must be positive definite"),
    (np.eye(2), [[1.0]], [[2.0], [0.0]], InputError, r"the cost \[\[Q, N\], \[N\^T, R\]\] must be positive "
                                                       r"semidefinite"),
    (np.full((2, 2), math.nan), [[1.0]], None, InputError, r"Q contains non-finite entries"),
])
def test_lqr_refuses_bad_weights(Q: object, R: object, N: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        lqr(pendulum(math.pi), Q, R, N)  # type: ignore[arg-type]


def test_lqr_names_an_unstable_mode_the_inputs_cannot_move() -> None:
    system = LinearSystem(np.diag([1.0, -1.0]), [[0.0], [1.0]], name="half")
    with pytest.raises(InputError, match=r"the mode 1 of 'half' is not stable and the inputs cannot move it "
                                         r"\(rank \[λI - A, B\] = 1 < 2\)"):
        lqr(system, np.eye(2), [[1.0]])
    with pytest.raises(InputError, match=r"not stable and the inputs cannot move it"):  # discrete: |z| = 1.5
        lqr(LinearSystem(np.diag([1.5, 0.5]), [[0.0], [1.0]], dt=0.1), np.eye(2), [[1.0]])


def test_lqr_names_a_boundary_mode_the_cost_does_not_see() -> None:
    oscillator = LinearSystem([[0.0, 1.0], [-1.0, 0.0]], [[0.0], [1.0]], name="oscillator")
    with pytest.raises(InputError, match=r"on the imaginary axis is not seen by the cost.*put weight on it in Q"):
        lqr(oscillator, np.zeros((2, 2)), [[1.0]])
    assert np.all(lqr(oscillator, np.eye(2), [[1.0]]).eigenvalues.real < 0)


def test_lqr_and_place_need_a_linear_system_with_inputs() -> None:
    with pytest.raises(InputError, match="has no inputs: there is nothing to feed back"):
        lqr(LinearSystem([[-1.0]]), [[1.0]], [[1.0]])
    with pytest.raises(InputError, match=r"needs a linear system.*robodyn.linearize"):
        place(robodyn.load("pendulum"), [-1.0, -2.0])
    K = lqr(robodyn.load("joint"), np.eye(2), [[1.0]]).K  # linear by construction: its LinearSystem
    close(K, control.lqr(joint().to_control(), np.eye(2), [[1.0]])[0])


# --- place ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("poles", [[-2.0, -3.0], [-1.0 + 2.0j, -1.0 - 2.0j], [-4.0, -4.0 + 1e-3]])
@pytest.mark.parametrize("theta", [0.0, math.pi])
def test_place_single_input_equals_control_place(theta: float, poles: list[complex]) -> None:
    system = pendulum(theta)
    K = place(system, poles)
    close(K, control.place(system.A, system.B, poles))
    closed = sorted_complex(np.linalg.eigvals(system.A - system.B @ K))
    close(closed, sorted_complex(poles), rtol=1e-8)


def test_place_on_the_arm_puts_every_pole_and_repeats_up_to_the_rank_of_B() -> None:
    system = arm()
    poles = [-1.0, -2.0, -3.0 + 1.0j, -3.0 - 1.0j]
    K = robodyn.place(system, poles)
    close(sorted_complex(np.linalg.eigvals(system.A - system.B @ K)), sorted_complex(poles), rtol=1e-8)
    twice = [-2.0, -2.0, -3.0, -3.0]  # rank B = 2: each pole at most twice
    K = robodyn.place(system, twice)
    close(sorted_complex(np.linalg.eigvals(system.A - system.B @ K)), sorted_complex(twice), rtol=1e-8)


def test_discrete_place_puts_the_poles_z() -> None:
    system = joint().discretize(DT)
    poles = [0.9, 0.8]
    K = place(system, poles)
    close(K, control.place(system.A, system.B, poles))
    close(sorted_complex(np.linalg.eigvals(system.A - system.B @ K)), sorted_complex(poles), rtol=1e-8)


@pytest.mark.parametrize(("poles", "error", "match"), [
    ([-1.0], ShapeError, r"1 poles requested for 2 states"),
    ([-1.0 + 1.0j, -2.0], InputError, r"the pole -1 \+ 1j has no conjugate"),
    ([-2.0, -2.0], InputError, r"the pole -2 is requested 2 times but B has rank 1.*spread them"),
    ([-1.0, math.inf], InputError, r"poles must be finite"),
    (["fast", "slow"], InputError, r"poles must be numbers"),
])
def test_place_refuses_bad_poles(poles: list[object], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        place(pendulum(math.pi), poles)  # type: ignore[arg-type]


def test_place_names_an_uncontrollable_mode() -> None:
    system = LinearSystem(np.diag([-1.0, 2.0]), [[1.0], [0.0]], name="split")
    with pytest.raises(InputError, match=r"the mode 2 of 'split' is uncontrollable.*no gain moves it"):
        place(system, [-1.0, -3.0])


def test_an_inaccurate_placement_is_a_numerical_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import scipy.signal

    exact = scipy.signal.place_poles

    def off(A: object, B: object, poles: object, **kwargs: object) -> object:  # a solver that stopped early
        result = exact(A, B, poles, **kwargs)
        result.gain_matrix = result.gain_matrix * (1 + 1e-6)
        return result

    monkeypatch.setattr(scipy.signal, "place_poles", off)
    with pytest.raises(NumericalError, match=r"miss the requested poles by .* the placement is ill-conditioned"):
        place(pendulum(math.pi), [-2.0, -3.0])


def test_a_weak_input_is_units_not_uncontrollability() -> None:
    # q'' = 1e-9 u: controllable whatever the input's unit (the PBH test runs on the balanced system); the gain
    # placing s^2 + 3 s + 2 is K = [2, 3] / 1e-9 in closed form
    weak = LinearSystem([[0.0, 1.0], [0.0, 0.0]], [[0.0], [1e-9]], name="weak")
    assert weak.controllability().full
    np.testing.assert_allclose(place(weak, [-1.0, -2.0]), [[2e9, 3e9]], rtol=1e-12)  # a few roundings of eps
    twins = LinearSystem(np.diag([-1.0, -1.0]), [[1.0], [1e-9]], name="twins")  # one input, a double mode
    with pytest.raises(InputError, match=r"the mode -1 of 'twins' is uncontrollable"):
        place(twins, [-1.0, -2.0])
