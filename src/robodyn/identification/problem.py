"""The output-error problem of grey-box identification: residuals and their exact Jacobian from sensitivities.

A :class:`Problem` holds what was measured (one :class:`Run` per data set) and which numbers are fitted: some of the
model's parameters and, per run, some initial states. Its :meth:`Problem.evaluate` simulates every run at the data's
times with the forward sensitivities of the fitted numbers (robodyn.simulate's ``sensitivities``: the model's exact
df/dx and df/dp integrated with the state, error-controlled with it) and returns

    r = (y(t_k; theta) - y_measured(t_k)) / sigma          (one entry per sample and measured output)
    J = dr/dz = (dy/dtheta)(t_k) / sigma * dtheta/dz

for the optimizer's coordinates z: ``theta = theta0 exp(z)`` for a positive number (its sign is kept, and a
relative change is what a step measures), ``theta = theta0 + scale z`` otherwise. ``sigma`` is each output's noise
level when given, else its scale (the root-mean-square deviation of the measured output from its mean), so outputs
of different units weigh alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError, RobodynError
from robodyn.identification.measured import Table

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract
    from robodyn.results.trajectory import Trajectory

__all__ = ["FAILED_RESIDUAL", "Problem", "Run", "Unknown"]

Array = NDArray[np.float64]
#: A run that fails to integrate at a trial point gives residuals of this size times the last good ones' scale: the
#: optimizer sees a worse point and shortens its step (it needs finite numbers).
FAILED_RESIDUAL: Final = 1e3


@dataclass(frozen=True, slots=True)
class Run:
    """One data set, prepared: the table, the measured outputs ``outputs`` (names) with their columns ``Y`` (N, p)
    and weights ``1 / sigma`` (p,), the input signals by name, the given initial state ``x0`` (n,) and the states
    whose initial values are fitted (``fitted_states``)."""

    table: Table
    outputs: tuple[str, ...]
    Y: Array
    weights: Array
    inputs: Mapping[str, Any]
    x0: Array
    fitted_states: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Unknown:
    """One fitted number: a parameter (``run`` None) or the initial value of ``state`` in run ``run``; ``name`` is
    how results show it; ``positive`` fits it as ``guess exp(z)``."""

    name: str
    guess: float
    positive: bool
    parameter: str | None = None
    state: str | None = None
    run: int | None = None

    @property
    def scale(self) -> float:
        """The change of one unit of z for a number fitted additively."""
        return max(abs(self.guess), 1e-3) if self.parameter is not None else max(abs(self.guess), 1.0)


class Problem:
    """The residuals and the Jacobian of a fit (see the module docstring); evaluated once per point of the
    optimizer (the residuals and the Jacobian come from the same simulations and are kept for the same z)."""

    def __init__(self, model: ModelContract, runs: Sequence[Run], unknowns: Sequence[Unknown], *, method: str,
                 rtol: float, atol: float):
        self.model, self.runs, self.unknowns = model, tuple(runs), tuple(unknowns)
        self.method, self.rtol, self.atol = method, rtol, atol
        self.evaluations = 0
        self._last: tuple[Array, Array, Array, list[Trajectory]] | None = None
        self._scale = 1.0  # the norm of the last residuals that could be computed

    @property
    def size(self) -> int:
        """The number of residuals (measured samples times outputs, over the runs)."""
        return sum(run.Y.size for run in self.runs)

    def theta(self, z: Array) -> Array:
        """The fitted numbers at the optimizer's coordinates ``z``."""
        return np.array([u.guess * math.exp(v) if u.positive else u.guess + u.scale * v
                         for u, v in zip(self.unknowns, z.tolist())])

    def dtheta(self, theta: Array) -> Array:
        """d theta / d z, entry by entry."""
        return np.array([t if u.positive else u.scale for u, t in zip(self.unknowns, theta.tolist())])

    def z(self, theta: Array) -> Array:
        """The optimizer's coordinates of ``theta``."""
        return np.array([math.log(t / u.guess) if u.positive else (t - u.guess) / u.scale
                         for u, t in zip(self.unknowns, theta.tolist())])

    def residuals(self, z: Array) -> Array:
        return self._evaluated(z)[0]

    def jacobian(self, z: Array) -> Array:
        return self._evaluated(z)[1]

    def trajectories(self, z: Array) -> list[Trajectory]:
        """The runs simulated at ``z`` (with their sensitivities)."""
        return self._evaluated(z)[3]

    def _evaluated(self, z: Array) -> tuple[Array, Array, Array, list[Trajectory]]:
        if self._last is not None and np.array_equal(self._last[2], z):
            return self._last
        theta = self.theta(z)
        try:
            r, J_theta, runs = self.evaluate(theta)
        except RobodynError:
            if self._last is None:
                raise  # the guess itself does not simulate: the caller says so
            bad = np.full(self.size, FAILED_RESIDUAL * self._scale / math.sqrt(self.size))
            return bad, self._last[1], z.copy(), self._last[3]
        self._scale = max(float(np.linalg.norm(r)), 1e-300)
        self._last = (r, J_theta * self.dtheta(theta)[None, :], z.copy(), runs)
        return self._last

    def evaluate(self, theta: Array) -> tuple[Array, Array, list[Trajectory]]:
        """Residuals (m,), their Jacobian with respect to ``theta`` (m, k) and the simulated runs, at ``theta``."""
        from robodyn.integrate.simulate import simulate

        self.evaluations += 1
        params = {u.parameter: value for u, value in zip(self.unknowns, theta.tolist()) if u.parameter is not None}
        residuals, columns, runs = [], [], []
        for i, run in enumerate(self.runs):
            x0 = run.x0.copy()
            mine = [k for k, u in enumerate(self.unknowns) if u.parameter is not None or u.run == i]
            for k in mine:
                u = self.unknowns[k]
                if u.state is not None:
                    x0[self.model.states.index(u.state)] = theta[k]
            names = [str(self.unknowns[k].parameter or self.unknowns[k].state) for k in mine]
            t = run.table.t
            trajectory: Any = simulate(self.model, (float(t[0]), float(t[-1])), x0, run.inputs or None,
                                       method=self.method, rtol=self.rtol, atol=self.atol, t_eval=t,
                                       params=params or None, sensitivities=names)
            outputs = [trajectory.outputs.index(name) for name in run.outputs]
            residuals.append(((trajectory.y[:, outputs] - run.Y) * run.weights).ravel())
            block = np.zeros((run.Y.size, len(self.unknowns)))
            for k, name in zip(mine, names):
                block[:, k] = (trajectory.output_sensitivity(name)[:, outputs] * run.weights).ravel()
            columns.append(block)
            runs.append(trajectory)
        return np.concatenate(residuals), np.vstack(columns), runs


