"""A model whose actuators have states: first-order activation dynamics in front of a mechanism's inputs.

An actuator with activation dynamics does not apply its control u at once: its force follows an activation a, a
state of its own, with a' = (u - a) / tau (a first-order filter, MuJoCo's ``dyntype="filter"`` and
``"filterexact"``) or a' = u (an integrator, ``dyntype="integrator"``). :class:`ActuatedSystem` puts such states in
front of any model (the *inner* model, a mechanism whose inputs include the activations by their state names):

    states   = the inner model's states, then the activations (``Activation.state``)
    inputs   = the inner model's inputs, each activation replaced by its control (``Activation.control``)
    x'       = [f_inner(t, x_inner, u_inner, p), a' per activation]

with u_inner the inner inputs taken from the outer inputs or from the activations. Its exact Jacobian is the inner
model's, composed: A = [[A_i, B_i P_a], [0, -1/tau]], B = [[B_i P_u], [1/tau]] (P_a, P_u: which inner inputs the
activations and the outer inputs feed); its compiled kernels call the inner model's (robodyn.model.kinds.
actuator_code). A mechanism's questions (``mass_matrix``, ``coordinates``, ``kinematics()``, ``geometry_file``, the
input limits of the controls, the position limits) are the inner model's; a chart (a floating base, ball joints)
is the inner chart with the activations appended to its stored states (robodyn.model.kinds.actuated_chart).

Reference: MuJoCo documentation, "Computation", actuation model (activation dynamics); XML reference,
actuator/general (dyntype, dynprm).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from robodyn.base.errors import InputError
from robodyn.model.kinds.actuator_code import ActuatorLayout, jacobian_source, rhs_source
from robodyn.model.protocol import Chart
from robodyn.model.system import Model, Vector, name_tuple
from robodyn.model.values import Values

__all__ = ["Activation", "ActuatedSystem"]


@dataclass(frozen=True, slots=True)
class Activation:
    """One actuator's activation: the state ``state`` (an input of the inner model), driven by the input
    ``control``: a' = (u - a) / ``time_constant`` (s), or a' = u when ``time_constant`` is None (an integrator)."""

    state: str
    control: str
    time_constant: float | None = None


class ActuatedSystem(Model):
    """``inner`` with the activations ``activations`` in front of its inputs (see the module docstring).

    Parameters
    ----------
    inner
        Any model (a chain, a floating base, an MJCF robot) whose inputs include each activation's ``state``.
    activations
        The activations, in the order their states are appended.
    """

    kind = "actuated"

    def __init__(self, inner: Any, activations: Sequence[Activation]):
        self.inner = inner
        self.activations = tuple(activations)
        where = f"model {inner.name!r}"
        for a in self.activations:
            if a.state not in inner.inputs:
                raise InputError(f"{where}: the activation {a.state!r} is no input of the model it drives (inputs "
                                 f"{', '.join(inner.inputs)}): name one of them")
            if a.time_constant is not None and not (np.isfinite(a.time_constant) and a.time_constant > 0):
                raise InputError(f"{where}: the activation {a.state!r} has the time constant {a.time_constant!r}: "
                                 "give a positive number of seconds (or None for an integrator)")
        self.name = inner.name
        self.states = name_tuple([*inner.states, *(a.state for a in self.activations)], "states")
        driven = {a.state: a.control for a in self.activations}
        self.inputs = name_tuple([driven.get(u, u) for u in inner.inputs], "inputs")
        taken = [name for name in (*self.states, *self.inputs) if (*self.states, *self.inputs).count(name) > 1]
        if taken:
            raise InputError(f"{where}: {', '.join(sorted(set(taken)))} names two of the states and inputs (an "
                             "activation's control must be a new input name): rename it")
        self.parameters = inner.parameters
        self.derived_parameters = inner.derived_parameters
        self.outputs = self.states if inner.outputs_are_states else inner.outputs
        n = inner.n_states
        feeds = tuple(("a", [a.state for a in self.activations].index(u)) if u in driven else
                      ("u", self.inputs.index(u)) for u in inner.inputs)
        self.layout = ActuatorLayout(tuple(range(n)), tuple(range(n, n + len(self.activations))), feeds,
                                     tuple(self.inputs.index(a.control) for a in self.activations),
                                     tuple(0.0 if a.time_constant is None else 1.0 / a.time_constant
                                           for a in self.activations), self.n_states, self.n_inputs)

    # --- evaluation -------------------------------------------------------------------------------------
    def split(self, x: Vector, u: Vector) -> tuple[Vector, Vector]:
        """The inner model's state ``(n_inner,)`` and inputs ``(m_inner,)`` at the outer ``x``, ``u``."""
        return self.layout.split(x, u)

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self.layout.derivative(self.inner.f_raw(t, *self.split(x, u), p), x, u)

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        if self.outputs_are_states:
            return np.array(x, dtype=float)
        return self.inner.h_raw(t, *self.split(x, u), p)

    @property
    def outputs_are_states(self) -> bool:
        return bool(self.inner.outputs_are_states)

    @property
    def jacobian_method(self) -> str | None:
        method: str | None = self.inner.jacobian_method
        return method

    def jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        """Exact df/dx ``(n, n)`` and df/du ``(n, m)``: the inner model's, composed (module docstring)."""
        x_inner, u_inner = self.split(x, u)
        return self.layout.compose(*self.inner.jacobians_raw(t, x_inner, u_inner, p))

    def output_jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector
                             ) -> tuple[np.ndarray, np.ndarray] | None:
        if self.outputs_are_states:
            return super().output_jacobians_raw(t, x, u, p)
        found = self.inner.output_jacobians_raw(t, *self.split(x, u), p)
        if found is None:
            return None
        C_inner, D_inner = found
        C, D = np.zeros((self.n_outputs, self.n_states)), np.zeros((self.n_outputs, self.n_inputs))
        C[:, list(self.layout.gather)] = C_inner
        for k, (kind, j) in enumerate(self.layout.feeds):
            (D[:, j] if kind == "u" else C[:, self.layout.acts[j]])[...] += D_inner[:, k]
        return C, D

    @property
    def parameter_jacobian_method(self) -> str | None:
        method: str | None = self.inner.parameter_jacobian_method
        return method

    def parameter_jacobian_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """Exact df/dp ``(n, n_params)``: the inner model's rows (the activations do not depend on p)."""
        out = np.zeros((self.n_states, len(self.parameters)))
        out[list(self.layout.gather)] = self.inner.parameter_jacobian_raw(t, *self.split(x, u), p)
        return out

    # --- compiled kernels --------------------------------------------------------------------------------
    @property
    def compilable(self) -> bool:
        return bool(self.inner.compilable)

    def kernel_rhs_source(self) -> str | None:
        source = self.inner.kernel_rhs_source() if self.inner.compilable else None
        return None if source is None else rhs_source(self.layout, source)

    def kernel_jacobian_source(self) -> str | None:
        source = self.inner.kernel_jacobian_source() if self.inner.compilable else None
        return None if source is None else jacobian_source(self.layout, source)

    # --- what the inner model answers -------------------------------------------------------------------
    def chart(self) -> Chart | None:
        """The inner model's chart with the activations appended to its stored states
        (robodyn.model.kinds.actuated_chart.ActuatedChart), or None when the inner model has none."""
        inner = self.inner.chart()
        if inner is None:
            return None
        memo = self.memo()
        if "actuated chart" not in memo:
            from robodyn.model.kinds.actuated_chart import ActuatedChart

            memo["actuated chart"] = ActuatedChart(self, inner)
        chart: Chart = memo["actuated chart"]
        return chart

    @functools.cached_property
    def _controls(self) -> dict[str, str]:
        return {a.state: a.control for a in self.activations}

    def input_limits(self) -> dict[str, tuple[float, float]]:
        """The inner model's input limits, by the outer inputs (an activation's limits are its control's)."""
        return {self._controls.get(k, k): v for k, v in self.inner.input_limits().items()
                if self._controls.get(k, k) in self.inputs}

    def position_limits(self) -> dict[str, tuple[float | None, float | None]]:
        limits: dict[str, tuple[float | None, float | None]] = self.inner.position_limits()
        return limits

    def initial_state(self) -> Vector:
        """The inner model's initial state, the activations 0 (MuJoCo's ``act`` at reset)."""
        return np.concatenate([self.inner.initial_state(), np.zeros(len(self.activations))])

    def units(self) -> dict[str, str]:
        """The inner model's units; an activation and its control in the unit of the inner input it drives."""
        units = dict(self.inner.units())
        for a in self.activations:
            if a.state in units:
                units[a.control] = units[a.state]
        return units

    @property
    def geometry_file(self) -> Any:
        return self.inner.geometry_file

    def kinematics(self) -> Any:
        return self.inner.kinematics()

    def _inner_now(self) -> Any:
        """The inner model at this model's parameters."""
        return self.inner if self.inner.parameters is self.parameters else self.inner.with_parameters(
            dict(self.parameters))

    def mass_matrix(self, q: Values, params: Values | None = None) -> np.ndarray:
        """The inner mechanism's mass matrix at the configuration ``q`` (its ``mass_matrix``)."""
        if not hasattr(self.inner, "mass_matrix"):
            raise InputError(f"model {self.name!r} ({self.inner.kind}) has no mass matrix: it is not a mechanism")
        matrix: np.ndarray = self._inner_now().mass_matrix(q, params)
        return matrix

    def mass_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """M ``(nv, nv)`` at the outer state ``x`` (the inner mechanism's ``mass_raw``)."""
        matrix: np.ndarray = self.inner.mass_raw(t, *self.split(x, u), p)
        return matrix

    def energy(self, x: Values, params: Values | None = None) -> tuple[float, float] | None:
        """The inner mechanism's kinetic and potential energy at the outer state ``x`` (the activations store none)."""
        energy: tuple[float, float] | None = self.inner.energy(self.state_vector(x)[list(self.layout.gather)],
                                                               params)
        return energy

    def fixed_base(self) -> Any:
        return self.inner.fixed_base()

    def base_masses(self) -> Any:
        return self.inner.base_masses()

    def contact_points(self) -> Any:
        return self.inner.contact_points()

    def __getattr__(self, name: str) -> Any:
        """The inner mechanism's descriptive names (``coordinates``, ``velocities``, ``rates``, their counts)."""
        inner = self.__dict__.get("inner")
        if inner is not None and name in ("coordinates", "velocities", "rates", "n_coordinates", "n_velocities",
                                          "balls", "path"):
            return getattr(inner, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def show_text(self) -> str:
        lines = [f"{a.state}' = " + (f"({a.control} - {a.state}) / {a.time_constant!r}" if a.time_constant
                                     else a.control) for a in self.activations]
        return "\n".join([self.inner.show_text(), "", "activations:", *(f"  {line}" for line in lines)])

    def __repr__(self) -> str:
        return (f"ActuatedSystem(inner={self.inner!r}, activations="
                f"{[a.state for a in self.activations]})")
