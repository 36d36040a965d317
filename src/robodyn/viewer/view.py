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
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.base.atomic import write_text_atomic
from robodyn.base.errors import InputError
from robodyn.kinematics.frames import Kinematics, kinematics
from robodyn.model.system import Values, require_model, values_to_vector
from robodyn.viewer.geometry import RobotGeometry, frame_geometry, urdf_geometry
from robodyn.viewer.packages import MeshLocator
from robodyn.viewer.page import DEFAULT_LIBRARY, library_script, page_html
from robodyn.viewer.scene import BASES, SceneData, scene_data

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["View", "model_geometry", "robot_geometry", "stills", "view", "view_coordinates",
           "viewer_installed"]


@dataclass(frozen=True, slots=True)
class View:
    """A page showing a model: ``html`` (the whole file), ``scene`` what it draws."""

    html: str
    scene: SceneData

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the page to ``path`` atomically (a reader never sees half a file); returns the path."""
        return write_text_atomic(path, self.html)

    def embedded(self, height: int = 480) -> str:
        """The page inside another (a report, a notebook): an ``<iframe srcdoc>`` holding the whole page, escaped,
        sandboxed to run its own scripts only (no access to the page around it), ``height`` CSS pixels tall."""
        return (f'<iframe srcdoc="{html.escape(self.html, quote=True)}" style="width:100%;height:{int(height)}px;'
                'border:0" sandbox="allow-scripts" title="the robot in 3-D"></iframe>')

    def _repr_html_(self) -> str:
        return self.embedded()


def model_geometry(model: ModelContract, *, collision: bool = False,
                   package_dirs: Mapping[str, str | os.PathLike[str]] | None = None) -> RobotGeometry:
    """The shapes drawn of ``model``: its robot file's (a URDF's visuals, an MJCF's geoms) when it has one (a diagram:
    its robot block's, the links named ``block.link`` as the diagram's frames are), else (or when the file draws
    nothing) its frames'."""
    if collision and _robot_file(model) is None:
        raise InputError(f"model {model.name!r} has no robot file, so no collision shapes: drop collision",
                         key="collision")
    geometry = _file_geometry(model, collision, package_dirs)
    return frame_geometry(_frames(model)[0]) if geometry is None else geometry


def robot_geometry(model: ModelContract, *, collision: bool = False,
                   package_dirs: Mapping[str, str | os.PathLike[str]] | None = None) -> RobotGeometry | None:
    """The shapes of ``model``'s robot file (as :func:`model_geometry` reads them) when it has one that draws
    something and the viewer's packages are installed; None otherwise (a model drawn from its frames: a report
    keeps its stick picture)."""
    if _robot_file(model) is None or not viewer_installed():
        return None
    return _file_geometry(model, collision, package_dirs)


def _file_geometry(model: ModelContract, collision: bool,
                   package_dirs: Mapping[str, str | os.PathLike[str]] | None) -> RobotGeometry | None:
    """The robot file's shapes, the links prefixed by the robot block's name in a diagram; None without a robot
    file, or when it draws nothing (no ``<visual>``, no mesh missing)."""
    source, prefix = model.geometry_file, ""
    block = model.robot_block() if source is None else None
    if block is not None and block[1].geometry_file is not None:
        source, prefix = block[1].geometry_file, f"{block[0]}."
    if source is None:
        return None
    dirs = {name: Path(folder) for name, folder in (package_dirs or {}).items()}
    if Path(source).suffix.lower() == ".xml":  # MuJoCo's MJCF: its geoms
        from robodyn.viewer.mjcf_shapes import mjcf_geometry

        geometry = mjcf_geometry(source, collision=collision)
    else:
        geometry = urdf_geometry(source, collision=collision, locator=MeshLocator(Path(source), dirs))
    if not geometry.visuals and not geometry.missing and not collision:
        return None
    if not prefix:
        return geometry
    return RobotGeometry(tuple(replace(v, link=prefix + v.link) for v in geometry.visuals),
                         tuple(prefix + link for link in geometry.missing))


def viewer_installed(library: str = DEFAULT_LIBRARY) -> bool:
    """Whether the viewer's packages are installed: trimesh (meshes) and the 3-D library's package."""
    try:
        library_script(library)
    except InputError:
        return False
    return find_spec("trimesh") is not None


def _robot_file(model: ModelContract) -> Path | None:
    if model.geometry_file is not None:
        return Path(model.geometry_file)
    block = model.robot_block()
    return None if block is None or block[1].geometry_file is None else Path(block[1].geometry_file)


