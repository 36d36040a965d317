"""Contacts of a chain's frames with planes: the file's ``contacts:`` entries checked and put on the chain's tape.

.. code-block:: yaml

    contacts:
      - {frame: foot, plane: {point: [0, 0, 0], normal: [0, 0, 1]}, model: compliant,
         stiffness: 1e5, damping: 1e3, friction: 0.5}

      - {frame: ball_bottom, plane: {point: [0, 0, 0], normal: [0, 0, 1]}, model: impact, restitution: 0.8}

``compliant`` is the smooth Hunt-Crossley normal force and regularized Coulomb friction of robodyn.rigid.contact;
``exponent`` (default 1.5, a number >= 1) and ``slip_velocity`` (eps, default :data:`DEFAULT_SLIP` m/s) tune it.
Each compliant contact adds the outputs ``<name>_normal_force`` (N), ``<name>_friction_x``, ``_y``, ``_z`` (N, world
axes) and ``<name>_slip`` (m/s); ``name`` defaults to the frame.

``impact`` is rigid and frictionless: the point never enters the plane; at touchdown its normal velocity jumps to
-e times itself (``restitution`` e from 0 to 1, Newton's law) by the impact map, and once its bounces last less than
``rest_time`` (default :data:`DEFAULT_REST_TIME` s) it rests, held on the plane until the plane would have to
pull (robodyn.mechanisms.contact.impacts). Each impact contact adds the output ``<name>_gap`` (m).

Every contact's gap (m, positive off the plane) is a name event expressions may use: ``<name>_gap``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError, UnknownNameError
from robodyn.model.expr import as_expr
from robodyn.model.protocol import ContactPoint
from robodyn.rigid.contact import ContactSpec
from robodyn.rigid.kinematics import FrameSpec
from robodyn.rigid.tape import Value

if TYPE_CHECKING:
    from robodyn.mechanisms.chain.system import ChainSystem

__all__ = ["DEFAULT_EXPONENT", "DEFAULT_REST_TIME", "DEFAULT_SLIP", "MODELS", "Contact", "ContactSet", "ImpactSpec",
           "check_laws", "contact_events", "contact_points", "contact_specs", "gap_names", "law_values"]

DEFAULT_EXPONENT: Final = 1.5  # Hertz's exponent of a sphere on a plane
DEFAULT_SLIP: Final = 1e-3  # m/s: friction's regularization eps; a held point creeps at ~eps F / (mu f_n)
#: s: an impact contact whose bounce (impact to impact) lasts less than this rests on the plane. A bounce of 1 ms
#: under 9.81 m/s^2 rises 1.2 um; a geometric sequence of bounces (restitution e) then ends within
#: rest_time e / (1 - e) of the time it is detected, which the rest replaces.
DEFAULT_REST_TIME: Final = 1e-3
MODELS: Final = ("compliant", "impact")
_COMPLIANT_ONLY: Final = ("stiffness", "damping", "friction", "exponent", "slip_velocity")


@dataclass(frozen=True)
class Contact:
    """Frame ``frame``'s origin against the plane through ``point`` with ``normal`` (world frame; numbers or
    parameter expressions), with the force law's parameters (robodyn.rigid.contact)."""

    frame: str
    point: Sequence[Any] = (0, 0, 0)
    normal: Sequence[Any] = (0, 0, 1)
    stiffness: Any = 1e5
    damping: Any = 0.0
    friction: Any = 0.0
    exponent: float = DEFAULT_EXPONENT
    slip_velocity: Any = DEFAULT_SLIP
    model: str = "compliant"
    name: str | None = None
    restitution: Any = None
    rest_time: float = DEFAULT_REST_TIME


@dataclass(frozen=True, slots=True)
class ImpactSpec:
    """A rigid contact (``model: impact``): frame ``frame``'s origin against the plane through ``point`` with unit
    ``normal`` (tape values), restitution e (a tape value) and the rest threshold ``rest_time`` (s)."""

    name: str
    frame: FrameSpec
    point: tuple[Value, Value, Value]
    normal: tuple[Value, Value, Value]
    restitution: Value
    rest_time: float


