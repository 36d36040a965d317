"""The mass properties of an MJCF mesh geom, as MuJoCo's compiler derives them from the mesh file.

``<asset><mesh name file scale inertia>``: the file (binary STL) is found in the compiler's ``meshdir`` (or
``assetdir``) below the model's folder, which it may not leave, and read within :data:`MAX_MESH_BYTES`. MuJoCo's
default ``inertia="legacy"`` (and ``"exact"``) treats the surface as the boundary of a solid: each triangle spans a
pyramid to the area-weighted centroid of all triangles, whose signed volume (legacy: its absolute value, so a
surface that is not closed still has a volume) and centre of mass (3/4 of the way from that centroid to the
triangle's centre) give the mesh's volume and centre of mass; the second moments are the tetrahedra's from the centre
of mass (Tonon 2004, with the same signed or absolute volumes). ``convex`` and ``shell`` are refused.

Reference: MuJoCo XML reference, asset/mesh (``inertia``); F. Tonon, "Explicit exact formulas for the 3-D
tetrahedron inertia tensor in terms of its vertex coordinates", J. Math. Stat. 1 (2004) 8-11.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import numpy as np

from robodyn.base.errors import ModelFileError
from robodyn.base.textfile import UnusableFile, read_regular
from robodyn.mechanisms.mjcf.document import Node
from robodyn.mechanisms.mjcf.geometry import MassProperties, numbers

__all__ = ["MAX_MESH_BYTES", "mesh_mass", "read_stl"]

MAX_MESH_BYTES: Final = 50_000_000  # A binary STL of a million triangles; robot meshes are far smaller.
INERTIA_MODES: Final = ("legacy", "exact")


def read_stl(path: Path, where: str) -> np.ndarray:
    """The triangles ``(n, 3, 3)`` of a binary STL file (float32 vertices as the file stores them)."""
    try:
        data = read_regular(path, MAX_MESH_BYTES)
    except UnusableFile as exc:
        raise ModelFileError(f"{where}: mesh {path}: {exc}") from None
    if data is None:
        raise ModelFileError(f"{where}: mesh file {path} does not exist")
    if len(data) < 84:
        raise ModelFileError(f"{where}: mesh {path} is not a binary STL file (too short)")
    count = int(np.frombuffer(data, dtype="<u4", count=1, offset=80)[0])
    if len(data) != 84 + 50 * count:
        raise ModelFileError(f"{where}: mesh {path} is not a binary STL file ({len(data)} bytes for {count} "
                             "triangles): robodyn reads binary STL meshes; convert it, or give the body an <inertial>")
    records = np.frombuffer(data, dtype=np.dtype([("normal", "<f4", 3), ("vertices", "<f4", (3, 3)),
                                                  ("attribute", "<u2")]), count=count, offset=84)
    triangles = records["vertices"].astype(float)
    if not np.all(np.isfinite(triangles)):
        raise ModelFileError(f"{where}: mesh {path} has non-finite vertices")
    return triangles


def _properties(triangles: np.ndarray, absolute: bool, where: str) -> tuple[float, np.ndarray, np.ndarray]:
    """Volume, centre of mass (3,) and inertia per unit density about it (3, 3) of a closed surface."""
    edges1, edges2 = triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0]
    cross = np.cross(edges1, edges2)
    double_area = np.linalg.norm(cross, axis=1)
    centres = triangles.mean(axis=1)
    if not double_area.sum() > 0:
        raise ModelFileError(f"{where}: the mesh's surface area is zero")
    centroid = (double_area[:, None] * centres).sum(axis=0) / double_area.sum()
    volumes = np.einsum("ij,ij->i", centres - centroid, cross) / 6  # area * (normal . offset) / 3
    if absolute:
        volumes = np.abs(volumes)
    volume = float(volumes.sum())
    if not volume > 0:
        raise ModelFileError(f"{where}: the mesh's volume is not positive (misoriented triangles?): give the body an "
                             "<inertial>")
    com = (volumes[:, None] * (0.75 * centres + 0.25 * centroid)).sum(axis=0) / volume
    d, e, f = (triangles[:, k] - com for k in range(3))
    volumes = np.einsum("ij,ij->i", (d + e + f) / 3, np.cross(e - d, f - d)) / 6  # about the centre of mass
    if absolute:
        volumes = np.abs(volumes)
    second = np.zeros((3, 3))
    for a in range(3):
        for b in range(3):
            second[a, b] = float((volumes / 20 * (2 * (d[:, a] * d[:, b] + e[:, a] * e[:, b] + f[:, a] * f[:, b])
                                                  + d[:, a] * e[:, b] + d[:, b] * e[:, a] + d[:, a] * f[:, b]
                                                  + d[:, b] * f[:, a] + e[:, a] * f[:, b] + e[:, b] * f[:, a])).sum())
    inertia = np.trace(second) * np.eye(3) - second
    return float(volumes.sum()), com, inertia


def mesh_mass(geom: Node, attrib: dict[str, str], mesh: Node, folder: Path, meshdir: str) -> MassProperties:
    """The mass properties of mesh geom ``geom`` (``attrib``: with its class's) in its own frame, from the
    ``<mesh>`` asset ``mesh`` (its attributes with its class's) of the model in ``folder``."""
    mode = mesh.get("inertia", "legacy")
    if mode not in INERTIA_MODES:
        raise ModelFileError(f"{mesh.where}: <mesh inertia={mode!r}>: robodyn computes legacy and exact mesh "
                             "inertias: give the body an <inertial> instead")
    for key in ("refpos", "refquat", "vertex", "face", "builtin"):
        if mesh.get(key) is not None:
            raise ModelFileError(f"{mesh.where}: <mesh {key}=...> is not read by robodyn: give the body an <inertial>")
    name = mesh.get("file")
    if not name:
        raise ModelFileError(f"{mesh.where}: <mesh> needs file=\"<a binary STL file>\"")
    path = (folder / meshdir / name).resolve()
    if not path.is_relative_to(folder):
        raise ModelFileError(f"{mesh.where}: mesh file {name!r} is outside the model's folder {folder}: copy it in")
    triangles = read_stl(path, mesh.where)
    scale = numbers(mesh, "scale", 3)
    if scale is not None:
        triangles = triangles * scale
    volume, com, inertia = _properties(triangles, mode == "legacy", mesh.where)
    view = Node("geom", attrib, geom.file, geom.line)
    mass, density = numbers(view, "mass", 1), numbers(view, "density", 1)
    rho = mass[0] / volume if mass is not None else (1000.0 if density is None else float(density[0]))
    return MassProperties(rho * volume, com, rho * inertia)