def unidentifiable(J: Array, names: Sequence[str], tolerance: float) -> str | None:
    """None when the columns of ``J`` (m, k) are independent, else the sentence naming the combination of ``names``
    the data cannot tell apart: the right singular vector of the smallest singular value of J with its columns
    scaled to unit length, when that value is below ``tolerance`` times the largest
    (robodyn.identification.estimates)."""
    from robodyn.identification.estimates import undetermined

    found = undetermined(J, tolerance)
    if found.dead:
        dead = [names[k] for k in found.dead]
        return (f"{', '.join(dead)} {'changes' if len(dead) == 1 else 'change'} no fitted output: the data do not "
                "depend on it; leave it out of the fit or measure what it moves")
    if not found.directions:
        return None
    columns, coefficients, ratio = found.directions[-1]  # the smallest singular value's
    involved = sorted(zip(columns, coefficients), key=lambda item: -abs(item[1]))
    moves = ", ".join(f"{names[k]} by {v:+.2f}" for k, v in involved)
    return (f"the data cannot tell {', '.join(names[k] for k, _ in involved)} apart: moving them together ({moves}, "
            f"in units of each one's effect) leaves every fitted output unchanged (singular value {ratio:.1e} of "
            "the largest): fit fewer of them, or use data that excite them differently")


def check_identifiable(J: Array, unknowns: Sequence[Unknown], tolerance: float, where: str) -> None:
    """InputError naming the parameters that cannot be told apart (see :func:`unidentifiable`)."""
    problem = unidentifiable(J, [u.name for u in unknowns], tolerance)
    if problem is not None:
        raise InputError(f"identify: {where}: {problem}")
