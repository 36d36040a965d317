"""The discrete-time affine model an MPC predicts with: x[k+1] = A x[k] + B u[k] + c in deviations from (x_op, u_op).

- a discrete-time LinearSystem: its own A, B (c = 0, x_op = 0, u_op = 0: its states are its coordinates);
- a continuous-time LinearSystem (or a model linear by construction): the exact zero-order hold over ``dt``,
  A_d = e^{A dt}, B_d = integral_0^dt e^{A s} ds B (Van Loan, "Computing integrals involving the matrix exponential",
  IEEE TAC 23(3), 1978: :func:`robodyn.linear.exact.exact_discretization`);
- any other model: :func:`robodyn.linearize` (exact Jacobians) at the operating point, then the same hold; the states
  and inputs are the model's absolute values, the prediction works on dx = x - x_op, du = u - u_op. When the
  operating point is no equilibrium (f(x_op, u_op) = r != 0) the hold of the constant rate r is the affine term
  c = integral_0^dt e^{A s} ds r (one more column of the same exponential); a discrete-time model's
  c = f(x_op, u_op) - x_op.

The default operating point of a nonlinear model is x_op = 0 and u_op the input that holds it there (``u="hold"`` of
:func:`robodyn.linearize`: 0 when no input holds it), as ``robodyn linearize --at`` takes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError
from robodyn.linear.exact import exact_discretization
from robodyn.linear.systems import check_period
from robodyn.linearization.linearize import HOLD, linearize
from robodyn.model.system import Values, require_euclidean, require_model

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["Plant", "discrete_plant"]

Array = NDArray[np.float64]

#: Two sample periods closer than this (relative) are the same period.
PERIOD_RTOL = 1e-12


@dataclass(frozen=True, slots=True, eq=False)
class Plant:
    """x[k+1] - x_op = A (x[k] - x_op) + B (u[k] - u_op) + c, with the names and the sample period.

    A : (n, n); B : (n, m); c : (n,); x_op : (n,); u_op : (m,); dt : the sample period in s; ``linearized``: whether
    the matrices come from a linearization of a nonlinear model (then x_op, u_op are its operating point).
    """

    A: Array
    B: Array
    c: Array
    x_op: Array
    u_op: Array
    dt: float
    states: tuple[str, ...]
    inputs: tuple[str, ...]
    name: str
    linearized: bool

    def __post_init__(self) -> None:
        for array in (self.A, self.B, self.c, self.x_op, self.u_op):
            array.setflags(write=False)


def _period(given: float | None, own: float | None, name: str) -> float:
    """The sample period: the system's own (a discrete-time one) or ``dt`` (a continuous-time one)."""
    if own is not None:
        if given is not None and abs(check_period(given, "mpc") - own) > PERIOD_RTOL * own:
            raise InputError(f"mpc: {name!r} is discrete-time with dt = {own:g} s, not the dt = {given:g} given: "
                             "leave dt out (or discretize the continuous-time system with this dt)")
        return own
    if given is None:
        raise InputError(f"mpc: {name!r} is continuous-time: give the sample period, e.g. dt=0.01 (the model is "
                         "held over each period: exact zero-order hold)")
    return check_period(given, "mpc")


def _hold(A: Array, B: Array, rate: Array, dt: float) -> tuple[Array, Array, Array]:
    """A_d, B_d and the hold c of the constant rate ``rate``: one exponential of [[A, B, r], [0, 0, 0]]."""
    Phi, Gamma = exact_discretization(A, np.column_stack([B, rate]), dt)
    return Phi, np.ascontiguousarray(Gamma[:, :-1]), np.ascontiguousarray(Gamma[:, -1])


def discrete_plant(system: ModelContract, dt: float | None = None, x_op: Values | None = None,
                   u_op: Values | None = None, params: Values | None = None) -> Plant:
    """The :class:`Plant` of ``system`` (module docstring).

    Parameters
    ----------
    system
        A LinearSystem (continuous or discrete time) or any robodyn model with inputs.
    dt
        The sample period in s: required for continuous time, equal to the system's own in discrete time.
    x_op, u_op : (n,), (m,) or {name: value}, optional
        The operating point of a nonlinear model (default: x_op = 0, u_op its holding input); refused for a linear
        one, whose matrices hold everywhere.
    params
        Parameter overrides of a nonlinear model.
    """
    require_model(system, "mpc")
    require_euclidean(system, "mpc")
    if system.n_inputs == 0:
        raise InputError(f"mpc: {system.name!r} has no inputs: there is nothing to control")
    linear = system.linear_model() if params is None else system.linear_model(params)
    if linear is not None:
        if x_op is not None or u_op is not None:
            raise InputError(f"mpc: {system.name!r} is linear: its matrices hold at every point; leave x_op and u_op "
                             "out (the states and inputs are its own coordinates)")
        period = _period(dt, linear.dt, system.name)
        n, m = linear.B.shape
        A, B = linear.A, linear.B
        if linear.dt is None:
            A, B, _ = _hold(linear.A, linear.B, np.zeros(n), period)
        return Plant(np.array(A, dtype=float), np.array(B, dtype=float), np.zeros(n), np.zeros(n), np.zeros(m),
                     period, tuple(system.states), tuple(system.inputs), system.name, False)
    point = linearize(system, np.zeros(system.n_states) if x_op is None else x_op,
                      HOLD if u_op is None else u_op, params=params)
    x0, u0 = np.array(point.x_op, dtype=float), np.array(point.u_op, dtype=float)
    period = _period(dt, point.dt, system.name)
    f0 = np.asarray(system.f(0.0, x0, u0, params), dtype=float)
    if point.dt is not None:
        A, B, c = np.array(point.A), np.array(point.B), f0 - x0
    else:
        A, B, c = _hold(point.A, point.B, f0, period)
    return Plant(A, B, c, x0, u0, period, tuple(system.states), tuple(system.inputs), system.name, True)

