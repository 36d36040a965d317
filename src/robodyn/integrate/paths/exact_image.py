"""A linear model's exact run written down, so that a new process repeats it without numpy, scipy or sympy.

The exact path (robodyn.linear.exact) of a linear model with constant inputs advances y = (x, u, 0) over its
grid
by the matrix exponentials of the augmented generator M = [[A, B, 0], [0, 0, I], [0, 0, 0]], one per step length up
to a quantum (robodyn.linear.exact_steps). Building the model (sympy) and computing an exponential (scipy) are
most of a warm ``robodyn simulate`` of the joint; the steps themselves are a few products per output time. So after
such a run the command line keeps, in the run's image (robodyn.integrate.kernels.run_image, kind ``exact``):

- M as rows of floats and its quantum;
- the exponentials the runs computed, by the step length each was computed for (the last :data:`MAX_ENTRIES` of
  them: the grids of a few ``--t-final``/``--points``);
- the facts the run prints: the model's name, states and inputs, and whether B carries the model's constant term as
  a last column held at 1.

:func:`execute` then runs the very steps of the full path (:func:`robodyn.linear.exact_steps.plain_steps`,
the same
functions, the same order of operations) from those exponentials, and answers None when the grid needs one that is
not kept: the full path runs and keeps it. The full path takes this road only for systems small enough for the plain
steps (:func:`robodyn.linear.exact_steps.plain_sized`); an image is made for no other.

Nothing here imports numpy. The image is checked like every image (:func:`check`: types, sizes, finite numbers) after
the cache's own checks of the file and its SHA-256 (robodyn.integrate.kernels.run_image).
"""

from __future__ import annotations

import math
from typing import Any, Final

from robodyn.base.names import is_qualified_name
from robodyn.linear.exact_steps import SharedExponentials, plain_sized, plain_steps

__all__ = ["KIND", "MAX_ENTRIES", "check", "execute", "merged"]

KIND: Final = "exact"
MAX_ENTRIES: Final = 16  # exponentials kept per image: a uniform grid needs one, a grid and its last step two


def merged(fields: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    """``fields`` (``generator``, ``quantum``, ``entries``: a run's) with the entries of ``previous`` (the image kept
    before, when it has the same generator) that the run did not compute, the newest :data:`MAX_ENTRIES`."""
    entries = list(fields["entries"])
    if previous is not None and previous.get("generator") == fields["generator"] \
            and previous.get("quantum") == fields["quantum"]:
        lengths = {h for h, _ in entries}
        entries = [entry for entry in previous["entries"] if entry[0] not in lengths] + entries
    return {**fields, "entries": entries[-MAX_ENTRIES:]}


def check(image: dict[str, Any]) -> str | None:
    """What is wrong with the exact fields of ``image`` (types, sizes, finite numbers), or None."""
    states, inputs, columns = image.get("states"), image.get("inputs"), image.get("columns")
    for names in (states, inputs):
        if not (isinstance(names, list) and all(is_qualified_name(s) for s in names)
                and len(set(names)) == len(names)):
            return "bad names"
    assert isinstance(states, list) and isinstance(inputs, list)
    if not (states and isinstance(image.get("name"), str) and type(image.get("constant")) is bool
            and type(columns) is int and columns == len(inputs) + image["constant"]):
        return "bad facts"
    size = len(states) + 2 * columns
    if not (type(image.get("row_bytes")) is int and image["row_bytes"] > 0 and plain_sized(len(states), size)):
        return "bad sizes"
    quantum = image.get("quantum")
    if not (quantum is None or (type(quantum) is float and quantum > 0.0 and math.isfinite(quantum))):
        return "bad quantum"
    if not _square(image.get("generator"), size):
        return "bad generator"
    entries = image.get("entries")
    if not (isinstance(entries, list) and len(entries) <= MAX_ENTRIES and all(
            isinstance(e, list) and len(e) == 2 and type(e[0]) is float and math.isfinite(e[0]) and e[0] >= 0.0
            and _square(e[1], size) for e in entries)):
        return "bad exponentials"
    return None


def _square(rows: Any, size: int) -> bool:
    """Whether ``rows`` is ``size`` rows of ``size`` finite floats."""
    return isinstance(rows, list) and len(rows) == size and all(
        isinstance(row, list) and len(row) == size and all(type(v) is float and math.isfinite(v) for v in row)
        for row in rows)


def execute(image: dict[str, Any], x0: list[float], inputs: list[float], t0: float, times: list[float]
            ) -> list[list[float]] | None:
    """The states at ``times`` (sorted, from t0) of the run from ``x0`` at ``t0`` with the constant ``inputs`` (one
    per model input), as the full path computes them; None when the grid needs an exponential that is not kept.

    The grid is t0 and the output times, sorted and distinct (constant inputs add no breaks); on each interval the
    inputs' value is ``value + 0.0 * (start - t0)`` and their slope 0.0, as the full path reads a constant signal's
    one affine piece.
    """
    kept = {h: exponential for h, exponential in image["entries"]}
    quantum = image["quantum"] if image["quantum"] is not None else math.inf
    shared: SharedExponentials[list[list[float]]] = SharedExponentials(quantum, kept.get)
    values = [*inputs, 1.0] if image["constant"] else list(inputs)
    grid = sorted({t0, *times})
    extras = [[v + 0.0 * (start - t0) for v in values] + [0.0] * len(values) for start in grid[:-1]]
    states = plain_steps(grid, x0, extras, image["generator"], shared)
    if states is None:
        return None
    where = {t: k for k, t in enumerate(grid)}
    return [states[where[t]] for t in times]
