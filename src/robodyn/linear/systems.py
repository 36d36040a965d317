"""What an analysis of linear systems works on: any object with the state-space matrices and names
(:class:`StateSpace`, which :class:`robodyn.LinearSystem` is), and the checks every analysis makes first:
:func:`as_linear` (a model's exact linear model, or an error saying how to make one), :func:`require_continuous`
(refuse a discrete-time or sampled model where a differential equation is needed) and :func:`check_period`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError
from robodyn.base.numbers import finite_number

__all__ = ["StateSpace", "as_linear", "check_period", "require_continuous"]


class StateSpace(Protocol):
    """A linear system x' = A x + B u, y = C x + D u (x[k+1] = ... when ``dt`` is set), with named signals.

    A : (n, n); B : (n, m); C : (p, n); D : (p, m); dt : the sample period in s, or None (continuous time);
    ``error_estimate``: a bound on the matrices' error when they come from a linearization (0: exact; None:
    unknown). :class:`robodyn.LinearSystem` is the one robodyn builds.
    """

    @property
    def A(self) -> NDArray[np.float64]: ...
    @property
    def B(self) -> NDArray[np.float64]: ...
    @property
    def C(self) -> NDArray[np.float64]: ...
    @property
    def D(self) -> NDArray[np.float64]: ...
    @property
    def dt(self) -> float | None: ...
    @property
    def name(self) -> str: ...
    @property
    def states(self) -> tuple[str, ...]: ...
    @property
    def inputs(self) -> tuple[str, ...]: ...
    @property
    def outputs(self) -> tuple[str, ...]: ...
    @property
    def error_estimate(self) -> float | None: ...
    @property
    def declared_units(self) -> Mapping[str, str]: ...
    @property
    def x_op(self) -> NDArray[np.float64]:
        """(n,) the operating point the states are deviations from (zeros when none)."""
    @property
    def u_op(self) -> NDArray[np.float64]:
        """(m,) the operating point the inputs are deviations from (zeros when none)."""
    def units(self) -> dict[str, str]:
        """The unit of each state, input and output that has one."""


def as_linear(system: Any, where: str) -> StateSpace:
    """``system`` as a linear system: its ``linear_model()`` (itself for a LinearSystem; the exact linear model of
    a model linear by construction), or InputError saying how to make one."""
    answer = getattr(system, "linear_model", None)
    linear = answer() if callable(answer) else None
    if linear is None:
        model = callable(answer)  # a model that is not linear by construction
        hint = "robodyn.linearize(model, x, u)" if model else "robodyn.LinearSystem(A, B, C, D)"
        raise InputError(f"{where} needs a linear system, got {type(system).__name__}"
                         f"{' ' + repr(getattr(system, 'name', '')) if model else ''}: make one with {hint}")
    return linear


def check_period(value: object, where: str) -> float:
    """``value`` as a sample period in s: a finite real number > 0, or InputError naming ``where``."""
    message = ("{what}: dt = {value!r} must be a sample period > 0 in s (a finite number), e.g. dt=0.01; leave it "
               "out (None) for continuous time")
    return finite_number(value, where, not_real=message, not_finite=message, positive=message)


def require_continuous(system: object, where: str, fix: str, *, sampled_ok: bool = False) -> None:
    """InputError when ``system`` is discrete-time (its ``sample_period`` is set): its ``f`` is the update map
    x[k+1] = f(x[k], u[k]), not a derivative, so an analysis of differential equations does not apply.

    Parameters
    ----------
    system
        A model (or any object with ``sample_period``; objects without one count as continuous-time).
    where
        The analysis, for the message (``"validity"``).
    fix
        What to do instead, the end of the message.
    sampled_ok
        Whether a model with sampled blocks (``sampling()``: continuous and discrete-time parts) is accepted; its
        f (the continuous derivatives and the discrete states' increments) is zero at its operating points, but it
        is no differential equation to integrate or bound.
    """
    sampling = getattr(system, "sampling", None)
    if not sampled_ok and callable(sampling) and sampling() is not None:
        name = getattr(system, "name", type(system).__name__)
        raise InputError(f"{where}: {name!r} has sampled blocks: its f joins derivatives and discrete updates, not "
                         "one differential equation; linearize gives its discrete-time model over the hyperperiod, "
                         "and simulate shows how far that model holds")
    period = getattr(system, "sample_period", None)
    if period is not None:
        name = getattr(system, "name", type(system).__name__)
        raise InputError(f"{where}: {name!r} is a discrete-time model (dt = {period:g} s): its f is the update map "
                         f"x[k+1] = A x[k] + B u[k], not a derivative; {fix}")
