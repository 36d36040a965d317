"""Operating points of a model on a manifold (a robot on a moving base), found, linearized and sampled in its tangent
space; :func:`sampled_model` also gives a linkage's independent coordinates (robodyn.linearization.reduced).

:func:`robodyn.find_equilibrium` solves f = 0 in a vector space; a robot on a floating or planar base stores its
base rotation as a unit quaternion (or cos, sin), which a solver may not move freely. So the problem is posed on
the tangent model at a centre (robodyn.mechanisms.floating.chart.TangentModel: states z = (q (-) q0, v), Euclidean,
Pinocchio's
``difference``), solved there as for any model, and every solution is returned as a stored state q0 (+) z:

- the centre q0 is the guess and the fixed values (a rotation left out is none, a guessed one is made unit, other
  coordinates 0);
- the base's configuration is fixed as a whole or not at all (a quaternion's entries cannot be held one by one):
  fixed, its tangent coordinates are held at 0; free, they are unknowns;
- joint coordinates, velocities and inputs are fixed and guessed by their names, as for any model;
- the base's tangent coordinates f does not depend on (its position always, its rotation without gravity) are
  held at the centre: every pose along them is an equilibrium alike, and left free they would make the Jacobian
  singular (a continuum of solutions).

At an equilibrium of a free base the velocities are zero and nothing accelerates it: under gravity there is none
unless something holds the base (a base held by a constraint waits for closed chains and contact); without gravity
(a robot in orbit), or for a planar base moving in a horizontal plane, every pose at rest with the joints in
balance is one, and each start returns one of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import ConvergenceError, InputError, UnknownNameError
from robodyn.base.numbers import A_NUMBER, finite_number
from robodyn.linearization.linearize import Point, hold_point, linearize
from robodyn.linearization.points import OperatingPoint
from robodyn.model.kinds.linear import LinearSystem
from robodyn.model.names import did_you_mean

if TYPE_CHECKING:
    from robodyn.mechanisms.floating.chart import ChartModel, TangentModel
    from robodyn.model.protocol import ModelContract

__all__ = ["IDLE", "STEP", "equilibrium_on_manifold", "linearized_on_manifold", "sampled_model",
           "tangent_linearization"]

IDLE: Final = 1e-12  # |df/dz_i| below this (relative to 1 + |f|): f does not depend on the base coordinate z_i.
STEP: Final = 1e-3  # The central-difference step of that test (rad or m).


def _names(values: Any, names: tuple[str, ...], where: str) -> dict[str, Any]:
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise InputError(f"find_equilibrium: on a moving base {where} must map names to values, got {values!r}: "
                         "write {'base_z': 0.3, 'hip': 0.1}")
    for name in values:
        if name not in names:
            raise UnknownNameError(f"find_equilibrium: {where} names {name!r}, which is not a state or input of the "
                                   f"model{did_you_mean(str(name), list(names))}")
    return dict(values)


def equilibrium_on_manifold(solve: Callable[..., tuple[OperatingPoint, ...]], model: ModelContract, chart: ChartModel,
                            fix: Mapping[str, float] | None, guess: Any, starts: int, *, params: Any, t: float,
                            tol: float, seed: int | None, box: Any, targets: Any) -> tuple[OperatingPoint, ...]:
    """``find_equilibrium`` (passed as ``solve``) of ``model`` in the tangent space of its manifold (module
    docstring); the points are stored states of ``model``."""
    if targets:
        raise InputError(f"find_equilibrium: model {model.name!r} has a moving base: output targets are not "
                         "available there; fix states instead")
    names = (*model.states, *model.inputs)
    fixed, guessed = _names(fix, names, "fix"), _names(guess, names, "guess")
    base = chart.base_coordinates
    held = [n for n in base if n in fixed]
    if held and len(held) != len(base):
        raise InputError(f"find_equilibrium: fix every one of the base's configuration coordinates ({', '.join(base)})"
                         f" or none, not only {', '.join(held)}: the base is a rigid motion, not independent numbers")
    if held and any(n in guessed for n in base):
        raise InputError("find_equilibrium: the base's configuration is fixed: do not also guess it")
    if isinstance(box, Mapping) and any(n in box for n in base):
        raise InputError(f"find_equilibrium: a box for the base's configuration ({', '.join(base)}) is not "
                         "available on a moving base: the starts turn and move it in its tangent space")
    configuration = set(chart.coordinates)
    centre = {n: v for n, v in {**guessed, **fixed}.items() if n in configuration}
    rotation = [n for n in base if n not in ("base_x", "base_y", "base_z") and n in guessed]
    turned = {n: finite_number(guessed[n], n, not_real=A_NUMBER, arrays=True) for n in rotation}
    norm = math.sqrt(sum(v ** 2 for v in turned.values())) if rotation else 0.0
    if norm > 0:  # a guessed rotation is only a start: made unit
        centre.update({n: v / norm for n, v in turned.items()})
    tangent = chart.tangent_model(model.state_vector(chart.neutral(centre), default=0.0))
    tangent_fix = {n: 0.0 if n in configuration else v for n, v in fixed.items() if n not in base}
    tangent_fix.update({n: 0.0 for n in chart.tangent} if held else {})
    tangent_guess = {n: v for n, v in guessed.items() if n not in configuration and n not in fixed}
    if not held:
        tangent_fix.update(_idle(tangent, chart.tangent, {**tangent_guess, **tangent_fix}, params, t))
    try:
        points = solve(tangent, tangent_fix or None, tangent_guess or None, starts, params=params, t=t, tol=tol,
                       seed=seed, box=box)
    except ConvergenceError as error:
        raise ConvergenceError(f"{error} (on a moving base: nothing but contact holds the base, so off the ground "
                               "under gravity no state is at rest; standing on contacts, guess a settled stance: "
                               "simulate until it rests and start from there)") from None
    return tuple(OperatingPoint(tangent.stored(p.x), p.u, model.states, model.inputs, p.residual, p.converged,
                                p.method) for p in points)


def _idle(tangent: ModelContract, base: tuple[str, ...], inputs: Mapping[str, float], params: Any,
          t: float) -> dict[str, float]:
    """The base's tangent coordinates f does not depend on (all of them without gravity, the position always), held
    at 0: every pose along them is an equilibrium alike, and leaving them free would make the Jacobian singular.
    Judged by central differences at the centre at rest (every equilibrium is: in motion the configuration's rates
    depend on the chart); exact zeros are expected (the dynamics are in the base's frame)."""
    _, z, u, p = tangent.arguments(t, np.zeros(tangent.n_states),
                                   {n: v for n, v in inputs.items() if n in tangent.inputs}, params)
    f0 = tangent.f_raw(t, z, u, p)
    floor = IDLE * (1.0 + float(np.max(np.abs(f0))))
    idle = {}
    for name in base:
        step = np.zeros_like(z)
        step[tangent.states.index(name)] = STEP
        change = tangent.f_raw(t, z + step, u, p) - tangent.f_raw(t, z - step, u, p)
        if float(np.max(np.abs(change))) <= floor * STEP:
            idle[name] = 0.0
    return idle


def linearized_on_manifold(model: ModelContract, chart: ChartModel, x_op: Any, u_op: Any, params: Any,
                           method: str) -> tuple[TangentModel, Any, Any, Any, LinearSystem]:
    """The tangent model at the stored state ``x_op`` (a mapping: a rotation left out is none), the point (0, v*)
    in it, the inputs, the parameters and ``linearize``'s exact result there (whose A is the tangent model's
    Jacobian at that point): what ``validity`` samples."""
    stored = model.state_vector(chart.neutral(x_op) if isinstance(x_op, Mapping) else x_op, default=0.0)
    _, x, u, p = model.arguments(0.0, stored, u_op, params)
    linear = linearize(model, x, u, params=p, method=method)
    return chart.tangent_model(x), np.array(linear.x_op), u, p, linear


def tangent_linearization(model: ModelContract, t: float, x: Any, u: Any, params: Any, method: str,
                          open: str | None) -> LinearSystem:
    """The linear model of a model on a manifold in its tangent space (robodyn.mechanisms.floating.chart: states q (-)
    q0 and v,
    A 2 nv x 2 nv), exact."""
    if method not in ("auto", "manipulator") or open is not None:
        raise InputError(f"linearize: model {model.name!r} has a moving base: it is linearized exactly in its tangent "
                         "space (method 'auto', without open=)")
    x, u = hold_point(model, x, u, params, t)
    chart = model.chart()
    if isinstance(x, Mapping):  # states left out are 0, the base rotation left out none (as simulate takes them)
        x = model.state_vector(chart.neutral(x), default=0.0)
    point = Point.of(model, t, x, u, params)
    state = model.state_vector(point.x)  # the rotation checked unit
    A, B, C, D = chart.linearization(point.t, state, point.u, point.p)
    nv = A.shape[0] // 2
    x_op = np.concatenate([np.zeros(nv), state[-nv:]])  # the configuration's deviation from x's is 0 there
    A, B, C, D, x_op, u_op = (np.array(m, dtype=float, order="C") for m in (A, B, C, D, x_op, point.u))
    for array in (A, B, C, D, x_op, u_op):
        array.setflags(write=False)
    memo = model.memo()
    if "tangent names" not in memo:  # the names and units do not depend on the point or the parameters
        names = chart.tangent_states
        named = {*names, *model.inputs}
        memo["tangent names"] = names, MappingProxyType({k: v for k, v in model.units().items() if k in named})
    names, units = memo["tangent names"]
    return LinearSystem.from_fields(A, B, C, D, x_op, u_op, names, model.inputs, names, model.name, "manipulator",
                                    0.0, None, units)


def sampled_model(model: ModelContract, x_op: Any, u_op: Any, params: Any, method: str
                  ) -> tuple[ModelContract, Any, Any, Any, LinearSystem, Any]:
    """The model ``validity`` samples, its point (x*, u*), the parameters, the linearization there and the model that
    maps points back to stored states (None: the model itself): for a model on a manifold (a moving base) its
    tangent model at x* (robodyn.mechanisms.floating.chart.TangentModel), whose point is (0, v*); for a model with
    closed loops,
    the model in its independent coordinates at x* (robodyn.mechanisms.loops.constraints.ReducedModel); in both, the
    Jacobian
    there is ``linearize``'s A."""
    chart = model.chart()
    if chart is not None:
        tangent, z, u, p, linear = linearized_on_manifold(model, chart, x_op, u_op, params, method)
        return tangent, z, u, p, linear, tangent
    if model.constraints() is not None:
        from robodyn.linearization.reduced import linearized_reduced

        reduced, z, u, p, linear = linearized_reduced(model, x_op, u_op, params, method)
        return reduced, z, u, p, linear, reduced
    _, x, u, p = model.arguments(0.0, x_op, u_op, params)
    return model, x, u, p, linearize(model, x, u, params=p, method=method), None
