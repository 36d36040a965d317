"""An MJCF robot as an editable ``kind: chain`` file (``robodyn convert robot.xml --to chain.yaml``).

The file holds what :func:`robodyn.mechanisms.mjcf.robot.load_mjcf` builds: the chain joints (a body's several joints
as massless links between them), the links with the mass properties MuJoCo's compiler gives them, the joints' damping,
stiffness and rest, armature (``rotor_inertia``) and friction, the actuators as inputs with each joint's force, the
gravity, the welded bodies and sites as frames, and ``base: floating`` for a free body. Actuators with activation
dynamics are refused (a chain file has no states besides the joints'). Numbers are written so that
they read back exactly (``repr``), so the chain file has the same dynamics.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from robodyn.base.errors import ModelFileError
from robodyn.mechanisms.mjcf.robot import mjcf_parts

__all__ = ["mjcf_chain_yaml"]


def _number(value: Any) -> str:
    text = repr(float(value))
    return "0" if text in ("0.0", "-0.0") else text


def _vector(values: Any) -> str:
    """Numbers as YAML, an exact angle's text (``pi/2``) as the expression it is."""
    return "[" + ", ".join(v if isinstance(v, str) else _number(v) for v in values) + "]"


def _text(name: str) -> str:  # a YAML (JSON) string: names may hold ':' or ',' that plain YAML misreads
    return json.dumps(name)


def mjcf_chain_yaml(path: str | os.PathLike[str], *, dynamics: bool = True) -> str:
    """A ``kind: chain`` model file equivalent to the MJCF robot at ``path`` (see the module docstring)."""
    parts = mjcf_parts(path, dynamics=dynamics)
    if parts.activations:
        raise ModelFileError(f"{path}: the actuators {', '.join(a.control for a in parts.activations)} have "
                             "activation dynamics (states of their own), which a chain file has no form for: load the "
                             "MJCF file itself, or make them actuators without dynamics to convert it")
    lines = [f"# {Path(path).name} as a chain file, written by robodyn (robodyn convert) from MuJoCo's MJCF.",
             f"name: {_text(parts.name)}", "kind: chain", f"description: {_text(parts.name + ' from its MJCF')}",
             f"gravity: {_vector(parts.gravity)}", *(["base: floating"] if parts.tree.free is not None else []),
             f"inputs: [{', '.join(_text(i) for i in parts.inputs)}]", "joints:" if parts.joints else "joints: []"]
    for joint in parts.joints:
        fields = [f"name: {_text(joint.name)}", f"type: {joint.type}", f"parent: {_text(joint.parent)}",
                  f"child: {_text(joint.child)}", f"axis: {_vector(joint.axis)}", f"xyz: {_vector(joint.xyz)}",
                  f"rpy: {_vector(joint.rpy)}"]
        fields += [f"{key}: {_number(getattr(joint, key))}" for key in ("damping", "friction", "stiffness", "rest",
                                                                       "rotor_inertia") if getattr(joint, key) != 0]
        if joint.force is not None:  # a ball joint has none: its torques are inputs of its own, or zero
            fields.append(f"force: {_text(str(joint.force))}")
        lines.append("  - {" + ", ".join(fields) + "}")
    if parts.tree.frames:
        lines.append("frames:  # bodies welded to a moving one, and sites, placed in its frame")
        lines += [f"  {_text(name)}: {{parent: {_text(frame['parent'])}, xyz: {_vector(frame['xyz'])}, "
                  f"rpy: {_vector(frame['rpy'])}}}" for name, frame in parts.tree.frames.items()]
    lines.append("links:")
    for link in parts.links:
        i = link.inertia
        lines.append(f"  - {{name: {_text(link.name)}, mass: {_number(link.mass)}, com: {_vector(link.com)},")
        lines.append(f"     inertia: {{ixx: {_number(i[0][0])}, iyy: {_number(i[1][1])}, izz: {_number(i[2][2])}, "
                     f"ixy: {_number(i[0][1])}, ixz: {_number(i[0][2])}, iyz: {_number(i[1][2])}}}}}")
    return "\n".join(lines) + "\n"
