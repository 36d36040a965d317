"""Second-order models in manipulator form, and linear mechanical systems M q'' + B q' + K q = F u.

A :class:`ManipulatorSystem` keeps its equations as

    M(q) q'' = Q(t, q, q', u) - c(t, q, q')

with the mass matrix M, the generalized forces Q and the bias c (Coriolis, centrifugal, gravity,
springs, dampers). The state is ``[q..., q_dot...]``: all coordinates, then all velocities, velocity
``q_dot`` belonging to coordinate ``q``. M is never inverted symbolically: ``f`` evaluates q'' by a
numeric Cholesky solve at each point (M must be symmetric positive definite).

:class:`MechanicalSystem` is the linear case with constant matrices, which has the exact first-order
form A = [[0, I], [-M^-1 K, -M^-1 B]], B = [[0], [M^-1 F]].
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Self

import numpy as np
import sympy

from robodyn.base.budget import shown
from robodyn.base.errors import InputError, ShapeError, SingularMatrixError
from robodyn.display.latex import latex_name, latex_of
from robodyn.model.expr import TIME, expand_bounded, narrow_integers, symbol
from robodyn.model.kinds.linear import LinearSystem
from robodyn.model.kinds.manipulator_parameters import ManipulatorParameters
from robodyn.model.kinds.symbolic import ExprLike, NumericFunction, SymbolicModel
from robodyn.model.kinds.symbolic_form import Equation
from robodyn.model.kinds.symbolic_jacobians import symbolic_linearization
from robodyn.model.plausibility import check_mass
from robodyn.model.protocol import ExplicitForm
from robodyn.model.system import Values, Vector, name_tuple, values_to_vector

__all__ = [
    "CRITICAL_DAMPING_TOLERANCE",
    "ManipulatorSystem",
    "MechanicalSystem",
    "ScalarDamping",
    "velocity_name",
]

#: |zeta - 1| at or below this counts as critically damped. Rounding in b / (2 sqrt(k J)) is a few
#: ulp (~1e-16), so exactly critical parameters are recognised; zeta = 1 +- 1e-9 is not critical.
CRITICAL_DAMPING_TOLERANCE: Final = 1e-12


def velocity_name(coordinate: str) -> str:
    """The state name of the velocity of ``coordinate``: ``q`` -> ``q_dot``."""
    return f"{coordinate}_dot"


def _symbol_matrix(value: Any, rows: int, cols: int, label: str, model: str) -> list[list[Any]]:
    """Validate a nested list (or array, or sympy Matrix) of entries with shape (rows, cols)."""
    if isinstance(value, sympy.MatrixBase):
        value = value.tolist()
    elif isinstance(value, np.ndarray):
        value = value.tolist()
    if rows == 1 and cols == 1 and not isinstance(value, list | tuple):
        value = [[value]]
    if cols == 1 and isinstance(value, list | tuple) and value and not isinstance(value[0], list | tuple):
        value = [[v] for v in value]
    if not isinstance(value, list | tuple) or len(value) != rows or any(
        not isinstance(row, list | tuple) or len(row) != cols for row in value
    ):
        shape = _shape_of(value)
        raise ShapeError(f"model {model!r}: {label} must be {rows}x{cols}, got {shape}")
    return [list(row) for row in value]


def _shape_of(value: Any) -> str:
    if isinstance(value, list | tuple):
        lengths = sorted({len(r) if isinstance(r, list | tuple) else 1 for r in value})
        return f"{len(value)} row(s) of length {'/'.join(map(str, lengths)) or 0}"
    return f"a scalar {value!r}"


class ManipulatorSystem(ManipulatorParameters, SymbolicModel):
    """Second-order model M(q) q'' = Q(t, q, q', u) - c(t, q, q'); state ``[q..., q_dot...]``.

    Parameters
    ----------
    coordinates
        Names of the generalized coordinates q; velocities are named ``<q>_dot``.
    inputs
        Names of the inputs u.
    mass
        M(q): n x n expressions in the coordinates and parameters (symmetric positive definite).
    forces
        Q: n expressions in t, q, q', u and parameters (generalized forces).
    bias
        c: n expressions in t, q, q' and parameters.
    parameters, outputs, name
        As for :class:`~robodyn.model.kinds.symbolic.SymbolicSystem`.
    """

    @property
    def order(self) -> int:
        return 2

    def __init__(
        self,
        coordinates: Sequence[str],
        inputs: Sequence[str] | None,
        mass: Any,
        forces: Any,
        bias: Any,
        *,
        parameters: Mapping[str, float] | None = None,
        outputs: Mapping[str, ExprLike] | None = None,
        name: str = "model",
    ):
        self.coordinates = name_tuple(coordinates, "coordinates")
        self.velocities = tuple(velocity_name(c) for c in self.coordinates)
        self._setup_symbols(name, self.coordinates + self.velocities, inputs, parameters, tuple(outputs or ()))
        n = len(self.coordinates)
        self.q_symbols = self.x_symbols[:n]
        self.qd_symbols = self.x_symbols[n:]
        in_q = (*self.q_symbols, *self.p_symbols)
        self.mass_expr = sympy.Matrix(
            [[self.expression(e, f"mass[{i}][{j}]", in_q) for j, e in enumerate(row)]
             for i, row in enumerate(_symbol_matrix(mass, n, n, "mass matrix", name))]
        )
        everything = (*self.x_symbols, *self.u_symbols, *self.p_symbols, TIME)
        self.forces_expr = sympy.Matrix(
            [self.expression(r[0], f"forces.{c}", everything)
             for c, r in zip(self.coordinates, _symbol_matrix(forces, n, 1, "forces", name))]
        )
        no_input = (*self.x_symbols, *self.p_symbols, TIME)
        self.bias_expr = sympy.Matrix(
            [self.expression(r[0], f"bias.{c}", no_input)
             for c, r in zip(self.coordinates, _symbol_matrix(bias, n, 1, "bias", name))]
        )
        self._setup_outputs(outputs)
        self._check_plausible()

    #: The model-file key the mass matrix comes from, and what to change when it is not positive definite.
    _mass_key: str = "mass"
    _mass_fix: str = "masses and inertias must be positive: check the mass matrix and the parameters"

    def _check_plausible(self, context: str = "") -> None:
        """InputError unless M is symmetric positive definite with the default parameters (at a generic q:
        robodyn.model.plausibility, the one check of every kind); ``context`` follows the model's name."""
        p, zero_u = self.parameter_vector(), np.zeros(self.n_inputs)

        def mass_at(q: np.ndarray) -> np.ndarray:
            return self.mass_raw(0.0, np.concatenate([q, np.zeros(self.n_coordinates)]), zero_u, p)

        check_mass(mass_at, self.coordinates, where=f"model {self.name!r}{context}", fix=self._mass_fix,
                   key=self._mass_key, constant=self._mass_is_constant)

    @property
    def _mass_is_constant(self) -> bool:
        return not (self.mass_expr.free_symbols & set(self.q_symbols))

    @property
    def n_coordinates(self) -> int:
        return len(self.coordinates)

    @functools.cached_property
    def rhs_expr(self) -> sympy.Matrix:
        """Q - c, the right-hand side of M(q) q'' = Q - c, shape (n, 1)."""
        return self.forces_expr - self.bias_expr

    @functools.cached_property
    def _mass_numeric(self) -> NumericFunction:
        return self.lambdify(self.mass_expr)

    @functools.cached_property
    def _rhs_numeric(self) -> NumericFunction:
        return self.lambdify(self.rhs_expr)

    @functools.cached_property
    def _mass_rhs_columns(self) -> Callable[..., Any]:
        return self.columns([*self.mass_expr, *self.rhs_expr])

    def f_many(self, t: np.ndarray, x: np.ndarray, u: np.ndarray, p: Vector) -> np.ndarray:
        """x' = (q', q'') at T points at once: M(q) and r in one vectorized call, q'' by a batched solve; a point
        where M cannot be solved is left to :meth:`f_raw` (which names q), by the loop of the base class."""
        c, T = self.n_coordinates, t.shape[0]
        columns = [np.broadcast_to(np.asarray(v, dtype=float), (T,)) for v in self._mass_rhs_columns(t, x.T, u.T, p)]
        mass = np.stack(columns[: c * c], axis=1).reshape(T, c, c)
        rhs = np.stack(columns[c * c:], axis=1)
        try:
            accel = np.linalg.solve(mass, rhs[..., None])[..., 0]
        except np.linalg.LinAlgError:
            return super().f_many(t, x, u, p)
        if not np.all(np.isfinite(accel)):
            return super().f_many(t, x, u, p)
        return np.concatenate([x[:, c:], accel], axis=1)

    def mass_matrix(self, q: Values, params: Values | None = None) -> np.ndarray:
        """M(q) at coordinates ``q`` (array ``(n,)`` or mapping), shape ``(n, n)``."""
        qv = np.zeros(self.n_states)
        qv[: self.n_coordinates] = values_to_vector(q, self.coordinates, "coordinate", default=0.0)
        return self._mass_numeric(0.0, qv, self.input_vector(None), self.parameter_vector(params))

    def _factor(self, mass: np.ndarray, x: Vector) -> tuple[np.ndarray, bool]:
        """Cholesky factor of M(q), or SingularMatrixError naming q."""
        import scipy.linalg  # here, not at module level: importing it costs ~0.2 s at start-up

        try:
            return scipy.linalg.cho_factor(mass, lower=True, check_finite=True)
        except (np.linalg.LinAlgError, ValueError):
            q = dict(zip(self.coordinates, x[: self.n_coordinates].tolist()))
            raise SingularMatrixError(
                f"model {self.name!r}: mass matrix M(q) is not positive definite at q={q} "
                f"(M={mass.tolist()}): check masses, inertias and lengths among the parameters"
            ) from None

    def acceleration(self, t: float, x: Vector, u: Vector, p: Vector) -> Vector:
        """q'' from the forward dynamics at a point (raw float64 vectors in model order), shape ``(n,)``."""
        import scipy.linalg

        mass = self._mass_numeric(t, x, u, p)
        rhs = self._rhs_numeric(t, x, u, p).reshape(-1)
        return scipy.linalg.cho_solve(self._factor(mass, x), rhs)

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return np.concatenate([x[self.n_coordinates:], self.acceleration(t, x, u, p)])

    # --- exact Jacobians (no symbolic inverse) -------------------------------------------------------
    @functools.cached_property
    def _derivatives_numeric(self) -> NumericFunction:
        """[dr/dx | dr/du | dM/dq] stacked: (n, 2n + m + n*n), column block k of dM/dq is dM/dq_k."""
        n = self.n_coordinates
        dr_dx = self.rhs_expr.jacobian(self.x_symbols)
        dr_du = self.rhs_expr.jacobian(self.u_symbols) if self.u_symbols else sympy.zeros(n, 0)
        dmass = [self.mass_expr.diff(q) for q in self.q_symbols]
        return self.lambdify(sympy.Matrix.hstack(dr_dx, dr_du, *dmass))

    def jacobians(self, t: float, x: Any, u: Any = None, params: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Exact df/dx ``(2n, 2n)`` and df/du ``(2n, m)`` at a point, without inverting M symbolically.

        With M(q) a = r(t, q, q', u) and a = q'': da/dx = M^-1 (dr/dx - [dM/dq_k a]_k) and
        da/du = M^-1 dr/du, M^-1 applied by a Cholesky solve at the point.
        """
        import scipy.linalg

        time, xv, uv, p = self._arguments(t, x, u, params)
        n, m = self.n_coordinates, self.n_inputs
        mass = self._mass_numeric(time, xv, uv, p)
        factor = self._factor(mass, xv)
        accel = scipy.linalg.cho_solve(factor, self._rhs_numeric(time, xv, uv, p).reshape(-1))
        stacked = self._derivatives_numeric(time, xv, uv, p)
        dr_dx, dr_du = stacked[:, : 2 * n], stacked[:, 2 * n: 2 * n + m]
        dmass = stacked[:, 2 * n + m:].reshape(n, n, n, order="F")  # [i, j, k] = dM_ij / dq_k
        dr_dx = dr_dx.copy()
        dr_dx[:, :n] -= np.einsum("ijk,j->ik", dmass, accel)
        dfdx = np.zeros((2 * n, 2 * n))
        dfdx[:n, n:] = np.eye(n)
        dfdx[n:, :] = scipy.linalg.cho_solve(factor, dr_dx)
        dfdu = np.zeros((2 * n, m))
        if m:
            dfdu[n:, :] = scipy.linalg.cho_solve(factor, dr_du)
        return dfdx, dfdu

    def dfdx(self, t: float, x: Any, u: Any = None, params: Any = None) -> np.ndarray:
        """Exact df/dx at a point, ``(n_states, n_states)`` (see :meth:`jacobians`)."""
        return self.jacobians(t, x, u, params)[0]

    def dfdu(self, t: float, x: Any, u: Any = None, params: Any = None) -> np.ndarray:
        """Exact df/du at a point, ``(n_states, n_inputs)`` (see :meth:`jacobians`)."""
        return self.jacobians(t, x, u, params)[1]

    # --- the model contract (robodyn.model.protocol) ---------------------------------------------------
    kind = "manipulator"

    @property
    def jacobian_method(self) -> str:
        return "manipulator"

    def jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        return self.jacobians(t, x, u, p)

    def linearization_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        return symbolic_linearization(self, t, x, u, p)

    def kernel_rhs_source(self) -> str:
        from robodyn.codegen.source import manipulator_rhs_source

        n = self.n_coordinates
        return manipulator_rhs_source(self, [narrow_integers(self.mass_expr[i, j]) for i in range(n)
                                             for j in range(i + 1)], [narrow_integers(e) for e in self.rhs_expr])

    def kernel_jacobian_source(self) -> str:
        from robodyn.codegen.source import manipulator_jacobian_source

        rhs = self.rhs_expr
        variables = (*self.x_symbols, *self.u_symbols)
        derivative = rhs.jacobian(variables) if variables else sympy.zeros(self.n_coordinates, 0)
        def narrow(entries: Any) -> list[Any]:
            return [narrow_integers(e) for e in entries]

        return manipulator_jacobian_source(self, narrow(self.mass_expr), narrow(rhs), narrow(derivative),
                                           [narrow(self.mass_expr.diff(q)) for q in self.q_symbols])

    def manipulator(self) -> ManipulatorSystem:
        return self

    def exported_functions(self) -> Any:
        """f, h, linearize, mass, rnea and aba on a tape from M, F and b, for C export (robodyn.model.exported)."""
        from robodyn.model.exported import symbolic_exported_functions

        return symbolic_exported_functions(self, mass=self.mass_expr, forces=self.forces_expr, bias=self.bias_expr)

    def with_parameters(self, params: Mapping[str, float] | None = None, **values: float) -> Self:
        """:meth:`Model.with_parameters`; an override that makes M not positive definite (a negative mass, say) is
        bad input (InputError), checked as the defaults are when the model is built (robodyn.model.plausibility)."""
        clone = super().with_parameters(params, **values)
        if clone is not self:
            clone._check_parameters()
        return clone

    def _check_parameters(self) -> None:
        """The checks of the model's own parameter values (after :meth:`with_parameters`)."""
        self._check_plausible(f" with the parameters {dict(self.parameters)}")

    def mass_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """M(q) ``(n, n)`` at a validated point."""
        return np.asarray(self._mass_numeric(t, x, u, p), dtype=float)

    def rhs_terms(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        """r = Q - c ``(n,)`` and dr/du ``(n, m)`` at a validated point."""
        r = np.asarray(self._rhs_numeric(t, x, u, p), dtype=float).reshape(-1)
        return r, np.asarray(self._input_derivative_numeric(t, x, u, p), dtype=float).reshape(self.n_coordinates,
                                                                                                self.n_inputs)

    @functools.cached_property
    def _input_derivative_numeric(self) -> NumericFunction:
        n = self.n_coordinates
        return self.lambdify(self.rhs_expr.jacobian(self.u_symbols) if self.u_symbols else sympy.zeros(n, 0))

    def check_mass(self, mass: np.ndarray, x: Vector) -> None:
        """SingularMatrixError naming q when ``mass`` is not positive definite."""
        self._factor(mass, x)

    def explicit_form(self, max_coordinates: int) -> ExplicitForm | None:
        """x' = [q', M^-1 r] with M inverted symbolically (adjugate / determinant): only for a few coordinates."""
        if self.n_coordinates > max_coordinates:
            return None
        mass = self.mass_expr
        inverse = sympy.Matrix([[1 / mass[0, 0]]]) if mass.shape == (1, 1) else (
            mass.adjugate() / mass.det(method="berkowitz"))
        f = sympy.Matrix.vstack(sympy.Matrix(self.qd_symbols), inverse * self.rhs_expr)
        return ExplicitForm(f, self.x_symbols, self.u_symbols, self.p_symbols, f.jacobian(self.x_symbols))

    def _labelled_equations(self) -> list[Equation] | None:
        n = self.n_coordinates
        rows = [Equation(f"the mass matrix entry M[{i}][{j}]", self.mass_expr[i, j], "mass")
                for i in range(n) for j in range(n)]
        return rows + [Equation(f"the equation for {c}''", e) for c, e in zip(self.coordinates, self.rhs_expr)]

    def equation_terms(self) -> list[tuple[str, Any]] | None:
        """M(q), C(q, q') q' and g(q) of M q'' + C q' + g = Q as closed forms, for ``robodyn show``: g is
        the bias at q' = 0 (gravity and springs), C q' the rest (Coriolis, centrifugal, friction)."""
        at_rest = {v: 0 for v in self.qd_symbols}
        gravity = self.bias_expr.subs(at_rest)
        coriolis = (self.bias_expr - gravity).applyfunc(_expanded_or_not)
        return [("M(q)", self.mass_expr), ("C(q, q') q'", coriolis), ("g(q)", gravity), ("Q", self.forces_expr)]

    # --- printing -----------------------------------------------------------------------------------
    @functools.cached_property
    def _acceleration_symbols(self) -> tuple[sympy.Symbol, ...]:
        return tuple(symbol(f"{c}''") for c in self.coordinates)

    def equations(self) -> list[tuple[str, sympy.Expr]]:
        """``q' = q_dot`` for each coordinate, then each row of M(q) q'' = Q - c."""
        kinematic = [(f"{c}'", v) for c, v in zip(self.coordinates, self.qd_symbols)]
        accelerations = sympy.Matrix(self._acceleration_symbols)
        lhs = self.mass_expr * accelerations
        return kinematic + [(shown(left, sympy.sstr), right) for left, right in zip(lhs, self.rhs_expr)]

    def latex_equations(self) -> list[str]:
        names = dict(self.latex_symbol_names)
        names.update({a: latex_name(f"{c}_dot_dot") for a, c in zip(self._acceleration_symbols, self.coordinates)})
        lhs = self.mass_expr * sympy.Matrix(self._acceleration_symbols)

        def latex(expr: sympy.Expr) -> str:
            return shown(expr, lambda e: latex_of(e, names), latex=True)

        return [f"{latex(left)} &= {latex(right)}" for left, right in zip(lhs, self.rhs_expr)]


def _expanded_or_not(expr: sympy.Expr) -> sympy.Expr:
    expanded = expand_bounded(expr)
    return expr if expanded is None else expanded


@dataclass(frozen=True, slots=True)
class ScalarDamping:
    """Natural frequency, damping ratio and regime of a scalar joint J q'' + b q' + k q = u.

    ``omega_n`` and ``zeta`` are ``None`` when undefined (k = 0: no restoring force; k < 0).
    """

    omega_n: float | None
    zeta: float | None
    regime: str

    @staticmethod
    def from_coefficients(J: float, b: float, k: float) -> ScalarDamping:
        """Classify J q'' + b q' + k q: omega_n = sqrt(k/J), zeta = b / (2 sqrt(k J)).

        Regimes: ``underdamped`` (0 <= zeta < 1), ``critically damped`` (|zeta - 1| <=
        :data:`CRITICAL_DAMPING_TOLERANCE`), ``overdamped``, ``no restoring force`` (k = 0),
        ``unstable`` (k < 0 or zeta < 0).
        """
        if not J > 0:
            raise InputError(f"inertia J must be positive, got {J}: check the mass matrix")
        if k == 0:
            return ScalarDamping(None, None, "no restoring force")
        if k < 0:
            return ScalarDamping(None, None, "unstable")
        omega_n = math.sqrt(k / J)
        zeta = b / (2.0 * math.sqrt(k * J))
        if zeta < 0:
            regime = "unstable"
        elif abs(zeta - 1.0) <= CRITICAL_DAMPING_TOLERANCE:
            regime = "critically damped"
        elif zeta < 1.0:
            regime = "underdamped"
        else:
            regime = "overdamped"
        return ScalarDamping(omega_n, zeta, regime)

    def _repr_html_(self) -> str:
        from robodyn.display import result_html

        return result_html(self, f"Scalar joint: {self.regime}", units={"omega_n": "rad/s", "omega_d": "rad/s"})


class MechanicalSystem(ManipulatorSystem):
    """Linear mechanical system M q'' + B q' + K q = F u with constant (parameter-dependent) matrices.

    Parameters
    ----------
    coordinates, inputs
        Names; velocities are ``<q>_dot`` and the state is ``[q..., q_dot...]``.
    mass, damping, stiffness : (n, n)
        M, B, K as numbers or expressions in the parameters; B and K default to zero.
    input_matrix : (n, m), optional
        F; defaults to the identity (then m must equal n).
    parameters, outputs, name
        As for :class:`~robodyn.model.kinds.symbolic.SymbolicSystem`.

    Examples
    --------
    >>> joint = MechanicalSystem(["q"], ["u"], mass=[["J"]], damping=[["b"]], stiffness=[["k"]],
    ...                          parameters={"J": 0.01, "b": 0.1, "k": 1.0})
    >>> joint.damping_info().regime
    'underdamped'
    """

    def __init__(
        self,
        coordinates: Sequence[str],
        inputs: Sequence[str] | None,
        mass: Any,
        damping: Any = None,
        stiffness: Any = None,
        input_matrix: Any = None,
        *,
        parameters: Mapping[str, float] | None = None,
        outputs: Mapping[str, ExprLike] | None = None,
        name: str = "mechanical",
    ):
        coords = name_tuple(coordinates, "coordinates")
        ins = name_tuple(inputs, "inputs")
        n, m = len(coords), len(ins)
        if input_matrix is None:
            if m != n:
                raise ShapeError(
                    f"model {name!r}: {m} input(s) for {n} coordinate(s): give input_matrix (F, {n}x{m}) "
                    "or one input per coordinate"
                )
            input_matrix = [[int(i == j) for j in range(n)] for i in range(n)]
        zeros = [[0] * n for _ in range(n)]
        given = {"mass": mass, "damping": damping if damping is not None else zeros,
                 "stiffness": stiffness if stiffness is not None else zeros, "input_matrix": input_matrix}
        self._setup_symbols(name, [*coords, *map(velocity_name, coords)], ins, parameters, tuple(outputs or ()))
        only_params = self.p_symbols
        shapes = {"mass": (n, n), "damping": (n, n), "stiffness": (n, n), "input_matrix": (n, m)}
        matrices = {
            key: sympy.Matrix(n, shapes[key][1], [
                self.expression(e, f"{key}[{i}][{j}]", only_params)
                for i, row in enumerate(_symbol_matrix(value, *shapes[key], key, name))
                for j, e in enumerate(row)
            ]) for key, value in given.items()
        }
        self.damping_expr = matrices["damping"]
        self.stiffness_expr = matrices["stiffness"]
        self.input_matrix_expr = matrices["input_matrix"]
        q = sympy.Matrix(self.x_symbols[:n])
        qd = sympy.Matrix(self.x_symbols[n:])
        forces = self.input_matrix_expr * sympy.Matrix(self.u_symbols) if m else sympy.zeros(n, 1)
        bias = self.damping_expr * qd + self.stiffness_expr * q
        super().__init__(coords, ins, matrices["mass"], forces, bias,
                         parameters=parameters, outputs=outputs, name=name)

    @functools.cached_property
    def _matrices_numeric(self) -> NumericFunction:
        stacked = self.mass_expr.row_join(self.damping_expr).row_join(self.stiffness_expr)
        return self.lambdify(stacked.row_join(self.input_matrix_expr))

    def numeric_matrices(self, params: Values | None = None) -> tuple[np.ndarray, ...]:
        """``(M, B, K, F)`` as float arrays for the given parameters (defaults otherwise)."""
        n = self.n_coordinates
        p = self.parameter_vector(params)
        stacked = self._matrices_numeric(0.0, np.zeros(self.n_states), np.zeros(self.n_inputs), p)
        return stacked[:, :n], stacked[:, n:2 * n], stacked[:, 2 * n:3 * n], stacked[:, 3 * n:]

    def to_linear(self, params: Values | None = None) -> LinearSystem:
        """The exact first-order form A = [[0, I], [-M^-1 K, -M^-1 B]], B = [[0], [M^-1 F]].

        C and D come from the outputs, which must be linear in the state and inputs.
        """
        import scipy.linalg

        mass, damping, stiffness, forcing = self.numeric_matrices(params)
        n, m = self.n_coordinates, self.n_inputs
        try:
            factor = scipy.linalg.cho_factor(mass, lower=True)
        except np.linalg.LinAlgError:
            raise SingularMatrixError(
                f"model {self.name!r}: mass matrix {mass.tolist()} is not positive definite with the parameters "
                f"{dict(zip(self.parameters, self.parameter_vector(params).tolist()))}: masses and inertias "
                "must be positive"
            ) from None
        A = np.block([[np.zeros((n, n)), np.eye(n)],
                      [-scipy.linalg.cho_solve(factor, stiffness), -scipy.linalg.cho_solve(factor, damping)]])
        B = np.vstack([np.zeros((n, m)), scipy.linalg.cho_solve(factor, forcing)]) if m else np.zeros((2 * n, 0))
        symbols = (*self.x_symbols, *self.u_symbols)
        if any(s in symbols for s in self.dhdx_expr.free_symbols | self.dhdu_expr.free_symbols):
            raise InputError(
                f"model {self.name!r}: outputs are nonlinear in the state: linearize the model instead"
            )
        x0, u0 = np.zeros(self.n_states), np.zeros(m)
        p = self.parameter_vector(params)
        C = np.asarray(self.dhdx(0.0, x0, u0, p), dtype=float)
        D = np.asarray(self.dhdu(0.0, x0, u0, p), dtype=float).reshape(self.n_outputs, m)
        return LinearSystem(A, B, C, D, states=self.states, inputs=self.inputs, outputs=self.outputs,
                            name=self.name)

    # --- the model contract (robodyn.model.protocol) ---------------------------------------------------
    kind = "mechanical"

    def linear_model(self, params: Values | None = None) -> LinearSystem:
        return self.to_linear(params)

    def mechanical_matrices(self, params: Values | None = None) -> tuple[np.ndarray, ...]:
        return self.numeric_matrices(params)

    def linear_by_construction(self) -> str:
        return "M q'' + B q' + K q = F u with constant matrices is linear in the state and inputs"

    def equation_terms(self) -> list[tuple[str, Any]]:
        """M, the damping B q' (velocity-dependent), the stiffness K q (position-dependent) and F u of
        M q'' + B q' + K q = F u, for ``robodyn show`` (no Coriolis or gravity terms: the matrices are constant)."""
        n = self.n_coordinates
        q, qd = sympy.Matrix(self.x_symbols[:n]), sympy.Matrix(self.x_symbols[n:])
        return [("M", self.mass_expr), ("B q' (damping)", self.damping_expr * qd),
                ("K q (stiffness)", self.stiffness_expr * q), ("F u", self.forces_expr)]

    def scalar_damping(self) -> ScalarDamping | None:
        """omega_n, zeta and regime when the model has one coordinate, else None."""
        return self.damping_info() if self.n_coordinates == 1 else None

    def damping_info(self, params: Values | None = None) -> ScalarDamping:
        """omega_n, zeta and regime of a single-coordinate system (J q'' + b q' + k q = F u)."""
        if self.n_coordinates != 1:
            raise InputError(
                f"model {self.name!r}: omega_n and zeta are defined for one coordinate, this model has "
                f"{self.n_coordinates}: analyse its modes instead"
            )
        mass, damping, stiffness, _ = self.numeric_matrices(params)
        return ScalarDamping.from_coefficients(float(mass[0, 0]), float(damping[0, 0]), float(stiffness[0, 0]))

    @property
    def omega_n(self) -> float | None:
        """Natural frequency sqrt(k/J) with the default parameters (``None`` when k <= 0)."""
        return self.damping_info().omega_n

    @property
    def zeta(self) -> float | None:
        """Damping ratio b / (2 sqrt(k J)) with the default parameters (``None`` when k <= 0)."""
        return self.damping_info().zeta

    @property
    def regime(self) -> str:
        """``underdamped``, ``critically damped``, ``overdamped``, ``no restoring force`` or ``unstable``."""
        return self.damping_info().regime
