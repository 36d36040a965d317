"""``robodyn.view``: a model (and a run of it) in 3-D, as one self-contained HTML page.

A URDF robot is drawn with its ``<visual>`` shapes and meshes (``collision=True``: its ``<collision>`` ones), any
other model with frames from its kinematics (robodyn.viewer.geometry). The page works offline and opens with
no server (robodyn.viewer.page); in Jupyter the returned :class:`View` shows itself inline (an ``<iframe srcdoc>``).
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.base.atomic import write_text_atomic
from robodyn.base.errors import InputError
from robodyn.kinematics.frames import Kinematics, kinematics
from robodyn.model.system import Values, require_model, values_to_vector
from robodyn.viewer.geometry import RobotGeometry, frame_geometry, urdf_geometry
from robodyn.viewer.packages import MeshLocator
from robodyn.viewer.page import DEFAULT_LIBRARY, page_html
from robodyn.viewer.scene import SceneData, scene_data

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["View", "model_geometry", "view"]


@dataclass(frozen=True, slots=True)
class View:
    """A page showing a model: ``html`` (the whole file), ``scene`` what it draws."""

    html: str
    scene: SceneData

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the page to ``path`` atomically (a reader never sees half a file); returns the path."""
        return write_text_atomic(path, self.html)

    def _repr_html_(self) -> str:
        return (f'<iframe srcdoc="{html.escape(self.html, quote=True)}" style="width:100%;height:480px;border:0" '
                'sandbox="allow-scripts"></iframe>')


def model_geometry(model: ModelContract, *, collision: bool = False,
                   package_dirs: Mapping[str, str | os.PathLike[str]] | None = None) -> RobotGeometry:
    """The shapes drawn of ``model``: its robot file's (a URDF's visuals, an MJCF's geoms) when it has one (a diagram:
    its robot block's, the links named ``block.link`` as the diagram's frames are), else (or when the file draws
    nothing) its frames'."""
    source, prefix = model.geometry_file, ""
    block = model.robot_block() if source is None else None
    if block is not None and block[1].geometry_file is not None:
        source, prefix = block[1].geometry_file, f"{block[0]}."
    if source is None:
        if collision:
            raise InputError(f"model {model.name!r} has no robot file, so no collision shapes: drop collision",
                             key="collision")
        return frame_geometry(kinematics(model))
    dirs = {name: Path(folder) for name, folder in (package_dirs or {}).items()}
    if Path(source).suffix.lower() == ".xml":  # MuJoCo's MJCF: its geoms
        from robodyn.viewer.mjcf_shapes import mjcf_geometry

        geometry = mjcf_geometry(source, collision=collision)
    else:
        geometry = urdf_geometry(source, collision=collision, locator=MeshLocator(Path(source), dirs))
    if not geometry.visuals and not geometry.missing and not collision:  # a URDF without shapes: its frames'
        return frame_geometry(kinematics(model))
    if not prefix:
        return geometry
    return RobotGeometry(tuple(replace(v, link=prefix + v.link) for v in geometry.visuals),
                         tuple(prefix + link for link in geometry.missing))


def view(model: ModelContract, trajectory: Any = None, at: Values | np.ndarray | None = None,
         target: Sequence[float] | None = None, out: str | os.PathLike[str] | None = None, *,
         collision: bool = False, package_dirs: Mapping[str, str | os.PathLike[str]] | None = None,
         library: str = DEFAULT_LIBRARY) -> View:
    """The model in 3-D in one offline HTML page.

    Parameters
    ----------
    model : a model with frames (a URDF robot, a chain file, a catalog arm, a diagram with a robot block)
    trajectory : a run of the model (``robodyn.simulate``'s result, a loaded run, or the path of a CSV or NPZ
        run), played at real time with a time slider; or None
    at : the configuration shown without a trajectory, ``(n,)`` or by coordinate name (zeros by default)
    target : a point (x, y, z) in m drawn as a marker (an optimal-control target)
    out : write the page there too (atomically)
    collision : draw the URDF's ``<collision>`` shapes instead of its ``<visual>`` ones
    package_dirs : {NAME: DIR} where ``package://NAME/...`` meshes are (before ROS_PACKAGE_PATH and
        example-robot-data)
    library : the 3-D library written into the page (robodyn.viewer.page.LIBRARIES)

    Returns
    -------
    View : ``.html``, ``.write(path)``, and inline display in Jupyter.
    """
    require_model(model, "view")
    if trajectory is not None and at is not None:
        raise InputError("give a trajectory or a configuration at=..., not both", key="at")
    kin = kinematics(model)
    q = None if at is None else _configuration(kin, at)
    if isinstance(trajectory, (str, os.PathLike)):
        from robodyn.results.trajectory import Trajectory

        trajectory = Trajectory.load(trajectory, states=model.states)
    geometry = model_geometry(model, collision=collision, package_dirs=package_dirs)
    scene = scene_data(kin, geometry, title=model.name, trajectory=trajectory, at=q, target=target)
    page = page_html(scene.as_json(), title=f"{model.name} - robodyn", library=library,
                     trajectory=len(scene.times) > 1, target=target is not None, com=scene.com is not None)
    result = View(page, scene)
    if out is not None:
        result.write(out)
    return result


def _configuration(kin: Kinematics, at: Values | np.ndarray) -> np.ndarray:
    """``at`` as a vector of the coordinates (a mapping by name: the others zero), checked as fk checks it."""
    kin.pose(at, kin.default_frame)  # names, shape and finite values: the errors robodyn fk gives
    if isinstance(at, Mapping):
        return values_to_vector(at, kin.coordinates, "coordinate", default=0.0)
    return np.asarray(at, dtype=float).reshape(len(kin.coordinates))
