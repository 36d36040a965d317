"""A state-feedback law as a block of a diagram: :class:`FeedbackBlock`, u_k = law(t_k, x_k) sampled and held.

A controller in a diagram reads signals, not the plant's state vector: the block's inputs are the controlled
model's states (measured, or estimated by an estimator block), its outputs the model's inputs (and, for a
controller that reports on itself, further signals such as a solver's status). It is a sampled block (a digital
controller, :mod:`robodyn.diagrams.sampled`): at each instant t_k it computes its outputs from the signals it reads
and holds them until the next. The laws that use it: TVLQR (``TVLQR.block()``: u*(t) - K(t) (x - x*(t))) and the
receding-horizon controllers (``RecedingHorizon.block()``: the first input of the plan re-optimized from x_k).

The block has no states. Its exact derivative dh/dx_in is the law's ``gain`` (-K(t_k) for TVLQR; the solver's
feedback gain for a receding horizon), when given: a sampled diagram is linearized through its blocks' exact
Jacobians. Port names: a state name with dots (a diagram's ``plant.q``) becomes ``plant__q``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError, ShapeError
from robodyn.base.numbers import check_period
from robodyn.model.roles import Role
from robodyn.model.system import Model, Vector

__all__ = ["FeedbackBlock", "port_name", "uniform_period"]

Array = NDArray[np.float64]

#: Knot spacings equal to this relative tolerance make a uniform grid (the default period is then the spacing).
UNIFORM_RTOL = 1e-9


def port_name(name: str) -> str:
    """A model's state or input name as a block port: dots (a diagram's qualified names) become double
    underscores."""
    return name.replace(".", "__")


def uniform_period(t: Array, what: str) -> float:
    """The spacing of the evenly spaced times ``t`` (T,), T >= 2; an InputError asking for a period otherwise."""
    steps = np.diff(t)
    if steps.size == 0 or not np.allclose(steps, steps[0], rtol=UNIFORM_RTOL, atol=0.0):
        raise InputError(f"{what}: the knots are not evenly spaced: give sample=T, the controller's period")
    return float(steps[0])


class FeedbackBlock(Model):
    """The state feedback ``law`` as a sampled diagram block (module docstring).

    Parameters
    ----------
    law
        ``law(t, s) -> y`` with s the block's input signals — the model's state (n,), then the ``signals`` — and y
        (len(inputs) + len(reports),) the inputs it applies followed by the reports.
    states, inputs
        The controlled model's state and input names (the block's ports, dots as ``__``).
    sample
        The period T in s.
    gain
        ``gain(t, s) -> dy/ds`` (len(inputs) + len(reports), n + len(signals)), exact, or None (the loop is then
        simulated but not linearized).
    reports
        Names of further outputs (a solver's status, its cost).
    signals
        Names of further input ports after the states (references).
    name, describe
        The block's model name and one line saying what it does (``str(block)``).
    role
        What the block is to a report (robodyn.model.roles: a predictive controller's bounds and plans), if anything.
    """

    kind = "state feedback"

    def __init__(self, law: Callable[[float, Array], Any], states: Sequence[str], inputs: Sequence[str],
                 sample: float, *, gain: Callable[[float, Array], Any] | None = None,
                 reports: Sequence[str] = (), signals: Sequence[str] = (), name: str = "controller",
                 describe: str = "state feedback", role: Role | None = None):
        self._period = check_period(sample, f"block {name!r}")
        self._law, self._gain = law, gain
        self.name = name
        self.states = ()
        self.inputs = tuple(port_name(s) for s in states) + tuple(signals)
        self.outputs = tuple(port_name(u) for u in inputs) + tuple(reports)
        if len(set(self.inputs)) != len(self.inputs) or len(set(self.outputs)) != len(self.outputs):
            raise InputError(f"block {name!r}: the names {', '.join([*states, *signals, *inputs, *reports])} collide "
                             "once dots become __: rename the states, inputs or reports")
        self.parameters = MappingProxyType({})
        self._describe = describe
        self._roles = () if role is None else (role,)

    @property
    def sample_period(self) -> float:
        """The controller's period T in s."""
        return self._period

    def roles(self) -> tuple[Role, ...]:
        return self._roles

    @property
    def jacobian_method(self) -> str | None:
        return "exact" if self._gain is not None else None

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return np.zeros(0)

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self._law(t, u)

    def jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros((0, 0)), np.zeros((0, self.n_inputs))

    def output_jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector
                             ) -> tuple[np.ndarray, np.ndarray] | None:
        """C (outputs, 0) and D = the law's gain (outputs, n), or None without one."""
        if self._gain is None:
            return None
        D = np.asarray(self._gain(float(t), u), dtype=float)
        if D.shape != (self.n_outputs, self.n_inputs):
            raise ShapeError(f"block {self.name!r}: its gain has shape {D.shape}, expected "
                             f"({self.n_outputs}, {self.n_inputs})")
        return np.zeros((self.n_outputs, 0)), D

    def __str__(self) -> str:
        return f"{self.name}: {self._describe}, sampled every {self._period:g} s"