@dataclass(frozen=True, slots=True)
class ContactSet:
    """A chain's contacts: the compliant ones on the tape (``specs``) with their output names and units, the rigid
    ones (``impacts``), and every contact's name in file order (``names``: their gaps are ``<name>_gap``)."""

    specs: list[ContactSpec]
    outputs: list[str]
    units: dict[str, str]
    impacts: list[ImpactSpec]
    names: list[str]
    frames: list[FrameSpec]
    planes: list[tuple[tuple[Value, Value, Value], tuple[Value, Value, Value]]]
    models: list[str]
    shown: list[tuple[str, str, tuple[Any, Any, Any]]] = field(default_factory=list)  # the compliant contacts'
    #   names, frames and planes' normals (expressions in the parameters: the 3-D view draws their forces)


def contact_specs(chain: ChainSystem, contacts: Sequence[Contact | Mapping[str, Any]], where: str,
                  value: Callable[[Any], Value] | None = None) -> ContactSet:
    """The contacts on the chain's tape (or on the tape whose values ``value`` gives the chain's expressions: a
    moving base's), their output names and units; InputError for an unknown frame or model, a negative friction or
    damping, a stiffness or eps that is not positive, a zero normal, a restitution outside [0, 1]."""
    value = value or chain._tape_value
    specs: list[ContactSpec] = []
    impacts: list[ImpactSpec] = []
    names: list[str] = []
    units: dict[str, str] = {}
    labels: list[str] = []
    frame_specs: list[FrameSpec] = []
    shown: list[tuple[str, str, tuple[Any, Any, Any]]] = []
    planes: list[Any] = []
    kinds: list[str] = []
    frames = chain.kinematics()
    for raw in contacts:
        entry = raw if isinstance(raw, Contact) else _contact(raw, where)
        label = entry.name or entry.frame
        here = f"{where}: contact {label!r}"
        if entry.model not in MODELS:
            raise InputError(f"{here}: model {entry.model!r} is not available: use {' or '.join(MODELS)}",
                             key="contacts")
        if not isinstance(label, str) or not label.isidentifier() or label in labels:
            raise InputError(f"{here}: needs a unique name (letters, digits, _)", key="contacts")
        labels.append(label)
        try:
            frame = frames.spec_on(entry.frame, value)
        except UnknownNameError as exc:
            raise UnknownNameError(f"{here}: {exc}") from None
        at, unit = _plane(chain, entry, label, here, value)
        frame_specs.append(frame)
        planes.append((at, unit))
        kinds.append(entry.model)
        if entry.model == "impact":
            impacts.append(_impact(chain, entry, label, here, frame, at, unit, value))
            names.append(f"{label}_gap")
            units[f"{label}_gap"] = "m"
            continue
        values = {key: chain._param_expr(getattr(entry, key), f"contact {label!r}.{key}", "contacts")
                  for key in ("stiffness", "damping", "friction", "slip_velocity")}
        for key, low, strict in (("stiffness", 0.0, True), ("damping", 0.0, False), ("friction", 0.0, False),
                                 ("slip_velocity", 0.0, True)):
            number = chain._default(values[key])
            if not math.isfinite(number) or number < low or (strict and number == low):
                bound = "positive" if strict else "0 or more"
                raise InputError(f"{here}: {key} must be {bound}, got {number:g}", key="contacts")
        exponent = entry.exponent
        if isinstance(exponent, bool) or not isinstance(exponent, int | float) or not 1 <= exponent <= 4:
            raise InputError(f"{here}: exponent must be a number from 1 to 4 (1.5: Hertz), got {exponent!r}",
                             key="contacts")
        normal = chain._vector(list(entry.normal), "normal", "contacts")
        shown.append((label, str(entry.frame), (normal[0], normal[1], normal[2])))
        specs.append(ContactSpec(frame, at, unit,
                                 value(values["stiffness"]), value(values["damping"]),
                                 value(float(exponent)), value(values["friction"]),
                                 value(values["slip_velocity"])))
        group = [f"{label}_normal_force", f"{label}_friction_x", f"{label}_friction_y", f"{label}_friction_z",
                 f"{label}_slip"]
        if set(group) & set(names):
            raise InputError(f"{here}: needs a unique name (letters, digits, _)", key="contacts")
        names += group
        units.update({name: "N" for name in group[:4]} | {group[4]: "m/s"})
    return ContactSet(specs, names, units, impacts, labels, frame_specs, planes, kinds, shown)


