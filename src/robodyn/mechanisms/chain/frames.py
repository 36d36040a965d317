"""The frames of a chain and their kinematic functions, compiled from the chain's own tape.

Every chain has a frame per link — the base link, fixed, and each link moved by a joint, at its link
frame (the frame in which ``com`` and ``inertia`` are given: the joint frame for xyz/rpy and modified DH
placements, the frame after Rz(theta) Tz(d) Tx(a) Rx(alpha) for standard DH) — plus the extra frames
declared by ``frames: {name: {parent: <link or frame>, xyz: [...], rpy: [...]}}``; a URDF robot adds its
fixed and massless links (``tool0``, ``ee_link``, ``panda_hand``) this way.

:class:`ChainFrames` is what a chain's ``kinematics()`` returns (the model contract): the frame names, the
frame each hangs from, and :meth:`ChainFrames.evaluate`, which runs a kinematic function of
robodyn.rigid.kinematics (pose, jacobian, bias, origins) compiled by LLVM for a whole batch of states in
one call. The user-facing API over it is :class:`robodyn.kinematics.Kinematics`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy

from robodyn.base.errors import InputError, UnknownNameError
from robodyn.codegen.llvm.native import native_batch
from robodyn.codegen.llvm.tape import llvm_ir, tape_data
from robodyn.mechanisms.chain.parts import rot_x, rot_y, rot_z
from robodyn.rigid.kinematics import FrameSpec, KinematicsProgram
from robodyn.rigid.tape import Value

if TYPE_CHECKING:
    from robodyn.mechanisms.chain.system import ChainSystem

__all__ = ["ChainFrames", "FrameDecl", "frame_decls"]

_EMPTY = np.zeros(0)  # the inputs and accelerations, which kinematics does not read


@dataclass(frozen=True, slots=True)
class FrameDecl:
    """An extra frame: fixed to ``parent`` (a link or an earlier frame) at ``xyz`` and ``rpy`` (R = Rz(yaw)
    Ry(pitch) Rx(roll)) in the parent's frame; numbers may be parameter expressions."""

    name: str
    parent: str
    xyz: tuple[Any, ...] = (0, 0, 0)
    rpy: tuple[Any, ...] = (0, 0, 0)


def frame_decls(frames: Mapping[str, Any] | None, where: str) -> list[FrameDecl]:
    """FrameDecl list from ``{name: {parent, xyz, rpy}}`` (or FrameDecl values), with errors naming the frame."""
    result = []
    for name, entry in (frames or {}).items():
        if isinstance(entry, FrameDecl):
            result.append(entry)
            continue
        if not isinstance(entry, Mapping) or not isinstance(entry.get("parent"), str):
            raise InputError(f"{where}: frame {name!r} must be {{parent: <link>, xyz: [x, y, z], rpy: [r, p, y]}}",
                             key="frames")
        unknown = sorted(set(entry) - {"parent", "xyz", "rpy"})
        if unknown:
            raise InputError(f"{where}: frame {name!r}: unknown keys {unknown}: use parent, xyz, rpy", key="frames")
        xyz, rpy = entry.get("xyz", (0, 0, 0)), entry.get("rpy", (0, 0, 0))
        for key, value in (("xyz", xyz), ("rpy", rpy)):
            if not isinstance(value, list | tuple) or len(value) != 3:
                raise InputError(f"{where}: frame {name!r}: {key} must be 3 numbers, got {value!r}", key="frames")
        result.append(FrameDecl(str(name), entry["parent"], tuple(xyz), tuple(rpy)))
    return result


