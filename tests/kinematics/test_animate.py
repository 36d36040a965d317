"""animate: resampling, the GIF it writes (frame count, the tool drawn where the trajectory puts it, in time
order), atomic output, notebook output, and the errors (no frames, bad suffix, missing ffmpeg, max_frames)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from PIL import Image

import robodyn
from robodyn import InputError
from robodyn.kinematics import kinematics
from robodyn.kinematics.animate import TOOL_COLOR, VIEW, animate, resample
from robodyn.results.trajectory import Trajectory

FRAMES = 20
DPI = 50


@pytest.fixture(scope="module")
def run() -> Trajectory:
    """The two-link URDF arm released from shoulder 0.3: the tool falls and swings in the x-z plane."""
    tr = robodyn.simulate(robodyn.load("examples/two_link_arm.urdf"), 1.0, {"shoulder": 0.3})
    assert isinstance(tr, Trajectory) and len(tr) > FRAMES
    return tr


@pytest.fixture(scope="module")
def gif(run, tmp_path_factory):
    path = tmp_path_factory.mktemp("animate") / "swing.gif"
    animation = animate(run, path, fps=10, max_frames=FRAMES, dpi=DPI)
    return path, animation


def _frames(path) -> list[np.ndarray]:
    with Image.open(path) as image:
        frames = []
        for k in range(image.n_frames):
            image.seek(k)
            frames.append(np.asarray(image.convert("RGB"), dtype=float))
    return frames


def _marker_centre(frame: np.ndarray) -> np.ndarray:
    """(column, up) of the pixels drawn in the tool marker's colour (up = minus the row)."""
    rgb = np.array([int(TOOL_COLOR[i : i + 2], 16) for i in (1, 3, 5)], dtype=float)
    rows, cols = np.nonzero(np.linalg.norm(frame - rgb, axis=2) < 40)
    assert rows.size > 5, "the tool marker is not drawn"
    return np.array([cols.mean(), -rows.mean()])


def test_resample_is_even_in_time_and_interpolates_each_state(run):
    times, states = resample(run, 7)
    np.testing.assert_allclose(times, np.linspace(run.t[0], run.t[-1], 7))
    for j in range(run.x.shape[1]):
        np.testing.assert_allclose(states[:, j], np.interp(times, run.t, run.x[:, j]))
    assert resample(run, 10**6)[0].size == len(run)  # never more frames than stored points


def test_the_gif_has_the_resampled_frames(gif):
    path, _ = gif
    with Image.open(path) as image:
        assert image.format == "GIF" and image.n_frames == FRAMES
        assert image.size == (5 * DPI, 5 * DPI)
    assert [p.name for p in path.parent.iterdir()] == ["swing.gif"]  # no temporary file left behind


def test_the_tool_is_drawn_where_the_trajectory_puts_it_in_time_order(run, gif):
    """The tool marker's pixel centre, frame by frame, against the tool position projected by the view
    (orthographic, equal scales): one common scale > 0 and an offset must explain every frame. A static arm
    (no motion of the marker), frames in the wrong order or a wrong tool would fail."""
    _, states = resample(run, FRAMES)
    tool = kinematics(run.source).position(states[:, :2])
    elevation, azimuth = np.radians(VIEW)
    right = np.array([-np.sin(azimuth), np.cos(azimuth), 0.0])
    up = np.array([-np.sin(elevation) * np.cos(azimuth), -np.sin(elevation) * np.sin(azimuth), np.cos(elevation)])
    expected = np.column_stack([tool @ right, tool @ up])  # (F, 2) screen coordinates in m
    measured = np.array([_marker_centre(frame) for frame in _frames(gif[0])])  # (F, 2) in pixels
    centred_e, centred_m = expected - expected.mean(axis=0), measured - measured.mean(axis=0)
    scale = np.sum(centred_e * centred_m) / np.sum(centred_e**2)  # pixels per metre, least squares
    residual = np.sqrt(np.mean(np.sum((centred_m - scale * centred_e) ** 2, axis=1)))
    travel = np.ptp(measured, axis=0).max()
    assert scale > 0 and travel > 30  # the marker moves tens of pixels, the right way round
    assert residual < 0.05 * travel, f"marker off its projected path by {residual:.1f} px (travel {travel:.0f} px)"


def test_consecutive_frames_differ_and_the_trace_grows(gif):
    frames = _frames(gif[0])
    assert all(np.any(a != b) for a, b in itertools.pairwise(frames))
    trace = np.array([0xFF, 0x7F, 0x0E], dtype=float)
    drawn = [np.count_nonzero(np.linalg.norm(frame - trace, axis=2) < 40) for frame in frames]
    assert drawn[0] < drawn[FRAMES // 2] < drawn[-1]


def test_the_animation_is_returned_for_notebooks(run):
    animation = animate(run, max_frames=3, dpi=20, trace=False)
    assert "<script" in animation.to_jshtml()


def test_a_file_is_replaced_atomically(run, tmp_path):
    target = tmp_path / "out.gif"
    target.write_bytes(b"old")
    animate(run, target, max_frames=2, dpi=20)
    with Image.open(target) as image:
        assert image.n_frames == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.gif"]


def test_a_model_without_frames_is_refused(tmp_path):
    tr = robodyn.simulate(robodyn.load("joint"), 0.5)
    with pytest.raises(InputError, match="has no frames"):
        animate(tr, tmp_path / "p.gif")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name", ["arm.png", "arm", "arm.gif.txt"])
def test_other_suffixes_are_refused(run, tmp_path, name):
    with pytest.raises(InputError, match=r"\.gif or \.mp4"):
        animate(run, tmp_path / name)
    assert not list(tmp_path.iterdir())


def test_mp4_without_ffmpeg_says_what_to_do(run, tmp_path, monkeypatch):
    from matplotlib.animation import FFMpegWriter

    monkeypatch.setattr(FFMpegWriter, "isAvailable", classmethod(lambda cls: False))
    with pytest.raises(InputError, match=r"needs ffmpeg.*\.gif.*install ffmpeg"):
        animate(run, tmp_path / "arm.mp4")


@pytest.mark.parametrize(("option", "value"), [("max_frames", 1), ("max_frames", 2.5), ("fps", 0), ("dpi", True)])
def test_bad_options_are_refused(run, option, value):
    with pytest.raises(InputError, match=f"{option} must be an integer"):
        animate(run, **{option: value})
