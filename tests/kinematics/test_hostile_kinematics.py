"""Hostile input to the kinematics API (brief H4): robodyn's own errors with the fix named, work bounded
before it starts, model text shown literally on figures.

Each test names the defect it pins: inverse_kinematics with huge or non-integer starts and seeds, targets
and starts of the wrong type; Kinematics with strings, complex numbers and objects for q; animate with
something that is not a trajectory, options out of range, a GIF too large for memory, a folder that
refuses the file after the options were accepted; free text (``$\\frac{$``) in a model's or frame's name.
"""

from __future__ import annotations

import gc
import io
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.base import atomic as atomic_module
from robodyn.base.errors import InputError, ShapeError, UnknownNameError
from robodyn.kinematics import animate as animate_module
from robodyn.kinematics import ik as ik_module
from robodyn.kinematics import kinematics
from robodyn.kinematics.animate import animate
from robodyn.kinematics.ik import inverse_kinematics
from robodyn.kinematics.paths import plot_path
from robodyn.kinematics.rotations import rotation_error, rotation_from_quaternion, rotation_from_rpy
from robodyn.results.trajectory import Trajectory

ARM = "examples/planar_arm.yaml"  # two revolute joints about z; the tool frame "tip" 1.8 m out at q = 0
DOLLAR = r"$\frac{$"  # math text matplotlib cannot parse: shown literally, or the figure raises when drawn


@pytest.fixture(scope="module")
def arm() -> robodyn.Model:
    return robodyn.load(ARM)


@pytest.fixture(scope="module")
def run(arm: robodyn.Model) -> Trajectory:
    trajectory = robodyn.simulate(arm, 0.2, {"q1": 0.3})
    assert isinstance(trajectory, Trajectory)
    return trajectory


def _dollar_arm(tmp_path: Path) -> robodyn.Model:
    """The planar arm named ``arm $\\frac{$`` with its tool frame named ``t$\\frac{$`` (both free text)."""
    text = Path(ARM).read_text(encoding="utf-8").replace("name: planar_arm", f"name: 'arm {DOLLAR}'")
    text = text.replace("frames: {tip:", f"frames: {{'t{DOLLAR}':")
    path = tmp_path / "dollar_arm.yaml"
    path.write_text(text, encoding="utf-8")
    return robodyn.load(str(path))


# --- inverse kinematics: bounded before any work -----------------------------------------------------------
@pytest.mark.parametrize("starts", [10**9, 10**18])
def test_ik_refuses_more_starts_than_the_limit_before_allocating(arm, starts):
    """Defect: starts=10**9 allocated 14.9 GiB (MemoryError), 10**18 raised numpy's ValueError."""
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=r"starts .*whole number from 1 to 100,000"):
            inverse_kinematics(arm, [1.0, 0.5, 0.0], starts=starts)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20


def test_ik_refuses_starts_whose_estimated_memory_exceeds_the_limit(arm, monkeypatch):
    """The estimate (robodyn.kinematics.ik.work_bytes) is checked against MAX_WORK_BYTES before the starts
    are drawn; here the limit is lowered to 1 MiB so that 2000 starts of a two-joint arm exceed it."""
    monkeypatch.setattr(ik_module, "MAX_WORK_BYTES", 2**20, raising=False)
    with pytest.raises(InputError, match=r"starts 2000 on 2 joints would need about .* MiB.*give at most \d+ starts"):
        inverse_kinematics(arm, [1.0, 0.5, 0.0], starts=2000)


@pytest.mark.parametrize(("option", "value"), [
    ("seed", -1), ("seed", 1.5), ("seed", "7"), ("seed", True), ("seed", None),
    ("starts", 2.5), ("starts", "8"), ("starts", True), ("starts", 0), ("starts", np.float64(4.0)),
    ("max_iterations", 10**9), ("max_iterations", 0.5),
])
def test_ik_refuses_counts_and_seeds_that_are_not_whole_numbers_in_range(arm, option, value):
    """Defect: seed=-1 raised numpy's ValueError, seed=1.5 a TypeError."""
    with pytest.raises(InputError, match=rf"{option} .*must be a whole number"):
        inverse_kinematics(arm, [1.0, 0.5, 0.0], **{option: value})


