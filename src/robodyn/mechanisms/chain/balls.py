"""A chain's ball joints (``type: ball``): their checks, refusals, sizes and start (a mixin of
:class:`robodyn.mechanisms.chain.system.ChainSystem`).

A ball joint has four configuration entries (a unit quaternion x y z w) and three velocity entries (the child's
angular velocity relative to its parent, in its own frame): robodyn.rigid.joints.Spherical. What the chain does not
build for a ball joint (kinematics, the exact Jacobian, the regressor, the C export, mimic joints and frame outputs
beside it) is refused in one line that names it (:meth:`BallJoints.refuse_balls`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.base.errors import InputError
from robodyn.model.plausibility import check_mass
from robodyn.model.system import Vector

if TYPE_CHECKING:
    from robodyn.model.kinds.mechanical import ManipulatorSystem as _Base
else:
    _Base = object

__all__ = ["BallJoints"]


class BallJoints(_Base):
    """The questions a chain answers about its ball joints (``balls``: their names, set by the chain)."""

    balls: tuple[str, ...]
    rates: tuple[str, ...]
    joints: tuple[Any, ...]  # robodyn.mechanisms.chain.parts.Joint
    kinematic_outputs: Any

    @property
    def n_velocities(self) -> int:
        """Velocity entries nv (the coordinates' count n_coordinates, less one per ball joint)."""
        return len(self.velocities)

    def _check_balls(self) -> None:
        """InputError naming a ball joint with a term robodyn does not build for it, or a mimic joint beside one."""
        mimic = next((j.name for j in self.joints if j.mimic is not None), None)
        if mimic is not None:
            raise InputError(f"model {self.name!r}: joint {mimic!r} mimics another joint, and joint "
                             f"{self.balls[0]!r} is a ball: mimic joints are not built beside ball joints yet",
                             key="joints")
        if self.kinematic_outputs:
            self.refuse_balls("frame outputs")
        for joint in (j for j in self.joints if j.type == "ball"):
            given = [key for key, default in (("dh", None), ("mdh", None), ("force", None))
                     if getattr(joint, key) is not default]
            given += [key for key in ("friction", "stiffness") if _nonzero(getattr(joint, key))]
            if given:
                raise InputError(f"model {self.name!r}: joint {joint.name!r} is a ball: its {', '.join(given)} is not "
                                 f"built for a ball joint (its torques are the inputs {joint.name}_tx, _ty, _tz; "
                                 "damping and rotor_inertia act per axis): remove it", key="joints")

    def refuse_balls(self, what: str) -> None:
        """InputError naming the ball joint when the chain has one: ``what`` (a capability) is not built for it."""
        if self.balls:
            raise InputError(f"model {self.name!r}: {what} is not built for ball joints yet (joint {self.balls[0]!r} "
                             "is a ball): replace the ball by three hinges about orthogonal axes for it")

    def initial_state(self) -> Vector:
        """Zeros, each ball joint's quaternion the identity (``<joint>_qw`` = 1) ``(nq + nv,)``."""
        x = np.zeros(self.n_states)
        for ball in self.balls:
            x[self.coordinates.index(f"{ball}_qw")] = 1.0
        return x

    def _check_ball_mass(self, context: str) -> None:
        """The plausibility check of a chain with ball joints: M by the compiled tape at a generic configuration, a
        ball's quaternion Exp of three of its numbers (robodyn.model.plausibility picks one number per velocity)."""
        p, zero_u = self.parameter_vector(), np.zeros(self.n_inputs)

        def mass_at(numbers: np.ndarray) -> np.ndarray:
            x = self.initial_state()
            for k, rate in enumerate(self.rates):
                if rate in self.coordinates:
                    x[self.coordinates.index(rate)] = numbers[k]
            for ball in self.balls:
                at = self.rates.index(f"{ball}_wx")
                rotation = numbers[at: at + 3]
                angle = float(np.linalg.norm(rotation))
                axis = rotation / angle if angle > 0 else rotation
                first = self.coordinates.index(f"{ball}_qx")
                x[first: first + 4] = [*(math.sin(angle / 2) * axis), math.cos(angle / 2)]
            return self.mass_raw(0.0, x, zero_u, p)

        check_mass(mass_at, self.rates, where=f"model {self.name!r}{context}", key="links",
                   fix="check the masses and inertias of the links the joints move")


def _nonzero(value: Any) -> bool:
    """Whether a joint's term as given (a number, text, or a sequence of them) is other than zero."""
    if isinstance(value, str):
        return value.strip() not in ("0", "0.0", "")
    if isinstance(value, Sequence | np.ndarray):
        return any(_nonzero(v) for v in value)
    return bool(value != 0)
