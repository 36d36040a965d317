"""Forward kinematics of a rigid-body model: frame poses, velocities, Jacobians, J'q', manipulability.

:class:`Kinematics` wraps what a model's ``kinematics()`` gives (the model contract: chains and URDF
robots return their frames with functions compiled from the model's own tape; models without frames
return None) with arrays in, arrays out. Every method takes one configuration ``(n,)`` (or a mapping by
coordinate name) or a batch ``(N, n)`` and evaluates the batch in one compiled call; results gain the
leading ``N`` axis for a batch.

Jacobians are 6 x n with the linear-velocity rows first, then the angular ones, in one of three
``reference`` frames (Pinocchio's names):

- ``"world_aligned"`` (default, ``LOCAL_WORLD_ALIGNED``): the velocity of the frame origin and the angular
  velocity, in world axes;
- ``"world"`` (``WORLD``): the spatial velocity at the world origin, v_o = v - w x p, in world axes;
- ``"local"`` (``LOCAL``): the velocity of the frame origin and the angular velocity, in the frame's axes.

Reference: R. M. Murray, Z. Li, S. S. Sastry, *A Mathematical Introduction to Robotic Manipulation*,
CRC 1994, sections 2.4 and 3.4 (spatial and body velocities); T. Yoshikawa, "Manipulability of robotic
mechanisms", IJRR 4(2), 1985.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError, ShapeError, UnknownNameError
from robodyn.kinematics.rotations import quaternion_from_rotation, rpy_from_rotation
from robodyn.model.system import Values, real_array, require_model, values_to_vector

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["REFERENCES", "Kinematics", "Pose", "kinematics"]

REFERENCES: Final = ("world_aligned", "world", "local")


@dataclass(frozen=True)
class Pose:
    """The pose of a frame: ``rotation`` (..., 3, 3) (world <- frame) and ``position`` (..., 3) of its origin."""

    frame: str
    rotation: np.ndarray
    position: np.ndarray

    @property
    def matrix(self) -> np.ndarray:
        """The homogeneous transform ``(..., 4, 4)``."""
        shape = self.position.shape[:-1]
        T = np.zeros((*shape, 4, 4))
        T[..., :3, :3] = self.rotation
        T[..., :3, 3] = self.position
        T[..., 3, 3] = 1.0
        return T

    @property
    def quaternion(self) -> np.ndarray:
        """(w, x, y, z), w >= 0, ``(..., 4)``."""
        return quaternion_from_rotation(self.rotation)

    @property
    def rpy(self) -> np.ndarray:
        """(roll, pitch, yaw) with R = Rz(yaw) Ry(pitch) Rx(roll), ``(..., 3)``."""
        return rpy_from_rotation(self.rotation)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: frame, position (3), rotation (3x3), quaternion (w, x, y, z), rpy (one pose only)."""
        return {"frame": self.frame, "position": self.position.tolist(), "rotation": self.rotation.tolist(),
                "quaternion": self.quaternion.tolist(), "rpy": self.rpy.tolist()}

    def _repr_html_(self) -> str:
        from robodyn.display import result_html

        return result_html(self, "Pose", units={"position": "m"})


