"""Where a model file's parsed-model record is kept and under which key: no numpy, no model classes.

:mod:`robodyn.files.cached` makes and reads the records; the quick path of ``robodyn simulate``
(:mod:`robodyn.cli.quick`) needs only the key, to find the run image made for the same file.

A diagram's text does not determine its model: its blocks may be other files (model files, other diagrams). Its key
(:func:`model_record_key`) therefore holds the SHA-256 of every file its blocks name, found the way the diagram
reader finds them (a path relative to the naming file's folder, a catalog name, a diagram inside a block), each
distinct file once: an edited block file, at any depth, makes a new record.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

from robodyn.base.version import __version__

__all__ = ["FORMAT", "is_diagram", "model_record_key", "record_key", "record_path"]

#: The layout and the generated code: a record of another format is rebuilt. Bump it with every change to the
#: sources a model generates (4: chains by the articulated-body algorithm; 5: chain Jacobians solved over the
#: factor's pattern; 7: the exact parameter Jacobian's method; 8: plain first-order files written as given, without
#: sympy: robodyn.files.light.record; 9: second-order models' Jacobian unrolled up to UNROLL_LIMIT coordinates,
#: straight-line code; 10: the light reader declines what sympy computes otherwise, its min, max and sign give NaN for
#: NaN, the sympy model's numpy functions in the numba sources' order; 11: the modules moved to one folder per
#: concept, and the generated sources name the new module paths), since the key holds the version, not the
#: code: a stale record would call today's helpers with yesterday's arguments (or keep a number the sympy reader
#: computes otherwise).
FORMAT: Final = 11
_FOLDER: Final = "models"  # Records live in <cache>/pyXY/models/<key>.json.


def record_key(text: str, stem: str, included: str = "") -> str:
    """The key of the record of the model-file ``text`` whose source's stem is ``stem``
    (:func:`robodyn.files.loading.source_stem`): its SHA-256 with robodyn's version and :data:`FORMAT`, and
    ``included``, the digests of the files a diagram's blocks name (:func:`model_record_key`)."""
    from robodyn.codegen.cache import content_hash

    parts = (text, included) if included else (text,)
    return content_hash("robodyn parsed model", str(FORMAT), __version__, stem, *parts)


def model_record_key(text: str, source: str) -> str | None:
    """The record key of the model file ``text`` read from ``source``: for a diagram with the SHA-256 of every file
    its blocks name, at every depth; None for a diagram whose robot file is too large to read here (not recorded)."""
    from robodyn.files.loading import source_stem

    included = _included(text, source)
    return None if included is None else record_key(text, source_stem(source), included)


def is_diagram(text: str, source: str) -> bool:
    """Whether the model file ``text`` is a diagram (``kind: diagram``), read without sympy (and without YAML when the
    word is not in it)."""
    return _diagram_data(text, source) is not None


def _diagram_data(text: str, source: str) -> dict[str, Any] | None:
    """The parsed document of a diagram file, or None for another model (or text the reader will refuse)."""
    if "diagram" not in text:
        return None
    from robodyn.base.errors import RobodynError
    from robodyn.files.yamlio import read_yaml

    try:
        data = read_yaml(text, source).data
    except RobodynError:  # the reader words it
        return None
    return data if isinstance(data, dict) and data.get("kind") == "diagram" else None


def _included(text: str, source: str, seen: dict[str, str] | None = None, stack: tuple[str, ...] = ()
              ) -> str | None:
    """The digests of the files a diagram's blocks name, one line each in the order met ("" for other models);
    ``seen`` the files met so far (each is read once), ``stack`` the diagram files being read (a cycle stops)."""
    data = _diagram_data(text, source)
    if data is None:
        return ""
    lines: list[str] = []
    here = os.path.realpath(source) if os.path.isfile(source) else source
    found = _walk(data, _folder(source), lines, {} if seen is None else seen, stack or (here,))
    return "\n".join(lines) if found else None


def _folder(source: str) -> str:
    """The folder a diagram's relative block paths start from (robodyn.files.diagram)."""
    return os.path.dirname(os.path.realpath(source)) if os.path.isfile(source) else os.getcwd()


def _walk(data: Any, folder: str, lines: list[str], seen: dict[str, str], stack: tuple[str, ...]) -> bool:
    """Append the digest of each file the blocks of the diagram ``data`` name (recursively); False when one is not
    to be recorded (:func:`_file`)."""
    blocks = data.get("blocks") if isinstance(data, dict) and data.get("kind") == "diagram" else None
    for label, spec in (blocks.items() if isinstance(blocks, dict) else ()):
        targets = [spec.get("model") if isinstance(spec, dict) else spec]
        parameters = spec.get("parameters") if isinstance(spec, dict) else None
        if isinstance(parameters, dict) and "plant" in parameters:  # an estimator's plant (files/diagram.py)
            targets.append(parameters["plant"])
        for target in targets:
            if isinstance(target, dict):  # a model written in: its own blocks are relative to this folder
                if not _walk(target, folder, lines, seen, stack):
                    return False
            elif isinstance(target, str):
                found = _file(target.strip(), folder, seen, stack)
                if found is None:
                    return False
                lines.append(f"{label}\0{target}\0{found}")
    return True


def _file(target: str, folder: str, seen: dict[str, str], stack: tuple[str, ...]) -> str | None:
    """The digest of the file a block names (with what it includes), "" for a name that is no file (a library
    block, ``mbk:n=3``), or a marker for a model file that cannot be read (the reader says why); None for a URDF
    file larger than a model file or an MJCF file (its includes and meshes are other files): such a diagram is not
    recorded."""
    from robodyn.base.digest import sha256
    from robodyn.base.errors import RobodynError
    from robodyn.files.loading import model_text, names_file, names_robot_file

    if names_file(target) and not os.path.isabs(target):
        target = os.path.join(folder, target)
    path = os.path.realpath(target) if os.path.isfile(target) else target
    if path in seen:
        return seen[path]
    if path in stack:
        return "a diagram that includes itself"
    robot = names_robot_file(target)
    if robot and not target.strip().lower().endswith(".urdf"):  # MJCF: includes and meshes make it, not one text
        return None
    try:
        found = _robot_text(target) if robot else model_text(target)
    except RobodynError:  # a model file the reader cannot read either (it says why); a robot: no record
        return None if robot else "unreadable"
    if found is None:
        return ""
    child, child_source = found
    included = _included(child, child_source, seen, (*stack, path))
    if included is None:
        return None
    seen[path] = sha256((child + "\0" + included).encode()).hexdigest()
    return seen[path]


def _robot_text(path: str) -> tuple[str, str]:
    """A URDF block's text (what its robot is made from), within a model file's limit: a larger robot is read by its
    own reader (robodyn.mechanisms.urdf.file) and its diagram is not recorded (nor is one with an MJCF block)."""
    from robodyn.base.textfile import MAX_TEXT_BYTES, read_text_limited

    return read_text_limited(path, "URDF file", limit=MAX_TEXT_BYTES), path


def record_path(key: str) -> Path:
    """Where the record of ``key`` is kept (robodyn's private cache folder)."""
    from robodyn.codegen.cache import cache_dir, own_folder

    return own_folder(cache_dir(numba_code=False) / _FOLDER) / f"{key}.json"
