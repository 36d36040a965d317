"""The chart a model on a manifold is integrated in: its state with the base's tangent coordinates d appended.

A robot on a floating or planar base (robodyn.model.chain.floating) stores its configuration with a unit
quaternion (or cos, sin). Integrating the stored coordinates would let the quaternion drift off unit norm, so the
integrators step in local coordinates instead: the state of :class:`ChartModel` is ``[c, q_joints, v, d]``, the
base's configuration c (+) d for a tangent vector d of the base (robodyn.rigid.base_joints), with c' = 0. Every
step starts at d = 0; after each one the kernels call the model's ``chart`` function (``fns[3]``), which moves
the centre to where the step ended (c <- c (+) d, d <- 0) and the derivative with it (d' = the base velocity),
so the next step again starts at the centre, and the stored quaternion is a product of unit quaternions: unit to
round-off, never renormalized. The chart's states are the stored state followed by d, so lifting a stored state
appends zeros and :meth:`ChartModel.project` recentres.

This is the Runge–Kutta–Munthe-Kaas idea with the chart re-centred at every step: every method (explicit,
implicit, fixed step, batches) runs unchanged on a Euclidean state; error control and dense output act on the
chart's coordinates, which between two steps are the same Euclidean ODE.

Reference: H. Munthe-Kaas, "High order Runge-Kutta methods on manifolds", Appl. Numer. Math. 29 (1999) 115-127;
E. Hairer, C. Lubich, G. Wanner, *Geometric Numerical Integration*, 2nd ed., Springer 2006, section IV.8.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from robodyn.codegen.tape_llvm import tape_source
from robodyn.model.system import Model, Vector

__all__ = ["ChartModel"]


class ChartModel(Model):
    """The integrators' view of a robot on a moving base (see the module docstring).

    ``robot`` is a :class:`~robodyn.model.chain.floating.FloatingChain`; states are its states and then
    ``base_d<...>`` (the chart's tangent coordinates: floating ``dx dy dz rx ry rz``, planar ``dx dy dtheta``).
    """

    def __init__(self, robot: Any):
        self.robot = robot
        self.base: str = robot.base  # floating or planar
        names = ("dx", "dy", "dz", "rx", "ry", "rz") if robot.base == "floating" else ("dx", "dy", "dtheta")
        self.tangent = tuple(f"base_{n}" for n in names)
        self.name = robot.name
        self.states = (*robot.states, *self.tangent)
        self.inputs = robot.inputs
        self.outputs = self.states
        self.parameters = robot.parameters

    kind = "chart"

    def memo(self) -> dict[Any, Any]:
        memo: dict[Any, Any] = self.robot.memo().setdefault("chart memo", {})
        return memo

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self.robot.call("chart_rhs", t, x, u, p)

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return np.array(x, dtype=float)

    @property
    def outputs_are_states(self) -> bool:
        return True

    @property
    def compilable(self) -> bool:
        return True

    def _source(self, name: str, function: str, outputs: list[Any]) -> str:
        tape, _ = self.robot._tape
        return "\n".join([tape_source(f"_{function}_tape", tape, outputs, "hjit"), "", "@jit",
                          f"def {name}(t, x, u, p, out):", f"    _{function}_tape(t, x, u, p, x, out)", ""])

    def kernel_rhs_source(self) -> str:
        return self._source("rhs", "chart_rhs", self.robot.tape_outputs("chart_rhs"))

    def kernel_chart_source(self) -> str:
        """``chart(t, x, xdot, p, out)``: the state and its derivative recentred, ``2 n`` values."""
        return self._source("chart", "chart", self.robot.tape_outputs("chart"))

    def kernel_jacobian_source(self) -> str:
        """``jac(t, x, u, p, out)``: d(chart rhs)/dx then d/du, row-major, by forward mode on the tape."""
        tape, _ = self.robot._tape
        outputs = self.robot.tape_outputs("chart_rhs")
        variables = [*tape.leaves(1, self.n_states), *tape.leaves(2, self.n_inputs)]
        rows = tape.derive(outputs, variables)
        return self._source("jac", "chart_jac", [e for row in rows for e in row])

    # --- between stored and chart states ---------------------------------------------------------------
    def lift(self, x: np.ndarray) -> np.ndarray:
        """Stored states ``(..., nq + nv)`` as chart states ``(..., nq + nv + nb)`` (d = 0)."""
        x = np.asarray(x, dtype=float)
        return np.concatenate([x, np.zeros((*x.shape[:-1], len(self.tangent)))], -1)

    def project(self, y: np.ndarray) -> np.ndarray:
        """Chart states ``(..., nq + nv + nb)`` as stored states ``(..., nq + nv)``: the base at c (+) d."""
        from robodyn.model.chain.configuration import chart_recentre

        robot = self.robot
        y = np.asarray(y, dtype=float)
        nb = len(self.tangent)
        x = y[..., :-nb].copy()
        base = robot.joint.nq
        x[..., :base] = chart_recentre(robot.base, y[..., :base], y[..., -nb:])
        return x

    def tolerances(self, atol: np.ndarray) -> np.ndarray:
        """Absolute tolerances ``(nq + nv + nb,)`` from the stored state's ``(nq + nv,)``: d's from the base's
        position and rotation entries."""
        robot = self.robot
        base = robot.joint.nq
        if robot.base == "floating":
            extra = [*atol[:3], *([float(np.min(atol[3:base]))] * 3)]
        else:
            extra = [atol[0], atol[1], float(np.min(atol[2:base]))]
        return np.concatenate([atol, extra])

    @property
    def tangent_states(self) -> tuple[str, ...]:
        """Names of the tangent space's coordinates ``(2 nv,)``: the configuration's (q (-) q0: the base's
        ``base_dx ... base_rz``, then the joints'), then the velocities."""
        robot = self.robot
        return (*self.tangent, *robot.chain.coordinates, *robot.velocities)

    def linearization(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, ...]:
        """A, B, C, D in the tangent space at the stored state ``x`` (robodyn.model.chain.floating
        ``tangent_jacobians``); the outputs are the tangent state itself (C = I, D = 0)."""
        A, B = self.robot.tangent_jacobians(t, x, u, p)
        return A, B, np.eye(A.shape[0]), np.zeros_like(B)

    def bound_linearization(self, t: float, p: Vector, out: np.ndarray) -> Any:
        """``run(x, u)`` writing [A | B | C | D] of :meth:`linearization` at the stored state ``x`` into ``out``
        (robodyn.Linearizer): for a robot with the solves on its tape (``nv`` <= SOLVE_LIMIT) one compiled function
        (``tangent_linearization``) writes A and B in place from arguments written in place; C = I and D = 0 are
        written once."""
        from robodyn.rigid.dynamics import SOLVE_LIMIT

        robot = self.robot
        nv, nb, m, nx = robot.nv, robot.nb, robot.n_inputs, robot.n_states
        n = 2 * nv
        A, B = out[: n * n].reshape(n, n), out[n * n: n * (n + m)].reshape(n, m)
        C = out[n * (n + m): n * (2 * n + m)].reshape(n, n)
        out[:] = 0.0
        A[:nv, nv:] = np.eye(nv)
        C[...] = np.eye(n)
        if nv > SOLVE_LIMIT:
            def numeric(x: Vector, u: Vector) -> None:
                A_x, B_x = robot.tangent_jacobians(t, x, u, p)
                A[...], B[...] = A_x, B_x

            return numeric
        matrices = out[: n * (n + m)]  # A then B, where the tape writes them
        packed, function, pointers = robot._function("tangent_linearization")[0].bind_raw((nx + nb, m, p.size, 0),
                                                                                           matrices)
        packed[nx + nb + m:] = p
        x_part, u_part = packed[:nx], packed[nx + nb: nx + nb + m]

        def run(x: Vector, u: Vector, _alive: tuple[np.ndarray, ...] = (packed, out)) -> None:
            x_part[...] = x
            u_part[...] = u
            function(t, *pointers)

        return run

    def checked(self, x: Vector) -> Vector:
        """A stored state ``(nq + nv,)`` with its base rotation checked unit (robodyn.model.chain.floating)."""
        checked: Vector = self.robot.normalized(self.robot.state_vector(x))
        return checked

    def neutral(self, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``values`` with the base rotation left out filled with no rotation (base_qw = 1, or base_cos = 1)."""
        filled = dict(values or {})
        unit = "base_qw" if self.robot.base == "floating" else "base_cos"
        rotation = [c for c in self.robot.base_coordinates if c not in ("base_x", "base_y", "base_z")]
        if not any(c in filled for c in rotation):
            filled[unit] = 1.0
        return filled
