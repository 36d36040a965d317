"""Reading URDF files: the XML, the joint table and its limits, shared by both URDF backends.

robodyn reads a URDF with :mod:`xml.etree.ElementTree`, after refusing a document that declares a DTD or
entities (so nothing is expanded and no other file is read); meshes and ``package://`` references are
never opened. :mod:`robodyn.mechanisms.urdf.chain` lowers the robot to robodyn's own rigid-body tape (the
default), :mod:`robodyn.mechanisms.urdf.pinocchio` hands it to Pinocchio (``backend="pinocchio"``); both describe the
joints with :class:`UrdfJoint` and offer the same :class:`UrdfRobotInfo` helpers (joint table, limit events).

Reference: the URDF specification, wiki.ros.org/urdf/XML.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from robodyn.base.errors import InputError, ModelFileError
from robodyn.base.textfile import read_text_limited
from robodyn.model.expr import RESERVED_NAMES, is_valid_name

__all__ = ["MASSLESS_FIX", "MAX_URDF_BYTES", "UNSUPPORTED_JOINTS", "URDF_OPT_OUT", "JointLimits", "UrdfJoint",
           "UrdfRobotInfo", "coordinate_names", "joint_limits", "parse_robot", "read_robot", "robot_joints",
           "robot_links"]

MAX_URDF_BYTES: Final = 10_000_000  # URDF files are larger than model files (many links), never this large.
#: How to keep a link inertia that no rigid body has (robodyn.mechanisms.chain.parts.judge_inertia), both backends.
URDF_OPT_OUT: Final = "or load the robot with check_inertia=False to keep the values as they are"
MASSLESS_FIX: Final = "an <inertial> with a mass and an inertia"  # What a link that moves no mass needs.
UNSUPPORTED_JOINTS: Final = {
    "floating": "a floating joint is supported only between the root link and the robot (the world and its base): "
                "make it the joint of the root link's one child, or load the robot with base='floating'",
    "planar": "a planar joint is supported only between the root link and the robot (the world and a mobile base): "
              "make it the joint of the root link's one child, or load the robot with base='planar'",
}


@dataclass(frozen=True, slots=True)
class JointLimits:
    """Limits of one joint from its ``<limit>`` element; ``None`` where the URDF gives none.

    Positions in rad (revolute) or m (prismatic), velocities per second, effort in N m or N.
    """

    lower: float | None
    upper: float | None
    velocity: float | None
    effort: float | None

    def __post_init__(self) -> None:
        if self.lower is not None and self.upper is not None and self.lower > self.upper:
            raise InputError(f"joint limits: lower {self.lower} is above upper {self.upper}")


NO_LIMITS: Final = JointLimits(None, None, None, None)


@dataclass(frozen=True, slots=True)
class UrdfJoint:
    """One ``<joint>`` of the file, movable or fixed. ``axis`` : (3,) in the joint frame."""

    name: str
    type: str
    parent: str
    child: str
    axis: tuple[float, float, float]
    limits: JointLimits


def coordinate_names(joints: list[str]) -> dict[str, str]:
    """robodyn names for URDF joint names: each character outside ``[A-Za-z0-9_]`` becomes ``_``, a name
    that starts with a digit gets a ``j_`` prefix, a keyword or a built-in name (``sin``, ``pi``, ``t``) a
    trailing ``_``, and a name taken by an earlier joint ``_2``, ``_3``, ... (``joint_0.0`` -> ``joint_0_0``).
    Names that are valid already are kept."""
    result: dict[str, str] = {}
    taken: set[str] = set()
    for name in joints:
        label = re.sub(r"[^A-Za-z0-9_]", "_", name) or "joint"
        if label[0].isdigit():
            label = "j_" + label
        if not is_valid_name(label) or label in RESERVED_NAMES:
            label += "_"
        unique, count = label, 1
        while unique in taken:
            count += 1
            unique = f"{label}_{count}"
        taken.add(unique)
        result[name] = unique
    return result


def read_robot(path: Path) -> tuple[str, ET.Element]:
    """The text of a URDF file (read within :data:`MAX_URDF_BYTES` from a regular file) and its ``<robot>``
    element (the text locates repeated names: :func:`robot_joints`)."""
    text = read_text_limited(path, "URDF file", limit=MAX_URDF_BYTES, error=ModelFileError)
    return text, parse_robot(text, str(path))


def parse_robot(text: str, where: str) -> ET.Element:
    """The ``<robot>`` element of URDF text; a DTD or entity declaration is refused before parsing (nothing
    is expanded), malformed XML names its line and column."""
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise ModelFileError(f"{where}: declares a DTD or entities: robodyn does not expand them; remove the "
                             "<!DOCTYPE ...> block")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        line, column = exc.position
        raise ModelFileError(f"{where}:{line}:{column}: malformed XML: {exc}") from None
    if root.tag != "robot":
        raise ModelFileError(f"{where}: the root element is <{root.tag}>, expected <robot>: not a URDF file")
    return root


def robot_links(root: ET.Element, where: str, text: str | None = None) -> dict[str, ET.Element]:
    """The ``<link>`` elements of a robot by name (ModelFileError for a nameless or repeated link, naming the
    lines of the repeats when the file's ``text`` is given)."""
    return _named_elements(root, "link", where, text)


def robot_joints(root: ET.Element, where: str, text: str | None = None) -> list[ET.Element]:
    """The ``<joint>`` elements of a robot, in file order; two joints of one name are refused with that name as
    the file writes it (and the lines, when the file's ``text`` is given): coordinates are named after joints."""
    _named_elements(root, "joint", where, text, required=False)
    return root.findall("joint")


def _named_elements(root: ET.Element, tag: str, where: str, text: str | None, required: bool = True
                    ) -> dict[str, ET.Element]:
    found: dict[str, ET.Element] = {}
    for element in root.findall(tag):
        name = element.get("name")
        if not name:
            if not required:
                continue  # a nameless joint is refused with the joint's other requirements
            raise ModelFileError(f"{where}: a <{tag}> has no name")
        if name in found:
            lines = _lines(text, tag, name)
            at = f" (lines {', '.join(map(str, lines))})" if len(lines) > 1 else ""
            raise ModelFileError(f"{where}: {tag} {name!r} is defined twice{at}: give each <{tag}> its own name")
        found[name] = element
    return found


def _lines(text: str | None, tag: str, name: str) -> list[int]:
    """The lines of ``text`` where a ``<tag name="name"`` element starts (for messages only)."""
    if text is None:
        return []
    pattern = re.compile(rf"""<{tag}\b[^>]*?\bname\s*=\s*(["']){re.escape(name)}\1""")
    return [text.count("\n", 0, match.start()) + 1 for match in pattern.finditer(text)]


def _number(element: ET.Element, key: str, where: str) -> float | None:
    text = element.get(key)
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ModelFileError(f"{where}: <limit {key}=...> must be a finite number, got {text!r}")
    return value


def joint_limits(joint: ET.Element, where: str) -> JointLimits:
    """The ``<limit lower upper velocity effort>`` of a joint (all None without one; a continuous joint's
    position bounds are ignored, as the URDF specification says)."""
    element = joint.find("limit")
    if element is None:
        return NO_LIMITS
    lower, upper, velocity, effort = (_number(element, key, where) for key in ("lower", "upper", "velocity", "effort"))
    if joint.get("type") == "continuous":
        lower = upper = None
    try:
        return JointLimits(lower, upper, velocity, effort)
    except InputError as exc:
        raise ModelFileError(f"{where}: {exc}: swap them") from None


class UrdfRobotInfo:
    """What a URDF robot model knows about its file besides the dynamics: the joint table and the limits.

    A mixin for both backends; the model provides ``joint_records`` (every joint of the file, fixed ones
    included, in file order), ``limits`` (movable joint name -> :class:`JointLimits`) and ``coordinates``.
    """

    joint_records: tuple[UrdfJoint, ...]
    limits: Mapping[str, JointLimits]
    coordinates: tuple[str, ...]

    def position_limits(self) -> dict[str, tuple[float | None, float | None]]:
        """(lower, upper) by coordinate, for the joints whose ``<limit>`` bounds the position."""
        return {c: (lim.lower, lim.upper) for c, lim in self.limits.items()
                if c in self.coordinates and (lim.lower is not None or lim.upper is not None)}

    def limit_events(self, *, terminal: bool = True) -> list[Any]:
        """Events at the joints' position limits, for :func:`robodyn.simulate` (``events=...``).

        One event per finite bound, named ``<joint>_upper`` (rising through the upper limit) and
        ``<joint>_lower`` (falling through the lower one); ``terminal`` stops the simulation there.
        """
        from robodyn.model.events import Event

        events = []
        for index, name in enumerate(self.coordinates):
            limits = self.limits.get(name, NO_LIMITS)
            for bound, direction, label in ((limits.upper, 1, "upper"), (limits.lower, -1, "lower")):
                if bound is not None:
                    def crossing(t: float, x: Any, u: Any, p: Any, i: int = index, b: float = bound) -> float:
                        return float(x[i] - b)
                    events.append(Event(crossing, direction=direction, terminal=terminal, name=f"{name}_{label}"))
        return events

    def joint_table(self) -> list[str]:
        """The joints as aligned text lines: name, type, axis, parent -> child, limits."""
        def number(value: float | None) -> str:
            return "-" if value is None else f"{value:g}"

        header = ("joint", "type", "axis", "parent -> child", "position", "velocity", "effort")
        rows = [header]
        for joint in self.joint_records:
            lim = joint.limits
            axis = "-" if joint.type == "fixed" else " ".join(f"{a:g}" for a in joint.axis)
            position = "-" if lim.lower is None and lim.upper is None else f"[{number(lim.lower)}, {number(lim.upper)}]"
            rows.append((joint.name, joint.type, axis, f"{joint.parent} -> {joint.child}", position,
                         number(lim.velocity), number(lim.effort)))
        widths = [max(len(row[k]) for row in rows) for k in range(len(header))]
        return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
