"""A picture of a mechanism at one configuration: every link, drawn from the same kinematics as ``robodyn fk``.

:func:`arm_view` collects what is drawn — the base, each body's origin, the tool frame and the frame it hangs
from (the last link) — and chooses the view: gravity points down the picture's vertical axis, and a mechanism
whose points all stay in one plane that contains the vertical (a planar arm, a pendulum) is drawn in 2-D in
that plane. :func:`draw_arm` draws it on a matplotlib Figure.

Planarity is judged from the points at the given configuration and at a few random ones: a mechanism is planar
when the points' smallest principal extent is below ``PLANAR_TOLERANCE`` of the largest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np

__all__ = ["ArmView", "arm_view", "draw_arm"]

PLANAR_TOLERANCE: Final = 1e-9  # relative thickness of the cloud of points below which a mechanism is planar
PROBES: Final = 6  # random configurations (seeded) added to the given one to judge planarity
ARM_COLOR: Final = "#1f77b4"
TOOL_COLOR: Final = "#d62728"
_AXES: Final = ("x", "y", "z")


@dataclass(frozen=True, slots=True)
class ArmView:
    """What :func:`draw_arm` draws.

    Attributes
    ----------
    points : (k, 3)
        World positions: the base, each body's origin, the frame the tool hangs from, then the tool.
    segments : tuple of (i, j)
        Links as pairs of rows of ``points`` (every body to its parent, and the last link to the tool).
    axes : (d, 3)
        Unit world directions of the picture's axes (d = 2: horizontal, vertical; d = 3: two horizontal, then
        the vertical), the vertical opposite to gravity.
    labels : tuple of str
        Axis labels with units (``"x [m]"``, or ``"horizontal [m]"`` for a direction that is no world axis).
    tool : str
        The tool frame's name.
    """

    points: np.ndarray
    segments: tuple[tuple[int, int], ...]
    axes: np.ndarray
    labels: tuple[str, ...]
    tool: str

    @property
    def planar(self) -> bool:
        return self.axes.shape[0] == 2

    def projected(self) -> np.ndarray:
        """The points in the picture's coordinates ``(k, d)``."""
        return self.points @ self.axes.T


def arm_view(kin: Any, q: Any, frame: str | None = None, *, params: Any = None) -> ArmView:
    """The picture of the mechanism of :class:`robodyn.Kinematics` ``kin`` at ``q`` (see the module docstring)."""
    tool = kin.frame_name(frame)
    q = np.asarray(kin.origins(q, params=params) is not None and q, dtype=float).reshape(-1)  # checked by origins
    points, segments = _points(kin, q[None, :], tool, params)
    rng = np.random.default_rng(0)
    probes = np.vstack([q, rng.uniform(-np.pi, np.pi, (PROBES, q.size))])
    cloud = _points(kin, probes, tool, params)[0].reshape(-1, 3)
    up = kin.model.kinematics().up(kin.model.parameter_vector(params))
    return ArmView(points[0], segments, *_axes(cloud, up), tool)


def _points(kin: Any, q: np.ndarray, tool: str, params: Any) -> tuple[np.ndarray, tuple[tuple[int, int], ...]]:
    """Points ``(N, k, 3)`` at the configurations ``q`` ``(N, n)``, and the segments joining them."""
    origins = kin.origins(q, params=params).reshape(q.shape[0], -1, 3)
    holder = kin.parent_frame(tool)
    end = kin.position(q, tool, params=params).reshape(q.shape[0], 1, 3)
    mount = end if holder is None else kin.position(q, holder, params=params).reshape(q.shape[0], 1, 3)
    points = np.concatenate([origins, mount, end], axis=1)
    bodies = origins.shape[1]
    segments = tuple((parent, child) for child, parent in enumerate(kin.skeleton) if parent >= 0)
    return points, (*segments, (bodies, bodies + 1))


def _axes(cloud: np.ndarray, up: np.ndarray) -> tuple[np.ndarray, tuple[str, ...]]:
    """The picture's axes: 2-D in the plane of a planar cloud that contains ``up``, else 3-D with ``up`` last."""
    centered = cloud - cloud.mean(axis=0)
    _, singular, rows = np.linalg.svd(centered, full_matrices=True)
    normal = rows[2]
    planar = singular[0] > 0 and singular[2] <= PLANAR_TOLERANCE * singular[0] and abs(normal @ up) < 1e-6
    if planar:
        horizontal = np.cross(up, normal)
        horizontal = _towards_world(horizontal / np.linalg.norm(horizontal))
        axes = np.stack([horizontal, up])
    else:
        first = _towards_world(_perpendicular(up))
        axes = np.stack([first, np.cross(up, first), up])
    return axes, tuple(_label(a, "vertical" if k == len(axes) - 1 else "horizontal") for k, a in enumerate(axes))


