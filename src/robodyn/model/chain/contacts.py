"""Contacts of a chain's frames with planes: the file's ``contacts:`` entries checked and put on the chain's tape.

.. code-block:: yaml

    contacts:
      - {frame: foot, plane: {point: [0, 0, 0], normal: [0, 0, 1]}, model: compliant,
         stiffness: 1e5, damping: 1e3, friction: 0.5}

``compliant`` is the smooth Hunt-Crossley normal force and regularized Coulomb friction of robodyn.rigid.contact;
``exponent`` (default 1.5, a number >= 1) and ``slip_velocity`` (eps, default :data:`DEFAULT_SLIP` m/s) tune it.
Each contact adds the outputs ``<name>_normal_force`` (N), ``<name>_friction_x``, ``_y``, ``_z`` (N, world axes)
and ``<name>_slip`` (m/s); ``name`` defaults to the frame.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from robodyn.errors import InputError, UnknownNameError
from robodyn.rigid.contact import ContactSpec

if TYPE_CHECKING:
    from robodyn.model.chain.system import ChainSystem

__all__ = ["DEFAULT_EXPONENT", "DEFAULT_SLIP", "MODELS", "Contact", "contact_specs"]

DEFAULT_EXPONENT: Final = 1.5  # Hertz's exponent of a sphere on a plane
DEFAULT_SLIP: Final = 1e-3  # m/s: friction's regularization eps; a held point creeps at ~eps F / (mu f_n)
MODELS: Final = ("compliant",)


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


def contact_specs(chain: ChainSystem, contacts: Sequence[Contact | Mapping[str, Any]], where: str
                  ) -> tuple[list[ContactSpec], list[str], dict[str, str]]:
    """The contacts on the chain's tape, their output names and units; InputError for an unknown frame or model, a
    negative friction or damping, a stiffness or eps that is not positive, a zero normal."""
    specs: list[ContactSpec] = []
    names: list[str] = []
    units: dict[str, str] = {}
    frames = chain.kinematics()
    for raw in contacts:
        entry = raw if isinstance(raw, Contact) else _contact(raw, where)
        label = entry.name or entry.frame
        here = f"{where}: contact {label!r}"
        if entry.model not in MODELS:
            raise InputError(f"{here}: model {entry.model!r} is not available: use {', '.join(MODELS)} (rigid impacts "
                             "with a restitution law are not built yet)", key="contacts")
        try:
            frame = frames.spec(entry.frame)
        except UnknownNameError as exc:
            raise UnknownNameError(f"{here}: {exc}") from None
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
        point = chain._vector(list(entry.point), f"contact {label!r}.plane.point", "contacts")
        normal = chain._vector(list(entry.normal), f"contact {label!r}.plane.normal", "contacts")
        size = math.sqrt(sum(chain._default(e) ** 2 for e in normal))
        if not size > 0 or not math.isfinite(size):
            raise InputError(f"{here}: the plane's normal {list(entry.normal)} has no direction", key="contacts")
        value = chain._tape_value
        length = sum((value(e) * value(e) for e in normal[1:]), value(normal[0]) * value(normal[0])).sqrt()
        at = (value(point[0]), value(point[1]), value(point[2]))
        unit = (value(normal[0]) / length, value(normal[1]) / length, value(normal[2]) / length)
        specs.append(ContactSpec(frame, at, unit,
                                 value(values["stiffness"]), value(values["damping"]),
                                 chain._tape_value(float(exponent)), value(values["friction"]),
                                 value(values["slip_velocity"])))
        group = [f"{label}_normal_force", f"{label}_friction_x", f"{label}_friction_y", f"{label}_friction_z",
                 f"{label}_slip"]
        if not label.isidentifier() or set(group) & set(names):
            raise InputError(f"{here}: needs a unique name (letters, digits, _)", key="contacts")
        names += group
        units.update({name: "N" for name in group[:4]} | {group[4]: "m/s"})
    return specs, names, units


def _contact(entry: Any, where: str) -> Contact:
    fields = set(Contact.__dataclass_fields__) - {"point", "normal"} | {"plane"}
    if not isinstance(entry, Mapping) or set(entry) - fields or not isinstance(entry.get("frame"), str):
        raise InputError(f"{where}: a contact is {{frame: <frame>, plane: {{point: [x, y, z], normal: [x, y, z]}}, "
                         f"model: compliant, stiffness, damping, friction}} (keys: {', '.join(sorted(fields))}), got "
                         f"{entry!r}", key="contacts")
    values = dict(entry)
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
