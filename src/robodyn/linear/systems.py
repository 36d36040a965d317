"""The linear system an analysis of linear systems works on (:func:`as_linear`), shared by robodyn.linear.lti,
margins, controllability and design."""

from __future__ import annotations

from typing import Any

from robodyn.base.errors import InputError
from robodyn.model.kinds.linear import LinearSystem
from robodyn.model.system import Model

__all__ = ["as_linear"]


def as_linear(system: Any, where: str) -> LinearSystem:
    """``system`` as a LinearSystem: its ``linear_model()`` (itself for a LinearSystem; the exact linear model of
    a model linear by construction), or InputError saying how to make one."""
    linear = system.linear_model() if isinstance(system, Model) else None
    if linear is None:
        hint = "robodyn.linearize(model, x, u)" if isinstance(system, Model) else "robodyn.LinearSystem(A, B, C, D)"
        raise InputError(f"{where} needs a linear system, got {type(system).__name__}"
                         f"{' ' + repr(system.name) if isinstance(system, Model) else ''}: make one with {hint}")
    return linear
