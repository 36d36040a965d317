"""A chain's functions for export (robodyn.model.exported.ExportedFunctions), all on the chain's own tape.

f is the forward dynamics the kernels integrate; h and its C, D the outputs' tape (robodyn.mechanisms.chain.outputs);
A and B the manipulator formula with the solves on the tape (robodyn.rigid.dynamics ``solved_jacobians``, exact);
M, inverse dynamics (with the joint terms), the moving links' centre of mass and every frame's pose and Jacobian
(robodyn.rigid.kinematics: linear rows first, world axes at the frame, as ``robodyn fk``); forward dynamics from
generalized forces tau (the tape's fourth argument) as q'' = M^-1 (tau - c) through M's leaves-first factor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from robodyn.model.exported import ExportedFunctions
from robodyn.rigid.tape import Value

if TYPE_CHECKING:
    from robodyn.mechanisms.chain.system import ChainSystem

__all__ = ["chain_exported_functions"]


def chain_exported_functions(chain: ChainSystem) -> ExportedFunctions:
    """The chain's f, h, linearize, mass, rnea, aba, com and frames on its tape."""
    program = chain._program
    outputs = chain._outputs
    n, m = chain.n_states, chain.n_inputs
    rows = [outputs.derivatives[k * (n + m): (k + 1) * (n + m)] for k in range(chain.n_outputs)]
    C = [e for row in rows for e in row[:n]]
    D = [e for row in rows for e in row[n:]]
    tau = program.a  # the fourth argument: generalized forces for aba, accelerations for rnea
    aba = program.tree.solve([f - c for f, c in zip(tau, program.bias)])
    frames = chain.kinematics()
    kinematics = frames.program
    poses = {}
    for frame in frames.frames:
        spec = frames.spec(frame)
        pose = kinematics.outputs(spec, "pose")
        poses[frame] = [*pose[9:12], *pose[:9], *kinematics.outputs(spec, "jacobian")]
    functions = {"f": list(program.outputs("rhs")), "h": list(outputs.values),
                 "linearize": [*program.outputs("solved_jacobians"), *C, *D],
                 "mass": list(program.outputs("mass")), "rnea": list(program.outputs("inverse")), "aba": aba,
                 "com": _centre_of_mass(chain)}
    return ExportedFunctions(program.tape, functions, poses, tuple(chain.coordinates))


def _centre_of_mass(chain: ChainSystem) -> list[Value]:
    """The centre of mass of the moving links (world frame, 3), the tape's per-body centres weighted by their
    masses: the links fixed to the world do not move and are left out, as Pinocchio's ``centerOfMass`` of a
    fixed-base model leaves out its universe."""
    program = chain._program
    centres = program.outputs("com")
    masses = [body.mass for body in program.bodies]
    total = sum(masses[1:], masses[0])
    return [sum((m * centres[3 * k + i] for k, m in enumerate(masses) if k), masses[0] * centres[i]) / total
            for i in range(3)]
