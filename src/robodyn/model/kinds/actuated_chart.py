"""The chart of a model with actuator states: the inner model's chart with the activations among its stored states.

A model with activations (robodyn.model.kinds.actuated.ActuatedSystem) whose inner model lies on a manifold (a
floating base, ball joints) is integrated in the inner model's chart (robodyn.model.kinds.chart.TangentChart). The
chart's state is the outer stored state — the inner model's, then the activations — with the inner chart's tangent
coordinates appended; its right-hand side, Jacobian and recentring are the inner chart's on the gathered entries
(the activations' rates beside them, the activations untouched by the recentring), compiled the same way
(robodyn.model.kinds.actuator_code). Its linear model is the inner chart's in the tangent space, composed with the
activations (:meth:`ActuatedChart.linearization`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from robodyn.base.errors import InputError
from robodyn.model.kinds.actuator_code import chart_source, jacobian_source, rhs_source
from robodyn.model.kinds.chart import TangentChart
from robodyn.model.system import Vector

__all__ = ["ActuatedChart"]


class ActuatedChart(TangentChart):
    """The chart of ``model`` (an ActuatedSystem) from its inner model's chart ``inner``; states ``[the inner
    stored state (n), the activations (k), the inner chart's tangent coordinates (nd)]``."""

    def __init__(self, model: Any, inner: Any):
        self.model, self.inner = model, inner
        super().__init__(model, tuple(inner.tangent), inner.manifold, inner.base, "actuated chart memo")
        n, k, nd = model.inner.n_states, len(model.activations), len(inner.tangent)
        self.layout = model.layout.moved((*range(n), *range(n + k, n + k + nd)), tuple(range(n, n + k)),
                                         n + k + nd)

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self.layout.derivative(self.inner.f_raw(t, *self.layout.split(x, u), p), x, u)

    @property
    def jacobian_method(self) -> str | None:
        method: str | None = self.inner.jacobian_method
        return method

    def jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        return self.layout.compose(*self.inner.jacobians_raw(t, *self.layout.split(x, u), p))

    def kernel_rhs_source(self) -> str:
        return rhs_source(self.layout, self.inner.kernel_rhs_source())

    def kernel_jacobian_source(self) -> str | None:
        source = self.inner.kernel_jacobian_source()
        return None if source is None else jacobian_source(self.layout, source)

    def kernel_chart_source(self) -> str:
        return chart_source(self.layout, self.inner.kernel_chart_source())

    def kernel_event_source(self, events: Sequence[Any]) -> str:
        raise self._text_events()

    def symbol_table(self) -> Any:
        return None

    def _text_events(self) -> InputError:
        return InputError(f"model {self.name!r}: events written as text are not built for a model with actuator "
                          "states on a manifold: give the event as a callable g(t, x, u, p) of the stored state")

    # --- between stored and chart states ---------------------------------------------------------------
    @property
    def _sizes(self) -> tuple[int, int]:
        return self.model.inner.n_states, len(self.model.activations)

    def project(self, y: np.ndarray) -> np.ndarray:
        """Chart states ``(..., n + k + nd)`` as stored states ``(..., n + k)``: the inner chart's projection, the
        activations as they are."""
        y = np.asarray(y, dtype=float)
        n, k = self._sizes
        inner = self.inner.project(y[..., list(self.layout.gather)])
        return np.concatenate([inner, y[..., n: n + k]], -1)

    def tolerances(self, atol: np.ndarray) -> np.ndarray:
        """Absolute tolerances ``(n + k + nd,)`` from the stored state's ``(n + k,)``."""
        n, _ = self._sizes
        inner = self.inner.tolerances(np.asarray(atol[:n], dtype=float))
        return np.concatenate([inner[:n], atol[n:], inner[n:]])

    @property
    def base_coordinates(self) -> tuple[str, ...]:
        return tuple(self.inner.base_coordinates)

    @property
    def coordinates(self) -> tuple[str, ...]:
        return tuple(self.inner.coordinates)

    @property
    def rotation(self) -> slice:
        rotation: slice = self.inner.rotation
        return rotation

    @property
    def tangent_states(self) -> tuple[str, ...]:
        """The inner chart's tangent-space names, then the activations."""
        return (*self.inner.tangent_states, *(a.state for a in self.model.activations))

    def checked(self, x: Vector) -> Vector:
        """A stored state ``(n + k,)`` with the inner chart's rotations checked unit."""
        x = self.model.state_vector(x)
        n, _ = self._sizes
        return np.concatenate([self.inner.checked(x[:n]), x[n:]])

    def neutral(self, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
        neutral: dict[str, Any] = self.inner.neutral(values)
        return neutral

    def _tangent_layout(self, size: int) -> Any:
        k = len(self.model.activations)
        return self.model.layout.moved(tuple(range(size)), tuple(range(size, size + k)), size + k)

    def linearization(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, ...]:
        """A, B, C, D in the tangent space at the stored state ``x`` ``(n + k,)``: the inner chart's, with the
        activations appended (:attr:`tangent_states`); the outputs are the tangent state (C = I, D = 0)."""
        A_inner, B_inner, _, _ = self.inner.linearization(t, *self.model.split(x, u), p)
        A, B = self._tangent_layout(A_inner.shape[0]).compose(A_inner, B_inner)
        return A, B, np.eye(A.shape[0]), np.zeros_like(B)

    def bound_linearization(self, t: float, p: Vector, out: np.ndarray) -> Any:
        """``run(x, u)`` writing [A | B | C | D] of :meth:`linearization` at the stored state ``x`` into ``out``."""
        def run(x: Vector, u: Vector) -> None:
            out[:] = np.concatenate([m.ravel() for m in self.linearization(t, x, u, p)])

        return run

    def tangent_model(self, centre: Vector) -> Any:
        raise InputError(f"model {self.name!r}: the model in the tangent space (equilibria, validity) is not built "
                         "for a model with actuator states on a manifold yet: linearize it at a state instead")
