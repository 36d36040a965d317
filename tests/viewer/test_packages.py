"""robodyn.viewer.packages: where package:// and relative mesh paths resolve, in which order, and what is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from robodyn.base.errors import InputError
from robodyn.viewer.packages import MeshLocator, example_robot_data_share, parse_package_dirs


def _package(root: Path, name: str = "arm") -> Path:
    """A package folder ``root/name`` with urdf/robot.urdf and meshes/part.stl."""
    (root / name / "urdf").mkdir(parents=True)
    (root / name / "meshes").mkdir()
    urdf = root / name / "urdf" / "robot.urdf"
    urdf.write_text("<robot name='r'/>")
    (root / name / "meshes" / "part.stl").write_text("solid arm\nendsolid arm\n")
    return urdf


def _locator(urdf: Path, **options: object) -> MeshLocator:
    return MeshLocator(urdf, ros_package_path=options.pop("ros", ()), share=options.pop("share", Path()),  # type: ignore[arg-type]
                       **options)  # type: ignore[arg-type]


def test_package_and_relative_paths_resolve_in_the_urdfs_package(tmp_path: Path) -> None:
    urdf = _package(tmp_path)
    expected = (tmp_path / "arm" / "meshes" / "part.stl").resolve()
    locator = _locator(urdf)
    assert locator.resolve("package://arm/meshes/part.stl", "l") == expected
    assert locator.resolve("../meshes/part.stl", "l") == expected
    assert locator.resolve(str(expected), "l") == expected  # absolute, inside the package
    assert locator.resolve("package://arm/meshes/none.stl", "l") is None  # not there: the caller warns
    assert locator.resolve("package://other/meshes/part.stl", "l") is None


def test_the_search_order_is_urdf_package_dirs_ros_path_then_share(tmp_path: Path) -> None:
    urdf = _package(tmp_path / "here")
    given, ros, share = (_package(tmp_path / k, "lib").parent.parent for k in ("given", "ros", "share"))
    name = "package://lib/meshes/part.stl"
    everything = _locator(urdf, package_dirs={"lib": given}, ros=(ros.parent,), share=share)
    assert everything.resolve(name, "l") == (given / "meshes" / "part.stl").resolve()
    assert _locator(urdf, ros=(ros.parent,), share=share).resolve(name, "l") == (ros / "meshes" / "part.stl").resolve()
    assert _locator(urdf, share=share).resolve(name, "l") == (share / "meshes" / "part.stl").resolve()
    # the URDF's own package comes first: a package named like it elsewhere is not used
    own = _locator(urdf, package_dirs={"arm": given}).resolve("package://arm/meshes/part.stl", "l")
    assert own == (tmp_path / "here" / "arm" / "meshes" / "part.stl").resolve()


@pytest.mark.parametrize("name", ["package://../../etc/passwd", "package://./x.stl", "package://arm",
                                  "http://example.com/part.stl", "", "a\x00b"])
def test_names_that_are_no_mesh_path_are_refused(tmp_path: Path, name: str) -> None:
    urdf = _package(tmp_path)
    with pytest.raises(InputError, match=r"link 'forearm'"):
        _locator(urdf).resolve(name, "forearm")


def test_paths_that_leave_the_allowed_folders_are_refused_naming_link_and_file(tmp_path: Path) -> None:
    urdf = _package(tmp_path / "ws")
    secret = tmp_path / "secret.stl"
    secret.write_text("solid s\nendsolid s\n")
    locator = _locator(urdf)
    for name in ("package://arm/../../secret.stl", "../../../secret.stl", str(secret)):
        with pytest.raises(InputError, match=r"link 'forearm': mesh .*outside the folders"):
            locator.resolve(name, "forearm")
    if os.path.exists("/etc/passwd"):
        with pytest.raises(InputError, match="outside the folders"):
            locator.resolve("/etc/passwd", "forearm")


def test_a_symbolic_link_pointing_out_is_refused_one_pointing_in_is_followed(tmp_path: Path) -> None:
    urdf = _package(tmp_path / "ws")
    outside = tmp_path / "outside.stl"
    outside.write_text("solid s\nendsolid s\n")
    meshes = tmp_path / "ws" / "arm" / "meshes"
    (meshes / "out.stl").symlink_to(outside)
    (meshes / "in.stl").symlink_to(meshes / "part.stl")
    (meshes / "folder").symlink_to(tmp_path)
    locator = _locator(urdf)
    with pytest.raises(InputError, match=r"link 'hand': mesh 'package://arm/meshes/out.stl'.*outside"):
        locator.resolve("package://arm/meshes/out.stl", "hand")
    with pytest.raises(InputError, match="outside"):
        locator.resolve("package://arm/meshes/folder/outside.stl", "hand")
    assert locator.resolve("package://arm/meshes/in.stl", "hand") == (meshes / "part.stl").resolve()


def test_package_dir_options() -> None:
    assert parse_package_dirs(["a=/x", "b_c.d=rel/y"]) == {"a": Path("/x"), "b_c.d": Path("rel/y")}
    for bad in ("a", "=x", "../a=/x", "a=", "a/b=/x"):
        with pytest.raises(InputError, match="--package-dir"):
            parse_package_dirs([bad])


def test_example_robot_data_resolves_from_its_share_folder() -> None:
    share = example_robot_data_share()
    if share is None:
        pytest.skip("example-robot-data is not installed")
    urdf = share / "robots" / "panda_description" / "urdf" / "panda.urdf"
    found = MeshLocator(urdf).resolve("package://example-robot-data/robots/panda_description/meshes/visual/link0.dae",
                                      "panda_link0")
    assert found is not None and found.is_file() and found.name == "link0.dae"
