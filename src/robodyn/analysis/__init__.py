"""Analysis of models: classification (and, as they land, closed forms, modes, linearization, validity)."""

from typing import TYPE_CHECKING

from robodyn._lazy import lazy_names

if TYPE_CHECKING:  # pragma: no cover
    from robodyn.analysis.classify import Classification, classify

# loaded on first use (PEP 562): importing one analysis module (robodyn.analysis.linearize) does not import
# classify and sympy with it
__getattr__, __dir__ = lazy_names(__name__, {"Classification": "robodyn.analysis.classify",
                                             "classify": "robodyn.analysis.classify"})

#: linearize's methods (robodyn.analysis.linearize.METHODS), here so that the CLI offers them without importing it
LINEARIZATION_METHODS = ("auto", "symbolic", "manipulator", "linear", "complex", "central")

__all__ = ["LINEARIZATION_METHODS", "Classification", "classify"]
