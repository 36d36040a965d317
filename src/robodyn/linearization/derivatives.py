"""Differentiation at a validated point: the last step of :func:`robodyn.linearization.linearize.linearize`.

:class:`Point` validates an operating point once; :func:`differentiate` gives the linear model there by the best
derivative the model supports (exact, complex step, central differences with a Richardson error estimate; the
methods and the probes of callables are described in robodyn.linearization.linearize). :func:`central_differences`
is also the Jacobian of find_equilibrium's Newton steps and of the families' tangents
(robodyn.linearization.equilibrium, robodyn.linearization.families). Nothing here resolves a point or changes
coordinates: this module imports no other step of linearize.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError, ShapeError
from robodyn.linearization.lean import Layout
from robodyn.model.kinds.linear import LinearSystem
from robodyn.model.system import Values

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["COMPLEX_STEP", "Point", "central_differences", "differentiate", "extrapolated_differences"]

_STEP: Final = float(np.finfo(float).eps ** (1 / 3))  # Optimal central-difference step (relative).
COMPLEX_STEP: Final = 1e-20  # Relative complex step: truncation error ~ h^2, no cancellation.
_PROBE_TOLERANCE: Final = 1e-6  # Complex probe vs central difference (whose own error is ~1e-10 relative).
_BATCH_TOLERANCE: Final = 1e-12  # Batch probe vs single calls: vectorized ufuncs may differ by a few ulp.


# --- the point -------------------------------------------------------------------------------------------
@dataclass(slots=True)
class Point:
    """A validated operating point: float64 arrays (owned, not to be written)."""

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


def differentiate(model: ModelContract, point: Point, method: str) -> LinearSystem:
    """The linear model of ``model`` at the validated ``point`` by ``method`` (robodyn.linearization.linearize's
    methods, ``auto`` included): exact when it is the model's own ``jacobian_method`` (the model evaluates
    A, B, C, D itself), else complex step or central differences of f, and of h without exact output Jacobians;
    A (n, n), B (n, m), C (p, n), D (p, m), with the method used and the error estimate."""
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
    """Jacobian ``(k, d)`` of ``function`` at ``point`` ``(d,)`` by central differences, and the Richardson
    error estimate (see :func:`_central_steps`); one call per perturbed point."""
    return _central_steps(lambda z: np.asarray(function(z), dtype=float).reshape(-1), None,
                          np.asarray(point, dtype=float))


def extrapolated_differences(function: Callable[[np.ndarray], Any], point: np.ndarray
                             ) -> tuple[np.ndarray, float]:
    """Jacobian ``(k, d)`` of ``function`` at ``point`` ``(d,)`` from the same four calls per coordinate as
    :func:`central_differences`, Richardson-extrapolated: (4 D(h) - D(2h)) / 3 cancels the h^2 term, leaving
    O(h^4) (Dahlquist & Björck, *Numerical Methods*, 1974, sec. 7.2): for a function that bends on a scale below
    the step (a filter's covariance, whose coordinates are offsets from a prior of 1). The error estimate is
    |D(h) - D(2h)| / 3, an upper estimate of what the extrapolation removed."""
    z0 = np.asarray(point, dtype=float)
    d = z0.size
    steps = _STEP * np.maximum(1.0, np.abs(z0))
    values = np.stack([np.asarray(function(row), dtype=float).reshape(-1) for row in z0 + _offsets(d) * steps],
                      axis=1).reshape(-1, 4, d)
    fine = (values[:, 0] - values[:, 1]) / (2 * steps)
    coarse = (values[:, 2] - values[:, 3]) / (4 * steps)
    return fine + (fine - coarse) / 3.0, float(np.abs(fine - coarse).max(initial=0.0)) / 3.0


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

