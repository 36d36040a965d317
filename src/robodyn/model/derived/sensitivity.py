"""Forward sensitivities as a model: the state [x, S_1, ..., S_k] with S_j = dx/dtheta_j.

For a parameter theta_j = p_c, S_j' = f_x S_j + df/dp_c with S_j(0) = 0; for an initial state theta_j = x0_i,
S_j' = f_x S_j with S_j(0) = e_i (Hindmarsh et al., "SUNDIALS: Suite of nonlinear and differential/algebraic equation
solvers", ACM TOMS 31(3), 2005, section 3.2; the same equations CVODES integrates). With state feedback u = u_ref -
K (x - x_ref), f_x is the closed loop's f_x + f_u G, G = du/dx = -K, stored after the model's parameters.

:class:`SensitivityModel` answers the model contract for that state, so every integrator, batch, event and output
mechanism of :func:`robodyn.simulate` applies unchanged (robodyn.integrate.paths.sensitivities builds the initial state,
the tolerances and the result): its compiled ``rhs`` is generated from the model's own code
(robodyn.model.derived.sensitivity_code: forward mode on straight-line code, or the model's ``rhs``, ``jac`` and
``jacp``
called), its ``jac`` is the block-diagonal Newton matrix of CVODES's simultaneous corrector, its outputs are y and
dy/dtheta_j = h_x S_j + dh/dp_j (y = x: none). A model without exact derivatives (Python callables) is evaluated
interpreted with central differences along each direction: (f(x + h S_j, u + h G S_j, p + h e_j) - f(x - h S_j,
...)) / 2h, a second-order difference whose step h = eps^(1/3) min(max(1, |x|) / |S_j|, |p_c|) (|p_c| taken as 1
when it is 0) keeps the perturbations of x and of p_c within a relative eps^(1/3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.model.system import Model, Vector

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["DIFFERENCE_STEP", "Direction", "SensitivityModel", "sensitivity_model"]

DIFFERENCE_STEP: Final = float(np.finfo(float).eps) ** (1 / 3)  # Relative step of central differences (~6e-6).


@dataclass(frozen=True, slots=True)
class Direction:
    """One sensitivity: with respect to the parameter or the initial state ``name`` (``kind``: ``"parameter"`` or
    ``"state"``), entry ``index`` of p or x."""

    name: str
    kind: str
    index: int

    @property
    def label(self) -> str:
        """How columns name it: the parameter's name, or the state's with ``(0)`` (its initial value)."""
        return self.name if self.kind == "parameter" else f"{self.name}(0)"


def sensitivity_model(model: ModelContract, directions: Sequence[Direction], feedback: bool) -> SensitivityModel:
    """The sensitivity model of ``model`` for ``directions`` (``feedback``: the inputs are a state feedback), kept in
    the model's memo (its code does not depend on parameter values)."""
    store = model.memo().setdefault("sensitivity models", {})
    key = (tuple(directions), bool(feedback))
    found = store.get(key)
    if found is None:
        found = store[key] = SensitivityModel(model, tuple(directions), bool(feedback))
    assert isinstance(found, SensitivityModel)
    return found


