"""Trajectory and BatchTrajectory: interpolation, export (CSV, npz, pandas), plots, names, atomic writes.

Trajectories come from the exact path (no compilation): the joint (outputs = states) and a first-order
linear system with its own outputs, so that every CSV layout is covered.
"""

from __future__ import annotations

import json
import math

import matplotlib
import numpy as np
import pytest

import robodyn
from robodyn import InputError, ShapeError, UnknownNameError
from robodyn.signals import Sine
from robodyn.trajectory import BatchTrajectory, SimulationStats, Trajectory

matplotlib.use("Agg")


def joint_trajectory(points: int = 1001) -> Trajectory:
    """The seed joint's unit-step response on [0, 5] (exact path)."""
    tr = robodyn.simulate(robodyn.load("joint"), 5.0, None, 1.0, t_eval=np.linspace(0.0, 5.0, points))
    assert isinstance(tr, Trajectory)
    return tr


def filtered_trajectory() -> Trajectory:
    """x' = -a x + w, outputs y2 = 2 x and speed = -a x + w (differ from the states)."""
    model = robodyn.SymbolicSystem(["x"], ["w"], {"x": "-a*x + w"}, parameters={"a": 3.0},
                                   outputs={"y2": "2*x", "speed": "-a*x + w"}, name="filter")
    tr = robodyn.simulate(model, 2.0, [1.0], Sine(0.5, 1.0), method="exact", t_eval=np.linspace(0.0, 2.0, 41))
    assert isinstance(tr, Trajectory)
    return tr


def joint_closed_form(t: np.ndarray) -> np.ndarray:
    """[q, q'] of 0.01 q'' + 0.1 q' + q = 1 from rest: wn = 10, zeta = 0.5, wd = sqrt(75)."""
    sigma, wd = 5.0, math.sqrt(75.0)
    decay = np.exp(-sigma * t)
    return np.stack([1.0 - decay * (np.cos(wd * t) + sigma / wd * np.sin(wd * t)),
                     decay * 100.0 / wd * np.sin(wd * t)], axis=-1)


# --- at(): spline between stored points -----------------------------------------------------------------
def test_at_interpolates_to_the_spline_accuracy() -> None:
    tr = joint_trajectory()
    h = 5e-3
    middles = np.linspace(0.0, 5.0, 1001)[:-1] + h / 2  # the worst places: halfway between stored points
    error = np.abs(tr.at(middles) - joint_closed_form(middles))
    # A cubic spline errs by <= 5/384 h^4 max|x''''| (Hall & Meyer 1976, clamped ends); x'''' <= |lambda|^4 times
    # the amplitudes 2/sqrt(3) (q) and 20/sqrt(3) (q'), |lambda| = wn = 10: 9.4e-8 and 9.4e-7. Measured inside:
    # 8.9e-9 and 1.2e-7. In the first and last intervals a not-a-knot spline has a larger constant
    # (measured 1.6x the bound at t = 0, where q' has its largest derivatives): allow 4x there.
    bound = 5.0 / 384.0 * h**4 * 10.0**4 * np.array([2.0, 20.0]) / math.sqrt(3.0)
    inside = np.zeros(middles.size, dtype=bool)
    inside[3:-3] = True
    assert np.all(error[inside].max(axis=0) <= bound)
    assert np.all(error.max(axis=0) <= 4.0 * bound)
    np.testing.assert_allclose(tr.at(tr.t[17]), tr.x[17], rtol=0, atol=1e-15)  # through the stored points
    assert tr.at(2.5).shape == (2,) and tr.at([1.0, 2.0, 3.0]).shape == (3, 2)


def test_at_outside_the_span_is_an_input_error() -> None:
    tr = joint_trajectory(11)
    with pytest.raises(InputError, match=r"\[0, 5\]"):
        tr.at(5.5)
    with pytest.raises(InputError):
        tr.at([1.0, np.nan])


