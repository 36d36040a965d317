"""The scene a page draws, as JSON: shapes and meshes by link, and every link's pose at each displayed instant.

Poses come from robodyn's own forward kinematics (robodyn.kinematics.frames: one compiled batch call per link
for all instants). A trajectory is shown at the display's rate: its configurations are interpolated linearly at
:data:`DISPLAY_RATE` instants a second (a 10 s run sampled at 1 kHz becomes 601 instants), so the page plays it at
real time whatever its sampling. Arrays travel compressed: meshes as uint16 positions quantized over their bounding
box (a 0.3 m link to 5 micrometres) and uint16 or uint32 triangle indices, poses as float32, each zlib-compressed
and base64-encoded (the page inflates them with the browser's DecompressionStream).
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError, ShapeError, UnknownNameError
from robodyn.kinematics.frames import Kinematics
from robodyn.viewer.centre import centre_of_mass
from robodyn.viewer.geometry import RobotGeometry
from robodyn.viewer.meshes import Mesh

if TYPE_CHECKING:
    from robodyn.model.protocol import BaseMasses, ContactPoint

__all__ = ["BASES", "DISPLAY_RATE", "MAX_INSTANTS", "SceneData", "base_poses", "display_times", "pack", "plotted",
           "scene_data"]

DISPLAY_RATE: Final = 60.0  # instants per second of a trajectory shown (a display's refresh rate)
MAX_INSTANTS: Final = 36_000  # ten minutes at the display rate: longer runs are shown at a lower rate
_LEVEL: Final = 6  # zlib's default trade of size for speed


def pack(array: np.ndarray) -> dict[str, Any]:
    """A numeric array as JSON: dtype, shape and its little-endian bytes, zlib-compressed then base64."""
    data = np.ascontiguousarray(array)
    dtype = data.dtype.newbyteorder("<")
    raw = data.astype(dtype, copy=False).tobytes()
    return {"dtype": dtype.str[1:], "shape": list(data.shape),
            "data": base64.b64encode(zlib.compress(raw, _LEVEL)).decode("ascii")}


def _mesh_json(mesh: Mesh) -> list[dict[str, Any]]:
    parts = []
    for part in mesh.parts:
        low = part.vertices.min(axis=0)
        span = np.maximum(part.vertices.max(axis=0) - low, 1e-12)
        quantized = np.rint((part.vertices - low) / span * 65535.0).astype(np.uint16)
        faces = part.faces.astype(np.uint16 if len(part.vertices) <= 65536 else np.uint32)
        parts.append({"positions": pack(quantized), "low": low.astype(float).tolist(),
                      "span": span.astype(float).tolist(), "indices": pack(faces),
                      "rgba": None if part.rgba is None else list(part.rgba)})
    return parts


def display_times(t: np.ndarray, rate: float = DISPLAY_RATE) -> np.ndarray:
    """The instants shown of a run over ``t`` (T,): every 1/rate s from t[0] to t[-1] (both included), at most
    :data:`MAX_INSTANTS`."""
    span = float(t[-1] - t[0])
    count = min(int(np.floor(span * rate + 1e-9)) + 1, MAX_INSTANTS)
    times = t[0] + np.arange(count) / rate if count < MAX_INSTANTS else np.linspace(t[0], t[-1], count)
    return times if times[-1] == t[-1] or span == 0 else np.append(times, t[-1])


def _interpolated(t: np.ndarray, q: np.ndarray, times: np.ndarray) -> np.ndarray:
    """q (T, n) at ``times`` by linear interpolation (each coordinate)."""
    return np.column_stack([np.interp(times, t, q[:, j]) for j in range(q.shape[1])]) if q.shape[1] else \
        np.zeros((len(times), 0))


@dataclass(frozen=True, slots=True)
class SceneData:
    """What a page draws: ``times`` (K,), ``poses`` (K, L, 12) of ``links`` (rotation row-major, then position;
    world frame), the shapes by link, the meshes, the tool frame, a target point and the centre of mass (K, 3)."""

    title: str
    links: tuple[str, ...]
    times: np.ndarray
    poses: np.ndarray
    geometry: RobotGeometry
    tool: str
    target: tuple[float, float, float] | None
    com: np.ndarray | None = None  # (K, 3): the centre of mass at each instant, when the model offers it
    series: tuple[tuple[str, tuple[str, ...], np.ndarray], ...] = ()  # (group, names, (K, s)) plotted under a run
    labels: tuple[str, ...] = ()  # what each instant is called (operating points), instead of its time
    contacts: tuple[str, ...] = ()  # the contacts' names
    contact_points: np.ndarray | None = None  # (K, C, 3): each contact frame's origin, world frame
    contact_forces: np.ndarray | None = None  # (K, C, 3): the force on the robot at each (N, world), from the run

    def as_json(self) -> dict[str, Any]:
        """The scene as JSON-ready data (arrays packed: :func:`pack`)."""
        index = {link: k for k, link in enumerate(self.links)}
        meshes: dict[str, int] = {}
        mesh_list: list[list[dict[str, Any]]] = []
        shapes = []
        for visual in self.geometry.visuals:
            if visual.link not in index:
                continue
            mesh = None
            if visual.mesh is not None:
                key = str(visual.mesh.file)
                if key not in meshes:
                    meshes[key] = len(mesh_list)
                    mesh_list.append(_mesh_json(visual.mesh))
                mesh = meshes[key]
            shapes.append({"link": index[visual.link], "origin": visual.origin.ravel().tolist(), "shape": visual.shape,
                           "size": list(visual.size), "rgba": None if visual.rgba is None else list(visual.rgba),
                           "mesh": mesh})
        return {"title": self.title, "links": list(self.links), "times": self.times.tolist(),
                "poses": pack(self.poses.astype(np.float32)), "shapes": shapes, "meshes": mesh_list,
                "missing": [index[link] for link in self.geometry.missing if link in index],
                "tool": index.get(self.tool), "target": None if self.target is None else list(self.target),
                "com": None if self.com is None else pack(self.com.astype(np.float32)),
                "series": [{"group": group, "names": list(names), "values": pack(values.astype(np.float32))}
                           for group, names, values in self.series],
                "labels": list(self.labels) if self.labels else None,
                "contacts": None if self.contact_points is None else {
                    "names": list(self.contacts), "points": pack(self.contact_points.astype(np.float32)),
                    "forces": None if self.contact_forces is None else pack(self.contact_forces.astype(np.float32))}}


def _configurations(kin: Kinematics, trajectory: Any, at: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(times (K,), q (K, n)) to show: the trajectory's at the display rate, else the configuration ``at`` (n,),
    or the configurations ``at`` (K, n) at the instants 0, 1, ..., K - 1."""
    n = len(kin.coordinates)
    if trajectory is None:
        q = np.zeros((1, n)) if at is None else np.asarray(at, dtype=float).reshape(-1, n)
        return np.arange(float(len(q))), q
    t = np.asarray(trajectory.t, dtype=float)
    x = np.asarray(trajectory.x, dtype=float)
    states = tuple(trajectory.states)
    missing = [c for c in kin.coordinates if c not in states]
    if missing:
        raise InputError(f"the trajectory has no states {missing}: it is not a run of this model (its states are "
                         f"{', '.join(states)})", key="trajectory")
    if t.ndim != 1 or len(t) == 0 or x.shape[0] != len(t) or not np.all(np.diff(t) >= 0):
        raise ShapeError(f"the trajectory needs increasing times t (T,) and states x (T, n), got {t.shape} and "
                         f"{x.shape}")
    q = x[:, [states.index(c) for c in kin.coordinates]]
    if not np.all(np.isfinite(q)):
        raise InputError("the trajectory's configurations have non-finite values: show the part before the failure",
                         key="trajectory")
    times = display_times(t)
    return times, _interpolated(t, q, times)


