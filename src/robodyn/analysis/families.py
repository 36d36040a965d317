"""Continuous families of equilibria: the directions along which f = 0 stays 0, found at each point.

A robot whose base turns about the vertical (gravity does not depend on that angle), a cart on a level track, an
arm in orbit: their rest points are not isolated but form continuous families, and random starts of
:func:`robodyn.find_equilibrium` return the same rest point at as many base angles as there are starts.
:func:`families` groups such points:

- at each point the Jacobian J = df/dz of f in the unknowns z (the states and inputs not fixed) is taken; its null
  space (singular values at or below :data:`NULL_RTOL` ||J||) holds the directions the equilibrium set may extend
  along (a coordinate axis first: the angle a robot's equations do not contain);
- a direction counts as a *flat* one when f stays 0 (max |f| <= ``tol``, the equilibrium test) at :data:`SPANS`
  points along the straight line through the point, up to a few units away: the family is then the line, not a
  point where J merely happens to be singular;
- points that differ only along the flat directions of one of them (within DUPLICATE_DISTANCE) are one family,
  represented by its member nearest the origin along those directions (the angle set to 0 when that is one too).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np
from numpy.typing import NDArray

from robodyn.analysis.equilibrium import DUPLICATE_DISTANCE
from robodyn.analysis.linearize import _central
from robodyn.analysis.operating_point import OperatingPoint
from robodyn.errors import RobodynError

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["NULL_RTOL", "SPANS", "Family", "families"]

Array = NDArray[np.float64]

NULL_RTOL: Final = 1e-8  # Singular values of J at or below this times ||J|| (at least 1) span its null space.
SPANS: Final = (0.37, -0.61, 1.3, -1.9, 2.9, -3.1)  # Steps along a candidate direction (times max(1, |z|_inf)).


@dataclass(frozen=True, slots=True)
class Family:
    """One equilibrium, or a continuous family of them, as :func:`families` found it.

    point : its representative; directions : (k, n + m) unit vectors in (x, u) along which every point is an
    equilibrium alike (none: an isolated point); moving : the names of the states and inputs they move; members :
    how many of the points given belong to it.
    """

    point: OperatingPoint
    directions: Array
    moving: tuple[str, ...]
    members: int

    @property
    def continuous(self) -> bool:
        return bool(self.directions.shape[0])


def _jacobian(model: ModelContract, z: Array, free: NDArray[np.intp], p: Array, t: float) -> Array:
    """df/dz (n, k) at the point z = (x, u), in the free columns: exact when the model has it, else central."""
    n = model.n_states
    if model.jacobian_method is not None:
        A, B = model.jacobians_raw(t, z[:n], z[n:], p)
        return np.hstack([np.asarray(A, dtype=float), np.asarray(B, dtype=float)])[:, free]

    def f(values: Array) -> Array:
        full = z.copy()
        full[free] = values
        return np.asarray(model.f_raw(t, full[:n], full[n:], p), dtype=float)

    return _central(f, z[free])[0]


def _flat(model: ModelContract, z: Array, direction: Array, p: Array, t: float, tol: float) -> bool:
    """Whether f = 0 (max |f| <= tol) at every step of SPANS along ``direction`` from z."""
    n = model.n_states
    scale = max(1.0, float(np.max(np.abs(z), initial=0.0)))
    try:
        with np.errstate(all="ignore"):
            for step in SPANS:
                moved = z + step * scale * direction
                if not float(np.max(np.abs(model.f_raw(t, moved[:n], moved[n:], p)), initial=0.0)) <= tol:
                    return False
    except (RobodynError, ArithmeticError, ValueError):
        return False
    return True


def _flat_directions(model: ModelContract, z: Array, free: NDArray[np.intp], p: Array, t: float, tol: float) -> Array:
    """The flat directions at z (k, n + m): the coordinate axes in J's null space that are flat, then the null
    space's other directions (orthogonal to those) that are."""
    J = _jacobian(model, z, free, p, t)
    if not J.size or not np.all(np.isfinite(J)):
        return np.zeros((0, z.size))
    size = max(1.0, float(np.linalg.norm(J, 2)))
    _, values, Vt = np.linalg.svd(J)
    null = Vt[np.concatenate([values, np.zeros(Vt.shape[0] - values.size)]) <= NULL_RTOL * size]
    found: list[Array] = []
    for k in range(free.size):  # an axis: one state or input alone (the angle the equations do not contain)
        axis = np.zeros(free.size)
        axis[k] = 1.0
        if float(np.linalg.norm(J @ axis)) <= NULL_RTOL * size:
            found.append(axis)
    for vector in null:
        rest = vector - sum((vector @ a) * a for a in found) if found else vector
        if float(np.linalg.norm(rest)) > 1e-6:
            found.append(rest / np.linalg.norm(rest))
    flat = []
    for vector in found:
        full = np.zeros(z.size)
        full[free] = vector
        if _flat(model, z, full, p, t, tol):
            flat.append(full)
    return np.array(flat).reshape(-1, z.size)


