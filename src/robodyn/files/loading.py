"""YAML model files -> models, validated, with ``file:line: key.path`` in every message.

Kinds (docs/models.md has the full reference):

- ``first_order``: ``states`` and ``dynamics`` (one expression per state);
- ``mechanical``: ``coordinates``, ``mass``, optional ``damping``, ``stiffness``, ``input_matrix``;
- ``lagrangian``: ``coordinates``, ``kinetic``, optional ``potential``, ``forces`` and ``points`` (named
  positions in the coordinates: the model's frames).
- ``chain``: ``joints`` and ``links``, optional ``gravity``, ``friction_smoothing`` and ``frames``
  (:mod:`robodyn.mechanisms.chain.system`);
- ``diagram``: ``blocks``, optional ``connect``, ``inputs`` and ``outputs`` (mappings to block ports)
  (:mod:`robodyn.files.diagram`).

The equation kinds share ``name``, ``description``, ``parameters``, ``inputs`` and ``outputs``. Expressions are parsed
here, with the names each key may use, so that a rejected token is reported with its line. The reader
itself is :mod:`robodyn.files.reader` (it imports sympy and the model classes): this module stays light.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path as FilePath
from typing import TYPE_CHECKING, Any

from robodyn.base.errors import InputError, ModelFileError, UnknownNameError
from robodyn.base.names import did_you_mean
from robodyn.base.textfile import MAX_TEXT_BYTES as MAX_FILE_BYTES  # robodyn.files.yamlio's limit, without yaml
from robodyn.base.textfile import read_text_limited
from robodyn.model.quantities import parse_assignments

if TYPE_CHECKING:
    from robodyn.files.yamlio import Document
    from robodyn.model.system import Model

__all__ = ["FILE_SUFFIXES", "KINDS", "REQUIRED_KEYS", "describe_value", "load", "load_file", "model_from_document",
           "model_text", "names_file", "names_robot_file", "read_model_text", "source_stem"]

_COMMON = {"name", "kind", "description", "parameters", "inputs", "outputs", "units"}
KINDS: dict[str, set[str]] = {
    "first_order": _COMMON | {"states", "dynamics"},
    "discrete": _COMMON | {"states", "update", "dynamics", "sample", "dt"},
    "mechanical": _COMMON | {"coordinates", "mass", "damping", "stiffness", "input_matrix"},
    "lagrangian": _COMMON | {"coordinates", "kinetic", "potential", "forces", "points"},
    "chain": _COMMON | {"joints", "links", "gravity", "friction_smoothing", "frames", "check_inertia", "base",
              "loops", "constraints", "baumgarte", "independent", "contacts"},
    "diagram": {"name", "kind", "description", "blocks", "connect", "inputs", "outputs", "defaults"},
}
REQUIRED_KEYS = {
    "first_order": ("states", "dynamics"),
    "discrete": (),  # sample (or dt) and update (or dynamics): checked by the reader
    "mechanical": ("coordinates", "mass"),
    "lagrangian": ("coordinates", "kinetic"),
    "chain": ("links",),  # and joints, unless the base floats: the reader says so
    "diagram": ("blocks",),
}
MODEL_SUFFIXES = (".yaml", ".yml")
URDF_OPTIONS = ("backend", "dynamics", "check_inertia", "outputs", "name", "base")  # chain.urdf.load_robot
MJCF_OPTIONS = ("dynamics", "check_inertia", "name")  # robodyn.mechanisms.mjcf.robot.load_mjcf
ROBOT_SUFFIXES = (".urdf", ".xml", ".xacro")  # robot files: never read as YAML model files
FILE_SUFFIXES = (*MODEL_SUFFIXES, *ROBOT_SUFFIXES)  # a name ending so is a file (else a catalog or block name)


def names_file(name: str) -> bool:
    """Whether the model name ``name`` names a file by its suffix (a YAML model file, a URDF or MJCF robot, a
    xacro file :func:`load` refuses): the one answer diagram files, problem files and records share."""
    return name.strip().lower().endswith(FILE_SUFFIXES)


def names_robot_file(name: str) -> bool:
    """Whether ``name`` names a robot file (URDF, MJCF or xacro) rather than a YAML model file."""
    return name.strip().lower().endswith(ROBOT_SUFFIXES)


def _robot_file(text: str, options: dict[str, Any]) -> Model | None:
    """A URDF or MJCF robot (``.xml`` whose root is ``<mujoco>``) from its file, None for another file; a xacro file
    is refused (xacro runs Python: the user runs it)."""
    lower = text.lower()
    if lower.endswith(".xacro"):
        raise InputError(f"{text}: a xacro file is a program that writes a URDF (it evaluates Python): robodyn does "
                         f"not run it; run `xacro {text} > robot.urdf` first and load robot.urdf")
    if lower.endswith(".urdf"):
        unknown = sorted(set(options) - set(URDF_OPTIONS))
        if unknown:
            raise InputError(f"{text}: unknown options {unknown}: a URDF robot takes {', '.join(URDF_OPTIONS)}")
        from robodyn.mechanisms.urdf.chain import load_robot

        return load_robot(text, **options)
    if lower.endswith(".xml"):
        from robodyn.mechanisms.mjcf.document import MAX_MJCF_BYTES, is_mjcf_text

        head = read_text_limited(FilePath(text), "MJCF file", limit=MAX_MJCF_BYTES, error=ModelFileError)
        if not is_mjcf_text(head):
            raise ModelFileError(f"{text}: an .xml model file is MuJoCo's MJCF, whose root element is <mujoco>; "
                                 "this one's is not (a URDF file ends in .urdf, a model file in .yaml)")
        unknown = sorted(set(options) - set(MJCF_OPTIONS))
        if unknown:
            raise InputError(f"{text}: unknown options {unknown}: an MJCF robot takes {', '.join(MJCF_OPTIONS)}")
        from robodyn.mechanisms.mjcf.robot import load_mjcf

        return load_mjcf(text, **options)
    return None


def describe_value(value: Any) -> str:
    """A file's value as a message shows it: ``a list of 3``, ``a mapping``, ``nothing``, else its repr."""
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "a mapping"
    if value is None:
        return "nothing"
    return repr(value)


