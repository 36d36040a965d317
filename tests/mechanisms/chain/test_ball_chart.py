"""The chart a chain with ball joints is integrated in (robodyn.mechanisms.chain.ball_chart): the quaternions stay unit
to round-off over a long adaptive run while the run agrees with scipy's integration of the stored f at tight
tolerances; the chart's recentring is SciPy's rotation composition; lifting, projecting, the tolerances and the
neutral rotation; and what the chart does not build is refused naming the ball."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import robodyn
from robodyn.base.errors import InputError
from robodyn.mechanisms.chain.ball_chart import recentre_quaternions
from robodyn.mechanisms.chain.system import ChainSystem

LINK = {"mass": 1.2, "com": [0.1, 0.02, -0.3], "inertia": {"ixx": 0.02, "iyy": 0.03, "izz": 0.015, "ixy": 0.001}}
# a hinge, a ball below it, a second ball at its tip: two quaternion blocks between one-coordinate entries
JOINTS = [{"name": "h", "parent": "base", "child": "a", "axis": [0, 1, 0], "damping": 0.05},
          {"name": "s", "parent": "a", "child": "b", "type": "ball", "xyz": [0.3, 0, 0], "rpy": [0.1, 0.2, 0.3],
           "damping": 0.02, "rotor_inertia": 0.01},
          {"name": "t", "parent": "b", "child": "c", "type": "ball", "xyz": [0.2, 0.05, -0.4]}]
LINKS = [{"name": "base"}, {"name": "a", **LINK}, {"name": "b", **LINK}, {"name": "c", **LINK}]


@pytest.fixture(scope="module")
def chain() -> ChainSystem:
    return ChainSystem(JOINTS, LINKS)


def _start(chain: ChainSystem) -> np.ndarray:
    x0 = chain.initial_state()
    for name, value in {"h": 0.3, "s_qx": 0.3, "s_qy": -0.2, "s_qz": 0.1, "t_qy": 0.5, "h_dot": 0.5, "s_wx": 1.0,
                        "s_wy": -2.0, "s_wz": 1.5, "t_wx": 3.0, "t_wz": -1.0}.items():
        x0[chain.states.index(name)] = value
    for ball in ("s", "t"):
        block = [chain.states.index(f"{ball}_q{c}") for c in "xyzw"]
        x0[block] /= np.linalg.norm(x0[block])
    return x0


def test_a_long_adaptive_run_keeps_the_quaternions_unit_and_follows_scipy(chain: ChainSystem) -> None:
    """20 s of a tumbling double ball pendulum with DOPRI5 at its default tolerances: both quaternions unit to 1e-14 at
    every step (products of unit quaternions; measured 1.3e-15); over the first 2 s, at tight tolerances, the run
    agrees with scipy's DOP853 on the stored f (the quaternions integrated in R^4) to 1e-7 (their tolerances of 1e-11
    grown by the chaotic motion; measured 2e-9)."""
    x0 = _start(chain)
    run = robodyn.simulate(chain, 20.0, x0)
    x = np.asarray(run.x)
    for ball in ("s", "t"):
        block = [chain.states.index(f"{ball}_q{c}") for c in "xyzw"]
        assert np.abs(np.linalg.norm(x[:, block], axis=1) - 1.0).max() < 1e-14
    tight = robodyn.simulate(chain, 2.0, x0, rtol=1e-11, atol=1e-11)
    p = chain.parameter_vector()
    reference = solve_ivp(lambda t, y: chain.f_raw(t, y, np.zeros(chain.n_inputs), p), (0.0, 2.0), x0, method="DOP853",
                          rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(np.asarray(tight.x)[-1], reference.y[:, -1], rtol=0, atol=1e-7)


def test_recentring_is_rotation_composition() -> None:
    """q_c (x) Exp(d) against SciPy's Rotation (from_quat * from_rotvec), up to the quaternion's sign, including
    rotation vectors below the series' threshold (1e-8) and of zero length."""
    rng = np.random.default_rng(4)
    centres = rng.normal(size=(50, 4))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    d = rng.normal(size=(50, 3)) * np.array([[3.0]] * 25 + [[1e-9]] * 24 + [[0.0]])
    ours = recentre_quaternions(centres, d)
    theirs = (Rotation.from_quat(centres) * Rotation.from_rotvec(d)).as_quat()
    signs = np.sign(np.sum(ours * theirs, axis=1, keepdims=True))
    np.testing.assert_allclose(ours, signs * theirs, rtol=0, atol=1e-15 * 4)  # a few roundings of unit numbers


def test_lift_project_tolerances_and_the_neutral_rotation(chain: ChainSystem) -> None:
    chart = chain.chart()
    assert chart is not None and chart.tangent == ("s_rx", "s_ry", "s_rz", "t_rx", "t_ry", "t_rz")
    assert chart.tangent_states[:7] == ("h", "s_rx", "s_ry", "s_rz", "t_rx", "t_ry", "t_rz")
    x0 = _start(chain)
    lifted = chart.lift(x0)
    np.testing.assert_array_equal(chart.project(lifted), x0)
    lifted[-6:] = [0.1, 0.2, -0.3, 0.0, 0.4, 0.0]
    moved = chart.project(lifted)
    block = [chain.states.index(f"s_q{c}") for c in "xyzw"]
    np.testing.assert_allclose(moved[block], recentre_quaternions(x0[block], lifted[-6:-3]), rtol=0, atol=0)
    atol = np.arange(1.0, chain.n_states + 1.0)
    np.testing.assert_array_equal(chart.tolerances(atol)[-6:], [atol[block[0]]] * 3 + [atol[5]] * 3)
    assert chart.neutral({"h": 0.2, "t_qx": 1.0}) == {"h": 0.2, "t_qx": 1.0, "s_qw": 1.0}
    with pytest.raises(InputError, match=r"ball joint 's'.s quaternion .* has norm 2"):
        chart.checked(np.concatenate([[0.0, 0, 0, 0, 2], x0[5:]]))
    with pytest.warns(robodyn.RobodynWarning, match="normalized"):
        near = x0.copy()
        near[block] *= 1 + 1e-9
        np.testing.assert_allclose(np.linalg.norm(chart.checked(near)[block]), 1.0, rtol=0, atol=1e-15)


def test_a_partial_start_fills_no_rotation(chain: ChainSystem) -> None:
    run = robodyn.simulate(chain, 0.1, {"h": 0.2})
    assert np.asarray(run.x)[0, chain.states.index("s_qw")] == 1.0


def test_what_the_chart_does_not_build_is_refused_naming_the_ball(chain: ChainSystem) -> None:
    x0 = chain.initial_state()
    with pytest.raises(InputError, match=r"implicit methods.*joint 's' is a ball"):
        robodyn.simulate(chain, 0.1, x0, method="radau")
    with pytest.raises(InputError, match="linearizing in the tangent space is not built for ball joints yet"):
        robodyn.linearize(chain, x0, np.zeros(chain.n_inputs))
    with pytest.raises(InputError, match="cannot step on the manifold of the ball joints 's', 't'"):
        robodyn.simulate(chain, 0.1, x0, method="exact")
