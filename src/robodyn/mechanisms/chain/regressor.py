"""A chain's inverse-dynamics regressor, compiled from its tape: tau = Y(q, q', q'') theta.

:class:`ChainRegressor` is the model contract's ``torque_regressor()`` answer (robodyn.model.protocol.TorqueRegressor)
for chains and URDF robots on the tape (robodyn.mechanisms.chain.system.ChainSystem). Its columns are the program's
``regressor_columns`` (robodyn.rigid.dynamics): each moving body's ten standard inertial parameters in its joint frame
about the frame's origin (robodyn.rigid.regressor.INERTIAL; links fixed to a body count as part of it, as in
Pinocchio), named ``<link>.<parameter>`` after the body's link, then each coordinate's joint terms,
``<joint>.armature`` (the reflected rotor inertia G^2 I_r), ``<joint>.viscous``, ``<joint>.coulomb`` and, where the
joint has them, ``<joint>.coulomb_offset`` and ``<joint>.stiffness``. Y and theta are two compiled functions of the
tape (robodyn.codegen.llvm.native): Y of the state and the accelerations, row by row over samples, theta of the
parameters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.codegen.llvm.native import native_batch
from robodyn.codegen.llvm.tape import llvm_ir, tape_data

if TYPE_CHECKING:
    from robodyn.mechanisms.chain.system import ChainSystem

__all__ = ["ChainRegressor", "chain_torque_regressor"]


class ChainRegressor:
    """A chain's regressor (robodyn.model.protocol.TorqueRegressor): ``matrices(x, qdd, p, out)`` writes Y (n, P) of
    each row of the states ``x`` (N, 2n) and accelerations ``qdd`` (N, n) into ``out`` (N, n P), and ``values(p)``
    (P,) is theta at the parameters ``p``, so that each Y ``@ values(p)`` is the inverse dynamics."""

    __slots__ = ("_inputs", "_parameters", "_rows", "_size", "bodies", "coordinates", "names")

    def __init__(self, names: tuple[str, ...], coordinates: tuple[str, ...], bodies: tuple[str, ...], rows: Any,
                 parameters: Any, size: int, inputs: int):
        self.names, self.coordinates, self.bodies = names, coordinates, bodies
        self._rows, self._parameters, self._size = rows, parameters, size
        self._inputs = np.zeros(inputs)

    def matrices(self, x: np.ndarray, qdd: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
        """Y at each row of ``x`` (N, 2n) and ``qdd`` (N, n), written row-major into ``out`` (N, n P)."""
        self._rows(0.0, x, self._inputs, p, qdd, out)

    def values(self, p: np.ndarray) -> np.ndarray:
        """theta (P,): the standard parameters and joint terms at the parameter vector ``p``."""
        out = np.empty(self._size)
        n = len(self.coordinates)
        self._parameters(0.0, np.zeros(2 * n), self._inputs, p, np.zeros(n), out)
        return out


def chain_torque_regressor(chain: ChainSystem) -> ChainRegressor:
    """The regressor of ``chain`` (see the module docstring): Y compiled row-wise (one call for many samples)."""
    program = chain._program
    links = tuple(chain.joints[i].child for i in chain.order_)
    names = tuple(f"{links[k]}.{name}" if kind == "body" else f"{chain.coordinates[k]}.{name}"
                  for kind, k, name in program.regressor_columns)
    rows = native_batch(*llvm_ir(*tape_data(program.tape, program.outputs("regressor")), optimize=True))
    parameters, size = chain._function("standard_parameters")
    return ChainRegressor(names, tuple(chain.coordinates), links, rows, parameters, size, chain.n_inputs)
