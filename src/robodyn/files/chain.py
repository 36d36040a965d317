"""``kind: chain`` model files: the reader that turns a file's joints and links into a ChainSystem."""

from __future__ import annotations

from typing import Any

from robodyn.mechanisms.chain.parts import (
    DEFAULT_FRICTION_SMOOTHING,
    DEFAULT_GRAVITY,
    INERTIA_KEYS,
    Joint,
    Link,
    ball_entries,
)
from robodyn.mechanisms.chain.system import ChainSystem
from robodyn.mechanisms.floating.chain import BASES, FloatingChain
from robodyn.mechanisms.loops.constrained import DEFAULT_BAUMGARTE, ConstrainedChain, Constraint, Loop
from robodyn.model.kinds.mechanical import velocity_name

__all__ = ["chain_from_reader"]


def chain_from_reader(r: Any, name: str, params: dict[str, float], inputs: list[str]
                      ) -> ChainSystem | FloatingChain | ConstrainedChain:
    """Build a ``kind: chain`` model from a model-file reader (robodyn.files.reader.DocumentReader); ``base: floating``
    or ``planar`` joins its root link to the world by a moving joint (robodyn.mechanisms.floating.chain)."""
    joints_data = r.get("joints", list) or []
    links_data = r.get("links", list)
    base = r.data.get("base", "fixed")
    if base not in BASES:
        raise r.fail(("base",), f"must be one of {', '.join(BASES)}, got {base!r}")
    if not joints_data and base == "fixed":
        raise r.fail(("joints",), "needs at least one joint (or 'base: floating' for a free body)")
    for key, entries in (("joints", joints_data), ("links", links_data)):
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise r.fail((key, i), "each entry must be a mapping with a 'name'")
    movable = [j for j in joints_data if "mimic" not in j]
    names = [ball_entries(j["name"]) if j.get("type") == "ball" else
             ((j["name"],), (velocity_name(j["name"]),), (f"{j['name']}_tau",)) for j in movable]
    coordinates = [c for entry in names for c in entry[0]]
    velocities = [v for entry in names for v in entry[1]]
    if "inputs" not in r.data:
        inputs = [t for entry in names for t in entry[2]]
    outputs = r.get("outputs", dict) or {}
    generated = "velocities (generated <joint>_dot)"
    r.check_names({"coordinates": coordinates, generated: velocities,
                   "inputs": inputs, "parameters": list(params), "outputs": list(outputs)},
                  {"coordinates": "joints", generated: "joints"})
    p = list(params)
    everything = [*coordinates, *velocities, *inputs, *p]

    def number(path: tuple[Any, ...], value: Any, allowed: list[str] = p) -> Any:
        if isinstance(value, list | tuple):
            return [number((*path, i), v, allowed) for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {k: number((*path, k), v, allowed) for k, v in value.items()}
        return r.expression(path, value, allowed, allow_time=allowed is everything)

    joint_fields = {"name", "type", "parent", "child", "axis", "xyz", "rpy", "dh", "mdh", "damping", "friction",
                    "stiffness", "rest", "rotor_inertia", "gear_ratio", "armature", "force", "mimic"}
    joints = []
    for i, entry in enumerate(joints_data):
        for key in entry:
            if key not in joint_fields:
                raise r.fail(("joints", i, key),
                             f"unknown key {key!r} for a joint (allowed: {', '.join(sorted(joint_fields))})")
        for key in ("parent", "child"):
            if not isinstance(entry.get(key), str):
                raise r.fail(("joints", i), f"joint {entry['name']!r} needs '{key}: <link name>'")
        if "armature" in entry and ("rotor_inertia" in entry or "gear_ratio" in entry):
            raise r.fail(("joints", i, "armature"), "give armature (the reflected inertia N^2 Jm itself) or "
                                                    "rotor_inertia with gear_ratio, not both")
        values = {k: v if k in ("name", "type", "parent", "child", "mimic") else
                  number(("joints", i, k), v, everything if k == "force" else p) for k, v in entry.items()}
        if "armature" in values:  # a motor's rotor seen through its gear (a DC motor block's N^2 Jm): added inertia
            values["rotor_inertia"] = values.pop("armature")
        if "mimic" in values:
            values["mimic"] = _mimic(r, ("joints", i, "mimic"), values["mimic"], number)
        joints.append(Joint(**values))
    link_fields = {"name", "mass", "com", "inertia", *INERTIA_KEYS}
    links = []
    for i, entry in enumerate(links_data or []):
        for key in entry:
            if key not in link_fields:
                raise r.fail(("links", i, key),
                             f"unknown key {key!r} for a link (allowed: {', '.join(sorted(link_fields))})")
        values = {k: v if k == "name" else number(("links", i, k), v) for k, v in entry.items()}
        direct = {k: values.pop(k) for k in INERTIA_KEYS if k in values}
        if direct:
            if "inertia" in values:
                raise r.fail(("links", i), "give either 'inertia' or ixx, iyy, ... , not both")
            values["inertia"] = direct
        links.append(Link(**values))
    gravity = number(("gravity",), r.data.get("gravity", list(DEFAULT_GRAVITY)))
    smoothing = r.data.get("friction_smoothing", DEFAULT_FRICTION_SMOOTHING)
    if isinstance(smoothing, bool) or not isinstance(smoothing, int | float):
        raise r.fail(("friction_smoothing",), f"must be a positive number, got {smoothing!r}")
    check_inertia = r.data.get("check_inertia", True)
    if not isinstance(check_inertia, bool):
        raise r.fail(("check_inertia",), f"must be true or false, got {check_inertia!r}")
    outs: dict[str, Any] = {}
    for key, value in outputs.items():  # expressions, or {frame, quantity} (robodyn.mechanisms.chain.outputs)
        if not isinstance(value, dict):
            outs[key] = r.expression(("outputs", key), value, everything)
        elif set(value) == {"frame", "quantity"} and all(isinstance(v, str) for v in value.values()):
            outs[key] = value
        else:
            raise r.fail(("outputs", key), "a kinematic output is {frame: <frame>, quantity: position, orientation, "
                                           "velocity or angular_velocity}")
    frames = {}
    for frame, entry in (r.get("frames", dict) or {}).items():
        if not isinstance(entry, dict):
            raise r.fail(("frames", frame), "must be {parent: <link>, xyz: [x, y, z], rpy: [roll, pitch, yaw]}")
        frames[frame] = {k: v if k == "parent" else number(("frames", frame, k), v) for k, v in entry.items()}
    chain = ChainSystem(joints, links, gravity=gravity, parameters=params, inputs=inputs, outputs=outs or None,
                        friction_smoothing=float(smoothing), name=name, frames=frames, check_inertia=check_inertia,
                        free_root=base != "fixed")
    closed = [key for key in ("loops", "constraints", "baumgarte", "independent") if key in r.data]
    if closed and base != "fixed":
        raise r.fail((closed[0],), f"loops and constraints need a fixed base (this chain's is {base!r}): not built "
                     "for moving bases yet (contacts are)")
    if closed or ("contacts" in r.data and base == "fixed"):
        return _constrained(r, chain)
    return chain if base == "fixed" else FloatingChain(chain, base, contacts=_contacts(r, chain))


def _constrained(r: Any, chain: ChainSystem) -> ConstrainedChain:
    """``loops``, ``constraints``, ``baumgarte``, ``independent`` and ``contacts``
    (robodyn.mechanisms.loops.constrained,
    robodyn.mechanisms.contact.contacts)."""
    loops, constraints = [], []
    for i, entry in enumerate(r.get("loops", list) or []):
        if not isinstance(entry, dict) or set(entry) - {"name", "frames", "type", "axes"} or "frames" not in entry:
            raise r.fail(("loops", i), "a loop is {name: <name>, frames: [<frame>, <frame>], type: point | pose, "
                                       "axes: [x, z]}")
        if not isinstance(entry["frames"], list) or not all(isinstance(f, str) for f in entry["frames"]):
            raise r.fail(("loops", i, "frames"), "must be a list of two frame names")
        loops.append(Loop(str(entry.get("name", f"loop{i}")), tuple(entry["frames"]), str(entry.get("type", "point")),
                          _axis_list(r, ("loops", i, "axes"), entry.get("axes"))))
    for i, entry in enumerate(r.get("constraints", list) or []):
        if (isinstance(entry, dict) and set(entry) <= {"name", "joint", "position"}
                and isinstance(entry.get("joint"), str) and "position" in entry):  # a driven coordinate
            name = entry.get("name")
            constraints.append(Constraint(None, r.expression(("constraints", i, "position"), entry["position"],
                                                             list(chain.parameters), allow_time=True),
                                          name=None if name is None else str(name), joint=entry["joint"]))
            continue
        if (not isinstance(entry, dict) or set(entry) - {"name", "frame", "type", "axes", "position"}
                or not isinstance(entry.get("frame"), str)):
            raise r.fail(("constraints", i), "a constraint is {frame: <frame>, type: point, axes: [z], position: "
                                             "[x, y, z]} (expressions of t), or {joint: <joint>, position: <expression "
                                             "of t>}")
        position = entry.get("position")
        if not isinstance(position, list) or len(position) != 3:
            raise r.fail(("constraints", i, "position"), "must be [x, y, z]: three expressions of t and the "
                                                         "parameters, world frame")
        values = [r.expression(("constraints", i, "position", k), v, list(chain.parameters), allow_time=True)
                  for k, v in enumerate(position)]
        name = entry.get("name")
        constraints.append(Constraint(entry["frame"], tuple(values), _axis_list(r, ("constraints", i, "axes"),
                                                                                 entry.get("axes")),
                                      None if name is None else str(name), str(entry.get("type", "point"))))
    alpha = r.data.get("baumgarte", DEFAULT_BAUMGARTE)
    if isinstance(alpha, bool) or not isinstance(alpha, int | float):
        raise r.fail(("baumgarte",), f"must be a rate in 1/s (a positive number), got {alpha!r}")
    independent = r.data.get("independent")
    if independent is not None and (not isinstance(independent, list)
                                    or not all(isinstance(c, str) for c in independent)):
        raise r.fail(("independent",), "must be a list of coordinates (joint names)")
    return ConstrainedChain(chain, loops, constraints, baumgarte=float(alpha), independent=independent,
                            contacts=_contacts(r, chain))


def _contacts(r: Any, chain: ChainSystem) -> list[dict[str, Any]]:
    """The file's ``contacts:`` entries with their expressions parsed (robodyn.mechanisms.contact.contacts checks
    them)."""
    contacts: list[dict[str, Any]] = []
    for i, entry in enumerate(r.get("contacts", list) or []):
        if not isinstance(entry, dict):
            raise r.fail(("contacts", i), "a contact is {frame: <frame>, plane: {point: [x, y, z], normal: [x, y, z]}, "
                                          "model: compliant, stiffness: k, damping: d, friction: mu}")
        fields = {k: v if k in ("frame", "model", "name", "exponent", "rest_time") or isinstance(v, dict) else
                  r.expression(("contacts", i, k), v, list(chain.parameters), allow_time=False)
                  for k, v in entry.items()}
        if isinstance(entry.get("plane"), dict):
            fields["plane"] = {k: [r.expression(("contacts", i, "plane", k, j), e, list(chain.parameters),
                                                allow_time=False) for j, e in enumerate(v)]
                               if isinstance(v, list) else v for k, v in entry["plane"].items()}
        contacts.append(fields)
    return contacts


def _axis_list(r: Any, path: tuple[Any, ...], value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        raise r.fail(path, "must be a list of axes: x, y, z (and rx, ry, rz for a pose loop)")
    return tuple(value)


def _mimic(r: Any, path: tuple[Any, ...], value: Any, number: Any) -> dict[str, Any]:
    """``mimic: {joint: <name>, multiplier: m, offset: o}`` with m and o parameter expressions."""
    if not isinstance(value, dict) or not isinstance(value.get("joint"), str) or set(value) - {
            "joint", "multiplier", "offset"}:
        raise r.fail(path, "must be {joint: <the joint it follows>, multiplier: m, offset: o}")
    return {"joint": value["joint"], **{k: number((*path, k), v) for k, v in value.items() if k != "joint"}}
