"""What a model is: plain, symbolic, linear, mechanical and Lagrangian models, files and catalog."""

from robodyn.model.files import load, load_file
from robodyn.model.lagrange import LagrangianSystem
from robodyn.model.linear import LinearSystem
from robodyn.model.mechanical import ManipulatorSystem, MechanicalSystem, ScalarDamping
from robodyn.model.symbolic import SymbolicModel, SymbolicSystem
from robodyn.model.system import Model, System

__all__ = [
    "LagrangianSystem",
    "LinearSystem",
    "ManipulatorSystem",
    "MechanicalSystem",
    "Model",
    "ScalarDamping",
    "SymbolicModel",
    "SymbolicSystem",
    "System",
    "load",
    "load_file",
]
