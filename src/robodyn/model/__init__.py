"""What a model is: plain, symbolic, linear, mechanical and Lagrangian models, files and catalog.

The names below are loaded on first use (PEP 562), so that importing one submodule (say
``robodyn.model.expr`` for the expression parser) does not import the model file reader and every
model class with it.
"""

from typing import TYPE_CHECKING

from robodyn._lazy import lazy_names

# public name -> module that defines it
_LAZY: dict[str, str] = {
    "ChainSystem": "robodyn.model.chain",
    "LagrangianSystem": "robodyn.model.lagrange",
    "LinearSystem": "robodyn.model.linear",
    "ManipulatorSystem": "robodyn.model.mechanical",
    "MechanicalSystem": "robodyn.model.mechanical",
    "Model": "robodyn.model.system",
    "ScalarDamping": "robodyn.model.mechanical",
    "SymbolicModel": "robodyn.model.symbolic",
    "SymbolicSystem": "robodyn.model.symbolic",
    "System": "robodyn.model.system",
    "UrdfRobot": "robodyn.model.urdf_chain",
    "load": "robodyn.model.files",
    "load_file": "robodyn.model.files",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs: the same names, imported eagerly
    from robodyn.model.chain import ChainSystem
    from robodyn.model.files import load, load_file
    from robodyn.model.lagrange import LagrangianSystem
    from robodyn.model.linear import LinearSystem
    from robodyn.model.mechanical import ManipulatorSystem, MechanicalSystem, ScalarDamping
    from robodyn.model.symbolic import SymbolicModel, SymbolicSystem
    from robodyn.model.system import Model, System
    from robodyn.model.urdf_chain import UrdfRobot


__getattr__, __dir__ = lazy_names(__name__, _LAZY)


__all__ = [
    "ChainSystem",
    "LagrangianSystem",
    "LinearSystem",
    "ManipulatorSystem",
    "MechanicalSystem",
    "Model",
    "ScalarDamping",
    "SymbolicModel",
    "SymbolicSystem",
    "System",
    "UrdfRobot",
    "load",
    "load_file",
]
