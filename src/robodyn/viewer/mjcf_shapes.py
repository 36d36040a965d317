"""What is drawn of an MJCF robot: its geoms as the view's shapes, each placed in the frame of the chain link its body
belongs to (robodyn.mechanisms.mjcf.bodies: a welded body's geoms on its parent's link).

Boxes, spheres, capsules and cylinders (MuJoCo's half-lengths doubled), ellipsoids as spheres scaled by their radii,
meshes from their asset's file (read by robodyn.viewer.meshes; a file outside the model's folder or missing warns and is
left out) scaled by the asset's ``scale``; planes and height fields are not drawn. The visible geoms are MuJoCo's
default groups 0-2; ``collision=True`` draws the geoms that collide (``contype`` or ``conaffinity``) instead. Colours
are the geoms' ``rgba`` (materials are not read: grey).

Reference: MuJoCo XML reference, body/geom (type, size, rgba, group) and asset/mesh.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Final

import numpy as np

from robodyn.base.errors import RobodynWarning
from robodyn.mechanisms.mjcf.bodies import GeomShape
from robodyn.mechanisms.mjcf.robot import mjcf_parts
from robodyn.viewer.geometry import GREY, RobotGeometry, Visual
from robodyn.viewer.meshes import load_mesh

__all__ = ["VISIBLE_GROUPS", "mjcf_geometry"]

VISIBLE_GROUPS: Final = (0, 1, 2)  # MuJoCo's viewer shows these geom groups by default


def _origin(shape: GeomShape) -> np.ndarray:
    origin = np.eye(4)
    origin[:3, :3], origin[:3, 3] = shape.rotation, shape.position
    return origin


def _visual(shape: GeomShape, meshes: dict[str, tuple[Path, tuple[float, ...]]], where: str) -> Visual | None:
    rgba = shape.rgba if shape.rgba is not None else GREY
    half = shape.size
    if shape.kind == "mesh":
        found = meshes.get(shape.mesh or "")
        if found is None or not found[0].is_file():
            warnings.warn(f"{where}: link {shape.link!r}: mesh {shape.mesh!r} not found in the model's folder: it is "
                          "not drawn", RobodynWarning, stacklevel=3)
            return None
        return Visual(shape.link, _origin(shape), "mesh", found[1], rgba, load_mesh(found[0], shape.link))
    if shape.kind == "ellipsoid":  # a unit sphere scaled by the radii
        scaled = _origin(shape)
        scaled[:3, :3] = scaled[:3, :3] @ np.diag(half[:3])
        return Visual(shape.link, scaled, "sphere", (1.0,), rgba)
    size = {"box": (2 * half[0], 2 * half[1], 2 * half[2]), "sphere": (half[0],),
            "capsule": (half[0], 2 * half[1]), "cylinder": (half[0], 2 * half[1])}[shape.kind]
    return Visual(shape.link, _origin(shape), shape.kind, size, rgba)


def mjcf_geometry(path: str | Path, *, collision: bool = False) -> RobotGeometry:
    """The shapes of the MJCF robot at ``path`` (see the module docstring)."""
    with warnings.catch_warnings():  # what the dynamics leave out was said when the model was loaded
        warnings.simplefilter("ignore", RobodynWarning)
        parts = mjcf_parts(path)
    moving = {link.name for link in parts.links}
    chosen = [s for s in parts.tree.shapes if s.link in moving and (s.collides if collision else
                                                                     s.group in VISIBLE_GROUPS)]
    visuals = [v for v in (_visual(s, dict(parts.meshes), str(path)) for s in chosen) if v is not None]
    missing = sorted({s.link for s in chosen if s.kind == "mesh" and s.mesh not in parts.meshes})
    return RobotGeometry(tuple(visuals), tuple(missing))