def model_from_document(doc: Document, default_name: str = "model") -> Model:
    """Build a model from a parsed YAML document, validating every key (:mod:`robodyn.files.reader`).

    Raises
    ------
    ModelFileError
        Naming the file, the line and the key path, and what to change.
    """
    from robodyn.files.reader import model_from_document as build

    return build(doc, default_name)


def read_model_text(text: str, source: str = "<text>") -> Model:
    """Build a model from YAML text (``source`` names it in messages)."""
    from robodyn.files.yamlio import read_yaml

    if not isinstance(text, str) or not isinstance(source, str):
        raise InputError(f"read_model_text: give the model file's text and a name for it as strings, got "
                         f"{type(text).__name__} and {type(source).__name__}")
    return model_from_document(read_yaml(text, source), default_name=source_stem(source))


def source_stem(source: str) -> str:
    """The name of a model whose file gives none: the file's stem (``"model"`` without one)."""
    return os.path.splitext(os.path.basename(source))[0] or "model"


def load_file(path: str | os.PathLike[str]) -> Model:
    """Load a YAML model file.

    Raises
    ------
    ModelFileError
        When the file cannot be read or is not a valid model.
    """
    if not isinstance(path, str | os.PathLike):
        raise InputError(f"load_file: give a model file's path, got {type(path).__name__}: {path!r:.60}")
    file = FilePath(path)
    text = read_text_limited(file, "model file", limit=MAX_FILE_BYTES, error=ModelFileError)
    return read_model_text(text, str(file))


def model_text(model: object) -> tuple[str, str] | None:
    """``(text, source)`` of what :func:`load` would read as a model file: a YAML path or a file-backed catalog
    name (as :func:`read_model_text` takes them); None for anything else (URDF, ``mbk``, options, bad input:
    :func:`load` deals with those)."""
    from robodyn.files import catalog

    if not isinstance(model, str | os.PathLike):
        return None
    text = os.fspath(model)
    if not isinstance(text, str) or names_robot_file(text):
        return None
    if text.lower().endswith(MODEL_SUFFIXES) or os.path.sep in text or os.path.isfile(text):
        file = FilePath(text)
        return read_text_limited(file, "model file", limit=MAX_FILE_BYTES, error=ModelFileError), str(file)
    if text not in catalog.FILE_MODELS:
        return None
    return catalog.catalog_text(text), f"catalog:{text}"


def load(model: str | os.PathLike[str], **options: Any) -> Model:
    """Load a model: a YAML, URDF or MJCF (MuJoCo ``.xml``) file path, or a catalog name (``"joint"``, ``"pendulum"``,
    ``"mbk"``, ...).

    A URDF robot takes the options ``backend`` (``"tape"``, the default: compiled on robodyn's rigid-body
    tape; ``"pinocchio"``: Pinocchio's algorithms), ``dynamics`` (False ignores the joints' ``<dynamics>``)
    ``check_inertia`` (False accepts unphysical link inertias), ``outputs`` (as a chain's), ``name`` and ``base``
    (``"floating"`` or ``"planar"``: the root link joined to the world by a free-flyer or planar joint; default:
    the file's own root joint, else fixed; robodyn.mechanisms.urdf.chain.load_robot). An MJCF robot takes ``name``,
    ``dynamics`` and ``check_inertia`` (robodyn.mechanisms.mjcf.robot.load_mjcf); a ``.xacro`` file is refused.

    Catalog models that take options accept them as keywords or after a colon:
    ``load("mbk", n=5)`` and ``load("mbk:n=5")`` are the same.

    Raises
    ------
    UnknownNameError
        For a name that is neither a file nor in the catalog.
    ModelFileError
        For an invalid model file.
    """
    from robodyn.files import catalog

    if not isinstance(model, str | os.PathLike):
        raise InputError(f"load: expected a file path or a catalog model name, got {type(model).__name__} "
                         f"{str(model)[:80]!r}")
    text = os.fspath(model)
    if not isinstance(text, str):
        raise InputError(f"load: give the path as text, got {type(text).__name__}")
    robot = _robot_file(text, options)
    if robot is not None:
        return robot
    if text.lower().endswith(MODEL_SUFFIXES) or os.path.sep in text or os.path.isfile(text):
        if options:
            raise InputError(f"{text}: options {sorted(options)} apply to catalog models only")
        return load_file(text)
    name, _, option_text = text.partition(":")
    if option_text:
        parsed = parse_assignments(option_text, where=f"model {text!r}")
        options = {**{k: int(v) if float(v).is_integer() else v for k, v in parsed.items()}, **options}
    if name not in catalog.CATALOG:
        names = ", ".join(catalog.CATALOG)
        raise UnknownNameError(
            f"unknown model {name!r}: give a path to a .yaml file or one of the catalog models: {names}"
            f"{did_you_mean(name, list(catalog.CATALOG))}"
        )
    factory = catalog.CATALOG[name]
    accepted = [p for p in inspect.signature(factory).parameters if p != "options"]
    unknown = [key for key in options if key not in accepted]
    if unknown:
        takes = f"takes the options {', '.join(accepted)}" if accepted else "takes no options"
        raise InputError(f"catalog model {name!r} {takes}, got {', '.join(map(repr, unknown))}")
    return factory(**options)