def test_ik_accepts_numpy_integers_for_starts_and_seed(arm):
    result = inverse_kinematics(arm, [1.2, 0.5, 0.0], starts=np.int64(3), seed=np.uint8(5))
    assert result.reachable


@pytest.mark.parametrize(("arguments", "error", "phrase"), [
    ({"position": "1,0,0"}, InputError, r"target position .*real numbers.*\(text\)"),
    ({"position": {"x": 1.0}}, InputError, "target position"),
    ({"position": [1.0, 0.0]}, ShapeError, "3 finite numbers"),
    ({"position": [1.0, 0.0, np.nan]}, ShapeError, "3 finite numbers"),
    ({"position": [1j, 0.0, 0.0]}, InputError, "complex"),
    ({"orientation": "abc"}, InputError, r"target orientation .*real numbers"),
    ({"orientation": object()}, InputError, "target orientation"),
    ({"orientation": [0.0, 0.0]}, ShapeError, "roll, pitch, yaw"),
    ({"frame": "hand"}, UnknownNameError, r"no frame 'hand'.*tip"),
    ({"frame": ["tip"]}, UnknownNameError, "no frame"),
    ({"q0": [1.0, 2.0, 3.0]}, ShapeError, r"expected \(2,\) for q1, q2"),
    ({"q0": "ab"}, InputError, "real numbers"),
    ({"q0": [np.nan, 0.0]}, InputError, "not finite"),
    ({"q0": {"elbow": 1.0}}, UnknownNameError, r"unknown coordinate 'elbow'.*q1, q2"),
    ({"tolerance": "x"}, InputError, r"tolerance 'x': give a positive finite number"),
    ({"tolerance": -1.0}, InputError, "tolerance"),
    ({"orientation_weight": None}, InputError, "orientation_weight None"),
    ({"limits": "no"}, InputError, r"limits 'no': give True .* or False"),
])
def test_ik_refuses_bad_targets_starts_and_options_with_robodyns_errors(arm, arguments, error, phrase):
    """Defect: a string target raised numpy's ValueError, q0 of the wrong length a reshape ValueError, a
    string tolerance a TypeError, limits="no" was taken as True."""
    given = {"position": [1.0, 0.5, 0.0], **arguments}
    position = given.pop("position")
    with pytest.raises(error, match=phrase):
        inverse_kinematics(arm, position, **given)


def test_ik_of_a_model_without_frames_says_so():
    with pytest.raises(InputError, match="has no frames"):
        inverse_kinematics(robodyn.load("joint"), [1.0, 0.0, 0.0])


def test_rotation_error_of_a_batch_is_the_error_of_each_rotation():
    """rotation_error is vectorized (IK used to loop over the starts in Python): row by row the same, to the
    last bit, including rotations within 1e-12 of pi."""
    rng = np.random.default_rng(11)
    current = rotation_from_quaternion(rng.normal(size=(300, 4)))
    target = rotation_from_quaternion(rng.normal(size=4))
    flipped = rotation_from_rpy(np.array([np.pi - 1e-12, 0.0, 0.0])) @ current[:50]
    batch = np.concatenate([current, flipped])
    rows = np.array([rotation_error(R, target) for R in batch])
    np.testing.assert_array_equal(rotation_error(batch, target), rows)
    assert np.all(np.linalg.norm(rows, axis=1) <= np.pi + 1e-12)


def test_ik_with_many_starts_and_a_pose_target_ends_quickly(arm):
    """Defect: the orientation error was computed start by start in Python: 100,000 starts took ten minutes
    (now seconds); 20,000 starts on a target the planar arm cannot orient to take well under 20 s."""
    start = time.perf_counter()
    result = inverse_kinematics(arm, [1.2, 0.5, 0.0], orientation=[0.0, 0.1, 2.0], starts=20_000)
    assert time.perf_counter() - start < 20.0
    assert not result.reachable and result.orientation_error > 0.05


