"""Discrete-time symbolic models: the update map x[k+1] = f(t_k, x[k], u[k]) and outputs y[k] = h(t_k, x[k], u[k]).

A :class:`DiscreteSystem` is a :class:`~robodyn.model.kinds.symbolic.SymbolicSystem` whose ``f`` is the update map at
the sample period ``sample_period`` (the model contract's sign of a discrete-time model): ``simulate`` steps it
at t_k = t0 + k T (robodyn.integrate.paths.discrete), ``linearize`` gives the discrete-time LinearSystem of the map
(``dt = T``), and a diagram runs it as a sampled block (its state updated at the sample instants, its outputs held
in between). Its Jacobians are the map's, exact. ``kind: discrete`` model files give one::

    name: pd_discrete
    kind: discrete
    sample: 0.001                     # the period T in s
    states: [e_prev]
    inputs: [r, y]
    parameters: {kp: 20, kd: 0.5}
    update: {e_prev: r - y}           # x[k+1]
    outputs: {u: 'kp*(r - y) + kd*((r - y) - e_prev)/0.001'}
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Self

from robodyn.base.errors import InputError
from robodyn.base.numbers import check_period
from robodyn.model.kinds.symbolic import ExprLike, SymbolicSystem

__all__ = ["DiscreteSystem", "check_period"]


class DiscreteSystem(SymbolicSystem):
    """x[k+1] = f(t_k, x[k], u[k]), y[k] = h(t_k, x[k], u[k]) at the sample period ``sample`` (s).

    Parameters are as for :class:`~robodyn.model.kinds.symbolic.SymbolicSystem`, with ``update`` the map (one
    expression per state; a block without states has none).
    """

    kind = "discrete"

    def __init__(self, states: Sequence[str], inputs: Sequence[str] | None,
                 update: Mapping[str, ExprLike] | Sequence[ExprLike], *, sample: float,
                 parameters: Mapping[str, float] | None = None, outputs: Mapping[str, ExprLike] | None = None,
                 name: str = "model"):
        self._period = check_period(sample, f"model {name!r}")
        super().__init__(states, inputs, update, parameters=parameters, outputs=outputs, name=name)

    @property
    def sample_period(self) -> float:
        """The sample period T in s: f is the update map x[k+1] = f(t_k, x[k], u[k])."""
        return self._period

    def with_sample_period(self, sample: float) -> Self:
        """A copy updated at another period (the same map: its expressions may use the period as a parameter).
        A library block's discrete form is made for its period: it is refused (make the block again)."""
        if getattr(self, "_period_fixed", False) and float(sample) != self._period:
            raise InputError(f"block {self.name!r}: its discrete form is made for the period {self._period:g} s: "
                             f"make the block again with sample={sample!r}")
        clone = copy.copy(self)
        object.__setattr__(clone, "_period", check_period(sample, f"model {self.name!r}"))
        return clone

    def equations(self) -> list[tuple[str, Any]]:
        return [(f"{s}[k+1]", e) for s, e in zip(self.states, self.f_expr)]

    def latex_equations(self) -> list[str]:
        from robodyn.display.latex import latex_name

        return [f"{latex_name(s)}_{{k+1}} &= {self.latex_expr(e)}" for s, e in zip(self.states, self.f_expr)]

    def _labelled_equations(self) -> list[Any]:
        from robodyn.model.kinds.symbolic_form import Equation

        return [Equation(f"the update of {s}", e) for s, e in zip(self.states, self.f_expr)]

    def affine_form(self, p: Any) -> None:
        """None: the exact (matrix exponential) path is for continuous-time models."""
        return None

    def show_text(self) -> str:
        text = super().show_text()
        return f"{text}\n(discrete time: sample period {self._period:g} s)" if text else \
            f"(discrete time: sample period {self._period:g} s)"