# --- names ---------------------------------------------------------------------------------------------
def test_state_and_output_by_name() -> None:
    tr = filtered_trajectory()
    np.testing.assert_array_equal(tr.state("x"), tr.x[:, 0])
    np.testing.assert_allclose(tr.output("y2"), 2.0 * tr.x[:, 0], rtol=1e-15)
    np.testing.assert_allclose(tr.output("speed"), -3.0 * tr.x[:, 0] + tr.u[:, 0], rtol=0, atol=1e-15)
    with pytest.raises(UnknownNameError, match="unknown state 'y2'"):
        tr.state("y2")
    with pytest.raises(UnknownNameError, match=r"unknown output 'x' \(the trajectory has y2, speed\)"):
        tr.output("x")
    assert isinstance(UnknownNameError("m"), KeyError)


def test_trajectory_is_read_only_and_checks_shapes() -> None:
    tr = joint_trajectory(11)
    assert not tr.x.flags.writeable
    with pytest.raises(ValueError):
        tr.x[0, 0] = 1.0
    with pytest.raises(ShapeError, match="x has shape"):
        Trajectory(tr.t, tr.x[:, :1], tr.u, tr.y, tr.states, tr.inputs, tr.outputs, "joint", tr.stats)
    assert len(tr) == 11
    np.testing.assert_array_equal(tr.final, tr.x[-1])


def test_adopt_takes_over_fresh_arrays_and_copies_the_rest() -> None:
    """The constructor simulate() uses: fresh x, u, y become the trajectory's (read-only); t, views and
    arrays already read-only are copied; shapes are checked as by the public constructor."""
    stats = SimulationStats("compiled", "dopri5")
    t, x, base = np.linspace(0.0, 1.0, 3), np.zeros((3, 2)), np.zeros((3, 4))
    tr = Trajectory._adopt(t, x, base[:, :1], x, ("a", "b"), ("w",), ("a", "b"), "m", stats, ())
    assert tr.x is x and not x.flags.writeable
    assert tr.t is not t and t.flags.writeable
    assert not np.shares_memory(tr.u, base) and base.flags.writeable
    assert tr.y is tr.x and not tr.u.flags.writeable  # y given as x itself: the same read-only array
    other = Trajectory._adopt(t, np.zeros((3, 2)), np.zeros((3, 1)), x, ("a", "b"), ("w",), ("a", "b"), "m", stats, ())
    assert other.y is not other.x and not other.y.flags.writeable  # x is read-only by now: y is a copy
    with pytest.raises(ShapeError, match=r"y has shape \(3, 3\), expected \(3, 2\)"):
        Trajectory._adopt(t, np.zeros((3, 2)), np.zeros((3, 1)), np.zeros((3, 3)), ("a", "b"), ("w",), ("a", "b"),
                          "m", stats, ())
    with pytest.raises(ShapeError, match="non-empty"):
        Trajectory._adopt(np.zeros(0), np.zeros((0, 2)), np.zeros((0, 1)), np.zeros((0, 2)), ("a", "b"), ("w",),
                          ("a", "b"), "m", stats, ())
    xs = np.zeros((2, 3, 2))
    batch = BatchTrajectory._adopt(t, xs, np.zeros((2, 3, 1)), xs.copy(), np.zeros((2, 2)), np.zeros((2, 0)),
                                   ("a", "b"), ("w",), ("a", "b"), (), "m", stats, ((), ()))
    assert batch.x is xs and not xs.flags.writeable and batch[1].x.shape == (3, 2)
    with pytest.raises(ShapeError, match="3 event lists for 2 trajectories"):
        BatchTrajectory._adopt(t, xs, np.zeros((2, 3, 1)), xs, np.zeros((2, 2)), np.zeros((2, 0)),
                               ("a", "b"), ("w",), ("a", "b"), (), "m", stats, ((), (), ()))


