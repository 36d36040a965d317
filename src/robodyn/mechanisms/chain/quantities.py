"""Derived quantities of a chain from its compiled tape: gravity and bias forces, dM/dq, the Coriolis matrix, centres of
mass, energies.

:class:`ChainQuantities` is a mixin of :class:`robodyn.mechanisms.chain.system.ChainSystem` (which provides ``_point``,
``_call`` and the bodies); each method evaluates one compiled function of robodyn.rigid.dynamics.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy

from robodyn.model.expr import as_expr
from robodyn.model.system import Values

__all__ = ["ChainQuantities"]


class ChainQuantities:
    """g(q), the bias forces, dM/dq, C(q, q'), the centres of mass and the energies of a chain (mixin)."""

    _point: Any
    _call: Any
    _joint_terms: list[dict[str, Any]]
    bodies: Any
    order_: list[int]
    joints: tuple[Any, ...]
    gravity_expr: tuple[Any, ...]
    p_symbols: tuple[sympy.Symbol, ...]
    coordinates: tuple[str, ...]
    n_inputs: int
    state_vector: Any
    parameter_vector: Any
    mass_matrix: Any
    inverse_dynamics: Any

    def gravity(self, q: Values, params: Values | None = None) -> np.ndarray:
        """g(q) = dV/dq, the joint torques that hold the robot still against gravity and its joint springs,
        ``(n,)`` (inverse dynamics at q' = q'' = 0)."""
        return np.asarray(self.inverse_dynamics(q, {}, {}, params))

    def bias(self, q: Values, qd: Values, params: Values | None = None) -> np.ndarray:
        """C(q, q') q' + g(q) plus the joints' damping and friction at q', ``(n,)`` (inverse dynamics at q'' = 0):
        the nonlinear effects, M(q) q'' + bias = tau."""
        return np.asarray(self.inverse_dynamics(q, qd, {}, params))

    def potential_energy(self, q: Values, params: Values | None = None) -> float:
        """V(q) from gravity (zero at height 0 of the base frame) and the joint springs."""
        x, p = self._point(q, None, params)
        return float(self.energy(x, p)[1])

    def kinetic_energy(self, q: Values, qd: Values, params: Values | None = None) -> float:
        """T = 1/2 q'^T M(q) q'."""
        x, p = self._point(q, qd, params)
        n = len(self.coordinates)
        return float(0.5 * x[n:] @ self.mass_matrix(x[:n], p) @ x[n:])

    def mass_derivative(self, q: Values, params: Values | None = None) -> np.ndarray:
        """dM/dq ``(n, n, n)``: entry [i, j, k] = dM_ij/dq_k (straight-line forward mode)."""
        x, p = self._point(q, None, params)
        n = len(self.coordinates)
        return self._call("mass_derivative", 0.0, x, np.zeros(self.n_inputs), p).reshape(n, n, n)

    def coriolis_matrix(self, q: Values, qd: Values, params: Values | None = None) -> np.ndarray:
        """C(q, q') ``(n, n)`` from the Christoffel symbols of M, so that M' - 2C is skew-symmetric.

        C_ij = sum_k 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) q'_k (Spong, Hutchinson, Vidyasagar,
        *Robot Modeling and Control*, section 7.3).
        """
        x, _ = self._point(q, qd, params)
        dm = self.mass_derivative(q, params)
        v = x[len(self.coordinates):]
        christoffel = 0.5 * (dm + dm.transpose(0, 2, 1) - dm.transpose(2, 0, 1))
        return np.einsum("ijk,k->ij", christoffel, v)

    def com_positions(self, q: Values, params: Values | None = None) -> np.ndarray:
        """Centres of mass of the moving links in the base frame, ``(len(joints), 3)`` in joint order (the
        coordinate order when no joint mimics another)."""
        x, p = self._point(q, None, params)
        coms = self._call("com", 0.0, x, np.zeros(self.n_inputs), p).reshape(len(self.joints), 3)
        result = np.empty_like(coms)
        result[self.order_] = coms
        return result

    def energy(self, x: Values, params: Values | None = None) -> tuple[float, float]:
        """Kinetic 1/2 q'^T M q' and potential energy (gravity on the link COMs, joint springs) at ``x``."""
        n = len(self.coordinates)
        xv, p = self.state_vector(x), self.parameter_vector(params)
        mass = self.mass_matrix(xv[:n], p)
        kinetic = 0.5 * xv[n:] @ mass @ xv[n:]
        values = dict(zip(self.p_symbols, map(sympy.Float, p)))
        gravity = np.array([float(as_expr(g).xreplace(values)) for g in self.gravity_expr])
        masses = np.array([float(as_expr(self._link_mass(i)).xreplace(values)) for i in range(len(self.joints))])
        potential = -float(masses @ (self.com_positions(xv[:n], p) @ gravity))
        movable = [j.name for j in self.joints if j.mimic is None]
        for name, t in zip(movable, self._joint_terms):
            if name in self.coordinates:  # a ball joint has no spring
                k, rest = (float(as_expr(t[key]).xreplace(values)) for key in ("stiffness", "rest"))
                potential += 0.5 * k * (xv[self.coordinates.index(name)] - rest) ** 2
        return float(kinetic), potential

    def _link_mass(self, i: int) -> Any:
        return self.bodies[self.order_.index(i)].mass
