"""TVLQR as a block of a diagram: :class:`TrackingBlock`, the feedback u = u*(t) - K(t) (x - x*(t)) sampled.

A controller in a diagram reads signals, not the plant's state vector: the block's inputs are the tracked model's
states (measured, or estimated by an estimator block), its outputs the model's inputs. It is a sampled block (a
digital controller, :mod:`robodyn.diagrams.sampled`): at each instant t_k it computes u_k = u*(t_k) - K(t_k) (x_k -
x*(t_k)) from the signals it reads and holds it until the next. With a discrete-time design (``tvlqr(...,
discrete=True)``: gains of the exact zero-order-hold model of each interval) sampled at the trajectory's knots, that
is the loop the design assumed; a continuous-time design sampled finely approaches the continuous feedback (the
input itself, ``TVLQR.feedback``, is the exact continuous one).

The block has no states; its exact derivatives are dh/dx_in = -K(t_k) (a sampled diagram is linearized through its
blocks' exact Jacobians). Port names: a state name with dots (a diagram's ``plant.q``) becomes ``plant__q``.
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError
from robodyn.base.numbers import check_period
from robodyn.model.system import Model, Vector
from robodyn.signals.tracking import TrackingFeedback

__all__ = ["Design", "TrackingBlock", "port_name"]


class Design(Protocol):
    """What the block reads of a design (:class:`~robodyn.control.tracking.tvlqr.TVLQR` answers it)."""

    @property
    def t(self) -> NDArray[np.float64]: ...
    @property
    def states(self) -> tuple[str, ...]: ...
    @property
    def inputs(self) -> tuple[str, ...]: ...
    @property
    def discrete(self) -> bool: ...
    @property
    def feedback(self) -> TrackingFeedback: ...

#: Knot spacings equal to this relative tolerance make a uniform grid (the default period is then the spacing).
UNIFORM_RTOL = 1e-9


def port_name(name: str) -> str:
    """A model's state or input name as a block port: dots (a diagram's qualified names) become double
    underscores."""
    return name.replace(".", "__")


class TrackingBlock(Model):
    """The TVLQR feedback of ``design`` as a sampled diagram block (module docstring).

    Parameters
    ----------
    design
        A :class:`~robodyn.control.tracking.tvlqr.TVLQR` (``robodyn.tvlqr(...)``).
    sample
        The period T in s; by default the trajectory's knot spacing when uniform (required otherwise).
    name
        The block's model name.

    Ports: inputs the design's states (``port_name``), outputs its inputs; no states, no parameters.
    """

    kind = "tracking feedback"

    def __init__(self, design: Design, sample: float | None = None, *, name: str = "tvlqr"):
        steps = np.diff(design.t)
        if sample is None:
            if not np.allclose(steps, steps[0], rtol=UNIFORM_RTOL, atol=0.0):
                raise InputError("TVLQR block: the trajectory's knots are not evenly spaced: give sample=T, the "
                                 "controller's period")
            sample = float(steps[0])
        self._period = check_period(sample, "TVLQR block")
        self._feedback = design.feedback
        self.name = name
        self.states = ()
        self.inputs = tuple(port_name(s) for s in design.states)
        self.outputs = tuple(port_name(u) for u in design.inputs)
        if len(set(self.inputs)) != len(self.inputs) or len(set(self.outputs)) != len(self.outputs):
            raise InputError(f"TVLQR block: the names {', '.join(design.states + design.inputs)} collide once "
                             "dots become __: rename the states or inputs")
        self.parameters = MappingProxyType({})
        self._discrete = design.discrete
        self._span = (float(design.t[0]), float(design.t[-1]))

    @property
    def sample_period(self) -> float:
        """The controller's period T in s."""
        return self._period

    @property
    def jacobian_method(self) -> str:
        return "exact"

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return np.zeros(0)

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self._feedback(t, u)

    def jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros((0, 0)), np.zeros((0, self.n_inputs))

    def output_jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        """C (m, 0) and D = -K(t) (m, n)."""
        return np.zeros((self.n_outputs, 0)), -self._feedback.gain(float(t))

    def describe(self) -> str:
        """One line: what the block does, over which span, at which period."""
        form = "discrete-time" if self._discrete else "continuous-time"
        hz = 1.0 / self._period
        rate = f"{hz:.4g} Hz" if math.isfinite(hz) else f"{self._period:g} s"
        return (f"TVLQR ({form} design) over [{self._span[0]:g}, {self._span[1]:g}] s, sampled at {rate}: "
                f"{', '.join(self.outputs)} from {', '.join(self.inputs)}")