def _perpendicular(up: np.ndarray) -> np.ndarray:
    """A unit vector perpendicular to ``up``, as close to a world axis as possible (x first)."""
    for axis in np.eye(3):
        candidate = axis - (axis @ up) * up
        if np.linalg.norm(candidate) > 0.5:
            return candidate / np.linalg.norm(candidate)
    raise AssertionError("unreachable: some world axis is far from any unit vector")


def _towards_world(direction: np.ndarray) -> np.ndarray:
    """``direction`` or its opposite, whichever points along the positive world axis it is closest to."""
    k = int(np.argmax(np.abs(direction)))
    return direction if direction[k] >= 0 else -direction


def _label(direction: np.ndarray, fallback: str) -> str:
    k = int(np.argmax(np.abs(direction)))
    return f"{_AXES[k]} [m]" if abs(direction[k]) > 1 - 1e-9 else f"{fallback} [m]"


def _distinct_links(view: ArmView) -> list[tuple[int, int]]:
    """The segments of ``view`` that are links to draw: of nonzero length, each once (the last body's link to the
    tool frame is also the tool's mount segment when the tool is the body's own point)."""
    size = float(np.max(np.ptp(view.points, axis=0))) or 1.0
    kept: list[tuple[int, int]] = []
    for i, j in view.segments:
        a, b = view.points[i], view.points[j]
        if np.linalg.norm(a - b) <= 1e-9 * size:
            continue
        same = any(min(np.linalg.norm(a - view.points[k]) + np.linalg.norm(b - view.points[m]),
                       np.linalg.norm(a - view.points[m]) + np.linalg.norm(b - view.points[k])) <= 1e-9 * size
                   for k, m in kept)
        if not same:
            kept.append((i, j))
    return kept


def draw_arm(kin: Any, q: Any, frame: str | None = None, *, params: Any = None, title: str | None = None) -> Any:
    """A matplotlib Figure of the mechanism at ``q``: links in blue, joints as dots, the tool in red; 2-D for planar
    mechanisms, else 3-D; gravity down, equal scales on every axis."""
    from matplotlib.figure import Figure

    from robodyn.display.figures import literal

    view = arm_view(kin, q, frame, params=params)
    shown = view.projected()
    # 2-D: fixed margins (the labels are fixed text; a layout engine doubles the cost); 3-D needs the engine
    figure = Figure(figsize=(5, 5), layout=None if view.planar else "constrained")
    if view.planar:
        figure.subplots_adjust(left=0.15, right=0.97, top=0.93, bottom=0.1)
    ax: Any = figure.add_subplot(projection=None if view.planar else "3d")
    drawn = _distinct_links(view)
    for n, (i, j) in enumerate(drawn):  # one line per link of nonzero length: <g id="link-n"> in an SVG
        ax.plot(*shown[[i, j]].T, color=ARM_COLOR, linewidth=3, gid=f"link-{n}")
    ax.plot(*shown[:-1].T, linestyle="none", marker="o", markersize=4, color=ARM_COLOR)
    ax.plot(*shown[-1:].T, linestyle="none", marker="o", markersize=7, color=TOOL_COLOR, label=literal(view.tool))
    low, high = shown.min(axis=0), shown.max(axis=0)
    middle, half = (low + high) / 2, max(float(np.max(high - low)) / 2 * 1.15, 1e-3)
    limits = [(m - half, m + half) for m in middle]
    if view.planar:
        ax.set(xlim=limits[0], ylim=limits[1], xlabel=view.labels[0], ylabel=view.labels[1], aspect="equal")
        ax.grid(True, alpha=0.3)
    else:
        ax.set(xlim=limits[0], ylim=limits[1], zlim=limits[2], xlabel=view.labels[0], ylabel=view.labels[1],
               zlabel=view.labels[2])
        ax.set_box_aspect((1, 1, 1))
    ax.legend(loc="upper left")
    if title:
        ax.set_title(literal(title))
    return figure