class ChainFrames:
    """The frames of ``model`` and their compiled kinematic functions (see the module docstring)."""

    def __init__(self, model: ChainSystem):
        self.model = model
        view = model.tape_view()
        program = view.program
        #: The kinematic functions recorded on the chain's tape (robodyn.rigid.kinematics.KinematicsProgram).
        self.program = KinematicsProgram(program.tape, program.bodies, [], program.x, (program.q_map, program.v_map),
                                         program.outputs("rhs")[:program.nq]) if model.balls else \
            KinematicsProgram(program.tape, program.bodies, program.couplings, program.x)
        #: The configuration entries (the first states) and the velocity entries (the Jacobian's columns): a ball
        #: joint has four and three.
        self.n_configuration, self.n_velocity = model.n_coordinates, model.n_velocities
        self._specs: dict[str, FrameSpec] = {}
        self.parents: dict[str, str | None] = {}  # frame -> the frame it hangs from (None: the base)
        placements: dict[str, tuple[int, sympy.Matrix, sympy.Matrix]] = {}  # frame -> body, R, p (joint frame)
        moved = {j.child: j for j in model.joints}
        position_of = {joint: k for k, joint in enumerate(model.order_)}
        for link in model.links:
            if link.name in moved:
                joint = moved[link.name]
                rotation, position = view.link_offsets[link.name]
                placements[link.name] = (position_of[model.joints.index(joint)], rotation, position)
                self.parents[link.name] = joint.parent
            else:
                placements[link.name] = (-1, sympy.eye(3), sympy.zeros(3, 1))
                self.parents[link.name] = None
        for decl in model.frame_decls:
            where = f"model {model.name!r}: frame {decl.name!r}"
            if decl.name in placements:
                raise InputError(f"{where}: the name is taken by a link or an earlier frame", key="frames")
            if decl.parent not in placements:
                raise InputError(f"{where}: unknown parent {decl.parent!r} (links and frames: "
                                 f"{', '.join(placements)})", key="frames")
            body, r_parent, p_parent = placements[decl.parent]
            xyz = sympy.Matrix(view.vector(decl.xyz, f"frame {decl.name!r}.xyz", "frames"))
            roll, pitch, yaw = view.vector(decl.rpy, f"frame {decl.name!r}.rpy", "frames")
            rotation = r_parent * rot_z(yaw) * rot_y(pitch) * rot_x(roll)
            placements[decl.name] = (body, rotation, p_parent + r_parent * xyz)
            self.parents[decl.name] = decl.parent
        self.frames = tuple(placements)
        self.body_parents = tuple(int(body.parent) for body in model.bodies)  # body order, -1: the base
        self._placements = placements
        self._compiled: dict[tuple[str | None, str], tuple[Any, int]] = {}

    def spec(self, frame: str) -> FrameSpec:
        """The tape description of ``frame`` (UnknownNameError listing the frames)."""
        if frame not in self._specs:
            self._specs[frame] = self.spec_on(frame, self.model.tape_view().value)
        return self._specs[frame]

    def spec_on(self, frame: str, value: Callable[[Any], Value]) -> FrameSpec:
        """``frame``'s description with the values ``value`` gives its expressions: for a tape another model lays
        out (a moving base's, robodyn.mechanisms.floating.chain). UnknownNameError listing the frames."""
        if frame not in self._placements:
            raise UnknownNameError(f"model {self.model.name!r} has no frame {frame!r}: its frames are "
                                   f"{', '.join(self.frames)}")
        body, rotation, position = self._placements[frame]
        rows = tuple(tuple(value(rotation[r, c]) for c in range(3)) for r in range(3))
        return FrameSpec(body, rows, tuple(value(position[i]) for i in range(3)))

    def up(self, p: np.ndarray) -> np.ndarray:
        """The world direction opposite to gravity at the parameters ``p`` ``(3,)`` (+z without gravity)."""
        values = dict(zip(self.model.p_symbols, p.tolist()))
        gravity = np.array([float(g.xreplace(values)) if isinstance(g, sympy.Basic) else float(g)
                            for g in self.model.gravity_expr])
        size = float(np.linalg.norm(gravity))
        return -gravity / size if size > 0 and np.isfinite(size) else np.array([0.0, 0.0, 1.0])

    def size(self, quantity: str) -> int:
        """The number of outputs of ``quantity`` (per state)."""
        return {"pose": 12, "jacobian": 6 * self.n_velocity, "bias": 6,
                "origins": 3 * len(self.model.bodies)}[quantity]

    def evaluate(self, quantity: str, frame: str | None, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        """``quantity`` of ``frame`` (None for ``origins``) at the states ``x`` ``(N, nq + nv)`` (validated float64)
        with the parameters ``p``: ``(N, size)``, one compiled call for the whole batch."""
        key = (frame, quantity)
        if key not in self._compiled:
            spec = None if frame is None else self.spec(frame)
            outputs = self.program.outputs(spec, quantity)
            text, symbol = llvm_ir(*tape_data(self.program.tape, outputs), optimize=True)
            self._compiled[key] = (native_batch(text, symbol), len(outputs))
        function, size = self._compiled[key]
        out = np.empty((x.shape[0], size))
        function(0.0, x, _EMPTY, p, _EMPTY, out)
        return out
