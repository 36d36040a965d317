"""Plots (robodyn.results.plots): axes by physical quantity with units, inputs only when they vary, overlays,
phase portraits, pole maps, and the formats they are written in."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.results import plots
from robodyn.signals import Sine, Step

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _lines(axis: object) -> dict[str, np.ndarray]:
    return {line.get_label(): np.asarray(line.get_ydata()) for line in axis.get_lines()}  # type: ignore[attr-defined]


def test_a_robot_gets_one_axis_per_unit_and_constant_inputs_in_the_title() -> None:
    arm = robodyn.load(str(EXAMPLES / "two_link_arm.urdf"))
    run = robodyn.simulate(arm, 0.5, {"shoulder": 0.3}, {"elbow_tau": 1.5})
    figure = plots.time_response(run, smooth=False)  # the stored points only
    labels = [axis.get_ylabel() for axis in figure.axes]
    assert labels == ["[rad]", "[rad/s]"]  # no inputs axis: both inputs are constant
    assert "constant inputs: shoulder_tau = 0, elbow_tau = 1.5" in figure.axes[0].get_title()
    np.testing.assert_array_equal(_lines(figure.axes[0])["elbow"], run.state("elbow"))
    assert figure.axes[-1].get_xlabel() == "t [s]"


def test_varying_inputs_get_an_axis_and_identical_ones_are_drawn_once() -> None:
    model = robodyn.SymbolicSystem(["x"], ["a", "b"], {"x": "-x + a + b"}, name="two_inputs")
    run = robodyn.simulate(model, 2.0, [0.0], {"a": Step(1.0, 0.0, 1.0), "b": Step(1.0, 0.0, 1.0)})
    figure = plots.time_response(run)
    assert [axis.get_ylabel() for axis in figure.axes] == ["states", "inputs"]
    assert list(_lines(figure.axes[1])) == ["a = b"]


def test_an_overlay_lands_on_the_axis_of_each_quantity() -> None:
    joint = robodyn.load("joint")
    exact = robodyn.simulate(joint, 2.0, u=Step(0.5, 0.0, 1.0))
    coarse = robodyn.simulate(joint, 2.0, u=Step(0.5, 0.0, 1.0), method="rk4", dt=0.05)
    figure = plots.time_response(exact)
    assert plots.time_response(coarse, into=figure, style="--", label_suffix=" (rk4)") is figure
    assert set(_lines(figure.axes[0])) == {"q", "q (rk4)"}
    assert set(_lines(figure.axes[1])) == {"q_dot", "q_dot (rk4)"}
    with pytest.raises(robodyn.UnknownNameError, match="unknown state or output 'nope'"):
        plots.time_response(exact, ["nope"])


def test_phase_portrait_and_pole_map() -> None:
    pendulum = robodyn.load("pendulum")
    run = robodyn.simulate(pendulum, 3.0, {"theta": 1.0})
    figure = plots.phase_portrait(pendulum, trajectories=[run])
    axis = figure.axes[0]
    assert axis.get_xlabel() == "theta [rad]" and axis.get_ylabel() == "theta_dot [rad/s]"
    np.testing.assert_array_equal(axis.get_lines()[0].get_xdata(), run.x[:, 0])
    with pytest.raises(robodyn.InputError, match="needs 2"):
        plots.phase_portrait(robodyn.load("double_pendulum"))
    poles = plots.pole_map([-1 + 2j, -1 - 2j, 0.5])
    points = poles.axes[0].get_lines()[-1]
    np.testing.assert_array_equal(points.get_xdata(), [-1, -1, 0.5])
    np.testing.assert_array_equal(points.get_ydata(), [2, -2, 0])


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_figures_are_written_in_three_formats(tmp_path: Path, suffix: str) -> None:
    figure = plots.pole_map([-1.0])
    path = tmp_path / f"poles{suffix}"
    plots.save_figure(figure, str(path))
    head = path.read_bytes()[:8]
    assert head.startswith({".png": b"\x89PNG", ".svg": b"<?xml", ".pdf": b"%PDF"}[suffix])
    with pytest.raises(robodyn.InputError, match=r"write a \.png, \.svg or \.pdf file"):
        plots.save_figure(figure, str(tmp_path / "poles.jpg"))


def test_units_from_a_model_file_label_the_axes(tmp_path: Path) -> None:
    pendulum = robodyn.load("pendulum")  # the catalog file declares units: {theta: rad, ...}
    assert {k: v for k, v in pendulum.units().items() if k in (*pendulum.states, *pendulum.inputs)} == {
        "theta": "rad", "theta_dot": "rad/s", "tau": "N m"}
    assert pendulum.units()["g"] == "m/s^2"  # parameters may carry units too
    figure = plots.time_response(robodyn.simulate(pendulum, 1.0, {"theta": 0.5}))
    assert [axis.get_ylabel() for axis in figure.axes] == ["[rad]", "[rad/s]"]
    text = (EXAMPLES / "pendulum.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("tau: N m,", "torque: N m,"), encoding="utf-8")
    with pytest.raises(robodyn.ModelFileError, match=r"units\.torque: 'torque' is not a state, input, output or param"):
        robodyn.load(bad)
    bad.write_text(text.replace("tau: N m,", "tau: 3,"), encoding="utf-8")
    with pytest.raises(robodyn.ModelFileError, match="the unit must be short text"):
        robodyn.load(bad)


def test_validity_and_convergence_figures() -> None:
    from matplotlib.figure import Figure

    pendulum = robodyn.load("pendulum")
    trust = robodyn.validity(pendulum, [0.0, 0.0])
    assert isinstance(plots.validity(trust), Figure)
    figure = plots.convergence(robodyn.verify(robodyn.load("joint"), methods=("rk4",)))
    assert figure.axes[0].get_xlabel() == "step size h [s]"


def test_curves_are_drawn_through_the_interpolant_not_the_steps() -> None:
    """Issue 23: ``--plot`` drew only the accepted steps (135 over 10 s for the joint: visible kinks). The curve
    through the cubic Hermite interpolant of the states and their derivatives is within the step error of the
    exact solution everywhere, where straight segments between the steps are not."""
    joint = robodyn.load("joint")
    for u in ({"u": Step(at=1.0, before=0.0, after=1.0)}, {"u": 0.5}, {"u": Sine(1.0, 2.0)}):
        run = robodyn.simulate(joint, 3.0, [0.1, 0.0], u, method="dopri5", rtol=1e-6)
        figure = plots.time_response(run)
        drawn = _lines(figure.axes[0])["q"]
        times = np.asarray(figure.axes[0].get_lines()[0].get_xdata())
        assert drawn.size >= plots.DENSE_POINTS > len(run)
        exact = robodyn.simulate(joint, 3.0, [0.1, 0.0], u, method="exact", t_eval=times).state("q")
        straight = np.interp(times, run.t, run.state("q"))
        assert np.max(np.abs(drawn - exact)) < 1e-4 < np.max(np.abs(straight - exact))
        velocity = np.asarray(figure.axes[1].get_lines()[0].get_ydata())  # its slope jumps with the step
        exact_velocity = robodyn.simulate(joint, 3.0, [0.1, 0.0], u, method="exact", t_eval=times).state("q_dot")
        assert np.max(np.abs(velocity - exact_velocity)) < 1e-3
        assert set(run.t) <= set(times)  # the stored points are on the curve
