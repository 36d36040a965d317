"""Symbolic models: sympy expressions for f and h, exact Jacobians, LaTeX and pretty printing.

:class:`SymbolicModel` holds what every symbolic model shares — the symbols for states, inputs and
parameters, the output expressions, numeric evaluation through ``sympy.lambdify`` with common
subexpression elimination, and naming for LaTeX. :class:`SymbolicSystem` is the explicit first-order
form x' = f(t, x, u, p) with its exact Jacobians df/dx, df/du, dh/dx, dh/du.

Expressions given as text are parsed by the safe parser (:mod:`robodyn.model.expr`), never by sympify.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

import numpy as np
import sympy

from robodyn.base.budget import shown
from robodyn.base.errors import InputError
from robodyn.codegen.printer import lambdify_entries, numeric_form, numpy_printer
from robodyn.display.latex import latex_name, latex_of
from robodyn.model.expr import TIME, narrow_integers, parse_expression, symbol
from robodyn.model.kinds.symbolic_form import Equation, SymbolicForm, linearity, time_dependence
from robodyn.model.kinds.symbolic_jacobians import symbolic_linearization
from robodyn.model.protocol import ExplicitForm
from robodyn.model.system import Model, Vector, check_names, default_values, name_tuple

__all__ = ["SymbolicModel", "SymbolicSystem", "latex_name", "latex_of"]

ExprLike: TypeAlias = sympy.Expr | str | float | int
NumericFunction: TypeAlias = Callable[[float, Vector, Vector, Vector], Any]


def _jacobian(column: sympy.Matrix, symbols: Sequence[sympy.Symbol]) -> sympy.Matrix:
    """d column / d symbols, shape (rows, len(symbols)); zeros when either is empty (a static block has no f)."""
    if column.rows == 0 or not symbols:
        return sympy.zeros(column.rows, len(symbols))
    return column.jacobian(symbols)


class SymbolicModel(Model):
    """Shared machinery of the symbolic models (not instantiated directly).

    Subclasses call :meth:`_setup_symbols` and :meth:`_setup_outputs`, and implement ``_f``.
    """

    t_symbol: sympy.Symbol = TIME

    def _setup_symbols(
        self,
        name: str,
        states: Sequence[str],
        inputs: Sequence[str] | None,
        parameters: Mapping[str, float] | None,
        output_names: Sequence[str],
        allow_empty: bool = False,
    ) -> None:
        self.name = name
        self.states = name_tuple(states, "states")
        self.inputs = name_tuple(inputs, "inputs")
        self.parameters = default_values(parameters, f"model {name!r}")
        groups = {"states": self.states, "inputs": self.inputs, "parameters": tuple(self.parameters)}
        if output_names:
            groups["outputs"] = tuple(output_names)
        check_names(groups, where=f"model {name!r}")
        if not self.states and not output_names and not allow_empty:
            raise InputError(f"model {name!r}: a model needs at least one state (or, for a static block such as a "
                             "gain, outputs: y = h(t, u))")
        self.x_symbols = tuple(symbol(s) for s in self.states)
        self.u_symbols = tuple(symbol(s) for s in self.inputs)
        self.p_symbols = tuple(symbol(s) for s in self.parameters)
        self._symbol_table: dict[str, sympy.Expr] = {
            s.name: s for s in (*self.x_symbols, *self.u_symbols, *self.p_symbols)
        }

    def _setup_outputs(self, outputs: Mapping[str, ExprLike] | None) -> None:
        if outputs:
            self.outputs = tuple(outputs)
            self.h_expr = sympy.Matrix([self.expression(e, f"outputs.{k}") for k, e in outputs.items()])
        else:
            self.outputs = self.states
            self.h_expr = sympy.Matrix(self.x_symbols)

    def expression(self, value: ExprLike, where: str, allowed: Sequence[sympy.Symbol] | None = None) -> Any:
        """Turn ``value`` (text, number or sympy expression) into a sympy expression in this model's symbols.

        Text goes through the safe parser. Symbols of sympy expressions are matched to the model's by
        name (so ``sympy.Symbol("q")`` works as well as the real-valued symbol robodyn uses).
        ``allowed`` restricts which symbols may appear (default: states, inputs, parameters and t).
        """
        table = self._symbol_table if allowed is None else {s.name: s for s in allowed}
        if isinstance(value, str):
            return parse_expression(value, table, where=f"{self.name}: {where}")
        if isinstance(value, sympy.Basic):
            expr = value
        elif isinstance(value, int | float | np.number) and not isinstance(value, bool):
            expr = parse_expression(float(value) if isinstance(value, float | np.floating) else int(value),
                                    {}, where=f"{self.name}: {where}")
        else:
            raise InputError(f"{self.name}: {where}: expected an expression, got {value!r}")
        replacements = {}
        for free in expr.free_symbols:
            ours = TIME if free.name == TIME.name else table.get(free.name)
            if ours is None:
                known = ", ".join(table) or "none"
                raise InputError(f"{self.name}: {where}: unknown symbol {free.name!r} (known: {known}, t)")
            if ours is not free:  # xreplace rebuilds every node a rule names, even to the same symbol
                replacements[free] = ours
        return expr.xreplace(replacements) if replacements else expr

    # --- numeric evaluation -------------------------------------------------------------------------
    def lambdify(self, exprs: sympy.Matrix) -> Callable[[float, Vector, Vector, Vector], np.ndarray]:
        """Compile a matrix of expressions into ``fn(t, x, u, p) -> ndarray`` of the same shape (numpy, cse)."""
        shape = exprs.shape
        entries = lambdify_entries((self.t_symbol, self.x_symbols, self.u_symbols, self.p_symbols), list(exprs))

        def evaluate(t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
            return entries(t, x, u, p).reshape(shape)

        return evaluate

    @functools.cached_property
    def _h_numeric(self) -> NumericFunction:
        return self.lambdify(self.h_expr)

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self._h_numeric(t, x, u, p).reshape(-1)

    @functools.cached_property
    def _h_columns(self) -> Callable[..., Any]:
        return self.columns(list(self.h_expr))

    def columns(self, exprs: Sequence[Any]) -> Callable[..., Any]:
        """``fn(t, x (n, T), u (m, T), p) -> [value (T,) or a scalar, ...]``: ``exprs`` evaluated at T points at once
        (numpy broadcasting; a constant entry comes back as a scalar)."""
        return sympy.lambdify((self.t_symbol, self.x_symbols, self.u_symbols, self.p_symbols),
                              [numeric_form(e) for e in exprs],
                              modules="numpy", cse=True, printer=numpy_printer(), dummify=True)

    @functools.cached_property
    def outputs_are_states(self) -> bool:
        """Whether y = x (no outputs declared)."""
        return self.outputs == self.states and self.h_expr == sympy.Matrix(self.x_symbols)

    def h_many(self, t: np.ndarray, x: np.ndarray, u: np.ndarray, p: Any) -> np.ndarray:
        """Outputs along a trajectory, vectorized: t ``(T,)``, x ``(T, n)``, u ``(T, m)`` -> y ``(T, p)``;
        ``x`` itself when y = x."""
        if self.outputs_are_states:
            return x
        columns = self._h_columns(t, x.T, u.T, p)
        return np.stack([np.broadcast_to(np.asarray(c, dtype=float), t.shape) for c in columns], axis=1)

    # --- output Jacobians ---------------------------------------------------------------------------
    @functools.cached_property
    def dhdx_expr(self) -> sympy.Matrix:
        """Exact dh/dx, shape (n_outputs, n_states)."""
        return _jacobian(self.h_expr, self.x_symbols)

    @functools.cached_property
    def dhdu_expr(self) -> sympy.Matrix:
        """Exact dh/du, shape (n_outputs, n_inputs)."""
        return _jacobian(self.h_expr, self.u_symbols)

    @functools.cached_property
    def dhdp_expr(self) -> sympy.Matrix:
        """Exact dh/dp, shape (n_outputs, n_params) (derived parameters are substituted: the chain rule holds)."""
        return _jacobian(self.h_expr, self.p_symbols)

    def dhdx(self, t: float, x: Any, u: Any = None, params: Any = None) -> np.ndarray:
        """dh/dx evaluated at a point, ``(n_outputs, n_states)``."""
        return self._numeric_jacobian("dhdx", t, x, u, params)

    def dhdu(self, t: float, x: Any, u: Any = None, params: Any = None) -> np.ndarray:
        """dh/du evaluated at a point, ``(n_outputs, n_inputs)``."""
        return self._numeric_jacobian("dhdu", t, x, u, params)

    def _numeric_jacobian(self, which: str, t: float, x: Any, u: Any, params: Any) -> np.ndarray:
        return self._raw_jacobian(which, *self._arguments(t, x, u, params))

    # --- the model contract (robodyn.model.protocol) ---------------------------------------------------
    def output_jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        if self.outputs_are_states:
            return self._identity_outputs
        return self._raw_jacobian("dhdx", t, x, u, p), self._raw_jacobian("dhdu", t, x, u, p)

    @functools.cached_property
    def _identity_outputs(self) -> tuple[np.ndarray, np.ndarray]:
        """C = I, D = 0 (read-only) for y = x."""
        C, D = np.eye(self.n_states), np.zeros((self.n_states, self.n_inputs))
        C.setflags(write=False)
        D.setflags(write=False)
        return C, D

    def output_parameter_jacobian_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray | None:
        if self.outputs_are_states:
            return np.zeros((self.n_states, len(self.parameters)))
        return self._raw_jacobian("dhdp", t, x, u, p).reshape(self.n_outputs, len(self.parameters))

    def _raw_jacobian(self, which: str, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        cache = self.__dict__.setdefault("_jacobian_functions", {})
        if which not in cache:
            cache[which] = self.lambdify(getattr(self, f"{which}_expr"))
        return np.asarray(cache[which](t, x, u, p))

    @property
    def compilable(self) -> bool:
        return True

    def kernel_output_source(self) -> str:
        from robodyn.codegen.source import output_source

        return output_source(self, [narrow_integers(e) for e in self.h_expr])

    def switching_expressions(self) -> tuple[Any, ...]:
        """The corners a library block declares (robodyn.diagrams.blocks.library), in its symbols; () otherwise."""
        found: tuple[Any, ...] = self.__dict__.get("_switching", ())
        return found

    def output_expressions(self) -> list[Any]:
        """The output expressions h, in this model's symbols."""
        return list(self.h_expr)

    def symbol_table(self) -> SymbolicModel:
        """The model itself: ``expression`` parses text in its symbols, ``lambdify`` evaluates them."""
        return self

    def symbolic_form(self) -> SymbolicForm | None:
        """The dynamics and outputs as labelled sympy expressions
        (:class:`robodyn.model.kinds.symbolic_form.SymbolicForm`),
        or None when the model keeps no closed forms."""
        equations = self._labelled_equations()
        if equations is None:
            return None
        return SymbolicForm(self.t_symbol, tuple(self.x_symbols), tuple(self.u_symbols), tuple(equations),
                            tuple(zip(self.outputs, self.h_expr)), self.linear_by_construction())

    def _labelled_equations(self) -> list[Equation] | None:
        """Every expression of the dynamics, labelled (the kinds say which they have)."""
        raise NotImplementedError

    def show_text(self) -> str:
        return self.pretty()

    def latex_text(self) -> str | None:
        return self.latex()

    # --- printing ------------------------------------------------------------------------------------
    @functools.cached_property
    def latex_symbol_names(self) -> dict[sympy.Symbol, str]:
        """LaTeX names for the model's symbols (``q_dot`` -> ``\\dot{q}``)."""
        symbols = (*self.x_symbols, *self.u_symbols, *self.p_symbols)
        return {s: latex_name(s.name) for s in symbols}

    def latex_expr(self, expr: sympy.Basic) -> str:
        """LaTeX of one expression with the model's symbol names (a placeholder beyond the display budget:
        robodyn.base.budget)."""
        return shown(expr, lambda e: latex_of(e, self.latex_symbol_names), latex=True)

    def equations(self) -> list[tuple[str, sympy.Expr]]:
        """The model's equations as ``(left-hand side text, right-hand side expression)`` pairs."""
        raise NotImplementedError

    def latex_equations(self) -> list[str]:
        """One LaTeX line (``lhs &= rhs``) per equation; subclasses override for their own form."""
        return [f"{latex_name(lhs)} &= {self.latex_expr(rhs)}" for lhs, rhs in self.equations()]

    def _aligned_lines(self) -> list[str]:
        """``lhs &= rhs`` for the dynamics, then the outputs."""
        lines = self.latex_equations()
        if self.outputs != self.states:
            lines += [f"{latex_name(n)} &= {self.latex_expr(e)}" for n, e in zip(self.outputs, self.h_expr)]
        return lines

    def latex(self) -> str:
        """The equations (dynamics, then outputs) as a LaTeX ``aligned`` block."""
        return "\\begin{aligned}\n" + " \\\\\n".join(self._aligned_lines()) + "\n\\end{aligned}"

    def latex_lines(self) -> list[str] | None:
        return [line.replace(" &= ", " = ", 1) for line in self._aligned_lines()]

    def pretty(self) -> str:
        """The equations as plain text, one per line (``q' = (u - b*q_dot - k*q)/J``)."""
        lines = [f"{lhs} = {shown(rhs, sympy.sstr)}" for lhs, rhs in self.equations()]
        if self.outputs != self.states:
            lines += [f"{n} = {shown(e, sympy.sstr)}" for n, e in zip(self.outputs, self.h_expr)]
        return "\n".join(lines)

    def __str__(self) -> str:
        return f"{type(self).__name__} {self.name!r}\n{self.pretty()}"


