"""robodyn — robot and mechanical dynamics from equations of motion to validated linear models.

The public API::

    import robodyn
    model = robodyn.load("pendulum")            # a catalog name or a YAML model file
    model.f(0.0, {"theta": 0.1, "theta_dot": 0.0}, {"tau": 0.0})
    robodyn.classify(model).linear              # False: sin(theta)
"""

from robodyn.analysis.classify import Classification, classify
from robodyn.errors import (
    ConvergenceError,
    ExpressionError,
    InputError,
    ModelFileError,
    NumericalError,
    RobodynError,
    ShapeError,
    SingularMatrixError,
    UnknownNameError,
)
from robodyn.model.catalog import CATALOG
from robodyn.model.files import load, load_file, read_model_text
from robodyn.model.lagrange import LagrangianSystem
from robodyn.model.linear import LinearSystem
from robodyn.model.mechanical import ManipulatorSystem, MechanicalSystem, ScalarDamping
from robodyn.model.symbolic import SymbolicSystem
from robodyn.model.system import Model, System

__version__ = "0.1.0"

__all__ = [
    "CATALOG",
    "Classification",
    "ConvergenceError",
    "ExpressionError",
    "InputError",
    "LagrangianSystem",
    "LinearSystem",
    "ManipulatorSystem",
    "MechanicalSystem",
    "Model",
    "ModelFileError",
    "NumericalError",
    "RobodynError",
    "ScalarDamping",
    "ShapeError",
    "SingularMatrixError",
    "SymbolicSystem",
    "System",
    "UnknownNameError",
    "__version__",
    "classify",
    "load",
    "load_file",
    "read_model_text",
]
