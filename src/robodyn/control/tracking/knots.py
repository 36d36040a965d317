"""The model's exact derivatives along a trajectory, in one compiled call: A, B at the knots and the slopes of x*.

TVLQR needs, at every knot t_k, the exact Jacobians A_k = df/dx, B_k = df/du at (t_k, x_k, u_k), and per interval
the slopes of the reference's cubic Hermite x*(t) (:mod:`~robodyn.control.tracking.reference`), d0_k = f(t_k, x_k,
u_k) and d1_k = f(t_{k+1}, x_{k+1}, u*(t_{k+1}-)) (u_k with held inputs, u_{k+1} with linear ones).

A model with compiled functions (``compilable`` with a ``kernel_jacobian_source``) is asked for them as machine
addresses (:func:`robodyn.model.compiled.model_addresses`, the integrators' ``rhs`` and ``jac``) and
:func:`knot_derivatives` calls them from numba through :func:`robodyn.codegen.indirect.model_call`, every knot in one
call: the Panda's 1,001 Jacobians and 2,000 right-hand sides take ~6 ms where one Python call per knot took ~45 ms
(benchmarks/RESULTS.md, issue 47). The numbers are the model's compiled Jacobian's (exact, as ``jacobians_raw``'s
to rounding). Other models (Python callables) are asked one knot at a time (:func:`python_derivatives`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import NumericalError
from robodyn.codegen.indirect import model_call

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["KnotDerivatives", "compiled_functions", "derivatives_at_knots", "knot_derivatives",
           "python_derivatives"]

Array = NDArray[np.float64]

_rhs = model_call(0)  # fns[0]: f(t, x, u, p, out (n,))
_jac = model_call(2)  # fns[2]: [df/dx | df/du] (n (n + m),), row-major


class KnotDerivatives(NamedTuple):
    """A (T, n, n), B (T, n, m) at the knots; d0, d1 (T - 1, n) the slopes of x* at each interval's ends."""

    A: Array
    B: Array
    d0: Array
    d1: Array


@numba.njit(cache=True, nogil=True, error_model="numpy")
def knot_derivatives(fns: np.ndarray, t: np.ndarray, x: np.ndarray, u: np.ndarray, p: np.ndarray, hold: bool,
                     J: np.ndarray, d0: np.ndarray, d1: np.ndarray) -> None:  # pragma: no cover - runs compiled only
    """Write J[k] = [df/dx | df/du] at (t_k, x_k, u_k) (J (T, n (n + m))) and the slopes d0, d1 (T - 1, n) (module
    docstring) through the addresses ``fns`` (``[rhs, event_fn, jac, chart]``)."""
    T = t.size
    for k in range(T):
        _jac(fns, t[k], x[k], u[k], p, J[k])
    for k in range(T - 1):
        _rhs(fns, t[k], x[k], u[k], p, d0[k])
        if hold:
            _rhs(fns, t[k + 1], x[k + 1], u[k], p, d1[k])
        else:
            _rhs(fns, t[k + 1], x[k + 1], u[k + 1], p, d1[k])


def compiled_functions(model: ModelContract) -> np.ndarray | None:
    """``fns`` (int64 (4,)) with the addresses of ``model``'s compiled ``rhs`` and exact ``jac``, or None for a model
    without them (kept in the model's memo)."""
    memo = model.memo()
    key = "tracking addresses"
    if key not in memo:
        fns = None
        if model.compilable and model.kernel_jacobian_source() is not None:
            from robodyn.model.compiled import model_addresses

            fns = model_addresses(model, jacobian=True)[0]
            fns = fns if fns[0] != 0 and fns[2] != 0 else None
        memo[key] = fns
    found: np.ndarray | None = memo[key]
    return found


def python_derivatives(model: ModelContract, t: Array, x: Array, u: Array, p: Array, hold: bool) -> KnotDerivatives:
    """:class:`KnotDerivatives` by the model's ``jacobians_raw`` at each knot and ``f_many`` (any model with exact
    Jacobians)."""
    T, n, m = t.size, x.shape[1], u.shape[1]
    A, B = np.empty((T, n, n)), np.empty((T, n, m))
    for k in range(T):
        Ak, Bk = model.jacobians_raw(float(t[k]), x[k], u[k], p)
        A[k], B[k] = Ak, Bk
    d0 = np.asarray(model.f_many(t[:-1], x[:-1], u[:-1], p), dtype=float)
    arriving = np.ascontiguousarray(u[:-1] if hold else u[1:])
    d1 = np.asarray(model.f_many(t[1:], x[1:], arriving, p), dtype=float)
    return KnotDerivatives(A, B, d0, d1)


def derivatives_at_knots(model: ModelContract, t: Array, x: Array, u: Array, p: Array,
                         hold: bool) -> KnotDerivatives:
    """:class:`KnotDerivatives` of ``model`` at the samples ``t`` (T,), ``x`` (T, n), ``u`` (T, m) and the parameters
    ``p``: compiled when the model has compiled functions (module docstring), checked finite."""
    fns = compiled_functions(model)
    T, n, m = t.size, x.shape[1], u.shape[1]
    if fns is None:
        found = python_derivatives(model, t, x, u, p, hold)
    else:
        J = np.empty((T, n * (n + m)))
        d0, d1 = np.empty((T - 1, n)), np.empty((T - 1, n))
        knot_derivatives(fns, np.ascontiguousarray(t), np.ascontiguousarray(x), np.ascontiguousarray(u),
                         np.ascontiguousarray(p, dtype=float), hold, J, d0, d1)
        found = KnotDerivatives(J[:, :n * n].reshape(T, n, n), J[:, n * n:].reshape(T, n, m), d0, d1)
    finite = np.asarray(np.isfinite(found.A).all(axis=(1, 2)) & np.isfinite(found.B).all(axis=(1, 2)), dtype=bool)
    finite[:-1] &= np.isfinite(found.d0).all(axis=1)  # d0_k at knot k, d1_k at knot k + 1
    finite[1:] &= np.isfinite(found.d1).all(axis=1)
    if not finite.all():
        k = int(np.flatnonzero(~finite)[0])
        raise NumericalError(f"tvlqr: the derivatives of {model.name!r} are not finite at t = {t[k]:g}: the "
                             "trajectory passes a singular point of the model")
    return found
