"""Helpers of the tests that use real robots and compare against Pinocchio: where example-robot-data keeps its
robots, Pinocchio's configuration vector, and the map from its joints (mimic tags ignored, as
``buildModelFromUrdf`` builds them) to robodyn's coordinates, read from the URDF file itself with ElementTree
(independent of robodyn's lowering)."""

from __future__ import annotations

import importlib.metadata
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np

from robodyn.mechanisms.urdf.file import coordinate_names

__all__ = ["ROBOTS", "chain_to_pinocchio", "configuration", "coupling", "robots_folder"]


def robots_folder() -> Path | None:
    """The ``robots`` folder of the installed example-robot-data package, or None without it."""
    try:
        folder = importlib.metadata.distribution("example-robot-data").locate_file(
            "cmeel.prefix/share/example-robot-data/robots")
    except importlib.metadata.PackageNotFoundError:
        return None
    return Path(str(folder))


ROBOTS = robots_folder()


def configuration(reference: Any, angles: np.ndarray) -> np.ndarray:
    """Pinocchio's configuration vector for joint angles: (cos, sin) for a continuous joint (nq = 2)."""
    values: list[float] = []
    for joint, angle in zip(list(reference.joints)[1:], angles):
        values += [np.cos(angle), np.sin(angle)] if joint.nq == 2 else [angle]
    return np.array(values)


def coupling(path: Path, reference: Any, coordinates: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """G (n_full, n) and o (n_full,) with q_full = G q + o: Pinocchio's joints in terms of robodyn's coordinates,
    from the file's <mimic joint multiplier offset> tags."""
    names = list(reference.names)[1:]
    renamed = coordinate_names(names)
    mimic = {}
    for joint in ET.parse(path).getroot().iter("joint"):
        tag = joint.find("mimic")
        if tag is not None:
            mimic[joint.get("name")] = (tag.get("joint"), float(tag.get("multiplier", 1)), float(tag.get("offset", 0)))
    G, offset = np.zeros((len(names), len(coordinates))), np.zeros(len(names))
    for k, name in enumerate(names):
        target, multiplier, shift = mimic.get(name, (name, 1.0, 0.0))
        G[k, coordinates.index(renamed[target])] = multiplier
        offset[k] = shift
    return G, offset


def chain_to_pinocchio(model: Any) -> tuple[Any, np.ndarray, np.ndarray]:
    """The chain as a pinocchio.Model (bodies depth first, each subtree after its root: Pinocchio's algorithms need
    every subtree's joints in one run), its joint damping (n,) and the coordinate permutation (pinocchio index ->
    model coordinate)."""
    import pinocchio as pin
    import sympy

    values = dict(zip(model.p_symbols, map(sympy.Float, model.parameter_vector())))

    def number(expr: object) -> float:
        return float(sympy.sympify(expr).xreplace(values))

    pinocchio_model = pin.Model()
    pinocchio_model.gravity.linear = np.array([number(g) for g in model.gravity_expr])
    below: dict[int, list[int]] = {}
    for index, body in enumerate(model.bodies):
        below.setdefault(body.parent, []).append(index)
    depth_first: list[int] = []
    stack = list(reversed(below.get(-1, [])))
    while stack:
        index = stack.pop()
        depth_first.append(index)
        stack += reversed(below.get(index, []))
    ids: dict[int, int] = {}
    for position in depth_first:
        body = model.bodies[position]
        rotation = np.array([[number(e) for e in row] for row in body.rotation])
        placement = pin.SE3(rotation, np.array([number(e) for e in body.position]))
        axis = np.array([number(e) for e in body.axis])
        joint = pin.JointModelPrismaticUnaligned(axis) if body.prismatic else pin.JointModelRevoluteUnaligned(axis)
        parent = 0 if body.parent < 0 else ids[body.parent]
        index = pinocchio_model.addJoint(parent, joint, placement, f"j{position}")
        inertia = np.array([[number(e) for e in row] for row in body.inertia])
        pinocchio_model.appendBodyToJoint(index, pin.Inertia(number(body.mass), np.array(
            [number(e) for e in body.com]), inertia), pin.SE3.Identity())
        ids[position] = index
    order = np.array([model.order_[position] for position in depth_first])
    terms = model._joint_terms
    pinocchio_model.armature = np.array([number(terms[i]["gear_ratio"] ** 2 * terms[i]["rotor_inertia"])
                                         for i in order])
    damping = np.array([number(terms[i]["damping"]) for i in order])
    return pinocchio_model, damping, order
