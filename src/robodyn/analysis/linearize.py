"""Linearization at an operating point: delta x' = A delta x + B delta u, delta y = C delta x + D delta u.

The best derivative the model supports is used (DESIGN.md, "exactness ladder"):

- ``symbolic``: exact sympy Jacobians of an explicit first-order model;
- ``manipulator``: second-order models M(q) q'' = Q - c, exact at any point without inverting M
  symbolically (A21 = M^-1 (dr/dq - dM/dq q''), A22 = M^-1 dr/dq', B2 = M^-1 dr/du);
- ``linear``: a LinearSystem is its own linearization;
- ``central``: central differences for models given as Python callables, with the per-component step
  eps^(1/3) max(1, |x_i|) and a Richardson estimate of the error (the difference between steps h and 2h).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np

from robodyn.errors import InputError
from robodyn.model.linear import LinearSystem
from robodyn.model.mechanical import ManipulatorSystem
from robodyn.model.symbolic import SymbolicModel, SymbolicSystem
from robodyn.model.system import Model, Values

__all__ = ["METHODS", "linearize"]

METHODS: Final = ("auto", "symbolic", "manipulator", "central", "linear")
_STEP: Final = float(np.finfo(float).eps ** (1 / 3))  # Optimal central-difference step (relative).


def _central(function: Callable[[np.ndarray], np.ndarray], point: np.ndarray) -> tuple[np.ndarray, float]:
    """Jacobian of ``function`` at ``point`` by central differences, and an error estimate.

    The estimate is max |D(h) - D(2h)|: the truncation error of D(h) is O(h^2), that of D(2h) four
    times larger, so their difference bounds the error of D(h) (Richardson).
    """
    value = np.asarray(function(point), dtype=float)
    jacobian = np.zeros((value.size, point.size))
    error = 0.0
    for i in range(point.size):
        h = _STEP * max(1.0, abs(point[i]))
        step = np.zeros(point.size)
        step[i] = h
        fine = (np.asarray(function(point + step)) - np.asarray(function(point - step))) / (2 * h)
        coarse = (np.asarray(function(point + 2 * step)) - np.asarray(function(point - 2 * step))) / (4 * h)
        jacobian[:, i] = fine
        error = max(error, float(np.max(np.abs(fine - coarse), initial=0.0)))
    return jacobian, error


def linearize(
    model: Model,
    x: Values,
    u: Values | None = None,
    *,
    params: Values | None = None,
    t: float = 0.0,
    method: str = "auto",
) -> LinearSystem:
    """Linearize ``model`` at the state ``x`` and input ``u`` (any point, not only equilibria).

    Parameters
    ----------
    model
        Any robodyn model.
    x, u
        The operating point: arrays in model order or ``{name: value}`` mappings (inputs left out are 0).
    params
        Parameter overrides.
    t
        The time, for time-varying models.
    method
        ``auto`` (the best available), ``symbolic``, ``manipulator`` or ``central``.

    Returns
    -------
    LinearSystem
        With ``x_op``, ``u_op``, ``method`` and ``error_estimate`` (0 for exact methods).
    """
    if method not in METHODS:
        raise InputError(f"unknown linearization method {method!r}: one of {', '.join(METHODS)}")
    time, xv, uv, p = model._arguments(t, x, u, params)
    chosen = _choose(model, method)
    error = 0.0
    if chosen == "linear":
        assert isinstance(model, LinearSystem)
        return LinearSystem(model.A, model.B, model.C, model.D, states=model.states, inputs=model.inputs,
                            outputs=model.outputs, name=model.name, x_op=xv, u_op=uv, method="linear",
                            error_estimate=0.0)
    if chosen == "symbolic":
        assert isinstance(model, SymbolicSystem)
        A, B = model.dfdx(time, xv, uv, p), model.dfdu(time, xv, uv, p)
    elif chosen == "manipulator":
        assert isinstance(model, ManipulatorSystem)
        A, B = model.jacobians(time, xv, uv, p)
    else:
        A, error_x = _central(lambda z: model._f(time, z, uv, p), xv)
        B, error_u = _central(lambda w: model._f(time, xv, w, p), uv) if model.n_inputs else (
            np.zeros((model.n_states, 0)), 0.0)
        error = max(error_x, error_u)
    if isinstance(model, SymbolicModel):
        C, D = model.dhdx(time, xv, uv, p), model.dhdu(time, xv, uv, p)
    else:
        C, error_c = _central(lambda z: model._h(time, z, uv, p), xv)
        D, error_d = _central(lambda w: model._h(time, xv, w, p), uv) if model.n_inputs else (
            np.zeros((model.n_outputs, 0)), 0.0)
        error = max(error, error_c, error_d)
    _check_finite(A, B, C, D, model, xv)
    return LinearSystem(A, B, C, D, states=model.states, inputs=model.inputs, outputs=model.outputs,
                        name=model.name, x_op=xv, u_op=uv, method=chosen, error_estimate=error)


def _choose(model: Model, method: str) -> str:
    available = ("symbolic" if isinstance(model, SymbolicSystem)
                 else "manipulator" if isinstance(model, ManipulatorSystem)
                 else "linear" if isinstance(model, LinearSystem) else None)
    if method == "auto":
        return available or "central"
    if method != "central" and method != available:
        raise InputError(
            f"method {method!r} is not available for {type(model).__name__} {model.name!r}: "
            f"use {available or 'central'} (or auto)"
        )
    return method


def _check_finite(A: Any, B: Any, C: Any, D: Any, model: Model, x: np.ndarray) -> None:
    for label, matrix in (("A", A), ("B", B), ("C", C), ("D", D)):
        if not np.all(np.isfinite(matrix)):
            point = dict(zip(model.states, x.tolist()))
            raise InputError(f"model {model.name!r}: the linearization at {point} has non-finite entries in "
                             f"{label}: the model is not differentiable there; choose another point")
