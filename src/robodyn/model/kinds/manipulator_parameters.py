"""df/dp of a model in manipulator form M(q) q'' = r(t, q, q', u, p), without inverting M symbolically.

A mixin of :class:`robodyn.model.kinds.mechanical.ManipulatorSystem` (Lagrangian and linear mechanical models): with a
= q''
the forward-dynamics acceleration at the point, M a = r gives dM/dp_c a + M da/dp_c = dr/dp_c, so

    da/dp_c = M^-1 (dr/dp_c - dM/dp_c a),

M^-1 applied by a Cholesky solve at the point (numbers) or in the generated ``jacp``
(robodyn.codegen.source.manipulator_parameter_source); dr/dp and dM/dp are sympy derivatives with respect to the
parameter symbols (derived parameters are substituted into M and r, so the chain rule is exact). The rows of q' =
q_dot do not depend on p.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy

from robodyn.model.expr import narrow_integers
from robodyn.model.kinds.symbolic import NumericFunction
from robodyn.model.system import Vector

if TYPE_CHECKING:
    from robodyn.model.kinds.symbolic import SymbolicModel as _Base
else:
    _Base = object

__all__ = ["ManipulatorParameters"]


class ManipulatorParameters(_Base):
    """``parameter_jacobian_method``, ``parameter_jacobian_raw`` and ``kernel_parameter_jacobian_source`` of a
    manipulator (see the module docstring). ``own`` is ``self`` as the ManipulatorSystem it is mixed into: M, r, the
    number of coordinates and their numeric forms are that class's."""

    @property
    def parameter_jacobian_method(self) -> str:
        """``"manipulator"``: df/dp by the manipulator formula (module docstring)."""
        return "manipulator"

    @functools.cached_property
    def _parameter_derivatives_numeric(self) -> NumericFunction:
        """[dr/dp | dM/dp] stacked: (n, n_params + n*n_params), column block c of dM/dp is dM/dp_c."""
        own: Any = self
        n, k = own.n_coordinates, len(self.p_symbols)
        if not k:
            return lambda t, x, u, p: np.zeros((n, 0))
        return self.lambdify(sympy.Matrix.hstack(own.rhs_expr.jacobian(self.p_symbols),
                                                 *(own.mass_expr.diff(s) for s in self.p_symbols)))

    def parameter_jacobian_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """Exact df/dp ``(2n, n_params)`` without inverting M symbolically: rows 0 for q' = q_dot, then with
        M(q) a = r(t, q, q', u, p): da/dp_c = M^-1 (dr/dp_c - dM/dp_c a), M^-1 by a Cholesky solve at the point."""
        import scipy.linalg  # here, not at module level: importing it costs ~0.2 s at start-up

        own: Any = self
        n, k = own.n_coordinates, len(self.parameters)
        factor = own._factor(own._mass_numeric(t, x, u, p), x)
        accel = scipy.linalg.cho_solve(factor, own._rhs_numeric(t, x, u, p).reshape(-1))
        stacked = np.asarray(self._parameter_derivatives_numeric(t, x, u, p), dtype=float).reshape(n, k * (n + 1))
        dmass = stacked[:, k:].reshape(n, n, k, order="F")  # [i, j, c] = dM_ij / dp_c
        result = np.zeros((2 * n, k))
        if k:
            result[n:] = scipy.linalg.cho_solve(factor, stacked[:, :k] - np.einsum("ijc,j->ic", dmass, accel))
        return result

    def kernel_parameter_jacobian_source(self) -> str:
        """numba source of ``jacp(t, x, u, p, out)``: df/dp ``(2n, n_params)`` row-major, the solves unrolled on
        scalars up to six coordinates (robodyn.codegen.source.manipulator_parameter_source)."""
        from robodyn.codegen.source import manipulator_parameter_source

        own: Any = self
        n, mass, rhs, params = own.n_coordinates, own.mass_expr, own.rhs_expr, self.p_symbols
        drdp = rhs.jacobian(params) if params else sympy.zeros(n, 0)
        return manipulator_parameter_source(
            self, [narrow_integers(mass[i, j]) for i in range(n) for j in range(i + 1)],
            [narrow_integers(e) for e in rhs], [narrow_integers(e) for e in drdp],
            [[narrow_integers(d[i, j]) for i in range(n) for j in range(i + 1)]
             for d in (mass.diff(s) for s in params)])
