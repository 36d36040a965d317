"""What the library blocks share: number and port checks, corners and units, and the sampled form.

A block module (one per block in this folder, :mod:`robodyn.diagrams.blocks.registry`) checks its arguments with
:func:`number` and :func:`check_ports`, declares its corners and units with :func:`with_corners` and
:func:`with_units`, and ends with ``sampled(block, sample, discrete)``: the block itself, or for ``sample=T`` its
exact discrete form, made by its own ``discrete(continuous, period)`` (which returns
``discrete_form(continuous, period, update)``) or, for a block without states, its equation sampled and held.

A sampled block reads its inputs at t_k = k T, updates its state there and holds its outputs until t_{k+1}
(zero-order hold). Its discrete form is exact for held inputs where the block is linear: the matrix exponential
of the continuous block (:func:`zero_order_hold`: scipy.signal.cont2discrete). The period is part of the discrete
form: a sampled library block is made again for another period.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

import numpy as np

from robodyn.base.budget import check_count
from robodyn.base.errors import InputError
from robodyn.base.numbers import finite_number
from robodyn.model.kinds.discrete import DiscreteSystem
from robodyn.model.kinds.symbolic import SymbolicSystem

__all__ = ["MAX_BLOCK_PORTS", "Discrete", "check_ports", "discrete_form", "fixed", "number", "sampled",
           "with_corners", "with_units", "zero_order_hold"]

#: Inputs, outputs or states of one library block: a sum of 100 inputs compiles in 0.1 s, of 1,000 in 6 s, and
#: 3,000 overflow Python's recursion in the generated code.
MAX_BLOCK_PORTS: Final = 100
_FINITE_NUMBER: Final = "{what} must be a finite number, got {value!r}"  # a block parameter that is not one

#: A block's exact discrete form: (its continuous form, the period T > 0) -> the sampled block.
Discrete = Callable[[SymbolicSystem, float], DiscreteSystem]


def check_ports(name: str, **counts: int) -> None:
    """Refuse a block of more than MAX_BLOCK_PORTS inputs, outputs or states (``counts``: by kind)."""
    for kind, count in counts.items():
        check_count(count, MAX_BLOCK_PORTS, f"its {kind}", "split it into smaller blocks", f"block {name!r}")


def number(value: Any, what: str, block: str, *, positive: bool = False, nonzero: bool = False) -> float:
    """``value`` as a float: a finite real number (and > 0 or ≠ 0 when asked); InputError naming ``what`` and the
    block otherwise (robodyn.base.numbers)."""
    result = finite_number(value, f"block {block!r}: {what}", not_real=_FINITE_NUMBER, not_finite=_FINITE_NUMBER,
                           positive="{what} must be positive, got {number}" if positive else None)
    if nonzero and result == 0:
        raise InputError(f"block {block!r}: {what} must not be zero")
    return result


def with_corners(model: SymbolicSystem, corners: Sequence[Any]) -> SymbolicSystem:
    """``model`` declaring where its equations have corners (``switching_expressions``: a diagram stops its
    integration there, robodyn.diagrams.switching)."""
    object.__setattr__(model, "_switching", tuple(corners))
    return model


def with_units(model: SymbolicSystem, units: Mapping[str, str]) -> SymbolicSystem:
    """``model`` with the units of the names it has (``robodyn show``, plots and reports print them)."""
    names = {*model.states, *model.inputs, *model.outputs, *model.parameters}
    object.__setattr__(model, "declared_units", MappingProxyType({k: v for k, v in units.items() if k in names}))
    return model


def sampled(block: SymbolicSystem, sample: float | None, discrete: Discrete | None = None) -> SymbolicSystem:
    """``block`` itself (``sample`` None), or its exact discrete form at the period ``sample``: ``discrete(block,
    T)`` for a block with states, its equation sampled and held for one without (``discrete`` None: a static
    block)."""
    if sample is None:
        return block
    from robodyn.model.kinds.discrete import check_period

    period = check_period(sample, f"block {block.name!r}")
    if not block.states:
        return discrete_form(block, period, [])
    if discrete is None:
        raise InputError(f"block {block.name!r}: no discrete form")
    return discrete(block, period)


def discrete_form(continuous: SymbolicSystem, period: float, update: Sequence[Any]) -> DiscreteSystem:
    """The sampled block of ``continuous`` at ``period`` whose states become ``update`` (expressions in its states,
    inputs and parameters, one per state) at each instant; its outputs, parameters and units are the block's."""
    outputs = None if continuous.outputs_are_states else dict(zip(continuous.outputs, continuous.h_expr))
    form = DiscreteSystem(continuous.states, continuous.inputs, list(update), sample=period,
                          parameters=dict(continuous.parameters), outputs=outputs, name=continuous.name)
    object.__setattr__(form, "declared_units", continuous.declared_units)
    return fixed(form)


def zero_order_hold(continuous: SymbolicSystem, period: float) -> list[Any]:
    """x_{k+1} = Ad x_k + Bd u_k of the linear block ``continuous`` (x' = A x + B u, its Jacobians at 0) with u held
    over ``period``: exact (scipy.signal.cont2discrete, method ``zoh``), one expression per state."""
    import scipy.signal
    import sympy

    zero_x, zero_u = np.zeros(continuous.n_states), np.zeros(continuous.n_inputs)
    A, B = continuous.jacobians_raw(0.0, zero_x, zero_u, continuous.parameter_vector())
    C = np.zeros((1, continuous.n_states))
    Ad, Bd, *_ = scipy.signal.cont2discrete((A, B, C, np.zeros((1, continuous.n_inputs))), period, method="zoh")
    x = sympy.Matrix(continuous.x_symbols)
    u = sympy.Matrix(continuous.u_symbols)
    return list(sympy.Matrix(Ad.tolist()) * x + sympy.Matrix(Bd.tolist()) * u)


def fixed(form: DiscreteSystem) -> DiscreteSystem:
    """Marks a discrete form made for its period (``with_sample_period`` refuses it)."""
    object.__setattr__(form, "_period_fixed", True)
    return form
