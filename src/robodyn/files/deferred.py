"""A recorded model's symbol table that builds the full model only when it is used (robodyn.files.cached)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from robodyn.model.system import Model

__all__ = ["DeferredTable", "RecordedModel"]


class RecordedModel(Protocol):
    """What a :class:`DeferredTable` reads of its model (robodyn.files.cached.CachedModel): the names, and the
    full model built when anything else is asked."""

    states: tuple[str, ...]
    inputs: tuple[str, ...]
    parameters: Mapping[str, float]

    def full_model(self) -> Model:
        """The model built from the file's text."""
        ...


class DeferredTable:
    """A model's symbol table (events, code generation) that builds the full model only when it is used.

    The symbols of the states, inputs and parameters follow from their names; everything else (parsing an
    event, ``lambdify``) is the full model's table.
    """

    def __init__(self, model: RecordedModel):
        self._model = model

    @property
    def t_symbol(self) -> Any:
        from robodyn.model.expr import TIME

        return TIME

    @property
    def x_symbols(self) -> tuple[Any, ...]:
        return self._symbols(self._model.states)

    @property
    def u_symbols(self) -> tuple[Any, ...]:
        return self._symbols(self._model.inputs)

    @property
    def p_symbols(self) -> tuple[Any, ...]:
        return self._symbols(tuple(self._model.parameters))

    @staticmethod
    def _symbols(names: tuple[str, ...]) -> tuple[Any, ...]:
        from robodyn.model.expr import symbol

        return tuple(symbol(n) for n in names)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._model.full_model().symbol_table(), name)
