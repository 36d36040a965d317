"""Task-space paths: the motion of one frame over a simulated run, and a 3-D plot of it.

:meth:`robodyn.Trajectory.frame` evaluates a frame's pose and velocity at every stored state of a run in
one batch call (with the run's parameters) and returns a :class:`FramePath`; :func:`plot_path` draws it.
The trajectory must come from :func:`robodyn.simulate` on a model with frames (a ``kind: chain`` file or a
URDF robot): it remembers the model (``Trajectory.source``) and the parameter values (``Trajectory.params``).

Examples
--------
>>> import robodyn
>>> from robodyn.kinematics.paths import plot_path
>>> arm = robodyn.load("examples/two_link_arm.urdf")  # doctest: +SKIP
>>> run = robodyn.simulate(arm, 2.0, {"shoulder": 0.3})  # doctest: +SKIP
>>> tool = run.frame()  # the tool frame; run.frame("forearm") for another  # doctest: +SKIP
>>> tool.position.shape, tool.velocity.shape  # doctest: +SKIP
((T, 3), (T, 6))
>>> plot_path(tool).savefig("tool_path.png")  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from robodyn.base.errors import InputError, ShapeError
from robodyn.kinematics.frames import Kinematics, kinematics
from robodyn.kinematics.rotations import quaternion_from_rotation, rpy_from_rotation

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from robodyn.results.run import Run

__all__ = ["FramePath", "frame_path", "plot_path", "trajectory_kinematics"]


@dataclass(frozen=True, slots=True)
class FramePath:
    """The motion of one frame over a run (read-only arrays).

    Attributes
    ----------
    frame : the frame's name
    model : the model's name
    t : (T,) times
    position : (T, 3) the frame origin in the world frame [m]
    rotation : (T, 3, 3) world <- frame
    velocity : (T, 6) [v; w]: the velocity of the frame origin and the angular velocity, world axes

    Rows where the run's state is not finite (after a terminal event of a batch) are NaN.
    """

    frame: str
    model: str
    t: np.ndarray
    position: np.ndarray
    rotation: np.ndarray
    velocity: np.ndarray

    def __post_init__(self) -> None:
        T = np.shape(self.t)[0] if np.ndim(self.t) == 1 else -1
        for label, shape in (("t", (T,)), ("position", (T, 3)), ("rotation", (T, 3, 3)), ("velocity", (T, 6))):
            array = np.array(getattr(self, label), dtype=float)
            if T < 1 or array.shape != shape:
                raise ShapeError(f"frame path: {label} has shape {array.shape}, expected {shape} with T >= 1")
            array.setflags(write=False)
            object.__setattr__(self, label, array)

    def __len__(self) -> int:
        return self.t.shape[0]

    @property
    def quaternion(self) -> np.ndarray:
        """(w, x, y, z) with w >= 0, ``(T, 4)``."""
        return _per_row(quaternion_from_rotation, self.rotation, 4)

    @property
    def rpy(self) -> np.ndarray:
        """(roll, pitch, yaw) with R = Rz(yaw) Ry(pitch) Rx(roll), ``(T, 3)``."""
        return _per_row(rpy_from_rotation, self.rotation, 3)

    @property
    def speed(self) -> np.ndarray:
        """|v|, the speed of the frame origin, ``(T,)``."""
        return np.linalg.norm(self.velocity[:, :3], axis=1)

    def _repr_html_(self) -> str:
        from robodyn.display import block, figure_svg, heading, html_table

        return block([heading(f"Path of frame {self.frame!r}"),
                      html_table([("times", len(self)), ("span", f"[{self.t[0]:g}, {self.t[-1]:g}] s")],
                                 row_header=True),
                      figure_svg(plot_path(self))])


def _per_row(convert: Any, rotation: np.ndarray, size: int) -> np.ndarray:
    """``convert`` applied to the finite rotations; NaN rows stay NaN."""
    out = np.full((rotation.shape[0], size), np.nan)
    finite = np.all(np.isfinite(rotation), axis=(1, 2))
    if np.any(finite):
        out[finite] = convert(rotation[finite])
    return out


def trajectory_kinematics(trajectory: Run, what: str) -> Kinematics:
    """The :class:`Kinematics` of the model ``trajectory`` was simulated from (InputError saying why not)."""
    shape = np.shape(getattr(trajectory, "x", ()))
    if len(shape) != 2 or not hasattr(trajectory, "source"):
        hint = ": pick one run, e.g. batch[0]" if len(shape) == 3 else \
            ": simulate a model with frames first, e.g. robodyn.simulate(robodyn.load('arm.urdf'), 1.0)"
        raise InputError(f"{what}: expected a robodyn.Trajectory, got {type(trajectory).__name__}{hint}")
    source = trajectory.source
    if source is None:
        raise InputError(f"{what}: the trajectory of {trajectory.model!r} does not know its model (it was not "
                         "made by robodyn.simulate): simulate the model, or use robodyn.kinematics.kinematics(model)"
                         " on the states directly")
    if source.kinematics() is None:
        raise InputError(f"{what}: model {trajectory.model!r} ({source.kind}) has no frames: frame paths and "
                         "animations need a rigid-body model (a kind: chain file or a URDF robot)")
    return kinematics(source)


def frame_path(trajectory: Run, frame: str | None = None) -> FramePath:
    """The motion of ``frame`` (default: the tool frame) over ``trajectory``; see :meth:`Trajectory.frame`."""
    kin = trajectory_kinematics(trajectory, "frame path")
    name = kin.frame_name(frame)
    n = len(kin.coordinates)
    T = len(trajectory)
    position, rotation, velocity = np.full((T, 3), np.nan), np.full((T, 3, 3), np.nan), np.full((T, 6), np.nan)
    rows = np.all(np.isfinite(trajectory.x), axis=1)
    if np.any(rows):
        q, qd = trajectory.x[rows, :n], trajectory.x[rows, n:2 * n]
        pose = kin.pose(q, name, params=trajectory.params)
        position[rows], rotation[rows] = pose.position, pose.rotation
        velocity[rows] = kin.velocity(q, qd, name, params=trajectory.params)
    return FramePath(name, trajectory.model, trajectory.t, position, rotation, velocity)


def cube_limits(points: np.ndarray, margin: float = 0.05) -> np.ndarray:
    """Axis limits ``(3, 2)`` of one common span covering the finite ``points`` ``(..., 3)`` (equal scales)."""
    finite = points.reshape(-1, 3)
    finite = finite[np.all(np.isfinite(finite), axis=1)]
    if finite.size == 0:
        return np.array([[-1.0, 1.0]] * 3)
    low, high = finite.min(axis=0), finite.max(axis=0)
    half = max(float(np.max(high - low)) / 2 * (1 + 2 * margin), 1e-3)
    centre = (low + high) / 2
    return np.stack([centre - half, centre + half], axis=1)


def plot_path(path: FramePath, ax: Axes | None = None) -> Figure:
    """A 3-D plot of ``path``: the frame origin's route with start (circle) and end (square) markers.

    Parameters
    ----------
    path
        From :meth:`robodyn.Trajectory.frame`.
    ax
        A matplotlib 3-D axes to draw into (``projection="3d"``); default a new Figure.

    Returns
    -------
    The Figure drawn into (equal scales on x, y and z, labels in m).
    """
    from matplotlib.figure import Figure

    from robodyn.display.figures import literal

    if ax is not None and getattr(ax, "name", None) != "3d":
        raise InputError("plot_path needs 3-D axes: create them with figure.add_subplot(projection='3d')")
    if ax is None:
        ax = Figure(figsize=(6, 5), layout="constrained").add_subplot(projection="3d")
    ax3d: Any = ax  # mplot3d's Axes3D (set_box_aspect takes 3 values, zlim)
    p = path.position
    ax3d.plot(p[:, 0], p[:, 1], p[:, 2], color="tab:orange", label=f"{literal(path.frame)} path")
    finite = p[np.all(np.isfinite(p), axis=1)]
    if len(finite):
        ax3d.scatter(*finite[0], color="tab:green", marker="o", label=f"start (t = {path.t[0]:g} s)")
        ax3d.scatter(*finite[-1], color="tab:red", marker="s", label="end")
    limits = cube_limits(p)
    ax3d.set(xlim=limits[0], ylim=limits[1], zlim=limits[2], xlabel="x [m]", ylabel="y [m]", zlabel="z [m]")
    ax3d.set_box_aspect((1, 1, 1))
    ax3d.set_title(f"{literal(path.model)}: {literal(path.frame)}")
    ax3d.legend(loc="upper left")
    return cast("Figure", ax3d.get_figure(root=True))
