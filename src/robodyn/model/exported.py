"""What a model offers for export as standalone code: its functions as outputs of one straight-line tape.

:class:`ExportedFunctions` is the model contract's ``exported_functions()`` answer (robodyn.export.c writes it as
C99): the tape and, by function, the outputs in the order of the C signature's arrays. The signatures (the
promise of docs/export.md) are, with ``x = [q, q']`` the tape's state leaves and ``a`` its fourth argument:

==============  ===========================================  =================================================
function        tape arguments read                          outputs
==============  ===========================================  =================================================
``f``           t, x, u, p                                   x' ``(NX,)``
``h``           t, x, u, p                                   y ``(NY,)``
``linearize``   t, x, u, p                                   A, B, C, D row-major, one after the other
``mass``        q (x's first NQ), p                          M ``(NQ * NQ,)`` row-major
``rnea``        q, q' (x), q'' (a), p                        tau ``(NQ,)``
``aba``         q, q' (x), tau (a), p                        q'' ``(NQ,)``
``com``         q, p                                         the centre of mass ``(3,)``
``fk``          q, p (per frame)                             position (3), R (9, row-major), J (6 NQ)
==============  ===========================================  =================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ExportedFunctions"]


@dataclass(frozen=True)
class ExportedFunctions:
    """A model's exportable functions: ``tape`` (robodyn.rigid.tape.Tape) and ``functions`` {name: outputs} for
    ``f``, ``h``, ``linearize`` and, for rigid bodies, ``mass``, ``rnea``, ``aba``, ``com``; ``frames``
    {frame: outputs} for the forward kinematics; ``coordinates`` the NQ coordinates (rigid bodies), else ()."""

    tape: Any
    functions: Mapping[str, Sequence[Any]]
    frames: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    coordinates: tuple[str, ...] = ()
