"""The YAML problem file (``kind: optimal_control``) and :func:`load_problem`.

A problem file is read as model files are (:func:`robodyn.files.yamlio.read_yaml`: safe YAML, duplicate keys
refused, the line of every value kept), and every error is a :class:`ModelFileError` naming ``file:line: key``.
``model:`` is a model file or URDF robot relative to the problem file's folder, or a catalog name; references and
``guess`` files are found relative to the same folder. The keys (docs/control.md)::

    kind: optimal_control
    model: pendulum
    parameters: {m: 1.0}
    horizon: 3.0
    knots: 60
    x0: {theta: 0, theta_dot: 0}
    method: fddp
    integrator: rk4
    transcription: hermite_simpson
    costs: {...}
    bounds: {...}
    constraints: {...}
    guess: guess.csv

It is not a model, so :func:`robodyn.load` refuses it (naming :func:`load_problem`): a problem holds a model.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Final

from robodyn.base.errors import InputError, ModelFileError
from robodyn.base.names import did_you_mean
from robodyn.base.textfile import MAX_TEXT_BYTES, read_text_limited
from robodyn.control.optimal.problem import OptimalControlProblem
from robodyn.control.optimal.references import by_name
from robodyn.files.yamlio import Document, read_yaml
from robodyn.files.yamlio import Path as KeyPath

__all__ = ["KIND", "PROBLEM_KEYS", "REQUIRED", "load_problem", "problem_from_document"]

KIND: Final = "optimal_control"
PROBLEM_KEYS: Final = ("kind", "name", "description", "model", "parameters", "horizon", "knots", "x0", "method",
                       "integrator", "transcription", "costs", "bounds", "constraints", "guess")
REQUIRED: Final = ("model", "horizon", "knots", "x0", "costs")
_PATH: Final = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*):? ")
_WORDS: Final = ("horizon", "knots", "method", "integrator", "transcription", "x0", "params")


def load_problem(path: str | os.PathLike[str], *, method: str | None = None) -> OptimalControlProblem:
    """The :class:`~robodyn.control.optimal.problem.OptimalControlProblem` of a problem file (``method``
    overrides the file's).

    Raises
    ------
    ModelFileError
        ``file:line: key: what is wrong``, for a malformed file or any value the problem refuses.
    """
    if not isinstance(path, str | os.PathLike):
        raise InputError(f"load_problem: give a problem file's path, got {type(path).__name__}")
    file = Path(path)
    text = read_text_limited(file, "problem file", limit=MAX_TEXT_BYTES, error=ModelFileError)
    return problem_from_document(read_yaml(text, str(file)), file.parent, method=method)


def _key_path(text: str) -> KeyPath:
    parts: list[str | int] = []
    for piece in re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\[\d+\]", text):
        parts.append(int(piece[1:-1]) if piece.startswith("[") else piece)
    return tuple(parts)


def _located(doc: Document, exc: InputError) -> ModelFileError:
    """The error as ``file:line: key: message``, the key read from the message's leading path (or a top-level key it
    names)."""
    message = str(exc)
    found = _PATH.match(message)
    path = _key_path(found.group(1)) if found is not None else ()
    if path[:1] and path[0] in (*PROBLEM_KEYS, "params"):
        path = ("parameters", *path[1:]) if path[:1] == ("params",) else path
        rest = message[found.end():] if found is not None else message
        return ModelFileError(f"{doc.where(path)}: {rest}")
    for word in _WORDS:
        if word in message:
            key = "parameters" if word == "params" else word
            return ModelFileError(f"{doc.where((key,))}: {message}")
    return ModelFileError(f"{doc.where(())}: {message}")


def _model(doc: Document, folder: Path) -> Any:
    from robodyn.files.loading import load, names_file

    value = doc.data["model"]
    if not isinstance(value, str) or not value.strip():
        raise ModelFileError(f"{doc.where(('model',))}: expected a model file or a catalog name, got {value!r:.60}")
    candidate = folder / value
    is_file = names_file(value) or os.sep in value or "/" in value or candidate.is_file()
    try:
        return load(str(candidate) if is_file else value)
    except InputError as exc:
        raise ModelFileError(f"{doc.where(('model',))}: {exc}") from None


def problem_from_document(doc: Document, folder: Path, *, method: str | None = None) -> OptimalControlProblem:
    """The problem of a parsed problem file (see the module docstring); relative paths from ``folder``."""
    data = doc.data
    if not isinstance(data, dict):
        raise ModelFileError(f"{doc.where(())}: a problem file must be a mapping of keys (kind, model, horizon, ...)")
    if data.get("kind") != KIND:
        raise ModelFileError(f"{doc.where(('kind',))}: expected 'kind: {KIND}', got {data.get('kind')!r:.40}")
    for key in data:
        if key not in PROBLEM_KEYS:
            raise ModelFileError(f"{doc.where((key,))}: unknown key {key!r} for kind {KIND} (allowed: "
                                 f"{', '.join(PROBLEM_KEYS)}){did_you_mean(str(key), list(PROBLEM_KEYS))}")
    for key in REQUIRED:
        if key not in data:
            raise ModelFileError(f"{doc.where(())}: missing key {key!r} (required for kind {KIND})")
    model = _model(doc, folder)
    options = {key: data[key] for key in ("method", "integrator", "transcription") if key in data}
    if method is not None:
        options["method"] = method
    try:
        if data.get("parameters") is not None:
            by_name(data["parameters"], tuple(model.parameters), "parameter", "parameters")
        return OptimalControlProblem(model, data["horizon"], data["knots"], data["x0"], data["costs"],
                                     data.get("bounds"), data.get("constraints"), data.get("parameters"),
                                     guess=data.get("guess"), folder=folder, **options)
    except ModelFileError:
        raise
    except InputError as exc:
        raise _located(doc, exc) from None
