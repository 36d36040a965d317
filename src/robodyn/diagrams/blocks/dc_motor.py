"""The ``dc_motor`` block: a DC motor behind a gear, L i' = v − R i − ke N omega, tau = eta N kt i; sampled,
i ← a i + (1 − a)/R (v − ke N omega) with a = exp(−T R/L) (exact for held inputs)."""

from __future__ import annotations

import sympy

from robodyn.base.errors import InputError
from robodyn.diagrams.blocks.common import discrete_form, number, sampled, with_units
from robodyn.diagrams.blocks.registry import BlockKind
from robodyn.model.expr import symbol
from robodyn.model.kinds.discrete import DiscreteSystem
from robodyn.model.kinds.symbolic import SymbolicSystem

__all__ = ["BLOCK", "dc_motor", "discrete"]


def dc_motor(R: float = 1.0, L: float = 1e-3, kt: float = 0.1, ke: float = 0.1, N: float = 1.0, eta: float = 1.0,
             *, sample: float | None = None, name: str = "dc_motor") -> SymbolicSystem:
    """A DC motor behind a gear of ratio N and efficiency eta: voltage v and load-side speed omega in, load-side
    torque tau and current i out (its state ``i_a``). L i' = v − R i − ke N omega, tau = eta N kt i; with L = 0
    the static limit i = (v − ke N omega)/R (no state). The rotor inertia N² Jm belongs to the driven joint (its
    armature)."""
    values = {"R": number(R, "R", name, positive=True), "kt": number(kt, "kt", name),
              "ke": number(ke, "ke", name), "N": number(N, "N", name, nonzero=True), "eta": number(eta, "eta", name)}
    inductance = number(L, "L", name)
    if inductance < 0:
        raise InputError(f"block {name!r}: L must be positive (or 0 for the static limit), got {inductance}")
    if inductance == 0:
        current = "(v - ke*N*omega)/R"
        motor = SymbolicSystem([], ["v", "omega"], [], parameters=values,
                               outputs={"tau": f"eta*N*kt*{current}", "i": current}, name=name)
    else:
        values = {"R": values["R"], "L": inductance, **{k: values[k] for k in ("kt", "ke", "N", "eta")}}
        motor = SymbolicSystem(["i_a"], ["v", "omega"], {"i_a": "(v - R*i_a - ke*N*omega)/L"}, parameters=values,
                               outputs={"tau": "eta*N*kt*i_a", "i": "i_a"}, name=name)
    return sampled(with_units(motor, {"v": "V", "omega": "rad/s", "tau": "N m", "i": "A", "i_a": "A", "R": "ohm",
                                      "L": "H", "kt": "N m/A", "ke": "V s/rad"}), sample, discrete)


def discrete(continuous: SymbolicSystem, period: float) -> DiscreteSystem:
    """The motor ``continuous`` sampled at ``period`` T: i ← a i + (1 − a)/R (v − ke N omega), a = exp(−T R/L)
    (exact for held inputs); the static motor (L = 0) sampled and held."""
    if not continuous.states:
        return discrete_form(continuous, period, [])
    a = sympy.exp(-sympy.Float(period) * symbol("R") / symbol("L"))
    current = symbol(continuous.states[0])
    return discrete_form(continuous, period, [
        a * current + (1 - a) / symbol("R") * (symbol("v") - symbol("ke") * symbol("N") * symbol("omega"))])


BLOCK = BlockKind("dc_motor", dc_motor, discrete)