def _same(a: Array, b: Array, directions: Array) -> bool:
    """Whether a and b differ only along ``directions`` (within DUPLICATE_DISTANCE, relative per component)."""
    difference = b - a
    if directions.size:
        difference = difference - directions.T @ (directions @ difference)
    scale = np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
    return bool(np.max(np.abs(difference) / scale, initial=0.0) < DUPLICATE_DISTANCE)


def _representative(model: ModelContract, point: OperatingPoint, directions: Array, p: Array, t: float,
                    tol: float) -> OperatingPoint:
    """The member of the family nearest the origin along its directions, when it is an equilibrium (else point)."""
    n = model.n_states
    z = np.concatenate([point.x, point.u])
    nearest = z - directions.T @ (directions @ z) + 0.0
    try:
        residual = float(np.max(np.abs(model.f_raw(t, nearest[:n], nearest[n:], p)), initial=0.0))
    except (RobodynError, ArithmeticError, ValueError):
        return point
    if not residual <= tol:
        return point
    return OperatingPoint(nearest[:n], nearest[n:], point.states, point.inputs, residual, point.converged,
                          point.method)


def families(model: ModelContract, points: Sequence[OperatingPoint], fixed: Sequence[str] = (), *,
             t: float = 0.0, tol: float = 1e-10) -> tuple[Family, ...]:
    """The points grouped into isolated equilibria and continuous families (module docstring), in the order of
    their first member.

    Parameters
    ----------
    model
        The model the points are equilibria of (at its own parameters).
    points
        Equilibria, as :func:`robodyn.find_equilibrium` returns them.
    fixed
        The states and inputs that were held fixed (not unknowns): no family extends along them.
    tol
        max |f| at or below which a point along a direction is an equilibrium (find_equilibrium's test).
    """
    names = (*model.states, *model.inputs)
    free = np.array([i for i, name in enumerate(names) if name not in set(fixed)], dtype=np.intp)
    p = model.parameter_vector()
    found: list[tuple[Family, Array]] = []
    for point in points:
        z = np.concatenate([point.x, point.u])
        owner = next((k for k, (family, start) in enumerate(found) if _same(start, z, family.directions)), None)
        if owner is not None:
            family, start = found[owner]
            found[owner] = (Family(family.point, family.directions, family.moving, family.members + 1), start)
            continue
        directions = _flat_directions(model, z, free, p, t, tol)
        moving = tuple(names[i] for i in range(len(names)) if directions.size and
                       float(np.max(np.abs(directions[:, i]))) > math.sqrt(NULL_RTOL))
        representative = _representative(model, point, directions, p, t, tol) if directions.size else point
        found.append((Family(representative, directions, moving, 1), z))
    return tuple(family for family, _ in found)
