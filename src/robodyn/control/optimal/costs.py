"""The cost of an optimal control problem: running terms l(t, x, u) (integrated over time) and terminal terms
l_T(x_N), each with exact first and second derivatives.

The terms of a problem's ``costs`` mapping (the keys of a problem file, docs/control.md):

- ``state``: 1/2 (x - r(t))' Q (x - r(t)); ``input``: 1/2 (u - r(t))' R (u - r(t)) (R positive definite);
  ``terminal``: 1/2 (x_N - r)' Q_T (x_N - r). Weights per name (the diagonal) or full matrices; references as
  :func:`~robodyn.control.optimal.references.reference` reads them.
- ``frame``: 1/2 w |p(q) - p*|^2 for the origin of a frame of the model's kinematics (chains, URDF robots,
  Lagrangian models with points), plus 1/2 w_R |log(R*^T R(q))|^2 when an ``orientation`` (roll, pitch, yaw) is
  given (Crocoddyl's ResidualModelFrameTranslation and ResidualModelFrameRotation); running, or at the final knot
  only with ``terminal: true``. The gradient is exact (the frame's geometric Jacobian, and for the orientation
  the inverse right Jacobian of SO(3), Jlog3); the Hessian is the Gauss–Newton part w J^T J (the residual's own
  second derivatives are dropped, as Crocoddyl does): exact at the target, positive semidefinite everywhere.
- ``running``: any expression of the states, inputs, ``t`` and the model's parameters in the model-file grammar,
  with sympy's exact gradient and Hessian (:mod:`~robodyn.control.optimal.expressions`).

Reference: J. Solà, J. Deray, D. Atchuthan, "A micro Lie theory for state estimation in robotics",
arXiv:1812.01537, 2018 (eq. 144: the inverse right Jacobian of SO(3)); C. Mastalli et al., "Crocoddyl: an
efficient and versatile framework for multi-contact optimal control", ICRA 2020.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError
from robodyn.control.optimal.expressions import CompiledExpressions, compile_expressions
from robodyn.control.optimal.protocol import BatchCostDerivatives, CostDerivatives, TerminalDerivatives
from robodyn.control.optimal.references import Reference, by_name, number, reference, weights
from robodyn.kinematics.rotations import rotation_error, rotation_from_rpy, skew

if TYPE_CHECKING:
    from robodyn.kinematics.frames import Kinematics
    from robodyn.model.protocol import ModelContract

__all__ = ["COST_KEYS", "Costs", "FrameTarget", "Quadratic", "build_costs", "jlog3"]

Array = NDArray[np.float64]

COST_KEYS: Final = ("state", "input", "terminal", "frame", "running")
_QUADRATIC_KEYS: Final = ("weights", "reference")
_FRAME_KEYS: Final = ("name", "position", "orientation", "weight", "orientation_weight", "terminal")
_SMALL_ANGLE: Final = 1e-4  # Below this angle Jlog3 uses its series (error ~ angle^4 / 720 < 1e-18).


@dataclass(frozen=True, slots=True, eq=False)
class Quadratic:
    """1/2 (z - r(t))' W (z - r(t)) on the states (``on`` = "x") or the inputs ("u")."""

    on: str
    W: Array
    reference: Reference

    def value_gradient(self, t: float, z: Array) -> tuple[float, Array]:
        d = z - self.reference.at(t)
        g = self.W @ d
        return 0.5 * float(d @ g), g

    def values_gradients(self, t: Array, Z: Array) -> tuple[Array, Array]:
        """(P,) the values and (P, k) the gradients at the times t (P,) and points Z (P, k)."""
        D = Z - self.reference.at_points(t)
        G = D @ self.W.T
        return 0.5 * np.einsum("pi,pi->p", D, G), G