class SymbolicSystem(SymbolicModel):
    """First-order model x' = f(t, x, u, p), y = h(t, x, u, p) given by sympy expressions.

    Parameters
    ----------
    states, inputs
        Names of the states and the inputs.
    f
        The derivative of each state: a mapping state name -> expression, or a sequence in state order.
        Expressions are sympy expressions, numbers, or text (parsed by the safe parser).
    parameters
        Parameter names and default values.
    outputs
        Mapping output name -> expression; without it ``y = x``.
    name
        The model's name.

    Attributes
    ----------
    f_expr : sympy.Matrix (n, 1)
    h_expr : sympy.Matrix (p, 1)
    dfdx_expr, dfdu_expr, dhdx_expr, dhdu_expr : sympy.Matrix
        Exact Jacobians, computed on first use.

    Examples
    --------
    >>> joint = SymbolicSystem(["q", "qd"], ["u"], {"q": "qd", "qd": "(u - b*qd - k*q)/J"},
    ...                        parameters={"J": 0.01, "b": 0.1, "k": 1.0})
    >>> joint.dfdx(0.0, [0.0, 0.0])
    array([[   0.,    1.],
           [-100.,  -10.]])
    """

    def __init__(
        self,
        states: Sequence[str],
        inputs: Sequence[str] | None,
        f: Mapping[str, ExprLike] | Sequence[ExprLike],
        *,
        parameters: Mapping[str, float] | None = None,
        outputs: Mapping[str, ExprLike] | None = None,
        name: str = "model",
    ):
        self._setup_symbols(name, states, inputs, parameters, tuple(outputs or ()))
        if isinstance(f, Mapping):
            unknown = [k for k in f if k not in self.states]
            if unknown:
                raise InputError(f"model {name!r}: dynamics given for {unknown}, which are not states")
            missing = [s for s in self.states if s not in f]
            if missing:
                raise InputError(f"model {name!r}: no dynamics for state(s) {', '.join(missing)}: give x' for each")
            items = [(s, f[s]) for s in self.states]
        else:
            rows = list(f)
            if len(rows) != self.n_states:
                raise InputError(f"model {name!r}: f has {len(rows)} rows for {self.n_states} states")
            items = list(zip(self.states, rows))
        self.f_expr = sympy.Matrix(len(items), 1, [self.expression(e, f"dynamics.{s}") for s, e in items])
        self._setup_outputs(outputs)

    @functools.cached_property
    def _f_numeric(self) -> NumericFunction:
        return self.lambdify(self.f_expr)

    @functools.cached_property
    def _f_columns(self) -> Callable[..., Any]:
        return self.columns(list(self.f_expr))

    def f_many(self, t: np.ndarray, x: np.ndarray, u: np.ndarray, p: Vector) -> np.ndarray:
        with np.errstate(all="ignore"):  # a point where f is undefined gives NaN there, as f_raw would
            columns = self._f_columns(t, x.T, u.T, p)
        return np.stack([np.broadcast_to(np.asarray(c, dtype=float), t.shape) for c in columns], axis=1)

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self._f_numeric(t, x, u, p).reshape(-1)

    @functools.cached_property
    def dfdx_expr(self) -> sympy.Matrix:
        """Exact df/dx, shape (n_states, n_states)."""
        return _jacobian(self.f_expr, self.x_symbols)

    @functools.cached_property
    def dfdu_expr(self) -> sympy.Matrix:
        """Exact df/du, shape (n_states, n_inputs)."""
        return _jacobian(self.f_expr, self.u_symbols)

    @functools.cached_property
    def dfdp_expr(self) -> sympy.Matrix:
        """Exact df/dp, shape (n_states, n_params) (derived parameters are substituted: the chain rule holds)."""
        return _jacobian(self.f_expr, self.p_symbols)

    def dfdx(self, t: float, x: Any, u: Any = None, params: Any = None) -> np.ndarray:
        """df/dx evaluated at a point, ``(n_states, n_states)``."""
        return self._numeric_jacobian("dfdx", t, x, u, params)

    def dfdu(self, t: float, x: Any, u: Any = None, params: Any = None) -> np.ndarray:
        """df/du evaluated at a point, ``(n_states, n_inputs)``."""
        return self._numeric_jacobian("dfdu", t, x, u, params)

    def equations(self) -> list[tuple[str, sympy.Expr]]:
        return [(f"{s}'", e) for s, e in zip(self.states, self.f_expr)]

    # --- the model contract (robodyn.model.protocol) ---------------------------------------------------
    kind = "first_order"

    @property
    def jacobian_method(self) -> str:
        return "symbolic"

    def jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        return self._raw_jacobian("dfdx", t, x, u, p), self._raw_jacobian("dfdu", t, x, u, p)

    def linearization_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        return symbolic_linearization(self, t, x, u, p)

    @property
    def parameter_jacobian_method(self) -> str:
        return "symbolic"

    def parameter_jacobian_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        return self._raw_jacobian("dfdp", t, x, u, p).reshape(self.n_states, len(self.parameters))

    def kernel_parameter_jacobian_source(self) -> str:
        from robodyn.codegen.source import explicit_parameter_source

        return explicit_parameter_source(self, [narrow_integers(e) for e in self.dfdp_expr])

    def kernel_rhs_source(self) -> str:
        from robodyn.codegen.source import explicit_rhs_source

        return explicit_rhs_source(self, [narrow_integers(e) for e in self.f_expr])

    def kernel_jacobian_source(self) -> str:
        from robodyn.codegen.source import explicit_jacobian_source

        return explicit_jacobian_source(self, [narrow_integers(e) for e in self.dfdx_expr],
                                        [narrow_integers(e) for e in self.dfdu_expr])

    def affine_form(self, p: Vector) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(A, B, c) when the expressions are affine in (x, u) and free of t (the decision :func:`robodyn.classify`
        words: :func:`robodyn.model.kinds.symbolic_form.linearity`, cancellation included), else None."""
        form = self.symbolic_form()
        expanded = None if form is None else form.expanded()
        if expanded is None or not linearity(expanded)[0] or time_dependence(expanded):
            return None
        zero_x, zero_u = np.zeros(self.n_states), np.zeros(self.n_inputs)
        A, B = self.jacobians_raw(0.0, zero_x, zero_u, p)
        return A, B, self.f_raw(0.0, zero_x, zero_u, p)

    def exported_functions(self) -> Any:
        """f, h and linearize on a tape from the model's expressions, for C export (robodyn.model.exported);
        None for a discrete-time model (its f is an update map, not a derivative: not exported yet)."""
        if self.sample_period is not None:
            return None
        from robodyn.model.exported import symbolic_exported_functions

        return symbolic_exported_functions(self, list(self.f_expr))

    def explicit_form(self, max_coordinates: int) -> ExplicitForm:
        return ExplicitForm(self.f_expr, self.x_symbols, self.u_symbols, self.p_symbols, self.dfdx_expr)

    def _labelled_equations(self) -> list[Equation]:
        return [Equation(f"the equation for {s}'", e) for s, e in zip(self.states, self.f_expr)]

    def latex_equations(self) -> list[str]:
        return [f"{latex_name(s + '_dot')} &= {self.latex_expr(e)}" for s, e in zip(self.states, self.f_expr)]
