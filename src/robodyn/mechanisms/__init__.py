"""Serial chains and trees of rigid links, from ``kind: chain`` files, DH tables and URDF files.

- :mod:`~robodyn.mechanisms.chain.system` — :class:`ChainSystem`: the chain lowered to the rigid-body tape;
- :mod:`~robodyn.mechanisms.chain.parts` — joints and links; :mod:`~robodyn.files.chain` — chain files;
- :mod:`~robodyn.mechanisms.chain.frames`, :mod:`~robodyn.mechanisms.chain.outputs`,
  :mod:`~robodyn.mechanisms.chain.quantities`, :mod:`~robodyn.mechanisms.chain.closed` — what is computed on the tape
  (through the chain's public tape view :class:`~robodyn.mechanisms.chain.tape_view.ChainTape`);
- :mod:`~robodyn.mechanisms.urdf.file` — reading URDF; :mod:`~robodyn.mechanisms.urdf.chain` — a URDF robot as a
  chain (:class:`UrdfRobot`); :mod:`~robodyn.mechanisms.urdf.pinocchio` — the Pinocchio backend.

The names are loaded on first use (PEP 562).
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
    "UrdfRobot": "robodyn.mechanisms.urdf.chain",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers: the same names, imported eagerly
    from robodyn.mechanisms.chain.parts import DEFAULT_FRICTION_SMOOTHING, DEFAULT_GRAVITY, Joint, Link
    from robodyn.mechanisms.chain.system import CLOSED_FORM_LIMIT, ChainSystem
    from robodyn.mechanisms.urdf.chain import UrdfRobot

__getattr__, __dir__ = lazy_names(__name__, _LAZY)

__all__ = ["CLOSED_FORM_LIMIT", "DEFAULT_FRICTION_SMOOTHING", "DEFAULT_GRAVITY", "ChainSystem", "Joint", "Link",
           "UrdfRobot"]