def contact_points(contacts: ContactSet, values: Mapping[Any, float]) -> tuple[ContactPoint, ...]:
    """The compliant contacts as the 3-D view draws them: names, frames and their planes' unit normals at the
    parameters ``values`` ({parameter symbol: number}: the model's own, so that a model with other parameters shows
    its own planes); a plane's normal was checked non-zero when the contact was read."""
    shown = []
    for name, frame, normal in contacts.shown:
        n = np.array([float(as_expr(e).xreplace(values)) for e in normal])
        size = float(np.linalg.norm(n))
        if not (math.isfinite(size) and size > 0.0):
            raise InputError(f"contact {name!r}: its plane's normal is {n.tolist()} at these parameters: give "
                             "parameters for which it is a non-zero vector", key="contacts")
        n /= size
        shown.append(ContactPoint(name, frame, (float(n[0]), float(n[1]), float(n[2]))))
    return tuple(shown)


def law_values(contacts: ContactSet) -> list[Value]:
    """The laws' parameters on the tape: per compliant contact k, d, mu, eps; then per impact contact e."""
    return [*(v for c in contacts.specs for v in (c.stiffness, c.damping, c.friction, c.slip)),
            *(i.restitution for i in contacts.impacts)]


def check_laws(contacts: ContactSet, values: Sequence[float] | np.ndarray, where: str) -> None:
    """InputError when the laws' parameters ``values`` (:func:`law_values` at some parameters) are not physical: a
    stiffness or slip speed that is not positive, a negative damping or friction, a restitution outside [0, 1]."""
    compliant = [n for n, kind in zip(contacts.names, contacts.models) if kind == "compliant"]
    for k, name in enumerate(compliant):
        for j, (key, strict) in enumerate((("stiffness", True), ("damping", False), ("friction", False),
                                            ("slip_velocity", True))):
            value = float(values[4 * k + j])
            if not math.isfinite(value) or value < 0 or (strict and value == 0):
                bound = "positive" if strict else "0 or more"
                raise InputError(f"{where}: contact {name!r}: {key} must be {bound}, got {value:g}: check the "
                                 "parameters it is written in", key="params")
    for impact, value in zip(contacts.impacts, values[4 * len(compliant):]):
        if not 0.0 <= value <= 1.0:
            raise InputError(f"{where}: contact {impact.name!r}: restitution must be from 0 to 1, got {value:g}: "
                             "check the parameters it is written in", key="params")


def gap_names(contacts: ContactSet) -> list[str]:
    """``<name>_gap`` of every contact, in file order: names for event expressions."""
    return [f"{label}_gap" for label in contacts.names]


def contact_events(contacts: ContactSet, terminal: bool = False) -> list[Any]:
    """Touchdown (the gap falling through 0) and lift-off (rising through 0) of every compliant contact as
    robodyn.Event: ``<name>_touchdown``, ``<name>_liftoff``."""
    from robodyn.model.events import Event

    names = [n for n, kind in zip(contacts.names, contacts.models) if kind == "compliant"]
    return [Event(f"{n}_gap", direction, terminal, f"{n}_{what}")
            for n in names for direction, what in ((-1, "touchdown"), (1, "liftoff"))]


