"""The reference x*(t), u*(t) between a trajectory's samples, as TVLQR and its feedback read it.

The trajectory gives knots t_k (T,), states x_k (T, n) and inputs u_k (T, m). Between two knots:

- u*(t) is held at u_k on [t_k, t_{k+1}) (``"hold"``: the DDP family's inputs, a fixed-step simulation's) or
  linear from u_k to u_{k+1} (``"linear"``: collocation's); past the last knot it is u_{T-1};
- x*(t) is the cubic Hermite interpolant of x_k, x_{k+1} with the slopes of the dynamics at its ends,
  d0_k = f(t_k, x_k, u*(t_k+)) and d1_k = f(t_{k+1}, x_{k+1}, u*(t_{k+1}-)) (with held inputs u_k at both ends):
  exact to O(h^4) on a trajectory of the model (de Boor, *A Practical Guide to Splines*, ch. IV); past the
  last knot it is x_{T-1}, before the first x_0.

:class:`ReferencePath` holds the knots and both slopes; ``state(t)`` and ``input(t)`` evaluate it, and
:func:`robodyn.signals.tracking.hermite` is the formula (the compiled feedback repeats it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError, ShapeError
from robodyn.signals.tracking import hermite

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["INTERPOLATIONS", "ReferencePath", "check_knots", "reference_path"]

Array = NDArray[np.float64]

INTERPOLATIONS: Final = ("hold", "linear")  # How u*(t) goes from one knot to the next (module docstring).


@dataclass(frozen=True, slots=True, eq=False)
class ReferencePath:
    """x*(t), u*(t) along a trajectory (module docstring).

    Attributes
    ----------
    t : (T,)
        The knots, strictly increasing.
    x : (T, n)
    u : (T, m)
    d0, d1 : (T - 1, n)
        The slopes of x* leaving knot k and arriving at knot k + 1 on interval k.
    interpolation : ``"hold"`` or ``"linear"``
    """

    t: Array
    x: Array
    u: Array
    d0: Array
    d1: Array
    interpolation: str

    def interval(self, t: float) -> tuple[int, float]:
        """(k, s): the interval [t_k, t_{k+1}) holding ``t`` (clamped to the first and last) and the fraction of it."""
        k = int(np.clip(np.searchsorted(self.t, t, side="right") - 1, 0, self.t.size - 2))
        h = self.t[k + 1] - self.t[k]
        return k, float(np.clip((t - self.t[k]) / h, 0.0, 1.0))

    def state(self, t: float) -> Array:
        """x*(t) (n,)."""
        if t >= self.t[-1]:
            return self.x[-1].copy()
        k, s = self.interval(t)
        return hermite(s, self.t[k + 1] - self.t[k], self.x[k], self.x[k + 1], self.d0[k], self.d1[k])

    def input(self, t: float) -> Array:
        """u*(t) (m,)."""
        if t >= self.t[-1]:
            return self.u[-1].copy()
        k, s = self.interval(t)
        if self.interpolation == "hold":
            return self.u[k].copy()
        return (1.0 - s) * self.u[k] + s * self.u[k + 1]


def check_knots(t: Array) -> None:
    """Refuse knots ``t`` that are fewer than 2 or not strictly increasing."""
    if t.ndim != 1 or t.size < 2:
        raise ShapeError(f"a trajectory to track needs at least 2 samples, got {t.size}")
    if not np.all(np.diff(t) > 0):
        raise InputError("the trajectory's times must increase strictly: remove repeated or unordered rows")


def reference_path(model: ModelContract, t: Array, x: Array, u: Array, p: Array, interpolation: str,
                   slopes: tuple[Array, Array] | None = None) -> ReferencePath:
    """The :class:`ReferencePath` of the samples ``t`` (T,), ``x`` (T, n), ``u`` (T, m) of ``model``: the slopes
    ``(d0, d1)`` (T - 1, n) when given (:mod:`~robodyn.control.tracking.knots` computes them with the Jacobians), else
    the model's ``f_many`` at the parameters ``p``."""
    if interpolation not in INTERPOLATIONS:
        raise InputError(f"the inputs between knots are {' or '.join(map(repr, INTERPOLATIONS))}, got "
                         f"{interpolation!r}")
    check_knots(t)
    if slopes is None:
        d0 = model.f_many(t[:-1], x[:-1], u[:-1], p)
        arriving = u[:-1] if interpolation == "hold" else u[1:]
        d1 = model.f_many(t[1:], x[1:], np.ascontiguousarray(arriving), p)
    else:
        d0, d1 = slopes
    t_, x_, u_, d0_, d1_ = (np.array(a, dtype=float) for a in (t, x, u, d0, d1))
    for array in (t_, x_, u_, d0_, d1_):
        array.setflags(write=False)
    return ReferencePath(t_, x_, u_, d0_, d1_, interpolation)
