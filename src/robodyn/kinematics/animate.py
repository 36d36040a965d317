"""Animations of a simulated arm: the links drawn between joint origins, the tool frame's path traced.

:func:`animate` resamples a run evenly in time (at most ``max_frames`` frames), evaluates every joint
origin and the tool frame for all frames in one batch call each, and draws them in a 3-D view whose limits
cover the whole motion. It returns the matplotlib animation (``animation.to_jshtml()`` shows it in a
notebook) and, given ``out``, writes it atomically as a GIF (Pillow) or an MP4 (needs ffmpeg). Figures are
drawn off-screen with the Agg canvas: no display is needed.

Examples
--------
>>> import robodyn
>>> from robodyn.kinematics.animate import animate
>>> arm = robodyn.load("examples/two_link_arm.urdf")  # doctest: +SKIP
>>> run = robodyn.simulate(arm, 3.0, {"shoulder": 0.5})  # doctest: +SKIP
>>> animate(run, "swing.gif", fps=20, max_frames=60)  # doctest: +SKIP
>>> from IPython.display import HTML; HTML(animate(run).to_jshtml())  # in a notebook  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.atomic import check_output_path, write_files_atomic
from robodyn.base.errors import InputError
from robodyn.display.figures import literal
from robodyn.kinematics.paths import cube_limits, trajectory_kinematics

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.animation import Animation

    from robodyn.results.trajectory import Trajectory

__all__ = ["ARM_COLOR", "FORMATS", "MAX_DPI", "MAX_FPS", "MAX_FRAMES", "MAX_GIF_BYTES", "TOOL_COLOR", "TRACE_COLOR",
           "VIEW", "animate", "check_options", "resample"]

FORMATS: Final = (".gif", ".mp4")
VIEW: Final = (25.0, -60.0)  # (elevation, azimuth) in degrees of the orthographic 3-D view.
ARM_COLOR: Final = "#1f77b4"  # Links and joints.
TRACE_COLOR: Final = "#ff7f0e"  # The tool frame's path so far.
TOOL_COLOR: Final = "#d62728"  # The tool frame's origin.
FIGSIZE: Final = (5.0, 5.0)  # Inches; the pixel size is FIGSIZE * dpi.
MAX_FPS: Final = 100  # GIF frame durations are whole hundredths of a second.
MAX_FRAMES: Final = 10_000  # Frames drawn one by one (about 20 ms each at 100 dpi): minutes at most.
MAX_DPI: Final = 600  # 3000 x 3000 pixels per frame.
MAX_GIF_BYTES: Final = 2**30  # A GIF's frames are all held in memory (4 bytes a pixel) until it is written.


def resample(trajectory: Trajectory, max_frames: int) -> tuple[np.ndarray, np.ndarray]:
    """``min(max_frames, T)`` times evenly spaced over the finite part of the run ``(F,)`` and the states there
    ``(F, n)``, linearly interpolated per state (``np.interp``)."""
    rows = np.all(np.isfinite(trajectory.x), axis=1)
    t, x = trajectory.t[rows], trajectory.x[rows]
    if t.size < 2 or t[-1] <= t[0]:
        raise InputError(f"animate: the run of {trajectory.model!r} has fewer than two distinct finite times: "
                         "simulate over a longer span")
    times = np.linspace(t[0], t[-1], min(max_frames, t.size))
    states = np.column_stack([np.interp(times, t, x[:, j]) for j in range(x.shape[1])])
    return times, states


def check_options(out: str | os.PathLike[str] | None, *, fps: object = 25, max_frames: object = 200,
                  dpi: object = 100, options: Mapping[str, str] | None = None) -> Path | None:
    """The checks :func:`animate` makes before any work, for callers that check before simulating: whole
    numbers ``fps`` in [1, MAX_FPS], ``max_frames`` in [2, MAX_FRAMES], ``dpi`` in [1, MAX_DPI]; for a GIF,
    ``max_frames`` frames of ``(5 dpi)^2`` pixels within MAX_GIF_BYTES; ``out`` a writable ``.gif`` or ``.mp4``
    path (an MP4 needs ffmpeg). Returns ``out`` as a Path (None for None); InputError otherwise.
    ``options`` renames the arguments in the messages (the command line passes ``{"fps": "--fps", ...}``)."""
    label = {"out": "out", "fps": "fps", "max_frames": "max_frames", "dpi": "dpi", **(options or {})}
    number: dict[str, int] = {}
    for key, value, least, most in (("fps", fps, 1, MAX_FPS), ("max_frames", max_frames, 2, MAX_FRAMES),
                                    ("dpi", dpi, 1, MAX_DPI)):
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer) or not least <= value <= most:
            raise InputError(f"animate: {label[key]} must be an integer from {least} to {most:,}, got {value!r:.40}")
        number[key] = int(value)
    if out is None:
        return None
    if not isinstance(out, str | os.PathLike):
        raise InputError(f"animate: {label['out']} {out!r:.40}: give the path of a .gif or .mp4 file")
    suffix = Path(out).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(f"animate: {label['out']} {os.fspath(out) or repr('')}: name a .gif or .mp4 file")
    if suffix == ".gif":
        pixels = round(FIGSIZE[0] * number["dpi"]) * round(FIGSIZE[1] * number["dpi"])
        needed = 4 * pixels * number["max_frames"]
        if needed > MAX_GIF_BYTES:
            raise InputError(f"animate: {max_frames} frames at {dpi} dpi would hold about {needed / 2**20:,.0f} MiB "
                             f"in memory for a GIF (the limit is {MAX_GIF_BYTES // 2**20} MiB): lower "
                             f"{label['max_frames']} to {MAX_GIF_BYTES // (4 * pixels)} or the dpi, or write an .mp4")
    target = check_output_path(out, f"animate: {label['out']}")
    if suffix == ".mp4":
        from matplotlib.animation import FFMpegWriter

        if not FFMpegWriter.isAvailable():
            raise InputError(f"animate: writing {target.name!r} needs ffmpeg, which was not found: use a .gif "
                             "file, or install ffmpeg")
    return target


def animate(trajectory: Trajectory, out: str | Path | None = None, *, frame: str | None = None, fps: int = 25,
            max_frames: int = 200, trace: bool = True, dpi: int = 100) -> Animation:
    """Animate the arm of ``trajectory`` in 3-D, and write it to ``out`` when given.

    Parameters
    ----------
    trajectory
        From :func:`robodyn.simulate` on a model with frames (a chain or a URDF robot).
    out
        ``.gif`` (Pillow) or ``.mp4`` (ffmpeg) file, written atomically; None: only return the animation.
    frame
        The frame whose origin is marked and traced; default the tool frame.
    fps
        Frames per second of the file.
    max_frames
        At most this many frames (>= 2), evenly spaced in time over the run.
    trace
        Draw the frame's path up to the current time.
    dpi
        Resolution: the frames are ``5 * dpi`` pixels square.

    Returns
    -------
    matplotlib.animation.FuncAnimation (``to_jshtml()`` for a notebook, ``save()`` for other writers).

    Raises
    ------
    InputError
        Before anything is drawn: not a trajectory of a model with frames, an unknown frame, options out of
        range or a GIF over MAX_GIF_BYTES (:func:`check_options`), an ``out`` that cannot be written.
    """
    target = check_options(out, fps=fps, max_frames=max_frames, dpi=dpi)
    if not isinstance(trace, bool | np.bool_):
        raise InputError(f"animate: trace {trace!r:.40}: give True (draw the frame's path) or False")
    kin = trajectory_kinematics(trajectory, "animate")
    name = kin.frame_name(frame)
    times, states = resample(trajectory, max_frames)
    n = len(kin.coordinates)
    origins = kin.origins(states[:, :n], params=trajectory.params)  # (F, bodies + 1, 3)
    tool = kin.position(states[:, :n], name, params=trajectory.params)  # (F, 3)
    holder = kin.parent_frame(name)  # the frame the tool hangs from, drawn to the tool
    mount = tool if holder is None else kin.position(states[:, :n], holder, params=trajectory.params)
    parents = [parent - 1 for parent in kin.skeleton[1:]]  # each body's parent body (-1: the base)
    animation = _build(trajectory.model, name, times, origins, np.stack([mount, tool], axis=1), parents, fps, trace,
                       dpi)
    if target is not None:  # into a temporary file beside it, renamed into place (robodyn.base.atomic)
        write_files_atomic({target: lambda temporary: _save(animation, temporary, fps, dpi)},
                           "animate: cannot write")
    return animation


def _build(model: str, name: str, times: np.ndarray, origins: np.ndarray, mounted: np.ndarray, parents: list[int],
           fps: int, trace: bool, dpi: int) -> Animation:
    """The FuncAnimation: one line per body (its origin to its parent's), the joints, the tool and its trace.

    ``origins`` (F, bodies + 1, 3); ``mounted`` (F, 2, 3): the origin of the frame the tool hangs from, then
    the tool's."""
    from matplotlib.animation import FuncAnimation
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=FIGSIZE, dpi=dpi)
    FigureCanvasAgg(figure)
    ax: Any = figure.add_subplot(projection="3d")
    tool = mounted[:, 1]
    limits = cube_limits(np.concatenate([origins.reshape(-1, 3), tool]))
    ax.set(xlim=limits[0], ylim=limits[1], zlim=limits[2], xlabel="x [m]", ylabel="y [m]", zlabel="z [m]")
    ax.set_box_aspect((1, 1, 1))
    ax.set_proj_type("ortho")
    ax.view_init(elev=VIEW[0], azim=VIEW[1])
    ax.computed_zorder = False  # draw in zorder: the tool marker stays on top of the links
    links = [ax.plot([], [], [], color=ARM_COLOR, linewidth=3, zorder=2)[0] for _ in range(len(parents) + 1)]
    (joints,) = ax.plot([], [], [], linestyle="none", marker="o", markersize=4, color=ARM_COLOR, zorder=3)
    (path,) = ax.plot([], [], [], color=TRACE_COLOR, linewidth=1.5, zorder=1)
    (marker,) = ax.plot([], [], [], linestyle="none", marker="o", markersize=7, color=TOOL_COLOR, zorder=4)
    title = ax.set_title("")

    def draw(i: int) -> list[Any]:
        points = origins[i]
        for line, body, parent in zip(links, range(1, len(parents) + 1), parents):
            segment = points[[parent + 1, body]]
            line.set_data_3d(segment[:, 0], segment[:, 1], segment[:, 2])
        links[-1].set_data_3d(mounted[i, :, 0], mounted[i, :, 1], mounted[i, :, 2])  # to the tool
        joints.set_data_3d(points[:, 0], points[:, 1], points[:, 2])
        trail = tool[: i + 1] if trace else tool[:0]
        path.set_data_3d(trail[:, 0], trail[:, 1], trail[:, 2])
        marker.set_data_3d(tool[i : i + 1, 0], tool[i : i + 1, 1], tool[i : i + 1, 2])
        title.set_text(f"{literal(model)}: {literal(name)}, t = {times[i]:.3f} s")
        return [*links, joints, path, marker, title]

    draw(0)
    return FuncAnimation(figure, draw, frames=len(times), interval=1000.0 / fps, blit=False, repeat=True)


def _save(animation: Animation, temporary: str, fps: int, dpi: int) -> None:
    """Write ``animation`` into ``temporary`` (GIF by Pillow, MP4 by ffmpeg, by its suffix)."""
    from matplotlib.animation import FFMpegWriter, PillowWriter

    writer = PillowWriter(fps=fps) if temporary.lower().endswith(".gif") else FFMpegWriter(fps=fps)
    animation.save(temporary, writer=writer, dpi=dpi)
