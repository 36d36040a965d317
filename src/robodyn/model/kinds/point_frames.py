"""Named points of a Lagrangian model as frames: forward kinematics from the user's expressions.

A ``kind: lagrangian`` model may name points by their position in the world frame, in the coordinates and
parameters — ``points: {bob: [l*sin(theta), 0, -l*cos(theta)]}`` (two entries for a planar model: z = 0).
Each point is a frame without orientation (R = I, no angular rows): its Jacobian is d p/dq and its J'q' is
(d(J q')/dq) q', both differentiated by sympy, and every function is evaluated for a whole batch of
states at once (numpy over the columns). For drawing, each point hangs from the one declared before it
(the first from the base): a chain of links through the points in order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy

from robodyn.base.errors import InputError, UnknownNameError
from robodyn.codegen.printer import numeric_form, numpy_printer

if TYPE_CHECKING:
    from robodyn.model.kinds.symbolic import SymbolicModel

__all__ = ["PointFrames", "point_expressions"]


def point_expressions(model: SymbolicModel, points: Mapping[str, Any] | None) -> dict[str, tuple[Any, ...]]:
    """``{name: (x, y, z)}`` sympy expressions in the coordinates and parameters (errors name the point)."""
    n = len(model.x_symbols) // 2
    allowed = (*model.x_symbols[:n], *model.p_symbols)
    result: dict[str, tuple[Any, ...]] = {}
    for name, value in (points or {}).items():
        if not isinstance(value, Sequence) or isinstance(value, str) or len(value) not in (2, 3):
            raise InputError(f"model {model.name!r}: point {name!r} must be [x, y] or [x, y, z] (expressions in the "
                             f"coordinates and parameters), got {value!r}", key="points")
        entries = [model.expression(v, f"points.{name}[{i}]", allowed) for i, v in enumerate(value)]
        result[str(name)] = tuple(entries) if len(entries) == 3 else (*entries, sympy.Integer(0))
    return result


class PointFrames:
    """The named points of a symbolic second-order model as frames (the model's ``kinematics()``)."""

    def __init__(self, model: SymbolicModel, points: Mapping[str, tuple[Any, ...]]):
        self.model = model
        self.frames = tuple(points)
        self.parents: dict[str, str | None] = {name: (self.frames[k - 1] if k else None)
                                               for k, name in enumerate(self.frames)}
        self.body_parents = tuple(range(-1, len(self.frames) - 1))
        n = len(model.x_symbols) // 2
        q, qd = model.x_symbols[:n], model.x_symbols[n:]
        self._n = n
        self.n_configuration = self.n_velocity = n  # one velocity per coordinate
        self._planar = all(p[2] == 0 for p in points.values())  # every point written [x, y]: y is up
        self._position = {name: sympy.Matrix(p) for name, p in points.items()}
        self._jacobian = {name: p.jacobian(q) for name, p in self._position.items()}
        self._bias = {name: (J * sympy.Matrix(qd)).jacobian(q) * sympy.Matrix(qd) for name, J in self._jacobian.items()}
        self._functions: dict[tuple[str | None, str], Callable[..., Any]] = {}

    def _function(self, frame: str | None, quantity: str) -> Callable[..., Any]:
        key = (frame, quantity)
        if key not in self._functions:
            if quantity == "origins":
                exprs = [e for name in self.frames for e in self._position[name]]
            elif frame not in self._position:
                raise UnknownNameError(f"model {self.model.name!r} has no frame {frame!r}: its frames are "
                                       f"{', '.join(self.frames)}")
            elif quantity == "pose":
                exprs = [*(sympy.Integer(int(r == c)) for r in range(3) for c in range(3)), *self._position[frame]]
            elif quantity == "jacobian":
                exprs = [*self._jacobian[frame], *([sympy.Integer(0)] * (3 * self._n))]
            elif quantity == "bias":
                exprs = [*self._bias[frame], sympy.Integer(0), sympy.Integer(0), sympy.Integer(0)]
            else:
                raise KeyError(f"no kinematic quantity {quantity!r}")
            model = self.model
            self._functions[key] = sympy.lambdify(
                (model.t_symbol, model.x_symbols, model.p_symbols), [numeric_form(e) for e in exprs],
                modules="numpy", cse=True, printer=numpy_printer(), dummify=True)
        return self._functions[key]

    def up(self, p: np.ndarray) -> np.ndarray:
        """The world direction opposite to gravity ``(3,)``: +y for points written [x, y] (x to the right, y up),
        +z for points in space."""
        return np.array([0.0, 1.0, 0.0]) if self._planar else np.array([0.0, 0.0, 1.0])

    def evaluate(self, quantity: str, frame: str | None, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        """``quantity`` of ``frame`` at the states ``x`` ``(N, 2n)``: ``(N, size)`` (robodyn.model.protocol)."""
        columns = self._function(frame, quantity)(0.0, x.T, p)
        rows = x.shape[0]
        return np.stack([np.broadcast_to(np.asarray(c, dtype=float), (rows,)) for c in columns], axis=1)
