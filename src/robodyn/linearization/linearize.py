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
import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Literal

import numpy as np

from robodyn.base.errors import ConvergenceError, InputError, NumericalError, ShapeError
from robodyn.linearization import LINEARIZATION_METHODS
from robodyn.linearization.lean import Layout, exact_at
from robodyn.model.kinds.linear import LinearSystem
from robodyn.model.system import Values, require_model

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["HOLD", "METHODS", "Point", "central_differences", "hold_point", "linearize", "operating_point"]

METHODS: Final = LINEARIZATION_METHODS
HOLD: Final = "hold"  # ``linearize(model, x, HOLD)``: the inputs that hold x (see :func:`operating_point`).
_STEP: Final = float(np.finfo(float).eps ** (1 / 3))  # Optimal central-difference step (relative).
COMPLEX_STEP: Final = 1e-20  # Relative complex step: truncation error ~ h^2, no cancellation.
_PROBE_TOLERANCE: Final = 1e-6  # Complex probe vs central difference (whose own error is ~1e-10 relative).
_BATCH_TOLERANCE: Final = 1e-12  # Batch probe vs single calls: vectorized ufuncs may differ by a few ulp.
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
    if model.chart() is not None:  # a manifold (a floating base): in the tangent space
        from robodyn.linearization.tangent_points import tangent_linearization

        return tangent_linearization(model, t, x, u, params, method, open)
    if model.constraints() is not None:  # closed loops: in the independent coordinates (robodyn.linearization.reduced)
        from robodyn.linearization.reduced import reduced_linearization

        return reduced_linearization(model, t, *hold_point(model, x, u, params, t), params, method, open)
    if open is not None:
        return _loop_transfer(model, open, x, u, params, t, method)
    if model.sampling() is not None:
        return _sampled(model, t, x, u, params, method)
    if method not in METHODS:
        raise InputError(f"unknown linearization method {method!r}: one of {', '.join(METHODS)}")
    x, u = hold_point(model, x, u, params, t)
    point = Point.of(model, t, x, u, params)
    chosen = _choose(model, method, point)
    if chosen == model.jacobian_method:  # exact: the model evaluates A, B, C, D itself
        buffer = model.linearization_raw(point.t, point.x, point.u, point.p)
        matrices = _finish(model, Layout.of(model), buffer, point.x)
        error = 0.0
    else:
        A, B, error = _differentiate(model, "f", chosen, point)
        exact_outputs = model.output_jacobians_raw(point.t, point.x, point.u, point.p)
        if exact_outputs is not None:
            C, D = exact_outputs
        else:
            C, D, error_h = _differentiate(model, "h", chosen, point)
            error = max(error, error_h)
        matrices = _pack(model, point.x, A, B, C, D)
    A, B, C, D = matrices
    return LinearSystem.from_checked(A, B, C, D, states=model.states, inputs=model.inputs, outputs=model.outputs,
                                 name=model.name, x_op=point.x, u_op=point.u, method=chosen, error_estimate=error,
                                 source=model)


def hold_point(model: ModelContract, x: Values, u: Values | Literal["hold"] | None, params: Values | None, t: float
               ) -> tuple[Values, Values | None]:
    """``(x, u)`` as given, or the operating point (:func:`operating_point`) for ``u="hold"``."""
    if not isinstance(u, str):
        return x, u
    if u != HOLD:
        raise InputError(f"linearize: u must be input values or {HOLD!r} (the holding input), got {u!r}")
    return operating_point(model, x, params=params, t=t)


def _loop_transfer(model: ModelContract, port: str, x: Values, u: Values | None, params: Values | None, t: float,
                   method: str) -> LinearSystem:
    """The loop transfer L at ``port`` (see :func:`linearize`), at the operating point of the closed loop."""
    if model.block_diagram() is None:
        raise InputError(f"linearize: open={port!r} breaks a loop of a diagram; {model.name!r} is a {model.kind} "
                         "model (make a robodyn.Diagram of the plant and the controller)")
    x, u = hold_point(model, x, u, params, t)
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


