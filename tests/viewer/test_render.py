"""robodyn.viewer.render (``robodyn animate --render 3d``): a GIF of a short Panda run drawn by the 3-D view in
headless Chromium has the frames asked, its frames differ only where the robot is drawn (and the time written
beside the title); without Chromium the command refuses in
one line naming the fix and writes nothing."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from robodyn.base.errors import InputError
from robodyn.cli import main
from robodyn.viewer import browser as browser_module
from robodyn.viewer.browser import available
from robodyn.viewer.render import check_render

pytest.importorskip("trimesh")
PANDA = Path(__file__).resolve().parents[2] / "examples" / "panda.urdf"  # its meshes: example-robot-data's
X0 = "panda_joint1_dot=2,panda_joint2=-0.5,panda_joint4=-2,panda_joint6=1.5"
TITLE_ROWS = 30  # the title and the time written beside it, at the frame's top left (14 px text, 8 px from the top)


def _frames(path: Path) -> list[np.ndarray]:
    from PIL import Image, ImageSequence

    with Image.open(path) as gif:
        return [np.asarray(frame.convert("RGB")).astype(int) for frame in ImageSequence.Iterator(gif)]


@pytest.mark.skipif(not available(), reason="chromium is not installed (make test installs it)")
def test_a_3d_rendered_gif_has_the_frames_asked_and_differs_where_the_robot_moved(tmp_path: Path) -> None:
    out = tmp_path / "panda.gif"
    assert main(["animate", str(PANDA), "--t-final", "0.3", "--x0", X0, "--frames", "6", "--fps", "10",
                 "--render", "3d", "--out", str(out)]) == 0
    frames = _frames(out)
    assert len(frames) == 6 and frames[0].shape == (480, 640, 3)
    values, counts = np.unique(frames[0].reshape(-1, 3), axis=0, return_counts=True)
    background = values[np.argmax(counts)]  # the page's background: most of the frame
    for before, after in itertools.pairwise(frames):
        changed = np.abs(before - after).sum(axis=2) > 30
        assert changed.sum() > 500  # the arm turned (joint 1 at 2 rad/s) on the screen
        # the robot (white links close to the background): every pixel that is not the background's own colour
        robot = np.any(before != background, axis=2) | np.any(after != background, axis=2)
        changed[:TITLE_ROWS] = False
        assert not np.any(changed & ~robot)  # nothing changed where neither frame draws the robot


def test_without_chromium_the_command_refuses_in_one_line_and_writes_nothing(tmp_path: Path, monkeypatch,
                                                                            capsys) -> None:
    monkeypatch.setattr(browser_module, "BROWSERS", ("robodyn-no-such-browser",))
    out = tmp_path / "panda.gif"
    with pytest.raises(SystemExit) as stopped:  # the command line's errors exit through robodyn.cli.commands.fail
        main(["animate", str(PANDA), "--t-final", "0.3", "--render", "3d", "--out", str(out)])
    assert stopped.value.code == 2
    message = capsys.readouterr().err.strip()
    assert "\n" not in message and "install it (apt-get install chromium" in message
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("out", "size", "words"), [
    ("run.mp4", (640, 480), "name a .gif"), ("run.gif", (640,), "size"), ("run.gif", (8, 480), "16"),
    ("run.gif", (640, True), "whole pixels")])
def test_the_options_are_checked_before_any_work(tmp_path: Path, out: str, size: tuple[int, ...],
                                                 words: str) -> None:
    with pytest.raises(InputError, match=words):
        check_render(tmp_path / out, size)
    assert list(tmp_path.iterdir()) == []
