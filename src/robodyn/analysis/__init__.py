"""What a model is, told exactly: its classification (:mod:`~robodyn.analysis.classify`), existence and uniqueness of
its solutions (:mod:`~robodyn.analysis.existence`, on rigorous :mod:`~robodyn.analysis.intervals`), the closed forms
of one joint (:mod:`~robodyn.analysis.second_order`) and the integrators checked against exact solutions
(:mod:`~robodyn.analysis.verify`)."""

from typing import TYPE_CHECKING

from robodyn.base.lazy import lazy_names

if TYPE_CHECKING:  # pragma: no cover
    from robodyn.analysis.classify import Classification, classify

# loaded on first use (PEP 562): importing one analysis module does not import classify and sympy with it
__getattr__, __dir__ = lazy_names(__name__, {"Classification": "robodyn.analysis.classify",
                                             "classify": "robodyn.analysis.classify",
                                             "LINEARIZATION_METHODS": "robodyn.linearization"})

__all__ = ["Classification", "classify"]
