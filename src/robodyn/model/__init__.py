"""What a model is: the contract, the model kinds, model files, chains and URDF robots.

The package is grouped by concept:

- the contract — :mod:`~robodyn.model.protocol` (:class:`ModelContract`, everything a consumer may ask),
  :mod:`~robodyn.model.system` (:class:`Model`, which answers all of it, and :class:`System` for callables),
  :mod:`~robodyn.model.symbolic_form` (labelled equations), :mod:`~robodyn.model.events`,
  :mod:`~robodyn.model.compiled` (a model's generated functions);
- the kinds — :mod:`~robodyn.model.symbolic`, :mod:`~robodyn.model.mechanical`, :mod:`~robodyn.model.lagrange`,
  :mod:`~robodyn.model.linear`, with what they share: expressions (:mod:`~robodyn.model.expr`,
  :mod:`~robodyn.model.names`), values (:mod:`~robodyn.model.values`), exact linearization, mass-matrix
  plausibility, named points as frames;
- :mod:`robodyn.model.files` — model files, the catalog and the parsed-model cache;
- :mod:`robodyn.model.chain` — chains of rigid links, DH tables and URDF robots (two backends).

The names below are loaded on first use (PEP 562), so that importing one submodule (say
``robodyn.model.expr`` for the expression parser) does not import the model file reader and every
model class with it.
"""

from typing import TYPE_CHECKING

from robodyn._lazy import lazy_names

# public name -> module that defines it
_LAZY: dict[str, str] = {
    "ChainSystem": "robodyn.model.chain.system",
    "LagrangianSystem": "robodyn.model.lagrange",
    "LinearSystem": "robodyn.model.linear",
    "ManipulatorSystem": "robodyn.model.mechanical",
    "ModelContract": "robodyn.model.protocol",
    "MechanicalSystem": "robodyn.model.mechanical",
    "Model": "robodyn.model.system",
    "ScalarDamping": "robodyn.model.mechanical",
    "SymbolicModel": "robodyn.model.symbolic",
    "SymbolicSystem": "robodyn.model.symbolic",
    "System": "robodyn.model.callables",
    "UrdfRobot": "robodyn.model.chain.urdf",
    "load": "robodyn.model.files.loading",
    "load_file": "robodyn.model.files.loading",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs: the same names, imported eagerly
    from robodyn.model.callables import System
    from robodyn.model.chain.system import ChainSystem
    from robodyn.model.chain.urdf import UrdfRobot
    from robodyn.model.files.loading import load, load_file
    from robodyn.model.lagrange import LagrangianSystem
    from robodyn.model.linear import LinearSystem
    from robodyn.model.mechanical import ManipulatorSystem, MechanicalSystem, ScalarDamping
    from robodyn.model.protocol import ModelContract
    from robodyn.model.symbolic import SymbolicModel, SymbolicSystem
    from robodyn.model.system import Model


__getattr__, __dir__ = lazy_names(__name__, _LAZY)


__all__ = [
    "ChainSystem",
    "LagrangianSystem",
    "LinearSystem",
    "ManipulatorSystem",
    "MechanicalSystem",
    "Model",
    "ModelContract",
    "ScalarDamping",
    "SymbolicModel",
    "SymbolicSystem",
    "System",
    "UrdfRobot",
    "load",
    "load_file",
]