def _plane(chain: ChainSystem, entry: Contact, label: str, here: str, value: Callable[[Any], Value]
           ) -> tuple[Any, Any]:
    """The plane's point and unit normal as tape values (InputError for a normal without direction)."""
    point = chain._vector(list(entry.point), f"contact {label!r}.plane.point", "contacts")
    normal = chain._vector(list(entry.normal), f"contact {label!r}.plane.normal", "contacts")
    size = math.sqrt(sum(chain._default(e) ** 2 for e in normal))
    if not size > 0 or not math.isfinite(size):
        raise InputError(f"{here}: the plane's normal {list(entry.normal)} has no direction", key="contacts")
    length = sum((value(e) * value(e) for e in normal[1:]), value(normal[0]) * value(normal[0])).sqrt()
    return ((value(point[0]), value(point[1]), value(point[2])),
            (value(normal[0]) / length, value(normal[1]) / length, value(normal[2]) / length))


def _impact(chain: ChainSystem, entry: Contact, label: str, here: str, frame: FrameSpec, at: Any, unit: Any,
            value: Callable[[Any], Value]) -> ImpactSpec:
    """An ``impact`` contact checked: restitution from 0 to 1, a positive rest_time, no friction."""
    if entry.restitution is None:
        raise InputError(f"{here}: an impact contact needs restitution (0: plastic, 1: elastic)", key="contacts")
    restitution = chain._param_expr(entry.restitution, f"contact {label!r}.restitution", "contacts")
    number = chain._default(restitution)
    if not 0.0 <= number <= 1.0:
        raise InputError(f"{here}: restitution must be from 0 to 1, got {number:g}", key="contacts")
    if chain._default(chain._param_expr(entry.friction, f"contact {label!r}.friction", "contacts")) != 0.0:
        raise InputError(f"{here}: impact contacts are frictionless: drop friction, or use model: compliant for a "
                         "contact with friction", key="contacts")
    rest = entry.rest_time
    if isinstance(rest, bool) or not isinstance(rest, int | float) or not 0 < rest < math.inf:
        raise InputError(f"{here}: rest_time must be a positive time in s, got {rest!r}", key="contacts")
    return ImpactSpec(label, frame, at, unit, value(restitution), float(rest))


def _contact(entry: Any, where: str) -> Contact:
    fields = set(Contact.__dataclass_fields__) - {"point", "normal"} | {"plane"}
    if not isinstance(entry, Mapping) or set(entry) - fields or not isinstance(entry.get("frame"), str):
        raise InputError(f"{where}: a contact is {{frame: <frame>, plane: {{point: [x, y, z], normal: [x, y, z]}}, "
                         "model: compliant, stiffness, damping, friction} or {..., model: impact, restitution: e} "
                         f"(keys: {', '.join(sorted(fields))}), got {entry!r}", key="contacts")
    values = dict(entry)
    if values.get("model") == "impact" and set(values) & set(_COMPLIANT_ONLY) - {"friction"}:
        raise InputError(f"{where}: contact {entry['frame']!r}: an impact contact is rigid: it takes restitution and "
                         f"rest_time, not {', '.join(sorted(set(values) & set(_COMPLIANT_ONLY)))}", key="contacts")
    plane = values.pop("plane", {}) or {}
    if not isinstance(plane, Mapping) or set(plane) - {"point", "normal"}:
        raise InputError(f"{where}: contact {entry['frame']!r}: plane is {{point: [x, y, z], normal: [x, y, z]}}, got "
                         f"{plane!r}", key="contacts")
    for key in ("point", "normal"):
        if key in plane:
            if not isinstance(plane[key], list | tuple) or len(plane[key]) != 3:
                raise InputError(f"{where}: contact {entry['frame']!r}: plane.{key} must be 3 numbers, got "
                                 f"{plane[key]!r}", key="contacts")
            values[key] = tuple(plane[key])
    return Contact(**values)
