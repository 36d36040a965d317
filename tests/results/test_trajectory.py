"""Trajectory and BatchTrajectory: interpolation, export (CSV, npz, pandas), plots, names, atomic writes.

Trajectories come from the exact path (no compilation): the joint (outputs = states) and a first-order
linear system with its own outputs, so that every CSV layout is covered.
"""

from __future__ import annotations

import io
import json
import math

import matplotlib
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import robodyn
from robodyn import InputError, ShapeError, UnknownNameError
from robodyn.results.trajectory import BatchTrajectory, EventRecord, SimulationStats, Trajectory
from robodyn.signals import Sine

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
    np.testing.assert_array_equal(table, np.column_stack([tr.t, tr.x]))  # repr: every bit survives
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

    monkeypatch.setattr("robodyn.base.atomic.os.replace", broken_replace)
    with pytest.raises(InputError, match=r"joint\.csv: disk full"):  # robodyn's error, naming the file
        joint_trajectory(21).to_csv(path)
    with pytest.raises(InputError, match=r"joint\.npz: disk full"):
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
    coordinates, velocities = figure.axes  # one axis per quantity; the constant input is named in the title
    assert [line.get_label() for line in coordinates.get_lines()] == ["q"]
    assert [line.get_label() for line in velocities.get_lines()] == ["q_dot"]
    assert "constant inputs: u = 1" in coordinates.get_title()
    assert [line.get_label() for line in tr.plot(["q_dot"]).axes[0].get_lines()] == ["q_dot"]
    with pytest.raises(UnknownNameError, match="unknown state or output 'theta'"):
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


# --- CSV text: the shortest exact floats -----------------------------------------------------------------
def bits(array: np.ndarray) -> bytes:
    """The float64 bits, so that -0.0 and 0.0 differ."""
    return np.ascontiguousarray(array, dtype=np.float64).tobytes()


def test_csv_text_writes_the_shortest_exact_floats(tmp_path) -> None:
    tr = joint_trajectory(126)  # t = 0, 0.04, 0.08, ...
    text = tr.to_csv_text()
    lines = text.splitlines()
    assert lines[0] == "t,q,q_dot" and lines[2].startswith("0.04,") and text.endswith("\n")
    assert "0.040000000000000001" not in text
    for line in lines[1:]:
        assert all(field == repr(float(field)) for field in line.split(","))  # shortest round-trip text
    table = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1)
    assert bits(table) == bits(np.column_stack([tr.t, tr.x]))
    tr.to_csv(tmp_path / "joint.csv")
    assert (tmp_path / "joint.csv").read_text() == text


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=2, max_size=12))
def test_csv_round_trip_is_bit_exact(values: list[float]) -> None:
    """Subnormals, -0.0, 1e308, 0.1 + 0.2: each reads back to the same bits through to_csv_text and load."""
    x = np.array(values).reshape(-1, 1)
    tr = Trajectory(np.arange(len(values), dtype=float), x, np.zeros((len(values), 0)), x, ("x",), (), ("x",), "m",
                    SimulationStats("exact", "exact"))
    rows = [line.split(",") for line in tr.to_csv_text().splitlines()[1:]]
    assert bits(np.array([[float(v) for v in row] for row in rows])[:, 1]) == bits(x[:, 0])


def test_csv_load_round_trip(tmp_path) -> None:
    tr = joint_trajectory(101)
    path = tmp_path / "joint.csv"
    tr.to_csv(path)
    back = Trajectory.load(path)
    assert bits(back.t) == bits(tr.t) and bits(back.x) == bits(tr.x) and bits(back.y) == bits(tr.x)
    assert back.states == back.outputs == ("q", "q_dot")
    # What a CSV cannot carry: no inputs (u is (T, 0)), the file's stem as the model, placeholder statistics.
    assert back.inputs == () and back.u.shape == (101, 0)
    assert back.model == "joint" and back.stats == SimulationStats("loaded", "unknown")
    assert back.events == () and back.params is None and back.source is None


def test_csv_load_splits_states_and_outputs_when_told(tmp_path) -> None:
    tr = filtered_trajectory()
    path = tmp_path / "filter.CSV"
    path.write_text(tr.to_csv_text())
    back = Trajectory.load(path, states=["x"])
    assert back.states == ("x",) and back.outputs == ("y2", "speed")
    assert bits(back.x) == bits(tr.x) and bits(back.y) == bits(tr.y) and bits(back.t) == bits(tr.t)
    everything = Trajectory.load(path)  # without states: every column is a state
    assert everything.states == everything.outputs == ("x", "y2", "speed")
    with pytest.raises(InputError, match="the states y2 must be the first"):
        Trajectory.load(path, states=["y2"])


def test_csv_with_a_column_twice_needs_the_states(tmp_path) -> None:
    path = tmp_path / "twice.csv"
    path.write_text("t,x,v,x\n0,1,2,1\n1,3,4,3\n")
    with pytest.raises(InputError, match=r"twice\.csv: column 'x' appears twice: pass states="):
        Trajectory.load(path)
    back = Trajectory.load(path, states=["x", "v"])
    assert back.outputs == ("x",) and back.y.tolist() == [[1.0], [3.0]]


