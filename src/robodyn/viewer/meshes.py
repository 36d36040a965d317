"""Mesh files read through trimesh (STL binary and ASCII, OBJ, Collada DAE through pycollada) as triangle parts.

A mesh becomes one :class:`MeshPart` per coloured piece (a DAE's nodes keep their materials' colours), its
vertices in the file's frame (a DAE's node transforms applied by trimesh) and in metres (a DAE's ``<unit meter>``
applied here, as RViz and MeshCat show it; trimesh leaves it to the caller). Only the named file is read: its
bytes are read here (a regular file of at most :data:`MAX_MESH_BYTES`, no symbolic link,
checked on the open descriptor) and handed to trimesh as a buffer, so no texture, material library
or other file is opened; a DAE that refers to another document (``url="other.dae#..."``) or declares a DTD is
refused. Every refusal is one :class:`InputError` line naming the link and the file.

Loaded meshes are kept in memory by the file's path, size and modification time (:func:`load_mesh`): the same
robot written twice reads its meshes once.
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from robodyn.base.errors import InputError
from robodyn.base.textfile import UnusableFile, read_regular

__all__ = ["FORMATS", "MAX_MESH_BYTES", "MAX_MESH_TRIANGLES", "Mesh", "MeshPart", "load_mesh"]

MAX_MESH_BYTES: Final = 200_000_000  # a robot link's mesh is a few MB; a file larger than this is not one
MAX_MESH_TRIANGLES: Final = 5_000_000  # what one page can draw smoothly, summed over a mesh's parts
FORMATS: Final = {".stl": "stl", ".obj": "obj", ".dae": "dae"}
_EXTERNAL: Final = re.compile(rb"""\burl\s*=\s*["'](?!#)([^"']*)["']""")
_UNIT: Final = re.compile(rb"""<unit\b[^>]*\bmeter\s*=\s*["']([^"']+)["']""")
_MEMORY: dict[tuple[str, int, int], Mesh] = {}
_MEMORY_LIMIT: Final = 256  # meshes kept in memory (a large robot has about a hundred)


@dataclass(frozen=True, slots=True)
class MeshPart:
    """One piece of a mesh: ``vertices`` (k, 3) float32, ``faces`` (m, 3) uint32 rows of vertex indices,
    ``rgba`` its colour (0..1) or None when the file gives none."""

    vertices: np.ndarray
    faces: np.ndarray
    rgba: tuple[float, float, float, float] | None

    def __post_init__(self) -> None:
        if self.vertices.ndim != 2 or self.vertices.shape[1] != 3 or self.faces.ndim != 2 or self.faces.shape[1] != 3:
            raise InputError(f"a mesh part needs (k, 3) vertices and (m, 3) faces, got {self.vertices.shape} and "
                             f"{self.faces.shape}")


@dataclass(frozen=True, slots=True)
class Mesh:
    """The parts of one mesh file (``file``: its real path)."""

    file: Path
    parts: tuple[MeshPart, ...]

    @property
    def triangles(self) -> int:
        return sum(len(part.faces) for part in self.parts)


def _colour(visual: Any) -> tuple[float, float, float, float] | None:
    """The main colour of a trimesh visual (a material's, or face/vertex colours'), None for trimesh's default."""
    material = getattr(visual, "material", None)
    if material is not None:
        colour = getattr(material, "main_color", None)
    elif getattr(visual, "kind", None) in ("face", "vertex"):
        colour = visual.main_color
    else:
        return None
    if colour is None:
        return None
    values = np.asarray(colour, dtype=float).ravel()[:4]
    if values.size < 3 or not np.all(np.isfinite(values)):
        return None
    rgba = np.append(values, 255.0)[:4] / 255.0
    return (float(rgba[0]), float(rgba[1]), float(rgba[2]), float(rgba[3]))


def _part(geometry: Any, transform: np.ndarray | None) -> MeshPart | None:
    vertices = np.asarray(geometry.vertices, dtype=float)
    faces = np.asarray(geometry.faces)
    if faces.size == 0:
        return None
    if transform is not None:
        vertices = vertices @ transform[:3, :3].T + transform[:3, 3]
    if not np.all(np.isfinite(vertices)) or faces.min() < 0 or faces.max() >= len(vertices):
        raise ValueError("non-finite vertices or faces out of range")
    return MeshPart(vertices.astype(np.float32), faces.astype(np.uint32), _colour(geometry.visual))


