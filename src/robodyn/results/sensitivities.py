"""A trajectory's sensitivities (robodyn.simulate's ``sensitivities``): checked, looked up by name, and written.

:class:`robodyn.results.trajectory.Trajectory` and :class:`robodyn.results.trajectory.BatchTrajectory` hold dx/dtheta as
``sensitivities`` ``lead + (k, n)`` and dy/dtheta as ``output_sensitivities`` ``lead + (k, p)`` (None when y = x),
for the k ``sensitivity_names``: parameters by name, initial states as ``<state>(0)``. These helpers serve both
classes: the checks when one is made, the look-up by name, and the CSV columns and NPZ arrays they write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError, ShapeError, UnknownNameError

__all__ = ["direction_index", "freeze_sensitivities", "output_columns", "output_sensitivities_of",
           "sensitivity_columns", "sensitivity_npz"]

Array = NDArray[np.float64]


def direction_index(names: Sequence[str], name: str) -> int:
    """The index of the sensitivity ``name`` among ``names``: a parameter's name, or an initial state's as listed
    (``theta(0)``) or by the state's own name (``theta``)."""
    for k, label in enumerate(names):
        if name == label or f"{name}(0)" == label:
            return k
    if not names:
        raise InputError(f"no sensitivities were computed: simulate with sensitivities=[{name!r}] (or 'x0' for every "
                         "initial state) to get them")
    raise UnknownNameError(f"unknown sensitivity {name!r} (computed: {', '.join(names)})")


def freeze_sensitivities(owner: Any, lead: tuple[int, ...], take: Any) -> None:
    """Check and freeze ``owner``'s sensitivities ``lead + (k, n)`` and output sensitivities ``lead + (k, p)``."""
    set_ = object.__setattr__
    set_(owner, "sensitivity_names", tuple(owner.sensitivity_names))
    k = len(owner.sensitivity_names)
    if owner.sensitivities is None:
        if k or owner.output_sensitivities is not None:
            raise ShapeError("trajectory: sensitivity names or output sensitivities without sensitivities")
        return
    set_(owner, "sensitivities", take(owner.sensitivities, (*lead, k, len(owner.states)), "sensitivities"))
    if owner.output_sensitivities is not None:
        set_(owner, "output_sensitivities", take(owner.output_sensitivities, (*lead, k, len(owner.outputs)),
                                                 "output_sensitivities"))


def output_sensitivities_of(owner: Any) -> Array:
    """``owner``'s dy/dtheta (it has sensitivities): its output sensitivities, its sensitivities when y = x, else
    InputError."""
    if owner.output_sensitivities is not None:
        found: Array = owner.output_sensitivities
        return found
    if owner.outputs != owner.states:
        raise InputError("the outputs of this trajectory have no sensitivities (outputs chosen after the run, or a "
                         "file without them): use sensitivity() for the states'")
    assert owner.sensitivities is not None
    result: Array = owner.sensitivities
    return result


def output_columns(owner: Any) -> list[tuple[int, str]]:
    """The outputs a table writes after the states: (index, column name), each name once.

    An output named like a state is written once, as the state, when it holds the state's values (a chain's outputs
    begin with its coordinates and velocities; a diagram's with its blocks' states); one that holds other values (a
    LinearSystem's outputs named as its states after a foh or tustin discretization) is written as ``y.<name>``.
    An output named twice is written once.
    """
    states = {name: j for j, name in enumerate(owner.states)}
    seen = set(states)
    kept = []
    for k, name in enumerate(owner.outputs):
        j = states.get(name)
        if j is not None and np.array_equal(owner.y[..., k], owner.x[..., j], equal_nan=True):
            continue
        label = name if j is None else f"y.{name}"
        if label not in seen:
            seen.add(label)
            kept.append((k, label))
    return kept


def sensitivity_columns(owner: Any) -> tuple[list[str], list[Array]]:
    """CSV columns ``d(<state>)/d(<name>)``, then ``d(<output>)/d(<name>)`` for the outputs written
    (:func:`output_columns`) when the outputs are not the states."""
    if owner.sensitivities is None:
        return [], []
    T = owner.t.shape[0]
    names = [f"d({s})/d({d})" for d in owner.sensitivity_names for s in owner.states]
    blocks = [owner.sensitivities.reshape(T, -1)]
    kept = output_columns(owner)
    if owner.output_sensitivities is not None and kept:
        names += [f"d({label})/d({d})" for d in owner.sensitivity_names for _, label in kept]
        blocks.append(owner.output_sensitivities[:, :, [k for k, _ in kept]].reshape(T, -1))
    return names, blocks


def sensitivity_npz(owner: Any) -> dict[str, Any]:
    """The sensitivity arrays of ``to_npz`` (none without sensitivities)."""
    if owner.sensitivities is None:
        return {}
    found: dict[str, Any] = {"sensitivities": owner.sensitivities,
                             "sensitivity_names": np.array(owner.sensitivity_names, dtype=str),
                             "sensitivity_method": np.array(owner.sensitivity_method or "")}
    if owner.output_sensitivities is not None:
        found["output_sensitivities"] = owner.output_sensitivities
    return found
