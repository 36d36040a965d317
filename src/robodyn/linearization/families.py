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

With output targets (trim), the equations are f = 0 and h[output] = value: a family keeps the targets along its
directions. The base rotation of a model on a manifold (a unit quaternion, or cos and sin: the entries its
``chart()`` names) is never moved: a straight line there leaves the manifold, so equilibria at different base
orientations stay apart (families of base positions are found).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import RobodynError
from robodyn.linearization.derivatives import central_differences
from robodyn.linearization.equilibrium import DUPLICATE_DISTANCE, target_outputs
from robodyn.linearization.points import OperatingPoint

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


@dataclass(frozen=True, slots=True)
class _Equations:
    """The equations a family keeps: f(t, x, u, p) = 0 and h[outputs] = values (none: f = 0 only)."""

    model: ModelContract
    p: Array
    t: float
    outputs: NDArray[np.intp]
    values: Array

    def residual(self, z: Array) -> Array:
        """(f, h[outputs] - values) at z = (x, u)."""
        model, n = self.model, self.model.n_states
        f = np.asarray(model.f_raw(self.t, z[:n], z[n:], self.p), dtype=float)
        if not self.outputs.size:
            return f
        h = np.asarray(model.h_raw(self.t, z[:n], z[n:], self.p), dtype=float)
        return np.concatenate([f, h[self.outputs] - self.values])

    def jacobian(self, z: Array, free: NDArray[np.intp]) -> Array:
        """d(residual)/dz in the free columns: exact when the model has df/dz and no output is targeted, else
        central differences."""
        model, n = self.model, self.model.n_states
        if model.jacobian_method is not None and not self.outputs.size:
            A, B = model.jacobians_raw(self.t, z[:n], z[n:], self.p)
            return np.hstack([np.asarray(A, dtype=float), np.asarray(B, dtype=float)])[:, free]

        def g(values: Array) -> Array:
            full = z.copy()
            full[free] = values
            return self.residual(full)

        return central_differences(g, z[free])[0]


def _flat(equations: _Equations, z: Array, direction: Array, tol: float) -> bool:
    """Whether the equations hold (max |residual| <= tol) at every step of SPANS along ``direction`` from z."""
    scale = max(1.0, float(np.max(np.abs(z), initial=0.0)))
    try:
        with np.errstate(all="ignore"):
            for step in SPANS:
                if not float(np.max(np.abs(equations.residual(z + step * scale * direction)), initial=0.0)) <= tol:
                    return False
    except (RobodynError, ArithmeticError, ValueError):
        return False
    return True


def _flat_directions(equations: _Equations, z: Array, free: NDArray[np.intp], tol: float) -> Array:
    """The flat directions at z (k, n + m): the coordinate axes in J's null space that are flat, then the null
    space's other directions (orthogonal to those) that are."""
    J = equations.jacobian(z, free)
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
        if _flat(equations, z, full, tol):
            flat.append(full)
    return np.array(flat).reshape(-1, z.size)


def _same(a: Array, b: Array, directions: Array) -> bool:
    """Whether a and b differ only along ``directions`` (within DUPLICATE_DISTANCE, relative per component)."""
    difference = b - a
    if directions.size:
        difference = difference - directions.T @ (directions @ difference)
    scale = np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
    return bool(np.max(np.abs(difference) / scale, initial=0.0) < DUPLICATE_DISTANCE)


def _representative(equations: _Equations, point: OperatingPoint, directions: Array, tol: float) -> OperatingPoint:
    """The member of the family nearest the origin along its directions, when it is an equilibrium (else point)."""
    n = equations.model.n_states
    z = np.concatenate([point.x, point.u])
    nearest = z - directions.T @ (directions @ z) + 0.0
    try:
        residual = float(np.max(np.abs(equations.residual(nearest)), initial=0.0))
    except (RobodynError, ArithmeticError, ValueError):
        return point
    if not residual <= tol:
        return point
    return OperatingPoint(nearest[:n], nearest[n:], point.states, point.inputs, residual, point.converged,
                          point.method)


def families(model: ModelContract, points: Sequence[OperatingPoint], fixed: Sequence[str] = (), *,
             targets: Mapping[str, float] | None = None, t: float = 0.0, tol: float = 1e-10) -> tuple[Family, ...]:
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
    targets
        The outputs targeted, ``{output: value}`` (as given to find_equilibrium): a family keeps them.
    tol
        max |f| at or below which a point along a direction is an equilibrium (find_equilibrium's test).
    """
    names = (*model.states, *model.inputs)
    chart = model.chart()
    held = set(fixed) | (set(model.states[chart.rotation]) if chart is not None else set())
    free = np.array([i for i, name in enumerate(names) if name not in held], dtype=np.intp)
    outputs, values = target_outputs(targets, model.outputs)
    equations = _Equations(model, model.parameter_vector(), t, outputs, values)
    found: list[tuple[Family, Array]] = []
    for point in points:
        z = np.concatenate([point.x, point.u])
        owner = next((k for k, (family, start) in enumerate(found) if _same(start, z, family.directions)), None)
        if owner is not None:
            family, start = found[owner]
            found[owner] = (Family(family.point, family.directions, family.moving, family.members + 1), start)
            continue
        directions = _flat_directions(equations, z, free, tol)
        moving = tuple(names[i] for i in range(len(names)) if directions.size and
                       float(np.max(np.abs(directions[:, i]))) > math.sqrt(NULL_RTOL))
        representative = _representative(equations, point, directions, tol) if directions.size else point
        found.append((Family(representative, directions, moving, 1), z))
    return tuple(family for family, _ in found)
