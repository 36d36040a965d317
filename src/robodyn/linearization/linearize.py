"""Linearization at an operating point: delta x' = A delta x + B delta u, delta y = C delta x + D delta u.

The best derivative the model supports is used (exact when it can be, else complex step, else central
differences), and reported:

- ``symbolic``: exact sympy Jacobians of an explicit first-order model;
- ``manipulator``: second-order models M(q) q'' = r(t, q, q', u), exact at any point without inverting M
  symbolically (A21 = M^-1 (dr/dq - [dM/dq_k q'']_k), A22 = M^-1 dr/dq', B2 = M^-1 dr/du);
- ``linear``: a LinearSystem is its own linearization;
- ``complex``: complex-step differentiation, J e_j = Im f(z + i h_j e_j) / h_j, for models given as Python
  callables that accept complex input. There is no subtraction, so h_j = 1e-20 max(1, |z_j|) can be tiny:
  the truncation error is h^2 |f'''| / 6, reported as h^2 max(1, max |J|) (~1e-40, rounding aside).
  Reference: J. R. R. A. Martins, P. Sturdza, J. J. Alonso, "The complex-step derivative approximation",
  ACM TOMS 29 (2003) 245-262;
- ``central``: central differences with the per-component step eps^(1/3) max(1, |z_j|) and a Richardson
  estimate of the error (the difference between steps h and 2h).

Symbolic models give C and D exactly (dh/dx, dh/du); callables differentiate h like f.

:func:`linearize` is one driver of three named steps (after the lean path of float vectors, robodyn.linearization.
lean): :func:`transform` chooses the coordinates (a floating base's tangent space, a linkage's independent
coordinates, a diagram's opened loop, a sampled model's hyperperiod, or the states) and checks the method for
them, :func:`resolve_point` resolves the point (``u="hold"``: the holding input, by find_equilibrium), and the
step :func:`transform` returned differentiates there (robodyn.linearization.derivatives in the states). None of
the steps calls linearize back: the modules are imported one way (derivatives, tangent_points and reduced below
this one, equilibrium only from :func:`operating_point`).

Callables are probed once per model and the verdicts cached on the model:

- *complex*: one call with a complex state and input (no exception or warning, a finite complex result
  whose imaginary part matches a central difference along the same direction). ``auto`` then uses
  ``complex``; a callable built on ``math`` functions is rejected and ``auto`` falls back to ``central``.
- *batch*: the protocol is ``f(t, X, U, p)`` with the points as columns, X ``(n, N)`` and U ``(m, N)``,
  returning ``(n, N)`` (numpy code written with ``x[0]``, ``u[0]``, ``np.sin`` usually does). It is
  accepted when a 3-column probe equals three single calls; then each Jacobian [df/dx | df/du] costs
  one call instead of n + m (complex) or 4 (n + m) (central).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Literal

import numpy as np

from robodyn.base.errors import ConvergenceError, InputError, NumericalError
from robodyn.linearization import LINEARIZATION_METHODS
from robodyn.linearization.derivatives import Point, differentiate, extrapolated_differences
from robodyn.linearization.lean import exact_at
from robodyn.model.kinds.linear import LinearSystem
from robodyn.model.system import Values, require_model

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["HOLD", "METHODS", "Differentiate", "linearize", "operating_point", "resolve_point", "transform"]

METHODS: Final = LINEARIZATION_METHODS
HOLD: Final = "hold"  # ``linearize(model, x, HOLD)``: the inputs that hold x (see :func:`operating_point`).
def linearize(
    model: ModelContract,
    x: Values,
    u: Values | Literal["hold"] | None = None,
    *,
    params: Values | None = None,
    t: float = 0.0,
    method: str = "auto",
    open: str | None = None,
) -> LinearSystem:
    """Linearize ``model`` at the state ``x`` and input ``u`` (any point, not only equilibria).

    Parameters
    ----------
    model
        Any robodyn model.
    x, u
        The operating point: arrays in model order or ``{name: value}`` mappings. ``x`` names every state;
        inputs left out of ``u`` (or ``u=None``) are 0, exactly as given. ``u="hold"`` (:data:`HOLD`) takes
        the operating point as ``robodyn linearize --at`` does (:func:`operating_point`): states left out of
        ``x`` are 0 and the inputs are the holding input at x when one exists (e.g. the torque that holds a
        pendulum at theta against gravity), else 0. For some inputs given and the others held, pass
        ``*operating_point(model, x, u)``.
    params
        Parameter overrides.
    t
        The time, for time-varying models.
    method
        ``auto`` (the best available), ``symbolic``, ``manipulator``, ``linear``, ``complex`` or ``central``.
    open
        A diagram's port (``"pid.u"``) at which to break its loop: the result is then the loop transfer L at
        that point, SISO from the injected signal to the returned one with the sign of negative feedback
        (returned = -L injected: L = C P for a controller C and a plant P closed by e = r - y), so that
        ``margins()`` reads it as a textbook's L(s); the other inputs are held at ``u``.

    Returns
    -------
    LinearSystem
        With ``x_op``, ``u_op``, ``method`` (the one used) and ``error_estimate``: 0 for the exact
        methods, ~h^2 for ``complex``, the Richardson estimate for ``central``.

    Examples
    --------
    >>> linearize(robodyn.load("pendulum"), {"theta": math.pi, "theta_dot": 0.0}).A  # doctest: +SKIP
    array([[0.  , 1.  ],
           [9.81, 0.  ]])
    """
    require_model(model, "linearize")
    if method == "auto" and open is None and params is None and type(t) is float:  # first: what loops call
        fast = exact_at(model, t, x, u)
        if fast is not None:
            return fast
    differentiate_at = transform(model, method, open)  # checked first: a refused call resolves no point
    x, u = resolve_point(model, x, u, params, t)
    return differentiate_at(t, x, u, params)


#: The last step of :func:`linearize`: the linear model at ``(t, x, u, params)`` (the point resolved: ``u`` not
#: ``"hold"``), in the coordinates :func:`transform` chose.
Differentiate = Callable[[float, Values, "Values | None", "Values | None"], LinearSystem]


def resolve_point(model: ModelContract, x: Values, u: Values | Literal["hold"] | None, params: Values | None,
                  t: float) -> tuple[Values, Values | None]:
    """The first step of :func:`linearize`: ``(x, u)`` as given, or the operating point (:func:`operating_point`,
    the holding input found by find_equilibrium) for ``u="hold"``."""
    if not isinstance(u, str):
        return x, u
    if u != HOLD:
        raise InputError(f"linearize: u must be input values or {HOLD!r} (the holding input), got {u!r}")
    return operating_point(model, x, params=params, t=t)


def transform(model: ModelContract, method: str, open: str | None) -> Differentiate:
    """The second step of :func:`linearize`: the coordinates ``model`` is differentiated in, as the step that
    differentiates there; InputError for a ``method`` or ``open`` they do not take.

    - a manifold (``chart()``: a floating base): its tangent space, exactly (robodyn.linearization.tangent_points);
    - closed loops (``constraints()``): the independent coordinates, exactly (robodyn.linearization.reduced);
    - ``open``: a diagram's loop broken at that port, the loop transfer (:func:`_loop_transfer`);
    - sampled blocks (``sampling()``): the discrete-time model over the hyperperiod (:func:`_sampled`);
    - else the model's own states, by ``method`` (robodyn.linearization.derivatives.differentiate).
    """
    if model.chart() is not None:  # a manifold (a floating base): in the tangent space
        from robodyn.linearization import tangent_points

        _exact_only(model, method, open, "has a moving base: it is linearized exactly in its tangent space")
        return functools.partial(tangent_points.tangent_linearization, model)
    if model.constraints() is not None:  # closed loops: in the independent coordinates (robodyn.linearization.reduced)
        from robodyn.linearization.reduced import reduced_linearization

        _exact_only(model, method, open, "has constraints: it is linearized exactly in its independent coordinates")
        return functools.partial(reduced_linearization, model)
    if open is not None:
        if model.block_diagram() is None:
            raise InputError(f"linearize: open={open!r} breaks a loop of a diagram; {model.name!r} is a {model.kind} "
                             "model (make a robodyn.Diagram of the plant and the controller)")
        return functools.partial(_loop_transfer, model, open, method)
    if model.sampling() is not None:
        if method not in ("auto", "exact"):
            raise InputError(f"linearize: a model with sampled blocks is linearized exactly (method 'auto'), not by "
                             f"{method!r}")
        return functools.partial(_sampled, model)
    if method not in METHODS:
        raise InputError(f"unknown linearization method {method!r}: one of {', '.join(METHODS)}")
    return functools.partial(_in_states, model, method)


def _exact_only(model: ModelContract, method: str, open: str | None, why: str) -> None:
    """InputError unless ``method`` is ``auto`` (or ``manipulator``) without ``open``: the coordinates ``why`` names
    are linearized exactly."""
    if method not in ("auto", "manipulator") or open is not None:
        raise InputError(f"linearize: model {model.name!r} {why} (method 'auto', without open=)")


def _in_states(model: ModelContract, method: str, t: float, x: Values, u: Values | None, params: Values | None
               ) -> LinearSystem:
    """The linear model in the model's own states: the point validated, then differentiated by ``method``."""
    return differentiate(model, Point.of(model, t, x, u, params), method)


