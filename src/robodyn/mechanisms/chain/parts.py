"""The parts of a chain: :class:`Joint` and :class:`Link` descriptions and the sympy helpers that place them.

:class:`robodyn.mechanisms.chain.system.ChainSystem` builds its bodies from these; conventions are documented there.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import sympy

from robodyn.base.errors import InputError, RobodynWarning
from robodyn.model.kinds.symbolic import ExprLike
from robodyn.rigid.dynamics import Coulomb
from robodyn.rigid.joints import SPHERICAL
from robodyn.rigid.tape import Value

__all__ = ["DEFAULT_FRICTION_SMOOTHING", "DEFAULT_GRAVITY", "INERTIA_KEYS", "JOINT_TYPES", "MAX_MIMIC_MULTIPLIER",
           "MAX_MIMIC_OFFSET", "TRIANGLE_MARGIN", "BodySpec", "Joint", "Link", "WeldedPart", "ball_entries",
           "friction_force", "inertia_matrix", "inertia_problem", "judge_body", "judge_inertia", "mimic_problem",
           "rot_x", "rot_y", "rot_z", "turned"]

DEFAULT_GRAVITY: Final = (0.0, 0.0, -9.81)  # m/s^2, in the base frame.
DEFAULT_FRICTION_SMOOTHING: Final = 1e-3  # eps of tanh(q'/eps) in the smoothed Coulomb friction.
JOINT_TYPES: Final = ("revolute", "prismatic", "ball")
INERTIA_KEYS: Final = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
INERTIA_TOLERANCE: Final = 1e-9  # Relative to the trace: rounding in published inertias is far above 1e-15.
#: kg m^2: a moment within this of 0 is 0 (files exported from CAD write a point mass's zeros as -5.4e-20, which no
#: tolerance relative to its own trace accepts); far below any part of a machine: a 0.1 g bead of 1 mm radius has
#: 4e-11 kg m^2.
INERTIA_FLOOR: Final = 1e-15
#: I3 - (I1 + I2) up to this times the trace (I1 + I2 + I3) is kept with a warning: identified (measured) tables
#: break the triangle inequality by that much (Corke's Puma 560 link 3: 0.046); beyond it no measurement explains it.
TRIANGLE_MARGIN: Final = 0.1
MAX_MIMIC_MULTIPLIER: Final = 1e3  # |multiplier| of a mimic joint: gear couplings are a few units, never 1e3.
MAX_MIMIC_OFFSET: Final = 1e3  # |offset| of a mimic joint, rad or m.


@dataclass(frozen=True, slots=True)
class Joint:
    """A joint: its type, the links it connects, its placement and its friction/spring/motor terms.

    Numbers may be expressions (text for the safe parser, or sympy) in the model's parameters.
    ``dh`` (mapping with ``a, alpha, d, theta``) replaces ``xyz``/``rpy``/``axis``. ``force`` is the
    generalized force on the joint (in t, q, q', inputs); default: the input ``<name>_tau`` if present.
    ``mimic = {joint, multiplier, offset}`` couples the joint to another one (q = multiplier q_joint +
    offset, as URDF's ``<mimic>``): it is then no coordinate of its own, and its friction, spring, rotor
    and force terms are not used (the coupled coordinate's are). ``type: ball`` is a spherical joint about the
    joint frame's origin (``axis``, ``dh``, ``mdh``, ``mimic``, ``friction``, ``stiffness`` and ``force`` not
    taken): configuration ``<name>_qx, _qy, _qz, _qw`` (a unit quaternion), velocity ``<name>_wx, _wy, _wz`` (the
    child's angular velocity relative to the parent, in its own frame), torques the inputs ``<name>_tx, _ty, _tz``
    (child frame) if present; ``damping`` and ``rotor_inertia`` act on each of its three velocity entries.
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
    ball: bool = False  # a ball (spherical) joint: robodyn.rigid.joints.SPHERICAL, ``axis`` unused


def ball_entries(name: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """A ball joint's names: its configuration entries ``<name>_qx .. _qw``, velocity entries ``<name>_wx .. _wz``,
    torque inputs ``<name>_tx .. _tz`` and rates (its velocity entries' names again)."""
    velocities = tuple(f"{name}_{c}" for c in SPHERICAL.velocity_names)
    return (tuple(f"{name}_{c}" for c in SPHERICAL.configuration_names), velocities,
            tuple(f"{name}_t{axis}" for axis in "xyz"), velocities)


def rot_x(a: Any) -> sympy.Matrix:
    return sympy.Matrix([[1, 0, 0], [0, sympy.cos(a), -sympy.sin(a)], [0, sympy.sin(a), sympy.cos(a)]])


def rot_y(a: Any) -> sympy.Matrix:
    return sympy.Matrix([[sympy.cos(a), 0, sympy.sin(a)], [0, 1, 0], [-sympy.sin(a), 0, sympy.cos(a)]])


def rot_z(a: Any) -> sympy.Matrix:
    return sympy.Matrix([[sympy.cos(a), -sympy.sin(a), 0], [sympy.sin(a), sympy.cos(a), 0], [0, 0, 1]])


def turned(rotation: sympy.Matrix, value: sympy.Matrix) -> sympy.Matrix:
    """``rotation * value``, without the product when the rotation is the identity (exact, and it saves the
    symbolic products that dominate building a long chain: most joints have no standard-DH link rotation)."""
    return value if rotation.is_Identity else rotation * value


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


def inertia_problem(inertia: np.ndarray) -> tuple[str, str] | None:
    """Why a rotational inertia ``(3, 3)`` about the centre of mass is not physical, or None when it is.

    Returns ``(kind, reason)`` with kind ``"asymmetric"``, ``"negative"`` (a negative principal moment: no
    body, and the mass matrix may be indefinite), ``"triangle"`` or ``"slight triangle"``. A rigid body's
    inertia is symmetric with principal moments I1 <= I2 <= I3, all >= 0, that satisfy the triangle inequality
    I1 + I2 >= I3 (each moment is an integral of a sum of two squared coordinates). Semi-definite inertias are
    physical: a point mass (all zeros) and a thin rod (one moment zero, the other two equal). Both conditions
    are checked to :data:`INERTIA_TOLERANCE` times the trace (at least :data:`INERTIA_FLOOR`), above the rounding
    of published values. Identified
    (measured) parameters often break the triangle inequality a little: Armstrong's Puma 560 link 3, as Corke
    tabulates it, has principal moments 0.0125 + 0.066 < 0.086, I3 - (I1 + I2) = 0.046 of the trace; up to
    :data:`TRIANGLE_MARGIN` of the trace it is ``"slight triangle"``, beyond it ``"triangle"``. Reference:
    Traversaro, Brossette, Escande, Nori, "Identification of fully physical consistent inertial parameters using
    optimization on manifolds", IROS 2016, section III.
    """
    values = np.asarray(inertia, dtype=float)
    if not np.allclose(values, values.T, rtol=1e-12, atol=0.0):
        return "asymmetric", "is not symmetric"
    moments = np.linalg.eigvalsh(values)
    trace = max(float(np.trace(values)), 0.0)
    slack = max(INERTIA_TOLERANCE * trace, INERTIA_FLOOR)
    if moments[0] < -slack:
        return "negative", (f"has a negative principal moment {moments[0]:.6g} (principal moments {_listed(moments)}): "
                            "check the signs of ixx, iyy, izz and the size of the products ixy, ixz, iyz")
    excess = moments[2] - moments[0] - moments[1]
    if excess > slack:
        return ("slight triangle" if excess <= TRIANGLE_MARGIN * trace else "triangle"), (
            f"violates the triangle inequality: principal moments {_listed(moments)}, and {moments[0]:.6g} + "
            f"{moments[1]:.6g} < {moments[2]:.6g} (no rigid body has this inertia): check that it is about the centre "
            "of mass and in kg m^2")
    return None


def judge_inertia(inertia: np.ndarray, where: str, *, check: bool, opt_out: str, key: str | None = None,
                  error: type[InputError] = InputError, stacklevel: int = 2) -> None:
    """The one rule for a link inertia ``(3, 3)``, in chain files, Python chains and URDF robots on both backends
    (:func:`inertia_problem`): an asymmetric one is refused; with ``check``, a negative principal moment or the
    triangle inequality broken by more than :data:`TRIANGLE_MARGIN` of the trace is refused (``error`` with
    ``key``, the message ending with ``opt_out``: how to keep it), a slighter break kept with a RobodynWarning."""
    problem = inertia_problem(inertia)
    if problem is None or (not check and problem[0] != "asymmetric"):
        return
    kind, reason = problem
    message = f"{where}: inertia {np.asarray(inertia, dtype=float).tolist()} {reason}"
    if kind == "slight triangle":
        warnings.warn(f"{message}; kept as given (identified parameters often are, by up to {TRIANGLE_MARGIN:g} of "
                      "the trace)", RobodynWarning, stacklevel=stacklevel + 1)
        return
    raise error(message if kind == "asymmetric" else f"{message}; {opt_out}", key=key)


@dataclass(frozen=True, slots=True)
class WeldedPart:
    """One link of a rigid body as a file writes it: its name, the fixed joint that welds it to the body (None for
    the body's own link, the one a moving joint or the base moves), its mass and its inertia ``(3, 3)`` about its
    centre of mass, as given."""

    link: str
    joint: str | None
    mass: float
    inertia: np.ndarray


def judge_body(link: str, parts: Sequence[WeldedPart], combined: np.ndarray, where: str, *, check: bool,
               moving: bool, opt_out: str, error: type[InputError] = InputError, stacklevel: int = 2) -> None:
    """The inertia rule of :func:`judge_inertia` on the bodies that move, not on the links a file welds together.

    ``link`` moves with the links welded to it by fixed joints (``parts``: those with an ``<inertial>``, its own
    among them when it has one) as one rigid body whose inertia about its centre of mass is ``combined`` ``(3, 3)``
    (the parts moved to one point by the parallel-axis theorem). Only that body enters the dynamics, so:

    - a body of one part is judged as that link (:func:`judge_inertia`: refused, or kept with a warning);
    - a ``moving`` body of several parts is judged by ``combined``: refused (``error``, naming the body, its
      parts and those not physical on their own) or kept with a warning as one link; a part that is not
      physical on its own, in a physical body, is kept with a RobodynWarning naming it and its body;
    - a body that does not move (the root of a fixed base) takes no part in the dynamics: its parts' problems
      are warnings.

    A sum of physical inertias, each moved by the parallel-axis theorem, is physical (each is the inertia of a
    mass distribution, and so is their union): a body that is not has a part that is not. ``check`` False
    keeps every part as given; an asymmetric part is refused regardless.
    """
    parts = [part for part in parts if part.mass != 0 or np.any(part.inertia)]  # an empty part changes nothing
    if not check or (moving and len(parts) == 1):  # without the check, an asymmetric inertia is still refused
        for part in parts:
            judge_inertia(part.inertia, f"{where}: link {part.link!r}", check=check, opt_out=opt_out, error=error,
                          stacklevel=stacklevel + 1)
        return
    judged = [(part, inertia_problem(part.inertia)) for part in parts]
    for part, problem in judged:  # not a matter of physics: no inertia tensor is asymmetric
        if problem is not None and problem[0] == "asymmetric":
            raise error(f"{where}: link {part.link!r}: inertia {_rows(part.inertia)} {problem[1]}")
    names = ", ".join(repr(part.link) for part in parts if part.link != link)
    body = f"link {link!r} and the links welded to it by fixed joints ({names})"
    own = [(part, problem[1]) for part, problem in judged if problem is not None]
    whole = inertia_problem(combined) if moving else None
    if whole is not None:
        message = (f"{where}: {body} move as one body, whose inertia {_rows(combined)} about its centre of mass "
                   f"{whole[1]}; the links whose own inertia is not physical: "
                   f"{', '.join(repr(part.link) for part, _ in own) or 'none'}")
        if whole[0] != "slight triangle":
            raise error(f"{message}; {opt_out}")
        warnings.warn(f"{message}; kept as given (identified parameters often are, by up to {TRIANGLE_MARGIN:g} "
                      "of the trace)", RobodynWarning, stacklevel=stacklevel + 1)
        return
    if moving:
        moments = _listed(np.linalg.eigvalsh(np.asarray(combined, dtype=float)))
        kept = (f"kept: it moves only as part of the body of {body}, whose inertia is physical (principal moments "
                f"{moments})")
    else:
        kept = (f"kept: link {link!r} is the fixed base, which does not move, so its inertia and those of the links "
                "welded to it take no part in the dynamics")
    for part, reason in own:
        welded = "" if part.joint is None else f" (welded by fixed joint {part.joint!r} into the body of link {link!r})"
        warnings.warn(f"{where}: link {part.link!r}{welded}: inertia {_rows(part.inertia)} {reason}; {kept}",
                      RobodynWarning, stacklevel=stacklevel + 1)


def _rows(matrix: np.ndarray) -> str:
    return "[" + ", ".join(_listed(row) for row in np.asarray(matrix, dtype=float)) + "]"


def mimic_problem(multiplier: float, offset: float) -> str | None:
    """Why a mimic coupling q = multiplier q_joint + offset is not one (None when it is): the multiplier must be
    finite, nonzero and at most :data:`MAX_MIMIC_MULTIPLIER` in size, the offset finite and at most
    :data:`MAX_MIMIC_OFFSET` (a larger coupling is a typo, and overflows the mass matrix)."""
    if not (math.isfinite(multiplier) and 0 < abs(multiplier) <= MAX_MIMIC_MULTIPLIER):
        return (f"multiplier {multiplier:g} must be a number with 0 < |multiplier| <= {MAX_MIMIC_MULTIPLIER:g} "
                "(q = multiplier q_joint + offset; use a fixed joint for a joint that does not move)")
    if not (math.isfinite(offset) and abs(offset) <= MAX_MIMIC_OFFSET):
        return f"offset {offset:g} must be a number with |offset| <= {MAX_MIMIC_OFFSET:g} (rad or m)"
    return None


def _listed(values: np.ndarray) -> str:
    return "[" + ", ".join(f"{v:.6g}" for v in values) + "]"


def friction_force(minus: Value, plus: Value, smoothing: float) -> Coulomb:
    """v -> the smoothed Coulomb friction of a joint: Tc+ for v >> eps, Tc- for v << -eps, 0 at rest.

    F(v) = (Tc+ - Tc-)/2 s + (Tc+ + Tc-)/2 s^2 with s = tanh(v / eps); symmetric friction (Tc- = -F_c)
    is F_c tanh(v / eps). The result also gives its coefficients and s (robodyn.rigid.dynamics.Coulomb).
    """
    return Coulomb((plus - minus) * 0.5, (plus + minus) * 0.5, smoothing)