# --- forward kinematics ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("call", "error", "phrase"), [
    (lambda K: K.pose("ab"), InputError, r"configuration \(q1, q2\) must be real numbers.*text"),
    (lambda K: K.pose("1,2"), InputError, "configuration"),
    (lambda K: K.pose(object()), InputError, "configuration"),
    (lambda K: K.pose([1j, 0.0]), InputError, "complex"),
    (lambda K: K.pose([[0.0, 0.0], [0.0]]), InputError, "configuration"),
    (lambda K: K.pose([0.0, 0.0, 0.0]), ShapeError, r"expected 2 coordinates \(q1, q2\)"),
    (lambda K: K.pose([np.nan, 0.0]), InputError, "non-finite"),
    (lambda K: K.pose({"elbow": 1.0}), UnknownNameError, "unknown coordinate 'elbow'"),
    (lambda K: K.pose([0.0, 0.0], "hand"), UnknownNameError, r"no frame 'hand'.*tip"),
    (lambda K: K.pose([0.0, 0.0], np.array(["tip", "base"])), UnknownNameError, "no frame"),
    (lambda K: K.origins("ab"), InputError, "configuration"),
    (lambda K: K.jacobian([0.0, 0.0], reference=np.array(["world", "local"])), InputError, "reference"),
    (lambda K: K.jacobian([0.0]), ShapeError, "expected 2 coordinates"),
    (lambda K: K.velocity([0.0, 0.0], "ab"), InputError, r"velocities \(q1, q2\) must be real numbers"),
    (lambda K: K.velocity([0.0, 0.0], [1.0, 2.0, 3.0]), ShapeError, "velocities of shape"),
    (lambda K: K.manipulability([0.0, 0.0], part=["full"]), InputError, "manipulability part"),
    (lambda K: K.manipulability([0.0, 0.0], part="twist"), InputError, "full, linear or angular"),
    (lambda K: K.pose([0.0, 0.0], params={"mass": 1.0}), UnknownNameError, "unknown parameter 'mass'"),
])
def test_kinematics_refuses_wrong_types_and_shapes_with_robodyns_errors(arm, call, error, phrase):
    """Defect: a string or an object for q raised numpy's ValueError or TypeError, a list for ``part`` a
    TypeError (unhashable), an array for a frame or reference numpy's ambiguous-truth ValueError."""
    with pytest.raises(error, match=phrase):
        call(kinematics(arm))


def test_kinematics_of_a_model_without_frames_says_what_to_use():
    with pytest.raises(InputError, match=r"has no frames.*chain file or a URDF robot"):
        kinematics(robodyn.load("joint"))


# --- animate ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("trajectory", ["run", None, 3.0])
def test_animate_of_something_that_is_not_a_trajectory(trajectory):
    """Defect: robodyn.animate("run") raised AttributeError ('str' object has no attribute 'source')."""
    with pytest.raises(InputError, match=r"expected a robodyn\.Trajectory"):
        robodyn.animate(trajectory)


def test_animate_of_a_batch_says_to_pick_one_run(arm):
    batch = robodyn.simulate(arm, 0.1, [[0.1, 0.0, 0.0, 0.0], [0.2, 0.0, 0.0, 0.0]])
    with pytest.raises(InputError, match=r"BatchTrajectory: pick one run, e\.g\. batch\[0\]"):
        animate(batch)


