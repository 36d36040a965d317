"""The parts of a chain: :class:`Joint` and :class:`Link` descriptions and the sympy helpers that place them.

:class:`robodyn.model.chain.ChainSystem` builds its bodies from these; conventions are documented there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import sympy

from robodyn.errors import InputError
from robodyn.model.symbolic import ExprLike

__all__ = ["DEFAULT_FRICTION_SMOOTHING", "DEFAULT_GRAVITY", "INERTIA_KEYS", "JOINT_TYPES", "BodySpec", "Joint", "Link",
           "as_expr", "inertia_matrix", "rot_x", "rot_y", "rot_z"]

DEFAULT_GRAVITY: Final = (0.0, 0.0, -9.81)  # m/s^2, in the base frame.
DEFAULT_FRICTION_SMOOTHING: Final = 1e-3  # eps of tanh(q'/eps) in the smoothed Coulomb friction.
JOINT_TYPES: Final = ("revolute", "prismatic")
INERTIA_KEYS: Final = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")


@dataclass(frozen=True, slots=True)
class Joint:
    """A joint: its type, the links it connects, its placement and its friction/spring/motor terms.

    Numbers may be expressions (text for the safe parser, or sympy) in the model's parameters.
    ``dh`` (mapping with ``a, alpha, d, theta``) replaces ``xyz``/``rpy``/``axis``. ``force`` is the
    generalized force on the joint (in t, q, q', inputs); default: the input ``<name>_tau`` if present.
    ``mimic = {joint, multiplier, offset}`` couples the joint to another one (q = multiplier q_joint +
    offset, as URDF's ``<mimic>``): it is then no coordinate of its own, and its friction, spring, rotor
    and force terms are not used (the coupled coordinate's are).
    """

    name: str
    parent: str
    child: str
    type: str = "revolute"
    axis: Sequence[ExprLike] = (0, 0, 1)
    xyz: Sequence[ExprLike] = (0, 0, 0)
    rpy: Sequence[ExprLike] = (0, 0, 0)
    dh: Mapping[str, ExprLike] | None = None
    mdh: Mapping[str, ExprLike] | None = None
    damping: ExprLike = 0
    friction: ExprLike | Sequence[ExprLike] = 0
    stiffness: ExprLike = 0
    rest: ExprLike = 0
    rotor_inertia: ExprLike = 0
    gear_ratio: ExprLike = 1
    force: ExprLike | None = None
    mimic: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Link:
    """A rigid link: mass, centre of mass ``(3,)`` and inertia about it ``(3, 3)`` in the link frame.

    ``inertia`` may be a 3x3 nested list or a mapping with ``ixx iyy izz ixy ixz iyz`` (missing = 0).
    The base link (child of no joint) needs only its name.
    """

    name: str
    mass: ExprLike = 0
    com: Sequence[ExprLike] = (0, 0, 0)
    inertia: Any = field(default=None)


def as_expr(value: Any) -> Any:
    """A sympy expression for a value that is already one, or a number (never text: text goes through
    the safe parser in robodyn.model.expr)."""
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise TypeError(f"expected a sympy expression or a number, got {type(value).__name__}")
    return sympy.Integer(int(value)) if isinstance(value, int | np.integer) else sympy.Float(float(value))


@dataclass(frozen=True, slots=True)
class BodySpec:
    """One body as sympy expressions in the parameters (the fields of robodyn.rigid.rnea.Body)."""

    parent: int
    prismatic: bool
    axis: tuple[Any, ...]
    rotation: tuple[tuple[Any, ...], ...]
    position: tuple[Any, ...]
    mass: Any
    com: tuple[Any, ...]
    inertia: tuple[tuple[Any, ...], ...]


def rot_x(a: Any) -> sympy.Matrix:
    return sympy.Matrix([[1, 0, 0], [0, sympy.cos(a), -sympy.sin(a)], [0, sympy.sin(a), sympy.cos(a)]])


def rot_y(a: Any) -> sympy.Matrix:
    return sympy.Matrix([[sympy.cos(a), 0, sympy.sin(a)], [0, 1, 0], [-sympy.sin(a), 0, sympy.cos(a)]])


def rot_z(a: Any) -> sympy.Matrix:
    return sympy.Matrix([[sympy.cos(a), -sympy.sin(a), 0], [sympy.sin(a), sympy.cos(a), 0], [0, 0, 1]])


def inertia_matrix(value: Any) -> list[list[Any]]:
    if value is None:
        return [[0] * 3 for _ in range(3)]
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in INERTIA_KEYS]
        if unknown:
            raise InputError(f"unknown inertia entries {unknown}: use {', '.join(INERTIA_KEYS)}")
        g = {k: value.get(k, 0) for k in INERTIA_KEYS}
        return [[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]], [g["ixz"], g["iyz"], g["izz"]]]
    rows = value.tolist() if isinstance(value, np.ndarray | sympy.MatrixBase) else value
    if not isinstance(rows, list | tuple) or len(rows) != 3 or any(
            not isinstance(r, list | tuple) or len(r) != 3 for r in rows):
        raise InputError(f"inertia must be a 3x3 matrix or a mapping of {', '.join(INERTIA_KEYS)}, got {value!r}")
    return [list(r) for r in rows]