def jlog3(r: Array) -> Array:
    """(3, 3) the inverse right Jacobian of SO(3) at the rotation vector r: d log(R0^T R) = Jlog3(r) w for a
    rotation R = R0 exp([r]) moved by the local angular velocity w (Solà et al. 2018, eq. 144)."""
    angle = float(np.linalg.norm(r))
    K = skew(r)
    if angle < _SMALL_ANGLE:
        c = 1.0 / 12.0 + angle**2 / 720.0
    else:
        c = 1.0 / angle**2 - (1.0 + math.cos(angle)) / (2.0 * angle * math.sin(angle))
    return np.eye(3) + 0.5 * K + c * (K @ K)


@dataclass(frozen=True, slots=True, eq=False)
class FrameTarget:
    """1/2 w |p(q) - p*|^2 (+ 1/2 w_R |log(R*^T R(q))|^2) for a frame; ``index`` : (nq,) the states that are the
    kinematics' coordinates (see the module docstring)."""

    kinematics: Kinematics
    frame: str
    position: Array
    weight: float
    rotation: Array | None
    orientation_weight: float
    terminal: bool
    index: NDArray[np.intp]
    p: Array

    def value_gradient_gn(self, x: Array) -> tuple[float, Array, Array]:
        """(value, gradient (nq,), Gauss–Newton Hessian (nq, nq)) in the coordinates ``x[index]``."""
        q = x[self.index]
        pose = self.kinematics.pose(q, self.frame, params=self.p)
        J = self.kinematics.jacobian(q, self.frame, params=self.p)
        residual = pose.position - self.position
        value = 0.5 * self.weight * float(residual @ residual)
        gradient = self.weight * (J[:3].T @ residual)
        hessian = self.weight * (J[:3].T @ J[:3])
        if self.rotation is not None:
            r = rotation_error(np.eye(3), self.rotation.T @ pose.rotation)  # log(R*^T R)
            Jr = jlog3(r) @ (pose.rotation.T @ J[3:])  # local angular velocity -> d r
            value += 0.5 * self.orientation_weight * float(r @ r)
            gradient = gradient + self.orientation_weight * (Jr.T @ r)
            hessian = hessian + self.orientation_weight * (Jr.T @ Jr)
        return value, gradient, hessian


