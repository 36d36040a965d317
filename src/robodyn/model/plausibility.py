"""Physical plausibility of a second-order model: its mass matrix, checked one way for every kind.

M(q) must be symmetric positive definite: the kinetic energy 1/2 q'^T M(q) q' of every motion is positive.
A model whose M is not, with its default parameters, is bad input (a kinetic energy with the wrong sign, a
link without mass, a negative inertia): :func:`check_mass` refuses it when the model is built, for every
kind — ``mechanical`` and ``lagrangian`` files (M lambdified from its expressions), chains and URDF robots
on the tape (M by the numpy composite-rigid-body pass of :mod:`robodyn.rigid.crba`, nothing compiled) and
URDF robots on Pinocchio (its CRBA) — and again for ``with_parameters``. Never a closed form.

M is evaluated at a **generic configuration** (:func:`generic_configuration`), not at q = 0: the zero pose is
often special (polar coordinates at r = 0, a robot stretched out with two axes aligned), where M may be
singular for reasons that are not the user's error. When M fails there, q = 0 is tried as well, so a model
whose M is valid only near its rest pose is not refused either; a model refused is singular or indefinite at
both. "Singular" is relative: the lowest eigenvalue at most :data:`SINGULAR` times the largest (rounding makes
exactly singular matrices ~1e-17 relative; real robots reach condition numbers of ~1e8).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final

import numpy as np

from robodyn.base.errors import InputError

__all__ = ["SINGULAR", "check_mass", "generic_configuration", "mass_advice", "mass_problem"]

SINGULAR: Final = 1e-12  # min eig(M) <= this * max |eig(M)|: M is singular (or indefinite).
_LISTED: Final = 3  # Mass matrices up to this size are printed in the message.
_NAMED: Final = 5  # Coordinates (or links) named at most in a message.

MassFunction = Callable[[np.ndarray], np.ndarray]
Bounds = Sequence[float] | np.ndarray | None  # per coordinate; NaN or infinite where there is no limit


def generic_configuration(n: int, lower: Bounds = None, upper: Bounds = None) -> np.ndarray:
    """A fixed, non-special q ``(n,)``: q_k = 0.3 + 0.41 k wrapped into [-pi, pi) (no zeros, no aligned axes, no
    right angles); where both limits are finite (a URDF ``<limit>``), the point at fraction (0.37 + 0.11 k) mod 1
    of the way from lower to upper instead."""
    index = np.arange(n)
    q = np.mod(0.3 + 0.41 * index + math.pi, 2 * math.pi) - math.pi
    if lower is not None and upper is not None:
        low, high = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        with np.errstate(all="ignore"):
            inside = np.isfinite(high - low) & (high > low)
        fraction = (0.37 + 0.11 * index) % 1.0
        q[inside] = (low + (high - low) * fraction)[inside]
    return q


def mass_problem(mass: np.ndarray, coordinates: Sequence[str]) -> str | None:
    """Why ``mass`` ``(n, n)`` is not a mass matrix (not finite, not symmetric, not positive definite: the
    lowest eigenvalue and the coordinates its eigenvector moves most), or None when it is one."""
    mass = np.asarray(mass, dtype=float)
    if not np.isfinite(mass).all():
        rows = sorted({int(i) for i in np.argwhere(~np.isfinite(mass))[:, 0]})
        return f"is not finite (in the rows of {_names([coordinates[i] for i in rows])})"
    if not np.allclose(mass, mass.T, rtol=1e-12, atol=0.0):
        return "is not symmetric"
    values = np.linalg.eigvalsh(mass)  # values only: several times cheaper than the vectors at n = 200
    top = float(np.abs(values).max(initial=0.0))
    if top > 0 and values[0] > SINGULAR * top:
        return None
    values, vectors = np.linalg.eigh(mass)
    weights = np.abs(vectors[:, 0])
    order = [int(i) for i in np.argsort(-weights, kind="stable") if weights[i] >= 0.3 * weights.max()]
    lowest = 0.0 if values[0] >= -SINGULAR * top else values[0]
    moved = _names([coordinates[i] for i in order])
    return f"is not positive definite (lowest eigenvalue {lowest:.3g}, for a motion of {moved})"


def check_mass(mass_at: MassFunction, coordinates: Sequence[str], *, where: str, fix: str | Callable[[], str],
               key: str | None = None, constant: bool = False, lower: Bounds = None, upper: Bounds = None) -> None:
    """InputError (with ``key``) unless ``mass_at(q)`` ``(n, n)`` is symmetric positive definite at the generic
    configuration or at q = 0 (see the module docstring); ``constant``: M does not depend on q (evaluated once).

    The message is ``"<where>: the mass matrix [at q = ...] <problem>: <fix>"``; ``fix`` (text, or a function
    giving it, called only on failure) says what to change.
    """
    n = len(coordinates)
    q = generic_configuration(n, lower, upper)
    with np.errstate(all="ignore"):
        mass = np.asarray(mass_at(q), dtype=float)
        problem = mass_problem(mass, coordinates)
        if problem is None or (not constant and mass_problem(np.asarray(mass_at(np.zeros(n)), dtype=float),
                                                             coordinates) is None):
            return
    listed = f" {mass.tolist()}" if n <= _LISTED else ""
    at = "" if constant else f" at q = {_configuration(coordinates, q)} (and at q = 0)"
    raise InputError(f"{where}: the mass matrix{listed}{at} {problem}: {fix if isinstance(fix, str) else fix()}",
                     key=key)


def mass_advice(links: Sequence[tuple[str, str]], give: str = "a mass and an inertia") -> str:
    """What to change when a tree's M is singular: ``"link 'l2' (moved by joint 'j2') has no mass, so the mass
    matrix is singular: give link 'l2' <give>"`` for the (link, joint) pairs whose joint moves nothing with a
    mass or an inertia (robodyn.rigid.crba.empty_subtrees); without any, the masses and inertias in general."""
    if not links:
        return ("check the masses and inertias of the links these joints move (a point mass on its joint's axis, or "
                "a thin rod turning about its own axis, has no inertia about it)")
    named = [f"link {link!r} (moved by joint {joint!r})" for link, joint in links[:_NAMED]]
    more = f" and {len(links) - _NAMED} more" if len(links) > _NAMED else ""
    if len(links) == 1:
        return f"{named[0]} has no mass, so the mass matrix is singular: give link {links[0][0]!r} {give}"
    return (f"each of {', '.join(named)}{more} has no mass, so the mass matrix is singular: give each of these "
            f"links {give}")


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_NAMED])
    return shown + (f" and {len(names) - _NAMED} more" if len(names) > _NAMED else "")


def _configuration(coordinates: Sequence[str], q: np.ndarray) -> str:
    pairs = [f"{c}: {v:.4g}" for c, v in zip(coordinates[:_NAMED + 1], q.tolist())]
    return "{" + ", ".join(pairs) + (", ..." if len(coordinates) > _NAMED + 1 else "") + "}"
