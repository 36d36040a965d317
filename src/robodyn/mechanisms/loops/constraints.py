"""Numbers on the constraint manifold of a second-order model: residuals, assembly, independent coordinates.

A model with bilateral constraints phi(t, q) = 0 (closed loops, points held on paths: robodyn.rigid.constraints)
answers ``constraints()`` (the model contract) with a :class:`ConstraintSet`: the rows' names and units, and one
compiled function giving, at a state x = [q, q'],

    phi (k,),  phi' = J q' - c'(t) (k,),  J = d phi / dq (k, n),  K = d(J q' - c') / dq (k, n).

From those:

- :meth:`ConstraintSet.assemble` solves phi = 0 for the coordinates not fixed by Gauss-Newton with minimum-norm
  steps (the closest assembly to the guess, on the guess's branch), then J q' = c' for the velocities not fixed;
- :meth:`ConstraintSet.consistent` refuses a state off the constraints (naming the worst row), or assembles it;
- :meth:`ConstraintSet.tangent` splits q into independent and dependent coordinates (declared, or the columns a
  pivoted QR of J leaves) and gives the tangent map T ``(2n, 2d)`` of the manifold {phi = 0, phi' = 0}:
  dq = N dq_i with N = [I; -J_d^-1 J_i], dq' = N dq'_i + [0; -J_d^-1 K N] dq_i. The flow keeps the manifold,
  so A T = T A_r, and A_r = P A T with P picking the independent rows (P T = I): the exact linearization in
  independent coordinates.

:class:`ReducedModel` is the model in those coordinates around a point, for the analyses that sample around it
(``validity``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError, UnknownNameError
from robodyn.model.system import Model, Vector

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["ASSEMBLY_TOLERANCE", "CONSISTENCY_TOLERANCE", "ConstraintSet", "ReducedModel", "consistent_states"]

#: Residual (m or rad, m/s or rad/s) at which assembly stops: round-off of the kinematics at metre scale.
ASSEMBLY_TOLERANCE: Final = 1e-12
#: The largest residual a given initial state may have (``simulate`` refuses more, or assembles when asked).
CONSISTENCY_TOLERANCE: Final = 1e-8
_ITERATIONS: Final = 60
_RESTARTS: Final = 8  # Nearby starts tried when the descent stalls short of the constraints.
_STALLED: Final = 1e3 * ASSEMBLY_TOLERANCE  # A descent that stops here has closed the loops (round-off).

#: ``evaluate(t, x, p) -> (phi, phi', J, K)`` at a validated state ``x`` (2n,).
Evaluate = Callable[[float, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Split:
    """Independent and dependent coordinates (indices into the coordinates) and the tangent map at a state."""

    independent: tuple[int, ...]
    dependent: tuple[int, ...]
    tangent: np.ndarray  # (2n, 2d): [dq; dq'] = T [dq_i; dq'_i]


class ConstraintSet:
    """The constraints of model ``owner`` (see the module docstring).

    ``rows`` name the rows (``close.x``), ``units`` their units (``m``, ``rad``); ``coordinates`` and ``velocities``
    are the model's q and q' names (the states, in that order); ``independent`` the declared independent
    coordinates, or None to choose them at each point.
    """

    def __init__(self, owner: str, rows: Sequence[str], units: Sequence[str], coordinates: Sequence[str],
                 velocities: Sequence[str], evaluate: Evaluate, independent: Sequence[str] | None = None):
        self.owner, self.rows, self.units = owner, tuple(rows), tuple(units)
        self.coordinates, self.velocities = tuple(coordinates), tuple(velocities)
        self.evaluate = evaluate
        self.n, self.k = len(self.coordinates), len(self.rows)
        self.independent = None if independent is None else tuple(independent)
        if self.independent is not None:
            unknown = [c for c in self.independent if c not in self.coordinates]
            if unknown:
                raise UnknownNameError(f"model {owner!r}: independent coordinates {unknown} are not coordinates "
                                       f"(these are {', '.join(self.coordinates)})")

    @property
    def dimension(self) -> int:
        """The degrees of freedom n - k."""
        return self.n - self.k

    # --- residuals ----------------------------------------------------------------------------------------
    def residuals(self, t: float, x: np.ndarray, p: np.ndarray) -> dict[str, float]:
        """``{row: phi, row': phi'}`` at the state ``x`` (2n,)."""
        phi, rate, _, _ = self.evaluate(t, x, p)
        return {**dict(zip(self.rows, phi.tolist())), **{f"{r}'": float(v) for r, v in zip(self.rows, rate)}}

    def _worst(self, phi: np.ndarray, rate: np.ndarray) -> tuple[str, float, str]:
        both = np.concatenate([np.abs(phi), np.abs(rate)])
        k = int(np.argmax(np.where(np.isfinite(both), both, np.inf)))
        if k < self.k:
            return self.rows[k], float(phi[k]), self.units[k]
        return f"{self.rows[k - self.k]}'", float(rate[k - self.k]), f"{self.units[k - self.k]}/s"

    def consistent(self, t: float, x: np.ndarray, p: np.ndarray, *, assemble: bool = False,
                   what: str = "the initial state") -> np.ndarray:
        """``x`` when it satisfies the constraints to :data:`CONSISTENCY_TOLERANCE`; else, with ``assemble``, the
        state assembled from it keeping its independent coordinates and velocities; else InputError naming the
        largest residual."""
        phi, rate, _, _ = self.evaluate(t, x, p)
        if np.all(np.abs(phi) <= CONSISTENCY_TOLERANCE) and np.all(np.abs(rate) <= CONSISTENCY_TOLERANCE):
            return x
        if not assemble:
            row, value, unit = self._worst(phi, rate)
            raise InputError(f"model {self.owner!r}: {what} is off its constraints: {row} = {value:.3g} "
                             f"{unit} (at most {CONSISTENCY_TOLERANCE:g}); solve the loops first with "
                             f"robodyn.assemble(model, x0, fix={{...}}) (CLI: robodyn assemble), or simulate with "
                             "assemble=True (CLI: --assemble)", key="x0")
        independent = self._independent(t, x, p)  # x may be singular (a linkage laid out straight): no tangent here
        fix = {self.coordinates[i]: float(x[i]) for i in independent}
        fix.update({self.velocities[i]: float(x[self.n + i]) for i in independent})
        return self.assemble(t, x, p, fix)

    # --- assembly -----------------------------------------------------------------------------------------
    def assemble(self, t: float, guess: np.ndarray, p: np.ndarray, fix: Mapping[str, float]) -> np.ndarray:
        """The state nearest ``guess`` (2n,) on the constraints with the coordinates and velocities in ``fix`` held:
        InputError when the loops cannot close (the closest residual named) or too much is fixed."""
        n = self.n
        x = np.array(guess, dtype=float)
        held_q, held_v = [], []
        for name, value in fix.items():
            if name in self.coordinates:
                held_q.append(self.coordinates.index(name))
                x[held_q[-1]] = value
            elif name in self.velocities:
                held_v.append(self.velocities.index(name))
                x[n + held_v[-1]] = value
            else:
                raise UnknownNameError(f"model {self.owner!r}: cannot fix {name!r}: not a coordinate or a velocity "
                                       f"(coordinates: {', '.join(self.coordinates)})")
            if not math.isfinite(value):
                raise InputError(f"model {self.owner!r}: fix {name} = {value!r} is not a finite number")
        free = [i for i in range(n) if i not in held_q]
        x = self._close(t, x, p, free)
        _, rate, jacobian, _ = self.evaluate(t, x, p)
        free_v = [i for i in range(n) if i not in held_v]
        correction, *_ = np.linalg.lstsq(jacobian[:, free_v], -rate, rcond=None)
        x[[n + i for i in free_v]] += correction
        _, rate, _, _ = self.evaluate(t, x, p)
        if not np.all(np.abs(rate) <= 1e-9 * max(1.0, float(np.max(np.abs(x[n:]), initial=0.0)))):
            row, value, unit = self._worst(np.zeros(self.k), rate)
            raise InputError(f"model {self.owner!r}: the velocities cannot satisfy the constraints with "
                             f"{', '.join(self.velocities[i] for i in held_v)} fixed: {row} = {value:.3g} {unit}; fix "
                             f"fewer velocities (at most {self.dimension})", key="fix")
        return x

    def _close(self, t: float, x: np.ndarray, p: np.ndarray, free: list[int]) -> np.ndarray:
        """phi = 0 over the coordinates ``free`` from ``x`` (:meth:`_descend`); from a start where the descent stalls
        short of it (a stationary point of |phi|, like a linkage laid out straight), again from :data:`_RESTARTS`
        seeded nearby starts, keeping the closest: InputError naming the residual when none closes."""
        best = self._descend(t, x, p, free)
        rng = np.random.default_rng(0)
        for _ in range(_RESTARTS):
            if best[1] <= _STALLED:
                break
            start = x.copy()
            start[free] += rng.normal(scale=0.3, size=len(free))
            trial = self._descend(t, start, p, free)
            best = min(best, trial, key=lambda found: found[1])
        state, worst, phi = best
        if worst <= _STALLED:
            return self._fewest_turns(t, state, x, p, free)
        row, value, unit = self._worst(phi, np.zeros(self.k))
        fixed = [c for i, c in enumerate(self.coordinates) if i not in free]
        raise InputError(f"model {self.owner!r}: the constraints cannot be closed"
                         + (f" with {', '.join(fixed)} fixed" if fixed else "")
                         + f": the closest assembly leaves {row} = {value:.3g} {unit} "
                         f"(|phi| = {float(np.linalg.norm(phi)):.3g}); check the link lengths and the loops' frames, "
                         "or change the values fixed and the guess", key="loops")

    def _fewest_turns(self, t: float, state: np.ndarray, guess: np.ndarray, p: np.ndarray, free: list[int]
                      ) -> np.ndarray:
        """``state`` with each free coordinate moved by the whole turns 2 pi k that bring it nearest ``guess`` where
        the constraints hold there as well (a revolute joint's angle: a descent from a singular start can wander
        many turns away, to the same assembly)."""
        for i in free:
            turns = round(float(state[i] - guess[i]) / (2.0 * math.pi))
            if turns == 0:
                continue
            trial = state.copy()
            trial[i] -= 2.0 * math.pi * turns
            phi = self.evaluate(t, trial, p)[0]
            if np.max(np.abs(phi), initial=0.0) <= _STALLED:
                state = trial
        return state

    def _descend(self, t: float, x: np.ndarray, p: np.ndarray, free: list[int]
                 ) -> tuple[np.ndarray, float, np.ndarray]:
        """Gauss-Newton with minimum-norm steps on phi over ``free``, halving a step that does not reduce |phi|:
        the state reached, its largest |phi_i| and phi."""
        phi, _, jacobian, _ = self.evaluate(t, x, p)
        size = float(np.linalg.norm(phi))
        polish = 1  # steps taken past the tolerance: Newton's last step leaves round-off
        for _ in range(_ITERATIONS):
            if not math.isfinite(size) or size == 0.0:
                break
            if np.max(np.abs(phi), initial=0.0) <= ASSEMBLY_TOLERANCE:
                if not polish:
                    break
                polish -= 1
            step, *_ = np.linalg.lstsq(jacobian[:, free], -phi, rcond=None)
            scale = 1.0
            while scale > 1e-4:
                trial = x.copy()
                trial[free] += scale * step
                trial_phi, _, trial_jacobian, _ = self.evaluate(t, trial, p)
                trial_size = float(np.linalg.norm(trial_phi))
                if trial_size < size:
                    break
                scale /= 2
            else:
                break  # no step reduces |phi|: a minimum (or a stationary point) of |phi|
            x, phi, jacobian, size = trial, trial_phi, trial_jacobian, trial_size
        worst = float(np.max(np.abs(phi), initial=0.0)) if math.isfinite(size) else math.inf
        return x, worst, phi

    # --- independent coordinates --------------------------------------------------------------------------
    def split(self, t: float, x: np.ndarray, p: np.ndarray) -> Split:
        """The independent coordinates (declared, else the columns left by a pivoted QR of J at x) and the tangent
        map (see the module docstring); InputError when the dependent block of J is singular at x."""
        n = self.n
        _, _, jacobian, velocity_jacobian = self.evaluate(t, x, p)
        independent = self._independent(t, x, p, jacobian)
        dependent = [i for i in range(n) if i not in independent]
        block = jacobian[:, dependent]
        condition = np.linalg.cond(block) if self.k else 1.0
        if not condition < 1e10:
            raise InputError(f"model {self.owner!r}: the constraints do not determine "
                             f"{', '.join(self.coordinates[i] for i in dependent)} from "
                             f"{', '.join(self.coordinates[i] for i in independent) or 'nothing'} here (the constraint "
                             f"Jacobian's block has condition {condition:.3g}): a singular configuration; choose "
                             "other independent coordinates ('independent:') or another point", key="independent")
        d = len(independent)
        null = np.zeros((n, d))
        null[independent, range(d)] = 1.0
        if self.k:
            null[dependent] = -np.linalg.solve(block, jacobian[:, independent])
        tangent = np.zeros((2 * n, 2 * d))
        tangent[:n, :d] = null
        tangent[n:, d:] = null
        if self.k:
            tangent[n + np.array(dependent), :d] = -np.linalg.solve(block, velocity_jacobian @ null)
        return Split(tuple(independent), tuple(dependent), tangent)

    def _independent(self, t: float, x: np.ndarray, p: np.ndarray, jacobian: np.ndarray | None = None) -> list[int]:
        """The independent coordinates' indices: the declared ones, else the columns a pivoted QR of J at x leaves."""
        if self.independent is not None:
            return [self.coordinates.index(c) for c in self.independent]
        import scipy.linalg

        if jacobian is None:
            jacobian = self.evaluate(t, x, p)[2]
        _, _, pivots = scipy.linalg.qr(jacobian, pivoting=True, mode="economic")
        dependent = {int(i) for i in pivots[: self.k]}
        return [i for i in range(self.n) if i not in dependent]

    def rank_check(self, t: float, x: np.ndarray, p: np.ndarray) -> None:
        """InputError naming the redundant rows when J at x (a generic assembled state) has rank below k, or when the
        declared independent coordinates are not n - k or do not determine the others there."""
        _, _, jacobian, _ = self.evaluate(t, x, p)
        kept: list[int] = []
        redundant = []
        scale = max(float(np.max(np.abs(jacobian), initial=0.0)), 1.0)
        for i in range(self.k):
            trial = jacobian[[*kept, i]]
            if np.linalg.matrix_rank(trial, tol=1e-9 * scale) == len(kept) + 1:
                kept.append(i)
            else:
                redundant.append(self.rows[i])
        if redundant:
            raise InputError(f"model {self.owner!r}: the constraint rows {', '.join(redundant)} are redundant (the "
                             f"constraint Jacobian has rank {len(kept)} of {self.k}): drop them from the axes of "
                             "their loop or constraint (a planar loop constrains two directions and one rotation)",
                             key="loops")
        if self.independent is not None:
            if len(set(self.independent)) != self.n - self.k:
                raise InputError(f"model {self.owner!r}: {self.k} constraint rows leave {self.n - self.k} independent "
                                 f"coordinates of {self.n}; 'independent' names {len(set(self.independent))}",
                                 key="independent")
            self.split(t, x, p)  # the others follow from them (else InputError naming them)


