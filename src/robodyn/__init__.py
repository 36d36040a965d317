"""robodyn — robot and mechanical dynamics from equations of motion to validated linear models.

The public API::

    import robodyn
    model = robodyn.load("pendulum")            # a catalog name or a YAML model file
    model.f(0.0, {"theta": 0.1, "theta_dot": 0.0}, {"tau": 0.0})
    robodyn.classify(model).linear              # False: sin(theta)
    robodyn.simulate(model, 10.0, {"theta": 1.0})   # compiled DOPRI5 -> Trajectory
"""

from robodyn.analysis.classify import Classification, classify
from robodyn.analysis.equilibrium import OperatingPoint, find_equilibrium
from robodyn.analysis.existence import Existence, LipschitzBound, PicardIterates, existence, lipschitz, picard
from robodyn.analysis.linearize import linearize
from robodyn.analysis.ltv import LTVSystem, linearize_trajectory
from robodyn.analysis.modes import ModalDecomposition, Mode, Modes, forced_response, modal_decomposition, modes
from robodyn.analysis.second_order import Response, SecondOrder, second_order
from robodyn.analysis.validity import Validity, validity
from robodyn.analysis.verify import Verification, verify
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
from robodyn.integrate.events import Event
from robodyn.integrate.simulate import simulate
from robodyn.model.catalog import CATALOG
from robodyn.model.files import load, load_file, read_model_text
from robodyn.model.lagrange import LagrangianSystem
from robodyn.model.linear import LinearSystem
from robodyn.model.mechanical import ManipulatorSystem, MechanicalSystem, ScalarDamping
from robodyn.model.symbolic import SymbolicSystem
from robodyn.model.system import Model, System
from robodyn.signals import StateFeedback
from robodyn.trajectory import BatchTrajectory, SimulationStats, Trajectory

__version__ = "0.1.0"

__all__ = [
    "CATALOG",
    "BatchTrajectory",
    "Classification",
    "ConvergenceError",
    "Event",
    "Existence",
    "ExpressionError",
    "InputError",
    "LTVSystem",
    "LagrangianSystem",
    "LinearSystem",
    "LipschitzBound",
    "ManipulatorSystem",
    "MechanicalSystem",
    "ModalDecomposition",
    "Mode",
    "Model",
    "ModelFileError",
    "Modes",
    "NumericalError",
    "OperatingPoint",
    "PicardIterates",
    "Response",
    "RobodynError",
    "ScalarDamping",
    "SecondOrder",
    "ShapeError",
    "SimulationStats",
    "SingularMatrixError",
    "StateFeedback",
    "SymbolicSystem",
    "System",
    "Trajectory",
    "UnknownNameError",
    "Validity",
    "Verification",
    "__version__",
    "classify",
    "existence",
    "find_equilibrium",
    "forced_response",
    "linearize",
    "linearize_trajectory",
    "lipschitz",
    "load",
    "load_file",
    "modal_decomposition",
    "modes",
    "picard",
    "read_model_text",
    "second_order",
    "simulate",
    "validity",
    "verify",
]
