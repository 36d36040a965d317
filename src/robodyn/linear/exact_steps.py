"""The exact path's steps in plain floats: one piece of code for ``exact_response`` and the quick path.

:func:`robodyn.linear.exact.exact_response` advances y = (x, z, u0, slope) from one time of its grid to the
next
by a matrix exponential of the augmented generator M, shared by step lengths that differ by less than a quantum
(:class:`SharedExponentials`). For a small system that loop is cheaper in Python's floats than through numpy's calls
(a product of a 2 x 4 block and a vector costs about as much as numpy's call alone), and it can run where numpy is
not imported: a warm ``robodyn simulate`` of a linear model repeats its run from the kept image
(robodyn.integrate.paths.exact_image) with these very functions, so both paths do the same operations in the same order
and give the same bits.

Every sum of products is evaluated left to right, each product and each sum rounded once (IEEE double, as numpy's
elementwise operations round them); nothing here imports numpy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final, Generic, TypeVar

__all__ = ["PLAIN_PRODUCTS", "SHARE_TOLERANCE", "SharedExponentials", "plain_sized", "plain_steps"]

# Two step lengths closer than this fraction of 1 / ||M||_1 (M the augmented generator) share one matrix
# exponential; the difference d is applied as the first-order correction (I + d M), whose neglected terms
# are below (d ||M||)^2 = 1e-18 relative, i.e. under double-precision rounding.
SHARE_TOLERANCE: Final = 1e-9
# Products per step (n states times the generator's size N) up to which the steps run in plain floats, and so up to
# which a linear model's warm run can be repeated without numpy. A step costs about 0.9 us + 0.045 us per product in
# floats against 4.6 us through numpy's calls whatever the size (CPU time, 5,000 steps: the joint 1.4 against 4.6 us,
# 8 states and 4 inputs 6.4 against 4.6 us): at this limit a step costs at most 1.4 of numpy's.
PLAIN_PRODUCTS: Final = 128

Matrix = list[list[float]]
E = TypeVar("E")  # an exponential: rows of floats here, a numpy array on exact_response's numpy path


def plain_sized(n: int, size: int) -> bool:
    """Whether a system of ``n`` states and a generator of ``size`` rows steps in plain floats."""
    return n * size <= PLAIN_PRODUCTS


def _dot(row: Sequence[float], y: Sequence[float]) -> float:
    """sum_j row[j] y[j], left to right (the first product is the start: no 0.0 + that changes a -0.0)."""
    total = row[0] * y[0]
    for j in range(1, len(y)):
        total += row[j] * y[j]
    return total


class SharedExponentials(Generic[E]):
    """expm(h M) for the steps h of a grid, one for steps within ``quantum`` of each other.

    ``compute(h)`` gives expm(h M) (rows of floats, or the numpy path's array) or None (the quick path, which has only
    the exponentials a full run kept: :meth:`lookup` then answers None and the run is left to the full path). Step
    lengths are binned by ``round(h / quantum)``; a step finds the exponential of its bin or of a neighbouring one
    when the two lengths are within ``quantum``, else a new one is computed for its own length — so which
    exponentials a grid needs, and the length each was computed for, follow from the grid alone.
    """

    def __init__(self, quantum: float, compute: Callable[[float], E | None]):
        self.quantum = quantum
        self.compute = compute
        self.entries: dict[int, tuple[float, E]] = {}

    def lookup(self, h: float) -> tuple[float, E] | None:
        """``(h0, expm(h0 M))`` with |h - h0| <= quantum, or None when ``compute`` has none."""
        ratio = h / self.quantum
        key = round(ratio) if math.isfinite(ratio) else 0
        for k in (key, key - 1, key + 1):
            entry = self.entries.get(k)
            if entry is not None and abs(h - entry[0]) <= self.quantum:
                return entry
        exponential = self.compute(h)
        if exponential is None:
            return None
        self.entries[key] = (h, exponential)
        return self.entries[key]


def _transition(exponential: Matrix, generator: Matrix, h: float, h0: float, n: int) -> Matrix:
    """The first n rows of expm(h M) from E = expm(h0 M): E's own when h = h0, else those of (I + (h - h0) M) E,
    each entry E_ij + d sum_k M_ik E_kj (exact to rounding for |d| ||M|| <= SHARE_TOLERANCE)."""
    if h == h0:
        return [list(exponential[i]) for i in range(n)]
    d = h - h0
    columns = [list(column) for column in zip(*exponential)]
    return [[exponential[i][j] + d * _dot(generator[i], columns[j]) for j in range(len(columns))] for i in range(n)]


def plain_steps(grid: Sequence[float], x0: Sequence[float], extras: Sequence[Sequence[float]], generator: Matrix,
                shared: SharedExponentials[Matrix]) -> list[list[float]] | None:
    """The states at every time of ``grid`` (K + 1,) from ``x0`` (n,) at ``grid[0]``.

    ``extras[k]`` holds the rest of y on interval k (the oscillators, the inputs' values at its start, their
    slopes); ``generator`` is M (N rows of N). Each distinct step length's rows of expm(h M) are made once
    (:func:`_transition`: a uniform grid's spacings take a few values, which differ in their last bits), then a step
    is n sums of products. None when ``shared`` has no exponential for a step.
    """
    n = len(x0)
    states = [[float(v) for v in x0]]
    rows: dict[float, Matrix] = {}
    for k in range(len(grid) - 1):
        h = grid[k + 1] - grid[k]
        transition = rows.get(h)
        if transition is None:
            found = shared.lookup(h)
            if found is None:
                return None
            transition = rows[h] = _transition(found[1], generator, h, found[0], n)
        y = [*states[k], *extras[k]]
        states.append([_dot(row, y) for row in transition])
    return states
