"""Bounds and constraints of an optimal control problem.

- ``bounds: {inputs: {name: [lower, upper]}, states: {name: [lower, upper]}}``: boxes (``null`` for no bound on
  one side), lower <= upper;
- ``constraints: {path: [g, ...], terminal: {state: value} or [e, ...]}``: path inequalities g(t, x, u) <= 0 and
  terminal equalities e(x_N) = 0, expressions in the model-file grammar (a mapping ``{x_i: v}`` is x_i - v = 0, its
  rows in the states' order, the states it fixes kept as ``Constraints.terminal_values``), compiled with their
  exact Jacobians (:mod:`~robodyn.control.optimal.expressions`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError
from robodyn.base.numbers import frozen
from robodyn.control.optimal.expressions import CompiledExpressions, compile_expressions
from robodyn.control.optimal.references import by_name, number

__all__ = ["BOUND_KEYS", "CONSTRAINT_KEYS", "Constraints", "box", "build_constraints"]

Array = NDArray[np.float64]

BOUND_KEYS: Final = ("inputs", "states")
CONSTRAINT_KEYS: Final = ("path", "terminal")


def box(spec: Any, names: Sequence[str], what: str, where: str) -> Array:
    """(k, 2) lower and upper bounds by name (-inf / inf where not given), lower <= upper."""
    bounds = np.tile([-math.inf, math.inf], (len(names), 1))
    if spec is None:
        return frozen(bounds)
    for name, pair in by_name(spec, names, what, where).items():
        if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise InputError(f"{where}.{name}: expected [lower, upper] (null for no bound), got {pair!r:.60}")
        lower, upper = (-math.inf if pair[0] is None else number(pair[0], f"{where}.{name}[0]"),
                        math.inf if pair[1] is None else number(pair[1], f"{where}.{name}[1]"))
        if lower > upper:
            raise InputError(f"{where}.{name}: the lower bound {lower:g} is above the upper bound {upper:g}: "
                             "give [lower, upper]")
        bounds[names.index(name)] = lower, upper
    return frozen(bounds)


@dataclass(frozen=True, slots=True, eq=False)
class Constraints:
    """Path inequalities and terminal equalities (None: none); terminal_values (n,) the states the mapping form
    fixes (x_N,i = v_i), NaN for the others."""

    path: CompiledExpressions | None
    terminal: CompiledExpressions | None
    terminal_values: Array

    @property
    def n_path(self) -> int:
        return 0 if self.path is None else self.path.count

    @property
    def n_terminal(self) -> int:
        return 0 if self.terminal is None else self.terminal.count


def build_constraints(spec: Any, states: Sequence[str], inputs: Sequence[str], parameters: Mapping[str, float],
                      where: str = "constraints") -> Constraints:
    """The :class:`Constraints` of a ``constraints`` mapping (see the module docstring)."""
    fixed = np.full(len(states), np.nan)
    if spec is None:
        return Constraints(None, None, frozen(fixed))
    given = by_name(spec, CONSTRAINT_KEYS, "constraint kind", where)
    path = None
    if given.get("path") is not None:
        texts = given["path"] if isinstance(given["path"], list) else [given["path"]]
        if texts:
            path = compile_expressions(texts, states, inputs, parameters, where=f"{where}.path")
    terminal = None
    spec_t = given.get("terminal")
    if isinstance(spec_t, Mapping):
        given = by_name(spec_t, states, "state", f"{where}.terminal")
        values = {name: number(given[name], f"{where}.terminal.{name}") for name in states if name in given}
        if values:
            offsets = list(values.values())
            fixed[[states.index(name) for name in values]] = offsets
            terminal = compile_expressions(list(values), states, inputs, parameters, where=f"{where}.terminal",
                                           allow_time=False, allow_inputs=False, offsets=offsets)
    elif spec_t is not None:
        texts = spec_t if isinstance(spec_t, list) else [spec_t]
        if texts:
            terminal = compile_expressions(texts, states, inputs, parameters, where=f"{where}.terminal",
                                           allow_time=False, allow_inputs=False)
    return Constraints(path, terminal, frozen(fixed))