def consistent_states(model: ModelContract, t: float, states: np.ndarray, parameters: np.ndarray, assemble: bool
                      ) -> np.ndarray:
    """``states`` ``(N, n)`` of ``model`` checked on its constraints (each with its row of ``parameters``), or
    assembled onto them when ``assemble``; unchanged for a model without constraints (``simulate``'s x0)."""
    constraints = model.constraints()
    if constraints is None:
        return states
    if not isinstance(assemble, bool):
        raise InputError(f"assemble must be True or False, got {assemble!r}")
    return np.array([constraints.consistent(t, x, p, assemble=assemble) for x, p in zip(states, parameters)])


class ReducedModel(Model):
    """A constrained model in independent coordinates around a consistent state x0: a Euclidean model for the
    analyses that solve or sample around a point (``validity``), as the tangent model is for a moving base.

    Its states z = (q_i, q_i') are the independent coordinates and velocities chosen at x0
    (:meth:`ConstraintSet.split`); a point z is the full state :meth:`stored` (the dependent coordinates assembled
    from x0's, the dependent velocities from J q' = c'), and ``f(t, z, u) = P f(t, stored(z), u)``, so that its
    Jacobian at z0 is ``linearize``'s A.
    """

    kind = "reduced"

    def __init__(self, robot: ModelContract, centre: np.ndarray, p: np.ndarray, t: float = 0.0):
        constraints = robot.constraints()
        assert isinstance(constraints, ConstraintSet)  # made of a model with closed loops (robodyn.mechanisms.loops)
        self.robot, self.constraint_set = robot, constraints
        self.centre = np.array(constraints.consistent(t, np.asarray(centre, dtype=float), p), dtype=float)
        split = constraints.split(t, self.centre, p)
        n = constraints.n
        self.rows = (*split.independent, *(n + i for i in split.independent))
        self.name, self.inputs, self.parameters = robot.name, robot.inputs, robot.parameters
        self.states = tuple(robot.states[i] for i in self.rows)
        self.outputs = self.states
        self._fixed = [robot.states[i] for i in self.rows]
        self._time, self._p = t, np.array(p, dtype=float)

    @property
    def outputs_are_states(self) -> bool:
        return True

    def units(self) -> dict[str, str]:
        return {k: v for k, v in self.robot.units().items() if k in self.states or k in self.inputs}

    def _one(self, z: np.ndarray, p: np.ndarray) -> np.ndarray:
        return self.constraint_set.assemble(self._time, self.centre, p, dict(zip(self._fixed, z.tolist())))

    def stored(self, z: Vector, p: Vector | None = None) -> np.ndarray:
        """The full states ``(..., 2n)`` of the points ``z`` ``(..., 2d)``, assembled with the parameters ``p``
        (default: those the model was made at)."""
        parameters = self._p if p is None else p
        z = np.asarray(z, dtype=float)
        rows = z.reshape(-1, z.shape[-1])
        return np.array([self._one(row, parameters) for row in rows]).reshape(*z.shape[:-1], -1)

    def coordinates(self, x: Vector) -> np.ndarray:
        """The points ``(..., 2d)`` of full states ``x`` ``(..., 2n)``: their independent entries."""
        return np.asarray(x, dtype=float)[..., list(self.rows)]

    def _f(self, t: float, z: Vector, u: Vector, p: Vector) -> Any:
        return self.robot.f_raw(t, self._one(np.asarray(z, dtype=float), p), u, p)[list(self.rows)]

    def _h(self, t: float, z: Vector, u: Vector, p: Vector) -> Any:
        return np.array(z, dtype=float)
