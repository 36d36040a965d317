"""robodyn's version is one string: base/version.py's, re-exported by the root and equal to pyproject.toml's."""

import tomllib
from pathlib import Path

import robodyn
from robodyn.base.version import __version__

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_version_is_pyprojects_and_the_roots() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    assert __version__ == project["version"]
    assert robodyn.__version__ is __version__


def test_the_modules_that_stamp_the_version_read_it_from_base() -> None:
    """Cache records and manifests carry the version; they read it without importing the root package."""
    from robodyn.codegen import kept
    from robodyn.files import cached, records

    assert kept.__version__ == records.__version__ == cached.__version__ == __version__
