"""Outputs of a chain on its tape: joint expressions and kinematic outputs, with exact C and D.

A chain's ``outputs`` map a name to an expression in the states, inputs and parameters, or to a
kinematic output ``{frame: <frame>, quantity: <quantity>}`` that expands to three outputs:

=====================  =========================================  ==========================================
quantity               outputs                                    value
=====================  =========================================  ==========================================
``position``           ``<name>_x``, ``<name>_y``, ``<name>_z``      the frame origin in the world frame (m)
``orientation``        ``<name>_roll``, ``_pitch``, ``_yaw``          R = Rz(yaw) Ry(pitch) Rx(roll) (rad)
``velocity``           ``<name>_vx``, ``_vy``, ``_vz``                the origin's velocity, world axes (m/s)
``angular_velocity``   ``<name>_wx``, ``_wy``, ``_wz``                world axes (rad/s)
=====================  =========================================  ==========================================

When a chain has a kinematic output, all its outputs are recorded on the chain's tape
(robodyn.rigid.kinematics) and compiled: y = h(x, u) for one point or a whole trajectory in one call, and
C = dh/dx, D = dh/du by forward mode on the same tape — exact: C of a position output is [Jv, 0], of a
velocity output [d(Jv q')/dq, Jv]. Orientation uses atan2 of R's entries: exact away from pitch = +-pi/2.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import sympy

from robodyn.base.errors import InputError
from robodyn.codegen.llvm.native import native_batch
from robodyn.codegen.llvm.tape import llvm_ir, tape_data, tape_source
from robodyn.model.expr import TIME
from robodyn.model.system import Vector
from robodyn.rigid.tape import Value

if TYPE_CHECKING:
    from robodyn.mechanisms.chain.system import ChainSystem

__all__ = ["QUANTITIES", "ChainOutputs", "KinematicOutput", "TapeOutputs", "placeholder", "split_outputs"]

QUANTITIES: Final = {"position": ("x", "y", "z"), "orientation": ("roll", "pitch", "yaw"),
                     "velocity": ("vx", "vy", "vz"), "angular_velocity": ("wx", "wy", "wz")}


@dataclass(frozen=True, slots=True)
class KinematicOutput:
    """Output group ``name``: ``quantity`` of ``frame`` (names ``<name>_<component>``)."""

    name: str
    frame: str
    quantity: str

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f"{self.name}_{c}" for c in QUANTITIES[self.quantity])


def split_outputs(outputs: Mapping[str, Any] | None, where: str) -> tuple[list[str], dict[str, Any],
                                                                          dict[str, KinematicOutput]]:
    """(every output name in order, expressions by name, kinematic outputs by expanded name)."""
    names: list[str] = []
    expressions: dict[str, Any] = {}
    kinematic: dict[str, KinematicOutput] = {}
    for name, value in (outputs or {}).items():
        if not isinstance(value, Mapping):
            names.append(name)
            expressions[name] = value
            continue
        if set(value) != {"frame", "quantity"} or not isinstance(value["frame"], str):
            raise InputError(f"{where}: output {name!r} must be an expression or {{frame: <frame>, quantity: "
                             f"{'|'.join(QUANTITIES)}}}, got {dict(value)!r}", key="outputs")
        if value["quantity"] not in QUANTITIES:
            raise InputError(f"{where}: output {name!r}: unknown quantity {value['quantity']!r}: use one of "
                             f"{', '.join(QUANTITIES)}", key="outputs")
        group = KinematicOutput(str(name), value["frame"], value["quantity"])
        names += group.names
        kinematic.update(dict.fromkeys(group.names, group))
    return names, expressions, kinematic


def placeholder(group: KinematicOutput, component: int, model: ChainSystem) -> Any:
    """A sympy stand-in for a kinematic output, for printing: ``x[tool0](q1, ..., qn)``."""
    label = f"{QUANTITIES[group.quantity][component]}[{group.frame}]"
    arguments = model.x_symbols if group.quantity in ("velocity", "angular_velocity") else model.q_symbols
    return sympy.Function(label)(*arguments)


class ChainOutputs:
    """A chain's outputs recorded on its tape, with their Jacobians, compiled for batches of points."""

    def __init__(self, model: ChainSystem):
        self.model = model
        frames = model.kinematics()
        view = model.tape_view()
        program = frames.program
        self.tape = program.tape
        n = model.n_coordinates
        values: list[Value] = []
        exact_rows: dict[int, list[Value]] = {}  # output -> its C row, taken from the frame Jacobian itself
        for name, expr in zip(model.outputs, model.h_expr):
            group = model.kinematic_outputs.get(name)
            if group is None:
                values.append(view.value(expr))
                continue
            component = group.names.index(name)
            spec = frames.spec(group.frame)
            if group.quantity == "position":
                jacobian = program.outputs(spec, "jacobian")
                exact_rows[len(values)] = jacobian[component * n: (component + 1) * n]
                values.append(program.outputs(spec, "pose")[9 + component])
            elif group.quantity == "orientation":
                values.append(_rpy(program.outputs(spec, "pose"), component))
            else:
                line = component + (0 if group.quantity == "velocity" else 3)
                jacobian = program.outputs(spec, "jacobian")
                total = jacobian[line * n] * program.qd[0]
                for j in range(1, n):
                    total = total + jacobian[line * n + j] * program.qd[j]
                values.append(total)
        self.values = values
        leaves = [*view.program.x, *view.program.u]
        rows = self.tape.derive(values, leaves)
        for k, row in exact_rows.items():  # d(origin)/dq is Jv (the same nodes: C equals J bit for bit)
            rows[k] = [*row, *rows[k][n:]]
        self.derivatives = [d for row in rows for d in row]
        self._compiled: dict[str, tuple[Any, int]] = {}

    def _parameter_derivatives(self) -> list[Value]:
        """dh/dp ``(n_outputs, n_params)`` row-major, by forward mode over the tape's parameter leaves."""
        rows = self.tape.derive(self.values, self.tape.leaves(3, len(self.model.parameters)))
        return [d for row in rows for d in row]

    def _function(self, which: str) -> tuple[Any, int]:
        if which not in self._compiled:
            outputs = {"h": lambda: self.values, "jacobians": lambda: self.derivatives,
                       "parameters": self._parameter_derivatives}[which]()
            text, symbol = llvm_ir(*tape_data(self.tape, outputs), optimize=True)
            self._compiled[which] = (native_batch(text, symbol), len(outputs))
        return self._compiled[which]

    def evaluate(self, which: str, t: np.ndarray, x: np.ndarray, u: np.ndarray, p: Any) -> np.ndarray:
        """``h`` ``(T, n_outputs)``, the Jacobians ``(T, n_outputs * (n_states + n_inputs))`` or dh/dp (``parameters``:
        ``(T, n_outputs * n_params)``) at the rows of
        t ``(T,)``, x ``(T, n)``, u ``(T, m)`` and p (one vector, or per-row columns as
        robodyn.model.system.h_batch gives them)."""
        function, size = self._function(which)
        rows = x.shape[0]
        if isinstance(p, np.ndarray):
            parameters = p
        else:
            parameters = np.column_stack([np.broadcast_to(np.asarray(c, dtype=float), (rows,)) for c in p])
        out = np.empty((rows, size))
        x, u = np.ascontiguousarray(x, dtype=float), np.ascontiguousarray(u, dtype=float)
        empty = np.zeros(0)
        if self.time_dependent:  # t is one scalar argument of the compiled function: one row at a time
            for k in range(rows):
                row = parameters[k] if parameters.ndim == 2 else parameters
                function(float(t[k]), x[k], u[k], row, empty, out[k:k + 1])
            return out
        function(0.0, x, u, parameters, empty, out)
        return out

    @property
    def time_dependent(self) -> bool:
        return any(e.has(TIME) for e in self.model.h_expr)


