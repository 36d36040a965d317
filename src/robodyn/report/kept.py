"""A report's sections kept in the private cache, for a model a file determines (robodyn.codegen.kept).

An operating point's section — its linear model, modes, validity, responses and their figures — is most of a report's
time (drawing a dozen SVG figures with matplotlib), and ``robodyn demo`` or ``robodyn analyze`` of the same file
computes the same section every time. When the command line says what built the model (:func:`model_key`: the file's
record key, robodyn.files.records, and the parameters set on it), a section is kept as its HTML and its JSON
record under a key made of that, the section's own inputs (the point, its number, the horizon), every Python source of
robodyn (:func:`robodyn.codegen.kept.code_fingerprint`), the libraries that compute and draw it
(:func:`robodyn.codegen.kept.library_stamp`) and matplotlib's configuration files: a change to any of them computes it
again. A section read back is the one computed before, figures and all (its SVG ids included).

A kept section is a cache file like every other (docs/dev/security.md): read through the cache's checks, its SHA-256
verified, its fields checked (text, and JSON data); its HTML is robodyn's own, inserted as the typeset equations are.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np

__all__ = ["LIBRARIES", "MAX_SECTION_BYTES", "kept_section", "kept_verification", "model_key"]

MAX_SECTION_BYTES: Final = 16 * 2**20  # a point's section with its figures: ~0.5 MB for the pendulum's
#: What computes and draws a report: their versions are part of every key.
LIBRARIES: Final = ("numpy", "scipy", "sympy", "matplotlib", "control", "numba", "llvmlite")


def model_key(record_key: str | None, parameters: Mapping[str, float]) -> str | None:
    """The key of a model built from a file (its record key) with ``parameters`` set on it, or None (a model no file
    determines: nothing is kept)."""
    if record_key is None:
        return None
    from robodyn.codegen.cache import content_hash

    return content_hash("robodyn report model", record_key, repr(sorted((k, float(v)) for k, v in parameters.items())))


def kept_section(key: str | None, kind: str, inputs: tuple[Any, ...],
                 compute: Callable[[], tuple[str, dict[str, Any]]]) -> tuple[str, dict[str, Any]]:
    """``compute()``'s section (HTML, JSON record) of the model ``key`` for ``inputs`` (arrays and numbers), kept in
    the private cache (computed every time when ``key`` is None). The record is JSON data either way (arrays as
    lists, non-finite numbers as None: what ``report.json`` holds)."""
    from robodyn.display.page import json_data

    def computed() -> list[Any]:
        html, record = compute()
        return [html, json_data(record)]

    html, record = _kept(key, kind, inputs, computed, _checked)
    return html, record


def kept_verification(key: str | None, inputs: tuple[Any, ...], compute: Callable[[], tuple[str, bytes]]
                      ) -> tuple[str, bytes]:
    """``compute()``'s verification table and PNG plot (robodyn.analysis.verify) of the model ``key`` for ``inputs``,
    kept like a section (``robodyn demo``'s integrators against the seed joint's exact solution)."""
    import base64

    def computed() -> list[str]:
        text, png = compute()
        return [text, base64.b64encode(png).decode("ascii")]

    def checked(value: Any) -> bool:
        return isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)

    text, png = _kept(key, "verification", inputs, computed, checked)
    return text, base64.b64decode(png.encode("ascii"), validate=True)


def _kept(key: str | None, kind: str, inputs: tuple[Any, ...], computed: Callable[[], Any],
          check: Callable[[Any], bool]) -> Any:
    from robodyn.codegen.kept import code_fingerprint, enabled, kept, library_stamp

    if key is None or not enabled():
        return computed()

    parts = (key, kind, _inputs_digest(inputs), code_fingerprint(), library_stamp(*LIBRARIES), _matplotlib_files())
    return kept("report", kind, parts, computed, check, MAX_SECTION_BYTES)


def _inputs_digest(inputs: tuple[Any, ...]) -> str:
    from robodyn.base.digest import sha256

    digest = sha256(b"robodyn section inputs")
    for value in inputs:
        if isinstance(value, np.ndarray):
            digest.update(f"array {value.dtype.str} {value.shape}".encode())
            digest.update(np.ascontiguousarray(value).tobytes())
        else:
            digest.update(repr(value).encode())
    return digest.hexdigest()


def _matplotlib_files() -> str:
    """The contents of the matplotlibrc files matplotlib would read besides its own (its style: fonts, sizes)."""
    from robodyn.base.digest import sha256

    config = os.environ.get("MPLCONFIGDIR") or os.path.join(
        os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config"), "matplotlib")
    candidates = [os.environ.get("MATPLOTLIBRC", ""), "matplotlibrc", os.path.join(config, "matplotlibrc")]
    digest = sha256(b"matplotlibrc")
    for candidate in candidates:
        path = Path(candidate) / "matplotlibrc" if candidate and os.path.isdir(candidate) else Path(candidate)
        if candidate and path.is_file():
            digest.update(str(path.resolve()).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _checked(value: Any) -> bool:
    """Whether ``value`` is a kept section: its HTML (text) and its record (a JSON object)."""
    return isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], dict)