def scene_data(kin: Kinematics, geometry: RobotGeometry, *, title: str, trajectory: Any = None,
               at: np.ndarray | None = None, target: Sequence[float] | None = None,
               labels: Sequence[str] = (), plot: Sequence[str] | None = None, base: Sequence[str] = (),
               base_at: np.ndarray | None = None, contacts: Sequence[ContactPoint] = (),
               masses: BaseMasses | None = None) -> SceneData:
    """The scene of a model with frames ``kin`` drawn with ``geometry``: its poses along ``trajectory`` (a run:
    ``t``, ``x``, ``states``) or at the configuration ``at`` (n,) (zeros when neither is given), or at the
    configurations ``at`` (K, n) called ``labels`` (K strings: the page's slider steps through them). Under a
    run are plotted its coordinates and inputs, or with ``plot`` the signals named there (:func:`plotted`).

    A moving base (``base``: the names of the states that place the root link, :data:`BASES`) moves every link:
    ``kin`` is then the robot's fixed-base twin, and each pose is the base's pose (from the run's base states, or
    ``base_at`` with ``at``; the identity when neither) composed with the twin's. Its centre of mass is the twin's
    (which leaves out the welded root link) joined with the root link's by ``masses`` (the model's, shown only when
    given), then placed by the base's pose.
    ``contacts`` (the model's, robodyn.model.protocol.ContactPoint) are drawn at their frames' origins, with the
    force the run's outputs give (``<name>_normal_force`` along the plane's normal plus the friction's x, y, z)."""
    times, q = _configurations(kin, trajectory, at)
    if labels and len(labels) != len(times):
        raise ShapeError(f"labels: one per configuration shown ({len(times)}), got {len(labels)}")
    drawn = set(geometry.links) | set(geometry.missing) | {kin.default_frame}
    links = tuple(frame for frame in kin.frames if frame in drawn)
    poses = np.empty((len(times), len(links), 12))
    for k, link in enumerate(links):
        pose = kin.pose(q, link)
        poses[:, k, :9] = np.asarray(pose.rotation).reshape(len(times), 9)
        poses[:, k, 9:] = np.asarray(pose.position).reshape(len(times), 3)
    point = None
    if target is not None:
        values = np.asarray(target, dtype=float).ravel()
        if values.shape != (3,) or not np.all(np.isfinite(values)):
            raise InputError(f"target: give a point (x, y, z) of finite numbers in m, got {target!r}", key="target")
        point = (float(values[0]), float(values[1]), float(values[2]))
    com = centre_of_mass(kin.model, kin.coordinates, q)
    if base and com is not None:  # the twin's leaves out its welded root link: weigh it in (in the root's frame)
        com = None if masses is None else _with_root(com, masses)
    points = np.stack([np.asarray(kin.position(q, c.frame)).reshape(len(times), 3) for c in contacts], axis=1) \
        if contacts else None
    if base:
        placed = base_poses(_base_values(trajectory, base, base_at, times), base)
        rotation, position = placed[:, None, :3, :3], placed[:, None, :3, 3]
        turned = rotation @ poses[:, :, :9].reshape(len(times), len(links), 3, 3)
        poses[:, :, :9] = turned.reshape(len(times), len(links), 9)
        poses[:, :, 9:] = (rotation @ poses[:, :, 9:, None])[..., 0] + position
        if points is not None:
            points = (rotation @ points[..., None])[..., 0] + position
        if com is not None:
            com = (placed[:, :3, :3] @ com[..., None])[..., 0] + placed[:, :3, 3]
    forces = None if trajectory is None or not contacts else _contact_forces(trajectory, contacts, times)
    if plot is not None and trajectory is None:
        raise InputError("plot: the signals plotted are a run's: give a trajectory, or drop plot", key="plot")
    series = () if trajectory is None else _series(kin, trajectory, times, q) if plot is None else \
        plotted(trajectory, plot, times)
    return SceneData(title, links, times, poses, geometry, kin.default_frame, point, com, series,
                     tuple(str(label) for label in labels), tuple(c.name for c in contacts), points, forces)


