"""Rigid-body mechanisms as models, from ``kind: chain`` files, DH tables, URDF and MJCF files.

- :mod:`robodyn.mechanisms.chain` — :class:`ChainSystem`: a chain or tree on a fixed base lowered to the rigid-body
  tape, and what is computed on it (frames, outputs, quantities, regressor, linearization);
- :mod:`robodyn.mechanisms.floating` — robots on a moving base (:class:`FloatingChain`), their configurations and
  the chart the integrators step in;
- :mod:`robodyn.mechanisms.loops` — closed loops and held points: constraints, assembly;
- :mod:`robodyn.mechanisms.contact` — compliant contact and impacts;
- :mod:`robodyn.mechanisms.urdf` — reading URDF, a URDF robot as a chain (:class:`UrdfRobot`), the Pinocchio backend;
- :mod:`robodyn.mechanisms.mjcf` — reading MuJoCo's MJCF, an MJCF robot as a chain (:class:`MjcfRobot`) or on a
  floating base.

Chain files are read by :mod:`robodyn.files.chain`. The names are loaded on first use (PEP 562).
"""

from typing import TYPE_CHECKING

from robodyn.base.lazy import lazy_names

_LAZY: dict[str, str] = {
    "CLOSED_FORM_LIMIT": "robodyn.mechanisms.chain.system",
    "DEFAULT_FRICTION_SMOOTHING": "robodyn.mechanisms.chain.parts",
    "DEFAULT_GRAVITY": "robodyn.mechanisms.chain.parts",
    "ChainSystem": "robodyn.mechanisms.chain.system",
    "Joint": "robodyn.mechanisms.chain.parts",
    "Link": "robodyn.mechanisms.chain.parts",
    "MjcfRobot": "robodyn.mechanisms.mjcf.robot",
    "UrdfRobot": "robodyn.mechanisms.urdf.chain",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers: the same names, imported eagerly
    from robodyn.mechanisms.chain.parts import DEFAULT_FRICTION_SMOOTHING, DEFAULT_GRAVITY, Joint, Link
    from robodyn.mechanisms.chain.system import CLOSED_FORM_LIMIT, ChainSystem
    from robodyn.mechanisms.mjcf.robot import MjcfRobot
    from robodyn.mechanisms.urdf.chain import UrdfRobot

__getattr__, __dir__ = lazy_names(__name__, _LAZY)

__all__ = ["CLOSED_FORM_LIMIT", "DEFAULT_FRICTION_SMOOTHING", "DEFAULT_GRAVITY", "ChainSystem", "Joint", "Link",
           "MjcfRobot", "UrdfRobot"]
