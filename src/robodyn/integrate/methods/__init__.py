"""The integration methods as data: the registry every ``method=`` name is looked up in
(:mod:`~robodyn.integrate.methods.registry`), explicit Runge–Kutta tableaus (:mod:`~robodyn.integrate.methods.tableaus`)
and the implicit methods' numbers (:mod:`~robodyn.integrate.methods.implicit`).

Before this folder existed ``robodyn.integrate.methods`` was the registry module: its names still resolve here,
with a DeprecationWarning. The method table and its families are
:mod:`~robodyn.integrate.methods.families`; the step-size controller both kernel forms share is
:mod:`~robodyn.integrate.methods.controller`.
"""

from robodyn.base.lazy import forwarded_names

__getattr__, __dir__ = forwarded_names(__name__, "robodyn.integrate.methods.registry", (
    "ALIASES", "FAMILIES", "METHOD_NAMES", "REGISTRY", "TABLEAUS", "Family", "Method", "lookup", "names"))
