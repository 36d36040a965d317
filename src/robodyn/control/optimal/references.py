"""What the quadratic terms of a problem are made of: per-name values, weight matrices and references.

- :func:`by_name`: a mapping of names checked against the known ones (UnknownNameError naming them);
- :func:`weights`: a per-name diagonal mapping or a full matrix, checked symmetric and positive (semi)definite by
  :mod:`robodyn.control.weights` (the checks of :func:`robodyn.lqr`);
- :class:`Reference`: a reference r(t) over some names: constants, a table ``{t: [...], name: [...]}`` or a
  trajectory file (the CSV ``robodyn simulate`` or ``robodyn optimize`` writes), linear between its times and held
  beyond them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError, UnknownNameError
from robodyn.base.names import did_you_mean
from robodyn.base.numbers import frozen as read_only
from robodyn.control.weights import check_definite, check_symmetric, weight_matrix
from robodyn.model.quantities import parse_number

__all__ = ["Reference", "by_name", "number", "reference", "trajectory_columns", "weights"]

Array = NDArray[np.float64]


def number(value: Any, where: str) -> float:
    """A finite number: a float or int, or a constant expression (``pi/2``) read by the safe parser."""
    if isinstance(value, bool) or not isinstance(value, str | int | float | np.floating | np.integer):
        raise InputError(f"{where}: expected a number, got {value!r:.60}")
    result = parse_number(value if isinstance(value, str) else float(value), where=where)
    if not math.isfinite(result):
        raise InputError(f"{where}: {value!r} is not finite: give a finite number")
    return result


def by_name(value: Any, known: Sequence[str], what: str, where: str) -> dict[str, Any]:
    """``value`` as a mapping whose keys are among ``known`` (UnknownNameError naming the known ones)."""
    if not isinstance(value, Mapping):
        raise InputError(f"{where}: expected a mapping of {what} names to values, got {value!r:.60}")
    for key in value:
        if key not in known:
            raise UnknownNameError(f"{where}: unknown {what} {key!r}: the {what}s are {', '.join(known) or '(none)'}"
                                   f"{did_you_mean(str(key), list(known))}")
    return dict(value)


def weights(value: Any, names: Sequence[str], what: str, where: str, *, strict: bool) -> Array:
    """(k, k) the weight matrix: a mapping {name: w} (the diagonal, 0 for the names not given) or a full (k, k)
    matrix (a number for k = 1); symmetric, positive semidefinite (``strict``: positive definite)."""
    k = len(names)
    if isinstance(value, Mapping):
        given = by_name(value, names, what, where)
        matrix = np.diag([number(given[name], f"{where}.{name}") if name in given else 0.0 for name in names])
    else:
        matrix = weight_matrix(value, (k, k), where)
    check_symmetric(matrix, where)
    check_definite(matrix, where, strict=strict)
    return read_only(0.5 * (matrix + matrix.T))


@dataclass(frozen=True, slots=True, eq=False)
class Reference:
    """r(t) : (k,) — constant (``times`` None, ``values`` (k,)) or a table (``times`` (T,), ``values`` (T, k)),
    linear between its times and held beyond them."""

    times: Array | None
    values: Array

    def at(self, t: float) -> Array:
        if self.times is None:
            return self.values
        if self.times.size == 1:
            return self.values[0]
        return np.array([np.interp(t, self.times, column) for column in self.values.T])

    def at_points(self, t: Array) -> Array:
        """(P, k) r at the times t (P,)."""
        if self.times is None:
            return np.broadcast_to(self.values, (len(t), self.values.size))
        if self.times.size == 1:
            return np.broadcast_to(self.values[0], (len(t), self.values.shape[1]))
        return np.stack([np.interp(t, self.times, column) for column in self.values.T], axis=1).reshape(
            len(t), self.values.shape[1])


def reference(value: Any, names: Sequence[str], what: str, where: str, folder: Path) -> Reference:
    """The reference of a quadratic term over ``names`` (0 for the names it does not give): None; constants
    ``{name: value}``; a table ``{t: [...], name: [...]}``; a Trajectory; or a trajectory CSV path (relative to
    ``folder``) whose columns are named like the states and inputs."""
    k = len(names)
    if value is None:
        return Reference(None, read_only(np.zeros(k)))
    if isinstance(value, os.PathLike) or (isinstance(value, str) and value.lower().endswith((".csv", ".npz"))):
        return _from_file(Path(folder, value), names, where)
    if isinstance(value, Mapping) and "t" in value:
        return _from_table(value, names, what, where)
    if isinstance(value, Mapping):
        given = by_name(value, names, what, where)
        return Reference(None, read_only(np.array([number(given[n], f"{where}.{n}") if n in given else 0.0
                                                   for n in names])))
    columns = trajectory_columns(value)
    if columns is not None:
        return _from_columns(*columns, names, where)
    raise InputError(f"{where}: a reference is a mapping {{name: value}}, a table {{t: [...], name: [...]}}, a "
                     f"Trajectory or a trajectory CSV file, got {value!r:.60}")


def _from_table(value: Mapping[str, Any], names: Sequence[str], what: str, where: str) -> Reference:
    given = by_name({key: v for key, v in value.items() if key != "t"}, names, what, where)
    times = _column(value["t"], f"{where}.t")
    if times.size < 1 or np.any(np.diff(times) <= 0):
        raise InputError(f"{where}.t: the table's times must be increasing, got {times.tolist()!r:.80}")
    table = np.zeros((times.size, len(names)))
    for j, name in enumerate(names):
        if name in given:
            column = _column(given[name], f"{where}.{name}")
            if column.size != times.size:
                raise InputError(f"{where}.{name}: {column.size} values for {times.size} times: give one per time")
            table[:, j] = column
    return Reference(read_only(times), read_only(table))


def _column(value: Any, where: str) -> Array:
    if not isinstance(value, Sequence) or isinstance(value, str):
        value = np.asarray(value, dtype=object).tolist() if isinstance(value, np.ndarray) else value
        if not isinstance(value, list):
            raise InputError(f"{where}: expected a list of numbers, got {value!r:.60}")
    return np.array([number(v, f"{where}[{k}]") for k, v in enumerate(value)], dtype=float)


def trajectory_columns(value: Any) -> tuple[Array, dict[str, Array], str] | None:
    """(t, {column name: values}, label) of a Trajectory (its states, inputs and outputs), or None."""
    from robodyn.results.trajectory import Trajectory

    if not isinstance(value, Trajectory):
        return None
    columns = {name: value.y[:, k] for k, name in enumerate(value.outputs)}
    columns.update({name: value.u[:, k] for k, name in enumerate(value.inputs)})
    columns.update({name: value.x[:, k] for k, name in enumerate(value.states)})
    return np.asarray(value.t), columns, f"the trajectory of {value.model!r}"


def _from_file(file: Path, names: Sequence[str], where: str) -> Reference:
    from robodyn.results.trajectory import Trajectory

    trajectory = Trajectory.load(file)  # robodyn's reader: every column after t read as a named column
    columns = trajectory_columns(trajectory)
    assert columns is not None
    return _from_columns(*columns[:2], str(file), names, where)


def _from_columns(t: Array, columns: Mapping[str, Array], label: str, names: Sequence[str], where: str
                  ) -> Reference:
    missing = [name for name in names if name not in columns]
    if missing:
        raise InputError(f"{where}: {label} has no column {', '.join(map(repr, missing))} (its columns: "
                         f"{', '.join(columns)}): give a trajectory of this model")
    times = np.asarray(t, dtype=float)
    keep = np.concatenate([[True], np.diff(times) > 0])  # a repeated time (an event) keeps its first row
    table = np.column_stack([np.asarray(columns[name], dtype=float)[keep] for name in names]) if names else \
        np.zeros((int(keep.sum()), 0))
    if not np.all(np.isfinite(table)):
        raise InputError(f"{where}: {label} holds non-finite values")
    return Reference(read_only(times[keep]), read_only(table))