@dataclass(frozen=True, slots=True, eq=False)
class Costs:
    """The running and terminal terms of a problem over n states and m inputs."""

    n: int
    m: int
    state: Quadratic | None = None
    input: Quadratic | None = None
    terminal_term: Quadratic | None = None
    frames: tuple[FrameTarget, ...] = ()
    expression: CompiledExpressions | None = None
    names: tuple[str, ...] = field(default=())

    def running(self, t: float, x: Array, u: Array) -> float:
        """l(t, x, u)."""
        total = 0.0
        if self.state is not None:
            total += self.state.value_gradient(t, x)[0]
        if self.input is not None:
            total += self.input.value_gradient(t, u)[0]
        for frame in self.frames:
            if not frame.terminal:
                total += frame.value_gradient_gn(x)[0]
        if self.expression is not None:
            total += float(self.expression.values(t, x, u)[0])
        return total

    def running_derivatives(self, t: float, x: Array, u: Array) -> CostDerivatives:
        """l and its derivatives (the frame terms' Hessian: Gauss–Newton)."""
        n, m = self.n, self.m
        total, lx, lu = 0.0, np.zeros(n), np.zeros(m)
        lxx, luu, lux = np.zeros((n, n)), np.zeros((m, m)), np.zeros((m, n))
        if self.state is not None:
            value, g = self.state.value_gradient(t, x)
            total, lx, lxx = total + value, lx + g, lxx + self.state.W
        if self.input is not None:
            value, g = self.input.value_gradient(t, u)
            total, lu, luu = total + value, lu + g, luu + self.input.W
        for frame in self.frames:
            if not frame.terminal:
                total += self._add_frame(frame, x, lx, lxx)
        if self.expression is not None:
            total += float(self.expression.values(t, x, u)[0])
            ex, eu = self.expression.jacobians(t, x, u)
            H = self.expression.hessian(t, x, u)
            lx, lu = lx + ex[0], lu + eu[0]
            lxx, luu, lux = lxx + H[:n, :n], luu + H[n:, n:], lux + H[n:, :n]
        return CostDerivatives(total, lx, lu, lxx, luu, lux)

    def running_points(self, t: Array, X: Array, U: Array) -> Array:
        """(P,) l at the points t (P,), X (P, n), U (P, m)."""
        total = np.zeros(len(t))
        if self.state is not None:
            total += self.state.values_gradients(t, X)[0]
        if self.input is not None:
            total += self.input.values_gradients(t, U)[0]
        for frame in self.frames:
            if not frame.terminal:
                total += [frame.value_gradient_gn(x)[0] for x in X]
        if self.expression is not None:
            total += self.expression.values_points(t, X, U)[:, 0]
        return total

    def running_derivatives_points(self, t: Array, X: Array, U: Array) -> BatchCostDerivatives:
        """l and its derivatives at P points (row k: :meth:`running_derivatives` at point k)."""
        P, n, m = len(t), self.n, self.m
        total, lx, lu = np.zeros(P), np.zeros((P, n)), np.zeros((P, m))
        lxx, luu, lux = np.zeros((P, n, n)), np.zeros((P, m, m)), np.zeros((P, m, n))
        if self.state is not None:
            value, g = self.state.values_gradients(t, X)
            total, lx, lxx = total + value, lx + g, lxx + self.state.W
        if self.input is not None:
            value, g = self.input.values_gradients(t, U)
            total, lu, luu = total + value, lu + g, luu + self.input.W
        for frame in self.frames:
            if not frame.terminal:
                for k in range(P):
                    total[k] += self._add_frame(frame, X[k], lx[k], lxx[k])
        if self.expression is not None:
            total = total + self.expression.values_points(t, X, U)[:, 0]
            ex, eu = self.expression.jacobians_points(t, X, U)
            H = self.expression.hessian_points(t, X, U)
            lx, lu = lx + ex[:, 0], lu + eu[:, 0]
            lxx, luu, lux = lxx + H[:, :n, :n], luu + H[:, n:, n:], lux + H[:, n:, :n]
        return BatchCostDerivatives(total, lx, lu, lxx, luu, lux)

    def terminal(self, x: Array) -> float:
        """l_T(x)."""
        total = 0.0 if self.terminal_term is None else self.terminal_term.value_gradient(0.0, x)[0]
        return total + sum(frame.value_gradient_gn(x)[0] for frame in self.frames if frame.terminal)

    def terminal_derivatives(self, x: Array) -> TerminalDerivatives:
        """l_T and its derivatives."""
        total, lx, lxx = 0.0, np.zeros(self.n), np.zeros((self.n, self.n))
        if self.terminal_term is not None:
            total, lx = self.terminal_term.value_gradient(0.0, x)
            lxx = lxx + self.terminal_term.W
        for frame in self.frames:
            if frame.terminal:
                total += self._add_frame(frame, x, lx, lxx)
        return TerminalDerivatives(total, lx, lxx)

    @staticmethod
    def _add_frame(frame: FrameTarget, x: Array, lx: Array, lxx: Array) -> float:
        value, g, H = frame.value_gradient_gn(x)
        lx[frame.index] += g
        lxx[np.ix_(frame.index, frame.index)] += H
        return value


def _quadratic(spec: Any, on: str, names: Sequence[str], what: str, where: str, folder: Path,
               strict: bool) -> Quadratic:
    if not isinstance(spec, Mapping):
        raise InputError(f"{where}: expected a mapping with weights (and a reference), got {spec!r:.60}")
    by_name(spec, _QUADRATIC_KEYS, "key", where)
    if "weights" not in spec:
        raise InputError(f"{where}: missing 'weights': give {{name: weight}} or a matrix")
    W = weights(spec["weights"], names, what, f"{where}.weights", strict=strict)
    return Quadratic(on, W, reference(spec.get("reference"), names, what, f"{where}.reference", folder))