def _parts(loaded: Any) -> list[MeshPart]:
    """The parts of what trimesh read: a Trimesh, or a Scene's geometries placed by its graph."""
    import trimesh

    if isinstance(loaded, trimesh.Trimesh):
        part = _part(loaded, None)
        return [] if part is None else [part]
    if isinstance(loaded, trimesh.Scene):
        parts = []
        for node in loaded.graph.nodes_geometry:
            transform, name = loaded.graph[node]
            geometry = loaded.geometry.get(name)
            if isinstance(geometry, trimesh.Trimesh):
                part = _part(geometry, np.asarray(transform, dtype=float))
                if part is not None:
                    parts.append(part)
        return parts
    return []


def _read(path: Path, where: str) -> bytes:
    try:
        data = read_regular(path, MAX_MESH_BYTES)
    except UnusableFile as exc:
        raise InputError(f"{where}: cannot read the mesh: {exc}") from None
    except OSError as exc:
        raise InputError(f"{where}: cannot read the mesh: {exc.strerror or exc}") from None
    if data is None:
        raise InputError(f"{where}: no such file")
    return data


def load_mesh(path: Path, link: str) -> Mesh:
    """The mesh at the real path ``path`` of ``link`` (see the module docstring)."""
    where = f"link {link!r}: mesh {str(path)!r}"
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise InputError(f"{where}: unknown mesh format {path.suffix!r}: robodyn reads {', '.join(FORMATS)}")
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InputError(f"{where}: cannot read the mesh: {exc.strerror or exc}") from None
    key = (str(path), info.st_size, info.st_mtime_ns)
    if key in _MEMORY:
        return _MEMORY[key]
    if info.st_size > MAX_MESH_BYTES:
        raise InputError(f"{where}: {info.st_size} bytes, larger than the limit of {MAX_MESH_BYTES} bytes for a mesh: "
                         "simplify it")
    data = _read(path, where)
    if kind == "dae":
        if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
            raise InputError(f"{where}: declares a DTD or entities: robodyn does not expand them; remove them")
        external = _EXTERNAL.search(data)
        if external is not None:
            raise InputError(f"{where}: refers to another file ({external.group(1).decode(errors='replace')!r}): "
                             "robodyn reads one self-contained file per mesh; merge it in")
    parts = _parse(data, kind, where)
    if kind == "dae":
        parts = _in_metres(parts, data, where)
    mesh = Mesh(path, tuple(parts))
    if mesh.triangles > MAX_MESH_TRIANGLES:
        raise InputError(f"{where}: {mesh.triangles} triangles, more than {MAX_MESH_TRIANGLES}: simplify it")
    if len(_MEMORY) >= _MEMORY_LIMIT:
        _MEMORY.pop(next(iter(_MEMORY)))
    _MEMORY[key] = mesh
    return mesh


def _in_metres(parts: list[MeshPart], data: bytes, where: str) -> list[MeshPart]:
    """The parts of a DAE scaled by its ``<asset><unit meter>`` (metres per unit of the file)."""
    found = _UNIT.search(data)
    if found is None:
        return parts
    try:
        unit = float(found.group(1))
    except ValueError:
        unit = float("nan")
    if not (unit > 0 and np.isfinite(unit)):
        raise InputError(f"{where}: <unit meter={found.group(1).decode(errors='replace')!r}> is not a positive "
                         "number of metres: correct it")
    if unit == 1.0:
        return parts
    return [MeshPart((part.vertices * unit).astype(np.float32), part.faces, part.rgba) for part in parts]


def _parse(data: bytes, kind: str, where: str) -> list[MeshPart]:
    import trimesh

    try:
        loaded = trimesh.load(io.BytesIO(data), file_type=kind, process=False)
        parts = _parts(loaded)
    except Exception as exc:  # trimesh and pycollada raise many kinds on a malformed file
        text = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise InputError(f"{where}: malformed {kind.upper()} mesh: {text}") from None
    if not parts:
        raise InputError(f"{where}: malformed {kind.upper()} mesh: no triangles in it")
    return parts