def _sampled(model: ModelContract, t: float, x: Values, u: Values | None, params: Values | None,
             method: str) -> LinearSystem:
    """The discrete-time linear model of a model with sampled parts over its hyperperiod (exact Jacobians)."""
    if method not in ("auto", "exact"):
        raise InputError(f"linearize: a model with sampled blocks is linearized exactly (method 'auto'), not by "
                         f"{method!r}")
    x, u = hold_point(model, x, u, params, t)
    point = Point.of(model, t, x, u, params)
    sampling = model.sampling()
    A, B, C, D = sampling.linearization(point.t, point.x, point.u, point.p)
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


# --- the point -------------------------------------------------------------------------------------------
@dataclass(slots=True)
class Point:
    """A validated operating point of a model: the time ``t`` and float64 arrays ``x`` (n_states,), ``u``
    (n_inputs,), ``p`` (n_parameters,) (owned, not to be written); made by :meth:`of`."""

    t: float
    x: np.ndarray
    u: np.ndarray
    p: np.ndarray

    @staticmethod
    def of(model: ModelContract, t: Any, x: Values, u: Values | None, params: Values | None) -> Point:
        """Validate once. Plain floats in dicts, lists or float arrays take a lean path (the checks of
        ``Model.arguments``, which no kind overrides: tests/model/test_protocol.py); anything else, and every
        error, goes through ``model.arguments`` (same messages as ``model.f``)."""
        fast = type(t) is float and math.isfinite(t)
        xv = _floats(x, model.states, required=True) if fast else None
        uv = _floats(u, model.inputs, required=False) if xv is not None else None
        defaults = model.default_parameters() if params is None and uv is not None else None
        if xv is None or uv is None or defaults is None:
            return Point(*model.arguments(t, x, u, params))
        return Point(t, xv, uv, defaults[1])


def _floats(values: Any, names: tuple[str, ...], *, required: bool) -> np.ndarray | None:
    """``values`` as a new float64 vector of finite numbers in the order of ``names``, or None to take the
    general path.

    Only plain ``float``/``int`` entries of a dict, list or tuple, or a float64 vector, qualify; names
    left out of a dict are 0 unless ``required``.
    """
    if values is None:
        return None if required and names else np.zeros(len(names))
    if type(values) is np.ndarray:
        if values.dtype != np.float64 or values.shape != (len(names),) or not math.isfinite(values.sum()):
            return None  # (a sum that overflows only sends a finite vector down the general path)
        return values.copy()
    if type(values) is dict:
        known = sum(name in values for name in names)
        if known != len(values) or (required and known != len(names)):
            return None  # an unknown or a missing name: let the general path say which
        items = [values.get(name, 0.0) for name in names]
    elif type(values) is list or type(values) is tuple:
        items = list(values)
    else:
        return None
    if len(items) != len(names):
        return None
    for i, item in enumerate(items):
        if type(item) is int and abs(item) <= 2**53:
            item = items[i] = float(item)
        if type(item) is not float or not math.isfinite(item):
            return None
    return np.array(items)


# --- which method ------------------------------------------------------------------------------------------
def _choose(model: ModelContract, method: str, point: Point) -> str:
    exact = model.jacobian_method
    if method == "auto":
        if exact is not None:
            return exact
        return "complex" if _capability(model, "f", "complex", point) else "central"
    if method == "central" or method == exact:
        return method
    if method == "complex":
        if _capability(model, "f", "complex", point):
            return "complex"
        raise InputError(
            f"model {model.name!r}: f does not accept complex input (it raised, warned, dropped the imaginary "
            f"part or returned a wrong derivative): use method 'central', or write f with numpy functions"
        )
    raise InputError(
        f"method {method!r} is not available for the {model.kind} model {model.name!r}: "
        f"use {exact or 'complex or central'} (or auto)"
    )


def _pack(model: ModelContract, x: np.ndarray, A: Any, B: Any, C: Any, D: Any) -> tuple[np.ndarray, ...]:
    """A, B, C, D in one buffer (see :func:`_finish`)."""
    buffer = np.concatenate((np.ravel(A), np.ravel(B), np.ravel(C), np.ravel(D))).astype(float, copy=False)
    return _finish(model, Layout.of(model), buffer, x)


