"""Serial chains and trees of rigid links, from ``kind: chain`` files, DH tables and URDF files.

- :mod:`~robodyn.model.chain.system` — :class:`ChainSystem`: the chain lowered to the rigid-body tape;
- :mod:`~robodyn.model.chain.parts` — joints and links; :mod:`~robodyn.model.chain.file` — chain files;
- :mod:`~robodyn.model.chain.frames`, :mod:`~robodyn.model.chain.outputs`,
  :mod:`~robodyn.model.chain.quantities`, :mod:`~robodyn.model.chain.closed` — what is computed on the tape
  (through the chain's public tape view :class:`~robodyn.model.chain.tape_view.ChainTape`);
- :mod:`~robodyn.model.chain.urdf_file` — reading URDF; :mod:`~robodyn.model.chain.urdf` — a URDF robot as a
  chain (:class:`UrdfRobot`); :mod:`~robodyn.model.chain.pinocchio` — the Pinocchio backend.

The names are loaded on first use (PEP 562).
"""

from typing import TYPE_CHECKING

from robodyn._lazy import lazy_names

_LAZY: dict[str, str] = {
    "CLOSED_FORM_LIMIT": "robodyn.model.chain.system",
    "DEFAULT_FRICTION_SMOOTHING": "robodyn.model.chain.parts",
    "DEFAULT_GRAVITY": "robodyn.model.chain.parts",
    "ChainSystem": "robodyn.model.chain.system",
    "Joint": "robodyn.model.chain.parts",
    "Link": "robodyn.model.chain.parts",
    "UrdfRobot": "robodyn.model.chain.urdf",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers: the same names, imported eagerly
    from robodyn.model.chain.parts import DEFAULT_FRICTION_SMOOTHING, DEFAULT_GRAVITY, Joint, Link
    from robodyn.model.chain.system import CLOSED_FORM_LIMIT, ChainSystem
    from robodyn.model.chain.urdf import UrdfRobot

__getattr__, __dir__ = lazy_names(__name__, _LAZY)

__all__ = ["CLOSED_FORM_LIMIT", "DEFAULT_FRICTION_SMOOTHING", "DEFAULT_GRAVITY", "ChainSystem", "Joint", "Link",
           "UrdfRobot"]
