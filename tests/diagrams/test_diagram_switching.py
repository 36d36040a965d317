"""Corners of a diagram's blocks as restart points (robodyn.diagrams.switching and simulate's
_across_corners): a saturated loop against its closed form, with and without t_eval, compiled and interpreted."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn
from robodyn import blocks
from robodyn.base.errors import InputError


def saturated_integrator() -> robodyn.Diagram:
    """x' = sat(4 (r - x)) with |sat| <= 1: from x = 0 to r = 2, x = t until t* = 1.75 (where 4 (2 - x) = 1), then
    x = 2 - e^(-4 (t - t*)) / 4."""
    return robodyn.Diagram({"plant": blocks.integrator(), "k": blocks.gain(4.0), "err": blocks.sum("+-"),
                            "sat": blocks.saturation(-1.0, 1.0)},
                           ["err.y -> k.u", "k.y -> sat.u", "sat.y -> plant.u", "plant.y -> err.u2"],
                           inputs={"r": "err.u1"}, outputs={"x": "plant.y", "u": "sat.y"})


def closed(t: np.ndarray) -> np.ndarray:
    return np.where(t < 1.75, t, 2.0 - 0.25 * np.exp(-4.0 * (t - 1.75)))


def test_the_corners_are_written_in_the_diagrams_symbols() -> None:
    corners = saturated_integrator().switching_events()
    assert [e.name for e in corners] == ["@corner sat.0", "@corner sat.1"]
    assert all(e.terminal and e.direction == 0 for e in corners)
    assert str(corners[1].expression) == "k.k*(-plant.x - plant.y0 + r) - sat.upper"


@pytest.mark.parametrize("backend", ["compiled", "interpreted"])
def test_a_saturated_loop_is_integrated_to_tolerance_across_its_corner(backend: str) -> None:
    grid = np.linspace(0.0, 3.0, 61)
    trajectory = robodyn.simulate(saturated_integrator(), 3.0, [0.0], {"r": 2.0}, rtol=1e-6, atol=1e-8,
                                  t_eval=grid, backend=backend)
    np.testing.assert_array_equal(trajectory.t, grid)
    # the step across the corner would leave 5.7e-5 here (measured without stopping): the restart keeps the
    # tolerance's error
    assert np.abs(trajectory.x[:, 0] - closed(grid)).max() < 1e-6
    assert trajectory.events == ()
    assert trajectory.y[0, 1] == 1.0 and trajectory.y[-1, 1] < 1.0  # saturated, then not


def test_without_t_eval_the_rows_are_the_steps_once() -> None:
    trajectory = robodyn.simulate(saturated_integrator(), 3.0, [0.0], {"r": 2.0}, rtol=1e-8)
    assert np.all(np.diff(trajectory.t) > 0) and trajectory.t[-1] == 3.0
    np.testing.assert_allclose(trajectory.x[:, 0], closed(trajectory.t), atol=1e-7)
    corner = np.flatnonzero(np.isclose(trajectory.t, 1.75, rtol=0, atol=1e-9))
    assert corner.size == 1  # a row at the crossing, located to ~1e-12


def test_a_limited_pid_and_a_quantizer_declare_their_corners() -> None:
    pid = blocks.pid(kp=2.0, ki=1.0, umin=-1.0, umax=1.0)
    assert [str(e) for e in pid.switching_expressions()] == ["ki*xi + kp*(r - y) - umin", "ki*xi + kp*(r - y) - umax"]
    assert blocks.pid(kp=2.0).switching_expressions() == ()
    (steps,) = blocks.quantizer(0.5).switching_expressions()
    assert str(steps) == "sin(pi*(1/2 + u/q))"
    loop = robodyn.Diagram({"plant": robodyn.load("joint"), "pid": pid}, ["pid.u -> plant.u", "plant.q -> pid.y"],
                           inputs={"r": "pid.r"})
    assert len(loop.switching_events()) == 2


def test_events_given_to_a_diagram_are_callables() -> None:
    diagram = saturated_integrator()
    with pytest.raises(InputError, match="give an event of a diagram as a callable"):
        robodyn.simulate(diagram, 1.0, [0.0], {"r": 2.0}, events=["plant.x - 1"])
    crossing = robodyn.simulate(diagram, 3.0, [0.0], {"r": 2.0}, events=[lambda t, x, u, p: x[0] - 1.0], rtol=1e-9)
    assert [round(e.t, 6) for e in crossing.events] == [1.0]
