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

from robodyn.model.chain.urdf_file import coordinate_names

__all__ = ["ROBOTS", "configuration", "coupling", "robots_folder"]


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
