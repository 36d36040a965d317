"""Operating points of a model on a manifold (a robot on a moving base), found and linearized in its tangent space
(what ``validity`` samples there: robodyn.linearization.samples).

:func:`robodyn.find_equilibrium` solves f = 0 in a vector space; a robot on a floating or planar base stores its
base rotation as a unit quaternion (or cos, sin), which a solver may not move freely. So the problem is posed on
the tangent model at a centre (robodyn.mechanisms.floating.chart.TangentModel: states z = (q (-) q0, v), Euclidean,
Pinocchio's
``difference``), solved there as for any model (:func:`tangent_problem` poses it, find_equilibrium solves it), and
every solution is returned as a stored state q0 (+) z (:func:`stored_points`):

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
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError, UnknownNameError
from robodyn.base.names import did_you_mean
from robodyn.linearization.derivatives import Point
from robodyn.linearization.points import OperatingPoint, finite_value
from robodyn.model.kinds.linear import LinearSystem

if TYPE_CHECKING:
    from robodyn.mechanisms.floating.chart import TangentModel
    from robodyn.model.protocol import Chart, ModelContract

__all__ = ["IDLE", "MOVING_BASE_HINT", "STEP", "stored_points", "tangent_linearization", "tangent_problem"]

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


#: What a ConvergenceError of find_equilibrium on a moving base adds (robodyn.linearization.equilibrium).
MOVING_BASE_HINT: Final = ("on a moving base: nothing but contact holds the base, so off the ground under gravity no "
                           "state is at rest; standing on contacts, guess a settled stance: simulate until it rests "
                           "and start from there")


def tangent_problem(model: ModelContract, chart: Chart, fix: Mapping[str, float] | None, guess: Any, *,
                    params: Any, t: float, box: Any, targets: Any
                    ) -> tuple[TangentModel, dict[str, float] | None, dict[str, Any] | None]:
    """``find_equilibrium``'s problem of ``model`` posed in the tangent space of its manifold (module docstring): the
    tangent model at the centre, and the values fixed and guessed there (None when there are none); the points
    found there are stored states of ``model`` by :func:`stored_points`."""
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
    norm = math.sqrt(sum(finite_value(guessed[n], n) ** 2 for n in rotation)) if rotation else 0.0
    if norm > 0:  # a guessed rotation is only a start: made unit
        centre.update({n: finite_value(guessed[n], n) / norm for n in rotation})
    tangent = chart.tangent_model(model.state_vector(chart.neutral(centre), default=0.0))
    tangent_fix = {n: 0.0 if n in configuration else v for n, v in fixed.items() if n not in base}
    tangent_fix.update({n: 0.0 for n in chart.tangent} if held else {})
    tangent_guess = {n: v for n, v in guessed.items() if n not in configuration and n not in fixed}
    if not held:
        tangent_fix.update(_idle(tangent, chart.tangent, {**tangent_guess, **tangent_fix}, params, t))
    return tangent, tangent_fix or None, tangent_guess or None


def stored_points(model: ModelContract, tangent: TangentModel, points: tuple[OperatingPoint, ...]
                  ) -> tuple[OperatingPoint, ...]:
    """The equilibria ``points`` of the ``tangent`` model as points of ``model`` (stored states q0 (+) z)."""
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


def tangent_linearization(model: ModelContract, t: float, x: Any, u: Any, params: Any) -> LinearSystem:
    """The linear model of a model on a manifold in its tangent space (robodyn.mechanisms.floating.chart: states
    q (-) q0 and v, A 2 nv x 2 nv), exact, at the resolved point (robodyn.linearization.linearize.transform)."""
    chart = model.chart()
    assert chart is not None  # robodyn.linearization.linearize.transform sends only such models here
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
