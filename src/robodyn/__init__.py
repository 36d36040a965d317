"""robodyn — robot and mechanical dynamics from equations of motion to validated linear models.

The public API::

    import robodyn
    model = robodyn.load("pendulum")            # a catalog name or a YAML model file
    model.f(0.0, {"theta": 0.1, "theta_dot": 0.0}, {"tau": 0.0})
    robodyn.classify(model).linear              # False: sin(theta)
    robodyn.simulate(model, 10.0, {"theta": 1.0})   # compiled DOPRI5 -> Trajectory
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

# Errors are imported eagerly (they are small and every module uses them); everything else is loaded
# on first use (PEP 562), so `import robodyn` stays light: numba, scipy.optimize and mpmath load only when
# the functions that need them are used.
from robodyn.base.errors import (
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
from robodyn.base.lazy import install_moved, lazy_names
from robodyn.base.version import __version__

# public name -> module that defines it
_LAZY: dict[str, str] = {
    "BaseParameters": "robodyn.identification.base_parameters",
    "BatchTrajectory": "robodyn.results.trajectory",
    "CATALOG": "robodyn.files.catalog",
    "Classification": "robodyn.analysis.classify",
    "Controllability": "robodyn.linear.controllability",
    "ConsistentParameters": "robodyn.identification.consistency",
    "ConstrainedChain": "robodyn.mechanisms.loops.constrained",
    "Diagram": "robodyn.diagrams.diagram",
    "Event": "robodyn.model.events",
    "Excitation": "robodyn.identification.excitation",
    "Existence": "robodyn.analysis.existence",
    "FloatingChain": "robodyn.mechanisms.floating.chain",
    "LTVSystem": "robodyn.linearization.ltv",
    "LagrangianSystem": "robodyn.model.kinds.lagrange",
    "LQR": "robodyn.control.design",
    "LinearSystem": "robodyn.model.kinds.linear",
    "Linearizer": "robodyn.linearization.linearizer",
    "LipschitzBound": "robodyn.analysis.existence",
    "FramePath": "robodyn.kinematics.paths",
    "IKResult": "robodyn.kinematics.ik",
    "Kinematics": "robodyn.kinematics.frames",
    "ManipulatorSystem": "robodyn.model.kinds.mechanical",
    "Margins": "robodyn.linear.margins",
    "MechanicalSystem": "robodyn.model.kinds.mechanical",
    "ModalDecomposition": "robodyn.linear.modes",
    "Mode": "robodyn.linear.modes",
    "Model": "robodyn.model.system",
    "OptimalControlProblem": "robodyn.control.optimal.problem",
    "OptimalTrajectory": "robodyn.control.optimal.result",
    "RecedingHorizon": "robodyn.control.mpc.receding",
    "MPC": "robodyn.control.mpc.controller",
    "MPCPlan": "robodyn.control.mpc.controller",
    "Modes": "robodyn.linear.modes",
    "Observability": "robodyn.linear.controllability",
    "Identification": "robodyn.identification.identify",
    "OperatingPoint": "robodyn.linearization.equilibrium",
    "Pose": "robodyn.kinematics.frames",
    "PicardIterates": "robodyn.analysis.existence",
    "Regressor": "robodyn.identification.regressor",
    "Response": "robodyn.analysis.second_order",
    "RigidIdentification": "robodyn.identification.rigid",
    "ScalarDamping": "robodyn.model.kinds.mechanical",
    "SecondOrder": "robodyn.analysis.second_order",
    "SimulationStats": "robodyn.results.trajectory",
    "StateFeedback": "robodyn.signals",
    "StepInfo": "robodyn.linear.lti",
    "SymbolicSystem": "robodyn.model.kinds.symbolic",
    "System": "robodyn.model.kinds.callables",
    "TVLQR": "robodyn.control.tracking.tvlqr",
    "TrackingFeedback": "robodyn.signals",
    "Trajectory": "robodyn.results.trajectory",
    "Validity": "robodyn.linearization.validity",
    "Verification": "robodyn.analysis.verify",
    "animate": "robodyn.kinematics.animate",
    "assemble": "robodyn.mechanisms.loops.assembly",
    "base_parameters": "robodyn.identification.base_parameters",
    "export_c": "robodyn.export.c",
    "export_fmu": "robodyn.export.fmu",
    "blocks": "robodyn.blocks",
    "classify": "robodyn.analysis.classify",
    "consistent_parameters": "robodyn.identification.consistency",
    "design_excitation": "robodyn.identification.excitation",
    "difference": "robodyn.mechanisms.floating.configuration",
    "existence": "robodyn.analysis.existence",
    "find_equilibrium": "robodyn.linearization.equilibrium",
    "forced_response": "robodyn.linear.response",
    "identify_rigid": "robodyn.identification.rigid",
    "integrate_configuration": "robodyn.mechanisms.floating.configuration",
    "inverse_kinematics": "robodyn.kinematics.ik",
    "linearize": "robodyn.linearization.linearize",
    "linearize_trajectory": "robodyn.linearization.ltv",
    "lipschitz": "robodyn.analysis.existence",
    "lqr": "robodyn.control.design",
    "load": "robodyn.files.loading",
    "load_problem": "robodyn.control.optimal.problem_file",
    "load_file": "robodyn.files.loading",
    "load_sweep": "robodyn.sweep",
    "modal_decomposition": "robodyn.linear.modes",
    "modes": "robodyn.linear.modes",
    "mpc": "robodyn.control.mpc.controller",
    "identify": "robodyn.identification.identify",
    "picard": "robodyn.analysis.existence",
    "place": "robodyn.control.design",
    "read_model_text": "robodyn.files.loading",
    "regressor": "robodyn.identification.regressor",
    "second_order": "robodyn.analysis.second_order",
    "simulate": "robodyn.integrate.simulate",
    "sweep": "robodyn.sweep",
    "tvlqr": "robodyn.control.tracking.tvlqr",
    "validity": "robodyn.linearization.validity",
    "verify": "robodyn.analysis.verify",
    "H2": "robodyn.control.robust.h2",
    "HInfinity": "robodyn.control.robust.hinf",
    "Kalman": "robodyn.control.estimation.kalman",
    "h2norm": "robodyn.linear.norms",
    "h2syn": "robodyn.control.robust.h2",
    "hinfnorm": "robodyn.linear.norms",
    "hinfsyn": "robodyn.control.robust.hinf",
    "kalman": "robodyn.control.estimation.kalman",
    "lqg": "robodyn.control.estimation.kalman",
    "mixsyn": "robodyn.control.robust.mixsyn",
    "view": "robodyn.viewer.view",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs: the same names, imported eagerly
    import robodyn.blocks as blocks
    from robodyn.analysis.classify import Classification, classify
    from robodyn.analysis.existence import Existence, LipschitzBound, PicardIterates, existence, lipschitz, picard
    from robodyn.analysis.second_order import Response, SecondOrder, second_order
    from robodyn.analysis.verify import Verification, verify
    from robodyn.control.design import LQR, lqr, place
    from robodyn.control.estimation.kalman import Kalman, kalman, lqg
    from robodyn.control.mpc.controller import MPC, MPCPlan, mpc
    from robodyn.control.mpc.receding import RecedingHorizon
    from robodyn.control.optimal.problem import OptimalControlProblem
    from robodyn.control.optimal.problem_file import load_problem
    from robodyn.control.optimal.result import OptimalTrajectory
    from robodyn.control.robust.h2 import H2, h2syn
    from robodyn.control.robust.hinf import HInfinity, hinfsyn
    from robodyn.control.robust.mixsyn import mixsyn
    from robodyn.control.tracking.tvlqr import TVLQR, tvlqr
    from robodyn.diagrams.diagram import Diagram
    from robodyn.export.c import export_c
    from robodyn.export.fmu import export_fmu
    from robodyn.files.catalog import CATALOG
    from robodyn.files.loading import load, load_file, read_model_text
    from robodyn.identification.base_parameters import BaseParameters, base_parameters
    from robodyn.identification.consistency import ConsistentParameters, consistent_parameters
    from robodyn.identification.excitation import Excitation, design_excitation
    from robodyn.identification.identify import Identification, identify
    from robodyn.identification.regressor import Regressor, regressor
    from robodyn.identification.rigid import RigidIdentification, identify_rigid
    from robodyn.integrate.simulate import simulate
    from robodyn.kinematics.animate import animate
    from robodyn.kinematics.frames import Kinematics, Pose
    from robodyn.kinematics.ik import IKResult, inverse_kinematics
    from robodyn.kinematics.paths import FramePath
    from robodyn.linear.controllability import Controllability, Observability
    from robodyn.linear.lti import StepInfo
    from robodyn.linear.margins import Margins
    from robodyn.linear.modes import ModalDecomposition, Mode, Modes, modal_decomposition, modes
    from robodyn.linear.norms import h2norm, hinfnorm
    from robodyn.linear.response import forced_response
    from robodyn.linearization.equilibrium import OperatingPoint, find_equilibrium
    from robodyn.linearization.linearize import linearize
    from robodyn.linearization.linearizer import Linearizer
    from robodyn.linearization.ltv import LTVSystem, linearize_trajectory
    from robodyn.linearization.validity import Validity, validity
    from robodyn.mechanisms.floating.chain import FloatingChain
    from robodyn.mechanisms.floating.configuration import difference, integrate_configuration
    from robodyn.mechanisms.loops.assembly import assemble
    from robodyn.mechanisms.loops.constrained import ConstrainedChain
    from robodyn.model.events import Event
    from robodyn.model.kinds.callables import System
    from robodyn.model.kinds.lagrange import LagrangianSystem
    from robodyn.model.kinds.linear import LinearSystem
    from robodyn.model.kinds.mechanical import ManipulatorSystem, MechanicalSystem, ScalarDamping
    from robodyn.model.kinds.symbolic import SymbolicSystem
    from robodyn.model.system import Model
    from robodyn.results.trajectory import BatchTrajectory, SimulationStats, Trajectory
    from robodyn.signals import StateFeedback, TrackingFeedback
    from robodyn.sweep import load_sweep, sweep
    from robodyn.viewer.view import view


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
install_moved()  # old import paths of the modules that moved (robodyn.sweep_plan, ...) keep working


#: Diagram blocks the control layer provides to diagram files: ``model:`` name -> (module, factory, the parameters
#: that are words, passed as written).
_PROVIDED: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "kalman": ("robodyn.control.estimation.blocks", "kalman", ()),
    "ekf": ("robodyn.control.estimation.blocks", "ekf", ()),
    "ukf": ("robodyn.control.estimation.blocks", "ukf", ()),
    "mpc": ("robodyn.control.mpc.from_file", "mpc_from_plant", ("method", "solver", "integrator")),
}


def _provided_loader(module: str, factory: str) -> Callable[[], Callable[..., Any]]:
    """The loader of a provided block: imports ``module`` on first use and returns its ``factory``."""

    def load() -> Callable[..., Any]:
        import importlib

        found: Callable[..., Any] = getattr(importlib.import_module(module), factory)
        return found

    return load


def _provide_blocks() -> None:
    """The estimators and the MPC are diagram blocks of the control layer: a diagram file (the files layer, below)
    finds them in robodyn.files.provided_blocks, registered here."""
    from robodyn.files.provided_blocks import provide_block

    for kind, (module, factory, text) in _PROVIDED.items():
        provide_block(kind, _provided_loader(module, factory), text)


_provide_blocks()

__all__ = [
    "CATALOG",
    "H2",
    "LQR",
    "MPC",
    "TVLQR",
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
    "HInfinity",
    "IKResult",
    "Identification",
    "InputError",
    "Kalman",
    "Kinematics",
    "LTVSystem",
    "LagrangianSystem",
    "LinearSystem",
    "Linearizer",
    "LipschitzBound",
    "MPCPlan",
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
    "OptimalControlProblem",
    "OptimalTrajectory",
    "PicardIterates",
    "Pose",
    "RecedingHorizon",
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
    "TrackingFeedback",
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
    "export_fmu",
    "find_equilibrium",
    "forced_response",
    "h2norm",
    "h2syn",
    "hinfnorm",
    "hinfsyn",
    "identify",
    "identify_rigid",
    "integrate_configuration",
    "inverse_kinematics",
    "kalman",
    "linearize",
    "linearize_trajectory",
    "lipschitz",
    "load",
    "load_file",
    "load_problem",
    "load_sweep",
    "lqg",
    "lqr",
    "mixsyn",
    "modal_decomposition",
    "modes",
    "mpc",
    "picard",
    "place",
    "read_model_text",
    "regressor",
    "second_order",
    "simulate",
    "sweep",
    "tvlqr",
    "validity",
    "verify",
    "view",
]