def _rpy(pose: list[Value], component: int) -> Value:
    """roll, pitch or yaw of R = Rz(yaw) Ry(pitch) Rx(roll) from R's entries (row-major in ``pose``)."""
    r = pose[:9]
    if component == 0:
        return _atan2(r[7], r[8])
    if component == 1:
        return _atan2(-r[6], (r[0] * r[0] + r[3] * r[3]).sqrt())
    return _atan2(r[3], r[0])


def _atan2(y: Value, x: Value) -> Value:
    return y.tape.binary("atan2", y, x)


class TapeOutputs:
    """Mixin for :class:`robodyn.mechanisms.chain.system.ChainSystem`: when an output is kinematic, h, its
    trajectories and
    C, D come from :class:`ChainOutputs`; otherwise the symbolic model's expressions serve."""

    kinematic_outputs: dict[str, KinematicOutput]
    n_outputs: int
    n_states: int
    n_inputs: int

    @property
    def _outputs(self) -> ChainOutputs:
        memo = self.memo()  # type: ignore[attr-defined]
        if "outputs" not in memo:
            memo["outputs"] = ChainOutputs(self)  # type: ignore[arg-type]
        return memo["outputs"]

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        if not self.kinematic_outputs:
            return super()._h(t, x, u, p)  # type: ignore[misc]
        return self._outputs.evaluate("h", np.array([t]), x[None], u[None], p)[0]

    def h_many(self, t: np.ndarray, x: np.ndarray, u: np.ndarray, p: Any) -> np.ndarray:
        if not self.kinematic_outputs:
            return super().h_many(t, x, u, p)  # type: ignore[misc]
        return self._outputs.evaluate("h", np.broadcast_to(t, (x.shape[0],)), x, u, p)

    def output_jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        """Exact C = dh/dx and D = dh/du; from the tape's forward mode when an output is kinematic."""
        if not self.kinematic_outputs:
            return super().output_jacobians_raw(t, x, u, p)  # type: ignore[misc]
        flat = self._outputs.evaluate("jacobians", np.array([t]), x[None], u[None], p)[0]
        both = flat.reshape(self.n_outputs, self.n_states + self.n_inputs)
        return both[:, : self.n_states], both[:, self.n_states:]

    def output_parameter_jacobian_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray | None:
        """Exact dh/dp; from the tape's forward mode when an output is kinematic."""
        if not self.kinematic_outputs:
            return super().output_parameter_jacobian_raw(t, x, u, p)  # type: ignore[misc]
        if not p.size:
            return np.zeros((self.n_outputs, 0))
        flat = self._outputs.evaluate("parameters", np.array([t]), x[None], u[None], p)[0]
        return flat.reshape(self.n_outputs, p.size)

    def kernel_output_source(self) -> str:
        if not self.kinematic_outputs:
            return super().kernel_output_source()  # type: ignore[misc]
        return "\n".join([tape_source("_chain_out", self._outputs.tape, self._outputs.values, "hjit"), "",
                          "@jit", "def out_fn(t, x, u, p, out):", "    _chain_out(t, x, u, p, x, out)", ""])