def _with_root(rest: np.ndarray, masses: BaseMasses) -> np.ndarray | None:
    """The whole robot's centre of mass (K, 3) in its root link's frame: the twin's ``rest`` (K, 3) (every link but
    the root) and the root link's, weighted by their masses (Featherstone, Rigid Body Dynamics Algorithms, 2008,
    sec. 2.13: the centre of mass of a union of bodies); None for a robot without mass."""
    total = masses.root + masses.rest
    if not total > 0.0:
        return None
    return (masses.rest * rest + masses.root * np.asarray(masses.centre, dtype=float)) / total


def _contact_forces(trajectory: Any, contacts: Sequence[ContactPoint], times: np.ndarray) -> np.ndarray | None:
    """The contacts' forces (K, C, 3) on the robot at ``times`` from the run's outputs, or None when it lacks them
    (a run read from a file of states only)."""
    outputs = tuple(getattr(trajectory, "outputs", ()))
    names = [f"{c.name}_{part}" for c in contacts for part in ("normal_force", "friction_x", "friction_y",
                                                                "friction_z")]
    if not set(names) <= set(outputs):
        return None
    y = np.asarray(trajectory.y, dtype=float)[:, [outputs.index(name) for name in names]]
    if not np.all(np.isfinite(y)):
        return None
    values = _interpolated(np.asarray(trajectory.t, dtype=float), y, times).reshape(len(times), len(contacts), 4)
    normals = np.array([c.normal for c in contacts])  # (C, 3)
    return values[:, :, :1] * normals + values[:, :, 1:]


def _series(kin: Kinematics, trajectory: Any, times: np.ndarray, q: np.ndarray
            ) -> tuple[tuple[str, tuple[str, ...], np.ndarray], ...]:
    """What is plotted under a run: its coordinates, and its inputs when it carries some (at the shown instants)."""
    groups: list[tuple[str, tuple[str, ...], np.ndarray]] = [("coordinates", tuple(kin.coordinates), q)]
    u = np.asarray(getattr(trajectory, "u", np.zeros((0, 0))), dtype=float)
    inputs = tuple(getattr(trajectory, "inputs", ()))
    t = np.asarray(trajectory.t, dtype=float)
    if inputs and u.shape == (len(t), len(inputs)) and np.all(np.isfinite(u)):
        groups.append(("inputs", inputs, _interpolated(t, u, times)))
    return tuple(groups)


