"""The model's exact derivatives along a trajectory: A, B at the knots and the slopes of x*.

TVLQR needs, at every knot t_k, the exact Jacobians A_k = df/dx, B_k = df/du at (t_k, x_k, u_k), and per interval
the slopes of the reference's cubic Hermite x*(t) (:mod:`~robodyn.control.tracking.reference`), d0_k = f(t_k, x_k,
u_k) and d1_k = f(t_{k+1}, x_{k+1}, u*(t_{k+1}-)) (u_k with held inputs, u_{k+1} with linear ones).

They come from :class:`robodyn.control.optimal.batch.points.ModelPoints`, the one place that evaluates a model at
many points: a model with compiled functions is called through their machine addresses in one compiled loop per
quantity (the Panda's 1,001 Jacobians and 2,000 right-hand sides in ~6 ms, where one Python call per knot took
~45 ms: benchmarks/RESULTS.md, issue 47), other models one point at a time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import NumericalError
from robodyn.control.optimal.batch.points import ModelPoints

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["KnotDerivatives", "compiled_functions", "derivatives_at_knots"]

Array = NDArray[np.float64]


class KnotDerivatives(NamedTuple):
    """A (T, n, n), B (T, n, m) at the knots; d0, d1 (T - 1, n) the slopes of x* at each interval's ends."""

    A: Array
    B: Array
    d0: Array
    d1: Array


def compiled_functions(model: ModelContract) -> np.ndarray | None:
    """``fns`` (int64 (4,)) with the addresses of ``model``'s compiled ``rhs`` and exact ``jac`` (for the compiled
    Riccati differential equation), or None for a model without them."""
    compiled = ModelPoints(model, model.parameter_vector()).compiled()
    return None if compiled is None else compiled.addresses


def derivatives_at_knots(model: ModelContract, t: Array, x: Array, u: Array, p: Array,
                         hold: bool) -> KnotDerivatives:
    """:class:`KnotDerivatives` of ``model`` at the samples ``t`` (T,), ``x`` (T, n), ``u`` (T, m) and the parameters
    ``p`` (module docstring), checked finite."""
    points = ModelPoints(model, p)
    A, B = points.jacobians(t, x, u)
    d0 = points.f(t[:-1], x[:-1], u[:-1])
    d1 = points.f(t[1:], x[1:], u[:-1] if hold else u[1:])
    found = KnotDerivatives(A, B, d0, d1)
    finite = np.asarray(np.isfinite(found.A).all(axis=(1, 2)) & np.isfinite(found.B).all(axis=(1, 2)), dtype=bool)
    finite[:-1] &= np.isfinite(found.d0).all(axis=1)  # d0_k at knot k, d1_k at knot k + 1
    finite[1:] &= np.isfinite(found.d1).all(axis=1)
    if not finite.all():
        k = int(np.flatnonzero(~finite)[0])
        raise NumericalError(f"tvlqr: the derivatives of {model.name!r} are not finite at t = {t[k]:g}: the "
                             "trajectory passes a singular point of the model")
    return found
