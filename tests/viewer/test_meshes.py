"""robodyn.viewer.meshes: STL (ASCII, binary), OBJ and DAE read to the triangles written by hand; hostile files
refused."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from robodyn.base.errors import InputError
from robodyn.viewer.meshes import MAX_MESH_BYTES, load_mesh

pytest.importorskip("trimesh")

# a tetrahedron: four corners, four triangles (outward)
CORNERS = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.2, 0.0], [0.0, 0.0, 0.3]])
TRIANGLES = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])


def _ascii_stl(path: Path) -> None:
    lines = ["solid tet"]
    for tri in TRIANGLES:
        corners = (f"vertex {' '.join(map(repr, CORNERS[i].tolist()))}" for i in tri)
        lines += ["facet normal 0 0 0", "outer loop", *corners,
                  "endloop", "endfacet"]
    path.write_text("\n".join([*lines, "endsolid tet", ""]))


def _binary_stl(path: Path) -> None:
    body = b"".join(struct.pack("<12fH", 0, 0, 0, *CORNERS[tri].ravel(), 0) for tri in TRIANGLES)
    path.write_bytes(b"\0" * 80 + struct.pack("<I", len(TRIANGLES)) + body)


def _obj(path: Path) -> None:
    lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in CORNERS.tolist()]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in TRIANGLES]
    path.write_text("\n".join(lines) + "\n")


DAE = """<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
 <asset><unit meter="{unit}" name="u"/><up_axis>Z_UP</up_axis></asset>
 <library_effects><effect id="red-fx"><profile_COMMON><technique sid="c"><phong>
  <diffuse><color>0.8 0.1 0.1 1</color></diffuse></phong></technique></profile_COMMON></effect></library_effects>
 <library_materials><material id="red" name="red"><instance_effect url="#red-fx"/></material></library_materials>
 <library_geometries><geometry id="tet" name="tet"><mesh>
  <source id="tet-pos"><float_array id="tet-arr" count="12">{points}</float_array>
   <technique_common><accessor source="#tet-arr" count="4" stride="3">
    <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
   </accessor></technique_common></source>
  <vertices id="tet-v"><input semantic="POSITION" source="#tet-pos"/></vertices>
  <triangles material="m" count="4"><input semantic="VERTEX" source="#tet-v" offset="0"/><p>{faces}</p></triangles>
 </mesh></geometry></library_geometries>
 <library_visual_scenes><visual_scene id="s"><node id="n">
  <instance_geometry url="{geometry}"><bind_material><technique_common>
   <instance_material symbol="m" target="#red"/></technique_common></bind_material></instance_geometry>
 </node></visual_scene></library_visual_scenes>
 <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>
"""


def _dae(path: Path, unit: float = 1.0, geometry: str = "#tet") -> None:
    path.write_text(DAE.format(unit=unit, points=" ".join(map(repr, CORNERS.ravel().tolist())),
                               faces=" ".join(map(str, TRIANGLES.ravel())), geometry=geometry))


def _triangles(mesh: object) -> np.ndarray:
    """The mesh's triangles as sorted rows of sorted corners (independent of vertex order and numbering)."""
    corners = np.concatenate([part.vertices[part.faces].astype(float) for part in mesh.parts])  # type: ignore[attr-defined]
    rows = [sorted(map(tuple, np.round(tri, 6))) for tri in corners]
    return np.array(sorted(rows))


EXPECTED = np.array(sorted(sorted(map(tuple, CORNERS[tri])) for tri in TRIANGLES))


@pytest.mark.parametrize(("name", "write"), [("a.stl", _ascii_stl), ("b.STL", _binary_stl), ("c.obj", _obj),
                                             ("d.dae", _dae)])
def test_each_format_reads_the_triangles_written(tmp_path: Path, name: str, write: object) -> None:
    path = tmp_path / name
    write(path)  # type: ignore[operator]
    mesh = load_mesh(path, "link")
    assert mesh.triangles == 4
    # float32 storage: corners agree to float32's rounding of numbers of order 0.3 (~3e-8)
    np.testing.assert_allclose(_triangles(mesh), EXPECTED, atol=1e-6)


def test_a_dae_keeps_its_material_colour_and_unit(tmp_path: Path) -> None:
    path = tmp_path / "mm.dae"
    _dae(path, unit=0.001)
    mesh = load_mesh(path, "link")
    assert mesh.parts[0].rgba is not None
    np.testing.assert_allclose(mesh.parts[0].rgba, (0.8, 0.1, 0.1, 1.0), atol=1 / 255)  # 8-bit colour from trimesh
    np.testing.assert_allclose(_triangles(mesh), EXPECTED * 0.001, atol=1e-9)


def test_a_dae_referring_to_another_file_or_declaring_a_dtd_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "external.dae"
    _dae(path, geometry="other.dae#tet")
    with pytest.raises(InputError, match=r"link 'forearm': mesh .*external.dae.*refers to another file .*other.dae"):
        load_mesh(path, "forearm")
    dtd = tmp_path / "dtd.dae"
    _dae(dtd)
    dtd.write_text(dtd.read_text().replace("<COLLADA", '<!DOCTYPE c [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
                                                       "<COLLADA", 1))
    with pytest.raises(InputError, match=r"link 'forearm': mesh .*dtd.dae.*DTD"):
        load_mesh(dtd, "forearm")


def test_a_mesh_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.stl"
    with open(path, "wb") as handle:  # a sparse file of 2 GB: nothing is written, nothing must be read
        handle.truncate(2 * 1024**3)
    with pytest.raises(InputError, match=rf"link 'base': mesh .*huge.stl.*larger than the limit of {MAX_MESH_BYTES}"):
        load_mesh(path, "base")


@pytest.mark.parametrize(("name", "content"), [("bad.stl", b"solid x\nfacet normal oops\n"),
                                               ("bad.dae", b"<COLLADA><not closed"), ("bad.obj", b"f 1 2 3\n"),
                                               ("empty.stl", b"")])
def test_a_malformed_mesh_is_refused_naming_link_and_file(tmp_path: Path, name: str, content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError, match=rf"link 'elbow': mesh .*{name}.*(malformed|no triangles)"):
        load_mesh(path, "elbow")


def test_unknown_formats_and_links_are_refused(tmp_path: Path) -> None:
    (tmp_path / "part.ply").write_text("ply\n")
    with pytest.raises(InputError, match=r"unknown mesh format '\.ply'"):
        load_mesh(tmp_path / "part.ply", "l")
    _ascii_stl(tmp_path / "real.stl")
    (tmp_path / "link.stl").symlink_to(tmp_path / "real.stl")
    with pytest.raises(InputError, match="symbolic link"):  # the locator hands real paths; a link is not followed
        load_mesh(tmp_path / "link.stl", "l")
