"""Trajectory.frame and FramePath: a frame's motion over a simulated run, checked against the closed-form
kinematics of the two-link URDF arm, against Kinematics at the same states, and against the time derivative
of its own position; plot_path; the errors for trajectories without a model with frames."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

import robodyn
from robodyn import InputError, ShapeError, UnknownNameError
from robodyn.kinematics import kinematics
from robodyn.kinematics.paths import FramePath, plot_path
from robodyn.results.trajectory import BatchTrajectory, SimulationStats, Trajectory

matplotlib.use("Agg")

L1, L_TOOL = 1.0, 0.8  # examples/two_link_arm.urdf: the elbow at 1.0 m along the upper arm, the tool 0.8 m on


@pytest.fixture(scope="module")
def arm():
    return robodyn.load("examples/two_link_arm.urdf")


@pytest.fixture(scope="module")
def run(arm) -> Trajectory:
    """The arm released at rest from shoulder 0.3, elbow -0.2, on a dense grid with tight tolerances."""
    tr = robodyn.simulate(arm, 0.5, {"shoulder": 0.3, "elbow": -0.2}, rtol=1e-11, atol=1e-12,
                          t_eval=np.linspace(0.0, 0.5, 1001))
    assert isinstance(tr, Trajectory)
    return tr


def test_the_trajectory_remembers_its_model_and_parameters(arm, run):
    assert run.source is arm
    assert run.params is not None and run.params.shape == (len(arm.parameters),)
    assert "source" not in repr(run)


def test_the_tool_path_matches_the_closed_form_kinematics(run):
    path = run.frame()
    q1, q2 = run.state("shoulder"), run.state("elbow")
    # Both joints turn about -y: positive angles raise the arm in the x-z plane (see the URDF's comment).
    expected = np.column_stack([L1 * np.cos(q1) + L_TOOL * np.cos(q1 + q2), np.zeros_like(q1),
                                L1 * np.sin(q1) + L_TOOL * np.sin(q1 + q2)])
    assert path.frame == "tool" and path.model == run.model and len(path) == len(run)
    np.testing.assert_array_equal(path.t, run.t)
    np.testing.assert_allclose(path.position, expected, atol=1e-12)
    assert np.ptp(path.position[:, 2]) > 0.3  # the arm really falls: the comparison is not at one point


def test_the_frame_path_equals_kinematics_at_the_same_states(arm, run):
    K = kinematics(arm)
    for name in (None, "forearm"):
        path = run.frame(name)
        pose = K.pose(run.x[:, :2], name)
        np.testing.assert_allclose(path.position, pose.position, atol=1e-14)
        np.testing.assert_allclose(path.rotation, pose.rotation, atol=1e-14)
        np.testing.assert_allclose(path.quaternion, pose.quaternion, atol=1e-14)
        np.testing.assert_allclose(path.rpy, pose.rpy, atol=1e-14)
        np.testing.assert_allclose(path.velocity, K.velocity(run.x[:, :2], run.x[:, 2:], name), atol=1e-14)
        np.testing.assert_allclose(path.speed, np.linalg.norm(path.velocity[:, :3], axis=1))


def test_the_velocity_is_the_time_derivative_of_the_position(run):
    """Central differences of the dense output: error h^2/6 max|p'''| (truncation) plus about 2 eps / (2 h)
    from the integration error eps of each point (rtol 1e-11 on states of order 1: eps ~ 1e-10)."""
    path = run.frame()
    h = run.t[1] - run.t[0]
    derivative = (path.position[2:] - path.position[:-2]) / (2 * h)
    third = np.max(np.abs(np.diff(path.position, 3, axis=0))) / h**3  # max |p'''| from the data itself
    tolerance = 2 * (h**2 / 6 * third + 1e-10 / h)
    np.testing.assert_allclose(derivative, path.velocity[1:-1, :3], atol=tolerance)
    assert tolerance < 1e-4 * np.max(np.abs(path.velocity[:, :3]))  # a test that could fail
    # The angular velocity: both axes along -y, so w = -(q1' + q2') e_y.
    np.testing.assert_allclose(path.velocity[:, 4], -(run.state("shoulder_dot") + run.state("elbow_dot")),
                               atol=1e-12)


def test_the_run_parameters_are_used():
    arm = robodyn.load("examples/planar_arm.yaml")
    tr = robodyn.simulate(arm, 0.2, {"q1": 0.4}, params={"l1": 1.5}, t_eval=np.linspace(0.0, 0.2, 5))
    elbow = tr.frame("link2").position
    np.testing.assert_allclose(np.linalg.norm(elbow, axis=1), 1.5, rtol=1e-12)  # not the default l1 = 1.0


def test_a_batch_member_keeps_its_source_and_parameters():
    arm = robodyn.load("examples/planar_arm.yaml")
    batch = robodyn.simulate(arm, 0.2, {"q1": 0.4}, params={"l1": [1.0, 2.0]}, t_eval=np.linspace(0.0, 0.2, 5))
    assert isinstance(batch, BatchTrajectory) and batch.source is arm
    second = batch[1]
    assert second.source is arm
    np.testing.assert_array_equal(second.params, batch.params[1])
    np.testing.assert_allclose(np.linalg.norm(second.frame("link2").position, axis=1), 2.0, rtol=1e-12)


def test_a_model_without_frames_is_refused():
    tr = robodyn.simulate(robodyn.load("joint"), 0.5)
    with pytest.raises(InputError, match=r"has no frames.*chain file or a URDF robot"):
        tr.frame()


def test_a_trajectory_built_by_hand_is_refused():
    tr = Trajectory(np.array([0.0, 1.0]), np.zeros((2, 4)), np.zeros((2, 0)), np.zeros((2, 4)),
                    ("a", "b", "a_dot", "b_dot"), (), ("a", "b", "a_dot", "b_dot"), "hand", SimulationStats("exact",
                                                                                                       "exact"))
    assert tr.source is None and tr.params is None
    with pytest.raises(InputError, match=r"does not know its model.*robodyn\.simulate"):
        tr.frame()


def test_an_unknown_frame_names_the_frames(run):
    with pytest.raises(UnknownNameError, match=r"no frame 'hand'.*tool"):
        run.frame("hand")


def test_frame_path_arrays_are_read_only_and_checked(run):
    path = run.frame()
    with pytest.raises(ValueError, match="read-only"):
        path.position[0, 0] = 1.0
    with pytest.raises(ShapeError, match="velocity has shape"):
        FramePath("tool", "arm", path.t, path.position, path.rotation, path.velocity[:, :3])


def test_plot_path_draws_a_3d_figure(run):
    figure = plot_path(run.frame())
    (ax,) = figure.axes
    assert ax.name == "3d"
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_zlabel()) == ("x [m]", "y [m]", "z [m]")
    spans = [np.ptp(limits) for limits in (ax.get_xlim(), ax.get_ylim(), ax.get_zlim())]
    np.testing.assert_allclose(spans, spans[0])  # equal scales
    from matplotlib.figure import Figure

    with pytest.raises(InputError, match="3-D axes"):
        plot_path(run.frame(), Figure().add_subplot())
