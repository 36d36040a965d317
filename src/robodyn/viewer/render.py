"""A run as a GIF drawn by the 3-D view (``robodyn animate --render 3d``): the robot with its meshes, for slides.

The frames are the GIF path's (robodyn.kinematics.animate.resample: ``min(max_frames, T)`` times evenly spaced over
the run); each is the instant of the 3-D page (robodyn.viewer.view) nearest to it — the page shows a run at 60
instants a second, so a frame is at most 1/120 s from its time — set with the page's own slider and screenshot by
headless Chromium (robodyn.viewer.browser), the controls hidden and the time written beside the title. Pillow, which
writes the GIF path's files, assembles them; the file is written atomically, after every frame was drawn.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.atomic import check_output_path, write_files_atomic
from robodyn.base.errors import InputError
from robodyn.viewer.browser import Chromium, require_browser

if TYPE_CHECKING:
    from robodyn.viewer.view import View

__all__ = ["MAX_SIDE", "SIZE", "check_render", "render_frames", "render_gif"]

SIZE: Final = (640, 480)  # pixels (width, height) of a frame by default
MAX_SIDE: Final = 2000  # pixels on a side at most (a frame is held in memory as RGB until the GIF is written)


def check_render(out: str | os.PathLike[str] | None, size: Sequence[int] = SIZE, what: str = "animate") -> Path | None:
    """The checks made before any work: ``out`` a writable ``.gif``, ``size`` two whole numbers of pixels from 16
    to :data:`MAX_SIDE`, and Chromium installed (robodyn.viewer.browser.require_browser). Returns ``out`` as a Path."""
    if len(size) != 2 or not all(isinstance(v, int | np.integer) and not isinstance(v, bool) and 16 <= v <= MAX_SIDE
                                 for v in size):
        raise InputError(f"{what}: size must be (width, height) in whole pixels from 16 to {MAX_SIDE}, got "
                         f"{size!r:.40}")
    target = None
    if out is not None:
        if Path(out).suffix.lower() != ".gif":
            raise InputError(f"{what}: the 3-D view renders a GIF: name a .gif file, not {os.fspath(out)!r}")
        target = check_output_path(out, f"{what}: out")
    require_browser(f"{what} --render 3d")
    return target


def render_frames(page: View, indices: Sequence[int], size: Sequence[int] = SIZE,
                  labels: Sequence[str] | None = None) -> list[np.ndarray]:
    """Screenshots (height, width, 3) uint8 of ``page`` at its instants ``indices`` (of ``page.scene.times``), its
    controls hidden, each with its label (default: the instant's time) beside the title. InputError when Chromium
    is not installed or the page fails to draw."""
    require_browser("rendering the 3-D view")
    count = len(page.scene.times)
    if any(not 0 <= int(k) < count for k in indices):
        raise InputError(f"render_frames: instants run from 0 to {count - 1}")
    with tempfile.TemporaryDirectory(prefix="robodyn-render-") as folder, \
            Chromium(width=int(size[0]), height=int(size[1])) as browser:
        path = page.write(Path(folder) / "view.html")
        browser.open(path)
        browser.wait_for("window.robodynView && (window.robodynView.rendered >= 1 || window.robodynView.error)")
        error = browser.evaluate("window.robodynView.error")
        if error is not None or browser.errors():
            raise InputError(f"the 3-D view did not draw in Chromium: {error or browser.errors()[0]}")
        browser.evaluate("window.robodynView.bare()")
        frames = []
        for j, k in enumerate(indices):
            browser.evaluate(f"window.robodynView.setTime({int(k)})")
            if labels is not None:
                browser.evaluate(f"document.getElementById('robodyn-clock').textContent = {json.dumps(labels[j])}")
            frames.append(browser.screenshot())
    return frames


def render_gif(trajectory: Any, out: str | os.PathLike[str], *, model: Any = None, fps: int = 25,
               max_frames: int = 200, size: Sequence[int] = SIZE, target: Sequence[float] | None = None) -> Path:
    """Write the run ``trajectory`` as a GIF drawn by the 3-D view (see the module docstring).

    Parameters
    ----------
    trajectory : robodyn.simulate's result (or a run with ``t``, ``x``, ``states`` and ``model`` given)
    out : the ``.gif`` file, written atomically
    model : the model the run is of (default: the one it was simulated from)
    fps, max_frames : as robodyn.kinematics.animate.animate (frames per second; at most this many frames)
    size : (width, height) of the frames in pixels
    target : a point (x, y, z) in m drawn as a marker

    Returns
    -------
    Path : ``out``.
    """
    from robodyn.kinematics.animate import check_options, resample
    from robodyn.kinematics.paths import trajectory_kinematics
    from robodyn.viewer.view import view

    check_options(None, fps=fps, max_frames=max_frames)
    path = check_render(out, size)
    assert path is not None
    if model is None:
        model = trajectory_kinematics(trajectory, "animate").model
    times, _ = resample(trajectory, max_frames)
    page = view(model, trajectory=trajectory, target=target)
    shown = page.scene.times
    indices = np.clip(np.searchsorted(shown, times), 1, len(shown) - 1)
    indices -= (times - shown[indices - 1]) <= (shown[indices] - times)  # the nearest instant
    frames = render_frames(page, [int(k) for k in indices], size, [f"t = {t:.3f} s" for t in times])
    write_files_atomic({path: lambda temporary: _save(frames, temporary, fps)}, "animate: cannot write")
    return path


def _save(frames: list[np.ndarray], temporary: str, fps: int) -> None:
    """The frames as one GIF (Pillow, an adaptive palette per frame), looping, ``1/fps`` s each."""
    from PIL import Image

    images = [Image.fromarray(frame) for frame in frames]
    buffer = io.BytesIO()
    images[0].save(buffer, format="GIF", save_all=True, append_images=images[1:], duration=round(1000 / fps),
                   loop=0)
    Path(temporary).write_bytes(buffer.getvalue())