def _loop_transfer(model: ModelContract, port: str, method: str, t: float, x: Values, u: Values | None,
                   params: Values | None) -> LinearSystem:
    """The loop transfer L at ``port`` (see :func:`linearize`), at the operating point of the closed loop."""
    point = Point.of(model, t, x, u, params)
    opened, injected, returned = model.open_loop(port)
    p = opened.parameter_vector(params)
    # the injected signal at the closed loop's operating point: the returned one (it does not depend on it)
    guess = np.concatenate([point.u, [0.0]])
    value = opened.h_raw(point.t, point.x, guess, p)[0]
    loop = linearize(opened, point.x, np.concatenate([point.u, [value]]), params=params, t=t, method=method)
    A, B, C, D = loop.A, loop.B[:, -1:], -loop.C, -loop.D[:, -1:]
    A, B, C, D, x_op = (np.array(m, dtype=float, order="C") for m in (A, B, C, D, loop.x_op))
    u_op = np.array([value])
    for array in (A, B, C, D, x_op, u_op):
        array.setflags(write=False)
    units = MappingProxyType({k: v for k, v in loop.declared_units.items() if k in loop.states})
    return LinearSystem.from_fields(A, B, C, D, x_op, u_op, loop.states, (injected,), (returned,),
                                    f"{model.name} loop at {port}", loop.method, loop.error_estimate, loop.dt, units)