#: Where a plotted name is looked for in a run, in order: (the group's name, the run's names, its values).
_SIGNALS: Final = (("states", "states", "x"), ("outputs", "outputs", "y"), ("inputs", "inputs", "u"))


def plotted(trajectory: Any, names: Sequence[str], times: np.ndarray
            ) -> tuple[tuple[str, tuple[str, ...], np.ndarray], ...]:
    """The signals ``names`` of the run (each a state, else an output, else an input of it) at the shown
    ``times``, one panel per kind in that order (units differ between kinds); UnknownNameError for a name the
    run does not have, naming those it has."""
    if isinstance(names, str) or not names or not all(isinstance(name, str) for name in names):
        raise InputError(f"plot: give a list of the run's signal names, got {names!r:.60}", key="plot")
    t = np.asarray(trajectory.t, dtype=float)
    found: dict[str, list[str]] = {group: [] for group, _, _ in _SIGNALS}
    for name in dict.fromkeys(names):
        group = next((g for g, field, _ in _SIGNALS if name in tuple(getattr(trajectory, field, ()))), None)
        if group is None:
            known = [n for _, field, _ in _SIGNALS for n in getattr(trajectory, field, ())]
            raise UnknownNameError(f"plot: the run has no signal {name!r}: name its outputs, states or inputs "
                                   f"({', '.join(dict.fromkeys(known))})")
        found[group].append(name)
    groups = []
    for group, field, values in _SIGNALS:
        if found[group]:
            every = tuple(getattr(trajectory, field))
            data = np.asarray(getattr(trajectory, values), dtype=float)[:, [every.index(n) for n in found[group]]]
            if not np.all(np.isfinite(data)):
                raise InputError(f"plot: the run's {', '.join(found[group])} have non-finite values", key="plot")
            groups.append((group, tuple(found[group]), _interpolated(t, data, times)))
    return tuple(groups)


#: The states that place a moving base's root link in the world, by base (robodyn's floating and planar bases,
#: Pinocchio's conventions: a unit quaternion (x, y, z, w); the heading's cosine and sine).
BASES: Final = {"floating": ("base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw"),
                "planar": ("base_x", "base_y", "base_cos", "base_sin")}


def _base_values(trajectory: Any, base: Sequence[str], base_at: np.ndarray | None, times: np.ndarray) -> np.ndarray:
    """The base's states (K, len(base)) at the shown ``times``: the run's (interpolated), else ``base_at``."""
    if trajectory is None:
        identity = np.array([0.0] * (len(base) - 1) + [1.0]) if len(base) == 7 else np.array([0.0, 0.0, 1.0, 0.0])
        values = identity if base_at is None else np.asarray(base_at, dtype=float).reshape(len(base))
        return np.tile(values, (len(times), 1))
    states = tuple(trajectory.states)
    missing = [name for name in base if name not in states]
    if missing:
        raise InputError(f"the trajectory has no base states {missing}: it is not a run of this moving base",
                         key="trajectory")
    x = np.asarray(trajectory.x, dtype=float)[:, [states.index(name) for name in base]]
    if not np.all(np.isfinite(x)):
        raise InputError("the trajectory's base states have non-finite values: show the part before the failure",
                         key="trajectory")
    return _interpolated(np.asarray(trajectory.t, dtype=float), x, times)


def base_poses(values: np.ndarray, base: Sequence[str]) -> np.ndarray:
    """The base's homogeneous poses (K, 4, 4) from its states ``values`` (K, 7) (floating: x, y, z and a
    quaternion (x, y, z, w)) or (K, 4) (planar: x, y, cos and sin of the heading); the rotation is normalized (an
    interpolated quaternion or heading is off the unit sphere by the square of the step's turn)."""
    K = len(values)
    out = np.tile(np.eye(4), (K, 1, 1))
    if len(base) == 7:
        quaternion = values[:, 3:7] / np.linalg.norm(values[:, 3:7], axis=1, keepdims=True)
        qx, qy, qz, qw = quaternion.T
        out[:, :3, :3] = np.stack([
            np.stack([1 - 2 * (qy**2 + qz**2), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)], axis=-1),
            np.stack([2 * (qx * qy + qz * qw), 1 - 2 * (qx**2 + qz**2), 2 * (qy * qz - qx * qw)], axis=-1),
            np.stack([2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx**2 + qy**2)], axis=-1)], axis=1)
        out[:, :3, 3] = values[:, :3]
    else:
        heading = np.arctan2(values[:, 3], values[:, 2])
        c, s = np.cos(heading), np.sin(heading)
        out[:, 0, 0], out[:, 0, 1], out[:, 1, 0], out[:, 1, 1] = c, -s, s, c
        out[:, :2, 3] = values[:, :2]
    return out
