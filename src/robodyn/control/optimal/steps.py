"""The discretized dynamics x[k+1] = F(x[k], u[k]) of a problem and their exact Jacobians through the step.

The DDP family works on a discrete-time system: the input is held over each interval [t_k, t_k + dt] with
dt = horizon / knots, and one step of an integration rule maps (x_k, u_k) to x_{k+1}. The Jacobians
Fx = dF/dx (n, n) and Fu = dF/du (n, m) are the chain rule through the rule's stages on the problem's exact
f_jacobians (never differences), so the DDP's backward pass sees the derivative of the very map the forward
rollout applies.

Rules (:data:`STEPS`, one entry per rule; a new rule is one class and one entry):

- ``euler``: explicit Euler x+ = x + dt f on first-order models; on mechanical ones (state (q, v), q' = v,
  ``problem.mechanical`` = nq > 0) the semi-implicit step v+ = v + dt a(q, v, u), q+ = q + dt v+, as Crocoddyl's
  ``IntegratedActionModelEuler`` (Mastalli et al. 2020, ICRA).
- ``rk4``: the classic fourth-order Runge-Kutta step with u constant over the interval, as Crocoddyl's
  ``IntegratedActionModelRK`` with RK4 (Hairer, Norsett, Wanner, *Solving ODEs I*, table II.1.2).
- ``zoh``: the exact zero-order hold of a linear time-invariant model (problem.linear only),
  x+ = e^{A dt} x + Gamma u + gamma with the matrix exponential of Van Loan (1978), IEEE TAC 23(3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Protocol

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError, UnknownNameError
from robodyn.control.optimal.protocol import TranscribableProblem
from robodyn.linear.exact import exact_discretization

__all__ = ["EULER", "RK4", "SEMI_IMPLICIT", "STEPS", "ZOH", "DiscreteStep", "EulerStep", "RK4Step",
           "SemiImplicitEulerStep", "ZeroOrderHoldStep", "discretize"]

Array = NDArray[np.float64]


class DiscreteStep(Protocol):
    """One step of a rule on a problem: ``advance`` gives F(t, x, u) (n,), ``linearize`` gives (F, Fx (n, n),
    Fu (n, m)) at the same point, ``linearize_points`` the same at N points at once (t (N,), X (N, n), U (N, m):
    (F (N, n), Fx (N, n, n), Fu (N, n, m)), each stage of the rule one batched call of the problem across the
    points); ``dt`` is the step length; ``rule`` the number of the rule in the compiled rollout
    (:data:`EULER`, :data:`SEMI_IMPLICIT`, :data:`RK4`, :data:`ZOH`) and ``zoh`` (n, n + m + 1)
    [Phi | Gamma | gamma] for the zero-order hold (an empty array for the others)."""

    @property
    def dt(self) -> float: ...
    @property
    def rule(self) -> int: ...
    @property
    def zoh(self) -> Array: ...
    def advance(self, t: float, x: Array, u: Array) -> Array: ...
    def linearize(self, t: float, x: Array, u: Array) -> tuple[Array, Array, Array]: ...
    def linearize_points(self, t: Array, X: Array, U: Array) -> tuple[Array, Array, Array]: ...


_NO_ZOH = np.zeros((0, 0))
#: The rules' numbers in the compiled rollout (robodyn.control.optimal.batch.kernels).
EULER: Final = 0
SEMI_IMPLICIT: Final = 1
RK4: Final = 2
ZOH: Final = 3


class EulerStep:
    """Explicit Euler x+ = x + dt f(t, x, u); Fx = I + dt A, Fu = dt B."""

    __slots__ = ("_eye", "_problem", "dt")
    rule = EULER
    zoh = _NO_ZOH

    def __init__(self, problem: TranscribableProblem, dt: float) -> None:
        self._problem, self.dt = problem, dt
        self._eye = np.eye(len(problem.states))

    def advance(self, t: float, x: Array, u: Array) -> Array:
        return np.asarray(x + self.dt * self._problem.f(t, x, u), dtype=float)

    def linearize(self, t: float, x: Array, u: Array) -> tuple[Array, Array, Array]:
        A, B = self._problem.f_jacobians(t, x, u)
        return self.advance(t, x, u), self._eye + self.dt * A, self.dt * B

    def linearize_points(self, t: Array, X: Array, U: Array) -> tuple[Array, Array, Array]:
        A, B = self._problem.f_jacobians_points(t, X, U)
        return X + self.dt * self._problem.f_points(t, X, U), self._eye + self.dt * A, self.dt * B


class SemiImplicitEulerStep:
    """Semi-implicit Euler on a state (q, v) with q' = v: v+ = v + dt a, q+ = q + dt v+ (a the last nq rows of f).

    Fx = [[I + dt dv+/dq ... ]]: with Dv = [0 I] + dt A_v (the rows of v+), the rows of q+ are [I 0] + dt Dv;
    Fu has dt B_v in the v rows and dt^2 B_v in the q rows.
    """

    __slots__ = ("_nq", "_problem", "_shift", "dt")
    rule = SEMI_IMPLICIT
    zoh = _NO_ZOH

    def __init__(self, problem: TranscribableProblem, dt: float) -> None:
        self._problem, self.dt, self._nq = problem, dt, problem.mechanical
        n = len(problem.states)
        if n != 2 * self._nq:
            raise InputError(f"a mechanical problem with nq = {self._nq} needs 2 nq states, it has {n}: "
                             "set mechanical to 0 for a first-order model")
        self._shift = np.eye(n)

    def advance(self, t: float, x: Array, u: Array) -> Array:
        nq, dt = self._nq, self.dt
        v_next = x[nq:] + dt * np.asarray(self._problem.f(t, x, u))[nq:]
        return np.concatenate((x[:nq] + dt * v_next, v_next))

    def linearize(self, t: float, x: Array, u: Array) -> tuple[Array, Array, Array]:
        nq, dt = self._nq, self.dt
        A, B = self._problem.f_jacobians(t, x, u)
        a = np.asarray(self._problem.f(t, x, u))[nq:]
        v_next = x[nq:] + dt * a
        Fx = np.empty_like(self._shift)
        Fu = np.empty((2 * nq, B.shape[1]))
        Fx[nq:] = self._shift[nq:] + dt * A[nq:]
        Fu[nq:] = dt * B[nq:]
        Fx[:nq] = self._shift[:nq] + dt * Fx[nq:]
        Fu[:nq] = dt * Fu[nq:]
        return np.concatenate((x[:nq] + dt * v_next, v_next)), Fx, Fu

    def linearize_points(self, t: Array, X: Array, U: Array) -> tuple[Array, Array, Array]:
        nq, dt = self._nq, self.dt
        A, B = self._problem.f_jacobians_points(t, X, U)
        a = self._problem.f_points(t, X, U)[:, nq:]
        v_next = X[:, nq:] + dt * a
        Fx = np.empty((len(t), *self._shift.shape))
        Fu = np.empty((len(t), 2 * nq, B.shape[2]))
        Fx[:, nq:] = self._shift[nq:] + dt * A[:, nq:]
        Fu[:, nq:] = dt * B[:, nq:]
        Fx[:, :nq] = self._shift[:nq] + dt * Fx[:, nq:]
        Fu[:, :nq] = dt * Fu[:, nq:]
        return np.concatenate((X[:, :nq] + dt * v_next, v_next), axis=1), Fx, Fu


class RK4Step:
    """Classic RK4 with u held: x+ = x + dt/6 (k1 + 2 k2 + 2 k3 + k4), k_i = f(t + c_i dt, x + c_i dt k_{i-1}, u).

    The Jacobian of each stage is dk_i = A_i (I + c_i dt dk_{i-1}) for x and A_i c_i dt dk_{i-1} + B_i for u.
    """

    __slots__ = ("_eye", "_problem", "dt")
    rule = RK4
    zoh = _NO_ZOH

    _NODES = (0.0, 0.5, 0.5, 1.0)
    _WEIGHTS = (1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0)

    def __init__(self, problem: TranscribableProblem, dt: float) -> None:
        self._problem, self.dt = problem, dt
        self._eye = np.eye(len(problem.states))

    def advance(self, t: float, x: Array, u: Array) -> Array:
        dt, f = self.dt, self._problem.f
        total = np.zeros_like(x)
        k = np.zeros_like(x)
        for c, w in zip(self._NODES, self._WEIGHTS):
            k = np.asarray(f(t + c * dt, x + c * dt * k, u), dtype=float)
            total += w * k
        return np.asarray(x + dt * total, dtype=float)

    def linearize(self, t: float, x: Array, u: Array) -> tuple[Array, Array, Array]:
        dt, problem = self.dt, self._problem
        n, m = x.shape[0], u.shape[0]
        total, total_x, total_u = np.zeros(n), np.zeros((n, n)), np.zeros((n, m))
        k, k_x, k_u = np.zeros(n), np.zeros((n, n)), np.zeros((n, m))
        for c, w in zip(self._NODES, self._WEIGHTS):
            stage = x + c * dt * k
            A, B = problem.f_jacobians(t + c * dt, stage, u)
            k_x = A @ (self._eye + (c * dt) * k_x)
            k_u = (c * dt) * (A @ k_u) + B
            k = np.asarray(problem.f(t + c * dt, stage, u), dtype=float)
            total += w * k
            total_x += w * k_x
            total_u += w * k_u
        return x + dt * total, self._eye + dt * total_x, dt * total_u

    def linearize_points(self, t: Array, X: Array, U: Array) -> tuple[Array, Array, Array]:
        """The stages of :meth:`linearize` batched across the points: stage 1 at every point, then stage 2, ..."""
        dt, problem = self.dt, self._problem
        (P, n), m = X.shape, U.shape[1]
        total, total_x, total_u = np.zeros((P, n)), np.zeros((P, n, n)), np.zeros((P, n, m))
        k, k_x, k_u = np.zeros((P, n)), np.zeros((P, n, n)), np.zeros((P, n, m))
        for c, w in zip(self._NODES, self._WEIGHTS):
            stage = X + c * dt * k
            A, B = problem.f_jacobians_points(t + c * dt, stage, U)
            k_x = A @ (self._eye + (c * dt) * k_x)
            k_u = (c * dt) * (A @ k_u) + B
            k = problem.f_points(t + c * dt, stage, U)
            total += w * k
            total_x += w * k_x
            total_u += w * k_u
        return X + dt * total, self._eye + dt * total_x, dt * total_u


class ZeroOrderHoldStep:
    """The exact step of x' = A x + B u + c with u held: x+ = Phi x + Gamma u + gamma (problem.linear only).

    A, B are f_jacobians at (0, 0, 0) and c = f(0, 0, 0); [Gamma gamma] is the ZOH of [B c] (Van Loan 1978).
    """

    __slots__ = ("_Gamma", "_Phi", "_gamma", "dt", "zoh")
    rule = ZOH

    def __init__(self, problem: TranscribableProblem, dt: float) -> None:
        if not problem.linear:
            raise InputError("the zoh step is exact only for a linear time-invariant model: choose euler or rk4")
        self.dt = dt
        n, m = len(problem.states), len(problem.inputs)
        x, u = np.zeros(n), np.zeros(m)
        A, B = problem.f_jacobians(0.0, x, u)
        c = np.asarray(problem.f(0.0, x, u), dtype=float).reshape(n, 1)
        Phi, G = exact_discretization(A, np.hstack((np.asarray(B, dtype=float).reshape(n, m), c)), dt)
        self._Phi, self._Gamma, self._gamma = Phi, np.ascontiguousarray(G[:, :m]), G[:, m]
        self.zoh = np.ascontiguousarray(np.hstack((Phi, G)))

    def advance(self, t: float, x: Array, u: Array) -> Array:
        return np.asarray(self._Phi @ x + self._Gamma @ u + self._gamma, dtype=float)

    def linearize(self, t: float, x: Array, u: Array) -> tuple[Array, Array, Array]:
        return self.advance(t, x, u), self._Phi, self._Gamma

    def linearize_points(self, t: Array, X: Array, U: Array) -> tuple[Array, Array, Array]:
        P = len(t)
        F = X @ self._Phi.T + U @ self._Gamma.T + self._gamma
        Phi, Gamma = self._Phi, self._Gamma
        return F, np.broadcast_to(Phi, (P, *Phi.shape)), np.broadcast_to(Gamma, (P, *Gamma.shape))


def _euler(problem: TranscribableProblem, dt: float) -> DiscreteStep:
    if problem.mechanical > 0:
        return SemiImplicitEulerStep(problem, dt)
    return EulerStep(problem, dt)


#: The step rules by name: each builds the step of a problem for a step length dt.
STEPS: dict[str, Callable[[TranscribableProblem, float], DiscreteStep]] = {
    "euler": _euler,
    "rk4": RK4Step,
    "zoh": ZeroOrderHoldStep,
}


def discretize(problem: TranscribableProblem, integrator: str = "rk4") -> DiscreteStep:
    """The step of ``problem`` by the rule ``integrator`` (a name of :data:`STEPS`) with dt = horizon / knots."""
    rule = STEPS.get(integrator) if isinstance(integrator, str) else None
    if rule is None:
        raise UnknownNameError(f"unknown integrator {integrator!r}: choose one of {', '.join(sorted(STEPS))}")
    return rule(problem, float(problem.horizon) / int(problem.knots))
