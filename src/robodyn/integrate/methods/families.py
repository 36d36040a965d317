"""The integration methods' families and the table the registry is made from: each method's family, its line for
people, its Butcher tableau's name in :mod:`robodyn.integrate.methods.tableaus` and its ``solve_ivp`` solver. Plain
data, imported by the registry (:mod:`robodyn.integrate.methods.registry`) and the tableaus alike."""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = ["ENTRIES", "FAMILIES", "Family", "names"]

Family = Literal["fixed", "adaptive", "implicit", "stiff", "exact", "discrete"]
FAMILIES: Final[tuple[Family, ...]] = get_args(Family)

#: How to make each method: its fields, the tableau by its name in :mod:`robodyn.integrate.methods.tableaus`. A
#: method (and its tableau, whose coefficients are checked as it is made) is made on first use: a run of dopri5
#: makes only it.
ENTRIES: Final[dict[str, tuple[Family, str, str | None, str | None]]] = {
    "euler": ("fixed", "explicit Euler, order 1", "EULER", None),
    "heun": ("fixed", "Heun's method (explicit trapezoid), order 2", "HEUN", None),
    "rk4": ("fixed", "the classical Runge–Kutta method, order 4", "RK4", None),
    "dopri5": ("adaptive", "Dormand–Prince 5(4) with 4th-order dense output", "DOPRI5", None),
    "dop853": ("adaptive", "Hairer's DOP853, 8(5,3) with 7th-order dense output", "DOP853", None),
    "radau": ("implicit", "Radau IIA of order 5 (Hairer's RADAU5), compiled, for stiff problems", None, None),
    "rosenbrock": ("implicit", "the Rosenbrock method RODAS4, order 4(3), compiled, for moderately stiff problems",
                   None, None),
    "scipy-radau": ("stiff", "scipy's Radau IIA, implicit, order 5", None, "Radau"),
    "scipy-bdf": ("stiff", "scipy's BDF, implicit, orders 1 to 5", None, "BDF"),
    "lsoda": ("stiff", "scipy's LSODA, switching between Adams and BDF", None, "LSODA"),
    "exact": ("exact", "matrix exponentials, exact for linear time-invariant models", None, None),
    "discrete": ("discrete", "x[k+1] = A x[k] + B u[k] at the sample instants of a discrete-time model", None, None),
}


def names(family: Family) -> tuple[str, ...]:
    """The names of the methods of ``family``, in registry order."""
    return tuple(name for name, entry in ENTRIES.items() if entry[0] == family)
