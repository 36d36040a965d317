"""The robot in 3-D in robodyn's reports: a model whose robot file draws something is shown by the viewer
(robodyn.viewer) instead of the stick picture of robodyn.report.figures.arm.

The view is one offline page written into the report as an ``<iframe srcdoc>`` sandboxed to its own scripts
(robodyn.viewer.view.View.embedded): the report stays one self-contained file, and nothing in it asks the network.
The analyze report shows its operating points (:func:`points_view`), the optimization and identification reports
a run playing at real time (:func:`run_view`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import RobodynError
from robodyn.display.page import number

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract
    from robodyn.viewer.geometry import RobotGeometry

__all__ = ["HEIGHT", "points_view", "robot_shapes", "run_view"]

HEIGHT: Final = 540  # CSS pixels of an embedded view
_HOW: Final = "drag to turn, shift-drag to pan, the wheel to zoom"


def robot_shapes(model: ModelContract) -> RobotGeometry | None:
    """The shapes of the model's robot file (robodyn.viewer.view.robot_geometry); None when the model has no robot
    file that draws something, the viewer's packages are not installed, or the file's shapes cannot be read (the
    report keeps its stick picture)."""
    from robodyn.viewer.view import robot_geometry

    try:
        return robot_geometry(model)
    except RobodynError:
        return None


def points_view(model: ModelContract, geometry: RobotGeometry, points: Sequence[Any]) -> tuple[str, dict[str, Any]]:
    """The robot at the operating points ``points`` (``x`` (n,) each) in one view whose slider steps through them,
    each named by its coordinates; (html, JSON record)."""
    from robodyn.display import cleaned
    from robodyn.kinematics import kinematics
    from robodyn.viewer.view import stills

    coordinates = kinematics(model).coordinates
    index = [model.states.index(name) for name in coordinates]
    q = np.array([np.asarray(point.x, dtype=float)[index] for point in points])
    labels = [f"point {k}: " + ", ".join(f"{name} = {number(v)}" for name, v in zip(coordinates, cleaned(row)))
              for k, row in enumerate(q)]
    page = stills(model, q, labels, geometry=geometry)
    text = ("<p>The robot at the operating point" + ("s (the slider steps through them)" if len(points) > 1 else "")
            + f": {_HOW}.</p>")
    return text + page.embedded(height=HEIGHT), {"links": len(page.scene.links), "points": len(points)}


def run_view(model: ModelContract, run: Any, *, target: Sequence[float] | None = None,
             what: str = "The run") -> str | None:
    """A section playing ``run`` (``t``, ``x``, ``states``; its ``u`` and ``inputs`` plotted) in 3-D, with ``target``
    as a marker; ``what`` (HTML) starts its sentence. None for a model without a robot file that draws something."""
    import html

    from robodyn.viewer.view import view

    geometry = robot_shapes(model)
    if geometry is None:
        return None
    try:
        page = view(model, trajectory=run, target=target, geometry=geometry)
    except RobodynError as exc:
        return f'<h2>The robot in 3-D</h2><p class="note">Not available: {html.escape(str(exc))}</p>'
    return (f"<h2>The robot in 3-D</h2><p>{what}: press play (real time), or move the slider; {_HOW}.</p>"
            + page.embedded(height=HEIGHT))