def stills(model: ModelContract, configurations: np.ndarray, labels: Sequence[str], *,
           geometry: RobotGeometry | None = None, target: Sequence[float] | None = None,
           title: str | None = None, library: str = DEFAULT_LIBRARY) -> View:
    """The model at several configurations (operating points) in one page whose slider steps through them.

    Parameters
    ----------
    configurations : (K, n) the coordinates of ``kinematics(model)`` at each
    labels : K names shown for them (escaped: the page writes them as text)
    geometry : the shapes drawn (default :func:`model_geometry`)
    target, title, library : as :func:`view`
    """
    require_model(model, "view")
    kin = kinematics(model)
    q = np.asarray(configurations, dtype=float)
    if q.ndim != 2 or q.shape[1] != len(kin.coordinates) or len(q) == 0 or not np.all(np.isfinite(q)):
        raise InputError(f"configurations: give (K, {len(kin.coordinates)}) finite coordinates "
                         f"({', '.join(kin.coordinates)}), got shape {q.shape}", key="configurations")
    geometry = model_geometry(model) if geometry is None else geometry
    scene = scene_data(kin, geometry, title=title or model.name, at=q, target=target, labels=labels)
    page = page_html(scene.as_json(), title=f"{title or model.name} - robodyn", library=library,
                     stills=len(q) > 1, target=target is not None, com=scene.com is not None)
    return View(page, scene)


def view(model: ModelContract, trajectory: Any = None, at: Values | np.ndarray | None = None,
         target: Sequence[float] | None = None, out: str | os.PathLike[str] | None = None, *,
         collision: bool = False, package_dirs: Mapping[str, str | os.PathLike[str]] | None = None,
         library: str = DEFAULT_LIBRARY, geometry: RobotGeometry | None = None,
         plot: Sequence[str] | None = None) -> View:
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
    geometry : the shapes drawn, already read (default: :func:`model_geometry` with ``collision`` and
        ``package_dirs``)
    plot : the run's signals plotted under it (its outputs, states or inputs by name; one panel per kind);
        default its coordinates and inputs

    Returns
    -------
    View : ``.html``, ``.write(path)``, and inline display in Jupyter.
    """
    require_model(model, "view")
    if trajectory is not None and at is not None:
        raise InputError("give a trajectory or a configuration at=..., not both", key="at")
    kin, base = _frames(model)
    base_at = None
    if base and isinstance(at, Mapping):  # the base's states given by name, the joints' by theirs
        base_at = _base_at({k: v for k, v in at.items() if k in base}, base)
        at = {k: v for k, v in at.items() if k not in base}
    q = None if at is None else _configuration(kin, at)
    if isinstance(trajectory, (str, os.PathLike)):
        from robodyn.results.trajectory import Trajectory

        trajectory = Trajectory.load(trajectory, states=model.states)
    if geometry is None:
        geometry = model_geometry(model, collision=collision, package_dirs=package_dirs)
    scene = scene_data(kin, geometry, title=model.name, trajectory=trajectory, at=q, target=target, plot=plot,
                       base=base, base_at=base_at, contacts=model.contact_points(), masses=model.base_masses())
    page = page_html(scene.as_json(), title=f"{model.name} - robodyn", library=library,
                     trajectory=len(scene.times) > 1, target=target is not None, com=scene.com is not None,
                     contacts=bool(scene.contacts))
    result = View(page, scene)
    if out is not None:
        result.write(out)
    return result


def _frames(model: ModelContract) -> tuple[Kinematics, tuple[str, ...]]:
    """The kinematics the poses come from, and the states that place a moving base (() for a fixed one).

    A moving base (robodyn.load(urdf, base="floating") or "planar", a chain file's ``base: floating``) has no frames
    of its own: its links are placed by its fixed-base twin (the contract's ``fixed_base()``), moved by the base's
    states (scene.BASES)."""
    twin = model.fixed_base()
    if twin is None:
        return kinematics(model), ()
    base = next((names for names in BASES.values() if set(names) <= set(model.states)), None)
    if base is None:
        raise InputError(f"model {model.name!r}: its moving base has none of the base states the 3-D view reads "
                         f"({'; '.join(', '.join(names) for names in BASES.values())})", key="model")
    return kinematics(twin), base


def view_coordinates(model: ModelContract) -> tuple[str, ...]:
    """The names a configuration ``at`` of :func:`view` may set: the model's frames' coordinates, and a moving
    base's states (``base_x``, ..., scene.BASES)."""
    kin, base = _frames(model)
    return (*base, *kin.coordinates)


def _base_at(given: Mapping[str, Any], base: tuple[str, ...]) -> np.ndarray:
    """The base's states from ``given`` (by name; a position left out 0, a rotation left out none)."""
    rest = dict(zip(base, (0.0,) * 6 + (1.0,))) if len(base) == 7 else dict(zip(base, (0.0, 0.0, 1.0, 0.0)))
    values = np.array([float(given.get(name, rest[name])) for name in base])
    if not np.all(np.isfinite(values)):
        raise InputError(f"at: the base's states must be finite numbers, got {dict(given)}", key="at")
    return values


def _configuration(kin: Kinematics, at: Values | np.ndarray) -> np.ndarray:
    """``at`` as a vector of the coordinates (a mapping by name: the others zero), checked as fk checks it."""
    kin.pose(at, kin.default_frame)  # names, shape and finite values: the errors robodyn fk gives
    if isinstance(at, Mapping):
        return values_to_vector(at, kin.coordinates, "coordinate", default=0.0)
    return np.asarray(at, dtype=float).reshape(len(kin.coordinates))