@pytest.mark.parametrize(("text", "problem"), [
    ("", "empty"),
    ("time,q\n0,1\n", "the first column is 'time', expected t"),
    ("t\n0\n", "needs t and one name per column"),
    ("t,q,\n0,1,2\n", "needs t and one name per column"),
    ("t,q\n", "a header but no data"),
    ("t,q\n0,1\n1,abc\n", r":3: column 'q': 'abc' is not a number"),
    ("t,q\n0,1\n1,2,3\n", r":3: 3 values for the 2 columns t,q"),
    ("t,q\n1,1\n0,2\n", "t must be finite and non-decreasing"),
])
def test_bad_csv_files_are_input_errors_naming_the_file(tmp_path, text: str, problem: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=problem) as caught:
        Trajectory.load(path)
    assert str(caught.value).startswith(str(path))


def test_load_refuses_other_suffixes_missing_and_oversized_files(tmp_path) -> None:
    with pytest.raises(InputError, match=r"unknown trajectory file type '\.txt': give a \.csv or \.npz"):
        Trajectory.load(tmp_path / "run.txt")
    with pytest.raises(InputError, match="no such file"):
        Trajectory.load(tmp_path / "missing.csv")
    path = tmp_path / "big.csv"
    joint_trajectory(101).to_csv(path)
    with pytest.raises(InputError, match="larger than the limit of 100 bytes"):
        Trajectory.load(path, limit=100)
    (tmp_path / "folder.csv").mkdir()
    with pytest.raises(InputError, match="is a folder"):
        Trajectory.load(tmp_path / "folder.csv")


# --- npz: everything back ----------------------------------------------------------------------------------
def test_npz_load_gives_everything_back(tmp_path) -> None:
    base = filtered_trajectory()
    events = (EventRecord("cross", 0.5, np.array([0.25]), False), EventRecord("stop", 1.5, np.array([-0.5]), True))
    stats = SimulationStats("compiled", "dopri5", nfev=120, steps=20, rejected=3, compile_seconds=0.25)
    tr = Trajectory(base.t, base.x, base.u, base.y, base.states, base.inputs, base.outputs, "filter", stats, events,
                    params=np.array([3.0]))
    path = tmp_path / "filter.npz"
    tr.to_npz(path)
    back = Trajectory.load(path)
    for name in ("t", "x", "u", "y"):
        assert bits(getattr(back, name)) == bits(getattr(tr, name))
    assert (back.states, back.inputs, back.outputs, back.model) == (("x",), ("w",), ("y2", "speed"), "filter")
    assert back.stats == stats
    assert [(e.name, e.t, e.x.tolist(), e.terminal) for e in back.events] == [
        ("cross", 0.5, [0.25], False), ("stop", 1.5, [-0.5], True)]
    assert back.params is not None and back.params.tolist() == [3.0] and back.source is None
    assert not back.x.flags.writeable
    with pytest.raises(InputError, match="the states are x, not q"):
        Trajectory.load(path, states=["q"])


def test_npz_without_events_and_with_unknown_stats_keys_loads(tmp_path) -> None:
    """A file from before events were stored, with statistics from a newer robodyn (an extra key)."""
    tr = joint_trajectory(11)
    path = tmp_path / "old.npz"
    stats = json.dumps({**tr.stats.to_dict(), "later_field": 1})
    np.savez(path, t=tr.t, x=tr.x, u=tr.u, y=tr.y, states=np.array(tr.states), inputs=np.array(tr.inputs),
             outputs=np.array(tr.outputs), model=np.array("joint"), stats=np.array(stats))
    back = Trajectory.load(path)
    assert back.events == () and back.stats == tr.stats and bits(back.x) == bits(tr.x)


def _npz(path, **overrides: object) -> None:
    tr = joint_trajectory(11)
    arrays: dict[str, object] = {"t": tr.t, "x": tr.x, "u": tr.u, "y": tr.y, "states": np.array(tr.states),
                                 "inputs": np.array(tr.inputs), "outputs": np.array(tr.outputs),
                                 "model": np.array("joint"), "stats": np.array(json.dumps(tr.stats.to_dict()))}
    arrays.update(overrides)
    np.savez(path, **{k: v for k, v in arrays.items() if v is not None})


@pytest.mark.parametrize(("overrides", "problem"), [
    ({"t": None}, "no t in the archive"),
    ({"x": np.zeros((11, 3))}, r"x has shape \(11, 3\), expected \(11, 2\)"),
    ({"y": np.array(["a"] * 11)}, "y holds <U1 values, not numbers"),
    ({"stats": np.array("{not json")}, "stats is not the JSON of SimulationStats"),
    ({"states": np.zeros(2)}, "states must be a list of names"),
    ({"x0": np.zeros((2, 2))}, r"holds a batch of trajectories"),
    ({"event_names": np.array(["hit"])}, "the event arrays do not match"),
])
def test_bad_npz_files_are_input_errors_naming_the_file(tmp_path, overrides: dict[str, object], problem: str) -> None:
    path = tmp_path / "bad.npz"
    _npz(path, **overrides)
    with pytest.raises(InputError, match=problem) as caught:
        Trajectory.load(path)
    assert str(caught.value).startswith(str(path))


def test_npz_that_is_not_an_archive_or_unpacks_too_large(tmp_path) -> None:
    path = tmp_path / "text.npz"
    path.write_text("t,q\n0,1\n")
    with pytest.raises(InputError, match=r"text\.npz: not a readable \.npz archive"):
        Trajectory.load(path)
    big = tmp_path / "zeros.npz"
    _npz(big, x=None, y=None)  # small on disk ...
    np.savez_compressed(big, t=np.zeros(200_000))  # ... and this one packs 1.6 MB of zeros into a few kB
    assert big.stat().st_size < 20_000
    with pytest.raises(InputError, match=r"unpack to .* bytes, more than the limit of 100000 bytes"):
        Trajectory.load(big, limit=100_000)
