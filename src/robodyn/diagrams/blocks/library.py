"""The block library: the actuators, sensors and controllers of block diagrams, as ordinary symbolic models.

Each block is one module of this folder (``gain.py``, ``pid.py``, ...: its factory and its exact discrete form),
found by :mod:`~robodyn.diagrams.blocks.registry`; this module re-exports the factories and holds the table
:data:`BLOCKS` and :func:`make_block` that ``kind: diagram`` files and ``robodyn.blocks`` read.

Each function returns a :class:`~robodyn.model.kinds.symbolic.SymbolicSystem` (compiled, with exact Jacobians) whose
ports are the promised names below; a diagram file names them as ``model:`` (``{model: pid, parameters: {kp:
20}}``), the parameters being this function's arguments. Blocks without dynamics (``gain``, ``sum``,
``saturation``, ``quantizer``, ``lti`` with ``D`` alone, ``dc_motor`` with ``L = 0``) have no states: y = h(t, u).

========== ================== ============== ===================================================================
block      inputs             outputs        equations
========== ================== ============== ===================================================================
gain       u                  y              y = k u
sum        u1 … un            y              y = Σ sᵢ uᵢ, sᵢ the signs (``"+-"``: y = u1 − u2)
integrator u                  y              x' = u, y = y0 + x (x starts at 0: y starts at y0)
first_order u                 y              tau y' + y = K u
pid        r, y               u              e = r − y, v = kp e + ki xi + kd (e − xd)/tf, xi' = e, xd' = (e − xd)/tf
saturation u                  y              y = min(upper, max(lower, u)) (its corners are events in a diagram)
lti        u1 … um            y1 … yp        x' = A x + B u, y = C x + D u (or num/den, SISO)
dc_motor   v, omega           tau, i         L i' = v − R i − ke N omega, tau = eta N kt i
quantizer  u                  y              y = q round(u / q) = q floor(u / q + 1/2)
========== ================== ============== ===================================================================

Structure is fixed when a block is made: a ``pid`` made with ``ki = 0`` has no integral state (a PD is a static
block when ``kd = 0`` too), one with ``kd = 0`` no derivative state, so closed-loop models have no spurious
modes; give a gain a non-zero value at creation to tune it later with ``--param``. Likewise ``dc_motor`` with
``L = 0`` is the static limit i = (v − ke N omega) / R, and ``lti``'s matrices and ``sum``'s signs are not
parameters.

The motor's rotor inertia reflected through the gear, N² Jm, is not in the block: it belongs to the driven
joint (the ``armature`` of chain and URDF joints), whose inertia it adds to.

With limits ``umin``/``umax`` the ``pid`` output is u = min(umax, max(umin, v)) and its integral has
back-calculation anti-windup (Åström & Hägglund, *Advanced PID Control*, 2006, §3.5): xi' = e + (u − v) / (ki tt),
tracking time ``tt`` (default the integral time kp / ki).

A block has at most :data:`MAX_BLOCK_PORTS` inputs, outputs and states each, and an ``lti`` block at most
:data:`MAX_LTI_ENTRIES` nonzero matrix entries: larger ones are refused before anything is built (their generated
code takes minutes to compile).

Each block is tested against its closed form (tests/diagrams/blocks/test_blocks.py).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from robodyn.base.errors import UnknownNameError
from robodyn.base.names import did_you_mean
from robodyn.diagrams.blocks.common import MAX_BLOCK_PORTS
from robodyn.diagrams.blocks.dc_motor import dc_motor
from robodyn.diagrams.blocks.first_order import first_order
from robodyn.diagrams.blocks.gain import gain
from robodyn.diagrams.blocks.integrator import integrator
from robodyn.diagrams.blocks.lti import MAX_LTI_ENTRIES, lti
from robodyn.diagrams.blocks.pid import pid
from robodyn.diagrams.blocks.quantizer import quantizer
from robodyn.diagrams.blocks.registry import BlockKind, block_kinds
from robodyn.diagrams.blocks.saturation import saturation
from robodyn.diagrams.blocks.sum import sum
from robodyn.model.kinds.symbolic import SymbolicSystem

__all__ = ["BLOCKS", "KINDS", "MAX_BLOCK_PORTS", "MAX_LTI_ENTRIES", "dc_motor", "first_order", "gain", "integrator",
           "lti", "make_block", "pid", "quantizer", "saturation", "sum"]

#: The order of the table before its blocks were found from their files (messages and the reference list the
#: blocks in it); blocks added since follow in the registry's order (by name).
_FIRST: Final = ("gain", "sum", "integrator", "first_order", "pid", "saturation", "lti", "dc_motor", "quantizer")


def _ordered(kinds: tuple[BlockKind, ...]) -> dict[str, BlockKind]:
    by_name = {kind.name: kind for kind in kinds}
    return {name: by_name[name] for name in (*[n for n in _FIRST if n in by_name],
                                             *[n for n in by_name if n not in _FIRST])}


#: block name -> its record (factory and exact discrete form), read-only
KINDS: Final[Mapping[str, BlockKind]] = MappingProxyType(_ordered(block_kinds()))
#: block name -> the function that makes it (``model:`` of a diagram file), read-only
BLOCKS: Final[Mapping[str, Callable[..., SymbolicSystem]]] = MappingProxyType(
    {name: kind.make for name, kind in KINDS.items()})


def make_block(kind: str, parameters: Mapping[str, Any] | None = None, *, name: str | None = None) -> SymbolicSystem:
    """The library block ``kind`` made with ``parameters`` (its function's arguments), named ``name`` (default
    ``kind``); an unknown kind or argument is an UnknownNameError listing the known ones."""
    factory = BLOCKS.get(kind)
    if factory is None:
        raise UnknownNameError(f"unknown block {kind!r} (blocks: {', '.join(BLOCKS)})"
                               f"{did_you_mean(kind, list(BLOCKS))}")
    allowed = [p for p in inspect.signature(factory).parameters if p != "name"]
    given = dict(parameters or {})
    unknown = [k for k in given if k not in allowed]
    if unknown:
        raise UnknownNameError(f"block {kind!r} has no parameter {unknown[0]!r} (its parameters: {', '.join(allowed)})"
                               f"{did_you_mean(unknown[0], allowed)}")
    return factory(**given, name=name or kind)
