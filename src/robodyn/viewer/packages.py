"""Where a URDF's mesh files are: ``package://NAME/...``, relative and absolute paths, kept inside allowed folders.

A mesh is looked for, in this order (the first folder that holds the file wins):

1. the URDF's own folder and its parents: a relative path against the URDF's folder; ``package://NAME/rest``
   against each parent folder named NAME (the package a URDF sits in) and each parent holding a folder NAME;
2. the folders given as ``--package-dir NAME=DIR`` (``package_dirs={"NAME": DIR}``);
3. the folders of ``ROS_PACKAGE_PATH`` (each holds packages, or is one);
4. the share folder of the installed example-robot-data (package ``example-robot-data``).

A file is allowed only inside the folder it was resolved against, after every symbolic link is followed: a NAME
that is not one folder name (``package://../..``), a path that climbs out (``../../etc/passwd``), an absolute path
outside the allowed folders, and a link that points out are refused with :class:`InputError` naming the link and
the file. A file that is simply not there is not an error here (None): the caller warns and draws the link as its
frame. Reference: ROS, REP 144 and the ``package://`` scheme of resource_retriever (wiki.ros.org/resource_retriever).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from robodyn.base.errors import InputError

__all__ = ["PACKAGE_SCHEME", "MeshLocator", "example_robot_data_share", "parse_package_dirs"]

PACKAGE_SCHEME: Final = "package://"
_PACKAGE_NAME: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")  # a ROS package name: one folder name


def example_robot_data_share() -> Path | None:
    """The share folder of the installed example-robot-data (which holds ``robots/``), or None without it."""
    try:
        folder = importlib.metadata.distribution("example-robot-data").locate_file(
            "cmeel.prefix/share/example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(str(folder))
    return path if path.is_dir() else None


def parse_package_dirs(items: list[str] | None) -> dict[str, Path]:
    """``--package-dir NAME=DIR`` options as {NAME: DIR}; a malformed one is refused naming it."""
    result: dict[str, Path] = {}
    for item in items or []:
        name, sep, folder = item.partition("=")
        if not sep or not _PACKAGE_NAME.fullmatch(name) or name in (".", "..") or not folder:
            raise InputError(f"--package-dir {item!r}: give NAME=DIR, NAME a package name (letters, digits, _ . -)",
                             key="package_dir")
        result[name] = Path(folder)
    return result


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@dataclass(frozen=True)
class MeshLocator:
    """Resolves the mesh file names of one URDF (see the module docstring).

    ``urdf`` : the URDF file; ``package_dirs`` : {NAME: DIR} (``--package-dir``); ``ros_package_path`` : the
    folders of ROS_PACKAGE_PATH (read from the environment when None); ``share`` : example-robot-data's share
    folder (found when None; ``Path()`` to leave it out).
    """

    urdf: Path
    package_dirs: Mapping[str, Path] = field(default_factory=dict)
    ros_package_path: tuple[Path, ...] | None = None
    share: Path | None = None

    def _ros(self) -> tuple[Path, ...]:
        if self.ros_package_path is not None:
            return self.ros_package_path
        text = os.environ.get("ROS_PACKAGE_PATH", "")
        return tuple(Path(part) for part in text.split(os.pathsep) if part)

    def _share(self) -> Path | None:
        share = example_robot_data_share() if self.share is None else self.share
        return None if share is None or share == Path() else share

    def _package_roots(self, name: str) -> Iterator[Path]:
        """The folders that may be package NAME, in the order of the module docstring."""
        folder = self.urdf.resolve().parent
        for parent in (folder, *folder.parents):
            if parent.name == name:
                yield parent
            yield parent / name
        if name in self.package_dirs:
            yield Path(self.package_dirs[name])
        for entry in self._ros():
            yield entry if entry.name == name else entry / name
        share = self._share()
        if share is not None and share.name == name:
            yield share

    def _plain_roots(self) -> Iterator[Path]:
        """The folders a relative or absolute path may lie in: the URDF's package (its folder's parent), the
        package folders given, ROS_PACKAGE_PATH and example-robot-data's share folder."""
        folder = self.urdf.resolve().parent
        yield folder.parent if folder.parent != folder else folder
        yield from (Path(p) for p in self.package_dirs.values())
        yield from self._ros()
        share = self._share()
        if share is not None:
            yield share

    def resolve(self, filename: str, link: str) -> Path | None:
        """The real path of the mesh ``filename`` of ``link``; None when no allowed folder holds it;
        :class:`InputError` when it would leave them (naming the link and the file)."""
        where = f"{self.urdf}: link {link!r}: mesh {filename!r}"
        if "\x00" in filename or not filename.strip():
            raise InputError(f"{where}: not a file name: give a package:// or relative path")
        if filename.startswith("file://"):
            filename = filename.removeprefix("file://")
        if filename.startswith(PACKAGE_SCHEME):
            name, _, rest = filename.removeprefix(PACKAGE_SCHEME).partition("/")
            if not _PACKAGE_NAME.fullmatch(name) or name in (".", "..") or not rest:
                raise InputError(f"{where}: {name!r} is not a package name: write package://NAME/path/to/mesh")
            candidates = [(root, root / rest) for root in self._package_roots(name)]
        elif "://" in filename:
            raise InputError(f"{where}: only package:// and file paths are read (nothing is downloaded): "
                             "give the mesh as a file")
        else:
            path = Path(filename)
            if path.is_absolute():
                candidates = [(root, path) for root in self._plain_roots()]
            else:
                base = self.urdf.resolve().parent
                candidates = [(root, base / path) for root in self._plain_roots()][:1]
        return self._first_inside(candidates, where)

    def _first_inside(self, candidates: list[tuple[Path, Path]], where: str) -> Path | None:
        escaped: Path | None = None
        for root, path in candidates:
            if not os.path.lexists(path):
                continue
            real, real_root = Path(os.path.realpath(path)), Path(os.path.realpath(root))
            if _inside(real, real_root):
                return real
            escaped = real
        if escaped is not None:
            raise InputError(f"{where}: resolves to {escaped}, outside the folders meshes are read from (the "
                             "URDF's package, --package-dir, ROS_PACKAGE_PATH, example-robot-data): move the mesh "
                             "into its package")
        return None
