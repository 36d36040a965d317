"""robodyn — robot and mechanical dynamics from equations of motion to validated linear models.

The public API::

    import robodyn
    model = robodyn.load("pendulum")            # a catalog name or a YAML model file
    model.f(0.0, {"theta": 0.1, "theta_dot": 0.0}, {"tau": 0.0})
    robodyn.classify(model).linear              # False: sin(theta)
    robodyn.simulate(model, 10.0, {"theta": 1.0})   # compiled DOPRI5 -> Trajectory
"""

from typing import TYPE_CHECKING

from robodyn._lazy import install_moved, lazy_names

# Errors are imported eagerly (they are small and every module uses them); everything else is loaded
# on first use (PEP 562), so `import robodyn` stays light: numba, scipy.optimize and mpmath load only when
# the functions that need them are used.
from robodyn.errors import (
    ConvergenceError,
    ExpressionError,
    InputError,
    ModelFileError,
    NumericalError,
    RobodynError,
    RobodynWarning,
    ShapeError,
    SingularMatrixError,
    UnknownNameError,
)

# public name -> module that defines it
_LAZY: dict[str, str] = {
    "BaseParameters": "robodyn.analysis.base_parameters",
    "BatchTrajectory": "robodyn.trajectory",
    "CATALOG": "robodyn.model.files.catalog",
    "Classification": "robodyn.analysis.classify",
    "Controllability": "robodyn.analysis.controllability",
    "ConsistentParameters": "robodyn.analysis.consistency",
    "ConstrainedChain": "robodyn.model.chain.constrained",
    "Diagram": "robodyn.model.diagram",
    "Event": "robodyn.model.events",
    "Excitation": "robodyn.analysis.excitation",
    "Existence": "robodyn.analysis.existence",
    "FloatingChain": "robodyn.model.chain.floating",
    "LTVSystem": "robodyn.analysis.ltv",
    "LagrangianSystem": "robodyn.model.lagrange",
    "LQR": "robodyn.analysis.design",
    "LinearSystem": "robodyn.model.linear",
    "Linearizer": "robodyn.analysis.linearizer",
    "LipschitzBound": "robodyn.analysis.existence",
    "FramePath": "robodyn.kinematics.paths",
    "IKResult": "robodyn.kinematics.ik",
    "Kinematics": "robodyn.kinematics.frames",
    "ManipulatorSystem": "robodyn.model.mechanical",
    "Margins": "robodyn.analysis.margins",
    "MechanicalSystem": "robodyn.model.mechanical",
    "ModalDecomposition": "robodyn.analysis.modes",
    "Mode": "robodyn.analysis.modes",
    "Model": "robodyn.model.system",
    "Modes": "robodyn.analysis.modes",
    "Observability": "robodyn.analysis.controllability",
    "Identification": "robodyn.analysis.identify",
    "OperatingPoint": "robodyn.analysis.equilibrium",
    "Pose": "robodyn.kinematics.frames",
    "PicardIterates": "robodyn.analysis.existence",
    "Regressor": "robodyn.analysis.regressor",
    "Response": "robodyn.analysis.second_order",
    "RigidIdentification": "robodyn.analysis.identify_rigid",
    "ScalarDamping": "robodyn.model.mechanical",
    "SecondOrder": "robodyn.analysis.second_order",
    "SimulationStats": "robodyn.trajectory",
    "StateFeedback": "robodyn.signals",
    "StepInfo": "robodyn.analysis.lti",
    "SymbolicSystem": "robodyn.model.symbolic",
    "System": "robodyn.model.callables",
    "Trajectory": "robodyn.trajectory",
    "Validity": "robodyn.analysis.validity",
    "Verification": "robodyn.analysis.verify",
    "animate": "robodyn.kinematics.animate",
    "assemble": "robodyn.analysis.assembly",
    "base_parameters": "robodyn.analysis.base_parameters",
    "export_c": "robodyn.export.c",
    "blocks": "robodyn.blocks",
    "classify": "robodyn.analysis.classify",
    "consistent_parameters": "robodyn.analysis.consistency",
    "design_excitation": "robodyn.analysis.excitation",
    "difference": "robodyn.model.chain.configuration",
    "existence": "robodyn.analysis.existence",
    "find_equilibrium": "robodyn.analysis.equilibrium",
    "forced_response": "robodyn.analysis.response",
    "identify_rigid": "robodyn.analysis.identify_rigid",
    "integrate_configuration": "robodyn.model.chain.configuration",
    "inverse_kinematics": "robodyn.kinematics.ik",
    "linearize": "robodyn.analysis.linearize",
    "linearize_trajectory": "robodyn.analysis.ltv",
    "lipschitz": "robodyn.analysis.existence",
    "lqr": "robodyn.analysis.design",
    "load": "robodyn.model.files.loading",
    "load_file": "robodyn.model.files.loading",
    "load_sweep": "robodyn.sweep",
    "modal_decomposition": "robodyn.analysis.modes",
    "modes": "robodyn.analysis.modes",
    "identify": "robodyn.analysis.identify",
    "picard": "robodyn.analysis.existence",
    "place": "robodyn.analysis.design",
    "read_model_text": "robodyn.model.files.loading",
    "regressor": "robodyn.analysis.regressor",
    "second_order": "robodyn.analysis.second_order",
    "simulate": "robodyn.integrate.simulate",
    "sweep": "robodyn.sweep",
    "validity": "robodyn.analysis.validity",
    "verify": "robodyn.analysis.verify",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs: the same names, imported eagerly
    import robodyn.blocks as blocks
    from robodyn.analysis.assembly import assemble
    from robodyn.analysis.base_parameters import BaseParameters, base_parameters
    from robodyn.analysis.classify import Classification, classify
    from robodyn.analysis.consistency import ConsistentParameters, consistent_parameters
    from robodyn.analysis.controllability import Controllability, Observability
    from robodyn.analysis.design import LQR, lqr, place
    from robodyn.analysis.equilibrium import OperatingPoint, find_equilibrium
    from robodyn.analysis.excitation import Excitation, design_excitation
    from robodyn.analysis.existence import Existence, LipschitzBound, PicardIterates, existence, lipschitz, picard
    from robodyn.analysis.identify import Identification, identify
    from robodyn.analysis.identify_rigid import RigidIdentification, identify_rigid
    from robodyn.analysis.linearize import linearize
    from robodyn.analysis.linearizer import Linearizer
    from robodyn.analysis.lti import StepInfo
    from robodyn.analysis.ltv import LTVSystem, linearize_trajectory
    from robodyn.analysis.margins import Margins
    from robodyn.analysis.modes import ModalDecomposition, Mode, Modes, modal_decomposition, modes
    from robodyn.analysis.regressor import Regressor, regressor
    from robodyn.analysis.response import forced_response
    from robodyn.analysis.second_order import Response, SecondOrder, second_order
    from robodyn.analysis.validity import Validity, validity
    from robodyn.analysis.verify import Verification, verify
    from robodyn.export.c import export_c
    from robodyn.integrate.simulate import simulate
    from robodyn.kinematics.animate import animate
    from robodyn.kinematics.frames import Kinematics, Pose
    from robodyn.kinematics.ik import IKResult, inverse_kinematics
    from robodyn.kinematics.paths import FramePath
    from robodyn.model.callables import System
    from robodyn.model.chain.configuration import difference, integrate_configuration
    from robodyn.model.chain.constrained import ConstrainedChain
    from robodyn.model.chain.floating import FloatingChain
    from robodyn.model.diagram import Diagram
    from robodyn.model.events import Event
    from robodyn.model.files.catalog import CATALOG
    from robodyn.model.files.loading import load, load_file, read_model_text
    from robodyn.model.lagrange import LagrangianSystem
    from robodyn.model.linear import LinearSystem
    from robodyn.model.mechanical import ManipulatorSystem, MechanicalSystem, ScalarDamping
    from robodyn.model.symbolic import SymbolicSystem
    from robodyn.model.system import Model
    from robodyn.signals import StateFeedback
    from robodyn.sweep import load_sweep, sweep
    from robodyn.trajectory import BatchTrajectory, SimulationStats, Trajectory


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
install_moved()  # old import paths of the modules that moved (robodyn.sweep_plan, ...) keep working

__version__ = "0.1.0"

__all__ = [
    "CATALOG",
    "LQR",
    "BaseParameters",
    "BatchTrajectory",
    "Classification",
    "ConsistentParameters",
    "ConstrainedChain",
    "Controllability",
    "ConvergenceError",
    "Diagram",
    "Event",
    "Excitation",
    "Existence",
    "ExpressionError",
    "FloatingChain",
    "FramePath",
    "IKResult",
    "Identification",
    "InputError",
    "Kinematics",
    "LTVSystem",
    "LagrangianSystem",
    "LinearSystem",
    "Linearizer",
    "LipschitzBound",
    "ManipulatorSystem",
    "Margins",
    "MechanicalSystem",
    "ModalDecomposition",
    "Mode",
    "Model",
    "ModelFileError",
    "Modes",
    "NumericalError",
    "Observability",
    "OperatingPoint",
    "PicardIterates",
    "Pose",
    "Regressor",
    "Response",
    "RigidIdentification",
    "RobodynError",
    "RobodynWarning",
    "ScalarDamping",
    "SecondOrder",
    "ShapeError",
    "SimulationStats",
    "SingularMatrixError",
    "StateFeedback",
    "StepInfo",
    "SymbolicSystem",
    "System",
    "Trajectory",
    "UnknownNameError",
    "Validity",
    "Verification",
    "__version__",
    "animate",
    "assemble",
    "base_parameters",
    "blocks",
    "classify",
    "consistent_parameters",
    "design_excitation",
    "difference",
    "existence",
    "export_c",
    "find_equilibrium",
    "forced_response",
    "identify",
    "identify_rigid",
    "integrate_configuration",
    "inverse_kinematics",
    "linearize",
    "linearize_trajectory",
    "lipschitz",
    "load",
    "load_file",
    "load_sweep",
    "lqr",
    "modal_decomposition",
    "modes",
    "picard",
    "place",
    "read_model_text",
    "regressor",
    "second_order",
    "simulate",
    "sweep",
    "validity",
    "verify",
]