def _frame(spec: Any, model: ModelContract, p: Array, where: str) -> FrameTarget:
    from robodyn.kinematics.frames import kinematics

    if not isinstance(spec, Mapping):
        raise InputError(f"{where}: expected a mapping {{name, position, weight, ...}}, got {spec!r:.60}")
    by_name(spec, _FRAME_KEYS, "key", where)
    for key in ("name", "position"):
        if key not in spec:
            raise InputError(f"{where}: missing {key!r}: a frame target names the frame and its position [x, y, z]")
    tree = kinematics(model)
    frame = tree.frame_name(spec["name"])
    missing = [c for c in tree.coordinates if c not in model.states]
    if missing:
        raise InputError(f"{where}: the coordinates {', '.join(missing)} of the frames are not states of "
                         f"{model.name!r}: a frame target needs a robot whose coordinates are its states")
    index = np.array([model.states.index(c) for c in tree.coordinates], dtype=np.intp)
    position = _vector(spec["position"], 3, f"{where}.position")
    weight = number(spec.get("weight", 1.0), f"{where}.weight")
    rpy = spec.get("orientation")
    rotation = None if rpy is None else rotation_from_rpy(_vector(rpy, 3, f"{where}.orientation"))
    w_rotation = number(spec.get("orientation_weight", weight), f"{where}.orientation_weight")
    if weight < 0 or w_rotation < 0:
        raise InputError(f"{where}: weights must be >= 0, got {weight} and {w_rotation}")
    terminal = spec.get("terminal", False)
    if not isinstance(terminal, bool):
        raise InputError(f"{where}.terminal: expected true or false, got {terminal!r:.40}")
    return FrameTarget(tree, frame, position, weight, rotation, w_rotation, terminal, index, p)


def _vector(value: Any, size: int, where: str) -> Array:
    if isinstance(value, str) or not isinstance(value, Sequence | np.ndarray) or len(value) != size:
        raise InputError(f"{where}: expected a list of {size} numbers, got {value!r:.60}")
    return np.array([number(v, f"{where}[{k}]") for k, v in enumerate(value)])


def build_costs(spec: Any, model: ModelContract, p: Array, folder: Path, where: str = "costs") -> Costs:
    """The :class:`Costs` of a ``costs`` mapping (see the module docstring) for ``model`` at the parameters
    ``p`` (references read relative to ``folder``). InputError / UnknownNameError naming the key."""
    if spec is None:
        spec = {}
    given = by_name(spec, COST_KEYS, "cost term", where)
    states, inputs = tuple(model.states), tuple(model.inputs)
    terms: dict[str, Any] = {}
    if "state" in given:
        terms["state"] = _quadratic(given["state"], "x", states, "state", f"{where}.state", folder, False)
    if "input" in given:
        terms["input"] = _quadratic(given["input"], "u", inputs, "input", f"{where}.input", folder, True)
    if "terminal" in given:
        terms["terminal_term"] = _quadratic(given["terminal"], "x", states, "state", f"{where}.terminal", folder,
                                            False)
    if "frame" in given:
        specs = given["frame"] if isinstance(given["frame"], list) else [given["frame"]]
        terms["frames"] = tuple(_frame(s, model, p, f"{where}.frame" + (f"[{k}]" if len(specs) > 1 else ""))
                                for k, s in enumerate(specs))
    if "running" in given:
        parameters = dict(zip(model.parameters, p.tolist(), strict=True))
        terms["expression"] = compile_expressions([given["running"]], states, inputs, parameters,
                                                  where=f"{where}.running", second=True)
    return Costs(len(states), len(inputs), names=tuple(given), **terms)