def _finish(model: ModelContract, layout: Layout, buffer: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, ...]:
    """Check every entry finite in one pass and return read-only views A, B, C, D of ``buffer``."""
    # one cheap pass: a Python sum for small buffers, numpy's above ~100 entries (where tolist() costs more);
    # a sum that overflows only sends a finite buffer to the full check
    finite = math.isfinite(sum(buffer.tolist()) if buffer.size <= 128 else buffer.sum())
    if not finite and not np.isfinite(buffer).all():
        bounds = layout.bounds
        label = next(label for k, label in enumerate("ABCD")
                     if not np.isfinite(buffer[bounds[k]: bounds[k + 1]]).all())
        point = dict(zip(model.states, x.tolist()))
        raise InputError(f"model {model.name!r}: the linearization at {point} has non-finite entries in {label}: "
                         "the model is not differentiable there; choose another point")
    buffer.setflags(write=False)
    return layout.views(buffer)


# --- callables: complex step and central differences ------------------------------------------------------
def _differentiate(model: ModelContract, which: str, method: str, point: Point
                   ) -> tuple[np.ndarray, np.ndarray, float]:
    """d(which)/dx, d(which)/du and an error estimate, by ``method`` (complex falls back to central for an
    h that does not accept complex input)."""
    function = model.raw_function(which)
    size = model.n_states if which == "f" else model.n_outputs
    n = model.n_states
    label = f"model {model.name!r}: {which}"

    def single(z: np.ndarray) -> np.ndarray:
        result = np.asarray(function(point.t, z[:n], z[n:], point.p))
        if result.ndim == 0 and size == 1:
            result = result.reshape(1)
        if result.shape != (size,):
            raise ShapeError(f"{label} returned shape {result.shape}, expected ({size},)")
        return result

    def many(points: np.ndarray) -> np.ndarray | None:  # points (d, N) -> (size, N), or None: one call a point
        try:  # the batch verdict came from real points; complex ones may still fail
            result = np.asarray(function(point.t, points[:n], points[n:], point.p))
        except Exception:
            return None
        kind = "c" if points.dtype.kind == "c" else "f"  # a real result of complex points lost its derivative
        return result if result.shape == (size, points.shape[1]) and result.dtype.kind == kind else None

    batch = many if _capability(model, which, "batch", point) else None
    z0 = np.concatenate((point.x, point.u))
    if method == "complex" and (which == "f" or _capability(model, which, "complex", point)):
        jacobian, error = _complex_step(single, batch, z0)
    else:
        jacobian, error = _central_steps(single, batch, z0)
    return jacobian[:, :n], jacobian[:, n:], error


Single = Callable[[np.ndarray], np.ndarray]  # z (d,) -> (k,)
Batch = Callable[[np.ndarray], "np.ndarray | None"]  # points as columns (d, N) -> (k, N), or None


def _complex_step(single: Single, batch: Batch | None, z0: np.ndarray) -> tuple[np.ndarray, float]:
    """Jacobian at ``z0`` by complex steps h_j = COMPLEX_STEP max(1, |z_j|), and its truncation estimate."""
    steps = COMPLEX_STEP * np.maximum(1.0, np.abs(z0))
    points = z0 + 1j * np.diag(steps)  # row j: z0 + i h_j e_j
    values = batch(points.T) if batch is not None else None
    if values is None:
        values = np.stack([single(row) for row in points], axis=1)
    jacobian = np.ascontiguousarray(values.imag / steps)
    estimate = float(steps.max() ** 2 * max(1.0, np.abs(jacobian).max(initial=0.0)))
    return jacobian, estimate


def _central_steps(single: Single, batch: Batch | None, z0: np.ndarray) -> tuple[np.ndarray, float]:
    """Jacobian at ``z0`` by central differences, and an error estimate.

    The estimate is max |D(h) - D(2h)|: the truncation error of D(h) is O(h^2), that of D(2h) four
    times larger, so their difference bounds the error of D(h) (Richardson).
    """
    d = z0.size
    steps = _STEP * np.maximum(1.0, np.abs(z0))
    points = z0 + _offsets(d) * steps  # (4d, d): z0 + h_j e_j, z0 - h_j e_j, z0 + 2 h_j e_j, z0 - 2 h_j e_j
    values = batch(points.T) if batch is not None else None
    if values is None:
        values = np.stack([single(row) for row in points], axis=1)
    values = values.astype(float, copy=False).reshape(-1, 4, d)
    fine = (values[:, 0] - values[:, 1]) / (2 * steps)
    coarse = (values[:, 2] - values[:, 3]) / (4 * steps)
    return fine, float(np.abs(fine - coarse).max(initial=0.0))


