"""Lagrangian models: equations of motion from kinetic and potential energy.

From T(q, q'), V(q) and generalized forces Q(t, q, q', u) the Euler–Lagrange equations

    d/dt (dT/dq') - dT/dq + dV/dq = Q

are derived with sympy and kept in manipulator form M(q) q'' = Q - c(q, q'), where

    M(q) = d^2 T / dq' dq'                       (the velocity Hessian of T)
    c_i  = sum_j d^2 T / (dq'_i dq_j) q'_j - dT/dq_i + dV/dq_i.

M is never inverted symbolically; ``f`` solves for q' numerically (Cholesky).

Reference: H. Goldstein, C. Poole, J. Safko, *Classical Mechanics*, 3rd ed., section 1.4.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import sympy

from robodyn.base.errors import InputError
from robodyn.model.expr import MAX_EXPANDED_TERMS, expand_bounded, expanded_terms
from robodyn.model.kinds.mechanical import ManipulatorSystem, velocity_name
from robodyn.model.kinds.point_frames import PointFrames, point_expressions
from robodyn.model.kinds.symbolic import ExprLike, NumericFunction, SymbolicModel
from robodyn.model.system import Values, name_tuple

__all__ = ["LagrangianSystem"]


class _Energies(SymbolicModel):
    """Symbol table for parsing the energies before the equations exist."""

    def __init__(self, name: str, states: Sequence[str], inputs: Sequence[str], parameters: Any, outputs: Any):
        self._setup_symbols(name, states, inputs, parameters, tuple(outputs or ()))


class LagrangianSystem(ManipulatorSystem):
    """A model derived from kinetic energy T, potential energy V and generalized forces Q.

    Parameters
    ----------
    coordinates
        Generalized coordinates q; the velocity of ``q`` is ``q_dot``; the state is ``[q..., q_dot...]``.
    inputs
        Input names.
    kinetic
        T(q, q') — must be at most quadratic in the velocities (so that M does not depend on q').
    potential
        V(q).
    forces
        Generalized force on each coordinate (expressions in t, q, q', u); coordinates left out get 0.
    parameters, outputs, name
        As for :class:`~robodyn.model.kinds.symbolic.SymbolicSystem`.
    points
        Named points ``{name: [x, y(, z)]}`` in the coordinates and parameters: the model's frames for
        robodyn.kinematics (robodyn.model.kinds.point_frames).

    Examples
    --------
    >>> pendulum = LagrangianSystem(["theta"], ["tau"], kinetic="I*theta_dot**2/2",
    ...     potential="-m*g*l*cos(theta)", forces={"theta": "tau"},
    ...     parameters={"m": 1.0, "g": 9.81, "l": 1.0, "I": 1.0})
    >>> pendulum.mass_expr
    Matrix([[I]])
    """

    def __init__(
        self,
        coordinates: Sequence[str],
        inputs: Sequence[str] | None,
        kinetic: ExprLike,
        potential: ExprLike = 0,
        forces: Mapping[str, ExprLike] | None = None,
        *,
        parameters: Mapping[str, float] | None = None,
        outputs: Mapping[str, ExprLike] | None = None,
        name: str = "lagrangian",
        points: Mapping[str, Sequence[ExprLike]] | None = None,
    ):
        coords = name_tuple(coordinates, "coordinates")
        ins = name_tuple(inputs, "inputs")
        table = _Energies(name, [*coords, *map(velocity_name, coords)], ins, parameters, outputs)
        n = len(coords)
        q, qd, p = table.x_symbols[:n], table.x_symbols[n:], table.p_symbols
        T = table.expression(kinetic, "kinetic", (*q, *qd, *p))
        V = table.expression(potential, "potential", (*q, *p))
        forces = dict(forces or {})
        unknown = [k for k in forces if k not in coords]
        if unknown:
            raise InputError(f"model {name!r}: forces given for {unknown}, which are not coordinates "
                             f"({', '.join(coords)})", key="forces")
        Q = [forces.get(c, 0) for c in coords]

        def expand(expr: sympy.Expr, what: str, key: str = "kinetic") -> sympy.Expr:
            value = expand_bounded(expr)
            if value is None:
                raise InputError(f"model {name!r}: {what} would expand to more than {MAX_EXPANDED_TERMS} terms "
                                 "(a large power of a sum?): write the energies in a smaller form", key=key)
            return value

        mass = sympy.hessian(T, qd).applyfunc(lambda e: expand(e, "the mass matrix (the kinetic energy's Hessian)"))
        depends = sorted({s.name for s in mass.free_symbols} & {s.name for s in qd})
        if depends:
            raise InputError(
                f"model {name!r}: kinetic energy is not quadratic in the velocities (its Hessian depends on "
                f"{', '.join(depends)}): write T = 1/2 q'^T M(q) q'",
                key="kinetic",
            )
        if mass.is_zero_matrix:
            raise InputError(f"model {name!r}: kinetic energy does not depend on the velocities", key="kinetic")
        momentum = [sympy.diff(T, v) for v in qd]
        bias = [
            expand(
                sum((sympy.diff(momentum[i], q[j]) * qd[j] for j in range(n)), sympy.Integer(0))
                - sympy.diff(T, q[i]) + sympy.diff(V, q[i]),
                f"the equation of {coords[i]}", "potential" if expanded_terms(V) > MAX_EXPANDED_TERMS else "kinetic",
            )
            for i in range(n)
        ]
        self.kinetic_expr = T
        self.potential_expr = V
        super().__init__(coords, ins, mass, Q, bias, parameters=parameters, outputs=outputs, name=name)
        self.points = point_expressions(self, points)

    kind = "lagrangian"
    _mass_key = "kinetic"
    _mass_fix = ("the kinetic energy must be positive for every motion: check the sign of 'kinetic' and the masses "
                 "and inertias among the parameters")

    def exported_functions(self) -> Any:
        """f, h, linearize, mass, rnea, aba and the named points' kinematics on a tape, for C export
        (robodyn.model.exported)."""
        from robodyn.model.exported import symbolic_exported_functions

        return symbolic_exported_functions(self, mass=self.mass_expr, forces=self.forces_expr, bias=self.bias_expr,
                                           points=self.points)

    def kinematics(self) -> PointFrames | None:
        """The named points as frames (robodyn.model.kinds.point_frames), or None without points."""
        if not self.points:
            return None
        memo = self.memo()
        if "kinematics" not in memo:
            memo["kinematics"] = PointFrames(self, self.points)
        return memo["kinematics"]

    @functools.cached_property
    def _energy_numeric(self) -> NumericFunction:
        return self.lambdify(sympy.Matrix([self.kinetic_expr, self.potential_expr]))

    def energy(self, x: Values, params: Values | None = None) -> tuple[float, float]:
        """Kinetic and potential energy ``(T, V)`` at state ``x`` ``(n_states,)``."""
        values = self._energy_numeric(0.0, self.state_vector(x), self.input_vector(None),
                                      self.parameter_vector(params))
        return float(values[0, 0]), float(values[1, 0])