@pytest.mark.parametrize(("option", "value", "phrase"), [
    ("fps", 10**9, "fps must be an integer from 1 to 100"),
    ("fps", -1, "fps must be an integer"),
    ("fps", "x", "fps must be an integer"),
    ("max_frames", 10**12, "max_frames must be an integer from 2 to 10,000"),
    ("dpi", 10**6, "dpi must be an integer from 1 to 600"),
    ("dpi", 0, "dpi must be an integer"),
    ("trace", "no", r"trace 'no': give True"),
    ("frame", "hand", r"no frame 'hand'"),
])
def test_animate_refuses_options_out_of_range_before_drawing(run, tmp_path, option, value, phrase):
    """Defect: fps, max_frames and dpi had no upper bound (dpi=10**6 asks for 5e6 x 5e6 pixels a frame)."""
    with pytest.raises(InputError, match=phrase):
        animate(run, tmp_path / "arm.gif", **{option: value})
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("out", [5, b"arm.gif", ["arm.gif"]])
def test_animate_refuses_an_out_that_is_not_a_path(run, out):
    """Defect: out=5 raised TypeError from pathlib."""
    with pytest.raises(InputError, match=r"give the path of a \.gif or \.mp4 file"):
        animate(run, out)


def test_a_gif_too_large_for_memory_is_refused_with_the_frames_that_fit(run, tmp_path):
    """A GIF's frames are all held in memory: 5000 frames of 500 x 500 pixels (4.7 GiB) are refused before
    anything is drawn, naming how many frames fit; an MP4 (streamed by ffmpeg) would not be refused for that."""
    with pytest.raises(InputError, match=r"5000 frames at 100 dpi .* MiB .*lower max_frames to 1073 .*\.mp4"):
        animate(run, tmp_path / "arm.gif", max_frames=5000)
    assert not list(tmp_path.iterdir())


def test_a_folder_that_refuses_the_file_fails_before_drawing(run, tmp_path, monkeypatch):
    """Defect: the temporary file was created after the animation was built, so a folder that refused it
    failed after the drawing, and matplotlib warned 'Animation was deleted without rendering anything' (two
    more lines on the command line's stderr)."""
    drawn: list[int] = []
    build = animate_module._build

    def counting_build(*args, **kwargs):
        drawn.append(1)
        return build(*args, **kwargs)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(animate_module, "_build", counting_build)
    monkeypatch.setattr(atomic_module, "_exclusive", refuse)  # every new file or folder in the target's folder
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(InputError, match=r"cannot write .*Permission denied: choose a writable location"):
            animate(run, tmp_path / "arm.gif", max_frames=2, dpi=20)
        gc.collect()
    assert drawn == []
    assert not [w for w in caught if "Animation was deleted" in str(w.message)]
    assert not list(tmp_path.iterdir())


def test_a_failed_save_leaves_nothing_behind(run, tmp_path, monkeypatch):
    from matplotlib.animation import PillowWriter

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(PillowWriter, "finish", fail)  # after every frame was drawn, while writing the file
    with pytest.raises(InputError, match=r"arm\.gif: No space left on device: free some space"):
        animate(run, tmp_path / "arm.gif", max_frames=2, dpi=20)
    assert not list(tmp_path.iterdir())


# --- model text on figures --------------------------------------------------------------------------------
def test_an_animation_of_a_model_and_frame_named_in_math_text_is_written(tmp_path):
    """Defect: the title '{model}: {frame}, t = ...' went to matplotlib's math text parser: a model named
    'arm $\\frac{$' raised ValueError when the first frame was drawn."""
    model = _dollar_arm(tmp_path)
    trajectory = robodyn.simulate(model, 0.1, {"q1": 0.3})
    out = tmp_path / "arm.gif"
    animate(trajectory, out, max_frames=2, dpi=20)
    assert out.stat().st_size > 0


def test_plot_path_shows_a_model_and_frame_named_in_math_text_literally(tmp_path):
    """plot_path's title and legend carry the names as written (SVG text, not paths, to read them back)."""
    import matplotlib

    model = _dollar_arm(tmp_path)
    trajectory = robodyn.simulate(model, 0.1, {"q1": 0.3})
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        plot_path(trajectory.frame()).savefig(buffer, format="svg")
    svg = buffer.getvalue()
    assert f"arm {DOLLAR}: t{DOLLAR}" in svg and f"t{DOLLAR} path" in svg