class SensitivityModel(Model):
    """The state [x, S_1, ..., S_k] of ``base`` (see the module docstring); its parameters are the base's, then, with
    ``feedback``, the entries of G = du/dx (m, n) row-major."""

    kind = "sensitivities"

    def __init__(self, base: ModelContract, directions: tuple[Direction, ...], feedback: bool):
        self.base, self.directions, self.feedback = base, directions, feedback
        self.name = base.name
        n, k = base.n_states, len(directions)
        self.n_base, self.k, self.n_p = n, k, len(base.parameters)
        self.states = (*base.states, *(f"d({s})/d({d.label})" for d in directions for s in base.states))
        self.inputs = base.inputs
        self.outputs = self.states if base.outputs_are_states else (
            *base.outputs, *(f"d({y})/d({d.label})" for d in directions for y in base.outputs))
        gains = {f"du({u})/dx({s})": 0.0 for u in base.inputs for s in base.states} if feedback else {}
        self.parameters = MappingProxyType({**base.parameters, **gains})
        self.derived_parameters = base.derived_parameters
        self._exact = base.jacobian_method is not None and (
            base.parameter_jacobian_method is not None or all(d.kind == "state" for d in directions))
        self._pairs = tuple((d.kind, d.index) for d in directions)

    @property
    def method(self) -> str:
        """How df/dx S + df/dp is evaluated: ``exact (<the model's methods>)`` or ``central differences``."""
        if not self._exact:
            return "central differences"
        used = {self.base.jacobian_method, *(self.base.parameter_jacobian_method for d in self.directions
                                             if d.kind == "parameter")}
        return f"exact ({', '.join(sorted(str(u) for u in used))})"

    # --- the pieces of the state ------------------------------------------------------------------------------
    def _split(self, x: Vector, p: Vector) -> tuple[Vector, np.ndarray, Vector, np.ndarray]:
        """x (n,), S (n, k), the base's p and G (m, n) (zeros without feedback)."""
        n, k, m = self.n_base, self.k, self.n_inputs
        S = x[n:n + n * k].reshape(k, n).T
        G = p[self.n_p:].reshape(m, n) if self.feedback else np.zeros((m, n))
        return x[:n], S, p[: self.n_p], G

    def _columns(self, derivative: np.ndarray) -> np.ndarray:
        """The columns of df/dp (or dh/dp) ``(rows, n_p)`` for the directions: zeros for initial states."""
        out = np.zeros((derivative.shape[0], self.k))
        for j, d in enumerate(self.directions):
            if d.kind == "parameter":
                out[:, j] = derivative[:, d.index]
        return out

    def _differences(self, function: Any, t: float, x: Vector, S: np.ndarray, u: Vector, p: Vector,
                     G: np.ndarray) -> np.ndarray:
        """Central differences of ``function(t, x, u, p)`` along each direction (module docstring), ``(rows, k)``."""
        columns = []
        for j, d in enumerate(self.directions):
            size = float(np.max(np.abs(S[:, j]), initial=0.0))
            limits = [max(1.0, float(np.max(np.abs(x), initial=0.0))) / size] if size > 0 else []
            if d.kind == "parameter":
                limits.append(abs(float(p[d.index])) or 1.0)
            h = DIFFERENCE_STEP * min(limits, default=1.0)
            dp = np.zeros_like(p)
            if d.kind == "parameter":
                dp[d.index] = h
            dx, du = h * S[:, j], h * (G @ S[:, j])
            columns.append((np.asarray(function(t, x + dx, u + du, p + dp), dtype=float)
                            - np.asarray(function(t, x - dx, u - du, p - dp), dtype=float)) / (2.0 * h))
        return np.array(columns).T.reshape(-1, self.k)

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        state, S, q, G = self._split(x, p)
        base = self.base
        f = base.f_raw(t, state, u, q)
        if not self._exact:
            rates = self._differences(base.f_raw, t, state, S, u, q, G)
        else:
            A, B = base.jacobians_raw(t, state, u, q)
            rates = (np.asarray(A) + np.asarray(B) @ G) @ S
            if any(d.kind == "parameter" for d in self.directions):
                rates = rates + self._columns(np.asarray(base.parameter_jacobian_raw(t, state, u, q)))
        return np.concatenate([f, rates.T.reshape(-1)])

    @property
    def outputs_are_states(self) -> bool:
        return bool(self.base.outputs_are_states)

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        if self.outputs_are_states:
            return x.copy()
        out_fn = self._compiled_outputs()
        if out_fn is not None:
            out = np.empty(self.n_outputs)
            out_fn(float(t), x, u, p, out)
            return out
        state, S, q, G = self._split(x, p)
        base = self.base
        y = base.h_raw(t, state, u, q)
        jacobians = base.output_jacobians_raw(t, state, u, q) if self._exact else None
        own = base.output_parameter_jacobian_raw(t, state, u, q) if jacobians is not None else None
        if jacobians is None or own is None:
            rates = self._differences(base.h_raw, t, state, S, u, q, G)
        else:
            C, D = (np.asarray(a, dtype=float) for a in jacobians)
            rates = (C + D @ G) @ S + self._columns(np.asarray(own, dtype=float).reshape(base.n_outputs, -1))
        return np.concatenate([y, rates.T.reshape(-1)])

    def _compiled_outputs(self) -> Any:
        memo = self.memo()
        if "compiled outputs" not in memo:
            from robodyn.model.compiled import python_function

            memo["compiled outputs"] = python_function(self, "output") if self.compilable else None
        return memo["compiled outputs"]

    # --- derivatives: the Newton matrix of the implicit methods ----------------------------------------------
    @property
    def jacobian_method(self) -> str | None:
        """``"exact"`` when the generated code is straight-line (its Jacobian by forward mode, f_xx S included),
        ``"block diagonal"`` when the model has an exact Jacobian (CVODES's simultaneous corrector: f_x for x and
        each S_j, without f_xx S: enough for Radau's Newton iteration, not for a Rosenbrock method), else None (the
        implicit methods then difference the rhs)."""
        if self.compilable and self._sources()["exact"]:
            return "exact"
        return "block diagonal" if self.base.jacobian_method is not None else None

    def jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        if self.jacobian_method == "exact":
            from robodyn.model.compiled import python_function

            jac = python_function(self, "jacobian")
            assert jac is not None
            size, m = self.n_states, self.n_inputs
            out = np.empty(size * (size + m))
            jac(float(t), x, u, p, out)
            return out[: size * size].reshape(size, size), out[size * size:].reshape(size, m)
        state, _, q, G = self._split(x, p)
        A, B = (np.asarray(a, dtype=float) for a in self.base.jacobians_raw(t, state, u, q))
        n, size = self.n_base, self.n_states
        full, inputs = np.zeros((size, size)), np.zeros((size, self.n_inputs))
        full[:n, :n], inputs[:n] = A, B
        closed = A + B @ G
        for b in range(1, self.k + 1):
            full[b * n:(b + 1) * n, b * n:(b + 1) * n] = closed
        return full, inputs

    # --- code -------------------------------------------------------------------------------------------------
    def _sources(self) -> dict[str, str | None]:
        """The generated ``rhs``, ``jac`` and ``out_fn`` (robodyn.model.derived.sensitivity_code), made once."""
        memo = self.memo()
        if "sources" not in memo:
            from robodyn.model.derived.sensitivity_code import sensitivity_sources

            memo["sources"] = sensitivity_sources(self.base, self._pairs, self.feedback)
        found: dict[str, str | None] = memo["sources"]
        return found

    @property
    def compilable(self) -> bool:
        return self.base.compilable and self._sources()["rhs"] is not None

    def kernel_rhs_source(self) -> str | None:
        return self._sources()["rhs"] if self.base.compilable else None

    def kernel_jacobian_source(self) -> str | None:
        return self._sources()["jac"] if self.compilable else None

    def kernel_output_source(self) -> str | None:
        return self._sources()["out_fn"] if self.compilable and not self.outputs_are_states else None

    def kernel_event_source(self, events: Sequence[Any]) -> str:
        """The model's own: events read x[i] for i < n and p[c] for c < n_p, the same entries here."""
        return self.base.kernel_event_source(events)

    def symbol_table(self) -> Any:
        table = self.base.symbol_table()
        return None if table is None else _SlicedTable(table, self.n_base, self.n_p)

    # --- what the model's own answers still hold ------------------------------------------------------------
    def position_limits(self) -> dict[str, tuple[float | None, float | None]]:
        return self.base.position_limits()

    def input_limits(self) -> dict[str, tuple[float, float]]:
        return self.base.input_limits()

    def units(self) -> dict[str, str]:
        return self.base.units()

    def switching_events(self) -> list[Any]:
        return self.base.switching_events()

    def linear_by_construction(self) -> str | None:
        """The model's reason when it is linear by construction and df/dp is exact: S' = f_x S + f_p is then linear
        in [x, S] too (f_p is affine in x and u)."""
        return self.base.linear_by_construction() if self._exact else None

    def affine_form(self, p: Vector) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(A, B, c) of [x, S] when the model is linear and time-invariant with an exact df/dp: the S rows hold
        A + B G on the diagonal and, for a parameter, d(A x + B u + c)/dp_c, read off df/dp at x = 0, e_i, u = e_r."""
        q = p[: self.n_p]
        form = self.base.affine_form(q) if self._exact else None
        if form is None:
            return None
        A, B, c = (np.asarray(a, dtype=float) for a in form)
        n, m, size = self.n_base, self.n_inputs, self.n_states
        G = self._split(np.zeros(size), p)[3]
        full, inputs, constant = np.zeros((size, size)), np.zeros((size, m)), np.zeros(size)
        full[:n, :n], inputs[:n], constant[:n] = A, B, c
        zero_x, zero_u = np.zeros(n), np.zeros(m)
        at_zero = self._columns(np.asarray(self.base.parameter_jacobian_raw(0.0, zero_x, zero_u, q))) \
            if any(d.kind == "parameter" for d in self.directions) else np.zeros((n, self.k))
        for j in range(self.k):
            rows = slice(n + j * n, n + (j + 1) * n)
            full[rows, rows] = A + B @ G
            constant[rows] = at_zero[:, j]
        if any(d.kind == "parameter" for d in self.directions):
            for i, unit in enumerate(np.eye(n)):
                full[n:, i] = (self._columns(np.asarray(self.base.parameter_jacobian_raw(0.0, unit, zero_u, q)))
                               - at_zero).T.reshape(-1)
            for r, unit in enumerate(np.eye(m)):
                inputs[n:, r] = (self._columns(np.asarray(self.base.parameter_jacobian_raw(0.0, zero_x, unit, q)))
                                 - at_zero).T.reshape(-1)
        return full, inputs, constant


class _SlicedTable:
    """The model's symbol table for events on [x, S]: the same symbols (x[i], i < n), numeric functions that read
    the first n entries of x and the first n_p of p."""

    def __init__(self, table: Any, n: int, n_p: int):
        self._table, self._n, self._n_p = table, n, n_p

    def lambdify(self, exprs: Any) -> Any:
        function = self._table.lambdify(exprs)
        n, n_p = self._n, self._n_p
        return lambda t, x, u, p: function(t, x[:n], u, p[:n_p])

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._table, name)
