"""Consistent initial conditions of a mechanism with closed loops: :func:`assemble`."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from robodyn.base.errors import InputError
from robodyn.base.numbers import is_real_number
from robodyn.model.protocol import ModelContract
from robodyn.model.system import Values, require_model

__all__ = ["assemble", "completed"]


def assemble(model: ModelContract, guess: Values | None = None, fix: Mapping[str, float] | None = None, *,
             params: Values | None = None, t: float = 0.0) -> dict[str, float]:
    """Solve the loop closure of ``model`` for the coordinates not fixed, nearest ``guess``.

    Parameters
    ----------
    model
        A model with constraints (``model.constraints()``: a chain file's ``loops`` and ``constraints``).
    guess
        A state (array in model order, or ``{name: value}``; states left out are 0): where the search starts, so it
        picks the assembly branch (elbow up or down) nearest to it.
    fix
        ``{coordinate or velocity: value}`` held exactly (e.g. ``{"crank": 1.0}``); typically the independent ones.
    params, t
        Parameter overrides; the time (for points held on paths c(t)).

    Returns
    -------
    dict
        ``{coordinate: value}`` for every coordinate, then ``{velocity: value}`` (velocities not fixed solve
        J q' = c', nearest the guess's): a state ``simulate`` takes as ``x0``.

    Raises
    ------
    InputError
        The model has no constraints, a name is unknown, or the loops cannot close (the closest residual named).

    Examples
    --------
    >>> robodyn.assemble(robodyn.load("examples/four_bar.yaml"), fix={"crank": 1.0})  # doctest: +SKIP
    {'crank': 1.0, 'coupler': -0.5518..., 'rocker': 1.2956..., 'crank_dot': 0.0, ...}
    """
    require_model(model, "assemble")
    constraints = model.constraints()
    if constraints is None:
        raise InputError(f"assemble: model {model.name!r} ({model.kind}) has no loops or constraints to close: every "
                         "state of it is consistent")
    if fix is not None and not isinstance(fix, Mapping):
        raise InputError(f"assemble: fix must be a mapping {{name: value}}, got {type(fix).__name__}")
    values = {k: _number(v, k) for k, v in (fix or {}).items()}
    time, x, _, p = model.arguments(t, np.zeros(model.n_states) if guess is None else
                                    model.state_vector(guess, default=0.0), None, params)
    state = constraints.assemble(time, np.array(x, dtype=float), p, values)
    return dict(zip(model.states, (float(v) for v in state)))


def _number(value: object, name: str) -> float:
    """A held value: a real number (the constraints' solver reports one it cannot hold)."""
    if not is_real_number(value):
        raise InputError(f"assemble: fix[{name!r}] must be a number, got {value!r}")
    return float(value)  # type: ignore[arg-type]  # a real number


def completed(model: ModelContract, x: Mapping[str, float], *, params: Values | None = None, t: float = 0.0
              ) -> np.ndarray:
    """The state ``(n,)`` of a model with constraints from the values named in ``x``, held, the others assembled
    (what ``--at crank=0.8`` means for a linkage: the loop closed around the crank's angle, at rest unless a
    velocity is named)."""
    values = {k: _number(v, k) for k, v in x.items()}
    return np.array(list(assemble(model, values, values, params=params, t=t).values()))
