"""Exact linearization of symbolic models: every derivative entry from one lambdified call.

:func:`symbolic_linearization` evaluates A, B, C, D of a symbolic model at a point, into one flat
buffer laid out ``[A | B | C | D]`` row-major (the layout of
:meth:`robodyn.model.system.Model.linearization_raw`). One sympy ``lambdify`` (with common
subexpressions shared) returns every entry the model needs:

- explicit first-order models: ``[df/dx, df/du, dh/dx, dh/du]``, the result itself;
- second-order models M(q) q'' = r(t, q, q', u): ``[M, dr/dx | dr/du, (r, dM/dq_k if M depends on q),
  dh/dx, dh/du]``, then da/dz = M^-1 (dr/dz - [dM/dq_k a]_k) with a = q'' by a numeric solve — exact at
  any point, M never inverted symbolically.

The h part is left out when y = x. The plan is built once per model and kept in the model's memo.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from robodyn.codegen.printer import lambdify_entries

__all__ = ["symbolic_linearization"]


@dataclass(frozen=True, slots=True)
class SimulationPlan:
    """The lambdified entries and the result's template (constant entries: identity blocks)."""

    evaluate: Callable[..., np.ndarray]
    template: np.ndarray
    coordinates: int  # c for a manipulator (the state is [q, q']), 0 for a first-order model
    mass_varies: bool
    identity_output: bool


def symbolic_linearization(model: Any, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> np.ndarray:
    """A, B, C, D of a symbolic model at a validated point, flat ``[A | B | C | D]`` (see the module docstring).

    ``model`` is a SymbolicSystem (``coordinates`` 0) or a ManipulatorSystem with closed forms.
    """
    memo = model.memo()
    plan = memo.get("linearization")
    if plan is None:
        plan = memo["linearization"] = _build(model)
    try:  # Python floats are ~10x faster than numpy scalars in the generated code ...
        values = np.array(plan.evaluate(t, x.tolist(), u.tolist(), p.tolist()), dtype=float)
    except (ArithmeticError, TypeError, ValueError):  # ... but 1/0 raises and (-1)**0.5 is complex there:
        values = np.array(plan.evaluate(t, x, u, p), dtype=float)  # numpy semantics
    if plan.coordinates == 0 and not plan.identity_output:
        return values  # already the result's layout
    n, m = model.n_states, model.n_inputs
    buffer = plan.template.copy()
    if plan.coordinates == 0:
        buffer[: n * (n + m)] = values
    else:
        end = _manipulator(model, plan, values, buffer, x)
        if not plan.identity_output:
            buffer[n * (n + m):] = values[end:]
    return buffer


def _build(model: Any) -> SimulationPlan:
    identity = model.outputs_are_states
    n, m, k = model.n_states, model.n_inputs, model.n_outputs
    template = np.zeros(n * n + n * m + k * n + k * m)
    if identity:
        template[n * (n + m): n * (n + m) + n * n] = np.eye(n).reshape(-1)
    c = model.n_coordinates if model.order == 2 else 0
    if c:
        template[: n * n].reshape(n, n)[:c, c:] = np.eye(c)
        rhs = model.rhs_expr
        jacobian = rhs.jacobian(model.x_symbols)
        if model.u_symbols:
            jacobian = jacobian.row_join(rhs.jacobian(model.u_symbols))
        dmass = [model.mass_expr.diff(q) for q in model.q_symbols]
        mass_varies = not all(d.is_zero_matrix for d in dmass)
        parts = [model.mass_expr, jacobian] + ([rhs, *dmass] if mass_varies else [])
    else:
        mass_varies = False
        parts = [model.dfdx_expr, model.dfdu_expr]
    if not identity:
        parts += [model.dhdx_expr, model.dhdu_expr]
    evaluate = lambdify_entries((model.t_symbol, model.x_symbols, model.u_symbols, model.p_symbols),
                                [entry for part in parts for entry in part])
    template.setflags(write=False)
    return SimulationPlan(evaluate, template, c, mass_varies, identity)


def _manipulator(model: Any, plan: SimulationPlan, values: np.ndarray, buffer: np.ndarray, x: np.ndarray) -> int:
    """Write df/dx and df/du of x = [q, q'], f = [q', a], M(q) a = r into ``buffer``: da/dz = M^-1 (dr/dz -
    [dM/dq_k a]_k), the last c rows of A and of B. Returns where the h part of ``values`` starts."""
    c, m = plan.coordinates, model.n_inputs
    n = 2 * c
    mass = values[: c * c].reshape(c, c)
    end = c * c + c * (n + m)
    derivative = values[c * c: end].reshape(c, n + m)
    if plan.mass_varies:
        accel = solve_spd(model, mass, values[end: end + c], x)
        dmass = values[end + c: end + c + c * c * c].reshape(c, c, c)  # [k, i, j] = dM_ij / dq_k
        derivative[:, :c] -= (dmass @ accel).T
        end += c + c * c * c
    solved = solve_spd(model, mass, derivative, x)
    buffer[c * n: n * n] = solved[:, :n].reshape(-1)  # A[c:, :]
    buffer[n * n + c * m: n * (n + m)] = solved[:, n:].reshape(-1)  # B[c:, :]
    return end


def solve_spd(model: Any, mass: np.ndarray, rhs: np.ndarray, x: np.ndarray) -> np.ndarray:
    """M^-1 rhs for a symmetric positive definite M: closed forms for 1x1 and 2x2 (the lower triangle, as
    Cholesky reads it), a Cholesky solve otherwise. Not positive definite -> SingularMatrixError naming q."""
    c = mass.shape[0]
    if c == 1 and mass[0, 0] > 0:
        return rhs / mass[0, 0]
    if c == 2:
        a, b, d = mass[0, 0], mass[1, 0], mass[1, 1]
        det = a * d - b * b
        if a > 0 and det > 0:  # Sylvester's criterion; Cramer's rule is forward stable for 2x2 (Higham 2002)
            return np.array([[d, -b], [-b, a]]) @ rhs / det
    import scipy.linalg  # here, not at module level: importing it costs ~0.2 s at start-up

    factor = model._factor(mass, x)  # raises SingularMatrixError naming q
    return scipy.linalg.cho_solve(factor, rhs, check_finite=False)
