"""Exact linearizations of one model at many points, into buffers held between calls: the form for loops.

:func:`robodyn.linearize` validates its arguments, picks a method and returns a new :class:`LinearSystem` with
names, the operating point and its units: right for one point, ~10 us of bookkeeping per call. A loop over many
points (an MPC, a gain schedule, a trajectory) wants only the numbers. :class:`Linearizer` checks the model and the
parameters once, holds one buffer ``[A | B | C | D]``, and each call writes the exact matrices at a new point into
it through the model's ``bound_linearization`` (for rigid-body models: the compiled tape called on arguments written
in place, nothing allocated) and returns views of it — the same arrays every time, overwritten by the next call.

Only exact linearizations are offered (a model with a ``jacobian_method`` and exact output Jacobians); the numbers
are those of ``robodyn.linearize(model, x, u)``, bit for bit.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError
from robodyn.linearization.lean import finite_total
from robodyn.model.system import Values, require_model

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["Linearizer"]

_FLOAT: Final = np.dtype(np.float64)


class Linearizer:
    """Repeated exact linearizations of ``model`` into one held buffer.

    Parameters
    ----------
    model
        A model with an exact Jacobian (``model.jacobian_method``) and exact output Jacobians.
    params
        Parameter overrides, fixed for every call.
    t
        The time, for time-varying models.

    Attributes
    ----------
    A, B, C, D : (n, n), (n, m), (p, n), (p, m) views of the buffer, holding the last call's matrices

    Examples
    --------
    >>> lin = Linearizer(robodyn.load("pendulum"))  # doctest: +SKIP
    >>> A, B, C, D = lin([0.3, 0.0], [0.0])  # the same four arrays on every call: copy what you keep
    """

    __slots__ = ("A", "B", "C", "D", "_m", "_model", "_n", "_ones", "_out", "_p", "_run", "_t", "_u0", "_u_shape",
                 "_x_shape")

    def __init__(self, model: ModelContract, *, params: Values | None = None, t: float = 0.0):
        require_model(model, "Linearizer")
        chart = model.chart()
        if chart is not None:  # a moving base: in the tangent space, states and outputs (q (-) q0, v)
            self._chart_setup(model, chart, params, t)
            return
        if model.constraints() is not None:
            raise InputError(f"Linearizer: model {model.name!r} has closed loops: its linear model is in independent "
                             "coordinates assembled at each point; use robodyn.linearize(model, x, u)")
        if model.jacobian_method is None:
            raise InputError(f"Linearizer: model {model.name!r} has no exact Jacobian: use robodyn.linearize(model, "
                             "x, u, method='central') for a model given as Python callables")
        self._model = model
        self._n, self._m = model.n_states, model.n_inputs
        self._x_shape, self._u_shape = (self._n,), (self._m,)
        self._t, _, self._u0, self._p = model.arguments(t, np.zeros(self._n), None, params)
        if model.output_jacobians_raw(self._t, np.zeros(self._n), self._u0, self._p) is None:
            raise InputError(f"Linearizer: model {model.name!r} has no exact output Jacobians: use "
                             "robodyn.linearize(model, x, u), which differentiates h")
        n, m, p = self._n, self._m, model.n_outputs
        self._out = np.zeros((n + p) * (n + m))
        self._ones = np.ones(self._out.size)  # out . ones: a finite check in one BLAS call (~0.4 us, sum ~0.9)
        bounds = np.cumsum([0, n * n, n * m, p * n, p * m])
        self.A, self.B, self.C, self.D = (self._out[a:b].reshape(shape) for a, b, shape in
                                          zip(bounds[:-1], bounds[1:], ((n, n), (n, m), (p, n), (p, m))))
        self._run = model.bound_linearization(self._t, self._p, self._out)

    def _chart_setup(self, model: ModelContract, chart: Any, params: Values | None, t: float) -> None:
        """Buffers of the tangent space's sizes (robodyn.mechanisms.floating.chart.ChartModel.bound_linearization)."""
        self._model = model
        self._n, self._m = model.n_states, model.n_inputs
        self._x_shape, self._u_shape = (self._n,), (self._m,)
        self._t, _, self._u0, self._p = model.arguments(t, model.state_vector(chart.neutral({}), default=0.0),
                                                        None, params)
        n, m = len(chart.tangent_states), self._m
        self._out = np.zeros(2 * n * (n + m))
        self._ones = np.ones(self._out.size)
        bounds = np.cumsum([0, n * n, n * m, n * n, n * m])
        self.A, self.B, self.C, self.D = (self._out[a:b].reshape(shape) for a, b, shape in
                                          zip(bounds[:-1], bounds[1:], ((n, n), (n, m), (n, n), (n, m))))
        self._run = chart.bound_linearization(self._t, self._p, self._out)

    def __call__(self, x: Values, u: Values | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """A, B, C, D at the state ``x`` and input ``u`` (``None``: zeros): views of the held buffer.

        ``x`` ``(n,)`` and ``u`` ``(m,)`` as float64 arrays take the lean path; anything else (lists, mappings by
        name) is validated as :meth:`robodyn.model.system.Model.state_vector` does.
        """
        if not (type(x) is np.ndarray and x.dtype is _FLOAT and x.shape == self._x_shape):
            x = self._model.state_vector(x)
        if u is None:
            u = self._u0
        elif not (type(u) is np.ndarray and u.dtype is _FLOAT and u.shape == self._u_shape):
            u = self._model.input_vector(u)
        total = self._run(x, u)  # the sum of what it wrote when the rest is constant (the model's contract)
        if total is None:
            total = finite_total(self._out, self._ones)
        if not math.isfinite(total) and not np.isfinite(self._out).all():
            self._not_finite(x, u)
        return self.A, self.B, self.C, self.D

    def _repr_html_(self) -> str:
        """The model, its signals and the last call's A, B, C, D (for Jupyter)."""
        from robodyn import display

        model = self._model
        rows = [("model", model.name), ("states", ", ".join(model.states)),
                ("inputs", ", ".join(model.inputs) or "none"), ("outputs", ", ".join(model.outputs)), ("t", self._t)]
        states, inputs, outputs = model.states, model.inputs, model.outputs
        matrices = [display.matrix_html(matrix, labels[0], labels[1], title=name) for name, matrix, labels in
                    zip("ABCD", (self.A, self.B, self.C, self.D),
                        ((states, states), (states, inputs), (outputs, states), (outputs, inputs)))]
        return display.block([display.heading(f"Linearizer of {model.name!r} (the last call's matrices)"),
                              display.html_table(rows, row_header=True), *matrices])

    def _not_finite(self, x: np.ndarray, u: np.ndarray) -> None:
        """The model's own error for the point (a rigid-body model names a singular mass matrix), else InputError
        naming the point, as robodyn.linearize says it."""
        if not (np.isfinite(x).all() and np.isfinite(u).all()):
            raise InputError(f"Linearizer: the point has non-finite entries (x = {x.tolist()}, u = {u.tolist()}): "
                             "give finite numbers")
        self._model.linearization_into(self._t, x, u, self._p, np.empty_like(self._out))  # raises if it knows why
        point = dict(zip(self._model.states, x.tolist()))
        raise InputError(f"model {self._model.name!r}: the linearization at {point} has non-finite entries: "
                         "the model is not differentiable there; choose another point")
