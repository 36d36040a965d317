"""The chart a chain with ball joints is integrated in: its state with each ball's tangent coordinates d appended.

A ball joint stores a unit quaternion (robodyn.rigid.joints.Spherical). Integrating the stored coordinates lets it
drift off unit norm by the integrator's error, so the integrators step in local coordinates instead, as for a
floating base (robodyn.mechanisms.floating.chart): the state of :class:`BallChart` is ``[q, v, d_1 .. d_k]``, ball
b's configuration c_b (+) d_b = q_c (x) Exp(d_b) with its stored quaternion c_b held (c' = 0). Every step starts at
d = 0; after each one the kernels call the chart's ``chart`` function, which moves each centre to where the step
ended (c <- c (+) d, d <- 0), so the stored quaternions are products of unit quaternions: unit to round-off, never
renormalized. Lifting a stored state appends zeros; :meth:`BallChart.project` recentres.

:meth:`BallChart.linearization` is the linear model in the tangent space (each ball's rotation vector d, forward
mode of the chart's rhs at d = 0), and its Jacobian at any chart state is the implicit methods' (``jac``). Not built
yet (refused naming the ball): the tangent model of equilibria, and events written as text (a callable
``g(t, x, u, p)`` is given the stored state).

Reference: H. Munthe-Kaas, "High order Runge-Kutta methods on manifolds", Appl. Numer. Math. 29 (1999) 115-127;
J. Sola, J. Deray, D. Atchuthan, "A micro Lie theory for state estimation in robotics", arXiv:1812.01537 (2018),
appendix B (SO(3): Exp, the right Jacobian).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from robodyn.base.errors import InputError
from robodyn.model.kinds.chart import TangentChart
from robodyn.model.system import Vector

__all__ = ["BallChart", "recentre_quaternions"]

HINGES = "replace the ball by three hinges about orthogonal axes for it"
CALLABLE_EVENTS = "give the event as a callable g(t, x, u, p) of the stored state"


class BallChart(TangentChart):
    """The integrators' view of a fixed-base chain with ball joints (see the module docstring).

    ``chain`` is a :class:`~robodyn.mechanisms.chain.system.ChainSystem` with a ball joint; states are its states
    and then ``<ball>_rx, _ry, _rz`` per ball (the chart's tangent coordinates).
    """

    def __init__(self, chain: Any):
        self.chain = chain
        manifold = f"ball joint {chain.balls[0]!r}" if len(chain.balls) == 1 else (
            f"ball joints {', '.join(map(repr, chain.balls))}")
        super().__init__(chain, tuple(f"{ball}_r{axis}" for ball in chain.balls for axis in "xyz"), manifold,
                         "ball joint", "ball chart memo")

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self.chain.chart_call("chart_rhs", t, x, u, p)

    def kernel_rhs_source(self) -> str:
        return str(self.chain.chart_kernel_source("rhs", "chart_rhs"))

    def kernel_chart_source(self) -> str:
        """``chart(t, x, xdot, p, out)``: the state and its derivative recentred, ``2 n`` values."""
        return str(self.chain.chart_kernel_source("chart", "chart"))

    def _refused(self, what: str, fix: str = "simulate it with an explicit method") -> InputError:
        return InputError(f"model {self.name!r}: {what} is not built for ball joints yet (joint "
                          f"{self.chain.balls[0]!r} is a ball): {fix}")

    def kernel_jacobian_source(self) -> str:
        """``jac(t, x, u, p, out)``: d(chart rhs)/dx then d/du, row-major (forward mode on the chain's tape), for the
        implicit methods."""
        return str(self.chain.chart_kernel_source("jac", "chart_jacobian"))

    def kernel_event_source(self, events: Sequence[Any]) -> str:
        raise self._refused("events written as text", CALLABLE_EVENTS)

    def symbol_table(self) -> Any:
        """A table that refuses events written as text (callables ``g(t, x, u, p)`` are given the stored state)."""
        return _TextEventsRefused(self._refused("events written as text", CALLABLE_EVENTS))

    # --- between stored and chart states ---------------------------------------------------------------
    def project(self, y: np.ndarray) -> np.ndarray:
        """Chart states ``(..., nq + nv + 3k)`` as stored states ``(..., nq + nv)``: each ball at c (+) d."""
        y = np.asarray(y, dtype=float)
        x = y[..., : -len(self.tangent)].copy()
        for _, at_q, _, at_d in self.chain.ball_blocks:
            x[..., at_q: at_q + 4] = recentre_quaternions(y[..., at_q: at_q + 4], y[..., at_d: at_d + 3])
        return x

    def tolerances(self, atol: np.ndarray) -> np.ndarray:
        """Absolute tolerances ``(nq + nv + 3k,)`` from the stored state's: each d's from its quaternion's."""
        extra = [float(np.min(atol[at_q: at_q + 4])) for _, at_q, _, _ in self.chain.ball_blocks for _ in range(3)]
        return np.concatenate([atol, extra])

    @property
    def base_coordinates(self) -> tuple[str, ...]:
        """Names of the balls' stored quaternion entries."""
        return tuple(f"{ball}_{c}" for ball in self.chain.balls for c in ("qx", "qy", "qz", "qw"))

    @property
    def coordinates(self) -> tuple[str, ...]:
        names: tuple[str, ...] = self.chain.coordinates
        return names

    @property
    def tangent_states(self) -> tuple[str, ...]:
        """Names of the tangent space's coordinates ``(2 nv,)``: per joint its coordinate, a ball's ``_rx .. _rz``,
        then the velocities."""
        names = [f"{rate[:-3]}_r{rate[-1]}" if rate.endswith(("_wx", "_wy", "_wz")) and rate[:-3] in self.chain.balls
                 else rate for rate in self.chain.rates]
        return (*names, *self.chain.velocities)

    def linearization(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, ...]:
        """A, B, C, D in the tangent space at the stored state ``x`` (:attr:`tangent_states`: each ball's rotation
        vector d, q = q0 (x) Exp(d); robodyn.mechanisms.chain.balls.BallJoints.tangent_jacobians); the outputs are
        the tangent state itself (C = I, D = 0)."""
        A, B = self.chain.tangent_jacobians(t, x, u, p)
        return A, B, np.eye(A.shape[0]), np.zeros_like(B)

    def bound_linearization(self, t: float, p: Vector, out: np.ndarray) -> Any:
        """``run(x, u)`` writing [A | B | C | D] of :meth:`linearization` at the stored state ``x`` into ``out``
        (robodyn.Linearizer): C = I and D = 0 written once, A and B by the compiled Jacobian of the chart's rhs."""
        n, m = 2 * self.chain.n_velocities, self.n_inputs
        out[:] = 0.0
        out[n * (n + m): n * (2 * n + m)].reshape(n, n)[...] = np.eye(n)
        A, B = out[: n * n].reshape(n, n), out[n * n: n * (n + m)].reshape(n, m)

        def run(x: Vector, u: Vector) -> None:
            A[...], B[...] = self.chain.tangent_jacobians(t, x, u, p)

        return run

    @property
    def rotation(self) -> slice:
        """The first ball's quaternion in the stored state (each ball's is :meth:`project`'s and :meth:`checked`'s)."""
        at_q = self.chain.ball_blocks[0][1]
        return slice(at_q, at_q + 4)

    def checked(self, x: Vector) -> Vector:
        """A stored state ``(nq + nv,)`` with each ball's quaternion checked unit."""
        checked: Vector = self.chain.normalized(self.chain.state_vector(x))
        return checked

    def neutral(self, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``values`` with each ball whose quaternion is left out filled with no rotation (``<ball>_qw`` = 1)."""
        filled = dict(values or {})
        for ball in self.chain.balls:
            if not any(f"{ball}_{c}" in filled for c in ("qx", "qy", "qz", "qw")):
                filled[f"{ball}_qw"] = 1.0
        return filled

    def tangent_model(self, centre: Vector) -> Any:
        raise self._refused("the model in the tangent space (equilibria, validity)", HINGES)


def recentre_quaternions(centre: np.ndarray, d: np.ndarray) -> np.ndarray:
    """q_c (x) Exp(d) ``(..., 4)`` (x y z w) for centres ``(..., 4)`` and rotation vectors ``(..., 3)``: Hamilton's
    product with Exp(d) = (sin(|d|/2) d/|d|, cos(|d|/2)) (the tape's robodyn.rigid.joints.Spherical.recentred)."""
    angle = np.linalg.norm(d, axis=-1, keepdims=True)
    half = 0.5 * angle
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(angle > 1e-8, np.sin(half) / np.where(angle > 0, angle, 1.0), 0.5 - angle ** 2 / 48.0)
    e, ew = scale * d, np.cos(half)
    c, cw = centre[..., :3], centre[..., 3:]
    vector = cw * e + ew * c + np.cross(c, e)
    scalar = cw * ew - np.sum(c * e, axis=-1, keepdims=True)
    return np.concatenate([vector, scalar], -1)


class _TextEventsRefused:
    """The chart's symbol table: any expression refused with ``error``."""

    def __init__(self, error: InputError):
        self.error = error

    def expression(self, value: Any, where: str) -> Any:
        raise self.error
