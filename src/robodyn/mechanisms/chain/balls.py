"""A chain's ball joints (``type: ball``): their checks, refusals, sizes and start (a mixin of
:class:`robodyn.mechanisms.chain.system.ChainSystem`).

A ball joint has four configuration entries (a unit quaternion x y z w) and three velocity entries (the child's
angular velocity relative to its parent, in its own frame): robodyn.rigid.joints.Spherical. What the chain does not
build for a ball joint (the exact Jacobian in x, the regressor, the C export, mimic joints and frame outputs beside
it) is refused in one line that names it (:meth:`BallJoints.refuse_balls`); its frames are built
(robodyn.mechanisms.chain.frames, one Jacobian column per velocity entry).

The integrators step a chain with ball joints in a chart (robodyn.mechanisms.chain.ball_chart.BallChart): each ball's
quaternion c (+) d for a tangent vector d of its own, recentred after every step, so that the quaternions stay unit
to round-off. :meth:`BallJoints.chart_outputs` records the chart's functions on the chain's tape.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError, RobodynWarning
from robodyn.codegen.llvm.native import native_function
from robodyn.codegen.llvm.tape import llvm_ir, tape_data, tape_source
from robodyn.mechanisms.chain.ball_program import FlatTreeProgram
from robodyn.model.plausibility import check_mass
from robodyn.model.protocol import Chart
from robodyn.model.system import Vector
from robodyn.rigid.joints import SPHERICAL
from robodyn.rigid.tape import Tape, Value

if TYPE_CHECKING:
    from robodyn.model.kinds.mechanical import ManipulatorSystem as _Base
else:
    _Base = object

__all__ = ["QUATERNION_TOLERANCE", "BallJoints"]

QUATERNION_TOLERANCE: Final = 1e-6  # A ball's stored quaternion further than this from unit norm is refused.


class BallJoints(_Base):
    """The questions a chain answers about its ball joints (``balls``: their names, set by the chain)."""

    balls: tuple[str, ...]
    rates: tuple[str, ...]
    joints: tuple[Any, ...]  # robodyn.mechanisms.chain.parts.Joint
    kinematic_outputs: Any
    order_: list[int]
    _tape_value: Any
    tape_parts: Any
    if TYPE_CHECKING:
        @property
        def _tape(self) -> tuple[Tape, dict[Any, Value]]: ...  # the chain's (robodyn.mechanisms.chain.system)

    @property
    def ball_blocks(self) -> list[tuple[str, int, int, int]]:
        """Per ball joint, in the state's order: its name and where its quaternion (4), its angular velocity (3, in
        the velocities) and its chart coordinates d (3, after the stored state) start."""
        return [(ball, self.coordinates.index(f"{ball}_qx"), self.rates.index(f"{ball}_wx"),
                 self.n_states + 3 * k) for k, ball in enumerate(self.balls)]

    def flat_program(self, x: Sequence[Value]) -> FlatTreeProgram:
        """The tape program (robodyn.mechanisms.chain.ball_program) at the state values ``x`` ``(nq + nv,)``: the
        state's leaves, or the chart's configuration c (+) d."""
        tape, _ = self._tape
        u, a = tape.leaves(2, self.n_inputs), tape.leaves(4, self.n_velocities)
        bodies, joints, forces, _, gravity = self.tape_parts(self._tape_value)
        movable = [i for i, j in enumerate(self.joints) if j.mimic is None]  # no mimic beside a ball
        refusal = (f"model {self.name!r} has the ball joint {self.balls[0]!r}: replace the ball by three hinges "
                   "about orthogonal axes for it")
        return FlatTreeProgram(tape, bodies, x, u, a, gravity, joints, forces, refusal,
                               [movable.index(i) for i in self.order_])

    def chart_outputs(self, name: str) -> list[Value]:
        """The chart's functions on the chain's tape, its state ``[q (nq), v (nv), d (3 per ball)]`` (argument 1),
        each ball at its centre's quaternion (+) d (robodyn.rigid.joints.Spherical.recentred):

        - ``chart_rhs`` ``(nq + nv + 3k,)``: a ball's stored quaternion 0 (the centre does not move), the other
          coordinates' rates v, the accelerations, d' = Jr(d)^-1 w per ball;
        - ``chart``: the state recentred (each ball's quaternion c (+) d, d = 0) then its derivative (argument 2)
          in the new chart, whose d' is the ball's w: ``2 (nq + nv + 3k)`` values, what the integrators call after
          every step.
        """
        memo = self.memo()
        key = ("ball chart", name)
        if key not in memo:
            tape, _ = self._tape
            nq, nv, size = self.n_coordinates, self.n_velocities, self.n_states + 3 * len(self.balls)
            x, zero = tape.leaves(1, size), tape.const(0.0)
            q = list(x[:nq])
            for _, at_q, _, at_d in self.ball_blocks:
                q[at_q: at_q + 4] = SPHERICAL.recentred(tape, x[at_q: at_q + 4], x[at_d: at_d + 3])
            w = [x[nq + at_v: nq + at_v + 3] for _, _, at_v, _ in self.ball_blocks]
            if name == "chart_rhs":
                rates = self.flat_program([*q, *x[nq: nq + nv]]).outputs("rhs")
                qdot = list(rates[:nq])
                for _, at_q, _, _ in self.ball_blocks:
                    qdot[at_q: at_q + 4] = [zero] * 4
                turns = [e for (_, _, _, at_d), rate in zip(self.ball_blocks, w)
                         for e in SPHERICAL.chart_rate(tape, x[at_d: at_d + 3], rate)]
                memo[key] = [*qdot, *rates[nq:], *turns]
            else:
                xdot = tape.leaves(2, size)
                memo[key] = [*q, *x[nq: nq + nv], *([zero] * (size - nq - nv)), *xdot[: nq + nv],
                             *(e for rate in w for e in rate)]
        outputs: list[Value] = memo[key]
        return outputs

    def chart_jacobian_outputs(self) -> list[Value]:
        """d(chart_rhs)/d(chart state) ``(size, size)`` then d(chart_rhs)/du ``(size, m)``, each row-major (the
        integrators' ``jac`` layout), by forward mode on the tape."""
        memo = self.memo()
        if "ball chart jacobian" not in memo:
            tape, _ = self._tape
            size = self.n_states + 3 * len(self.balls)
            variables = [*tape.leaves(1, size), *tape.leaves(2, self.n_inputs)]
            rows = tape.derive(self.chart_outputs("chart_rhs"), variables)
            memo["ball chart jacobian"] = [*(e for row in rows for e in row[:size]),
                                           *(e for row in rows for e in row[size:])]
        outputs: list[Value] = memo["ball chart jacobian"]
        return outputs

    def tangent_jacobians(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        """A ``(2 nv, 2 nv)`` and B ``(2 nv, m)`` in the tangent space at the stored state ``x``: the states
        (q (-) q0 — a one-coordinate joint's difference, a ball's rotation vector d with q = q0 (x) Exp(d) — then
        v), the chart's rhs differentiated at d = 0 (its configuration rows [-1/2 [w]x, I] for a ball)."""
        nq, nv, m = self.n_coordinates, self.n_velocities, self.n_inputs
        size = self.n_states + 3 * len(self.balls)
        balls = {ball: at_d for ball, _, _, at_d in self.ball_blocks}
        tangent = [balls[rate[:-3]] + "xyz".index(rate[-1]) if rate not in self.coordinates else
                   self.coordinates.index(rate) for rate in self.rates]
        index = [*tangent, *range(nq, nq + nv)]
        y = np.concatenate([x, np.zeros(size - self.n_states)])
        values = self.chart_call("chart_jacobian", t, y, u, p)
        A, B = values[: size * size].reshape(size, size), values[size * size:].reshape(size, m)
        return A[np.ix_(index, index)], B[index]

    def chart_call(self, name: str, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> np.ndarray:
        """:meth:`chart_outputs` ``name`` (or ``chart_jacobian``: :meth:`chart_jacobian_outputs`) compiled (by LLVM,
        once per model) at float64 vectors."""
        memo = self.memo()
        key = ("ball chart function", name)
        if key not in memo:
            tape, _ = self._tape
            outputs = self.chart_jacobian_outputs() if name == "chart_jacobian" else self.chart_outputs(name)
            text, symbol = llvm_ir(*tape_data(tape, outputs), optimize=True)
            memo[key] = (native_function(text, symbol), len(outputs))
        function, size = memo[key]
        out = np.empty(size)
        x = np.ascontiguousarray(x, dtype=float)
        function(float(t), x, np.ascontiguousarray(u, dtype=float), np.ascontiguousarray(p, dtype=float), x, out)
        return out

    def chart_kernel_source(self, kernel: str, name: str) -> str:
        """The integrators' ``kernel(t, x, u, p, out)`` of :meth:`chart_outputs` ``name`` (or ``chart_jacobian``)
        (numba source)."""
        tape, _ = self._tape
        outputs = self.chart_jacobian_outputs() if name == "chart_jacobian" else self.chart_outputs(name)
        return "\n".join([tape_source(f"_{name}_tape", tape, outputs, "hjit"), "", "@jit",
                          f"def {kernel}(t, x, u, p, out):", f"    _{name}_tape(t, x, u, p, x, out)", ""])

    def chart(self) -> Chart | None:
        """The chart the integrators step in when the chain has a ball joint (robodyn.mechanisms.chain.ball_chart.
        BallChart), else None."""
        if not self.balls:
            return None
        from robodyn.mechanisms.chain.ball_chart import BallChart

        memo = self.memo()
        if "ball chart" not in memo:
            memo["ball chart"] = BallChart(self)
        chart: Chart = memo["ball chart"]
        return chart

    def normalized(self, x: Vector) -> Vector:
        """``x`` ``(nq + nv,)`` with each ball's quaternion of unit norm: InputError when one is further than
        QUATERNION_TOLERANCE from it, normalized (with a warning) when it is off by more than round-off (1e-12)."""
        for ball, at_q, _, _ in self.ball_blocks:
            part = x[at_q: at_q + 4]
            norm = math.sqrt(float(part @ part))
            if not math.isfinite(norm) or abs(norm - 1.0) > QUATERNION_TOLERANCE:
                raise InputError(f"model {self.name!r}: the ball joint {ball!r}'s quaternion ({ball}_qx .. _qw) = "
                                 f"{part.tolist()} has norm {norm:.9g}: a rotation needs norm 1 (within "
                                 f"{QUATERNION_TOLERANCE:g}); divide by the norm, or give {ball}_qw = 1 and the "
                                 "others 0 for no rotation", key="x0")
            if abs(norm - 1.0) > 1e-12:
                warnings.warn(f"model {self.name!r}: the ball joint {ball!r}'s quaternion had norm {norm!r}: "
                              "normalized", RobodynWarning, stacklevel=3)
                x = x.copy()
                x[at_q: at_q + 4] = part / norm
        return x

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
