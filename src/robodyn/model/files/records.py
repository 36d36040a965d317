"""Where a model file's parsed-model record is kept and under which key: no numpy, no model classes.

:mod:`robodyn.model.files.cached` makes and reads the records; the quick path of ``robodyn simulate``
(:mod:`robodyn.cli.quick`) needs only the key, to find the run image made for the same file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

__all__ = ["FORMAT", "record_key", "record_path"]

#: The layout and the generated code: a record of another format is rebuilt. Bump it with every change to the
#: sources a model generates (4: chains by the articulated-body algorithm; 5: chain Jacobians solved over the
#: factor's pattern; 7: the exact parameter Jacobian's method; 8: plain first-order files written as given, without
#: sympy: robodyn.model.files.light_record; 9: the light reader declines what sympy computes otherwise, its min,
#: max and sign give NaN for NaN), since the key holds the version, not the code: a stale record would call today's
#: helpers with yesterday's arguments (or keep a number the sympy reader computes otherwise).
FORMAT: Final = 9
_FOLDER: Final = "models"  # Records live in <cache>/pyXY/models/<key>.json.


def record_key(text: str, stem: str) -> str:
    """The key of the record of the model-file ``text`` whose source's stem is ``stem``
    (:func:`robodyn.model.files.loading.source_stem`): its SHA-256 with robodyn's version and :data:`FORMAT`."""
    from robodyn import __version__
    from robodyn.codegen.cache import content_hash

    return content_hash("robodyn parsed model", str(FORMAT), __version__, stem, text)


def record_path(key: str) -> Path:
    """Where the record of ``key`` is kept (robodyn's private cache folder)."""
    from robodyn.codegen.cache import cache_dir, own_folder

    return own_folder(cache_dir(numba_code=False) / _FOLDER) / f"{key}.json"