class Kinematics:
    """Forward kinematics of ``model`` (see the module docstring).

    Attributes
    ----------
    frames : tuple of str
        Every frame: the links, then declared and URDF frames.
    default_frame : str
        The frame used when none is named: the last frame from which no other frame hangs (the tool).
    """

    def __init__(self, model: ModelContract):
        require_model(model, "kinematics")
        tree = model.kinematics()
        self._prefix = ""
        robot = model.robot_block() if tree is None else None
        if robot is not None:  # a diagram: its robot block's frames, prefixed
            label, model = robot
            tree, self._prefix = model.kinematics(), f"{label}."
        if tree is None:
            raise InputError(f"model {model.name!r} ({model.kind}) has no frames: kinematics needs a rigid-body model "
                             "(a kind: chain file or a URDF robot, or a diagram with one as a block)")
        self.model, self._tree = model, tree
        self.frames: tuple[str, ...] = tuple(self._prefix + f for f in tree.frames)
        parents = set(tree.parents.values())
        self.default_frame = [self._prefix + f for f in tree.frames if f not in parents][-1]
        nq, nv = tree.n_configuration, tree.n_velocity
        #: The configuration entries (a ball joint's four quaternion entries ``<ball>_qx .. _qw`` among them).
        self.coordinates: tuple[str, ...] = tuple(self._prefix + c for c in model.states[:nq])
        #: The velocity entries, the Jacobian's columns: the coordinates, or with ball joints the velocity states
        #: (a ball's ``<ball>_wx .. _wz``).
        self.rates: tuple[str, ...] = self.coordinates if nq == nv else tuple(self._prefix + c for c in
                                                                               model.states[nq: nq + nv])

    # --- structure ---------------------------------------------------------------------------------------
    @property
    def skeleton(self) -> tuple[int, ...]:
        """For each point of :meth:`origins`, the index of the point it is drawn from (-1 for the base point)."""
        return (-1, *(parent + 1 for parent in self._tree.body_parents))

    def parent_frame(self, frame: str) -> str | None:
        """The frame ``frame`` hangs from (None for the base)."""
        parent = self._tree.parents[self.frame_name(frame).removeprefix(self._prefix)]
        return None if parent is None else self._prefix + parent

    def frame_name(self, frame: str | None) -> str:
        """``frame`` checked (UnknownNameError listing the frames), or the default frame for None."""
        return self._frame(frame)

    # --- arguments ---------------------------------------------------------------------------------------
    def _frame(self, frame: str | None) -> str:
        if frame is None:
            return self.default_frame
        if not isinstance(frame, str) or frame not in self.frames:
            raise UnknownNameError(f"model {self.model.name!r} has no frame {frame!r}: its frames are "
                                   f"{', '.join(self.frames)}")
        return frame

    def _states(self, q: Values | np.ndarray, qd: Values | np.ndarray | None) -> tuple[np.ndarray, bool]:
        """(N, nq + nv) states from coordinates (and velocities), and whether the input was one point."""
        n = len(self.coordinates)
        if qd is None and type(q) is np.ndarray and q.dtype == np.float64 and q.shape == (n,):
            if not math.isfinite(q.sum()):  # (a sum that overflows only sends it down the general path)
                return self._states(q.tolist(), None)
            x = np.zeros((1, n + len(self.rates)))
            x[0, :n] = q
            return x, True
        listed = f"({', '.join(self.coordinates)})"
        if isinstance(q, Mapping):
            single, rows = True, values_to_vector(q, self.coordinates, "coordinate", default=0.0)[None, :]
        else:
            given = real_array(q, f"model {self.model.name!r}: the configuration {listed}")
            single, rows = given.ndim <= 1, np.atleast_2d(given)
            if rows.ndim != 2 or rows.shape[1] != n:
                raise ShapeError(f"model {self.model.name!r}: expected {n} coordinates {listed} per configuration, "
                                 f"got shape {given.shape}")
        velocities = np.zeros((rows.shape[0], len(self.rates)))
        if qd is not None:
            if isinstance(qd, Mapping):
                velocities[:] = values_to_vector(qd, self.rates, "velocity", default=0.0)
            else:
                given = real_array(qd, f"model {self.model.name!r}: the velocities {listed}")
                try:
                    velocities[:] = np.broadcast_to(given, velocities.shape)
                except ValueError:
                    raise ShapeError(f"model {self.model.name!r}: velocities of shape {given.shape} do not match "
                                     f"{velocities.shape} ({', '.join(self.rates)} per configuration)") from None
        x = np.ascontiguousarray(np.hstack([rows, velocities]))
        if not np.all(np.isfinite(x)):
            raise InputError(f"model {self.model.name!r}: the configuration has non-finite values: give finite "
                             "numbers")
        return x, single

    def _evaluate(self, quantity: str, frame: str | None, x: np.ndarray, params: Values | None) -> np.ndarray:
        p = self.model.default_parameters()[1] if params is None else self.model.parameter_vector(params)
        return self._tree.evaluate(quantity, None if frame is None else frame.removeprefix(self._prefix), x, p)

    # --- poses -----------------------------------------------------------------------------------------
    def pose(self, q: Values | np.ndarray, frame: str | None = None, *, params: Values | None = None) -> Pose:
        """The pose of ``frame`` at the configuration(s) ``q``."""
        name = self._frame(frame)
        x, single = self._states(q, None)
        values = self._evaluate("pose", name, x, params)
        rotation, position = values[:, :9].reshape(-1, 3, 3), values[:, 9:]
        return Pose(name, rotation[0] if single else rotation, position[0] if single else position)

    def position(self, q: Values | np.ndarray, frame: str | None = None, *, params: Values | None = None
                 ) -> np.ndarray:
        """The origin of ``frame`` in the world frame, ``(3,)`` or ``(N, 3)``."""
        return self.pose(q, frame, params=params).position

    def origins(self, q: Values | np.ndarray, *, params: Values | None = None) -> np.ndarray:
        """The base origin, then every joint's origin (body order), ``(bodies + 1, 3)`` or ``(N, bodies + 1, 3)``:
        the points an arm is drawn through."""
        x, single = self._states(q, None)
        points = self._evaluate("origins", None, x, params).reshape(x.shape[0], -1, 3)
        points = np.concatenate([np.zeros((x.shape[0], 1, 3)), points], axis=1)
        return points[0] if single else points

    # --- velocities --------------------------------------------------------------------------------------
    def jacobian(self, q: Values | np.ndarray, frame: str | None = None, *, reference: str = "world_aligned",
                 params: Values | None = None) -> np.ndarray:
        """The geometric Jacobian of ``frame``, ``(6, n)`` or ``(N, 6, n)``: linear rows, then angular."""
        if not isinstance(reference, str) or reference not in REFERENCES:
            raise InputError(f"unknown Jacobian reference {reference!r}: use one of {', '.join(REFERENCES)}")
        name = self._frame(frame)
        x, single = self._states(q, None)
        J = self._evaluate("jacobian", name, x, params).reshape(-1, 6, len(self.rates))
        if reference != "world_aligned":
            pose = self._evaluate("pose", name, x, params)
            rotation, position = pose[:, :9].reshape(-1, 3, 3), pose[:, 9:]
            if reference == "world":  # v_o = v - w x p = v + p x w
                J = np.concatenate([J[:, :3] + np.cross(position[:, :, None], J[:, 3:], axis=1), J[:, 3:]], axis=1)
            else:  # local: R^T on both parts
                J = np.concatenate([np.einsum("kji,kjn->kin", rotation, J[:, :3]),
                                    np.einsum("kji,kjn->kin", rotation, J[:, 3:])], axis=1)
        return J[0] if single else J

    def velocity(self, q: Values | np.ndarray, qd: Values | np.ndarray, frame: str | None = None, *,
                 params: Values | None = None) -> np.ndarray:
        """[v; w] = J q': the velocity of the frame origin and the angular velocity, world axes, ``(6,)``/``(N, 6)``."""
        name = self._frame(frame)
        x, single = self._states(q, qd)
        n = len(self.coordinates)
        J = self._evaluate("jacobian", name, x, params).reshape(-1, 6, len(self.rates))
        twist = np.einsum("kin,kn->ki", J, x[:, n:])
        return twist[0] if single else twist

    def bias_acceleration(self, q: Values | np.ndarray, qd: Values | np.ndarray, frame: str | None = None, *,
                          params: Values | None = None) -> np.ndarray:
        """J'q': the classical acceleration of the frame origin and the angular acceleration at q'' = 0 (world
        axes), ``(6,)`` or ``(N, 6)``; the frame's acceleration is J q'' + J'q'."""
        x, single = self._states(q, qd)
        values = self._evaluate("bias", self._frame(frame), x, params)
        return values[0] if single else values

    def manipulability(self, q: Values | np.ndarray, frame: str | None = None, *, part: str = "full",
                       params: Values | None = None) -> np.ndarray | float:
        """Yoshikawa's manipulability of the ``full`` 6 x n Jacobian, or of its ``linear`` or ``angular`` rows J_p
        (k x n): the product of J_p's min(k, n) singular values, sqrt(det(J_p J_p^T)) when k <= n and
        sqrt(det(J_p^T J_p)) when the rows outnumber the joints (a planar two-link arm's 3 x 2 linear rows:
        l1 l2 |sin q2|, the area of the velocity ellipse). From the singular values, accurate down to a
        singularity (where the determinant's rounding would give ~1e-9), and 0 there. A float, or ``(N,)`` for a
        batch (Yoshikawa, "Manipulability of robotic mechanisms", IJRR 4(2), 1985)."""
        rows = {"full": slice(0, 6), "linear": slice(0, 3), "angular": slice(3, 6)}
        if not isinstance(part, str) or part not in rows:
            raise InputError(f"unknown manipulability part {part!r}: use full, linear or angular")
        J = np.asarray(self.jacobian(q, frame, params=params))
        block = J[..., rows[part], :]
        value = np.prod(np.linalg.svd(block, compute_uv=False), axis=-1)  # min(k, n) singular values
        return float(value) if np.ndim(value) == 0 else value

    def _repr_html_(self) -> str:
        from robodyn.display import block, heading, html_table

        rows = [(frame, self.parent_frame(frame) or "(the base)") for frame in self.frames]
        return block([heading(f"Kinematics of {self.model.name!r}: {len(self.frames)} frames, tool "
                              f"{self.default_frame!r}"), html_table(rows, header=("frame", "hangs from"))])

def kinematics(model: ModelContract) -> Kinematics:
    """The :class:`Kinematics` of ``model`` (kept by the model, so compiled functions are reused)."""
    require_model(model, "kinematics")
    return _cached(model)


def _cached(model: ModelContract) -> Kinematics:
    memo = model.memo()
    if "kinematics api" not in memo:
        memo["kinematics api"] = Kinematics(model)
    return memo["kinematics api"]

