"""Analysis results kept in the private cache (robodyn.codegen.kept): a loop's margins.

``margins`` asks python-control (``stability_margins``: every crossing of the loop), whose import is a second of a
command's start-up, for a computation of microseconds that gives the same answer for the same loop every time.
:func:`kept_margins` keeps that answer — the six arrays of crossings and the notes — keyed by the loop's matrices
(their bytes), its names, the files of python-control that compute it and of robodyn that read it: a second
``robodyn linearize --open`` of the same loop reads it back without importing python-control. The arrays come back
bit for bit (JSON keeps a float's shortest repr; infinite and undefined values as the text ``inf``, ``-inf``,
``nan``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

__all__ = ["MAX_MARGINS_BYTES", "kept_margins"]

MAX_MARGINS_BYTES: Final = 4 * 2**20  # a loop's crossings and notes (~1 kB for a PID loop)
#: robodyn's sources whose code decides the kept margins (relative to robodyn/): a change computes them again
SOURCES: Final = ("analysis/lti.py", "analysis/modes.py", "analysis/kept.py")
#: python-control's files that compute them (relative to its package folder), found without importing it
CONTROL_FILES: Final = ("_version.py", "margins.py")
_NON_FINITE: Final = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
_ROOT: Final = Path(__file__).resolve().parents[1]

Array = NDArray[np.float64]


def kept_margins(linear: Any, i: int, j: int, compute: Callable[[Any, int, int], tuple[list[Array], list[str]]]
                 ) -> tuple[list[Array], list[str]]:
    """``compute(linear, i, j)`` — the crossings of the loop from input ``j`` to output ``i`` of the LinearSystem
    ``linear`` and its notes — from the private cache when it was computed before for the same loop, else computed
    and kept. Without python-control (``compute`` says it is missing), or with ``ROBODYN_KEPT=0``, nothing is kept."""
    from robodyn.codegen.kept import enabled, kept

    stamp = _control_stamp() if enabled() else None
    if stamp is None:
        return compute(linear, i, j)

    def computed() -> dict[str, Any]:
        found, notes = compute(linear, i, j)
        return {"found": [[_plain(v) for v in a.tolist()] for a in found], "notes": list(notes)}

    value = kept("results", "margins", (_loop_digest(linear, i, j), stamp, _fingerprint()), computed, _checked,
                 MAX_MARGINS_BYTES)
    return [np.array([_float(v) for v in a], dtype=float) for a in value["found"]], list(value["notes"])


def _loop_digest(linear: Any, i: int, j: int) -> str:
    """SHA-256 of everything the answer depends on: A, the loop's B column, C row and D entry, dt, the names."""
    from robodyn.digest import sha256

    digest = sha256(repr((linear.A.shape, linear.dt, linear.states, linear.inputs[j], linear.outputs[i])).encode())
    for matrix in (linear.A, linear.B[:, j], linear.C[i], linear.D[i, j:j + 1]):
        digest.update(np.ascontiguousarray(matrix, dtype=float).tobytes())
    return digest.hexdigest()


def _control_stamp() -> str | None:
    """SHA-256 of python-control's files that compute the margins (found, not imported), or None without it."""
    import importlib.util

    from robodyn.digest import sha256

    spec = importlib.util.find_spec("control")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent
    digest = sha256(b"python-control")
    try:
        for name in CONTROL_FILES:
            digest.update((folder / name).read_bytes())
    except OSError:
        return None
    return digest.hexdigest()


def _fingerprint() -> str:
    from robodyn.digest import sha256

    digest = sha256(b"robodyn margins")
    for name in SOURCES:
        digest.update((_ROOT / name).read_bytes())
    return digest.hexdigest()


def _plain(value: float) -> float | str:
    """A float as JSON data: itself, or ``inf``, ``-inf``, ``nan`` as text (JSON has none of them)."""
    if math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"


def _float(value: float | str) -> float:
    return _NON_FINITE[value] if isinstance(value, str) else value


def _checked(value: Any) -> bool:
    """Whether ``value`` is kept margins: six lists of floats (or ``inf``, ``-inf``, ``nan``) and a list of text."""
    if not (isinstance(value, dict) and set(value) == {"found", "notes"}):
        return False
    found, notes = value["found"], value["notes"]
    return (isinstance(found, list) and len(found) == 6 and all(isinstance(a, list) and all(
        type(v) is float or (isinstance(v, str) and v in _NON_FINITE) for v in a) for a in found)
        and isinstance(notes, list) and all(isinstance(n, str) for n in notes))
