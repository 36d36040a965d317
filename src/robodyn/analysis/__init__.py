"""Analysis of models: classification (and, as they land, closed forms, modes, linearization, validity)."""

from robodyn.analysis.classify import Classification, classify

__all__ = ["Classification", "classify"]
