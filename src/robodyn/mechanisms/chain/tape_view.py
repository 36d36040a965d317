"""The public view of a chain's tape, for what is computed on it beside the dynamics (frames, outputs).

:class:`ChainTape` is what :meth:`robodyn.mechanisms.chain.system.ChainSystem.tape_view` gives: the recorded program
(robodyn.rigid.dynamics.ManipulatorProgram: the tape, the bodies, the couplings, the leaves of x, u and q'), the
placement of each moved link's joint frame in its parent link, and two functions that put the chain's own
expressions on the tape. The frames (:mod:`robodyn.mechanisms.chain.frames`) and the kinematic outputs
(:mod:`robodyn.mechanisms.chain.outputs`) are built from it alone, never from the chain's private members.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ChainTape"]


@dataclass(frozen=True, slots=True)
class ChainTape:
    """A chain's tape and what places its frames.

    program : the chain's :class:`~robodyn.rigid.dynamics.ManipulatorProgram` (``tape``, ``bodies``,
        ``couplings``, ``x``, ``u``, ``qd``)
    link_offsets : moved link name -> (R ``3x3``, p ``3x1``) sympy matrices of its joint frame in the parent link
    value : a sympy expression (or number) in the chain's symbols -> its value on the tape
    vector : ``vector(values, where, key)`` -> a 3-vector of parameter expressions (numbers or text in the
        parameters), or InputError naming ``where`` and the file key ``key``
    """

    program: Any
    link_offsets: Mapping[str, tuple[Any, Any]]
    value: Callable[[Any], Any]
    vector: Callable[[Any, str, str], list[Any]]
