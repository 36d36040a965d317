"""The one registry of integration methods: every name ``simulate(method=...)`` and ``--method`` accept.

Each :class:`Method` belongs to a family, and ``simulate()`` picks its path by the family:

- ``fixed`` (``euler``, ``heun``, ``rk4``): the fixed-step kernel with the method's Butcher tableau; needs ``dt``;
- ``adaptive`` (``dopri5``, ``dop853``): the adaptive kernel (error control, dense output, events);
- ``implicit`` (``radau``, ``rosenbrock``): the adaptive kernel with Radau IIA of order 5 or RODAS4 (compiled,
  with the model's exact Jacobian);
- ``stiff`` (``scipy-radau``, ``scipy-bdf``, ``lsoda``): scipy's ``solve_ivp`` with the solver ``scipy_name``, for
  comparison (``bdf`` is accepted as another name of ``scipy-bdf``);
- ``exact``: matrix exponentials, for linear time-invariant models;
- ``discrete``: the update map x[k+1] = f(t_k, x[k], u[k]) of a discrete-time model (one with a
  ``sample_period``), stepped at its sample instants (:mod:`robodyn.integrate.paths.discrete`).

The older names are views of :data:`REGISTRY`: ``robodyn.integrate.simulate.METHOD_NAMES``,
``robodyn.integrate.methods.tableaus.METHODS`` (:data:`TABLEAUS`), ``FIXED_STEP`` and ``ADAPTIVE``, and
``robodyn.integrate.paths.stiff.STIFF_METHODS``. Nothing here imports numba, scipy or sympy.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from robodyn.base.errors import InputError
from robodyn.integrate.methods.families import ENTRIES as _ENTRIES
from robodyn.integrate.methods.families import FAMILIES, Family, names

if TYPE_CHECKING:
    from robodyn.integrate.methods.tableaus import ButcherTableau

    #: The Runge–Kutta tableaus of the fixed and adaptive methods by name (robodyn.integrate.methods.tableaus'
    #: ``METHODS``, read on first use: numpy is imported with them).
    TABLEAUS: Mapping[str, ButcherTableau]

__all__ = ["ALIASES", "FAMILIES", "METHOD_NAMES", "REGISTRY", "TABLEAUS", "Family", "Method", "lookup", "names"]


@dataclass(frozen=True, slots=True)
class Method:
    """One integration method.

    Parameters
    ----------
    name : str
        The name ``simulate(method=...)`` and ``--method`` take (lower case).
    family : {"fixed", "adaptive", "implicit", "stiff", "exact", "discrete"}
        Which path runs it.
    description : str
        One line for people.
    tableau : ButcherTableau, optional
        The Runge–Kutta coefficients of the ``fixed`` and ``adaptive`` methods (and only theirs).
    scipy_name : str, optional
        The ``solve_ivp`` solver of the ``stiff`` methods (and only theirs).
    """

    name: str
    family: Family
    description: str
    tableau: ButcherTableau | None = None
    scipy_name: str | None = None

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise InputError(f"method {self.name!r}: family {self.family!r} is not one of {', '.join(FAMILIES)}")
        explicit = self.family in ("fixed", "adaptive")
        if explicit != (self.tableau is not None) or (self.family == "stiff") != (self.scipy_name is not None):
            raise InputError(f"method {self.name!r}: fixed and adaptive methods have a tableau, stiff methods a "
                             "scipy_name, and no other method either")
        if self.tableau is not None and (self.tableau.name != self.name
                                         or self.tableau.adaptive != (self.family == "adaptive")):
            raise InputError(f"method {self.name!r}: its tableau is {self.tableau.name!r} "
                             f"(adaptive: {self.tableau.adaptive}), which does not fit the family {self.family!r}")


def _tableau(name: str) -> ButcherTableau:
    """The tableau ``name`` of :mod:`robodyn.integrate.methods.tableaus` (made there on first use)."""
    from robodyn.integrate.methods import tableaus

    built: ButcherTableau = getattr(tableaus, name)
    return built


class _Registry(Mapping[str, Method]):
    """Every method by name, in the order of ``METHOD_NAMES``: a read-only mapping that makes each
    :class:`Method` (with its tableau) the first time it is asked for, and keeps it."""

    def __init__(self) -> None:
        self._made: dict[str, Method] = {}

    def __getitem__(self, name: str) -> Method:
        method = self._made.get(name)
        if method is None:
            family, description, tableau, scipy_name = _ENTRIES[name]
            made = Method(name, family, description, None if tableau is None else _tableau(tableau), scipy_name)
            method = self._made.setdefault(name, made)  # a thread that made it too keeps the first
        return method

    def __iter__(self) -> Iterator[str]:
        return iter(_ENTRIES)

    def __len__(self) -> int:
        return len(_ENTRIES)

    def __repr__(self) -> str:
        return f"REGISTRY({', '.join(_ENTRIES)})"


#: Every method by name, in the order of ``METHOD_NAMES`` and of ``--method``'s choices.
REGISTRY: Final[Mapping[str, Method]] = _Registry()

METHOD_NAMES: Final = tuple(_ENTRIES)
#: Other names ``simulate(method=...)`` accepts, for the names of earlier versions.
ALIASES: Final[Mapping[str, str]] = MappingProxyType({"bdf": "scipy-bdf"})


def lookup(method: object) -> Method:
    """The method called ``method`` (any case), or InputError listing the names."""
    if not isinstance(method, str):
        raise InputError(f"method must be a name, one of {', '.join(METHOD_NAMES)}; got {method!r}")
    name = ALIASES.get(method.lower(), method.lower())
    if name not in _ENTRIES:
        raise InputError(f"unknown method {method!r}: one of {', '.join(METHOD_NAMES)}")
    return REGISTRY[name]


def __getattr__(name: str) -> Any:
    """``TABLEAUS``: the tableaus' mapping of :mod:`robodyn.integrate.methods.tableaus`, imported on first use (this
    module imports nothing heavy: the command line reads the method names without numpy)."""
    if name != "TABLEAUS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from robodyn.integrate.methods.tableaus import METHODS

    globals()[name] = METHODS
    return METHODS