@functools.cache
def _offsets(d: int) -> np.ndarray:
    """The unit offsets of central differences with steps h and 2h: [I; -I; 2I; -2I], shape (4d, d)."""
    offsets = np.kron([[1.0], [-1.0], [2.0], [-2.0]], np.eye(d))
    offsets.setflags(write=False)
    return offsets


def central_differences(function: Callable[[np.ndarray], Any], point: np.ndarray) -> tuple[np.ndarray, float]:
    """Jacobian ``(k, d)`` of ``function`` at ``point`` ``(d,)`` by central differences with steps h and 2h, and
    the Richardson error estimate max |D(h) - D(2h)| (see :func:`_central_steps`); one call per perturbed point,
    ``function`` returning ``k`` values (any shape) for a ``(d,)`` point."""
    return _central_steps(lambda z: np.asarray(function(z), dtype=float).reshape(-1), None,
                          np.asarray(point, dtype=float))


# --- probes: what a callable accepts, decided once per model ---------------------------------------------
def _capability(model: ModelContract, which: str, kind: str, point: Point) -> bool:
    verdicts: dict[tuple[str, str], bool] = model.memo().setdefault("linearize probes", {})
    key = (which, kind)
    if key not in verdicts:
        function = model.raw_function(which)
        size = model.n_states if which == "f" else model.n_outputs
        probe = _accepts_complex if kind == "complex" else _accepts_batch
        verdicts[key] = probe(function, point, size)
    return verdicts[key]


def _calls(function: Callable[..., Any], point: Point, points: list[np.ndarray]) -> list[np.ndarray] | None:
    """``function`` at each point z = [x, u] (or (d, N) batch), warnings as errors; None if any call fails."""
    n = point.x.size
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return [np.asarray(function(point.t, z[:n], z[n:], point.p)) for z in points]
    except Exception:  # a probe: any failure means "no"
        return None


def _accepts_complex(function: Callable[..., Any], point: Point, size: int) -> bool:
    z0 = np.concatenate((point.x, point.u))
    direction = np.maximum(1.0, np.abs(z0)) * (1.0 + np.arange(z0.size) / z0.size)  # every entry moves
    results = _calls(function, point, [z0 + 1j * COMPLEX_STEP * direction,
                                       z0 + _STEP * direction, z0 - _STEP * direction])
    if results is None:
        return False
    probe, plus, minus = (r.reshape(1) if r.ndim == 0 and size == 1 else r for r in results)
    if probe.shape != (size,) or probe.dtype.kind != "c" or not np.isfinite(probe).all():
        return False
    if plus.shape != (size,) or minus.shape != (size,) or plus.dtype.kind not in "fi":
        return False
    difference = (plus - minus) / (2 * _STEP)
    slope = probe.imag / COMPLEX_STEP
    return bool(np.all(np.abs(slope - difference) <= _PROBE_TOLERANCE * (1.0 + np.abs(difference).max())))


def _accepts_batch(function: Callable[..., Any], point: Point, size: int) -> bool:
    z0 = np.concatenate((point.x, point.u))
    columns = z0[:, None] + np.outer(np.maximum(1.0, np.abs(z0)), [0.0, 1e-3, -2e-3])  # three distinct points
    results = _calls(function, point, [columns, *columns.T.copy()])
    if results is None:
        return False
    together, singles = results[0], results[1:]
    if together.shape != (size, 3) or together.dtype.kind != "f":
        return False
    if any(s.reshape(-1).shape != (size,) for s in singles):
        return False
    reference = np.stack([s.reshape(-1) for s in singles], axis=1).astype(float)
    scale = _BATCH_TOLERANCE * max(1.0, float(np.abs(reference).max(initial=0.0)))
    return bool(np.isfinite(together).all() and np.all(np.abs(together - reference) <= scale))