def _sampled(model: ModelContract, t: float, x: Values, u: Values | None, params: Values | None) -> LinearSystem:
    """The discrete-time linear model of a model with sampled parts over its hyperperiod (exact Jacobians)."""
    point = Point.of(model, t, x, u, params)
    sampling = model.sampling()
    assert sampling is not None  # transform sends only such models here
    A, B, C, D = sampling.linearization(point.t, point.x, point.u, point.p, extrapolated_differences)
    if not all(np.all(np.isfinite(m)) for m in (A, B, C, D)):
        raise NumericalError(f"linearize: {model.name!r} has non-finite derivatives at this point")
    A, B, C, D, x_op, u_op = (np.array(m, dtype=float, order="C") for m in (A, B, C, D, point.x, point.u))
    for array in (A, B, C, D, x_op, u_op):
        array.setflags(write=False)
    units = MappingProxyType({k: v for k, v in model.units().items()
                              if k in {*model.states, *model.inputs, *model.outputs}})
    return LinearSystem.from_fields(A, B, C, D, x_op, u_op, model.states, model.inputs, model.outputs, model.name,
                                    "sampled", 0.0, float(sampling.hyperperiod), units)




def operating_point(
    model: ModelContract, x: Values, u: Values | None = None, *, params: Values | None = None, t: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The operating point with the values left out filled in by one rule (``robodyn linearize --at``, ``validity
    --at`` and ``linearize(model, x, "hold")``).

    - States left out of the mapping ``x`` are 0 (a velocity left out: at rest).
    - A moving base (``model.chart()``): its rotation left out is none, and the inputs left out are 0 (the joints
      cannot hold a free base).
    - Closed loops (``model.constraints()``): the states named are held and the others assembled
      (robodyn.mechanisms.loops.assembly.completed): the coordinates left out close the loops, the velocities left out
      follow.
    - Inputs left out of ``u`` are the holding input at x when one exists: the inputs that make f(t, x, u) = 0
      with the given ones, found by :func:`~robodyn.linearization.equilibrium.find_equilibrium` with every state
      fixed (for a second-order model at rest, the torques that hold q against gravity and springs, exactly).
      Else (no input can hold x, e.g. a velocity that is not 0) they are 0.

    Returns
    -------
    x : (n,), u : (m,)
        float64 vectors in model order.
    """
    from robodyn.linearization.equilibrium import find_equilibrium  # deferred: equilibrium imports this module

    require_model(model, "operating_point")
    chart = model.chart()
    if chart is not None:  # a moving base: a rotation left out is none; nothing holds a free base, inputs left out 0
        return model.state_vector(chart.neutral(x) if isinstance(x, Mapping) else x, default=0.0), model.input_vector(u)
    if isinstance(x, Mapping) and model.constraints() is not None:  # closed loops: the states left out assembled
        from robodyn.mechanisms.loops.assembly import completed

        x = completed(model, x, params=params, t=t)
    states = model.state_vector(x, default=0.0)
    values = model.input_vector(u)
    given = set(model.inputs) if u is not None and not isinstance(u, Mapping) else set(u or ())
    if given >= set(model.inputs):
        return states, values
    fix = {**dict(zip(model.states, states.tolist())),
           **{name: value for name, value in zip(model.inputs, values.tolist()) if name in given}}
    try:
        (point, *_) = find_equilibrium(model, fix=fix, params=params, t=t)
    except (ConvergenceError, InputError):
        return states, values  # nothing holds x: the inputs left out stay 0
    return states, np.array(point.u, dtype=float)