# --- export ----------------------------------------------------------------------------------------------
def test_csv_without_outputs_when_they_are_the_states(tmp_path) -> None:
    tr = joint_trajectory(101)
    path = tmp_path / "joint.csv"
    tr.to_csv(path)
    assert path.read_text().splitlines()[0] == "t,q,q_dot"
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    np.testing.assert_array_equal(table, np.column_stack([tr.t, tr.x]))  # %.17g: every bit survives
    assert [p.name for p in tmp_path.iterdir()] == ["joint.csv"]  # no temporary left


def test_csv_with_outputs(tmp_path) -> None:
    tr = filtered_trajectory()
    path = tmp_path / "sub" / "filter.csv"  # the folder is created
    tr.to_csv(path)
    assert path.read_text().splitlines()[0] == "t,x,y2,speed"
    np.testing.assert_array_equal(np.loadtxt(path, delimiter=",", skiprows=1), np.column_stack([tr.t, tr.x, tr.y]))
    assert [p.name for p in path.parent.iterdir()] == ["filter.csv"]


def test_npz_round_trip(tmp_path) -> None:
    tr = filtered_trajectory()
    path = tmp_path / "filter.npz"
    tr.to_npz(path)
    with np.load(path) as data:
        for name in ("t", "x", "u", "y"):
            np.testing.assert_array_equal(data[name], getattr(tr, name))
        assert tuple(data["states"]) == ("x",) and tuple(data["outputs"]) == ("y2", "speed")
        assert tuple(data["inputs"]) == ("w",) and str(data["model"]) == "filter"
        assert SimulationStats(**json.loads(str(data["stats"]))) == tr.stats
    assert [p.name for p in tmp_path.iterdir()] == ["filter.npz"]


def test_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch) -> None:
    tr = joint_trajectory(11)
    path = tmp_path / "joint.csv"
    tr.to_csv(path)
    before = path.read_bytes()

    def broken_replace(*_args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("robodyn.atomic.os.replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        joint_trajectory(21).to_csv(path)
    with pytest.raises(OSError, match="disk full"):
        tr.to_npz(tmp_path / "joint.npz")
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["joint.csv"]


def test_dataframe() -> None:
    pd = pytest.importorskip("pandas")
    tr = filtered_trajectory()
    frame = tr.to_dataframe()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == ["x", "y2", "speed", "w"] and frame.index.name == "t"
    np.testing.assert_array_equal(frame["w"].to_numpy(), tr.u[:, 0])


def test_plot_returns_a_figure() -> None:
    from matplotlib.figure import Figure

    tr = joint_trajectory(101)
    figure = tr.plot()
    assert isinstance(figure, Figure)
    states, inputs = figure.axes
    assert [line.get_label() for line in states.get_lines()] == ["q", "q_dot"]
    assert [line.get_label() for line in inputs.get_lines()] == ["u"]
    assert [line.get_label() for line in tr.plot(["q_dot"]).axes[0].get_lines()] == ["q_dot"]
    with pytest.raises(UnknownNameError, match="unknown state 'theta'"):
        tr.plot(["theta"])


# --- batches ---------------------------------------------------------------------------------------------
def test_batch_trajectory(tmp_path) -> None:
    joint = robodyn.load("joint")
    batch = robodyn.simulate(joint, 1.0, [[1.0, 0.0], [0.0, 1.0]], params={"k": [1.0, 4.0]},
                             t_eval=np.linspace(0.0, 1.0, 11))
    assert isinstance(batch, robodyn.BatchTrajectory) and len(batch) == 2
    assert batch.state("q").shape == (2, 11)
    with pytest.raises(UnknownNameError):
        batch.state("theta")
    with pytest.raises(IndexError, match="out of range"):
        batch[2]
    np.testing.assert_array_equal(batch[-1].x, batch.x[1])
    path = tmp_path / "batch.npz"
    batch.to_npz(path)
    with np.load(path) as data:
        for name in ("t", "x", "u", "y", "x0", "params"):
            np.testing.assert_array_equal(data[name], getattr(batch, name))
        assert tuple(data["parameters"]) == ("J", "b", "k")
    assert [p.name for p in tmp_path.iterdir()] == ["batch.npz"]
